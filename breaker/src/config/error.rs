//! Configuration errors: which field broke which rule, with what value.

use std::fmt;

use breakerbox_rules::{Field, Violation};

/// A configuration broke a rule: names the field, the rule and the value.
///
/// ```
/// use breakerbox::Config;
///
/// let err = Config::builder().count_window(20).min_calls(30).build().unwrap_err();
/// assert_eq!(err.field(), "min_calls");
/// assert_eq!(err.rule(), "must be at most the count window");
/// assert_eq!(err.to_string(), "min_calls must be at most the count window, got 30 with a window of 20");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigError {
    violation: Violation,
}

impl ConfigError {
    pub(crate) const fn from_violation(violation: Violation) -> Self {
        Self { violation }
    }

    /// The builder field that broke a rule, e.g. `"failure_rate"`.
    pub const fn field(&self) -> &'static str {
        self.violation.field.name()
    }

    /// The field that broke a rule.
    #[cfg_attr(not(feature = "overrides"), allow(dead_code))]
    pub(crate) const fn field_id(&self) -> Field {
        self.violation.field
    }

    /// The rule that was broken, e.g. `"must be in (0, 1]"`.
    pub const fn rule(&self) -> &'static str {
        self.violation.rule
    }

    /// The broken rule told with the key's name, as an overrides file writes it.
    #[cfg_attr(not(feature = "overrides"), allow(dead_code))]
    pub(crate) fn by_key(&self) -> String {
        self.violation.by_key()
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.violation.fmt(f)
    }
}

impl std::error::Error for ConfigError {}
