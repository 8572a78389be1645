//! `circuitbreaker_call_duration_seconds`: how long calls took, by how they ended, for the
//! breakers whose calls are timed.
//!
//! A breaker's calls are timed when its configuration needs their durations anyway (slow
//! calls, the ramp's latency guard), or, for every breaker, once a collector was asked to
//! with [`BreakerCollector::time_every_call`](super::BreakerCollector::time_every_call). The
//! histogram is filled by a call listener ([`Breaker::on_call`]) attached to each such breaker
//! as it joins the registry or at a scrape; a breaker that is not timed gets none, and so pays
//! nothing per call.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use prometheus_client::metrics::histogram::Histogram;

use crate::sync::process::Mutex;
use crate::{events::CallEnding, events::CallEvent, Breaker, Config};

/// The buckets' upper bounds, in seconds: 1 ms to 10 s, three a decade (1, 2.5, 5). A
/// service call answers in a few milliseconds when healthy and tens to hundreds when loaded;
/// timeouts sit at seconds. Below 1 ms is one bucket (a local cache, a rejection upstream),
/// and above 10 s is `+Inf`, which no client waits for.
///
/// ```
/// use breakerbox::metrics::CALL_DURATION_BUCKETS;
///
/// assert_eq!(CALL_DURATION_BUCKETS.first(), Some(&0.001));
/// assert_eq!(CALL_DURATION_BUCKETS.last(), Some(&10.0));
/// ```
pub const BUCKETS: [f64; 13] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// The `result` label of each histogram, in the order of [`Histograms`]: how a call that
/// ran ended. Rejected calls did not run, and have no duration.
const RESULTS: [&str; 4] = ["success", "failure", "ignored", "cancelled"];

/// Whether `config` times calls by itself: slow calls or the ramp's latency guard.
fn times_calls(config: &Config) -> bool {
    config.slow_calls().is_some() || config.ramp_latency_guard().is_some()
}

/// One breaker's call durations, by result.
pub(crate) struct Histograms([Histogram; 4]);

impl Histograms {
    fn new() -> Self {
        Self(std::array::from_fn(|_| Histogram::new(BUCKETS)))
    }

    fn observe(&self, event: &CallEvent) {
        let Some(duration) = event.duration else {
            return;
        };
        let at = match event.ending {
            CallEnding::Success => 0,
            CallEnding::Failure => 1,
            CallEnding::Ignored => 2,
            CallEnding::Cancelled => 3,
            CallEnding::Rejected(_) => return,
        };
        self.0[at].observe(duration.as_secs_f64());
    }

    /// Each result's label and histogram.
    pub(crate) fn by_result(&self) -> impl Iterator<Item = (&'static str, &Histogram)> {
        RESULTS.into_iter().zip(&self.0)
    }
}

/// A breaker's histograms, by its address, with a weak handle that tells a dropped breaker
/// from a new one at the same address (as the transitions' counts are kept).
type ByBreaker = HashMap<usize, (Weak<Breaker>, Arc<Histograms>)>;

/// The call durations of every timed breaker of one registry.
#[derive(Default)]
pub(crate) struct Durations {
    /// Set once a collector asked for every breaker's calls to be timed.
    every_call: AtomicBool,
    seen: Mutex<ByBreaker>,
}

/// The call durations of `registry`, timing every breaker that joins it from its first
/// collector on (as its configuration says, or all of them once asked).
pub(crate) fn durations(registry: &'static crate::registry::Registry) -> &'static Durations {
    /// One per registry, by its address: registries live as long as the process.
    static ALL: Mutex<Vec<(usize, &'static Durations)>> = Mutex::new(Vec::new());
    let address = registry as *const crate::registry::Registry as usize;
    let mut all = ALL.lock();
    if let Some(&(_, durations)) = all.iter().find(|(at, _)| *at == address) {
        return durations;
    }
    let durations: &'static Durations = Box::leak(Box::default());
    all.push((address, durations));
    drop(all);
    registry.watch(move |_, breaker| durations.attach(breaker));
    durations
}

impl Durations {
    /// Times every breaker's calls from now on: those of the registry, at the next scrape,
    /// and those that join it, at once.
    pub(crate) fn time_every_call(&self) {
        self.every_call.store(true, Ordering::Relaxed);
    }

    /// Starts a histogram for `breaker` if its calls are to be timed and it has none.
    pub(crate) fn attach(&self, breaker: &Arc<Breaker>) {
        let address = Arc::as_ptr(breaker) as usize;
        if let Some((known, _)) = self.seen.lock().get(&address) {
            if known.upgrade().is_some_and(|b| Arc::ptr_eq(&b, breaker)) {
                return;
            }
        }
        if !self.every_call.load(Ordering::Relaxed) && !times_calls(&breaker.config()) {
            return;
        }
        let mut seen = self.seen.lock();
        if let Some((known, _)) = seen.get(&address) {
            if known.upgrade().is_some_and(|b| Arc::ptr_eq(&b, breaker)) {
                return;
            }
        }
        let histograms = Arc::new(Histograms::new());
        let observed = histograms.clone();
        seen.insert(address, (Arc::downgrade(breaker), histograms));
        drop(seen);
        breaker.on_call(move |event| observed.observe(event));
    }

    /// The histograms of `breaker`, if its calls are timed.
    pub(crate) fn of(&self, breaker: &Arc<Breaker>) -> Option<Arc<Histograms>> {
        let seen = self.seen.lock();
        let (known, histograms) = seen.get(&(Arc::as_ptr(breaker) as usize))?;
        known
            .upgrade()
            .is_some_and(|b| Arc::ptr_eq(&b, breaker))
            .then(|| histograms.clone())
    }

    /// Drops the histograms of breakers that no longer exist.
    pub(crate) fn forget_dropped(&self) {
        let mut seen = self.seen.lock();
        seen.retain(|_, (breaker, _)| breaker.strong_count() > 0);
    }
}

impl fmt::Debug for Durations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Durations")
            .field("every_call", &self.every_call.load(Ordering::Relaxed))
            .field("breakers", &self.seen.lock().len())
            .finish()
    }
}
