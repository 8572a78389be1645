//! Every rule a configuration must keep, one field at a time.

use crate::field::Field;
use crate::settings::{
    RampUp, Settings, Window, LEAST_MIN_CALLS, MAX_BUCKETS, MAX_COUNT_WINDOW, MAX_HEDGE,
    MAX_HEDGES, MAX_RAMP_STEPS, MAX_RETRIES, MAX_RETRY_BACKOFF, THROTTLE_BUCKETS,
};
use crate::violation::{Percents, Value, Violation};

impl Settings {
    /// Checks every field, in [`Field::ALL`]'s order, and returns the first rule broken.
    pub const fn check_all(&self) -> Result<(), Violation> {
        let mut i = 0;
        while i < Field::ALL.len() {
            if let Err(e) = self.check(Field::ALL[i]) {
                return Err(e);
            }
            i += 1;
        }
        Ok(())
    }

    /// Checks the rules of one field. A rule across fields (`min_calls` at most the window)
    /// belongs to the field that breaks it, so that each broken rule is told at its key.
    ///
    /// ```
    /// use breakerbox_rules::{Field, Settings, Window};
    ///
    /// let settings = Settings { window: Window::Count(20), min_calls: Some(30), ..Settings::DEFAULT };
    /// assert!(settings.check(Field::Window).is_ok());
    /// let broken = settings.check(Field::MinCalls).unwrap_err();
    /// assert_eq!(broken.to_string(), "min_calls must be at most the count window, got 30 with a window of 20");
    /// assert_eq!(broken.by_key(), "min must be at most the count window, got 30 with a window of 20");
    /// ```
    pub const fn check(&self, field: Field) -> Result<(), Violation> {
        match field {
            Field::Window => match self.window {
                Window::Count(0) => Err(Violation::of(
                    field,
                    "count window",
                    "must be at least 1 call",
                    Value::U32(0),
                )),
                Window::Count(n) if n > MAX_COUNT_WINDOW => Err(Violation::of(
                    field,
                    "count window",
                    "must be at most 1048576 calls",
                    Value::U32(n),
                )),
                Window::Time { span, .. } if span.is_zero() => Err(Violation::of(
                    field,
                    "time window span",
                    "must be greater than zero",
                    Value::Duration(span),
                )),
                _ => Ok(()),
            },
            Field::Buckets => match self.window {
                Window::Time { buckets: 0, .. } => {
                    Err(Violation::new(field, "must be at least 1", Value::U32(0)))
                }
                Window::Time { buckets, .. } if buckets > MAX_BUCKETS => Err(Violation::new(
                    field,
                    "must be at most 4096",
                    Value::U32(buckets),
                )),
                Window::Time { span, buckets } if span.as_nanos() < buckets as u128 => {
                    Err(Violation::new(
                        field,
                        "must not exceed the window span in nanoseconds",
                        Value::U32(buckets),
                    ))
                }
                _ => Ok(()),
            },
            Field::MinCalls => match (self.min_calls, self.window) {
                (Some(min), Window::Count(window)) if window > 0 && min > window => {
                    Err(Violation::new(
                        field,
                        "must be at most the count window",
                        Value::MinOverWindow { min, window },
                    ))
                }
                (Some(0), Window::Count(1)) => Err(Violation::new(
                    field,
                    "must be 1 with a count window of 1",
                    Value::U32(0),
                )),
                (Some(min), window)
                    if min < LEAST_MIN_CALLS && !matches!(window, Window::Count(1)) =>
                {
                    Err(Violation::new(field, "must be at least 2", Value::U32(min)))
                }
                _ => Ok(()),
            },
            Field::FailureRate => check_rate(field, field.name(), self.failure_rate),
            Field::SlowThreshold => match self.slow_calls {
                Some(slow) if slow.threshold.is_zero() => Err(Violation::of(
                    field,
                    "slow_calls threshold",
                    "must be greater than zero",
                    Value::Duration(slow.threshold),
                )),
                _ => Ok(()),
            },
            Field::SlowRate => match self.slow_calls {
                Some(slow) => check_rate(field, "slow_calls rate", slow.rate),
                None => Ok(()),
            },
            // Written so that NaN fails too. Below 1, a healthy downstream would be refused.
            Field::Throttle => match self.throttle {
                Some(k) if !(k >= 1.0 && k.is_finite()) => Err(Violation::new(
                    field,
                    "must be finite and at least 1",
                    Value::F64(k),
                )),
                _ => Ok(()),
            },
            Field::ThrottleMax => match self.throttle {
                Some(_) => check_rate(field, field.name(), self.throttle_max),
                None => Ok(()),
            },
            Field::ThrottleWindow => match self.throttle {
                Some(_) if self.throttle_window.as_nanos() < THROTTLE_BUCKETS as u128 => {
                    Err(Violation::new(
                        field,
                        "must be at least 10ns, one for each of its buckets",
                        Value::Duration(self.throttle_window),
                    ))
                }
                _ => Ok(()),
            },
            Field::OpenFor => {
                if self.open_for.is_zero() {
                    Err(Violation::new(
                        field,
                        "must be greater than zero",
                        Value::Duration(self.open_for),
                    ))
                } else {
                    Ok(())
                }
            }
            Field::Probes => {
                if self.probes == 0 {
                    Err(Violation::new(field, "must be at least 1", Value::U32(0)))
                } else {
                    Ok(())
                }
            }
            Field::Successes => match self.successes {
                Some(0) => Err(Violation::new(field, "must be at least 1", Value::U32(0))),
                Some(successes) if successes > self.probes => Err(Violation::new(
                    field,
                    "must be at most probes",
                    Value::SuccessesOverProbes {
                        successes,
                        probes: self.probes,
                    },
                )),
                _ => Ok(()),
            },
            // Written so that NaN fails too. An infinite factor is no duration to grow by.
            Field::BackoffFactor => match self.backoff {
                Some(b) if !(b.factor >= 1.0 && b.factor.is_finite()) => Err(Violation::of(
                    field,
                    "open_backoff factor",
                    "must be finite and at least 1",
                    Value::F64(b.factor),
                )),
                _ => Ok(()),
            },
            Field::BackoffMax => match self.backoff {
                Some(b) if b.max.as_nanos() < self.open_for.as_nanos() => Err(Violation::of(
                    field,
                    "open_backoff max",
                    "must be at least the open duration",
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
                Some(ramp) if ramp.step().is_zero() => Err(Violation::of(
                    field,
                    "ramp_up step",
                    "must be greater than zero",
                    Value::Duration(ramp.step()),
                )),
                _ => Ok(()),
            },
            Field::RampGuard => match (self.ramp_guard, self.ramp_up) {
                (Some(factor), _) if !(factor > 1.0 && factor.is_finite()) => Err(Violation::of(
                    field,
                    "ramp_latency_guard factor",
                    "must be finite and greater than 1",
                    Value::F64(factor),
                )),
                (Some(factor), None) => {
                    Err(Violation::new(field, "needs ramp_up", Value::F64(factor)))
                }
                _ => Ok(()),
            },
            Field::Timeout => match self.timeout {
                Some(t) if t.is_zero() => Err(Violation::new(
                    field,
                    "must be greater than zero",
                    Value::Duration(t),
                )),
                _ => Ok(()),
            },
            Field::Retries if self.retries > MAX_RETRIES => Err(Violation::new(
                field,
                "must be at most 10",
                Value::U32(self.retries),
            )),
            Field::RetryBackoff if self.retry_backoff.as_nanos() > MAX_RETRY_BACKOFF.as_nanos() => {
                Err(Violation::new(
                    field,
                    "must be at most 60s",
                    Value::Duration(self.retry_backoff),
                ))
            }
            Field::RetryBackoffMax => match self.retry_backoff_max {
                Some(max) if max.as_nanos() < self.retry_backoff.as_nanos() => Err(Violation::new(
                    field,
                    "must be at least retry_backoff",
                    Value::MaxUnderBase {
                        max,
                        base: self.retry_backoff,
                    },
                )),
                _ => Ok(()),
            },
            // Written so that NaN fails too.
            Field::RetryBudget if !(self.retry_budget >= 0.0 && self.retry_budget <= 1.0) => Err(
                Violation::new(field, "must be in [0, 1]", Value::F64(self.retry_budget)),
            ),
            // Any number a second is a floor; 0 leaves the budget alone.
            Field::Retries | Field::RetryBackoff | Field::RetryBudget | Field::RetryFloor => Ok(()),
            Field::Hedge => match (self.hedge, self.timeout) {
                (Some(d), _) if d.is_zero() => Err(Violation::new(
                    field,
                    "must be greater than zero",
                    Value::Duration(d),
                )),
                (Some(d), _) if d.as_nanos() > MAX_HEDGE.as_nanos() => Err(Violation::new(
                    field,
                    "must be at most 60s",
                    Value::Duration(d),
                )),
                (Some(d), Some(t)) if d.as_nanos() >= t.as_nanos() => Err(Violation::new(
                    field,
                    "must be below the timeout, or no attempt could be hedged",
                    Value::Duration(d),
                )),
                _ => Ok(()),
            },
            Field::Hedges if self.hedges == 0 || self.hedges > MAX_HEDGES => Err(Violation::new(
                field,
                "must be in 1..=5",
                Value::U32(self.hedges),
            )),
            Field::Hedges => Ok(()),
            Field::MaxConcurrent => match self.max_concurrent {
                Some(0) => Err(Violation::new(field, "must be at least 1", Value::U32(0))),
                _ => Ok(()),
            },
            Field::ProbeTimeout => match self.probe_timeout {
                Some(limit) if limit.is_zero() => Err(Violation::new(
                    field,
                    "must be greater than zero",
                    Value::Duration(limit),
                )),
                _ => Ok(()),
            },
            // Any length: zero turns pushback off.
            Field::Shadow | Field::Fleet | Field::PushbackMax => Ok(()),
            Field::FleetQuorum => match self.fleet_quorum {
                Some(quorum) if quorum < 2 => Err(Violation::new(
                    field,
                    "must be at least 2, so that one instance never opens the fleet",
                    Value::U32(quorum),
                )),
                _ => Ok(()),
            },
            Field::MaxOpenPercent => match self.max_open_percent {
                Some(percent) if percent == 0 || percent > 100 => Err(Violation::new(
                    field,
                    "must be in 1..=100",
                    Value::U32(percent),
                )),
                _ => Ok(()),
            },
        }
    }
}

const fn check_rate(field: Field, subject: &'static str, rate: f64) -> Result<(), Violation> {
    // Written so that NaN fails too: every comparison with NaN is false.
    if rate > 0.0 && rate <= 1.0 {
        Ok(())
    } else {
        Err(Violation::of(
            field,
            subject,
            "must be in (0, 1]",
            Value::F64(rate),
        ))
    }
}

const fn check_ramp(field: Field, ramp: RampUp) -> Result<(), Violation> {
    let subject = field.name();
    if ramp.len() > MAX_RAMP_STEPS {
        return Err(Violation::of(
            field,
            subject,
            "must have at most 16 steps",
            Value::U32(ramp.len() as u32),
        ));
    }
    let broken = if ramp.len() == 0 {
        Some("must have at least one step")
    } else {
        match ramp_step_broken(ramp) {
            None if ramp.at(ramp.len() - 1) != 100 => Some("must end at 100"),
            step => step,
        }
    };
    match broken {
        Some(rule) => Err(Violation::of(
            field,
            subject,
            rule,
            Value::Ramp(Percents::of(&ramp)),
        )),
        None => Ok(()),
    }
}

/// The rule a step breaks, the first step first.
const fn ramp_step_broken(ramp: RampUp) -> Option<&'static str> {
    let mut i = 0;
    while i < ramp.len() {
        let p = ramp.at(i);
        if p == 0 || p > 100 {
            return Some("percentages must be in 1..=100");
        }
        if i > 0 && p <= ramp.at(i - 1) {
            return Some("percentages must rise strictly");
        }
        i += 1;
    }
    None
}
