//! Outcomes, and how a call's result is judged: a sick downstream or a business answer.

use std::io;
use std::time::Duration;

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
/// `tonic::Status` and the `http::Response` the integrations make from one, and the tower
/// layer's default classifier judges a boxed error holding one so.
///
/// Implemented for `Result<T, E>` where `E: Classify` (`Ok` is a success, `Err` asks `E`),
/// for [`std::io::Error`] and for [`Outcome`] itself.
///
/// ```
/// use breakerbox::{Classify, Outcome};
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
    label = "`breakerbox::Classify` is not implemented for `{Self}`",
    note = "implement `breakerbox::Classify` for `{Self}` (which errors are downstream failures), \
            or pass `classify = path::to::fn` to `#[circuit_breaker]`"
)]
pub trait Classify {
    /// The outcome this result means for the breaker.
    fn classify(&self) -> Outcome;

    /// How long the downstream asked to be left alone, if this result says so: an HTTP
    /// 429 or 503 with `Retry-After`, a gRPC status with `grpc-retry-pushback-ms`. `None`
    /// by default.
    ///
    /// Asked only of a result that [`classify`](Classify::classify) calls a
    /// [`Failure`](Outcome::Failure) (a pushback on a success or an ignored result is
    /// ignored): the breaker then opens at once for that long, capped by
    /// [`pushback_max`](crate::config::ConfigBuilder::pushback_max), whatever its window says, and
    /// the call policy waits at least as long before a retry, or gives up.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breakerbox::clock::ManualClock;
    /// use breakerbox::{Breaker, Classify, Config, Outcome, State};
    ///
    /// enum StockError {
    ///     Overloaded { retry_in: Duration },
    /// }
    ///
    /// impl Classify for StockError {
    ///     fn classify(&self) -> Outcome {
    ///         Outcome::Failure
    ///     }
    ///     fn pushback(&self) -> Option<Duration> {
    ///         let StockError::Overloaded { retry_in } = self;
    ///         Some(*retry_in)
    ///     }
    /// }
    ///
    /// let clock = ManualClock::new();
    /// let b = Breaker::with_clock("stockd", Config::default(), clock.clone());
    /// let answer: Result<u32, _> = Err(StockError::Overloaded { retry_in: Duration::from_secs(20) });
    /// b.try_acquire().unwrap().record_output(&answer);
    /// assert_eq!(b.state(), State::Open); // one failure, but the server said 20 s
    /// assert_eq!(b.try_acquire().unwrap_err().retry_after(), Some(Duration::from_secs(20)));
    /// ```
    #[inline]
    fn pushback(&self) -> Option<Duration> {
        None
    }
}

impl<T, E: Classify> Classify for Result<T, E> {
    #[inline]
    fn classify(&self) -> Outcome {
        match self {
            Ok(_) => Outcome::Success,
            Err(e) => e.classify(),
        }
    }

    #[inline]
    fn pushback(&self) -> Option<Duration> {
        match self {
            Ok(_) => None,
            Err(e) => e.pushback(),
        }
    }
}

/// What an output tells the breaker: its outcome, and for a failure the pushback it carries
/// (`None` for no pushback, or one of no length).
#[inline]
pub(crate) fn verdict<T: Classify + ?Sized>(output: &T) -> (Outcome, Option<Duration>) {
    match output.classify() {
        Outcome::Failure => (Outcome::Failure, output.pushback().filter(|p| !p.is_zero())),
        outcome => (outcome, None),
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
