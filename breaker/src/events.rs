//! What a breaker tells: an [`Event`] to the listeners of
//! [`Breaker::on_event`](crate::Breaker::on_event) (a state transition and its
//! [`TransitionReason`], a ramp step), and a [`CallEvent`] with its [`CallEnding`] to those of
//! [`Breaker::on_call`](crate::Breaker::on_call), for every call.

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use crate::sync::process::RwLock;

pub use crate::call_events::{CallEnding, CallEvent};
pub use crate::transition::TransitionReason;
use crate::State;

/// Something that happened to a breaker.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use breakerbox::{Breaker, Config, events::Event, State};
///
/// let b = Breaker::new("libraryd", Config::default());
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let log = seen.clone();
/// b.on_event(move |e: &Event| {
///     if let Event::StateTransition { from, to, .. } = e {
///         log.lock().unwrap().push((*from, *to));
///     }
/// });
/// b.force_open();
/// assert_eq!(*seen.lock().unwrap(), [(State::Closed, State::ForcedOpen)]);
/// ```
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(tag = "type", rename_all = "snake_case")
)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// The breaker moved from one state to another.
    StateTransition {
        /// State before.
        from: State,
        /// State after.
        to: State,
        /// Why: the rate that tripped the window, the probe that failed, the operator's
        /// action, the downstream's pushback...
        reason: TransitionReason,
        /// Whether the breaker only watches ([`Config::shadow`](crate::Config::shadow)): it
        /// moved as an enforcing breaker would have, and still admits every call.
        shadow: bool,
    },
    /// The half-open ramp-up entered a step: its first when `successes` probes succeeded,
    /// then each step it climbs, one per step's length at most. After the last step comes
    /// CLOSED, reported as a [`StateTransition`](Event::StateTransition). A step the latency
    /// guard holds for another step's length is no new step and sends no event (with the
    /// `tracing` feature it is logged, as a warning with both p99s);
    /// [`Snapshot::admit_percent`](crate::snapshot::Snapshot::admit_percent) keeps the step's percentage.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use std::time::Duration;
    /// use breakerbox::clock::ManualClock;
    /// use breakerbox::{Breaker, Config, events::Event};
    ///
    /// let config = Config::builder()
    ///     .count_window(2)
    ///     .min_calls(2)
    ///     .probes(1)
    ///     .ramp_up(&[25, 100], Duration::from_secs(10))
    ///     .build()?;
    /// let clock = ManualClock::new();
    /// let b = Breaker::with_clock("libraryd", config, clock.clone());
    /// let steps = Arc::new(Mutex::new(Vec::new()));
    /// let log = steps.clone();
    /// b.on_event(move |e: &Event| {
    ///     if let Event::RampStep { percent, .. } = e {
    ///         log.lock().unwrap().push(*percent);
    ///     }
    /// });
    /// b.try_acquire().unwrap().failure();
    /// b.try_acquire().unwrap().failure();
    /// clock.advance(Duration::from_secs(5));
    /// b.try_acquire().unwrap().success(); // the probe: the ramp starts
    /// clock.advance(Duration::from_secs(10));
    /// let _ = b.try_acquire(); // the next call after the step's length climbs
    /// assert_eq!(*steps.lock().unwrap(), [25, 100]);
    /// # Ok::<(), breakerbox::config::ConfigError>(())
    /// ```
    RampStep {
        /// The step's index in the ramp's percentages, from 0.
        step: u32,
        /// The share of calls the step admits, in percent.
        percent: u32,
        /// Whether the breaker only watches: the step would admit this share, and every call
        /// is admitted.
        shadow: bool,
    },
    /// A member of a keyed family would have tripped, OPEN by its own judgement, but its
    /// family's cap (`max_open_percent`) was reached: it stays CLOSED and keeps its window,
    /// so its next failure asks again. See `docs/states.md`, "A cap on a family's OPEN
    /// members"; counted by `circuitbreaker_trips_refused_total`.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use breakerbox::events::{Event, TransitionReason};
    /// use breakerbox::{circuit_breaker, registry, Classify, Outcome, Rejected, State};
    ///
    /// #[derive(Debug)]
    /// struct Down;
    /// impl Classify for Down {
    ///     fn classify(&self) -> Outcome { Outcome::Failure }
    /// }
    /// impl From<Rejected> for Down {
    ///     fn from(_: Rejected) -> Self { Down }
    /// }
    ///
    /// #[circuit_breaker(name = "docs::replicas", key = addr, window = 2, min = 2, max_open_percent = 50)]
    /// async fn ping(addr: &str) -> Result<(), Down> {
    ///     let _ = addr;
    ///     Err(Down) // the caller's own network is down
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let pool = ["10.0.0.1", "10.0.0.2"];
    /// for addr in pool {
    ///     let _ = ping(addr).await;
    /// }
    /// let held = registry().get_keyed("docs::replicas", "10.0.0.2").unwrap();
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let log = seen.clone();
    /// held.on_event(move |e: &Event| log.lock().unwrap().push(*e));
    /// for addr in pool {
    ///     let _ = ping(addr).await;
    /// }
    /// // ⌊2 × 50 / 100⌋ = 1 member may be OPEN: the second trip is refused.
    /// let state = |addr| registry().get_keyed("docs::replicas", addr).unwrap().state();
    /// assert_eq!((state("10.0.0.1"), state("10.0.0.2")), (State::Open, State::Closed));
    /// let refused = Event::TripRefused {
    ///     reason: TransitionReason::FailureRate,
    ///     open: 1,
    ///     limit: 1,
    ///     shadow: false,
    /// };
    /// assert_eq!(*seen.lock().unwrap(), [refused]);
    /// # }
    /// ```
    TripRefused {
        /// Why the member would have opened: its window's failure rate or slow-call rate, or
        /// a new configuration's threshold ([`TransitionReason::Reconfigured`]).
        reason: TransitionReason,
        /// The family's members out of the pool (OPEN, HALF_OPEN, FORCED_OPEN) when it was
        /// refused.
        open: u32,
        /// The most the cap allows: ⌊members × `max_open_percent` / 100⌋, at least one.
        limit: u32,
        /// Whether the member only watches: an enforcing breaker would have had this trip
        /// refused.
        shadow: bool,
    },
}

type Listener<E> = Arc<dyn Fn(&E) + Send + Sync>;

/// The listeners of one breaker to events of type `E` ([`Event`]s, or each call's
/// [`CallEvent`](crate::events::CallEvent)). Delivery clones an `Arc` of the list, so listeners run
/// with no lock held and may call back into the breaker or add listeners.
pub(crate) struct Listeners<E = Event> {
    list: RwLock<Arc<[Listener<E>]>>,
}

impl<E> Default for Listeners<E> {
    fn default() -> Self {
        Self {
            list: RwLock::new(Vec::new().into()),
        }
    }
}

impl<E> Listeners<E> {
    pub(crate) fn add(&self, listener: Listener<E>) {
        let mut list = self.list.write();
        let mut grown: Vec<Listener<E>> = list.iter().cloned().collect();
        grown.push(listener);
        *list = grown.into();
    }

    /// Whether no listener was added.
    pub(crate) fn is_empty(&self) -> bool {
        self.list.read().is_empty()
    }

    /// Calls every listener; a panicking listener is contained and the others still run.
    pub(crate) fn emit(&self, event: &E) {
        let list = self.list.read().clone();
        for listener in list.iter() {
            let _ = catch_unwind(AssertUnwindSafe(|| listener(event)));
        }
    }
}

impl<E> fmt::Debug for Listeners<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.list.read().len();
        f.debug_struct("Listeners").field("count", &n).finish()
    }
}
