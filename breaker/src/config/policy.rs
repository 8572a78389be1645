//! The call policy around the breaker: each attempt's timeout, the retries, their backoff and
//! their budget.

use std::time::Duration;

use super::error::{ConfigError, Field, Value};

/// Most retries after the first attempt.
pub const MAX_RETRIES: u32 = 10;
/// Longest base delay before a retry.
pub const MAX_RETRY_BACKOFF: Duration = Duration::from_secs(60);
/// Base delay before the first retry when `retry_backoff` is not given (fail once, wait
/// 20 ms, try again).
pub(crate) const DEFAULT_RETRY_BACKOFF: Duration = Duration::from_millis(20);
/// Longest wait before a retry when `retry_backoff_max` is not given (or the base, if
/// longer): 10 retries with a 60 s base would otherwise wait 8.5 hours before the last.
pub(crate) const DEFAULT_RETRY_BACKOFF_MAX: Duration = Duration::from_secs(10);
/// Retries per first attempt when `retry_budget` is not given.
pub(crate) const DEFAULT_RETRY_BUDGET: f64 = 0.2;
/// Retries per second a breaker may always make, however few its calls.
pub(crate) const DEFAULT_RETRY_FLOOR: u32 = 10;
/// How long a half-open probe may run when neither `probe_timeout` nor `timeout` is given.
pub(crate) const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(60);

/// How each call runs around the breaker: the timeout of each attempt, and how failed
/// attempts are retried. [`Config::policy`](crate::Config::policy) holds it; set it with
/// the builder's [`timeout`](crate::ConfigBuilder::timeout),
/// [`retries`](crate::ConfigBuilder::retries),
/// [`retry_backoff`](crate::ConfigBuilder::retry_backoff),
/// [`retry_backoff_max`](crate::ConfigBuilder::retry_backoff_max),
/// [`retry_budget`](crate::ConfigBuilder::retry_budget) and
/// [`retry_floor`](crate::ConfigBuilder::retry_floor).
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
/// assert_eq!(policy.retry_backoff_max(), Duration::from_secs(10));
/// assert_eq!(policy.retry_budget(), 0.2);
/// assert_eq!(policy.retry_floor(), 10);
/// # Ok::<(), breaker::ConfigError>(())
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
}

impl Policy {
    /// No timeout, no retries.
    pub(super) const NONE: Policy = Policy {
        timeout: None,
        retries: 0,
        backoff: DEFAULT_RETRY_BACKOFF,
        backoff_max: None,
        budget: DEFAULT_RETRY_BUDGET,
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

    /// Checks the policy's own fields; `None` for the fields it does not hold.
    pub(super) const fn check(&self, field: Field) -> Option<Result<(), ConfigError>> {
        let result = match field {
            Field::Timeout => match self.timeout {
                Some(t) if t.is_zero() => Err(ConfigError::new(
                    field,
                    "timeout must be greater than zero",
                    Value::Duration(t),
                )),
                _ => Ok(()),
            },
            Field::Retries if self.retries > MAX_RETRIES => Err(ConfigError::new(
                field,
                "retries must be at most 10",
                Value::U32(self.retries),
            )),
            Field::RetryBackoff if self.backoff.as_nanos() > MAX_RETRY_BACKOFF.as_nanos() => {
                Err(ConfigError::new(
                    field,
                    "retry_backoff must be at most 60s",
                    Value::Duration(self.backoff),
                ))
            }
            Field::RetryBackoffMax => match self.backoff_max {
                Some(max) if max.as_nanos() < self.backoff.as_nanos() => Err(ConfigError::new(
                    field,
                    "retry_backoff_max must be at least retry_backoff",
                    Value::MaxUnderBase {
                        max,
                        base: self.backoff,
                    },
                )),
                _ => Ok(()),
            },
            // Written so that NaN fails too.
            Field::RetryBudget if !(self.budget >= 0.0 && self.budget <= 1.0) => {
                Err(ConfigError::new(
                    field,
                    "retry_budget must be in [0, 1]",
                    Value::F64(self.budget),
                ))
            }
            // Any number a second is a floor; 0 leaves the budget alone.
            Field::Retries | Field::RetryBackoff | Field::RetryBudget | Field::RetryFloor => Ok(()),
            _ => return None,
        };
        Some(result)
    }
}
