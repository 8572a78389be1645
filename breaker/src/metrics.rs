//! Every breaker of the [`registry()`](crate::registry()) as Prometheus metrics, on the
//! `prometheus-client` crate.
//!
//! [`register`] adds one collector to a `prometheus_client` registry. At each scrape it walks
//! the breaker registry, so breakers created later (by a `#[circuit_breaker]` function's first
//! call, or a new key of a keyed one) show up without another call. Every series has the
//! label `name`, and `key` for a breaker of a keyed family:
//!
//! | metric | type | value |
//! |---|---|---|
//! | `circuitbreaker_state` | gauge | the current state: 0 CLOSED, 1 OPEN, 2 HALF_OPEN, 3 FORCED_OPEN, 4 DISABLED |
//! | `circuitbreaker_calls_total{result}` | counter | calls since the breaker was created, by `result`: `success`, `failure`, `ignored`, `cancelled` (dropped without a result), `rejected` (one series per `reason`: `open`, `half_open_full`, `forced_open`, `throttled`, `bulkhead`, `fleet_open`, `shed`), `shadow_rejected` (for a shadow breaker: calls admitted that an enforcing one would have rejected) |
//! | `circuitbreaker_retries_total` | counter | for a breaker that retries: retries made by the call policy (attempts after the first) |
//! | `circuitbreaker_retry_budget_exhausted_total` | counter | for a breaker that retries: failed attempts returned without a retry because the retry budget was spent |
//! | `circuitbreaker_in_flight` | gauge | for a breaker with a bulkhead (`max_concurrent`): calls holding one of its slots |
//! | `circuitbreaker_failure_rate` | gauge | failures / completed calls in the window, 0 with none (the breaker acts on it once `min_calls` completed) |
//! | `circuitbreaker_slow_call_rate` | gauge | slow calls / calls in the window, once `min_calls` completed |
//! | `circuitbreaker_failure_rate_threshold` | gauge | the configured failure rate at or above which the breaker opens |
//! | `circuitbreaker_slow_call_rate_threshold` | gauge | for a breaker with slow calls: the configured slow-call rate at or above which it opens |
//! | `circuitbreaker_shed_probability` | gauge | for a breaker with adaptive throttling (`throttle`): the probability its CLOSED admission refuses the next call ([`Breaker::shed_probability`]), 0 while the downstream answers as well as it is asked, and outside CLOSED |
//! | `circuitbreaker_call_duration_seconds{result}` | histogram | for a breaker whose calls are timed: how long calls took, from admission to result, by `result`: `success`, `failure`, `ignored`, `cancelled` (rejected calls did not run); buckets [`CALL_DURATION_BUCKETS`], 1 ms to 10 s |
//! | `circuitbreaker_half_open_probes{probes}` | gauge | while a half-open trial runs ([`Snapshot::trial`](crate::snapshot::Snapshot::trial)): its probes `admitted`, `in_flight` and `succeeded` |
//! | `circuitbreaker_state_transitions_total{from_state,to_state,reason}` | counter | transitions since the breaker joined the registry (its creation, for a `#[circuit_breaker]` function's), whether or not a collector existed then, by why ([`TransitionReason::as_str`](crate::events::TransitionReason::as_str): `failure_rate`, `slow_call_rate`, `open_elapsed`, `probe_failed`, `probe_timed_out`, `trial_passed`, `ramp_completed`, `pushback`, `manual_open`, `fleet_open`, `forced`, `disabled`, `reset`, `reconfigured`) |
//! | `circuitbreaker_fleet_degraded{fleet_instance}` | gauge | with feature `fleet`, for a registry a fleet joined ([`FleetBuilder::join`](crate::fleet::FleetBuilder::join)): 1 while this instance's fleet cannot reach its store and its breakers judge alone, 0 otherwise; labelled with the fleet's instance id (not `instance`, which Prometheus sets to the scrape target) |
//! | `circuitbreaker_fleet_refused_total{fleet_instance,what}` | counter | with feature `fleet`, beside `circuitbreaker_fleet_degraded`: what this instance's fleet refused, by `what`: `messages_malformed`, `messages_forged` (a missing or wrong signature), `rows_skipped` (malformed rows, keys of the wrong type), `rows_forged` ([`Fleet::health`](crate::fleet::Fleet::health) has the same counts) |
//! | `circuitbreaker_fleet_messages_dropped_total{fleet_instance}` | counter | with feature `fleet`, beside `circuitbreaker_fleet_degraded`: messages this instance's fleet dropped unread because more than its backlog waited ([`FleetBuilder::backlog`](crate::fleet::FleetBuilder::backlog)), its view read anew from the store instead; near zero in a healthy fleet |
//! | `circuitbreaker_open_members` | gauge | for a keyed family (label `name` only): its members out of the pool (OPEN, HALF_OPEN, FORCED_OPEN), which `max_open_percent` caps |
//! | `circuitbreaker_trips_refused_total` | counter | for a keyed family (label `name` only): trips its `max_open_percent` refused, each a member held CLOSED ([`Event::TripRefused`]) |
//! | `circuitbreaker_keys_evicted_total{busy}` | counter | for a keyed family (label `name` only): keys evicted to make room for new ones, by whether calls were in flight on the evicted breaker (`busy="true"`: their results went to a breaker no longer seen) |
//!
//! A breaker's calls are timed when its configuration needs their durations anyway (slow
//! calls, the ramp's latency guard: they pay the clock already), or, for every breaker, once
//! a collector was made with [`BreakerCollector::time_every_call`]; a timed breaker's call
//! durations are counted from then on. The others pay nothing per call for the metrics, which
//! read the breakers only at a scrape.
//!
//! The state is one series per breaker holding the current state's code, not one series per
//! state, so no series is left at 1 after the breaker moved on. The rates are left out while
//! the breaker has not judged its window yet. The call counters are the breaker's lifetime
//! totals, [`CallTotals`]: every admitted call is counted once, by how it ended, so the four
//! results other than `rejected` add up to the calls admitted.
//!
//! ```
//! use std::sync::Arc;
//! use breakerbox::{registry, Breaker, Config};
//!
//! let b = registry().register(Arc::new(Breaker::new("docs::metrics", Config::default())));
//! b.try_acquire().unwrap().success();
//! b.force_open();
//! let _ = b.try_acquire();
//!
//! let mut prometheus = prometheus_client::registry::Registry::default();
//! breakerbox::metrics::register(&mut prometheus);
//! let mut text = String::new();
//! prometheus_client::encoding::text::encode(&mut text, &prometheus).unwrap();
//! assert!(text.contains("circuitbreaker_state{name=\"docs::metrics\"} 3\n"));
//! assert!(text.contains("circuitbreaker_calls_total{name=\"docs::metrics\",result=\"success\"} 1\n"));
//! assert!(text.contains(
//!     "circuitbreaker_calls_total{name=\"docs::metrics\",result=\"rejected\",reason=\"forced_open\"} 1\n"
//! ));
//! ```

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;

use crate::sync::process::Mutex;

mod durations;
#[cfg(feature = "fleet")]
mod fleet;

pub use durations::BUCKETS as CALL_DURATION_BUCKETS;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::{Registry, Unit};

use crate::{
    events::Event, events::TransitionReason, registry::Entry, snapshot::CallTotals,
    snapshot::Trial, Breaker, RejectReason, State,
};

/// Registers the collector of every breaker in [`registry()`](crate::registry()) with
/// `prometheus`. Call it once per `prometheus_client` registry.
///
/// ```
/// let mut prometheus = prometheus_client::registry::Registry::default();
/// breakerbox::metrics::register(&mut prometheus);
/// let mut text = String::new();
/// prometheus_client::encoding::text::encode(&mut text, &prometheus).unwrap();
/// assert!(text.contains("# TYPE circuitbreaker_state gauge\n"));
/// ```
pub fn register(prometheus: &mut Registry) {
    prometheus.register_collector(Box::new(BreakerCollector::new()));
}

/// The metrics of every breaker as Prometheus text exposition (OpenMetrics), for a
/// `/metrics` endpoint that serves nothing else.
///
/// ```
/// let text = breakerbox::metrics::text();
/// assert!(text.ends_with("# EOF\n"));
/// ```
pub fn text() -> String {
    text_of(BreakerCollector::new())
}

/// The metrics `collector` reads as Prometheus text exposition (OpenMetrics): [`text`] for a
/// collector of your own making, one that [times every
/// call](BreakerCollector::time_every_call) or reads a registry of your own. Timing starts
/// when the collector is made: keep making it the same way at each scrape.
///
/// ```
/// use breakerbox::metrics::{text_of, BreakerCollector};
///
/// let text = text_of(BreakerCollector::new().time_every_call());
/// assert!(text.contains("# TYPE circuitbreaker_call_duration_seconds histogram\n"));
/// ```
pub fn text_of(collector: BreakerCollector) -> String {
    let mut prometheus = Registry::default();
    prometheus.register_collector(Box::new(collector));
    let mut out = String::new();
    // Writing into a `String` cannot fail.
    let _ = prometheus_client::encoding::text::encode(&mut out, &prometheus);
    out
}

/// The collector [`register`] adds: reads the breakers at each scrape.
///
/// ```
/// let mut prometheus = prometheus_client::registry::Registry::default();
/// prometheus.register_collector(Box::new(breakerbox::metrics::BreakerCollector::new()));
/// ```
#[derive(Debug)]
pub struct BreakerCollector {
    registry: &'static crate::registry::Registry,
    transitions: Arc<Transitions>,
    durations: &'static durations::Durations,
}

impl BreakerCollector {
    /// A collector of every breaker in [`registry()`](crate::registry()). Transitions are
    /// counted from each breaker's joining the registry, before any collector.
    pub fn new() -> Self {
        Self::of(crate::registry())
    }

    /// A collector of every breaker in `registry`, a registry of your own. The collectors of
    /// one registry share its transition counts, kept from each breaker's joining it.
    ///
    /// ```
    /// use std::sync::{Arc, OnceLock};
    /// use breakerbox::metrics::BreakerCollector;
    /// use breakerbox::{Breaker, Config, registry::Registry};
    ///
    /// static OWN: OnceLock<Registry> = OnceLock::new();
    /// let own = OWN.get_or_init(Registry::default);
    /// own.register(Arc::new(Breaker::new("docs::own_metrics", Config::default())));
    ///
    /// let mut prometheus = prometheus_client::registry::Registry::default();
    /// prometheus.register_collector(Box::new(BreakerCollector::of(own)));
    /// let mut text = String::new();
    /// prometheus_client::encoding::text::encode(&mut text, &prometheus).unwrap();
    /// assert!(text.contains("circuitbreaker_state{name=\"docs::own_metrics\"} 0\n"));
    /// ```
    pub fn of(registry: &'static crate::registry::Registry) -> Self {
        let transitions = transitions(registry);
        let durations = durations::durations(registry);
        for entry in registry.list() {
            durations.attach(entry.breaker());
        }
        Self {
            registry,
            transitions,
            durations,
        }
    }

    /// Times the calls of every breaker of the registry, for
    /// `circuitbreaker_call_duration_seconds`: from now on for those it holds, and from their
    /// first call for those that join it. Without it, only breakers whose configuration times
    /// calls (slow calls, the ramp's latency guard) are. A timed call reads the clock at its
    /// start and end and leaves the lock-free fast paths (a call listener's cost, in
    /// `benches/README.md`), and each timed breaker keeps four histograms of 14 buckets (a
    /// keyed family's members too).
    ///
    /// ```
    /// use std::sync::{Arc, OnceLock};
    /// use breakerbox::metrics::BreakerCollector;
    /// use breakerbox::{Breaker, Config, registry::Registry};
    ///
    /// static OWN: OnceLock<Registry> = OnceLock::new();
    /// let own = OWN.get_or_init(Registry::default);
    /// let b = own.register(Arc::new(Breaker::new("docs::timed", Config::default())));
    ///
    /// let mut prometheus = prometheus_client::registry::Registry::default();
    /// prometheus.register_collector(Box::new(BreakerCollector::of(own).time_every_call()));
    /// b.try_acquire().unwrap().success();
    /// let mut text = String::new();
    /// prometheus_client::encoding::text::encode(&mut text, &prometheus).unwrap();
    /// assert!(text.contains(
    ///     "circuitbreaker_call_duration_seconds_count{name=\"docs::timed\",result=\"success\"} 1\n"
    /// ));
    /// ```
    pub fn time_every_call(self) -> Self {
        self.durations.time_every_call();
        for entry in self.registry.list() {
            self.durations.attach(entry.breaker());
        }
        self
    }
}

impl Default for BreakerCollector {
    fn default() -> Self {
        Self::new()
    }
}

impl Collector for BreakerCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), fmt::Error> {
        let entries = self.registry.list();
        let series: Vec<Series> = entries
            .iter()
            .map(|entry| {
                self.durations.attach(entry.breaker());
                Series::read(entry, &self.transitions, self.durations)
            })
            .collect();
        self.durations.forget_dropped();

        let help = "Current state: 0 closed, 1 open, 2 half-open, 3 forced open, 4 disabled.";
        let mut family =
            encoder.encode_descriptor("circuitbreaker_state", help, None, MetricType::Gauge)?;
        for s in &series {
            let code = s.state.code() as i64;
            ConstGauge::new(code).encode(family.encode_family(&s.labels(&[]))?)?;
        }

        let help = "Calls since the breaker was created, by how they ended.";
        let mut family =
            encoder.encode_descriptor("circuitbreaker_calls", help, None, MetricType::Counter)?;
        for s in &series {
            let t = s.totals;
            for (result, count) in [
                ("success", t.success),
                ("failure", t.failure),
                ("ignored", t.ignored),
                ("cancelled", t.cancelled),
            ] {
                let labels = s.labels(&[("result", result)]);
                ConstCounter::new(count).encode(family.encode_family(&labels)?)?;
            }
            if s.shadow || t.shadow_rejected != 0 {
                let labels = s.labels(&[("result", "shadow_rejected")]);
                ConstCounter::new(t.shadow_rejected).encode(family.encode_family(&labels)?)?;
            }
            let by = t.rejected_by;
            for &reason in RejectReason::ALL {
                let labels = s.labels(&[("result", "rejected"), ("reason", reason.as_str())]);
                ConstCounter::new(by.of(reason)).encode(family.encode_family(&labels)?)?;
            }
        }

        let help = "Retries the call policy made: attempts after the first.";
        let mut family =
            encoder.encode_descriptor("circuitbreaker_retries", help, None, MetricType::Counter)?;
        for s in series.iter().filter(|s| s.retries) {
            ConstCounter::new(s.totals.retries).encode(family.encode_family(&s.labels(&[]))?)?;
        }

        let help = "Failed attempts returned without a retry because the retry budget was spent.";
        let mut family = encoder.encode_descriptor(
            "circuitbreaker_retry_budget_exhausted",
            help,
            None,
            MetricType::Counter,
        )?;
        for s in series.iter().filter(|s| s.retries) {
            let count = s.totals.retry_budget_exhausted;
            ConstCounter::new(count).encode(family.encode_family(&s.labels(&[]))?)?;
        }

        let help = "Calls holding a slot of the breaker's bulkhead (max_concurrent).";
        let mut family =
            encoder.encode_descriptor("circuitbreaker_in_flight", help, None, MetricType::Gauge)?;
        for s in &series {
            if let Some(in_flight) = s.in_flight {
                ConstGauge::new(i64::from(in_flight))
                    .encode(family.encode_family(&s.labels(&[]))?)?;
            }
        }

        let help = "Failures over completed calls in the window, 0 with none; \
                    the breaker acts on it once min_calls completed.";
        let mut family = encoder.encode_descriptor(
            "circuitbreaker_failure_rate",
            help,
            None,
            MetricType::Gauge,
        )?;
        for s in &series {
            ConstGauge::new(s.failure_rate).encode(family.encode_family(&s.labels(&[]))?)?;
        }

        let help = "Slow calls over completed calls in the window, once min_calls completed.";
        let mut family = encoder.encode_descriptor(
            "circuitbreaker_slow_call_rate",
            help,
            None,
            MetricType::Gauge,
        )?;
        for s in &series {
            if let Some(rate) = s.slow_call_rate {
                ConstGauge::new(rate).encode(family.encode_family(&s.labels(&[]))?)?;
            }
        }

        let help = "The failure rate at or above which the breaker opens (failure_rate).";
        let mut family = encoder.encode_descriptor(
            "circuitbreaker_failure_rate_threshold",
            help,
            None,
            MetricType::Gauge,
        )?;
        for s in &series {
            ConstGauge::new(s.thresholds.0).encode(family.encode_family(&s.labels(&[]))?)?;
        }

        let help = "The slow-call rate at or above which the breaker opens, with slow calls on.";
        let mut family = encoder.encode_descriptor(
            "circuitbreaker_slow_call_rate_threshold",
            help,
            None,
            MetricType::Gauge,
        )?;
        for s in &series {
            if let Some(rate) = s.thresholds.1 {
                ConstGauge::new(rate).encode(family.encode_family(&s.labels(&[]))?)?;
            }
        }

        let help = "The probability that adaptive throttling refuses the next call in CLOSED; \
                    for breakers with throttle.";
        let mut family = encoder.encode_descriptor(
            "circuitbreaker_shed_probability",
            help,
            None,
            MetricType::Gauge,
        )?;
        for s in &series {
            if let Some(probability) = s.shed_probability {
                ConstGauge::new(probability).encode(family.encode_family(&s.labels(&[]))?)?;
            }
        }

        let help = "How long calls took, from admission to result, by how they ended; \
                    for breakers whose calls are timed.";
        let mut family = encoder.encode_descriptor(
            "circuitbreaker_call_duration",
            help,
            Some(&Unit::Seconds),
            MetricType::Histogram,
        )?;
        for s in &series {
            if let Some(histograms) = &s.durations {
                for (result, histogram) in histograms.by_result() {
                    let labels = s.labels(&[("result", result)]);
                    histogram.encode(family.encode_family(&labels)?)?;
                }
            }
        }

        let help = "Probes of the half-open trial under way: admitted, in flight, succeeded.";
        let mut family = encoder.encode_descriptor(
            "circuitbreaker_half_open_probes",
            help,
            None,
            MetricType::Gauge,
        )?;
        for (s, t) in series.iter().filter_map(|s| Some((s, s.trial?))) {
            for (probes, count) in [
                ("admitted", t.admitted),
                ("in_flight", t.in_flight),
                ("succeeded", t.succeeded),
            ] {
                let labels = s.labels(&[("probes", probes)]);
                ConstGauge::new(i64::from(count)).encode(family.encode_family(&labels)?)?;
            }
        }

        let help = "State transitions, by the state left, the state entered and why.";
        let mut family = encoder.encode_descriptor(
            "circuitbreaker_state_transitions",
            help,
            None,
            MetricType::Counter,
        )?;
        for s in &series {
            for (&(from, to, reason), &count) in &s.transitions {
                let (from, to) = (State::from_code(from), State::from_code(to));
                let labels = s.labels(&[
                    ("from_state", from.as_str()),
                    ("to_state", to.as_str()),
                    ("reason", reason.as_str()),
                ]);
                ConstCounter::new(count).encode(family.encode_family(&labels)?)?;
            }
        }

        let help = "Keys a full keyed family evicted for new ones, by whether calls were in \
                    flight on the evicted breaker.";
        let mut family = encoder.encode_descriptor(
            "circuitbreaker_keys_evicted",
            help,
            None,
            MetricType::Counter,
        )?;
        for (name, keyed) in self.registry.families() {
            let (idle, busy) = keyed.evictions();
            for (label, count) in [("false", idle), ("true", busy)] {
                let labels = [("name", &*name), ("busy", label)];
                ConstCounter::new(count).encode(family.encode_family(&labels)?)?;
            }
        }
        self.encode_open_cap(&mut encoder)?;
        #[cfg(feature = "fleet")]
        self.encode_fleet(&mut encoder)?;
        Ok(())
    }
}

impl BreakerCollector {
    /// `circuitbreaker_open_members` and `circuitbreaker_trips_refused_total`: each keyed
    /// family's members out of the pool, and the trips its `max_open_percent` refused.
    fn encode_open_cap(&self, encoder: &mut DescriptorEncoder<'_>) -> Result<(), fmt::Error> {
        let families = self.registry.families();
        let help = "A keyed family's members out of the pool (OPEN, HALF_OPEN, FORCED_OPEN), \
                    which max_open_percent caps.";
        let mut family = encoder.encode_descriptor(
            "circuitbreaker_open_members",
            help,
            None,
            MetricType::Gauge,
        )?;
        for (name, keyed) in &families {
            let open = i64::from(keyed.open_count().open());
            ConstGauge::new(open).encode(family.encode_family(&[("name", &**name)])?)?;
        }
        let help = "Trips a keyed family's max_open_percent refused: members held CLOSED.";
        let mut family = encoder.encode_descriptor(
            "circuitbreaker_trips_refused",
            help,
            None,
            MetricType::Counter,
        )?;
        for (name, keyed) in &families {
            let refused = keyed.open_count().refused();
            ConstCounter::new(refused).encode(family.encode_family(&[("name", &**name)])?)?;
        }
        Ok(())
    }
}

/// What one scrape reads of one breaker.
struct Series {
    name: String,
    key: Option<String>,
    state: State,
    totals: CallTotals,
    /// Measured from the first call, so that a quiet breaker has its series.
    failure_rate: f64,
    slow_call_rate: Option<f64>,
    /// The configuration's failure rate and slow-call rate.
    thresholds: (f64, Option<f64>),
    /// For a breaker with adaptive throttling: the probability it refuses the next call.
    shed_probability: Option<f64>,
    trial: Option<Trial>,
    /// Calls holding a bulkhead slot, for a breaker with a bulkhead.
    in_flight: Option<u32>,
    /// Whether the breaker retries, or has: its retry series are exported.
    retries: bool,
    /// Whether the breaker watches only, or has: its `shadow_rejected` series is exported.
    shadow: bool,
    transitions: BTreeMap<TransitionKey, u64>,
    /// Call durations by result, for a breaker whose calls are timed.
    durations: Option<Arc<durations::Histograms>>,
}

impl Series {
    fn read(entry: &Entry, transitions: &Transitions, durations: &durations::Durations) -> Self {
        let breaker = entry.breaker();
        let s = breaker.snapshot();
        let config = breaker.config();
        let in_flight = config.max_concurrent().map(|_| breaker.in_flight());
        let retries = config.policy().retries() > 0
            || s.totals.retries != 0
            || s.totals.retry_budget_exhausted != 0;
        Self {
            name: entry.name().to_owned(),
            key: entry.key().map(str::to_owned),
            state: s.state,
            totals: s.totals,
            failure_rate: s
                .failure_rate
                .unwrap_or_else(|| f64::from(s.failures) / f64::from(s.calls.max(1))),
            slow_call_rate: s.slow_call_rate,
            thresholds: (config.failure_rate(), config.slow_calls().map(|c| c.rate)),
            shed_probability: config.throttling().map(|_| breaker.shed_probability()),
            trial: s.trial,
            in_flight,
            retries,
            shadow: config.shadow(),
            transitions: transitions.counts(entry.breaker()),
            durations: durations.of(entry.breaker()),
        }
    }

    fn labels<'a>(&'a self, extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
        let mut labels = vec![("name", self.name.as_str())];
        if let Some(key) = &self.key {
            labels.push(("key", key.as_str()));
        }
        labels.extend_from_slice(extra);
        labels
    }
}

/// A transition by the codes of the states left and entered, and its reason.
type TransitionKey = (u64, u64, TransitionReason);

/// Transition counts of every breaker of a registry, by the breaker's address: a part the
/// registry is born with, it counts each transition as the breaker reports it, and take the counts out when
/// the breaker is dropped (an evicted key). A quiet breaker has no entry.
#[derive(Debug, Default)]
pub(crate) struct Transitions {
    seen: Mutex<HashMap<usize, BTreeMap<TransitionKey, u64>>>,
}

/// The transition counts of `registry`, a part the registry is born with.
fn transitions(registry: &'static crate::registry::Registry) -> Arc<Transitions> {
    registry.part()
}

impl crate::registry::Watch for Transitions {
    fn happened(&self, breaker: &crate::Breaker, event: &Event) {
        self.record(breaker.address(), event);
    }

    fn left(&self, address: usize) {
        self.forget(address);
    }
}

impl Transitions {
    /// Counts `event` of the breaker at `address`, if it is a transition.
    pub(crate) fn record(&self, address: usize, event: &Event) {
        if let Event::StateTransition {
            from, to, reason, ..
        } = *event
        {
            let mut seen = self.seen.lock();
            let counts = seen.entry(address).or_default();
            *counts.entry((from.code(), to.code(), reason)).or_insert(0) += 1;
        }
    }

    /// Forgets the breaker at `address`, being dropped.
    pub(crate) fn forget(&self, address: usize) {
        let gone = self.seen.lock().remove(&address);
        drop(gone);
    }

    fn counts(&self, breaker: &Breaker) -> BTreeMap<TransitionKey, u64> {
        let seen = self.seen.lock();
        seen.get(&breaker.address()).cloned().unwrap_or_default()
    }
}
