//! A broken rule: which field, which rule, what value; each reader words it its own way.

use std::fmt;
use std::time::Duration;

use crate::field::Field;
use crate::keys::ConfigKey;
use crate::settings::{RampUp, MAX_RAMP_STEPS};

/// The value a rule was checked against.
#[derive(Clone, Copy, Debug, PartialEq)]
#[allow(missing_docs)] // The variants' fields are named for what they hold.
pub enum Value {
    /// A count.
    U32(u32),
    /// A rate or a factor.
    F64(f64),
    /// A duration.
    Duration(Duration),
    /// `min_calls` over the count window.
    MinOverWindow { min: u32, window: u32 },
    /// `open_backoff.max` under `open_for`.
    MaxUnderOpen { max: Duration, open: Duration },
    /// `retry_backoff_max` under `retry_backoff`.
    MaxUnderBase { max: Duration, base: Duration },
    /// `successes` over `probes`.
    SuccessesOverProbes { successes: u32, probes: u32 },
    /// A ramp-up's percentages.
    Ramp(Percents),
}

/// A ramp-up's percentages, without its step: what its rules judge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Percents {
    kept: [u32; MAX_RAMP_STEPS],
    len: u8,
}

impl Percents {
    /// The percentages of a ramp of at most [`MAX_RAMP_STEPS`] steps.
    pub(crate) const fn of(ramp: &RampUp) -> Self {
        let mut kept = [0; MAX_RAMP_STEPS];
        let mut i = 0;
        while i < ramp.len() && i < MAX_RAMP_STEPS {
            kept[i] = ramp.at(i);
            i += 1;
        }
        Self { kept, len: i as u8 }
    }

    /// The percentages, step by step.
    pub fn as_slice(&self) -> &[u32] {
        &self.kept[..usize::from(self.len)]
    }
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
            Value::Ramp(percents) => write!(f, "{:?}", percents.as_slice()),
        }
    }
}

/// A rule a configuration broke.
///
/// Worded three ways from the same parts: the builder's (`Display`:
/// `min_calls must be at least 2, got 1`), the key's ([`Violation::by_key`]:
/// `min must be at least 2, got 1`), and the attribute's, which puts the value as written
/// before the [`rule`](Self::rule) (`min = 1: must be at least 2`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Violation {
    /// The field whose rule is broken.
    pub field: Field,
    /// What the builder calls what is judged: the field's name, or a part of it
    /// (`count window`, `time window span`).
    pub subject: &'static str,
    /// The rule, worded to follow the subject or the key: `must be in (0, 1]`.
    pub rule: &'static str,
    /// The value judged.
    pub value: Value,
}

impl Violation {
    /// A rule of `field`, told with the field's own name.
    pub const fn new(field: Field, rule: &'static str, value: Value) -> Self {
        Self::of(field, field.name(), rule, value)
    }

    /// A rule of a part of `field`, told with `subject`.
    pub const fn of(field: Field, subject: &'static str, rule: &'static str, value: Value) -> Self {
        Self {
            field,
            subject,
            rule,
            value,
        }
    }

    /// The rule told with the key's name, as an overrides file writes it:
    /// `rate must be in (0, 1], got 1.5`.
    pub fn by_key(&self) -> String {
        format!(
            "{} {}, got {}",
            ConfigKey::of(self.field).name,
            self.rule,
            self.value
        )
    }

    /// The other field the value was measured against, with that field's value:
    /// `min_calls` over the window names the window.
    pub const fn against(&self) -> Option<(Field, Value)> {
        match self.value {
            Value::MinOverWindow { window, .. } => Some((Field::Window, Value::U32(window))),
            Value::MaxUnderOpen { open, .. } => Some((Field::OpenFor, Value::Duration(open))),
            Value::MaxUnderBase { base, .. } => Some((Field::RetryBackoff, Value::Duration(base))),
            Value::SuccessesOverProbes { probes, .. } => Some((Field::Probes, Value::U32(probes))),
            _ => None,
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}, got {}", self.subject, self.rule, self.value)
    }
}

impl std::error::Error for Violation {}
