//! The call policy around the breaker: each attempt's timeout, the retries, their backoff and
//! their budget.

use std::time::Duration;

use breaker_rules::Settings;

/// Retries per second a breaker may always make, however few its calls.
pub(crate) const DEFAULT_RETRY_FLOOR: u32 = 10;
/// How long a half-open probe may run when neither `probe_timeout` nor `timeout` is given.
pub(crate) const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(60);

/// How each call runs around the breaker: the timeout of each attempt, and how failed
/// attempts are retried. [`Config::policy`](crate::Config::policy) holds it; set it with
/// the builder's [`timeout`](crate::ConfigBuilder::timeout),
/// [`retries`](crate::ConfigBuilder::retries),
/// [`retry_backoff`](crate::ConfigBuilder::retry_backoff) and
/// [`retry_budget`](crate::ConfigBuilder::retry_budget).
///
/// ```
/// use std::time::Duration;
/// use breaker::Config;
///
/// let config = Config::builder().timeout(Duration::from_millis(800)).retries(2).build()?;
/// let policy = config.policy();
/// assert_eq!(policy.timeout(), Some(Duration::from_millis(800)));
/// assert_eq!(policy.retries(), 2);
/// assert_eq!(policy.retry_backoff(), Duration::from_millis(20));
/// assert_eq!(policy.retry_budget(), 0.2);
/// # Ok::<(), breaker::ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Policy {
    pub(super) timeout: Option<Duration>,
    pub(super) retries: u32,
    pub(super) backoff: Duration,
    pub(super) budget: f64,
    pub(super) floor: u32,
}

impl Policy {
    /// No timeout, no retries.
    pub(super) const NONE: Policy = Policy {
        timeout: Settings::DEFAULT.timeout,
        retries: Settings::DEFAULT.retries,
        backoff: Settings::DEFAULT.retry_backoff,
        budget: Settings::DEFAULT.retry_budget,
        floor: DEFAULT_RETRY_FLOOR,
    };

    /// How long each attempt may run before it is cancelled and counted as a failure.
    pub const fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// How many more attempts may follow a failed first one (0: none).
    pub const fn retries(&self) -> u32 {
        self.retries
    }

    /// The base delay before a retry: the delay before retry `n` is drawn from
    /// `[0, base * 2^(n-1)]`.
    pub const fn retry_backoff(&self) -> Duration {
        self.backoff
    }

    /// Retries allowed per first attempt of the last 10 seconds, in `[0, 1]`.
    pub const fn retry_budget(&self) -> f64 {
        self.budget
    }

    /// Retries per second allowed beside the budget, so that a quiet breaker can retry too.
    pub const fn retry_floor(&self) -> u32 {
        self.floor
    }
}
