//! [`CallError`], why a call under the policy returned no output of its own.

use std::fmt;

use crate::{Rejected, TimedOut};

/// Why [`Breaker::run`](crate::Breaker::run) returned no output of the call: the breaker
/// rejected an attempt (the first, or a retry), or the last attempt timed out.
///
/// Any other ending, failures included, is the output of the last attempt, returned as it is.
///
/// ```
/// use std::time::Duration;
/// use breakerbox::{CallError, Rejected, TimedOut};
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
