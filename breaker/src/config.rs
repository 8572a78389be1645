//! Breaker configuration: the builder and every validation rule.
//!
//! The builder is `const`, so the `#[circuit_breaker]` attribute can validate its arguments
//! at compile time with these same rules instead of a copy of them.

mod error;
mod keys;
mod policy;
mod recovery;

use std::time::Duration;

pub use self::error::{ConfigError, Field};
#[cfg(feature = "overrides")]
pub(crate) use self::keys::{
    names as key_names, DEFAULT_BUCKETS, DEFAULT_RAMP_STEP, DEFAULT_SLOW_RATE,
};
pub use self::keys::{ConfigKey, KeyDefault, KEYS};
pub use self::policy::{Policy, MAX_RETRIES, MAX_RETRY_BACKOFF};
pub use self::recovery::{Backoff, RampUp, MAX_RAMP_STEPS};

use self::error::Value;
use self::policy::DEFAULT_PROBE_TIMEOUT;
use self::recovery::check_ramp;

/// Largest count window: memory per breaker stays bounded (one byte per call).
pub const MAX_COUNT_WINDOW: u32 = 1 << 20;

/// Largest number of time-window buckets.
pub const MAX_BUCKETS: u32 = 1 << 12;

/// Least `min_calls` of a window that can hold more than one call: a failure rate judged on
/// one call would let a single glitch open the breaker.
const LEAST_MIN_CALLS: u32 = 2;

/// How the breaker remembers recent outcomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    /// The last `n` completed calls.
    Count(u32),
    /// The calls completed during the last `span`, kept in `buckets` buckets of `span / buckets`.
    Time {
        /// How far back the window reaches.
        span: Duration,
        /// How many buckets the span is cut into; outcomes expire one bucket at a time.
        buckets: u32,
    },
}

/// Slow-call detection: calls slower than `threshold` count as slow, and the breaker opens
/// when the share of slow calls reaches `rate`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SlowCalls {
    /// A call is slow when the time from acquire to result is longer than this.
    pub threshold: Duration,
    /// Share of slow calls, in (0, 1], that opens the breaker.
    pub rate: f64,
}

/// A validated breaker configuration.
///
/// Built with [`Config::builder`]; [`Config::default`] is a count window of 20 calls, at least
/// 10 calls before judging, failure rate 0.5, open for 5 seconds, 3 half-open probes.
///
/// ```
/// use std::time::Duration;
/// use breaker::Config;
///
/// let config = Config::builder()
///     .count_window(20)
///     .min_calls(10)
///     .failure_rate(0.5)
///     .slow_calls(Duration::from_millis(800), 0.8)
///     .open_for(Duration::from_secs(5))
///     .probes(3)
///     .build()?;
/// assert_eq!(config.min_calls(), 10);
/// # Ok::<(), breaker::ConfigError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    window: Window,
    min_calls: u32,
    failure_rate: f64,
    slow_calls: Option<SlowCalls>,
    open_for: Duration,
    probes: u32,
    /// `None` follows `probes`, also after [`Config::to_builder`] changes them.
    successes: Option<u32>,
    backoff: Option<Backoff>,
    ramp_up: Option<RampUp>,
    ramp_guard: Option<f64>,
    policy: Policy,
    max_concurrent: Option<u32>,
    /// `None` follows the policy's timeout, else [`DEFAULT_PROBE_TIMEOUT`].
    probe_timeout: Option<Duration>,
    shadow: bool,
}

impl Config {
    /// A builder that starts from the defaults.
    pub const fn builder() -> ConfigBuilder {
        ConfigBuilder::new()
    }

    /// A builder holding this configuration, to change some fields of it. Every value is kept
    /// as it is, except that `successes` never set follows a new `probes`, as it does in a new
    /// builder.
    ///
    /// ```
    /// use breaker::Config;
    ///
    /// let tighter = Config::default().to_builder().failure_rate(0.25).build()?;
    /// assert_eq!((tighter.min_calls(), tighter.failure_rate()), (10, 0.25));
    ///
    /// let fewer_probes = Config::default().to_builder().probes(2).build()?;
    /// assert_eq!(fewer_probes.successes(), 2);
    /// # Ok::<(), breaker::ConfigError>(())
    /// ```
    pub const fn to_builder(&self) -> ConfigBuilder {
        ConfigBuilder {
            window: self.window,
            min_calls: Some(self.min_calls),
            failure_rate: self.failure_rate,
            slow_calls: self.slow_calls,
            open_for: self.open_for,
            probes: self.probes,
            successes: self.successes,
            backoff: self.backoff,
            ramp_up: self.ramp_up,
            ramp_guard: self.ramp_guard,
            policy: self.policy,
            max_concurrent: self.max_concurrent,
            probe_timeout: self.probe_timeout,
            shadow: self.shadow,
        }
    }

    /// The outcome window.
    pub const fn window(&self) -> Window {
        self.window
    }

    /// Calls that must be in the window before the failure rate is judged.
    pub const fn min_calls(&self) -> u32 {
        self.min_calls
    }

    /// Failure rate, in (0, 1], at or above which the breaker opens.
    pub const fn failure_rate(&self) -> f64 {
        self.failure_rate
    }

    /// Slow-call detection, if configured.
    pub const fn slow_calls(&self) -> Option<SlowCalls> {
        self.slow_calls
    }

    /// How long the breaker stays open before it lets probes through.
    pub const fn open_for(&self) -> Duration {
        self.open_for
    }

    /// How many half-open probes may be in flight at once.
    pub const fn probes(&self) -> u32 {
        self.probes
    }

    /// Probe successes that close a half-open breaker (at most [`probes`](Self::probes)).
    pub const fn successes(&self) -> u32 {
        match self.successes {
            Some(successes) => successes,
            None => self.probes,
        }
    }

    /// Backoff of the open duration after failed half-open trials, if configured.
    pub const fn open_backoff(&self) -> Option<Backoff> {
        self.backoff
    }

    /// Stepwise ramp-up after the probes succeed, if configured.
    pub const fn ramp_up(&self) -> Option<&RampUp> {
        self.ramp_up.as_ref()
    }

    /// Latency guard of the ramp-up: the factor over the closed-state p99, if configured.
    pub const fn ramp_latency_guard(&self) -> Option<f64> {
        self.ramp_guard
    }

    /// The timeout of each attempt and the retries of failed ones.
    pub const fn policy(&self) -> Policy {
        self.policy
    }

    /// The bulkhead: how many calls may be in flight at once, if limited.
    pub const fn max_concurrent(&self) -> Option<u32> {
        self.max_concurrent
    }

    /// How long a half-open probe may run before it counts as failed: as set, else the
    /// policy's timeout, else 60 seconds.
    pub const fn probe_timeout(&self) -> Duration {
        match (self.probe_timeout, self.policy.timeout) {
            (Some(limit), _) | (None, Some(limit)) => limit,
            (None, None) => DEFAULT_PROBE_TIMEOUT,
        }
    }

    /// Whether the breaker only watches: it runs its state machine on every outcome, but
    /// admits every call.
    pub const fn shadow(&self) -> bool {
        self.shadow
    }
}

impl Default for Config {
    fn default() -> Self {
        match ConfigBuilder::new().build() {
            Ok(config) => config,
            Err(_) => unreachable!("the default configuration is valid"),
        }
    }
}

/// Builds a [`Config`]; every setter is `const` and [`build`](ConfigBuilder::build) validates.
///
/// `min_calls` defaults to half the count window but at least 2 (a count window of 1 can only
/// have 1), or 10 for a time window. It must be at least 2 unless the count window is 1.
///
/// ```
/// use std::time::Duration;
/// use breaker::Config;
///
/// let config = Config::builder().time_window(Duration::from_secs(10), 10).build()?;
/// assert_eq!(config.min_calls(), 10);
///
/// let err = Config::builder().failure_rate(1.5).build().unwrap_err();
/// assert_eq!(err.to_string(), "failure_rate must be in (0, 1], got 1.5");
/// # Ok::<(), breaker::ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct ConfigBuilder {
    window: Window,
    min_calls: Option<u32>,
    failure_rate: f64,
    slow_calls: Option<SlowCalls>,
    open_for: Duration,
    probes: u32,
    successes: Option<u32>,
    backoff: Option<Backoff>,
    ramp_up: Option<RampUp>,
    ramp_guard: Option<f64>,
    policy: Policy,
    max_concurrent: Option<u32>,
    probe_timeout: Option<Duration>,
    shadow: bool,
}

impl Default for ConfigBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ConfigBuilder {
    /// The defaults: count window 20, min calls 10, failure rate 0.5, open 5s, 3 probes.
    pub const fn new() -> Self {
        Self {
            window: Window::Count(20),
            min_calls: None,
            failure_rate: 0.5,
            slow_calls: None,
            open_for: Duration::from_secs(5),
            probes: 3,
            successes: None,
            backoff: None,
            ramp_up: None,
            ramp_guard: None,
            policy: Policy::NONE,
            max_concurrent: None,
            probe_timeout: None,
            shadow: false,
        }
    }

    /// Judge the last `calls` completed calls.
    pub const fn count_window(mut self, calls: u32) -> Self {
        self.window = Window::Count(calls);
        self
    }

    /// Judge the calls completed during the last `span`, expired in `buckets` steps.
    pub const fn time_window(mut self, span: Duration, buckets: u32) -> Self {
        self.window = Window::Time { span, buckets };
        self
    }

    /// Calls that must be in the window before the failure rate is judged: at least 2, so that
    /// one call never decides, unless the count window holds only 1.
    ///
    /// ```
    /// use breaker::Config;
    ///
    /// let err = Config::builder().min_calls(1).build().unwrap_err();
    /// assert_eq!(err.to_string(), "min_calls must be at least 2, got 1");
    /// assert_eq!(Config::builder().count_window(1).min_calls(1).build()?.min_calls(), 1);
    /// # Ok::<(), breaker::ConfigError>(())
    /// ```
    pub const fn min_calls(mut self, calls: u32) -> Self {
        self.min_calls = Some(calls);
        self
    }

    /// Open when `failures / calls >= rate`; `rate` must be in (0, 1].
    pub const fn failure_rate(mut self, rate: f64) -> Self {
        self.failure_rate = rate;
        self
    }

    /// Count calls slower than `threshold` as slow, and open when `slow / calls >= rate`.
    pub const fn slow_calls(mut self, threshold: Duration, rate: f64) -> Self {
        self.slow_calls = Some(SlowCalls { threshold, rate });
        self
    }

    /// How long the breaker stays open before it lets probes through.
    pub const fn open_for(mut self, duration: Duration) -> Self {
        self.open_for = duration;
        self
    }

    /// How many half-open probes may be in flight at once; unless [`successes`](Self::successes)
    /// says otherwise, that many must succeed to close.
    pub const fn probes(mut self, probes: u32) -> Self {
        self.probes = probes;
        self
    }

    /// How many probe successes close a half-open breaker; at least 1 and at most `probes`.
    /// Unset, it is `probes`, also in a configuration made from this one with other `probes`
    /// ([`Config::to_builder`]). Any probe failure still reopens at once.
    ///
    /// ```
    /// use breaker::Config;
    ///
    /// let config = Config::builder().probes(5).successes(2).build()?;
    /// assert_eq!((config.probes(), config.successes()), (5, 2));
    /// assert_eq!(Config::builder().probes(4).build()?.successes(), 4);
    /// assert_eq!(Config::default().to_builder().probes(1).build()?.successes(), 1);
    ///
    /// let err = Config::builder().probes(2).successes(3).build().unwrap_err();
    /// assert_eq!(err.to_string(), "successes must be at most probes, got 3 with 2 probes");
    /// # Ok::<(), breaker::ConfigError>(())
    /// ```
    pub const fn successes(mut self, successes: u32) -> Self {
        self.successes = Some(successes);
        self
    }

    /// After each failed half-open trial, make the next OPEN last `factor` times the previous
    /// one, up to `max`. Example: open 5s, factor 2, max 60s probes after 5s, 10s, 20s, 40s,
    /// 60s, 60s. Closing resets it.
    pub const fn open_backoff(mut self, factor: f64, max: Duration) -> Self {
        self.backoff = Some(Backoff { factor, max });
        self
    }

    /// When the half-open probes have all succeeded, admit only `percents[0]`% of calls for
    /// `step`, then the next percentage, and close after the last step. The percentages must
    /// rise strictly, lie in 1..=100 and end at 100; any failure during the ramp reopens.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breaker::Config;
    ///
    /// let config = Config::builder().ramp_up(&[10, 30, 60, 100], Duration::from_secs(5)).build()?;
    /// assert_eq!(config.ramp_up().unwrap().percents(), [10, 30, 60, 100]);
    ///
    /// let err = Config::builder().ramp_up(&[10, 50], Duration::from_secs(5)).build().unwrap_err();
    /// assert_eq!(err.to_string(), "ramp_up must end at 100, got [10, 50]");
    /// # Ok::<(), breaker::ConfigError>(())
    /// ```
    pub const fn ramp_up(mut self, percents: &[u32], step: Duration) -> Self {
        self.ramp_up = Some(RampUp::new(percents, step));
        self
    }

    /// During the ramp-up, hold the current step instead of climbing while the step's p99
    /// latency exceeds `factor` times the baseline: the p99 of successful calls while CLOSED
    /// (failures never enter it, so the slow timeouts that opened the breaker cannot lift it).
    /// The baseline lives in memory across the breaker's CLOSED periods, halved as it grows so
    /// that it follows recent traffic. A new breaker (after a restart) has none, nor has one
    /// whose recovery settings were reconfigured: until CLOSED calls have built one, the guard
    /// holds no step and the ramp climbs on time alone. A held step sends no event; with the
    /// `tracing` feature it logs a warning with both p99s.
    pub const fn ramp_latency_guard(mut self, factor: f64) -> Self {
        self.ramp_guard = Some(factor);
        self
    }

    /// Cancel each attempt that runs longer than `limit`, and count it as a failure (and as
    /// slow, if slow calls are judged). Applies to calls run by
    /// [`Breaker::run`](crate::Breaker::run) and `#[circuit_breaker]`.
    pub const fn timeout(mut self, limit: Duration) -> Self {
        self.policy.timeout = Some(limit);
        self
    }

    /// Retry a call whose attempt failed (as [`Classify`](crate::Classify) judges it) up to
    /// `retries` more times, at most 10, asking the breaker again before each retry. Applies
    /// to calls run by [`Breaker::run`](crate::Breaker::run) and `#[circuit_breaker]`.
    pub const fn retries(mut self, retries: u32) -> Self {
        self.policy.retries = retries;
        self
    }

    /// The base delay before a retry, at most 60 s: retry `n` waits a random time in
    /// `[0, base * 2^(n-1)]` (full jitter). Default 20 ms; zero retries at once.
    pub const fn retry_backoff(mut self, base: Duration) -> Self {
        self.policy.backoff = base;
        self
    }

    /// Retries may add at most `ratio` (in `[0, 1]`) times the first attempts of the last
    /// 10 seconds, beside the [`retry_floor`](Self::retry_floor). Default 0.2.
    pub const fn retry_budget(mut self, ratio: f64) -> Self {
        self.policy.budget = ratio;
        self
    }

    /// Retries per second allowed whatever the budget, so that a breaker with few calls can
    /// still retry (over 10 seconds, ten times this many). Default 10; 0 leaves the budget
    /// alone.
    pub const fn retry_floor(mut self, per_second: u32) -> Self {
        self.policy.floor = per_second;
        self
    }

    /// The bulkhead: at most `calls` calls in flight at once (at least 1); the next is
    /// rejected at once with [`RejectReason::Bulkhead`](crate::RejectReason::Bulkhead).
    pub const fn max_concurrent(mut self, calls: u32) -> Self {
        self.max_concurrent = Some(calls);
        self
    }

    /// A half-open probe still in flight after `limit` counts as failed: the next call or
    /// result after that reopens the breaker, and the probe's late result is discarded.
    /// Unset, it is the [`timeout`](Self::timeout) if one is set, else 60 seconds.
    pub const fn probe_timeout(mut self, limit: Duration) -> Self {
        self.probe_timeout = Some(limit);
        self
    }

    /// Watch only: run the state machine on every outcome but admit every call, counting
    /// the calls an enforcing breaker would have rejected.
    pub const fn shadow(mut self, shadow: bool) -> Self {
        self.shadow = shadow;
        self
    }

    /// Validates every field and returns the configuration, or the first rule broken.
    pub const fn build(self) -> Result<Config, ConfigError> {
        let mut i = 0;
        while i < Field::ALL.len() {
            if let Err(e) = self.check(Field::ALL[i]) {
                return Err(e);
            }
            i += 1;
        }
        Ok(Config {
            window: self.window,
            min_calls: self.effective_min_calls(),
            failure_rate: self.failure_rate,
            slow_calls: self.slow_calls,
            open_for: self.open_for,
            probes: self.probes,
            successes: self.successes,
            backoff: self.backoff,
            ramp_up: self.ramp_up,
            ramp_guard: self.ramp_guard,
            policy: self.policy,
            max_concurrent: self.max_concurrent,
            probe_timeout: self.probe_timeout,
            shadow: self.shadow,
        })
    }

    const fn effective_min_calls(&self) -> u32 {
        match (self.min_calls, self.window) {
            (Some(min), _) => min,
            (None, Window::Count(n)) if n / 2 >= LEAST_MIN_CALLS => n / 2,
            (None, Window::Count(n)) if n >= LEAST_MIN_CALLS => LEAST_MIN_CALLS,
            (None, Window::Count(_)) => 1,
            (None, Window::Time { .. }) => 10,
        }
    }

    /// Checks the rules of one field. The attribute macro calls this once per key, so that
    /// each broken rule is reported at the key that breaks it.
    #[doc(hidden)]
    pub const fn check(&self, field: Field) -> Result<(), ConfigError> {
        if let Some(result) = self.policy.check(field) {
            return result;
        }
        match field {
            Field::Window => match self.window {
                Window::Count(0) => Err(ConfigError::new(
                    field,
                    "count window must be at least 1 call",
                    Value::U32(0),
                )),
                Window::Count(n) if n > MAX_COUNT_WINDOW => Err(ConfigError::new(
                    field,
                    "count window must be at most 1048576 calls",
                    Value::U32(n),
                )),
                Window::Time { span, .. } if span.is_zero() => Err(ConfigError::new(
                    field,
                    "time window span must be greater than zero",
                    Value::Duration(span),
                )),
                _ => Ok(()),
            },
            Field::Buckets => match self.window {
                Window::Time { buckets: 0, .. } => Err(ConfigError::new(
                    field,
                    "buckets must be at least 1",
                    Value::U32(0),
                )),
                Window::Time { buckets, .. } if buckets > MAX_BUCKETS => Err(ConfigError::new(
                    field,
                    "buckets must be at most 4096",
                    Value::U32(buckets),
                )),
                Window::Time { span, buckets } if span.as_nanos() < buckets as u128 => {
                    Err(ConfigError::new(
                        field,
                        "buckets must not exceed the window span in nanoseconds",
                        Value::U32(buckets),
                    ))
                }
                _ => Ok(()),
            },
            Field::MinCalls => match (self.min_calls, self.window) {
                (Some(min), Window::Count(window)) if window > 0 && min > window => {
                    Err(ConfigError::new(
                        field,
                        "min_calls must be at most the count window",
                        Value::MinOverWindow { min, window },
                    ))
                }
                (Some(0), Window::Count(1)) => Err(ConfigError::new(
                    field,
                    "min_calls must be 1 with a count window of 1",
                    Value::U32(0),
                )),
                (Some(min), window)
                    if min < LEAST_MIN_CALLS && !matches!(window, Window::Count(1)) =>
                {
                    Err(ConfigError::new(
                        field,
                        "min_calls must be at least 2",
                        Value::U32(min),
                    ))
                }
                _ => Ok(()),
            },
            Field::FailureRate => {
                check_rate(field, "failure_rate must be in (0, 1]", self.failure_rate)
            }
            Field::SlowThreshold => match self.slow_calls {
                Some(slow) if slow.threshold.is_zero() => Err(ConfigError::new(
                    field,
                    "slow_calls threshold must be greater than zero",
                    Value::Duration(slow.threshold),
                )),
                _ => Ok(()),
            },
            Field::SlowRate => match self.slow_calls {
                Some(slow) => check_rate(field, "slow_calls rate must be in (0, 1]", slow.rate),
                None => Ok(()),
            },
            Field::OpenFor => {
                if self.open_for.is_zero() {
                    Err(ConfigError::new(
                        field,
                        "open_for must be greater than zero",
                        Value::Duration(self.open_for),
                    ))
                } else {
                    Ok(())
                }
            }
            Field::Probes => {
                if self.probes == 0 {
                    Err(ConfigError::new(
                        field,
                        "probes must be at least 1",
                        Value::U32(0),
                    ))
                } else {
                    Ok(())
                }
            }
            Field::Successes => match self.successes {
                Some(0) => Err(ConfigError::new(
                    field,
                    "successes must be at least 1",
                    Value::U32(0),
                )),
                Some(successes) if successes > self.probes => Err(ConfigError::new(
                    field,
                    "successes must be at most probes",
                    Value::SuccessesOverProbes {
                        successes,
                        probes: self.probes,
                    },
                )),
                _ => Ok(()),
            },
            // Written so that NaN fails too. An infinite factor is no duration to grow by.
            Field::BackoffFactor => match self.backoff {
                Some(b) if !(b.factor >= 1.0 && b.factor.is_finite()) => Err(ConfigError::new(
                    field,
                    "open_backoff factor must be finite and at least 1",
                    Value::F64(b.factor),
                )),
                _ => Ok(()),
            },
            Field::BackoffMax => match self.backoff {
                Some(b) if b.max.as_nanos() < self.open_for.as_nanos() => Err(ConfigError::new(
                    field,
                    "open_backoff max must be at least open_for",
                    Value::MaxUnderOpen {
                        max: b.max,
                        open: self.open_for,
                    },
                )),
                _ => Ok(()),
            },
            Field::Ramp => match self.ramp_up {
                Some(ramp) => check_ramp(field, ramp),
                None => Ok(()),
            },
            Field::RampStep => match self.ramp_up {
                Some(ramp) if ramp.step().is_zero() => Err(ConfigError::new(
                    field,
                    "ramp_up step must be greater than zero",
                    Value::Duration(ramp.step()),
                )),
                _ => Ok(()),
            },
            Field::RampGuard => match (self.ramp_guard, self.ramp_up) {
                (Some(factor), _) if !(factor > 1.0 && factor.is_finite()) => {
                    Err(ConfigError::new(
                        field,
                        "ramp_latency_guard factor must be finite and greater than 1",
                        Value::F64(factor),
                    ))
                }
                (Some(factor), None) => Err(ConfigError::new(
                    field,
                    "ramp_latency_guard needs ramp_up",
                    Value::F64(factor),
                )),
                _ => Ok(()),
            },
            Field::MaxConcurrent => match self.max_concurrent {
                Some(0) => Err(ConfigError::new(
                    field,
                    "max_concurrent must be at least 1",
                    Value::U32(0),
                )),
                _ => Ok(()),
            },
            Field::ProbeTimeout => match self.probe_timeout {
                Some(limit) if limit.is_zero() => Err(ConfigError::new(
                    field,
                    "probe_timeout must be greater than zero",
                    Value::Duration(limit),
                )),
                _ => Ok(()),
            },
            // Checked by the policy above.
            Field::Timeout | Field::Retries | Field::RetryBackoff | Field::RetryBudget => Ok(()),
            Field::Shadow => Ok(()),
        }
    }
}

const fn check_rate(field: Field, rule: &'static str, rate: f64) -> Result<(), ConfigError> {
    // Written so that NaN fails too: every comparison with NaN is false.
    if rate > 0.0 && rate <= 1.0 {
        Ok(())
    } else {
        Err(ConfigError::new(field, rule, Value::F64(rate)))
    }
}
