//! How each call ended, told to the listeners of [`Breaker::on_call`](crate::Breaker::on_call).

use std::fmt;
use std::time::Duration;

use crate::RejectReason;

/// The end of one call, as [`Breaker::on_call`](crate::Breaker::on_call)'s listeners see it:
/// Resilience4j's `onSuccess`, `onError`, `onIgnoredError` and `onCallNotPermitted` in one.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use std::time::Duration;
/// use breakerbox::clock::ManualClock;
/// use breakerbox::{Breaker, events::CallEnding, events::CallEvent, Config, RejectReason};
///
/// let clock = ManualClock::new();
/// let b = Breaker::with_clock("libraryd", Config::default(), clock.clone());
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let log = seen.clone();
/// b.on_call(move |e: &CallEvent| log.lock().unwrap().push((e.ending, e.duration)));
///
/// let permit = b.try_acquire().unwrap();
/// clock.advance(Duration::from_millis(40));
/// permit.failure();
/// b.force_open();
/// let _ = b.try_acquire();
///
/// assert_eq!(
///     *seen.lock().unwrap(),
///     [
///         (CallEnding::Failure, Some(Duration::from_millis(40))),
///         (CallEnding::Rejected(RejectReason::ForcedOpen), None),
///     ]
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallEvent {
    /// How the call ended.
    pub ending: CallEnding,
    /// From the call's admission to its result, on the breaker's clock; `None` for a
    /// rejection, and for a call admitted before the breaker's first call listener was added
    /// (it was not timed).
    pub duration: Option<Duration>,
    /// Whether the breaker had changed state since the call was admitted, so that its result
    /// was discarded: it counts in no window and moves no state (a late success cannot close
    /// a breaker that opened meanwhile). Always `false` for a rejection.
    pub stale: bool,
}

/// How a call ended: a field of [`CallEvent`].
///
/// ```
/// use breakerbox::{events::CallEnding, RejectReason};
///
/// assert_eq!(CallEnding::Ignored.as_str(), "ignored");
/// assert_eq!(CallEnding::Rejected(RejectReason::Open).as_str(), "rejected");
/// assert_eq!(CallEnding::Cancelled.to_string(), "cancelled");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CallEnding {
    /// The call succeeded, or failed for a business reason ([`Outcome::Success`](crate::Outcome::Success)).
    Success,
    /// The downstream failed, the call panicked, or it timed out under the call policy.
    Failure,
    /// The result said nothing about the downstream ([`Outcome::Ignored`](crate::Outcome::Ignored)).
    Ignored,
    /// The permit was dropped without a result: a cancelled future.
    Cancelled,
    /// The breaker rejected the call without running it.
    Rejected(RejectReason),
}

impl CallEnding {
    /// The name metrics use: `success`, `failure`, `ignored`, `cancelled` or `rejected`.
    pub const fn as_str(self) -> &'static str {
        match self {
            CallEnding::Success => "success",
            CallEnding::Failure => "failure",
            CallEnding::Ignored => "ignored",
            CallEnding::Cancelled => "cancelled",
            CallEnding::Rejected(_) => "rejected",
        }
    }
}

impl fmt::Display for CallEnding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
