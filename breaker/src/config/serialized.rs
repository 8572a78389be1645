//! The configuration as JSON (feature `serde`): one entry per `#[circuit_breaker]` key.

use std::time::Duration;

use serde::ser::{Serialize, SerializeMap, Serializer};

use super::{Config, Field, Window};
use breakerbox_rules::ConfigKey;

/// One key's value, as an override or the attribute would write it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    Count(u32),
    Rate(f64),
    Span(Duration),
    Flag(bool),
    Percents(Vec<u32>),
    /// A key the configuration leaves unset (no slow calls, no timeout...).
    Unset,
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Count(n) => s.serialize_u32(*n),
            Value::Rate(r) => s.serialize_f64(*r),
            Value::Span(d) => s.serialize_str(&humantime::format_duration(*d).to_string()),
            Value::Flag(b) => s.serialize_bool(*b),
            Value::Percents(p) => p.serialize(s),
            Value::Unset => s.serialize_none(),
        }
    }
}

impl Config {
    /// Every key of the configuration with its value, in the attribute's order of keys.
    pub(crate) fn values(&self) -> Vec<(Field, Value)> {
        Field::ALL.iter().map(|&f| (f, self.value(f))).collect()
    }

    fn value(&self, field: Field) -> Value {
        let or_unset = |v: Option<Value>| v.unwrap_or(Value::Unset);
        let policy = self.policy();
        match field {
            Field::Window => match self.window() {
                Window::Count(n) => Value::Count(n),
                Window::Time { span, .. } => Value::Span(span),
            },
            Field::Buckets => match self.window() {
                Window::Count(_) => Value::Unset,
                Window::Time { buckets, .. } => Value::Count(buckets),
            },
            Field::MinCalls => Value::Count(self.min_calls()),
            Field::FailureRate => Value::Rate(self.failure_rate()),
            Field::SlowThreshold => or_unset(self.slow_calls().map(|s| Value::Span(s.threshold))),
            Field::SlowRate => or_unset(self.slow_calls().map(|s| Value::Rate(s.rate))),
            Field::Throttle => or_unset(self.throttling().map(|t| Value::Rate(t.factor()))),
            Field::ThrottleMax => or_unset(self.throttling().map(|t| Value::Rate(t.max()))),
            Field::ThrottleWindow => or_unset(self.throttling().map(|t| Value::Span(t.window()))),
            Field::OpenFor => Value::Span(self.open_for()),
            Field::Probes => Value::Count(self.probes()),
            Field::Successes => Value::Count(self.successes()),
            Field::BackoffFactor => or_unset(self.open_backoff().map(|b| Value::Rate(b.factor))),
            Field::BackoffMax => or_unset(self.open_backoff().map(|b| Value::Span(b.max))),
            Field::Ramp => or_unset(
                self.ramp_up()
                    .map(|r| Value::Percents(r.percents().to_vec())),
            ),
            Field::RampStep => or_unset(self.ramp_up().map(|r| Value::Span(r.step()))),
            Field::RampGuard => or_unset(self.ramp_latency_guard().map(Value::Rate)),
            Field::Timeout => or_unset(policy.timeout().map(Value::Span)),
            Field::Retries => Value::Count(policy.retries()),
            Field::RetryBackoff => Value::Span(policy.retry_backoff()),
            Field::RetryBackoffMax => Value::Span(policy.retry_backoff_max()),
            Field::RetryBudget => Value::Rate(policy.retry_budget()),
            Field::RetryFloor => Value::Count(policy.retry_floor()),
            Field::Hedge => or_unset(policy.hedge().map(Value::Span)),
            Field::Hedges => Value::Count(policy.hedges()),
            Field::MaxConcurrent => or_unset(self.max_concurrent().map(Value::Count)),
            Field::ProbeTimeout => Value::Span(self.probe_timeout()),
            Field::Shadow => Value::Flag(self.shadow()),
            Field::Fleet => Value::Flag(self.fleet()),
            Field::FleetQuorum => Value::Count(self.fleet_quorum()),
            Field::PushbackMax => Value::Span(self.pushback_max()),
            Field::MaxOpenPercent => or_unset(self.max_open_percent().map(Value::Count)),
        }
    }
}

/// A map from each `#[circuit_breaker]` key (`window`, `min`, `rate`, `open`...) to its
/// value: counts and rates as numbers, durations as text (`"5s"`, `"1m 30s"`), the ramp's
/// percentages as an array, an unset key (no `slow`, no `timeout`) as `null`.
///
/// ```
/// let json = serde_json::to_value(breakerbox::Config::default()).unwrap();
/// assert_eq!(json["window"], 20);
/// assert_eq!(json["rate"], 0.5);
/// assert_eq!(json["open"], "5s");
/// assert_eq!(json["slow"], serde_json::Value::Null);
/// ```
impl Serialize for Config {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let values = self.values();
        let mut map = s.serialize_map(Some(values.len()))?;
        for (field, value) in &values {
            map.serialize_entry(ConfigKey::of(*field).name, value)?;
        }
        map.end()
    }
}
