//! The call policy around the breaker: each attempt's timeout, the retries, their backoff and
//! their budget.

use std::time::Duration;

use breakerbox_rules::{Settings, DEFAULT_RETRY_BACKOFF_MAX};

/// How long a half-open probe may run when neither `probe_timeout` nor `timeout` is given.
pub(crate) const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(60);

/// How each call runs around the breaker: the timeout of each attempt, and how failed
/// attempts are retried. [`Config::policy`](crate::Config::policy) holds it; set it with
/// the builder's [`timeout`](crate::config::ConfigBuilder::timeout),
/// [`retries`](crate::config::ConfigBuilder::retries),
/// [`retry_backoff`](crate::config::ConfigBuilder::retry_backoff),
/// [`retry_backoff_max`](crate::config::ConfigBuilder::retry_backoff_max),
/// [`retry_budget`](crate::config::ConfigBuilder::retry_budget) and
/// [`retry_floor`](crate::config::ConfigBuilder::retry_floor).
///
/// ```
/// use std::time::Duration;
/// use breakerbox::Config;
///
/// let config = Config::builder().timeout(Duration::from_millis(800)).retries(2).build()?;
/// let policy = config.policy();
/// assert_eq!(policy.timeout(), Some(Duration::from_millis(800)));
/// assert_eq!(policy.retries(), 2);
/// assert_eq!(policy.retry_backoff(), Duration::from_millis(20));
/// assert_eq!(policy.retry_backoff_max(), Duration::from_secs(10));
/// assert_eq!(policy.retry_budget(), 0.2);
/// assert_eq!(policy.retry_floor(), 10);
/// # Ok::<(), breakerbox::config::ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Policy {
    pub(super) timeout: Option<Duration>,
    pub(super) retries: u32,
    pub(super) backoff: Duration,
    /// `None`: the default, 10 s or the base if longer.
    pub(super) backoff_max: Option<Duration>,
    pub(super) budget: f64,
    pub(super) floor: u32,
    pub(super) hedge: Option<Duration>,
    pub(super) hedges: u32,
}

impl Policy {
    /// No timeout, no retries.
    pub(super) const NONE: Policy = Policy {
        timeout: Settings::DEFAULT.timeout,
        retries: Settings::DEFAULT.retries,
        backoff: Settings::DEFAULT.retry_backoff,
        backoff_max: Settings::DEFAULT.retry_backoff_max,
        budget: Settings::DEFAULT.retry_budget,
        floor: Settings::DEFAULT.retry_floor,
        hedge: Settings::DEFAULT.hedge,
        hedges: Settings::DEFAULT.hedges,
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
    /// `[0, min(retry_backoff_max, base * 2^(n-1))]`.
    pub const fn retry_backoff(&self) -> Duration {
        self.backoff
    }

    /// The longest delay before a retry, however many retries came before: as set, or 10 s
    /// (the base, if that is longer) when not set.
    pub const fn retry_backoff_max(&self) -> Duration {
        match self.backoff_max {
            Some(max) => max,
            None if self.backoff.as_nanos() > DEFAULT_RETRY_BACKOFF_MAX.as_nanos() => self.backoff,
            None => DEFAULT_RETRY_BACKOFF_MAX,
        }
    }

    /// Retries allowed per first attempt of the last 10 seconds, in `[0, 1]`.
    pub const fn retry_budget(&self) -> f64 {
        self.budget
    }

    /// Retries per second allowed beside the budget, so that a quiet breaker can retry too.
    pub const fn retry_floor(&self) -> u32 {
        self.floor
    }

    /// The delay before an extra (hedged) attempt starts while the first is still running;
    /// `None`: calls are not hedged.
    pub const fn hedge(&self) -> Option<Duration> {
        self.hedge
    }

    /// How many extra attempts a hedged call may start (1 unless set).
    pub const fn hedges(&self) -> u32 {
        self.hedges
    }
}
