//! The keys of `#[circuit_breaker]` and of operator overrides: one table of their names, the
//! builder fields they set, the defaults they take and the keys they need.
//!
//! The attribute macro cannot depend on this crate, so it keeps a copy of the table; a test of
//! the macro crate (`keys::tests`, which sees this table as a dev-dependency) fails when the
//! two differ in any key, field, default or rule.

use std::time::Duration;

use super::policy::{
    DEFAULT_RETRY_BACKOFF, DEFAULT_RETRY_BACKOFF_MAX, DEFAULT_RETRY_BUDGET, DEFAULT_RETRY_FLOOR,
};
use super::Field;

/// One configuration key.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConfigKey {
    /// The name written in the attribute and in an overrides file, e.g. `"min"`.
    pub name: &'static str,
    /// The builder field the key sets, as [`ConfigError::field`](crate::ConfigError::field)
    /// names it in errors.
    pub field: Field,
    /// The value taken when the key is not written but the key it completes is
    /// (`slow = "1s"` alone means a slow-call rate of 0.5).
    pub default: Option<KeyDefault>,
    /// What the key is refused without, e.g. `"slow"` for `slow_rate`.
    pub needs: Option<&'static str>,
}

/// A key's default value.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KeyDefault {
    /// A count, e.g. of buckets.
    Count(u32),
    /// A rate.
    Rate(f64),
    /// A duration.
    Span(Duration),
}

/// Buckets of a time window when `buckets` is not given.
pub(crate) const DEFAULT_BUCKETS: u32 = 10;
/// Slow-call rate when only `slow` is given.
pub(crate) const DEFAULT_SLOW_RATE: f64 = 0.5;
/// Length of a ramp step when `ramp_step` is not given.
pub(crate) const DEFAULT_RAMP_STEP: Duration = Duration::from_secs(5);

const fn key(name: &'static str, field: Field) -> ConfigKey {
    ConfigKey {
        name,
        field,
        default: None,
        needs: None,
    }
}

/// Every configuration key, in the order the docs list them: one per [`Field`], in the order
/// `build` checks the fields.
#[doc(hidden)]
pub const KEYS: [ConfigKey; Field::ALL.len()] = [
    key("window", Field::Window),
    ConfigKey {
        default: Some(KeyDefault::Count(DEFAULT_BUCKETS)),
        needs: Some("a time window"),
        ..key("buckets", Field::Buckets)
    },
    key("min", Field::MinCalls),
    key("rate", Field::FailureRate),
    key("slow", Field::SlowThreshold),
    ConfigKey {
        default: Some(KeyDefault::Rate(DEFAULT_SLOW_RATE)),
        needs: Some("slow"),
        ..key("slow_rate", Field::SlowRate)
    },
    key("open", Field::OpenFor),
    key("probes", Field::Probes),
    key("successes", Field::Successes),
    ConfigKey {
        needs: Some("open_max"),
        ..key("backoff", Field::BackoffFactor)
    },
    ConfigKey {
        needs: Some("backoff"),
        ..key("open_max", Field::BackoffMax)
    },
    key("ramp", Field::Ramp),
    ConfigKey {
        default: Some(KeyDefault::Span(DEFAULT_RAMP_STEP)),
        needs: Some("ramp"),
        ..key("ramp_step", Field::RampStep)
    },
    key("ramp_guard", Field::RampGuard),
    key("timeout", Field::Timeout),
    key("retries", Field::Retries),
    ConfigKey {
        default: Some(KeyDefault::Span(DEFAULT_RETRY_BACKOFF)),
        needs: Some("retries"),
        ..key("retry_backoff", Field::RetryBackoff)
    },
    ConfigKey {
        default: Some(KeyDefault::Span(DEFAULT_RETRY_BACKOFF_MAX)),
        needs: Some("retries"),
        ..key("retry_backoff_max", Field::RetryBackoffMax)
    },
    ConfigKey {
        default: Some(KeyDefault::Rate(DEFAULT_RETRY_BUDGET)),
        needs: Some("retries"),
        ..key("retry_budget", Field::RetryBudget)
    },
    ConfigKey {
        default: Some(KeyDefault::Count(DEFAULT_RETRY_FLOOR)),
        needs: Some("retries"),
        ..key("retry_floor", Field::RetryFloor)
    },
    key("max_concurrent", Field::MaxConcurrent),
    key("probe_timeout", Field::ProbeTimeout),
    key("shadow", Field::Shadow),
    key("pushback_max", Field::PushbackMax),
];

// The table holds the fields in `Field::ALL`'s order, so that `ConfigKey::of` is an index and a
// field added without its key fails to compile.
const _: () = {
    let mut i = 0;
    while i < KEYS.len() {
        assert!(
            KEYS[i].field as usize == i && Field::ALL[i] as usize == i,
            "KEYS lists one key per field, in Field::ALL's order"
        );
        i += 1;
    }
};

impl ConfigKey {
    /// The key that sets `field`.
    pub const fn of(field: Field) -> &'static ConfigKey {
        &KEYS[field as usize]
    }
}

/// The names of [`KEYS`], in order.
#[cfg_attr(not(feature = "overrides"), allow(dead_code))]
pub(crate) const fn names() -> [&'static str; KEYS.len()] {
    let mut names = [""; KEYS.len()];
    let mut i = 0;
    while i < KEYS.len() {
        names[i] = KEYS[i].name;
        i += 1;
    }
    names
}
