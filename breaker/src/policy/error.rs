//! [`CallError`], why a call under the policy returned no output of its own, and [`CallFailure`],
//! how a call ended that a fallback answers.

use std::fmt;

use crate::{policy::TimedOut, Rejected};

/// Why [`Breaker::run`](crate::Breaker::run) returned no output of the call: the breaker
/// rejected an attempt (the first, or a retry), or the last attempt timed out.
///
/// Any other ending, failures included, is the output of the last attempt, returned as it is.
///
/// ```
/// use std::time::Duration;
/// use breakerbox::{CallError, Rejected, policy::TimedOut};
///
/// let err = CallError::from(TimedOut::new("libraryd", Duration::from_millis(800)));
/// assert_eq!(err.to_string(), "call to 'libraryd' timed out after 800ms");
/// assert!(err.timed_out().is_some() && err.rejected().is_none());
/// let source = std::error::Error::source(&err).unwrap();
/// assert!(source.downcast_ref::<TimedOut>().is_some());
/// ```
#[derive(Clone, Debug)]
pub enum CallError {
    /// The breaker rejected an attempt; it never reached the downstream.
    Rejected(Rejected),
    /// The last attempt ran past the timeout; it was cancelled and counted as a failure.
    TimedOut(TimedOut),
}

impl CallError {
    /// The rejection, if the breaker rejected an attempt.
    pub fn rejected(&self) -> Option<&Rejected> {
        match self {
            CallError::Rejected(r) => Some(r),
            CallError::TimedOut(_) => None,
        }
    }

    /// The timeout, if the last attempt timed out.
    pub fn timed_out(&self) -> Option<&TimedOut> {
        match self {
            CallError::Rejected(_) => None,
            CallError::TimedOut(t) => Some(t),
        }
    }
}

impl From<Rejected> for CallError {
    fn from(rejected: Rejected) -> Self {
        CallError::Rejected(rejected)
    }
}

impl From<TimedOut> for CallError {
    fn from(timed_out: TimedOut) -> Self {
        CallError::TimedOut(timed_out)
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::Rejected(r) => r.fmt(f),
            CallError::TimedOut(t) => t.fmt(f),
        }
    }
}

impl std::error::Error for CallError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CallError::Rejected(r) => Some(r),
            CallError::TimedOut(t) => Some(t),
        }
    }
}

/// How a call ended that the fallback of `#[circuit_breaker(fallback = ..., fallback_on =
/// "failure")]` answers: the breaker rejected it, its last attempt timed out (with `timeout`),
/// or its output was an error classified `Failure` (after the retries).
///
/// A fallback whose last argument is a `CallFailure<E>` answers all three with no conversion:
/// the function's error type needs no `From<Rejected>` nor `From<TimedOut>`, so it may be one
/// you cannot add impls to, such as `reqwest::Error`. A fallback that takes the function's
/// error `E` itself gets `E::from(rejected)` or `E::from(timed_out)` instead.
///
/// ```
/// use breakerbox::{circuit_breaker, policy::CallFailure, Classify, Outcome};
///
/// #[derive(Debug)]
/// struct Unavailable;
///
/// impl Classify for Unavailable {
///     fn classify(&self) -> Outcome {
///         Outcome::Failure
///     }
/// }
///
/// #[circuit_breaker(window = 4, min = 2, timeout = "1s", fallback = cached, fallback_on = "failure")]
/// async fn get_book(isbn: &str) -> Result<String, Unavailable> {
///     Err(Unavailable)
/// }
///
/// async fn cached(isbn: &str, failure: CallFailure<Unavailable>) -> Result<String, Unavailable> {
///     match failure {
///         CallFailure::Rejected(_) => Ok(format!("{isbn}, cached; libraryd is open")),
///         CallFailure::TimedOut(_) | CallFailure::Error(_) => Ok(format!("{isbn}, cached")),
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// assert_eq!(get_book("978-1").await.unwrap(), "978-1, cached");
/// assert_eq!(get_book("978-1").await.unwrap(), "978-1, cached");
/// // Two failures in two calls opened the breaker: the third call is rejected.
/// assert_eq!(get_book("978-1").await.unwrap(), "978-1, cached; libraryd is open");
/// # }
/// ```
#[derive(Clone, Debug)]
pub enum CallFailure<E> {
    /// The breaker rejected the call (or one of its retries); it never reached the downstream.
    Rejected(Rejected),
    /// The last attempt ran past the timeout; it was cancelled and counted as a failure.
    TimedOut(TimedOut),
    /// The call's own error, classified `Failure`.
    Error(E),
}

impl<E> CallFailure<E> {
    /// The rejection, if the breaker rejected the call.
    pub fn rejected(&self) -> Option<&Rejected> {
        match self {
            CallFailure::Rejected(r) => Some(r),
            _ => None,
        }
    }

    /// The timeout, if the last attempt timed out.
    pub fn timed_out(&self) -> Option<&TimedOut> {
        match self {
            CallFailure::TimedOut(t) => Some(t),
            _ => None,
        }
    }

    /// The call's own error, if it ended in one.
    pub fn error(&self) -> Option<&E> {
        match self {
            CallFailure::Error(e) => Some(e),
            _ => None,
        }
    }

    /// The call's own error, if it ended in one.
    pub fn into_error(self) -> Option<E> {
        match self {
            CallFailure::Error(e) => Some(e),
            _ => None,
        }
    }
}

impl<E> From<CallError> for CallFailure<E> {
    fn from(error: CallError) -> Self {
        match error {
            CallError::Rejected(r) => CallFailure::Rejected(r),
            CallError::TimedOut(t) => CallFailure::TimedOut(t),
        }
    }
}

impl<E: fmt::Display> fmt::Display for CallFailure<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallFailure::Rejected(r) => r.fmt(f),
            CallFailure::TimedOut(t) => t.fmt(f),
            CallFailure::Error(e) => e.fmt(f),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for CallFailure<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CallFailure::Rejected(r) => Some(r),
            CallFailure::TimedOut(t) => Some(t),
            CallFailure::Error(e) => Some(e),
        }
    }
}
