//! The configuration the recorded breaker runs, and a candidate as a change to it.
//!
//! The grid tunes the trip rule and the recovery (window, `min`, `rate`, slow calls, `open`,
//! `probes`, backoff, ramp); every other key of the running configuration (timeout, retries,
//! bulkhead, pushback, fleet, shadow, a keyed family's `max_open_percent`) is kept as it is,
//! since a replay does not depend on it. A replay is one breaker: a keyed member's recording
//! is replayed without its family's cap, which it cannot count (see `breakerbox::replay`).

use std::fmt;

use breakerbox::recording::config_key_values;
use breakerbox::{config::ConfigError, Config};
use breakerbox_rules::KEYS;

use super::search::Spec;

/// `spec`'s keys on top of the keys of `current` that the grid does not tune.
///
/// ```
/// use std::time::Duration;
/// use breakerbox::recording::parse_config_keys;
/// use breakerbox_tune::current::apply;
/// use breakerbox_tune::search::Spec;
///
/// let current = parse_config_keys(r#"rate = 0.4, open = "3s", timeout = "150ms", retries = 1"#)?;
/// let proposed = apply(&Spec { rate: 0.65, ..Spec::DEFAULT }, &current)?;
/// assert_eq!(proposed.failure_rate(), 0.65);
/// assert_eq!(proposed.open_for(), Duration::from_secs(5));
/// assert_eq!(proposed.policy(), current.policy());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// The [`ConfigError`] of a rule between a tuned key and a kept one that the pair breaks.
pub fn apply(spec: &Spec, current: &Config) -> Result<Config, ConfigError> {
    let tuned = spec.config();
    let policy = current.policy();
    let mut b = tuned.to_builder();
    if let (Some(_), Some(guard)) = (tuned.ramp_up(), current.ramp_latency_guard()) {
        b = b.ramp_latency_guard(guard);
    }
    if let Some(timeout) = policy.timeout() {
        b = b.timeout(timeout);
    }
    if policy.retries() > 0 {
        b = b
            .retries(policy.retries())
            .retry_backoff(policy.retry_backoff())
            .retry_budget(policy.retry_budget())
            .retry_floor(policy.retry_floor());
        // The longest wait is kept when it was set, not when it follows the base.
        let follows = Config::builder()
            .retries(policy.retries())
            .retry_backoff(policy.retry_backoff())
            .build()
            .map(|c| c.policy().retry_backoff_max());
        if follows != Ok(policy.retry_backoff_max()) {
            b = b.retry_backoff_max(policy.retry_backoff_max());
        }
    }
    if let Some(calls) = current.max_concurrent() {
        b = b.max_concurrent(calls);
    }
    // A probe timeout is kept when it was set, not when it follows the timeout.
    if current.probe_timeout()
        != policy
            .timeout()
            .unwrap_or(Config::default().probe_timeout())
    {
        b = b.probe_timeout(current.probe_timeout());
    }
    b = b.shadow(current.shadow()).fleet(current.fleet());
    if current.fleet() {
        b = b.fleet_quorum(current.fleet_quorum());
    }
    if let Some(percent) = current.max_open_percent() {
        b = b.max_open_percent(percent);
    }
    b.pushback_max(current.pushback_max()).build()
}

/// One key that differs between two configurations, with its values as the attribute
/// writes them; `None` where a configuration does not write the key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The key's name.
    pub key: &'static str,
    /// Its value in the current configuration.
    pub from: Option<String>,
    /// Its value in the proposed one.
    pub to: Option<String>,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.from, &self.to) {
            (Some(from), Some(to)) => write!(f, "{}: {from} -> {to}", self.key),
            (None, Some(to)) => write!(f, "{}: added, {to}", self.key),
            (Some(from), None) => write!(f, "{}: removed (was {from})", self.key),
            (None, None) => write!(f, "{}: unchanged", self.key),
        }
    }
}

/// What changes from `current` to `proposed`, key by key, in the order the docs list the
/// keys.
///
/// ```
/// use breakerbox::recording::parse_config_keys;
/// use breakerbox_tune::current::changes;
///
/// let current = parse_config_keys(r#"rate = 0.4, open = "3s""#)?;
/// let proposed = parse_config_keys(r#"window = 50, min = 25, rate = 0.4, slow = "1s""#)?;
/// let lines: Vec<String> = changes(&current, &proposed).iter().map(|c| c.to_string()).collect();
/// assert_eq!(
///     lines,
///     ["window: 20 -> 50", "min: 10 -> 25", "slow: added, \"1s\"", "slow_rate: added, 0.5",
///      "open: \"3s\" -> \"5s\""]
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn changes(current: &Config, proposed: &Config) -> Vec<Change> {
    let (from, to) = (config_key_values(current), config_key_values(proposed));
    let value = |keys: &[(&str, String)], key: &str| {
        keys.iter().find(|(k, _)| *k == key).map(|(_, v)| v.clone())
    };
    KEYS.iter()
        .map(|k| Change {
            key: k.name,
            from: value(&from, k.name),
            to: value(&to, k.name),
        })
        .filter(|c| c.from != c.to)
        .collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use breakerbox::recording::parse_config_keys;

    use super::*;
    use crate::search::WindowSpec;

    #[test]
    fn a_candidate_keeps_every_key_the_grid_does_not_tune() {
        let current = parse_config_keys(
            "rate = 0.4, slow = \"1s\", ramp = [50, 100], ramp_guard = 3.0, \
             timeout = \"150ms\", retries = 2, retry_backoff_max = \"1s\", \
             max_concurrent = 64, probe_timeout = \"2s\", fleet = true, fleet_quorum = 3, \
             pushback_max = \"30s\", max_open_percent = 50",
        )
        .unwrap();
        let spec = Spec {
            window: WindowSpec::Count(50),
            min: 25,
            ramp: true,
            ..Spec::DEFAULT
        };
        let proposed = apply(&spec, &current).unwrap();
        assert_eq!(
            breakerbox::recording::config_keys(&proposed),
            "window = 50, min = 25, rate = 0.5, open = \"5s\", probes = 3, \
             ramp = [25, 50, 100], ramp_step = \"5s\", ramp_guard = 3.0, timeout = \"150ms\", \
             retries = 2, retry_backoff_max = \"1s\", max_concurrent = 64, \
             probe_timeout = \"2s\", fleet = true, fleet_quorum = 3, pushback_max = \"30s\", \
             max_open_percent = 50"
        );
        assert_eq!(proposed.probe_timeout(), Duration::from_secs(2));
        let lines: Vec<String> = changes(&current, &proposed)
            .iter()
            .map(Change::to_string)
            .collect();
        assert_eq!(
            lines,
            [
                "window: 20 -> 50",
                "min: 10 -> 25",
                "rate: 0.4 -> 0.5",
                "slow: removed (was \"1s\")",
                "slow_rate: removed (was 0.5)",
                "ramp: [50, 100] -> [25, 50, 100]",
            ]
        );
    }
}
