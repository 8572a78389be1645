//! A breaker's configuration: the validated [`Config`], its [`ConfigBuilder`] and the
//! [`ConfigError`] it refuses a bad value with, the parts a configuration is made of (the
//! [`Window`], [`SlowCalls`], the open period's [`Backoff`], the [`RampUp`], the call
//! [`Policy`]) and the limits of its values (`MAX_*`).
//!
//! ```
//! use breakerbox::config::{ConfigError, Window, MAX_COUNT_WINDOW};
//! use breakerbox::Config;
//!
//! let config = Config::builder().count_window(50).build()?;
//! assert_eq!(config.window(), Window::Count(50));
//! let err = Config::builder().count_window(MAX_COUNT_WINDOW + 1).build().unwrap_err();
//! assert_eq!(err.field(), "window");
//! # Ok::<(), ConfigError>(())
//! ```
//!
//! The fields, the table of keys, the defaults and every rule live in the `breakerbox-rules`
//! crate, which the `#[circuit_breaker]` attribute uses too: the builder, the overrides and
//! the attribute judge a configuration by the same rules, written once.

mod builder;
mod error;
mod policy;
#[cfg(feature = "serde")]
pub(crate) mod serialized;
mod throttling;

use std::time::Duration;

pub use self::builder::ConfigBuilder;
pub use self::error::ConfigError;
pub use self::policy::Policy;
pub use self::throttling::Throttling;
pub(crate) use breakerbox_rules::Field;
#[cfg(feature = "overrides")]
pub(crate) use breakerbox_rules::{
    key_names, ConfigKey, DEFAULT_BUCKETS, DEFAULT_RAMP_STEP, DEFAULT_SLOW_RATE, KEYS,
};
pub use breakerbox_rules::{
    Backoff, RampUp, SlowCalls, Window, MAX_BUCKETS, MAX_COUNT_WINDOW, MAX_RAMP_STEPS, MAX_RETRIES,
    MAX_RETRY_BACKOFF,
};

use self::policy::DEFAULT_PROBE_TIMEOUT;

/// A validated breaker configuration.
///
/// Built with [`Config::builder`]; [`Config::default`] is a count window of 20 calls, at least
/// 10 calls before judging, failure rate 0.5, open for 5 seconds, 3 half-open probes.
///
/// ```
/// use std::time::Duration;
/// use breakerbox::Config;
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
/// # Ok::<(), breakerbox::config::ConfigError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    window: Window,
    min_calls: u32,
    failure_rate: f64,
    slow_calls: Option<SlowCalls>,
    throttle: Option<Throttling>,
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
    fleet: bool,
    /// Resolved at build (a plain `u32` keeps every keyed member within its memory budget).
    fleet_quorum: u32,
    pushback_max: Duration,
    max_open_percent: Option<u32>,
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
    /// use breakerbox::Config;
    ///
    /// let tighter = Config::default().to_builder().failure_rate(0.25).build()?;
    /// assert_eq!((tighter.min_calls(), tighter.failure_rate()), (10, 0.25));
    ///
    /// let fewer_probes = Config::default().to_builder().probes(2).build()?;
    /// assert_eq!(fewer_probes.successes(), 2);
    /// # Ok::<(), breakerbox::config::ConfigError>(())
    /// ```
    pub const fn to_builder(&self) -> ConfigBuilder {
        ConfigBuilder {
            window: self.window,
            min_calls: Some(self.min_calls),
            failure_rate: self.failure_rate,
            slow_calls: self.slow_calls,
            throttle: match self.throttle {
                Some(t) => Some(t.factor),
                None => None,
            },
            throttle_max: match self.throttle {
                Some(t) => t.max,
                None => breakerbox_rules::DEFAULT_THROTTLE_MAX,
            },
            throttle_window: match self.throttle {
                Some(t) => t.window,
                None => breakerbox_rules::DEFAULT_THROTTLE_WINDOW,
            },
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
            fleet: self.fleet,
            fleet_quorum: Some(self.fleet_quorum),
            pushback_max: self.pushback_max,
            max_open_percent: self.max_open_percent,
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

    /// Adaptive throttling in CLOSED, if configured
    /// ([`ConfigBuilder::throttle`]).
    pub const fn throttling(&self) -> Option<Throttling> {
        self.throttle
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

    /// Whether the breaker shares judgement with its peers through the fleet.
    pub const fn fleet(&self) -> bool {
        self.fleet
    }

    /// How many live peers must hold this breaker's name OPEN before it opens for them.
    pub const fn fleet_quorum(&self) -> u32 {
        self.fleet_quorum
    }

    /// The longest a downstream's pushback opens the breaker for; zero when pushback is
    /// turned off (see [`ConfigBuilder::pushback_max`]).
    pub const fn pushback_max(&self) -> Duration {
        self.pushback_max
    }

    /// For a member of a keyed family: the most of the family's members, in percent, that
    /// may be OPEN at once (see [`ConfigBuilder::max_open_percent`]); `None`: all of them.
    pub const fn max_open_percent(&self) -> Option<u32> {
        self.max_open_percent
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
