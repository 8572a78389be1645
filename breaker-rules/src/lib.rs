//! The configuration of a [`breakerbox`](https://docs.rs/breakerbox) circuit breaker, defined once:
//! its fields, the keys that set them, their defaults, and every rule a configuration keeps.
//!
//! Three places read a configuration, and all three use this crate, so a rule is written
//! once and worded for whoever broke it:
//!
//! - the runtime's `ConfigBuilder::build`, whose `ConfigError` names the builder's field, the
//!   rule and the value (`failure_rate must be in (0, 1], got 1.5`);
//! - operator overrides, which name the key (`rate must be in (0, 1], got 1.5`);
//! - the `#[circuit_breaker]` attribute, which checks at expansion and reports a compile error
//!   at the value, as written (`rate = 1.5: must be in (0, 1]`).
//!
//! It has no dependencies, so that the attribute's proc-macro crate can use it as well as the
//! runtime. Users do not need it: `breakerbox` re-exports what it shares.
//!
//! ```
//! use breakerbox_rules::{Field, Settings, KEYS};
//!
//! let settings = Settings { failure_rate: 1.5, ..Settings::DEFAULT };
//! let broken = settings.check_all().unwrap_err();
//! assert_eq!(broken.field, Field::FailureRate);
//! assert_eq!(broken.rule, "must be in (0, 1]");
//! assert_eq!(broken.to_string(), "failure_rate must be in (0, 1], got 1.5");
//! assert_eq!(KEYS[broken.field as usize].name, "rate");
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod field;
mod keys;
mod rules;
mod settings;
mod violation;

pub use crate::field::Field;
pub use crate::keys::{
    names as key_names, ConfigKey, KeyDefault, Needs, DEFAULT_BUCKETS, DEFAULT_FLEET_QUORUM,
    DEFAULT_HEDGES, DEFAULT_RAMP_STEP, DEFAULT_RETRY_BACKOFF, DEFAULT_RETRY_BACKOFF_MAX,
    DEFAULT_RETRY_BUDGET, DEFAULT_RETRY_FLOOR, DEFAULT_SLOW_RATE, DEFAULT_THROTTLE_MAX,
    DEFAULT_THROTTLE_WINDOW, KEYS, TIME_WINDOW,
};
pub use crate::settings::{
    Backoff, RampUp, Settings, SlowCalls, Window, LEAST_MIN_CALLS, MAX_BUCKETS, MAX_COUNT_WINDOW,
    MAX_HEDGE, MAX_HEDGES, MAX_RAMP_STEPS, MAX_RECORD, MAX_RETRIES, MAX_RETRY_BACKOFF,
    THROTTLE_BUCKETS,
};
pub use crate::violation::{Percents, Value, Violation};
