//! The state machine: states, transitions and generations, as plain data under one lock.
//!
//! Every function here takes the time as an argument and never reads a clock, so the rules
//! can be read, and tested, apart from concurrency.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::clock::LazyNow;
use crate::config::Config;
use crate::recovery::{Ramp, RampDecision, RampNews, Recovery};
use crate::rejected::RejectReason;
use crate::window::{LockedWindow, Mark, OutcomeWindow, Packed, PackedWindow, Threshold, Totals};
use crate::State;

use self::probes::Probes;

mod probes;

/// How a permit was admitted; decides what its result does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Admission {
    /// Admitted in CLOSED: its outcome enters the window.
    Counted,
    /// A half-open probe holding one of the `probes` slots.
    Probe,
    /// Admitted by a step of the half-open ramp-up.
    Ramp,
    /// Admitted by a disabled breaker: nothing is recorded.
    Passthrough,
}

/// A state change, reported to listeners once the lock is released.
pub(crate) type Transition = (State, State);

/// What an operation did that listeners and logs hear of, once the lock is released.
#[derive(Debug, Default, PartialEq)]
#[must_use = "events are emitted by the breaker once its lock is released"]
pub(crate) struct Events {
    pub(crate) transition: Option<Transition>,
    pub(crate) ramp: Option<RampNews>,
}

/// Where the machine stands, each state with the data only it has.
///
/// A tag of its own, numbered as [`State::code`]: the state is read under the lock by every
/// operation and published after it, and a tag kept in the niche of an `Instant` would take
/// a few compares to read.
#[derive(Debug)]
#[repr(u8)]
enum Phase {
    Closed = State::Closed.code() as u8,
    /// Rejecting since `since`, for the recovery's `open_for`.
    Open {
        since: Instant,
    } = State::Open.code() as u8,
    /// The trial: `successes` probes succeeded so far; the probes out (at most `probes` at
    /// once) are the machine's [`Probes`].
    HalfOpen {
        successes: u32,
    } = State::HalfOpen.code() as u8,
    ForcedOpen = State::ForcedOpen.code() as u8,
    Disabled = State::Disabled.code() as u8,
    /// HALF_OPEN once the trial passed, with a ramp-up configured: a growing share of calls
    /// is admitted, step by step.
    Ramp(Ramp),
}

impl Phase {
    /// A trial that has not started: none succeeded (and no probe out: see
    /// [`Machine::start_trial`]).
    const TRIAL: Phase = Phase::HalfOpen { successes: 0 };

    fn state(&self) -> State {
        match self {
            Phase::Closed => State::Closed,
            Phase::Open { .. } => State::Open,
            Phase::HalfOpen { .. } | Phase::Ramp(_) => State::HalfOpen,
            Phase::ForcedOpen => State::ForcedOpen,
            Phase::Disabled => State::Disabled,
        }
    }
}

#[derive(Debug)]
pub(crate) struct Machine {
    /// Shared by the breakers of a keyed family.
    config: Arc<Config>,
    phase: Phase,
    /// Bumped by every state change and every reset; permits carry the one they were
    /// admitted in, and results of older generations are discarded.
    generation: u64,
    window: OutcomeWindow,
    recovery: Recovery,
    /// HALF_OPEN's probes in flight, by start; empty in every other phase. Here rather than
    /// in `Phase::HalfOpen`, so that its buffer outlives a trial.
    probes: Probes,
    /// The state change of the operation under way, taken with the ramp's news by
    /// [`take_events`](Self::take_events).
    transition: Option<Transition>,
    /// Set by a new configuration until its owner publishes it (see
    /// [`take_configured`](Self::take_configured)).
    configured: bool,
}

impl Machine {
    /// A closed machine in generation 0; a packed window is opened in `packed`.
    pub(crate) fn new(config: Arc<Config>, now: &mut LazyNow<'_>, packed: &PackedWindow) -> Self {
        let timed = times_calls(&config);
        let window = OutcomeWindow::new(config.window(), timed, window_origin(&config, now));
        if let Some(capacity) = window.packed() {
            packed.open(0, capacity);
        }
        Self {
            recovery: Recovery::new(&config),
            window,
            config,
            phase: Phase::Closed,
            probes: Probes::default(),
            generation: 0,
            transition: None,
            configured: true,
        }
    }

    pub(crate) fn state(&self) -> State {
        self.phase.state()
    }

    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// The window's counts, reading the clock only for a time window.
    pub(crate) fn totals(&mut self, now: &mut LazyNow<'_>, packed: &PackedWindow) -> Totals {
        let timed = self.window.needs_clock().then(|| now.ticks());
        self.window.totals(timed, packed)
    }

    /// The capacity of the window when it is packed, recorded without the lock in CLOSED.
    pub(crate) fn packed_capacity(&self) -> Option<u32> {
        self.window.packed()
    }

    /// When a packed window trips: [`trips`] for its capacity.
    pub(crate) fn threshold(&self) -> Threshold {
        let capacity = self.window.packed().unwrap_or(0);
        Threshold::new(
            capacity,
            self.config.min_calls(),
            self.config.failure_rate(),
        )
    }

    /// When OPEN ends: the instant it opened and how long it lasts; `None` in other states.
    pub(crate) fn open_period(&self) -> Option<(Instant, Duration)> {
        match self.phase {
            Phase::Open { since } => Some((since, self.recovery.open_for())),
            _ => None,
        }
    }

    /// `failures / calls` and `slow / calls`, or `None` before `min_calls` calls completed.
    pub(crate) fn rates(&self, totals: Totals) -> (Option<f64>, Option<f64>) {
        if !judged(totals.calls, self.config.min_calls()) {
            return (None, None);
        }
        let calls = f64::from(totals.calls);
        let slow = self
            .config
            .slow_calls()
            .map(|_| f64::from(totals.slow) / calls);
        (Some(f64::from(totals.failures) / calls), slow)
    }

    pub(crate) fn probes_in_flight(&self) -> u32 {
        self.probes.count()
    }

    /// Whether the configuration changed since the last call: what the owner publishes of
    /// it (the packed window's threshold) is then published again.
    pub(crate) fn take_configured(&mut self) -> bool {
        std::mem::take(&mut self.configured)
    }

    /// What the operations since the last call did, for listeners: taken under the lock,
    /// after each operation, by its caller.
    pub(crate) fn take_events(&mut self) -> Events {
        Events {
            transition: self.transition.take(),
            ramp: self.recovery.take_news(),
        }
    }

    pub(crate) fn admit_percent(&self) -> u32 {
        let ramp = match &self.phase {
            Phase::Ramp(ramp) => Some(ramp),
            _ => None,
        };
        Recovery::admit_percent(ramp, &self.config)
    }

    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    /// Whether permits must note when their call started.
    pub(crate) fn times_calls(&self) -> bool {
        times_calls(&self.config)
    }

    /// Takes a new configuration and keeps the state. A new window shape starts an empty
    /// window in a new generation, so results of calls admitted before are discarded.
    ///
    /// In CLOSED the window is then judged under the new configuration, and opens the breaker
    /// at once if its counts trip it (a lower rate or minimum): a packed window does not judge
    /// a success into a full window (see `PackedWindow::record_once`), so without this it
    /// would open only at its next failure. Likewise in HALF_OPEN, before a ramp, the probe
    /// successes already counted are judged under the new `successes`.
    ///
    /// A packed window is judged without the lock too, by each result, under the threshold
    /// it read, which may be the old one: so a CLOSED breaker's packed window is left sealed.
    /// A result judged before then lands on the seal, and goes to the lock with the results
    /// after it; the first to take it judges the window under the new configuration and
    /// opens it to results again (see [`judge`](Self::judge)).
    pub(crate) fn reconfigure(
        &mut self,
        config: Config,
        now: &mut LazyNow<'_>,
        packed: &PackedWindow,
    ) -> Option<Transition> {
        let origin = window_origin(&config, now);
        let window = OutcomeWindow::new(config.window(), times_calls(&config), origin);
        if config.window() != self.config.window() {
            self.window = window;
            self.generation += 1;
            if let Phase::HalfOpen { .. } = self.phase {
                // The probes out are of the generation before: their slots are free.
                self.start_trial();
            }
            self.open_packed(packed);
        } else if window.packed() != self.window.packed() {
            // Same calls, another representation (slow calls were turned on or off): the
            // window moves over, oldest first; slow marks are not kept in a packed window.
            packed.seal();
            self.window = match (window, &self.window) {
                (OutcomeWindow::Packed(n), OutcomeWindow::Locked(LockedWindow::Count(old))) => {
                    if self.state() == State::Closed {
                        packed.open_with(self.generation, n, old.outcomes());
                    } else {
                        packed.sealed_with(n, old.outcomes());
                    }
                    OutcomeWindow::Packed(n)
                }
                (
                    OutcomeWindow::Locked(LockedWindow::Count(mut new)),
                    OutcomeWindow::Packed(capacity),
                ) => {
                    for failure in packed.outcomes(*capacity) {
                        new.record(Mark {
                            failure,
                            slow: false,
                        });
                    }
                    OutcomeWindow::Locked(LockedWindow::Count(new))
                }
                (window, _) => window,
            };
        }
        if config.slow_calls().is_none() && self.config.slow_calls().is_some() {
            // One rule for every window: slow calls turned off take their marks with them
            // (a packed window has no room for any), so that turning them on again counts
            // none of the old ones.
            self.window.forget_slow();
        }
        let recovery_changed = config.open_backoff() != self.config.open_backoff()
            || config.ramp_up() != self.config.ramp_up()
            || config.ramp_latency_guard() != self.config.ramp_latency_guard()
            || config.open_for() != self.config.open_for();
        self.config = Arc::new(config);
        self.configured = true;
        if recovery_changed {
            if let Phase::Ramp(_) = self.phase {
                // The ramp it was on may no longer exist: judge the recovery afresh.
                self.generation += 1;
                self.start_trial();
            }
            self.recovery = Recovery::new(&self.config);
        }
        match self.phase {
            Phase::Closed => {
                if self.window.packed().is_some() {
                    packed.seal();
                }
                let totals = self.totals(now, packed);
                if trips(&self.config, totals) {
                    return self.enter(State::Open, now, packed);
                }
                None
            }
            // The probe successes counted so far are kept, and judged at once under the new
            // `successes`: a trial they already pass ends now, as its last success would
            // have ended it.
            Phase::HalfOpen { successes, .. } if successes >= self.config.successes() => {
                self.trial_passed(now, packed)
            }
            _ => None,
        }
    }

    /// Decides whether a call may run now; a state change it makes is among the
    /// [`take_events`](Self::take_events).
    pub(crate) fn acquire(
        &mut self,
        now: &mut LazyNow<'_>,
        packed: &PackedWindow,
    ) -> Result<Admission, (RejectReason, Option<Duration>)> {
        match &mut self.phase {
            Phase::Closed => Ok(Admission::Counted),
            Phase::Disabled => Ok(Admission::Passthrough),
            Phase::ForcedOpen => Err((RejectReason::ForcedOpen, None)),
            Phase::Open { since } => {
                let left = open_left(*since, self.recovery.open_for(), now.get());
                if left > Duration::ZERO {
                    return Err((RejectReason::Open, Some(left)));
                }
                // Lazy expiry: the first call at or after the deadline becomes a probe.
                self.enter(State::HalfOpen, now, packed);
                self.probes.start(now.get());
                Ok(Admission::Probe)
            }
            Phase::Ramp(ramp) => match self.recovery.ramp_admit(ramp, &self.config, now.get()) {
                RampDecision::Admit => Ok(Admission::Ramp),
                RampDecision::Throttle => Err((RejectReason::Throttled, None)),
                RampDecision::Close => {
                    self.enter(State::Closed, now, packed);
                    Ok(Admission::Counted)
                }
            },
            Phase::HalfOpen { .. } => {
                if self.probe_hung(now) {
                    self.enter(State::Open, now, packed);
                    return Err((RejectReason::Open, Some(self.recovery.open_for())));
                }
                if self.probes.count() >= self.config.probes() {
                    return Err((RejectReason::HalfOpenFull, None));
                }
                self.probes.start(now.get());
                Ok(Admission::Probe)
            }
        }
    }

    /// Whether a probe out has run for `probe_timeout`: it counts as failed, and the trial
    /// with it. Told lazily, by the next call or result of the trial, as OPEN's end is.
    fn probe_hung(&self, now: &mut LazyNow<'_>) -> bool {
        !self.probes.is_empty() && self.probes.hung(self.config.probe_timeout(), now.get())
    }

    /// Applies the result of a permit admitted in `generation` at `started`, known when the
    /// call is `timed` (slow calls, latency guard) and for every probe.
    #[allow(clippy::too_many_arguments)] // each is a part of the result, or where it lands
    pub(crate) fn record(
        &mut self,
        generation: u64,
        admission: Admission,
        failure: bool,
        started: Option<Instant>,
        timed: bool,
        now: &mut LazyNow<'_>,
        packed: &PackedWindow,
    ) -> Option<Transition> {
        if generation != self.generation {
            return None;
        }
        let latency = started
            .filter(|_| timed)
            .map(|started| now.get().saturating_duration_since(started));
        let slow = match (self.config.slow_calls(), latency) {
            (Some(slow), Some(latency)) => latency > slow.threshold,
            _ => false,
        };
        let mark = Mark { failure, slow };
        match (&mut self.phase, admission) {
            (Phase::Closed, Admission::Counted) => {
                let window = match &mut self.window {
                    OutcomeWindow::Locked(window) => window,
                    &mut OutcomeWindow::Packed(capacity) => {
                        // Sealed in CLOSED under the lock: a result tripped it and its recorder
                        // has not taken the lock yet, or a reconfigure sealed it. Judged here as
                        // that recorder would: if the breaker stays closed, this result goes into
                        // the window opened again. (Each recorder seals it at most once, and a
                        // reconfigure holds the lock: this ends.)
                        loop {
                            match packed.record(generation, capacity, failure, || self.threshold())
                            {
                                Packed::Counted | Packed::Stale => return None,
                                Packed::Tripped => return self.enter(State::Open, now, packed),
                                Packed::Sealed => {
                                    if let Some(opened) = self.judge(now, packed) {
                                        return Some(opened);
                                    }
                                }
                            }
                        }
                    }
                };
                let totals = window.record(mark, now);
                // The baseline is of successful calls: the failures that open a breaker are
                // often timeouts, and would lift it to the timeout.
                if let (Some(latency), false) = (latency, failure) {
                    self.recovery.record_latency(latency, false);
                }
                if trips(&self.config, totals) {
                    return self.enter(State::Open, now, packed);
                }
                None
            }
            (Phase::HalfOpen { .. }, Admission::Probe) => {
                // A probe out too long (this one, or another) failed the trial already.
                if self.probe_hung(now) {
                    return self.enter(State::Open, now, packed);
                }
                if let Some(started) = started {
                    self.probes.end(started);
                }
                if mark.failure || mark.slow {
                    return self.enter(State::Open, now, packed);
                }
                let Phase::HalfOpen { successes } = &mut self.phase else {
                    return None;
                };
                *successes += 1;
                if *successes < self.config.successes() {
                    return None;
                }
                self.trial_passed(now, packed)
            }
            (Phase::Ramp(_), Admission::Ramp) => {
                if mark.failure || mark.slow {
                    return self.enter(State::Open, now, packed);
                }
                if let Some(latency) = latency {
                    self.recovery.record_latency(latency, true);
                }
                None
            }
            _ => None,
        }
    }

    /// `successes` probes succeeded: the ramp's first step if one is configured, else CLOSED.
    /// Either way a new generation begins, so results of the probes still out (with
    /// `successes` below `probes`, up to `probes - successes` of them) are discarded.
    fn trial_passed(&mut self, now: &mut LazyNow<'_>, packed: &PackedWindow) -> Option<Transition> {
        if let Some(ramp) = self.recovery.start_ramp(&self.config, now.get()) {
            // Same state, new phase: results of the probes still out are stale.
            self.generation += 1;
            self.phase = Phase::Ramp(ramp);
            self.probes.clear();
            return None;
        }
        self.enter(State::Closed, now, packed)
    }

    /// A probe admitted at `started` ended without a verdict (ignored or cancelled): it frees
    /// its slot, unless a probe out too long (this one, or another) failed the trial.
    pub(crate) fn release_probe(
        &mut self,
        generation: u64,
        started: Option<Instant>,
        now: &mut LazyNow<'_>,
        packed: &PackedWindow,
    ) -> Option<Transition> {
        if !matches!(self.phase, Phase::HalfOpen { .. }) || generation != self.generation {
            return None;
        }
        if self.probe_hung(now) {
            return self.enter(State::Open, now, packed);
        }
        if let Some(started) = started {
            self.probes.end(started);
        }
        None
    }

    /// A new trial, with no probe out.
    fn start_trial(&mut self) {
        self.phase = Phase::TRIAL;
        self.probes.clear();
    }

    /// A packed window's result tripped the breaker in `generation` (sealing the window):
    /// opens it, unless another thread already has, or the window no longer trips.
    ///
    /// The result was judged without the lock, under the threshold it read, and a
    /// `reconfigure` may have raised the threshold since (the generation stays: the window
    /// is kept). The breaker opens only under its lock, so that is where the trip is
    /// decided, under the configuration in force: a seal is a request to open. A trip that
    /// takes the lock before the reconfigure opens the breaker, which the reconfigure then
    /// keeps open; one that takes it after is judged under the new threshold (see
    /// [`judge`](Self::judge)), and if the window does not trip, it is open to results again
    /// with every call it counted, the tripping one too.
    pub(crate) fn trip(
        &mut self,
        generation: u64,
        now: &mut LazyNow<'_>,
        packed: &PackedWindow,
    ) -> Option<Transition> {
        if generation != self.generation || self.state() != State::Closed {
            return None;
        }
        self.judge(now, packed)
    }

    /// Judges the window of this CLOSED under the configuration in force: opens the breaker
    /// if it trips; if not, a packed window, sealed by a result judged under another
    /// threshold or by a reconfigure, is open to results again in the same generation, with
    /// the same calls.
    fn judge(&mut self, now: &mut LazyNow<'_>, packed: &PackedWindow) -> Option<Transition> {
        let totals = self.totals(now, packed);
        if trips(&self.config, totals) {
            return self.enter(State::Open, now, packed);
        }
        if let Some(capacity) = self.window.packed() {
            // Sealed first, so that no result lands between reading the calls and writing
            // them back. An open window is written back as it was: a recorder that read it
            // before still swaps it, and loses nothing. (So does one that read the word
            // before a reconfigure sealed it, if nothing changed it since: only a success
            // into a full window of successes changes nothing. A failure judged under the
            // old threshold then lands unjudged, which matters only if the new threshold
            // opens a full window on one failure; the breaker then opens at its next one.)
            packed.seal();
            packed.open_with(self.generation, capacity, packed.outcomes(capacity));
        }
        None
    }

    /// Moves to an operator-chosen state. `reset` (to CLOSED) always starts a new generation
    /// with an empty window, even from CLOSED.
    pub(crate) fn set(
        &mut self,
        to: State,
        now: &mut LazyNow<'_>,
        packed: &PackedWindow,
    ) -> Option<Transition> {
        if to == self.state() && to != State::Closed {
            return None;
        }
        self.enter(to, now, packed)
    }

    /// Starts an empty packed window: it counts only in CLOSED, and only for the current
    /// generation; in another state it is sealed, empty until the next CLOSED.
    fn open_packed(&self, packed: &PackedWindow) {
        match (self.window.packed(), self.state()) {
            (Some(capacity), State::Closed) => packed.open(self.generation, capacity),
            (Some(capacity), _) => packed.sealed_with(capacity, std::iter::empty()),
            (None, _) => packed.seal(),
        }
    }

    /// Moves to `to` in a new generation. A change of state is returned, and kept for
    /// [`take_events`](Self::take_events).
    fn enter(
        &mut self,
        to: State,
        now: &mut LazyNow<'_>,
        packed: &PackedWindow,
    ) -> Option<Transition> {
        let from = self.state();
        // Leaving CLOSED: nothing recorded from here on counts (see `window::packed`).
        packed.seal();
        self.generation += 1;
        // Probes out, if any, are of the generation left.
        self.probes.clear();
        self.phase = match to {
            State::Open => {
                self.recovery.on_open(&self.config, from == State::HalfOpen);
                Phase::Open { since: now.get() }
            }
            State::HalfOpen => Phase::TRIAL,
            State::Closed => {
                self.window.clear();
                self.recovery.on_close(&self.config);
                Phase::Closed
            }
            State::ForcedOpen => {
                self.recovery.on_close(&self.config);
                Phase::ForcedOpen
            }
            State::Disabled => {
                self.recovery.on_close(&self.config);
                Phase::Disabled
            }
        };
        if to == State::Closed {
            self.open_packed(packed);
        }
        let transition = (from != to).then_some((from, to));
        if transition.is_some() {
            self.transition = transition;
        }
        transition
    }
}

/// Time left in an OPEN that began `since` and lasts `open_for`; measured from the opening so
/// that no deadline can overflow.
fn open_left(since: Instant, open_for: Duration, now: Instant) -> Duration {
    open_for.saturating_sub(now.saturating_duration_since(since))
}

/// Where a new window starts, in ticks; the clock is read only for a time window.
fn window_origin(config: &Config, now: &mut LazyNow<'_>) -> u64 {
    match config.window() {
        crate::config::Window::Time { .. } => now.ticks(),
        crate::config::Window::Count(_) => 0,
    }
}

/// Whether permits must note when their call started: slow calls or the ramp's latency guard.
fn times_calls(config: &Config) -> bool {
    config.slow_calls().is_some() || config.ramp_latency_guard().is_some()
}

/// Whether the window's counts open the breaker: its failures, or its slow calls, reach
/// their rate (see [`reaches`]).
fn trips(config: &Config, totals: Totals) -> bool {
    let min_calls = config.min_calls();
    reaches(
        totals.failures,
        totals.calls,
        min_calls,
        config.failure_rate(),
    ) || config
        .slow_calls()
        .is_some_and(|slow| reaches(totals.slow, totals.calls, min_calls, slow.rate))
}

/// The trip rule, the one place it is written: `count` of `calls` completed calls reach
/// `rate` once at least `min_calls` calls completed, on `count / calls` (not over the
/// window's size), with `>=`. The packed window's [`Threshold`] is derived from it.
#[inline]
pub(crate) fn reaches(count: u32, calls: u32, min_calls: u32, rate: f64) -> bool {
    // Rates are in (0, 1]: a count of 0 never reaches one, and needs no division.
    judged(calls, min_calls) && count != 0 && f64::from(count) / f64::from(calls) >= rate
}

/// Whether a window of `calls` completed calls is judged at all.
#[inline]
fn judged(calls: u32, min_calls: u32) -> bool {
    calls != 0 && calls >= min_calls
}

#[cfg(test)]
mod tests;
