//! The attribute's keys: the configuration keys, with their builder fields, defaults and the
//! keys they need, then the keys only the attribute has.
//!
//! The configuration keys are a copy of the runtime's table (`breaker::__private::KEYS`),
//! which this crate cannot depend on; the test below fails when the two differ in any key,
//! field, default or rule.

use std::time::Duration;

/// One configuration key.
pub(crate) struct ConfigKey {
    pub(crate) name: &'static str,
    /// The runtime's `Field` the key sets, checked at the key's span.
    pub(crate) field: &'static str,
    /// The value taken when the key is not written but the key it completes is.
    pub(crate) default: Option<KeyDefault>,
    /// What the key is refused without, and how to write it, for the error.
    pub(crate) needs: Option<Needs>,
}

/// Read by the test against the runtime's table; the expansion uses the constants the table
/// is made of.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) enum KeyDefault {
    Count(u32),
    Rate(f64),
    Span(Duration),
}

pub(crate) struct Needs {
    /// As the runtime's table says it: a key's name, or `a time window`.
    pub(crate) what: &'static str,
    /// The rest of the error, after "`key` needs `what`".
    pub(crate) hint: &'static str,
}

/// Buckets of a time window when `buckets` is not given.
pub(crate) const DEFAULT_BUCKETS: u32 = 10;
/// Slow-call rate when only `slow` is given.
pub(crate) const DEFAULT_SLOW_RATE: f64 = 0.5;
/// Length of a ramp step when `ramp_step` is not given (the seed design's 5 seconds).
pub(crate) const DEFAULT_RAMP_STEP: Duration = Duration::from_secs(5);
/// Base delay before a retry when `retry_backoff` is not given (fail once, wait 20 ms).
pub(crate) const DEFAULT_RETRY_BACKOFF: Duration = Duration::from_millis(20);
/// Longest wait before a retry when `retry_backoff_max` is not given (or the base, if
/// longer; the runtime decides, so the expansion writes the key only when given).
pub(crate) const DEFAULT_RETRY_BACKOFF_MAX: Duration = Duration::from_secs(10);
/// Retries per first attempt when `retry_budget` is not given.
pub(crate) const DEFAULT_RETRY_BUDGET: f64 = 0.2;
/// Retries a second allowed whatever the budget when `retry_floor` is not given.
pub(crate) const DEFAULT_RETRY_FLOOR: u32 = 10;
/// Bound on keyed breakers when `max_keys` is not given.
pub(crate) const DEFAULT_MAX_KEYS: usize = 1024;

/// `needs` of a time window rather than of a key.
pub(crate) const TIME_WINDOW: &str = "a time window";

const fn key(name: &'static str, field: &'static str) -> ConfigKey {
    ConfigKey {
        name,
        field,
        default: None,
        needs: None,
    }
}

/// Every configuration key, in the runtime's order: one per field.
pub(crate) const CONFIG_KEYS: &[ConfigKey] = &[
    key("window", "Window"),
    ConfigKey {
        default: Some(KeyDefault::Count(DEFAULT_BUCKETS)),
        needs: Some(Needs {
            what: TIME_WINDOW,
            hint: ", like `window = \"10s\"`; `window = N` (or no window) counts the last N calls",
        }),
        ..key("buckets", "Buckets")
    },
    key("min", "MinCalls"),
    key("rate", "FailureRate"),
    key("slow", "SlowThreshold"),
    ConfigKey {
        default: Some(KeyDefault::Rate(DEFAULT_SLOW_RATE)),
        needs: Some(Needs {
            what: "slow",
            hint: ", the duration above which a call is slow, like `slow = \"800ms\"`",
        }),
        ..key("slow_rate", "SlowRate")
    },
    key("open", "OpenFor"),
    key("probes", "Probes"),
    key("successes", "Successes"),
    ConfigKey {
        needs: Some(Needs {
            what: "open_max",
            hint: ", the longest OPEN, like `open_max = \"60s\"`",
        }),
        ..key("backoff", "BackoffFactor")
    },
    ConfigKey {
        needs: Some(Needs {
            what: "backoff",
            hint: ", the growth of OPEN after each failed trial, like `backoff = 2.0`",
        }),
        ..key("open_max", "BackoffMax")
    },
    key("ramp", "Ramp"),
    ConfigKey {
        default: Some(KeyDefault::Span(DEFAULT_RAMP_STEP)),
        needs: Some(Needs {
            what: "ramp",
            hint: ", the percentages to ramp up through, like `ramp = [10, 30, 60, 100]`",
        }),
        ..key("ramp_step", "RampStep")
    },
    key("ramp_guard", "RampGuard"),
    key("timeout", "Timeout"),
    key("retries", "Retries"),
    ConfigKey {
        default: Some(KeyDefault::Span(DEFAULT_RETRY_BACKOFF)),
        needs: Some(Needs {
            what: "retries",
            hint: ", how many times a failed attempt is retried, like `retries = 2`",
        }),
        ..key("retry_backoff", "RetryBackoff")
    },
    ConfigKey {
        default: Some(KeyDefault::Span(DEFAULT_RETRY_BACKOFF_MAX)),
        needs: Some(Needs {
            what: "retries",
            hint: ", how many times a failed attempt is retried, like `retries = 2`",
        }),
        ..key("retry_backoff_max", "RetryBackoffMax")
    },
    ConfigKey {
        default: Some(KeyDefault::Rate(DEFAULT_RETRY_BUDGET)),
        needs: Some(Needs {
            what: "retries",
            hint: ", how many times a failed attempt is retried, like `retries = 2`",
        }),
        ..key("retry_budget", "RetryBudget")
    },
    ConfigKey {
        default: Some(KeyDefault::Count(DEFAULT_RETRY_FLOOR)),
        needs: Some(Needs {
            what: "retries",
            hint: ", how many times a failed attempt is retried, like `retries = 2`",
        }),
        ..key("retry_floor", "RetryFloor")
    },
    key("max_concurrent", "MaxConcurrent"),
    key("probe_timeout", "ProbeTimeout"),
    key("shadow", "Shadow"),
    key("pushback_max", "PushbackMax"),
];

/// The keys only the attribute has, after the configuration keys in the docs.
pub(crate) const ATTRIBUTE_KEYS: &[&str] = &[
    "fallback", "classify", "key", "max_keys", "record", "name", "crate",
];

/// Every key the attribute accepts, in the order the docs list them.
pub(crate) fn all() -> impl Iterator<Item = &'static str> {
    CONFIG_KEYS
        .iter()
        .map(|k| k.name)
        .chain(ATTRIBUTE_KEYS.iter().copied())
}

impl KeyDefault {
    /// The value as the runtime's table prints it, for the test below.
    #[cfg(test)]
    fn text(&self) -> String {
        match self {
            KeyDefault::Count(n) => format!("{n:?}"),
            KeyDefault::Rate(r) => format!("{r:?}"),
            KeyDefault::Span(d) => format!("{d:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use breaker::__private::KEYS;

    type Row = (String, String, Option<String>, Option<String>);

    #[test]
    fn attribute_and_runtime_agree_on_every_key_field_default_and_rule() {
        let ours: Vec<Row> = CONFIG_KEYS
            .iter()
            .map(|k| {
                (
                    k.name.to_owned(),
                    k.field.to_owned(),
                    k.default.as_ref().map(KeyDefault::text),
                    k.needs.as_ref().map(|n| n.what.to_owned()),
                )
            })
            .collect();
        let runtime: Vec<Row> = KEYS
            .iter()
            .map(|k| {
                let default = k.default.map(|d| match d {
                    breaker::__private::KeyDefault::Count(n) => format!("{n:?}"),
                    breaker::__private::KeyDefault::Rate(r) => format!("{r:?}"),
                    breaker::__private::KeyDefault::Span(d) => format!("{d:?}"),
                });
                (
                    k.name.to_owned(),
                    format!("{:?}", k.field),
                    default,
                    k.needs.map(str::to_owned),
                )
            })
            .collect();
        assert_eq!(ours, runtime);
    }

    #[test]
    fn attribute_only_keys_are_no_configuration_keys() {
        for key in ATTRIBUTE_KEYS {
            assert!(KEYS.iter().all(|k| k.name != *key), "{key}");
        }
        assert_eq!(all().count(), KEYS.len() + ATTRIBUTE_KEYS.len());
    }
}
