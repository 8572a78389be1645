//! The keys of `#[circuit_breaker]` and of operator overrides: their names, the fields they
//! set, the defaults they take and the keys they need.

use std::time::Duration;

use crate::field::Field;

/// One configuration key.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConfigKey {
    /// The name written in the attribute and in an overrides file, e.g. `"min"`.
    pub name: &'static str,
    /// The field the key sets.
    pub field: Field,
    /// The value taken when the key is not written but the key it completes is
    /// (`slow = "1s"` alone means a slow-call rate of 0.5).
    pub default: Option<KeyDefault>,
    /// What the key is refused without, e.g. `slow` for `slow_rate`.
    pub needs: Option<Needs>,
}

/// What a key is refused without.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Needs {
    /// A key's name, or [`TIME_WINDOW`].
    pub what: &'static str,
    /// The rest of the error after "`key` needs `what`": what that is, and how to write it.
    pub hint: &'static str,
}

/// A key's default value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KeyDefault {
    /// A count, e.g. of buckets.
    Count(u32),
    /// A rate.
    Rate(f64),
    /// A duration.
    Span(Duration),
}

/// [`Needs::what`] of a key that needs a time window rather than another key.
pub const TIME_WINDOW: &str = "a time window";

/// Buckets of a time window when `buckets` is not given.
pub const DEFAULT_BUCKETS: u32 = 10;
/// Slow-call rate when only `slow` is given.
pub const DEFAULT_SLOW_RATE: f64 = 0.5;
/// Length of a ramp step when `ramp_step` is not given (5 seconds).
pub const DEFAULT_RAMP_STEP: Duration = Duration::from_secs(5);
/// Base delay before a retry when `retry_backoff` is not given (fail once, wait 20 ms).
pub const DEFAULT_RETRY_BACKOFF: Duration = Duration::from_millis(20);
/// Longest wait before a retry when `retry_backoff_max` is not given (or the base, if
/// longer): 10 retries with a 60 s base would otherwise wait 8.5 hours before the last.
pub const DEFAULT_RETRY_BACKOFF_MAX: Duration = Duration::from_secs(10);
/// Retries per first attempt when `retry_budget` is not given.
pub const DEFAULT_RETRY_BUDGET: f64 = 0.2;
/// Retries a second allowed whatever the budget when `retry_floor` is not given.
pub const DEFAULT_RETRY_FLOOR: u32 = 10;
/// Peers that must hold a breaker OPEN before the fleet opens it, when `fleet_quorum` is not given.
pub const DEFAULT_FLEET_QUORUM: u32 = 2;
/// Extra attempts a hedged call may start when `hedges` is not given.
pub const DEFAULT_HEDGES: u32 = 1;
/// The largest share of calls throttling refuses when `throttle_max` is not given.
pub const DEFAULT_THROTTLE_MAX: f64 = 0.9;
/// The history throttling counts when `throttle_window` is not given (2 minutes, as the
/// SRE book's clients keep).
pub const DEFAULT_THROTTLE_WINDOW: Duration = Duration::from_secs(120);

const fn key(name: &'static str, field: Field) -> ConfigKey {
    ConfigKey {
        name,
        field,
        default: None,
        needs: None,
    }
}

const NEEDS_RETRIES: Needs = Needs {
    what: "retries",
    hint: ", how many times a failed attempt is retried, like `retries = 2`",
};

const NEEDS_THROTTLE: Needs = Needs {
    what: "throttle",
    hint: ", the factor K of adaptive throttling, like `throttle = 2.0`",
};

/// Every configuration key, in the order the docs list them: one per [`Field`], in
/// [`Field::ALL`]'s order, so that `KEYS[field as usize]` is the key of `field`.
pub const KEYS: [ConfigKey; Field::ALL.len()] = [
    key("window", Field::Window),
    ConfigKey {
        default: Some(KeyDefault::Count(DEFAULT_BUCKETS)),
        needs: Some(Needs {
            what: TIME_WINDOW,
            hint: ", like `window = \"10s\"`; `window = N` (or no window) counts the last N calls",
        }),
        ..key("buckets", Field::Buckets)
    },
    key("min", Field::MinCalls),
    key("rate", Field::FailureRate),
    key("slow", Field::SlowThreshold),
    ConfigKey {
        default: Some(KeyDefault::Rate(DEFAULT_SLOW_RATE)),
        needs: Some(Needs {
            what: "slow",
            hint: ", the duration above which a call is slow, like `slow = \"800ms\"`",
        }),
        ..key("slow_rate", Field::SlowRate)
    },
    key("throttle", Field::Throttle),
    ConfigKey {
        default: Some(KeyDefault::Rate(DEFAULT_THROTTLE_MAX)),
        needs: Some(NEEDS_THROTTLE),
        ..key("throttle_max", Field::ThrottleMax)
    },
    ConfigKey {
        default: Some(KeyDefault::Span(DEFAULT_THROTTLE_WINDOW)),
        needs: Some(NEEDS_THROTTLE),
        ..key("throttle_window", Field::ThrottleWindow)
    },
    key("open", Field::OpenFor),
    key("probes", Field::Probes),
    key("successes", Field::Successes),
    ConfigKey {
        needs: Some(Needs {
            what: "open_max",
            hint: ", the longest OPEN, like `open_max = \"60s\"`",
        }),
        ..key("backoff", Field::BackoffFactor)
    },
    ConfigKey {
        needs: Some(Needs {
            what: "backoff",
            hint: ", the growth of OPEN after each failed trial, like `backoff = 2.0`",
        }),
        ..key("open_max", Field::BackoffMax)
    },
    key("ramp", Field::Ramp),
    ConfigKey {
        default: Some(KeyDefault::Span(DEFAULT_RAMP_STEP)),
        needs: Some(Needs {
            what: "ramp",
            hint: ", the percentages to ramp up through, like `ramp = [10, 30, 60, 100]`",
        }),
        ..key("ramp_step", Field::RampStep)
    },
    ConfigKey {
        needs: Some(Needs {
            what: "ramp",
            hint: ", the percentages to ramp up through, like `ramp = [10, 30, 60, 100]`",
        }),
        ..key("ramp_guard", Field::RampGuard)
    },
    key("timeout", Field::Timeout),
    key("retries", Field::Retries),
    ConfigKey {
        default: Some(KeyDefault::Span(DEFAULT_RETRY_BACKOFF)),
        needs: Some(NEEDS_RETRIES),
        ..key("retry_backoff", Field::RetryBackoff)
    },
    ConfigKey {
        default: Some(KeyDefault::Span(DEFAULT_RETRY_BACKOFF_MAX)),
        needs: Some(NEEDS_RETRIES),
        ..key("retry_backoff_max", Field::RetryBackoffMax)
    },
    ConfigKey {
        default: Some(KeyDefault::Rate(DEFAULT_RETRY_BUDGET)),
        needs: Some(NEEDS_RETRIES),
        ..key("retry_budget", Field::RetryBudget)
    },
    ConfigKey {
        default: Some(KeyDefault::Count(DEFAULT_RETRY_FLOOR)),
        needs: Some(NEEDS_RETRIES),
        ..key("retry_floor", Field::RetryFloor)
    },
    key("hedge", Field::Hedge),
    ConfigKey {
        default: Some(KeyDefault::Count(DEFAULT_HEDGES)),
        needs: Some(Needs {
            what: "hedge",
            hint: ", the delay before an extra attempt starts, like `hedge = \"50ms\"`",
        }),
        ..key("hedges", Field::Hedges)
    },
    key("max_concurrent", Field::MaxConcurrent),
    key("probe_timeout", Field::ProbeTimeout),
    key("shadow", Field::Shadow),
    key("fleet", Field::Fleet),
    ConfigKey {
        default: Some(KeyDefault::Count(DEFAULT_FLEET_QUORUM)),
        needs: Some(Needs {
            what: "fleet",
            hint: ", like `fleet = true`: the quorum counts the peers of a fleet",
        }),
        ..key("fleet_quorum", Field::FleetQuorum)
    },
    key("pushback_max", Field::PushbackMax),
    key("max_open_percent", Field::MaxOpenPercent),
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

    /// The key named `name`, if it is one.
    pub fn named(name: &str) -> Option<&'static ConfigKey> {
        KEYS.iter().find(|k| k.name == name)
    }
}

/// The names of [`KEYS`], in order.
pub const fn names() -> [&'static str; KEYS.len()] {
    let mut names = [""; KEYS.len()];
    let mut i = 0;
    while i < KEYS.len() {
        names[i] = KEYS[i].name;
        i += 1;
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_is_found_by_its_name_and_its_field() {
        for field in Field::ALL {
            let key = ConfigKey::of(field);
            assert_eq!(key.field, field);
            assert_eq!(ConfigKey::named(key.name), Some(key));
        }
        assert_eq!(names()[3], "rate");
        assert_eq!(ConfigKey::named("failure_rate"), None);
    }

    #[test]
    fn a_needed_key_is_a_key() {
        for key in KEYS {
            if let Some(needs) = key.needs {
                assert!(
                    needs.what == TIME_WINDOW || ConfigKey::named(needs.what).is_some(),
                    "{}",
                    key.name
                );
            }
        }
    }
}
