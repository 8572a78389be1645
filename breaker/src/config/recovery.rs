//! Progressive recovery settings: backoff of the open duration and the ramp-up steps.

use std::fmt;
use std::time::Duration;

use super::error::{ConfigError, Field, Value};

/// Backoff of the open duration: each failed half-open trial makes the next OPEN last
/// `factor` times the previous one, up to `max`. The first OPEN after CLOSED lasts `open_for`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backoff {
    /// Growth of the open duration after each failed trial, at least 1.
    pub factor: f64,
    /// Longest OPEN, at least `open_for`.
    pub max: Duration,
}

/// Most steps a ramp-up may have.
pub const MAX_RAMP_STEPS: usize = 16;

/// Stepwise ramp-up after the half-open probes succeed: the breaker admits each percentage of
/// calls for one `step`, then the next, and closes after the last (which is 100).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct RampUp {
    percents: [u32; MAX_RAMP_STEPS],
    /// Steps given, which may exceed `MAX_RAMP_STEPS` in a builder that `build` refuses.
    len: usize,
    step: Duration,
}

impl RampUp {
    pub(super) const fn new(percents: &[u32], step: Duration) -> Self {
        let mut kept = [0; MAX_RAMP_STEPS];
        let mut i = 0;
        while i < percents.len() && i < MAX_RAMP_STEPS {
            kept[i] = percents[i];
            i += 1;
        }
        Self {
            percents: kept,
            len: percents.len(),
            step,
        }
    }

    /// The percentages of calls admitted, step by step.
    pub fn percents(&self) -> &[u32] {
        let len = if self.len < MAX_RAMP_STEPS {
            self.len
        } else {
            MAX_RAMP_STEPS
        };
        &self.percents[..len]
    }

    /// How long each step lasts.
    pub const fn step(&self) -> Duration {
        self.step
    }

    /// The percentage of step `index`, or `None` past the last step.
    pub(crate) fn percent(&self, index: usize) -> Option<u32> {
        self.percents().get(index).copied()
    }
}

impl fmt::Debug for RampUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RampUp")
            .field("percents", &self.percents())
            .field("step", &self.step)
            .finish()
    }
}

pub(super) const fn check_ramp(field: Field, ramp: RampUp) -> Result<(), ConfigError> {
    if ramp.len > MAX_RAMP_STEPS {
        return Err(ConfigError::new(
            field,
            "ramp_up must have at most 16 steps",
            Value::U32(ramp.len as u32),
        ));
    }
    match ramp_rule_broken(ramp) {
        Some(rule) => Err(ConfigError::new(field, rule, Value::Ramp(ramp))),
        None => Ok(()),
    }
}

const fn ramp_rule_broken(ramp: RampUp) -> Option<&'static str> {
    if ramp.len == 0 {
        return Some("ramp_up must have at least one step");
    }
    let mut i = 0;
    while i < ramp.len {
        let p = ramp.percents[i];
        if p == 0 || p > 100 {
            return Some("ramp_up percentages must be in 1..=100");
        }
        if i > 0 && p <= ramp.percents[i - 1] {
            return Some("ramp_up percentages must rise strictly");
        }
        i += 1;
    }
    if ramp.percents[ramp.len - 1] != 100 {
        return Some("ramp_up must end at 100");
    }
    None
}
