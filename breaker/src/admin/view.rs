//! What the router answers with: each breaker as the operator reads it, read through the
//! registry and the breaker's snapshot.

use std::sync::Arc;

use serde::Serialize;

use super::events::{Record, What};
use crate::config::serialized::Value;
use crate::config::Field;
use crate::{events::Event, registry::Entry, registry::Registry, snapshot::Snapshot, Breaker};
use breakerbox_rules::ConfigKey;

/// One breaker as `GET /` lists it.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct BreakerView {
    pub(crate) name: String,
    pub(crate) key: Option<String>,
    #[serde(flatten)]
    pub(crate) snapshot: Snapshot,
    pub(crate) thresholds: Thresholds,
    pub(crate) open_left_ms: Option<u64>,
    /// For a breaker with adaptive throttling: the probability it refuses the next call
    /// ([`Breaker::shed_probability`]); `null` without throttling.
    pub(crate) shed_probability: Option<f64>,
    pub(crate) fleet: FleetStatus,
    pub(crate) last_transition: Option<Record>,
    pub(crate) recent: Vec<Record>,
}

/// The rates at or above which the breaker opens.
#[derive(Clone, Copy, Debug, Serialize)]
pub(crate) struct Thresholds {
    pub(crate) failure_rate: f64,
    pub(crate) slow_call_rate: Option<f64>,
}

/// The breaker's part in the fleet.
#[derive(Clone, Copy, Debug, Serialize)]
pub(crate) struct FleetStatus {
    /// Whether the breaker shares judgement with its peers (`fleet = true`).
    pub(crate) member: bool,
    /// Whether it is OPEN because its peers hold it OPEN.
    pub(crate) open_for_fleet: bool,
    /// Whether this instance's fleet lost its store; `null` with no fleet running.
    pub(crate) degraded: Option<bool>,
    /// Live peers holding the name OPEN; `null` with no fleet running.
    pub(crate) peers_open: Option<usize>,
}

/// One breaker (or keyed family) as `GET /{name}` shows it.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Detail {
    pub(crate) name: String,
    pub(crate) keyed: bool,
    pub(crate) config: Vec<Setting>,
    pub(crate) breakers: Vec<BreakerView>,
}

/// One configuration key, its value and where the value came from.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Setting {
    pub(crate) key: &'static str,
    pub(crate) value: Value,
    pub(crate) source: Source,
}

/// Where a configuration value came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Source {
    /// The `#[circuit_breaker]` attribute (a key it wrote, or its default).
    Attribute,
    /// Code that built the configuration (`Config::builder()`), defaults included.
    Builder,
    /// An override applied since ([`Registry::apply`]).
    Overrides,
}

impl BreakerView {
    pub(crate) fn of(registry: &Registry, name: &str, breaker: &Arc<Breaker>) -> Self {
        let snapshot = breaker.snapshot();
        let config = breaker.config();
        let recent = registry.journal().recent(breaker);
        let last_transition = recent
            .iter()
            .rev()
            .find(|r| matches!(r.what, What::Breaker(Event::StateTransition { .. })))
            .cloned();
        Self {
            name: name.to_owned(),
            key: breaker.key().map(str::to_owned),
            snapshot,
            thresholds: Thresholds {
                failure_rate: config.failure_rate(),
                slow_call_rate: config.slow_calls().map(|s| s.rate),
            },
            open_left_ms: breaker.open_left().map(|d| d.as_millis() as u64),
            shed_probability: config.throttling().map(|_| breaker.shed_probability()),
            fleet: fleet_status(registry, breaker, config.fleet()),
            last_transition,
            recent,
        }
    }

    pub(crate) fn of_entry(registry: &Registry, entry: &Entry) -> Self {
        Self::of(registry, entry.name(), entry.breaker())
    }
}

#[cfg(feature = "fleet")]
fn fleet_status(registry: &Registry, breaker: &Breaker, member: bool) -> FleetStatus {
    let fleet = crate::fleet::Fleet::of(registry);
    FleetStatus {
        member,
        open_for_fleet: breaker.in_fleet_open(),
        degraded: fleet.as_ref().map(|f| f.is_degraded()),
        peers_open: fleet.as_ref().map(|f| f.peers_open(breaker.name())),
    }
}

#[cfg(not(feature = "fleet"))]
fn fleet_status(_: &Registry, breaker: &Breaker, member: bool) -> FleetStatus {
    FleetStatus {
        member,
        open_for_fleet: breaker.in_fleet_open(),
        degraded: None,
        peers_open: None,
    }
}

impl Detail {
    /// The breaker or keyed family registered as `name`, if any.
    pub(crate) fn of(registry: &Registry, name: &str) -> Option<Self> {
        let (keyed, config, breakers) = match registry.get(name) {
            Some(breaker) => (
                false,
                breaker.config(),
                vec![BreakerView::of(registry, name, &breaker)],
            ),
            None => {
                let config = registry.family_config(name)?;
                let members = registry
                    .list()
                    .into_iter()
                    .filter(|e| e.name() == name)
                    .map(|e| BreakerView::of_entry(registry, &e))
                    .collect();
                (true, config, members)
            }
        };
        let overridden: Vec<Field> = registry.overridden_keys(name);
        let declared = registry.site(name).is_some();
        let config = config
            .values()
            .into_iter()
            .map(|(field, value)| Setting {
                key: ConfigKey::of(field).name,
                value,
                source: if overridden.contains(&field) {
                    Source::Overrides
                } else if declared {
                    Source::Attribute
                } else {
                    Source::Builder
                },
            })
            .collect();
        Some(Self {
            name: name.to_owned(),
            keyed,
            config,
            breakers,
        })
    }
}
