//! The fields of a configuration.

/// A configuration field: what a key sets and what a rule judges.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)] // Each is the builder setter of the same name (see `Field::name`).
pub enum Field {
    Window,
    Buckets,
    MinCalls,
    FailureRate,
    SlowThreshold,
    SlowRate,
    Throttle,
    ThrottleMax,
    ThrottleWindow,
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
    Hedge,
    Hedges,
    MaxConcurrent,
    ProbeTimeout,
    Shadow,
    Fleet,
    FleetQuorum,
    PushbackMax,
    MaxOpenPercent,
}

impl Field {
    /// Every field, in the order the rules are checked.
    pub const ALL: [Field; 32] = [
        Field::Window,
        Field::Buckets,
        Field::MinCalls,
        Field::FailureRate,
        Field::SlowThreshold,
        Field::SlowRate,
        Field::Throttle,
        Field::ThrottleMax,
        Field::ThrottleWindow,
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
        Field::Hedge,
        Field::Hedges,
        Field::MaxConcurrent,
        Field::ProbeTimeout,
        Field::Shadow,
        Field::Fleet,
        Field::FleetQuorum,
        Field::PushbackMax,
        Field::MaxOpenPercent,
    ];

    /// The builder's name for the field, e.g. `"failure_rate"` (the key is `rate`).
    pub const fn name(self) -> &'static str {
        match self {
            Field::Window => "window",
            Field::Buckets => "buckets",
            Field::MinCalls => "min_calls",
            Field::FailureRate => "failure_rate",
            Field::SlowThreshold => "slow_calls.threshold",
            Field::SlowRate => "slow_calls.rate",
            Field::Throttle => "throttle",
            Field::ThrottleMax => "throttle_max",
            Field::ThrottleWindow => "throttle_window",
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
            Field::Hedge => "hedge",
            Field::Hedges => "hedges",
            Field::MaxConcurrent => "max_concurrent",
            Field::ProbeTimeout => "probe_timeout",
            Field::Shadow => "shadow",
            Field::Fleet => "fleet",
            Field::FleetQuorum => "fleet_quorum",
            Field::PushbackMax => "pushback_max",
            Field::MaxOpenPercent => "max_open_percent",
        }
    }

    /// The field this one's rules measure it against (`min_calls` against the window). When
    /// that one is broken, this one's error would only repeat it.
    pub const fn measured_against(self) -> Option<Field> {
        match self {
            Field::Buckets | Field::MinCalls => Some(Field::Window),
            Field::Successes => Some(Field::Probes),
            _ => None,
        }
    }
}
