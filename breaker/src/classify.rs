//! Outcomes, and how a call's result is judged: a sick downstream or a business answer.

use std::io;

/// What a completed call tells the breaker about the downstream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The downstream answered; business errors (not found, invalid input) are successes too.
    Success,
    /// The downstream is sick: timeouts, refused connections, unavailable, internal errors.
    Failure,
    /// Says nothing about the downstream: not counted, but frees a half-open probe slot. A
    /// rejection by a breaker (a [`Rejected`](crate::Rejected), or an error made from one) is
    /// one: the call never reached the downstream.
    Ignored,
}

/// Judges a call's result for the breaker.
///
/// Only downstream failures count against the breaker: a NOT_FOUND is a business answer, and
/// if it opened the breaker anyone could open it by asking for things that don't exist.
///
/// A rejection is [`Outcome::Ignored`]: it says nothing about the downstream's health, and a
/// guarded call inside another guarded call must not open the outer breaker because the
/// inner one rejected. [`Rejected`](crate::Rejected) classifies itself so; so do the
/// `tonic::Status` and the `http::Response` the integrations make from one.
///
/// Implemented for `Result<T, E>` where `E: Classify` (`Ok` is a success, `Err` asks `E`),
/// for [`std::io::Error`] and for [`Outcome`] itself.
///
/// ```
/// use breaker::{Classify, Outcome};
///
/// enum LibError {
///     NotFound,
///     Unavailable,
/// }
///
/// impl Classify for LibError {
///     fn classify(&self) -> Outcome {
///         match self {
///             LibError::NotFound => Outcome::Success,
///             LibError::Unavailable => Outcome::Failure,
///         }
///     }
/// }
///
/// let found: Result<u32, LibError> = Err(LibError::NotFound);
/// assert_eq!(found.classify(), Outcome::Success);
/// assert_eq!(Err::<u32, _>(LibError::Unavailable).classify(), Outcome::Failure);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not tell the breaker whether the downstream failed",
    label = "`breaker::Classify` is not implemented for `{Self}`",
    note = "implement `breaker::Classify` for `{Self}` (which errors are downstream failures), \
            or pass `classify = path::to::fn` to `#[circuit_breaker]`"
)]
pub trait Classify {
    /// The outcome this result means for the breaker.
    fn classify(&self) -> Outcome;
}

impl<T, E: Classify> Classify for Result<T, E> {
    #[inline]
    fn classify(&self) -> Outcome {
        match self {
            Ok(_) => Outcome::Success,
            Err(e) => e.classify(),
        }
    }
}

impl Classify for Outcome {
    #[inline]
    fn classify(&self) -> Outcome {
        *self
    }
}

/// Timeouts and broken connections are downstream failures; not-found, invalid input and
/// permission errors are answers. Other kinds count as failures.
impl Classify for io::Error {
    fn classify(&self) -> Outcome {
        use io::ErrorKind::*;
        match self.kind() {
            NotFound | InvalidInput | InvalidData | PermissionDenied | AlreadyExists
            | Unsupported => Outcome::Success,
            Interrupted => Outcome::Ignored,
            _ => Outcome::Failure,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use io::ErrorKind;

    #[test]
    fn io_errors_split_into_failures_and_answers() {
        let kind = |k: ErrorKind| io::Error::from(k).classify();
        for k in [
            ErrorKind::TimedOut,
            ErrorKind::ConnectionRefused,
            ErrorKind::ConnectionReset,
            ErrorKind::ConnectionAborted,
            ErrorKind::BrokenPipe,
        ] {
            assert_eq!(kind(k), Outcome::Failure, "{k:?}");
        }
        for k in [
            ErrorKind::NotFound,
            ErrorKind::InvalidInput,
            ErrorKind::PermissionDenied,
        ] {
            assert_eq!(kind(k), Outcome::Success, "{k:?}");
        }
    }

    #[test]
    fn result_asks_its_error() {
        let ok: Result<(), io::Error> = Ok(());
        assert_eq!(ok.classify(), Outcome::Success);
        let refused: Result<(), io::Error> = Err(ErrorKind::ConnectionRefused.into());
        assert_eq!(refused.classify(), Outcome::Failure);
    }
}
