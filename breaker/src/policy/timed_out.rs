//! The error of an attempt that ran past its timeout.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::{Classify, Outcome};

/// An attempt that ran longer than its breaker's `timeout`: it was cancelled, and recorded as
/// a failure (and as slow, when slow calls are judged).
///
/// It says which breaker and which limit, as [`Rejected`](crate::Rejected) says which breaker
/// and why; durations read as `Duration`'s `Debug` prints them (`800ms`, `1.5s`).
///
/// ```
/// use std::time::Duration;
/// use breakerbox::{Classify, Outcome, policy::TimedOut};
///
/// let timed_out = TimedOut::new("libraryd", Duration::from_millis(800));
/// assert_eq!(timed_out.to_string(), "call to 'libraryd' timed out after 800ms");
/// assert_eq!(timed_out.name(), "libraryd");
/// assert_eq!(timed_out.limit(), Duration::from_millis(800));
/// assert_eq!(timed_out.classify(), Outcome::Failure);
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct TimedOut {
    name: Arc<str>,
    limit: Duration,
}

impl TimedOut {
    /// An attempt of the breaker named `name` that ran past `limit`.
    pub fn new(name: impl Into<Arc<str>>, limit: Duration) -> Self {
        Self {
            name: name.into(),
            limit,
        }
    }

    /// Name of the breaker whose attempt timed out.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The limit the attempt ran past.
    pub fn limit(&self) -> Duration {
        self.limit
    }
}

impl fmt::Debug for TimedOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TimedOut")
            .field("name", &self.name)
            .field("limit", &self.limit)
            .finish()
    }
}

impl fmt::Display for TimedOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "call to '{}' timed out after {:?}",
            self.name, self.limit
        )
    }
}

impl std::error::Error for TimedOut {}

/// A timeout is a downstream failure.
impl Classify for TimedOut {
    #[inline]
    fn classify(&self) -> Outcome {
        Outcome::Failure
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_reads_as_a_duration_prints() {
        for (limit, text) in [
            (Duration::from_millis(800), "800ms"),
            (Duration::from_millis(1500), "1.5s"),
            (Duration::from_secs(30), "30s"),
            (Duration::from_micros(250), "250µs"),
        ] {
            let t = TimedOut::new("libraryd", limit);
            assert_eq!(
                t.to_string(),
                format!("call to 'libraryd' timed out after {text}")
            );
        }
    }
}
