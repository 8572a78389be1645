//! Every rule a configuration must keep, one field at a time: `ConfigBuilder::build` checks
//! them all, and the attribute checks each key's at compile time, at the key.

use super::error::Value;
use super::recovery::check_ramp;
use super::{
    ConfigBuilder, ConfigError, Field, Window, LEAST_MIN_CALLS, MAX_BUCKETS, MAX_COUNT_WINDOW,
};

impl ConfigBuilder {
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
            Field::Timeout
            | Field::Retries
            | Field::RetryBackoff
            | Field::RetryBackoffMax
            | Field::RetryBudget
            | Field::RetryFloor => Ok(()),
            // Any length: zero turns pushback off.
            Field::Shadow | Field::PushbackMax => Ok(()),
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
