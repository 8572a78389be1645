//! Configuration errors: which field broke which rule, with what value.

use std::fmt;
use std::time::Duration;

use super::recovery::RampUp;

/// A configuration field, as [`ConfigError::field`] names it.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Window,
    Buckets,
    MinCalls,
    FailureRate,
    SlowThreshold,
    SlowRate,
    OpenFor,
    Probes,
    Successes,
    BackoffFactor,
    BackoffMax,
    Ramp,
    RampStep,
    RampGuard,
    Timeout,
    Retries,
    RetryBackoff,
    RetryBackoffMax,
    RetryBudget,
    RetryFloor,
    MaxConcurrent,
    ProbeTimeout,
    Shadow,
    PushbackMax,
}

impl Field {
    /// Every field, in the order `build` checks them.
    pub const ALL: [Field; 24] = [
        Field::Window,
        Field::Buckets,
        Field::MinCalls,
        Field::FailureRate,
        Field::SlowThreshold,
        Field::SlowRate,
        Field::OpenFor,
        Field::Probes,
        Field::Successes,
        Field::BackoffFactor,
        Field::BackoffMax,
        Field::Ramp,
        Field::RampStep,
        Field::RampGuard,
        Field::Timeout,
        Field::Retries,
        Field::RetryBackoff,
        Field::RetryBackoffMax,
        Field::RetryBudget,
        Field::RetryFloor,
        Field::MaxConcurrent,
        Field::ProbeTimeout,
        Field::Shadow,
        Field::PushbackMax,
    ];

    /// The builder's name for the field.
    pub const fn name(self) -> &'static str {
        match self {
            Field::Window => "window",
            Field::Buckets => "buckets",
            Field::MinCalls => "min_calls",
            Field::FailureRate => "failure_rate",
            Field::SlowThreshold => "slow_calls.threshold",
            Field::SlowRate => "slow_calls.rate",
            Field::OpenFor => "open_for",
            Field::Probes => "probes",
            Field::Successes => "successes",
            Field::BackoffFactor => "open_backoff.factor",
            Field::BackoffMax => "open_backoff.max",
            Field::Ramp => "ramp_up",
            Field::RampStep => "ramp_up.step",
            Field::RampGuard => "ramp_latency_guard",
            Field::Timeout => "timeout",
            Field::Retries => "retries",
            Field::RetryBackoff => "retry_backoff",
            Field::RetryBackoffMax => "retry_backoff_max",
            Field::RetryBudget => "retry_budget",
            Field::RetryFloor => "retry_floor",
            Field::MaxConcurrent => "max_concurrent",
            Field::ProbeTimeout => "probe_timeout",
            Field::Shadow => "shadow",
            Field::PushbackMax => "pushback_max",
        }
    }
}

/// The value a rule was checked against, kept for the error message.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Value {
    U32(u32),
    F64(f64),
    Duration(Duration),
    MinOverWindow { min: u32, window: u32 },
    MaxUnderOpen { max: Duration, open: Duration },
    MaxUnderBase { max: Duration, base: Duration },
    SuccessesOverProbes { successes: u32, probes: u32 },
    Ramp(RampUp),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::U32(v) => write!(f, "{v}"),
            Value::F64(v) => write!(f, "{v}"),
            Value::Duration(d) => write!(f, "{d:?}"),
            Value::MinOverWindow { min, window } => write!(f, "{min} with a window of {window}"),
            Value::MaxUnderOpen { max, open } => write!(f, "{max:?} with open_for {open:?}"),
            Value::MaxUnderBase { max, base } => {
                write!(f, "{max:?} with retry_backoff {base:?}")
            }
            Value::SuccessesOverProbes { successes, probes } => {
                write!(f, "{successes} with {probes} probes")
            }
            Value::Ramp(ramp) => write!(f, "{:?}", ramp.percents()),
        }
    }
}

/// A configuration broke a rule: names the field, the rule and the value.
///
/// ```
/// use breaker::Config;
///
/// let err = Config::builder().count_window(20).min_calls(30).build().unwrap_err();
/// assert_eq!(err.field(), "min_calls");
/// assert_eq!(err.to_string(), "min_calls must be at most the count window, got 30 with a window of 20");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigError {
    field: Field,
    rule: &'static str,
    value: Value,
}

impl ConfigError {
    pub(crate) const fn new(field: Field, rule: &'static str, value: Value) -> Self {
        Self { field, rule, value }
    }

    /// The builder field that broke a rule, e.g. `"failure_rate"`.
    pub const fn field(&self) -> &'static str {
        self.field.name()
    }

    /// The field that broke a rule.
    #[cfg_attr(not(feature = "overrides"), allow(dead_code))]
    pub(crate) const fn field_id(&self) -> Field {
        self.field
    }

    /// The rule that was broken, e.g. `"failure_rate must be in (0, 1]"`.
    pub const fn rule(&self) -> &'static str {
        self.rule
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, got {}", self.rule, self.value)
    }
}

impl std::error::Error for ConfigError {}
