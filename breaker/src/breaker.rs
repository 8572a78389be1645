//! The `Breaker`: admission, recording and operator actions over the state machine.
//!
//! The machine and the words published from it for the lock-free paths live in
//! [`Shared`](shared::Shared); this file decides, call by call, which path admission takes,
//! and `complete.rs` which path a result takes. `docs/design.md` shows the whole flow.

pub(crate) mod note;
mod observe;
#[cfg(feature = "recording")]
mod recorder;

use std::fmt;
use std::future::IntoFuture;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::cap::Refusal;
use crate::clock::{Clock, ClockInstant, ClockSource, LazyNow};
use crate::config::Config;
use crate::events::{Event, Listeners};
use crate::machine::{Events, Transition};
use crate::permit::OwnedPermit;
use crate::recovery::News;
use crate::rejected::Name;
use crate::{
    events::TransitionReason, snapshot::Snapshot, Classify, Outcome, Permit, Rejected, State,
};

use crate::engine::Shared;

/// A circuit breaker guarding one downstream.
///
/// ```
/// use std::time::Duration;
/// use breakerbox::{Breaker, Config, State};
/// use breakerbox::clock::ManualClock;
///
/// let config = Config::builder().count_window(4).min_calls(4).probes(1).build()?;
/// let clock = ManualClock::new();
/// let b = Breaker::with_clock("libraryd", config, clock.clone());
///
/// for _ in 0..2 {
///     b.try_acquire().unwrap().success();
///     b.try_acquire().unwrap().failure();
/// }
/// assert_eq!(b.state(), State::Open); // 2 of 4 failed: 0.5 >= 0.5
///
/// let rejected = b.try_acquire().unwrap_err();
/// assert_eq!(rejected.retry_after(), Some(Duration::from_secs(5)));
///
/// clock.advance(Duration::from_secs(5));
/// b.try_acquire().unwrap().success(); // the first call after 5s is a probe
/// assert_eq!(b.state(), State::Closed);
/// # Ok::<(), breakerbox::config::ConfigError>(())
/// ```
///
/// # Costs
///
/// Median time per call on a virtual machine with 2 cores, idle, and over three runs while
/// it was shared with other work (`benches/README.md` has the runs, and the peers measured
/// alike):
///
/// | path | idle | shared |
/// |---|---|---|
/// | CLOSED, success | 1.1 ns | 1.7 to 2.5 ns |
/// | CLOSED, one failure in ten | 5.9 ns | 4.9 to 6.4 ns |
/// | OPEN, rejection | 5.8 ns | 12 ns |
/// | CLOSED, two threads on one breaker | 6.1 ns | 5.4 to 7.0 ns |
/// | CLOSED, time window | 23.5 ns | 23 to 38 ns |
///
/// No call allocates. Admission in CLOSED and OPEN takes no lock, nor does a result into a
/// count window of up to 20 calls while slow calls and the latency guard are off. A result
/// into another window, the result that opens the breaker, the first call after OPEN ends
/// and every call in HALF_OPEN take the breaker's lock, for as long as the state machine
/// needs; listeners and logs run after it is released. How the paths are built is in
/// `docs/design.md`.
pub struct Breaker {
    shared: Shared,
}

/// The breaker's own fields, read on slow paths only (kept in [`Shared`], where they space the
/// words the lock-free paths write).
pub(crate) struct Identity {
    /// For a breaker of a keyed family, named `family[key]`: where the key's text starts in
    /// the name; 0 for other breakers. (In the 8 bytes `rejected_name`'s alignment leaves.)
    key_at: usize,
    /// The name, as rejections carry it: inline when short, else shared. The breaker's
    /// name is read from it, so that the registry's hooks fit in the bytes a second copy took.
    rejected_name: Name,
    /// What few breakers use, made on first use: one pointer in every breaker (a keyed
    /// family's members among them), which most never fill.
    // std's, not the model checker's: made with every breaker, read by no loom model.
    rare: std::sync::OnceLock<Box<Rare>>,
    /// The hooks of the registry the breaker joined, told of its transitions (metrics count
    /// them, the admin journal keeps them) and of its drop: one pointer, no listener.
    registry: std::sync::OnceLock<Arc<crate::registry::Hooks>>,
}

impl Identity {
    /// The name, as rejections carry it.
    #[inline]
    pub(crate) fn rejected_name(&self) -> &Name {
        &self.rejected_name
    }

    /// The parts only some breakers use, if this one has made them.
    #[inline]
    pub(crate) fn rare(&self) -> Option<&Rare> {
        self.rare.get().map(|rare| &**rare)
    }

    /// The parts only some breakers use, made now if they were not.
    #[inline]
    pub(crate) fn rare_made(&self) -> &Rare {
        self.rare.get_or_init(Box::default)
    }
}

impl Drop for Identity {
    fn drop(&mut self) {
        if let Some(hooks) = self.registry.get() {
            hooks.forget(self as *const Identity as usize);
        }
    }
}

/// The parts of a breaker that only some breakers use.
#[derive(Default)]
pub(crate) struct Rare {
    /// Made when a first listener is added (by the metrics, among others).
    listeners: Listeners,
    /// The listeners of each call's end (`Breaker::on_call`).
    pub(crate) call_listeners: Listeners<crate::events::CallEvent>,
    /// The call policy as each call reads it, and the retry budget: made when a
    /// configuration first sets a timeout or retries.
    #[cfg(feature = "policy")]
    pub(crate) policy: crate::policy::PolicyState,
    /// Adaptive throttling's counts: made when a configuration first sets `throttle`.
    pub(crate) throttle: crate::throttle::Throttle,
    /// The time window's lane of successes counted without the lock: made when it first
    /// opens (see `engine/lane.rs`).
    pub(crate) lane: crate::engine::TimeLane,
    /// Made when the breaker first records its calls.
    #[cfg(feature = "recording")]
    pub(crate) recorder: recorder::Recorder,
}

impl Breaker {
    /// A breaker named `name` on the default clock.
    pub fn new(name: impl Into<Arc<str>>, config: Config) -> Self {
        Self::with_source(
            name.into(),
            0,
            Arc::new(config),
            ClockSource::default_clock(),
        )
    }

    /// A breaker on a clock of your own, typically a [`ManualClock`](crate::clock::ManualClock).
    pub fn with_clock(name: impl Into<Arc<str>>, config: Config, clock: impl Clock) -> Self {
        Self::with_source(name.into(), 0, Arc::new(config), ClockSource::custom(clock))
    }

    /// A breaker named `name`, whose key (if it is a keyed family's) starts at `key_at`.
    fn with_source(name: Arc<str>, key_at: usize, config: Arc<Config>, clock: ClockSource) -> Self {
        let identity = Identity {
            rejected_name: Name::new(&name),
            key_at,
            rare: Default::default(),
            registry: Default::default(),
        };
        Self {
            shared: Shared::new(config, clock, identity),
        }
    }

    /// The breaker of `family` for the key whose text is `key`, named `family[key]`, e.g.
    /// `app::get[10.0.0.1:7000]` with key `10.0.0.1:7000`.
    pub(crate) fn keyed(family: &str, key: &str, config: Arc<Config>) -> Self {
        let name = format!("{family}[{key}]");
        let key_at = family.len() + 1;
        Self::with_source(name.into(), key_at, config, ClockSource::default_clock())
    }

    #[inline]
    pub(crate) fn identity(&self) -> &Identity {
        self.shared.identity()
    }

    /// The engine's shared words and machine: for the engine's paths (`engine/`).
    #[inline(always)]
    pub(crate) fn shared(&self) -> &Shared {
        &self.shared
    }

    pub(crate) fn clock(&self) -> &ClockSource {
        self.shared.clock()
    }

    /// The parts only some breakers use, if this one has made them.
    #[inline]
    pub(crate) fn rare(&self) -> Option<&Rare> {
        self.identity().rare()
    }

    /// The parts only some breakers use, made now if they were not.
    #[inline]
    pub(crate) fn rare_made(&self) -> &Rare {
        self.identity().rare_made()
    }

    /// What a call starts under: the policy as published, or none.
    #[cfg(feature = "policy")]
    #[inline]
    pub(crate) fn policy_plan(&self) -> crate::policy::Plan {
        self.rare()
            .map_or(crate::policy::Plan::NONE, |rare| rare.policy.plan())
    }

    /// The call policy's published values and retry budget (see `policy.rs`), made now if
    /// they were not: for calls that retry.
    #[cfg(feature = "policy")]
    pub(crate) fn policy_state(&self) -> &crate::policy::PolicyState {
        &self.rare_made().policy
    }

    /// The breaker's name.
    pub fn name(&self) -> &str {
        self.identity().rejected_name.as_str()
    }

    /// The key of a breaker created per key by `#[circuit_breaker(key = ...)]`, as its
    /// `Display` text; `None` for other breakers.
    pub fn key(&self) -> Option<&str> {
        let Identity { key_at, .. } = self.identity();
        let name = self.name();
        (*key_at != 0).then(|| &name[*key_at..name.len() - 1])
    }

    /// The breaker's current configuration.
    pub fn config(&self) -> Config {
        self.shared.inspect(|m| m.config().clone())
    }

    /// Replaces the configuration of a running breaker, keeping its state: an operator's
    /// runtime override. A different window shape starts an empty window, and results of
    /// calls admitted before are then discarded. A CLOSED breaker whose window the new
    /// configuration trips (a lower failure rate or minimum of calls) opens at once, and one
    /// left closed is not opened later by a result judged under the old configuration; a
    /// HALF_OPEN one whose probes already reach a lower `successes` ends its trial at once.
    /// Turning slow calls off drops the slow marks of the calls in the window, so that
    /// turning them on again counts none of them.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breakerbox::{Breaker, Config, State};
    ///
    /// let b = Breaker::new("libraryd", Config::default());
    /// b.reconfigure(Config::builder().count_window(1).min_calls(1).build()?);
    /// b.try_acquire().unwrap().failure();
    /// assert_eq!(b.state(), State::Open);
    /// assert_eq!(b.config().min_calls(), 1);
    /// # Ok::<(), breakerbox::config::ConfigError>(())
    /// ```
    pub fn reconfigure(&self, config: Config) {
        let mut now = LazyNow::new(self.clock());
        now.get();
        let events = self.shared.reconfigure(config, &mut now);
        self.emit(events);
    }

    /// The current state. An expired OPEN still reads `Open` until the next call asks.
    pub fn state(&self) -> State {
        self.shared.state()
    }

    /// Like [`try_acquire`](Breaker::try_acquire), for a breaker behind an `Arc`: the
    /// permit holds a share of the breaker, so it can move into a `'static` future.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use breakerbox::{Breaker, Config};
    ///
    /// let b = Arc::new(Breaker::new("libraryd", Config::default()));
    /// let permit = b.try_acquire_owned()?;
    /// permit.success();
    /// assert_eq!(b.snapshot().calls, 1);
    /// # Ok::<(), breakerbox::Rejected>(())
    /// ```
    pub fn try_acquire_owned(self: &Arc<Self>) -> Result<OwnedPermit, Rejected> {
        self.try_acquire()
            .map(|permit| permit.into_owned(Arc::clone(self)))
    }

    /// Asks to make one call: a [`Permit`] to report its result with, or why not.
    ///
    /// In CLOSED this is one atomic load; the clock is read only when slow calls are judged.
    /// In OPEN it reads the clock (on Linux, the production clock's cheaper coarse twin while
    /// the period is far from its end), not the lock.
    ///
    /// With a bulkhead ([`max_concurrent`](crate::config::ConfigBuilder::max_concurrent)), the
    /// bulkhead is asked first: a full one rejects with
    /// [`RejectReason::Bulkhead`](crate::RejectReason::Bulkhead), whatever the state. An
    /// admitted call holds a slot until its permit ends (a result, a drop, a panic); a call
    /// the state rejects holds none. That costs an atomic read-modify-write
    /// when the call is admitted and another when it ends (none for a rejection in OPEN), and
    /// its result takes the packed window's full path rather than the one swap.
    ///
    /// ```
    /// use breakerbox::{Breaker, Config};
    ///
    /// let b = Breaker::new("libraryd", Config::builder().count_window(1).build()?);
    /// b.try_acquire().expect("closed").failure();
    /// let rejected = b.try_acquire().unwrap_err();
    /// assert_eq!(rejected.to_string(), "circuit 'libraryd' is open; retry in 5.0s");
    /// # Ok::<(), breakerbox::config::ConfigError>(())
    /// ```
    #[inline(always)]
    pub fn try_acquire(&self) -> Result<Permit<'_>, Rejected> {
        self.admit()
    }

    /// Runs `future` if the breaker admits it, and records its output as
    /// [`Classify`] judges it.
    ///
    /// If the future is dropped before it completes, nothing is recorded and a half-open
    /// probe slot is freed; if it panics, a failure is recorded. Either way its bulkhead
    /// slot, if it holds one, is freed.
    ///
    /// ```
    /// use std::io;
    /// use breakerbox::{Breaker, Config};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let b = Breaker::new("libraryd", Config::default());
    /// let out = b.call(async { Err::<u32, _>(io::Error::from(io::ErrorKind::TimedOut)) }).await;
    /// assert!(matches!(out, Ok(Err(_))));
    /// assert_eq!(b.snapshot().failures, 1);
    /// # });
    /// ```
    pub async fn call<F>(&self, future: F) -> Result<F::Output, Rejected>
    where
        F: IntoFuture,
        F::Output: Classify,
    {
        let permit = self.try_acquire()?;
        let output = future.await;
        permit.record_output(&output);
        Ok(output)
    }

    /// Like [`call`](Breaker::call), judging the output with `classify` instead of its
    /// [`Classify`] impl.
    ///
    /// ```
    /// use breakerbox::{Breaker, Config, Outcome};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let b = Breaker::new("statusd", Config::default());
    /// let status = b
    ///     .call_with(async { 503_u16 }, |s| if *s >= 500 { Outcome::Failure } else { Outcome::Success })
    ///     .await;
    /// assert_eq!(status.unwrap(), 503);
    /// assert_eq!(b.snapshot().failures, 1);
    /// # });
    /// ```
    pub async fn call_with<F, C>(&self, future: F, classify: C) -> Result<F::Output, Rejected>
    where
        F: IntoFuture,
        C: FnOnce(&F::Output) -> Outcome,
    {
        let permit = self.try_acquire()?;
        let output = future.await;
        permit.record(classify(&output));
        Ok(output)
    }

    /// Rejects every call, never half-opening, until [`reset`](Breaker::reset).
    pub fn force_open(&self) {
        self.set(State::ForcedOpen);
    }

    /// Admits every call and records nothing until [`reset`](Breaker::reset).
    pub fn disable(&self) {
        self.set(State::Disabled);
    }

    /// Opens the breaker now for exactly `duration`, whatever its state: calls are rejected
    /// (with [`retry_after`](Rejected::retry_after) counting down to its end), then the first
    /// call after it is a probe, as after any OPEN. Resilience4j's
    /// `transitionToOpenStateFor`.
    ///
    /// The transition says [`TransitionReason::ManualOpen`], and listeners, logs and metrics
    /// hear of it as of any opening. Results of calls admitted before are discarded. The
    /// open duration's backoff is left as it stands: a trial that fails after this period
    /// opens for as long as it would have without it. From OPEN, the period is replaced
    /// by this one (a new generation, no transition). OPEN still ends lazily, at the first
    /// call after it: no timer runs.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breakerbox::clock::ManualClock;
    /// use breakerbox::{Breaker, Config, State};
    ///
    /// let clock = ManualClock::new();
    /// let config = Config::builder().probes(1).build()?;
    /// let b = Breaker::with_clock("libraryd", config, clock.clone());
    /// b.open_for(Duration::from_secs(30));
    /// assert_eq!(b.state(), State::Open);
    /// clock.advance(Duration::from_secs(20));
    /// let rejected = b.try_acquire().unwrap_err();
    /// assert_eq!(rejected.retry_after(), Some(Duration::from_secs(10)));
    /// clock.advance(Duration::from_secs(10));
    /// b.try_acquire().unwrap().success(); // a probe
    /// assert_eq!(b.state(), State::Closed);
    /// # Ok::<(), breakerbox::config::ConfigError>(())
    /// ```
    pub fn open_for(&self, duration: Duration) {
        self.open_because(duration, TransitionReason::ManualOpen);
    }

    /// Opens the breaker now until `until`, an instant of the breaker's clock (read with
    /// [`now`](Breaker::now)), as [`open_for`](Breaker::open_for) does for the time left until
    /// then; an instant already past opens it for no time, so the next call is a probe.
    /// Resilience4j's `transitionToOpenStateUntil`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breakerbox::clock::ManualClock;
    /// use breakerbox::{Breaker, Config};
    ///
    /// let b = Breaker::with_clock("libraryd", Config::default(), ManualClock::new());
    /// b.open_until(b.now() + Duration::from_secs(90));
    /// let rejected = b.try_acquire().unwrap_err();
    /// assert_eq!(rejected.retry_after(), Some(Duration::from_secs(90)));
    /// ```
    pub fn open_until(&self, until: ClockInstant) {
        self.open_until_because(until.reading(), TransitionReason::ManualOpen);
    }

    /// The time on the breaker's clock: what its open periods, windows and
    /// [`open_until`](Breaker::open_until) count on.
    pub fn now(&self) -> ClockInstant {
        ClockInstant::of(self.clock().now())
    }

    /// Opens the breaker now for `duration`, for `reason`: a period asked for from outside
    /// the window (an operator, the downstream's pushback).
    pub(crate) fn open_because(&self, duration: Duration, reason: TransitionReason) {
        self.open_period(reason, |_| duration);
    }

    /// Opens the breaker now until `until` of its clock, for `reason`.
    pub(crate) fn open_until_because(&self, until: Instant, reason: TransitionReason) {
        self.open_period(reason, |now| until.saturating_duration_since(now));
    }

    /// The one door through which an open period chosen outside the machine enters it:
    /// under its lock, through the owner's one change path, `length` told the clock's
    /// reading there.
    fn open_period(&self, reason: TransitionReason, length: impl FnOnce(Instant) -> Duration) {
        let mut now = LazyNow::new(self.clock());
        let (_, events) = self.shared.transition(|m| {
            let open_for = length(now.get());
            m.open_for(open_for, reason, &mut now)
        });
        self.emit(events);
    }

    /// Back to CLOSED with an empty window; results of calls admitted before are discarded.
    ///
    /// ```
    /// use breakerbox::{Breaker, Config, State};
    ///
    /// let b = Breaker::new("libraryd", Config::default());
    /// b.disable();
    /// b.try_acquire().unwrap().failure(); // admitted, not counted
    /// assert_eq!((b.state(), b.snapshot().calls), (State::Disabled, 0));
    /// b.force_open();
    /// assert!(b.try_acquire().is_err());
    /// b.reset();
    /// assert_eq!(b.state(), State::Closed);
    /// ```
    pub fn reset(&self) {
        self.set(State::Closed);
    }

    /// Puts a breaker no one has seen yet in `to`: a keyed family's member born forced open
    /// or disabled. No transition is announced; there was no state before to leave.
    pub(crate) fn start_in(&self, to: State) {
        let mut now = LazyNow::new(self.clock());
        let (_, unannounced) = self.shared.transition(|m| m.set(to, &mut now));
        drop(unannounced);
    }

    fn set(&self, to: State) {
        let mut now = LazyNow::new(self.clock());
        let (_, events) = self.shared.transition(|m| m.set(to, &mut now));
        self.emit(events);
    }

    /// The state and the window's counts, read together, with the lifetime
    /// [`CallTotals`](crate::snapshot::CallTotals) and, in HALF_OPEN, the [`Trial`](crate::snapshot::Trial) of
    /// its probes. What the window's counts mean in each state: [`Snapshot`].
    pub fn snapshot(&self) -> Snapshot {
        let totals_since = self.shared.call_totals();
        #[cfg(feature = "policy")]
        let totals_since = match self.rare() {
            Some(rare) => rare.policy.add_totals(totals_since),
            None => totals_since,
        };
        let mut now = LazyNow::new(self.clock());
        let (totals, (failure_rate, slow_call_rate), state, admit_percent, trial) =
            self.shared.inspect(|m| {
                // A packed window's calls as its word stands: shown, not judged.
                let totals = m.totals(&mut now, self.shared.window().read());
                let rates = m.rates(totals);
                (totals, rates, m.state(), m.admit_percent(), m.trial())
            });
        Snapshot {
            state,
            calls: totals.calls,
            failures: totals.failures,
            slow_calls: totals.slow,
            failure_rate,
            slow_call_rate,
            rejected: totals_since.rejected,
            admit_percent,
            totals: totals_since,
            trial,
        }
    }

    /// The time left in the current OPEN; `None` in other states.
    #[cfg(any(feature = "fleet", feature = "admin"))]
    pub(crate) fn open_left(&self) -> Option<std::time::Duration> {
        let now = self.clock().now();
        let period = self.shared.inspect(|m| m.open_period());
        period
            .map(|(since, open_for)| open_for.saturating_sub(now.saturating_duration_since(since)))
    }

    /// Whether the breaker is OPEN for its fleet (`TransitionReason::FleetOpen`).
    #[cfg(any(feature = "fleet", feature = "admin"))]
    pub(crate) fn in_fleet_open(&self) -> bool {
        self.shared
            .inspect(|m| m.open_reason() == Some(crate::events::TransitionReason::FleetOpen))
    }

    /// Half-open probes currently in flight (0 outside HALF_OPEN).
    pub fn probes_in_flight(&self) -> u32 {
        self.shared.inspect(|m| m.probes_in_flight())
    }

    /// Where the breaker is, for the registry's hooks: the same for as long as it lives.
    #[cfg_attr(not(any(feature = "prometheus", feature = "admin")), allow(dead_code))]
    pub(crate) fn address(&self) -> usize {
        self.identity() as *const Identity as usize
    }

    /// Reports the breaker's transitions and drop to the hooks of the registry it joined
    /// (the first only).
    pub(crate) fn report_to(&self, hooks: &Arc<crate::registry::Hooks>) {
        let _ = self.identity().registry.set(Arc::clone(hooks));
    }

    /// Tells the registry's hooks of `event`.
    fn report(&self, event: &Event) {
        if let Some(hooks) = self.identity().registry.get() {
            hooks.happened(self, event);
        }
    }

    /// Calls `listener` on every [`Event`], after the change is made and with no lock held,
    /// so it may call back into the breaker. A panicking listener is contained.
    pub fn on_event(&self, listener: impl Fn(&Event) + Send + Sync + 'static) {
        self.rare_made().listeners.add(Arc::new(listener));
    }

    /// Calls `listener` at the end of every call from now on: a success, failure, ignored
    /// or cancelled result with the call's duration, or a rejection with its reason. Opt-in:
    /// a breaker with no call listener pays nothing for it; with one, every call reads the
    /// clock at its start and end and leaves the lock-free fast paths (see
    /// `benches/README.md` for the cost).
    ///
    /// A call's event comes as its result reaches the breaker, before the breaker acts on it
    /// (a failure that opens it, then the [`Event::StateTransition`](crate::events::Event)); the
    /// listener runs on the caller's thread with no lock held, so it may call back into the
    /// breaker, and a panicking listener is contained. Each attempt of a retried call
    /// (`Breaker::run`, `#[circuit_breaker]`) is a call of its own. A result the breaker
    /// discards (the call was admitted before the breaker last changed state) is still told,
    /// marked [`stale`](crate::events::CallEvent::stale). A call admitted before the first listener was
    /// added may end untold.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use breakerbox::{Breaker, events::CallEnding, Config};
    ///
    /// let b = Breaker::new("libraryd", Config::default());
    /// let endings = Arc::new(Mutex::new(Vec::new()));
    /// let log = endings.clone();
    /// b.on_call(move |e| log.lock().unwrap().push(e.ending));
    ///
    /// b.try_acquire().unwrap().success();
    /// b.try_acquire().unwrap().ignore();
    /// drop(b.try_acquire().unwrap()); // a cancelled call
    /// assert_eq!(
    ///     *endings.lock().unwrap(),
    ///     [CallEnding::Success, CallEnding::Ignored, CallEnding::Cancelled]
    /// );
    /// ```
    pub fn on_call(&self, listener: impl Fn(&crate::events::CallEvent) + Send + Sync + 'static) {
        self.rare_made().call_listeners.add(Arc::new(listener));
        self.shared.publish_observed();
    }

    /// Calls holding a bulkhead slot now: at most
    /// [`max_concurrent`](crate::Config::max_concurrent), and 0 for a breaker that never had
    /// a bulkhead. A configuration that removes or lowers the limit leaves the calls already
    /// in flight counted until they end.
    ///
    /// ```
    /// use breakerbox::{Breaker, Config, RejectReason};
    ///
    /// let b = Breaker::new("libraryd", Config::builder().max_concurrent(2).build()?);
    /// let first = b.try_acquire().unwrap();
    /// let second = b.try_acquire().unwrap();
    /// assert_eq!(b.in_flight(), 2);
    ///
    /// let rejected = b.try_acquire().unwrap_err();
    /// assert_eq!(rejected.reason(), RejectReason::Bulkhead);
    /// assert_eq!(rejected.to_string(), "circuit 'libraryd' is at its limit of 2 calls in flight");
    ///
    /// first.success();
    /// drop(second); // cancelled: its slot is freed too
    /// assert_eq!(b.in_flight(), 0);
    /// # Ok::<(), breakerbox::config::ConfigError>(())
    /// ```
    pub fn in_flight(&self) -> u32 {
        self.shared.calls_in_flight()
    }

    /// The share of calls adaptive throttling refuses now ([`ConfigBuilder::throttle`]):
    /// `max(0, (requests - K * accepts) / (requests + 1))` of the calls that reached the
    /// downstream in the last `throttle_window`, at most `throttle_max`; 0 when throttling is
    /// off or the breaker is not CLOSED.
    ///
    /// [`ConfigBuilder::throttle`]: crate::config::ConfigBuilder::throttle
    ///
    /// ```
    /// use breakerbox::{Breaker, Config, RejectReason};
    ///
    /// let b = Breaker::new("libraryd", Config::builder().throttle(2.0).min_calls(10).build()?);
    /// // Seven calls in flight, asked while nothing has answered yet.
    /// let mut calls: Vec<_> = (0..7).map(|_| b.try_acquire().unwrap()).collect();
    /// calls.pop().unwrap().success();
    /// calls.into_iter().for_each(|call| call.failure());
    /// assert_eq!(b.shed_probability(), 0.625); // (7 - 2 * 1) / 8
    /// assert!(b.try_acquire().is_ok()); // the first call owes 0.625 of a refusal
    /// assert_eq!(b.try_acquire().unwrap_err().reason(), RejectReason::Shed);
    /// # Ok::<(), breakerbox::config::ConfigError>(())
    /// ```
    pub fn shed_probability(&self) -> f64 {
        let word = self.shared.word();
        if word.state() != State::Closed || !self.shared.flag(crate::engine::Flag::Throttle) {
            return 0.0;
        }
        self.rare().map_or(0.0, |rare| {
            rare.throttle
                .probability(word.generation(), self.clock().ticks())
        })
    }

    /// Starts recording the breaker's calls (feature `recording`): for each call from now
    /// on, when it started, how long it took and how it ended (a success, failure or ignored
    /// result, or a rejection and its reason), the last `capacity` of them in a ring
    /// allocated now. Recording again starts a new recording.
    ///
    /// # Errors
    ///
    /// A [`CapacityError`](crate::recording::CapacityError) for a `capacity` of 0 or above
    /// [`MAX_CAPACITY`](crate::recording::MAX_CAPACITY) (10 million calls), or a ring the
    /// allocator refuses; the breaker then records nothing (a recording that was on stays
    /// on).
    ///
    /// Recording costs nothing while it is off; while it is on, each call reads the clock
    /// twice and writes its record under a lock of the recording's own, allocating nothing.
    /// A call that started before the recording, and a call of a disabled breaker, is not
    /// recorded. [`Recording::write_csv`](crate::recording::Recording::write_csv) writes what the replay tuner reads.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breakerbox::clock::ManualClock;
    /// use breakerbox::recording::CallOutcome;
    /// use breakerbox::{Breaker, Config, Outcome, RejectReason};
    ///
    /// let clock = ManualClock::new();
    /// let b = Breaker::with_clock("libraryd", Config::builder().count_window(1).build()?, clock.clone());
    /// b.start_recording(1000)?;
    /// let permit = b.try_acquire().unwrap();
    /// clock.advance(Duration::from_millis(30));
    /// permit.failure(); // opens the breaker
    /// let _ = b.try_acquire();
    ///
    /// let calls = b.recording();
    /// let calls = calls.calls();
    /// assert_eq!(calls.len(), 2);
    /// assert_eq!(calls[0].latency, Duration::from_millis(30));
    /// assert_eq!(calls[0].outcome, CallOutcome::Completed(Outcome::Failure));
    /// assert_eq!(calls[1].start, Duration::from_millis(30));
    /// assert_eq!(calls[1].outcome, CallOutcome::Rejected(RejectReason::Open));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "recording")]
    pub fn start_recording(&self, capacity: usize) -> Result<(), crate::recording::CapacityError> {
        self.recorder().start(capacity, self.clock().now())?;
        self.shared.set_recording(true);
        Ok(())
    }

    /// The calls recorded so far, oldest first, named for the breaker and with its
    /// configuration (the CSV file gives both in comment lines); empty and unnamed when no recording is on.
    #[cfg(feature = "recording")]
    pub fn recording(&self) -> crate::recording::Recording {
        self.rare()
            .and_then(|rare| rare.recorder.recording())
            .map(|r| r.with_name(self.name()).with_config(self.config()))
            .unwrap_or_default()
    }

    /// Ends the recording, returning it, named for the breaker and with its configuration (empty and unnamed when none
    /// was on); calls cost nothing to record again.
    #[cfg(feature = "recording")]
    pub fn stop_recording(&self) -> crate::recording::Recording {
        self.shared.set_recording(false);
        self.rare()
            .and_then(|rare| rare.recorder.stop())
            .map(|r| r.with_name(self.name()).with_config(self.config()))
            .unwrap_or_default()
    }

    /// Runs a call under the breaker's current policy ([`Config::policy`](crate::Config::policy)):
    /// each attempt asks the breaker, runs under the `timeout` and is judged by
    /// [`Classify`]; a failed attempt is retried, up to `retries` times, within the retry
    /// budget, after a backoff. `attempt` makes each attempt's future afresh.
    ///
    /// In order:
    ///
    /// 1. a bulkhead slot (with `max_concurrent`), held until the call returns, retries and
    ///    backoff included;
    /// 2. for each attempt: the breaker is asked ([`try_acquire`](Breaker::try_acquire));
    ///    a rejection ends the call with [`CallError::Rejected`](crate::CallError::Rejected), counted in the rejected
    ///    totals only, never as a failure nor a retry;
    /// 3. the attempt runs under the timeout: past it, it is dropped and recorded as a
    ///    failure (and slow, when slow calls are judged). The timer starts when the attempt
    ///    first waits, so an attempt ready at its first poll makes no timer;
    /// 4. its output is judged and recorded;
    /// 5. only a [`Outcome::Failure`] is retried (never a success, a business error the
    ///    classifier calls a success, nor an ignored outcome), while retries remain and the
    ///    budget allows: retries in the last 10 s may be at most `retry_budget` times the
    ///    first attempts the breaker admitted in those seconds, plus `retry_floor` a second;
    /// 6. the wait before retry `n` is drawn from
    ///    `[0, min(retry_backoff_max, retry_backoff * 2^(n-1))]`; then back to 2. A failure
    ///    that carried the downstream's pushback ([`Classify::pushback`]) is retried no
    ///    sooner than the pushback asks, and not at all when the pushback is longer than
    ///    that backoff's ceiling: the output is returned (the breaker, opened by the
    ///    pushback, rejects the calls of that period).
    ///
    /// With a [`hedge`](crate::config::ConfigBuilder::hedge), steps 2 to 4 are hedged: an
    /// attempt still running after the delay gets another beside it, up to `hedges`, each
    /// asking the breaker first and drawing from the retry budget; the first success wins and
    /// the others are cancelled (counted cancelled, never failed).
    ///
    /// The last attempt's output is returned as it is, failure or not, or
    /// [`CallError::TimedOut`](crate::CallError::TimedOut) if it timed out. Waiting and timeouts use tokio's clock (so
    /// a paused clock drives them exactly), and need a tokio runtime with its time driver
    /// when a `timeout` or a backoff is configured; the budget counts on the breaker's
    /// clock. Dropping the call's future cancels the attempt in flight (recorded as
    /// cancelled) and frees its slot; dropped while it waits before a retry, it gives that
    /// retry back to the budget: a retry is spent only by an attempt that starts.
    ///
    /// A shadow breaker ([`Config::shadow`](crate::Config::shadow)) moves exactly as an
    /// enforcing one would: where that one would reject the call (a full bulkhead, or the
    /// state, before the first attempt or a retry), the shadow runs that attempt instead,
    /// counted as a shadow rejection, and the call ends with it. That attempt holds no
    /// bulkhead slot, its result reaches no window, it is never retried, and it takes
    /// nothing from the retry budget.
    ///
    /// [`CallTotals`](crate::snapshot::CallTotals) counts the retries made and the failures returned
    /// because the budget was exhausted. A breaker without `retries` never touches its
    /// budget.
    ///
    /// The budget is the rule of Finagle's and Envoy's retry budgets and of tower's
    /// `TpsBudget`, with two differences. It is exact: the ratio is kept in parts per billion
    /// and compared in integers, so 0.3 allows 3 retries per 10 first attempts, where
    /// `TpsBudget` withdraws `1 / ratio` tokens rounded down to an integer per retry, which
    /// allows a third. And it counts on the breaker's own clock, the one its window and open
    /// period read, so a [`ManualClock`](crate::clock::ManualClock) drives it as well as
    /// tokio's paused clock does; `TpsBudget` reads only tokio's. seatbelt and
    /// tower-resilience have no budget, and their retry, breaker and timeout layers share no
    /// state: whether a retry asks the breaker, and whether a rejection is retried, depends on
    /// how the layers are stacked and on the user's recovery function. Here the order is the
    /// runner's.
    ///
    /// ```
    /// use std::io;
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use std::time::Duration;
    /// use breakerbox::{Breaker, Config};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true)
    /// #     .build().unwrap().block_on(async {
    /// let config = Config::builder().timeout(Duration::from_millis(800)).retries(2).build()?;
    /// let b = Breaker::new("libraryd", config);
    /// let attempts = &AtomicU32::new(0);
    /// let book = b
    ///     .run(|| async move {
    ///         // A blip: the first attempt is refused, the second answers.
    ///         match attempts.fetch_add(1, Ordering::Relaxed) {
    ///             0 => Err(io::Error::from(io::ErrorKind::ConnectionRefused)),
    ///             _ => Ok("Dune"),
    ///         }
    ///     })
    ///     .await?;
    /// assert_eq!(book?, "Dune");
    /// let totals = b.snapshot().totals;
    /// assert_eq!((totals.failure, totals.success, totals.retries), (1, 1, 1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    #[cfg(feature = "policy")]
    pub async fn run<F, Fut>(&self, attempt: F) -> Result<Fut::Output, crate::CallError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future,
        Fut::Output: Classify,
    {
        self.run_planned(attempt, crate::policy::run::classified(), true)
            .await
    }

    /// Like [`run`](Breaker::run), judging each attempt's output with `classify` instead of
    /// its [`Classify`] impl.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breakerbox::{Breaker, CallError, Config, Outcome};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true)
    /// #     .build().unwrap().block_on(async {
    /// let config = Config::builder().timeout(Duration::from_millis(800)).build()?;
    /// let b = Breaker::new("statusd", config);
    ///
    /// let status = b.run_with(|| async { 503_u16 }, |s| match *s {
    ///     500.. => Outcome::Failure,
    ///     _ => Outcome::Success,
    /// });
    /// assert_eq!(status.await?, 503);
    ///
    /// let hung = b.run_with(std::future::pending::<u16>, |_| Outcome::Success).await;
    /// let Err(CallError::TimedOut(timed_out)) = hung else { panic!("{hung:?}") };
    /// assert_eq!(timed_out.to_string(), "call to 'statusd' timed out after 800ms");
    /// assert_eq!(b.snapshot().totals.failure, 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    #[cfg(feature = "policy")]
    pub async fn run_with<F, Fut, C>(
        &self,
        attempt: F,
        classify: C,
    ) -> Result<Fut::Output, crate::CallError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future,
        C: FnMut(&Fut::Output) -> Outcome,
    {
        self.run_planned(attempt, crate::policy::run::plain(classify), true)
            .await
    }

    /// Reports what an operation did, with no lock held. Most operations under the lock (a
    /// result into a locked window, a half-open admission) change no state: they return here.
    #[inline]
    pub(crate) fn emit(&self, events: Events) {
        if events.transition.is_some() || events.news.is_some() {
            self.emit_now(events);
        }
    }

    /// A state change, then the news: a ramp step entered or a trip the family's cap refused
    /// (to listeners and logs), or a step held by the latency guard (to logs only).
    #[cold]
    fn emit_now(&self, events: Events) {
        let listeners = self.rare().map(|rare| &rare.listeners);
        let shadow = self.shared.flag(crate::engine::Flag::Shadow);
        if let Some(Transition { from, to, reason }) = events.transition {
            #[cfg(feature = "tracing")]
            crate::trace::transition(self, from, to, reason, shadow);
            let event = Event::StateTransition {
                from,
                to,
                reason,
                shadow,
            };
            if let Some(listeners) = listeners {
                listeners.emit(&event);
            }
            self.report(&event);
        }
        let event = match events.news {
            Some(News::Step { step, percent }) => {
                #[cfg(feature = "tracing")]
                crate::trace::ramp_step(self, step, percent);
                Event::RampStep {
                    step,
                    percent,
                    shadow,
                }
            }
            Some(News::TripRefused(Refusal {
                reason,
                open,
                limit,
            })) => {
                #[cfg(feature = "tracing")]
                crate::trace::trip_refused(self, reason, open, limit, shadow);
                Event::TripRefused {
                    reason,
                    open,
                    limit,
                    shadow,
                }
            }
            #[cfg(feature = "tracing")]
            Some(News::Held {
                step,
                percent,
                p99,
                baseline,
            }) => return crate::trace::ramp_held(self, step, percent, p99, baseline),
            _ => return,
        };
        if let Some(listeners) = listeners {
            listeners.emit(&event);
        }
        self.report(&event);
    }

    /// Seats the breaker on its keyed family's count of members out of the pool, or takes
    /// its seat away as it leaves the family (`cap.rs`).
    pub(crate) fn seat_on(&self, count: Option<Arc<crate::cap::OpenCount>>) {
        let ((), unannounced) = self.shared.transition(|m| m.seat_on(count));
        drop(unannounced);
    }
}

impl fmt::Debug for Breaker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Breaker")
            .field("name", &self.name())
            .field("state", &self.state())
            .field("listeners", &self.rare().map(|rare| &rare.listeners))
            .finish_non_exhaustive()
    }
}
