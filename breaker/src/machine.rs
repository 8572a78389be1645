//! The state machine: states, transitions and generations, as plain data under one lock.
//!
//! Every function here takes the time as an argument and never reads a clock, and none
//! touches an atomic but through a keyed member's seat on its family's count of members out
//! of the pool (`cap.rs`, taken before a trip and given back on the way back in): where a decision needs the calls of the packed window, whose word
//! results swap without the lock, the owner of the word (`engine/packed_owner.rs`) seals it and
//! hands them in, and it writes the word as the machine asks ([`PackedWrite`]). So the rules
//! can be read, and tested, apart from concurrency.
//!
//! Beside this file: `rule.rs`, the trip rule; `reconfigure.rs`, a new configuration taken
//! in any state; `packed_write.rs`, what the machine asks of the packed window; `probes.rs`, the
//! starts of the probes out and the trial they make.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::cap::{OpenCount, Seat};
use crate::clock::LazyNow;
use crate::config::Config;
use crate::recovery::{News, Ramp, RampDecision, Recovery};
use crate::rejected::RejectReason;
use crate::transition::TransitionReason;
use crate::window::{Mark, OutcomeWindow, PackedCalls, Threshold, Totals};
use crate::State;

pub(crate) use self::packed_write::PackedWrite;
use self::probes::Probes;
use crate::rule::{judged, trips};

mod lane;
mod packed_write;
mod probes;
mod reconfigure;

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

/// A state change and why, reported to listeners once the lock is released.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Transition {
    pub(crate) from: State,
    pub(crate) to: State,
    pub(crate) reason: TransitionReason,
}

/// What an operation did that listeners and logs hear of, once the lock is released.
#[derive(Debug, Default, PartialEq)]
#[must_use = "events are emitted by the breaker once its lock is released"]
pub(crate) struct Events {
    pub(crate) transition: Option<Transition>,
    /// A ramp's step, or a trip the keyed family's cap refused.
    pub(crate) news: Option<News>,
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
    /// Rejecting for `open_for` since `since`: the recovery's open duration, or the period
    /// asked for (a pushback, a manual open period). `reason` first: the variant is laid out
    /// in order after the tag, and there it takes no room of its own.
    Open {
        reason: TransitionReason,
        since: Instant,
        open_for: Duration,
    } = State::Open.code() as u8,
    /// The trial: `admitted` probes let through and `successes` of them succeeded so far;
    /// the probes out (at most `probes` at once) are the machine's [`Probes`].
    HalfOpen {
        successes: u32,
        admitted: u32,
    } = State::HalfOpen.code() as u8,
    ForcedOpen = State::ForcedOpen.code() as u8,
    Disabled = State::Disabled.code() as u8,
    /// HALF_OPEN once the trial passed, with a ramp-up configured: a growing share of calls
    /// is admitted, step by step.
    Ramp(Ramp),
}

impl Phase {
    /// A trial that has not started: none admitted, none succeeded (and no probe out: see
    /// [`Machine::start_trial`]).
    const TRIAL: Phase = Phase::HalfOpen {
        successes: 0,
        admitted: 0,
    };

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
    /// Whether the time window's lane was opened and not closed since (see `lane.rs`).
    lane_open: bool,
    /// Whether the totals' owner was given a lane, whose count the lock takes.
    owner_lane: bool,
    /// What the operation under way asks of the packed window's word, taken by its owner
    /// (see [`take_packed_write`](Self::take_packed_write)).
    packed_write: Option<PackedWrite>,
    /// A keyed family member's seat on its family's count of members out of the pool.
    seat: Option<Seat>,
}

/// What became of a result given to [`Machine::record`].
#[derive(Debug, PartialEq)]
#[must_use = "a result for the packed window is recorded by its owner"]
pub(crate) enum Recorded {
    /// Applied, or discarded as stale: the state change it made, if any.
    Applied(Option<Transition>),
    /// A result of the current CLOSED for the packed window: the owner of the word swaps it
    /// in under the lock, judged by [`threshold`](Machine::threshold), then opens the
    /// breaker ([`tripped`](Machine::tripped)) or has a sealed window judged
    /// ([`judge`](Machine::judge)).
    ToPacked,
}

impl Machine {
    /// A closed machine in generation 0, asking for an empty packed window if it packs one.
    pub(crate) fn new(config: Arc<Config>, now: &mut LazyNow<'_>) -> Self {
        let timed = times_calls(&config);
        let window = OutcomeWindow::new(config.window(), timed, window_origin(&config, now));
        let mut machine = Self {
            recovery: Recovery::new(&config),
            window,
            config,
            phase: Phase::Closed,
            probes: Probes::default(),
            generation: 0,
            transition: None,
            configured: true,
            lane_open: false,
            owner_lane: false,
            packed_write: None,
            seat: None,
        };
        machine.empty_packed();
        machine
    }

    /// A closed machine in generation 0 whose window it always keeps itself, never packed:
    /// for a replay on one thread ([`crate::replay`]), which has no word to swap results
    /// into. A packed window and a count window under the lock judge alike.
    #[cfg(feature = "recording")]
    pub(crate) fn unpacked(config: Arc<Config>, now: &mut LazyNow<'_>) -> Self {
        let mut machine = Self::new(config, now);
        if let Some(capacity) = machine.window.packed() {
            machine.window = OutcomeWindow::Locked(crate::window::LockedWindow::Count(Box::new(
                crate::window::CountWindow::new(capacity),
            )));
        }
        machine
    }

    pub(crate) fn state(&self) -> State {
        self.phase.state()
    }

    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// The window's counts, reading the clock only for a time window; a packed window's are
    /// those of `packed`, its word's calls.
    pub(crate) fn totals(&mut self, now: &mut LazyNow<'_>, packed: PackedCalls) -> Totals {
        let timed = self.window.needs_clock().then(|| now.ticks());
        self.window.totals(timed, packed)
    }

    /// The capacity of the window when it is packed, recorded without the lock in CLOSED.
    pub(crate) fn packed_capacity(&self) -> Option<u32> {
        self.window.packed()
    }

    /// When a packed window trips: the trip rule ([`reaches`](crate::rule::reaches)) for its capacity.
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
            Phase::Open {
                since, open_for, ..
            } => Some((since, open_for)),
            _ => None,
        }
    }

    /// Why the current OPEN was entered; `None` in other states.
    pub(crate) fn open_reason(&self) -> Option<TransitionReason> {
        match self.phase {
            Phase::Open { reason, .. } => Some(reason),
            _ => None,
        }
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
            news: self.recovery.take_news(),
        }
    }

    /// Seats the machine on its keyed family's `count` (born in the family), or takes its
    /// seat away (`None`: it left the family), giving back the place it held.
    pub(crate) fn seat_on(&mut self, count: Option<Arc<OpenCount>>) {
        self.seat = count.map(|count| Seat::new(count, self.state()));
    }

    /// Whether the family's cap lets the machine move to `to` for `reason` (a plain breaker
    /// has no family: yes). A refused trip is kept for the events.
    fn seated(&mut self, to: State, reason: TransitionReason) -> bool {
        let Some(seat) = &mut self.seat else {
            return true;
        };
        match seat.enter(to, reason, self.config.max_open_percent()) {
            Ok(()) => true,
            Err(refusal) => {
                if self.recovery.trip_refused(refusal) {
                    seat.count_refusal();
                }
                false
            }
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

    /// Decides whether a call may run now; a state change it makes is among the
    /// [`take_events`](Self::take_events).
    pub(crate) fn acquire(
        &mut self,
        now: &mut LazyNow<'_>,
    ) -> Result<Admission, (RejectReason, Option<Duration>)> {
        match &mut self.phase {
            Phase::Closed => Ok(Admission::Counted),
            Phase::Disabled => Ok(Admission::Passthrough),
            Phase::ForcedOpen => Err((RejectReason::ForcedOpen, None)),
            Phase::Open {
                since,
                open_for,
                reason,
            } => {
                let left = open_left(*since, *open_for, now.get());
                if left > Duration::ZERO {
                    return Err((rejection_of(*reason), Some(left)));
                }
                // Lazy expiry: the first call at or after the deadline becomes a probe.
                self.enter(State::HalfOpen, TransitionReason::OpenElapsed, now);
                Ok(self.admit_probe(now))
            }
            Phase::Ramp(ramp) => match self.recovery.ramp_admit(ramp, &self.config, now.get()) {
                RampDecision::Admit => Ok(Admission::Ramp),
                RampDecision::Throttle => Err((RejectReason::Throttled, None)),
                RampDecision::Close => {
                    self.enter(State::Closed, TransitionReason::RampCompleted, now);
                    Ok(Admission::Counted)
                }
            },
            Phase::HalfOpen { .. } => {
                if self.probe_hung(now) {
                    self.enter(State::Open, TransitionReason::ProbeTimedOut, now);
                    return Err((RejectReason::Open, Some(self.recovery.open_for())));
                }
                if self.probes.count() >= self.config.probes() {
                    return Err((RejectReason::HalfOpenFull, None));
                }
                Ok(self.admit_probe(now))
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
    pub(crate) fn record(
        &mut self,
        generation: u64,
        admission: Admission,
        failure: bool,
        started: Option<Instant>,
        timed: bool,
        now: &mut LazyNow<'_>,
    ) -> Recorded {
        if generation != self.generation {
            return Recorded::Applied(None);
        }
        let latency = started
            .filter(|_| timed)
            .map(|started| now.get().saturating_duration_since(started));
        let slow = match (self.config.slow_calls(), latency) {
            (Some(slow), Some(latency)) => latency > slow.threshold,
            _ => false,
        };
        let mark = Mark { failure, slow };
        let changed = match (&mut self.phase, admission) {
            (Phase::Closed, Admission::Counted) => {
                let OutcomeWindow::Locked(window) = &mut self.window else {
                    return Recorded::ToPacked;
                };
                let totals = window.record(mark, now);
                // The baseline is of successful calls: the failures that open a breaker are
                // often timeouts, and would lift it to the timeout.
                if let (Some(latency), false) = (latency, failure) {
                    self.recovery.record_latency(latency, false);
                }
                match trips(&self.config, totals) {
                    Some(reason) => self.enter(State::Open, reason, now),
                    None => None,
                }
            }
            (Phase::HalfOpen { .. }, Admission::Probe) => self.record_probe(mark, started, now),
            (Phase::Ramp(_), Admission::Ramp) => {
                if mark.failure || mark.slow {
                    self.enter(State::Open, TransitionReason::ProbeFailed, now)
                } else {
                    if let Some(latency) = latency {
                        self.recovery.record_latency(latency, true);
                    }
                    None
                }
            }
            _ => None,
        };
        Recorded::Applied(changed)
    }

    /// A probe's verdict: a failure (or a slow call) reopens at once; the `successes`-th
    /// success ends the trial.
    fn record_probe(
        &mut self,
        mark: Mark,
        started: Option<Instant>,
        now: &mut LazyNow<'_>,
    ) -> Option<Transition> {
        // A probe out too long (this one, or another) failed the trial already.
        if self.probe_hung(now) {
            return self.enter(State::Open, TransitionReason::ProbeTimedOut, now);
        }
        if let Some(started) = started {
            self.probes.end(started);
        }
        if mark.failure || mark.slow {
            return self.enter(State::Open, TransitionReason::ProbeFailed, now);
        }
        let Phase::HalfOpen { successes, .. } = &mut self.phase else {
            return None;
        };
        *successes += 1;
        if *successes < self.config.successes() {
            return None;
        }
        self.trial_passed(TransitionReason::TrialPassed, now)
    }

    /// `successes` probes succeeded: the ramp's first step if one is configured, else CLOSED.
    /// Either way a new generation begins, so results of the probes still out (with
    /// `successes` below `probes`, up to `probes - successes` of them) are discarded.
    fn trial_passed(
        &mut self,
        reason: TransitionReason,
        now: &mut LazyNow<'_>,
    ) -> Option<Transition> {
        if let Some(ramp) = self.recovery.start_ramp(&self.config, now.get()) {
            // Same state, new phase: results of the probes still out are stale.
            self.generation += 1;
            self.phase = Phase::Ramp(ramp);
            self.probes.clear();
            return None;
        }
        self.enter(State::Closed, reason, now)
    }

    /// A probe admitted at `started` ended without a verdict (ignored or cancelled): it frees
    /// its slot, unless a probe out too long (this one, or another) failed the trial.
    pub(crate) fn release_probe(
        &mut self,
        generation: u64,
        started: Option<Instant>,
        now: &mut LazyNow<'_>,
    ) -> Option<Transition> {
        if !matches!(self.phase, Phase::HalfOpen { .. }) || generation != self.generation {
            return None;
        }
        if self.probe_hung(now) {
            return self.enter(State::Open, TransitionReason::ProbeTimedOut, now);
        }
        if let Some(started) = started {
            self.probes.end(started);
        }
        None
    }

    /// How long a failure's pushback of `asked` opens the breaker: capped by
    /// `pushback_max`; `None` while pushback is turned off (`pushback_max` zero), when the
    /// failure counts as any other.
    pub(crate) fn pushback_period(&self, asked: Duration) -> Option<Duration> {
        let max = self.config.pushback_max();
        (!max.is_zero()).then(|| asked.min(max))
    }

    /// A failure of a permit admitted in `generation` carried the downstream's pushback:
    /// the breaker opens at once for `period`, whatever its window says, if the permit
    /// still counts (its generation, a CLOSED call, a probe or a ramp call). The window is
    /// left as it was, and the open duration's backoff as it stands.
    pub(crate) fn pushed_back(
        &mut self,
        generation: u64,
        admission: Admission,
        period: Duration,
        now: &mut LazyNow<'_>,
    ) -> Option<Transition> {
        if generation != self.generation {
            return None;
        }
        match (&self.phase, admission) {
            (Phase::Closed, Admission::Counted)
            | (Phase::HalfOpen { .. }, Admission::Probe)
            | (Phase::Ramp(_), Admission::Ramp) => {
                self.open_for(period, TransitionReason::Pushback, now)
            }
            _ => None,
        }
    }

    /// A new trial, with no probe out.
    fn start_trial(&mut self) {
        self.phase = Phase::TRIAL;
        self.probes.clear();
    }

    /// Moves to an operator-chosen state. `reset` (to CLOSED) always starts a new generation
    /// with an empty window, even from CLOSED.
    pub(crate) fn set(&mut self, to: State, now: &mut LazyNow<'_>) -> Option<Transition> {
        if to == self.state() && to != State::Closed {
            return None;
        }
        let reason = match to {
            State::ForcedOpen => TransitionReason::Forced,
            State::Disabled => TransitionReason::Disabled,
            State::Open | State::HalfOpen => TransitionReason::ManualOpen,
            State::Closed => TransitionReason::Reset,
        };
        self.enter(to, reason, now)
    }

    /// Opens for `open_for` from now, whatever the state, for `reason`: an open period chosen
    /// by an operator or asked for by the downstream, then HALF_OPEN as after any OPEN. The
    /// open duration's backoff is left as it stands: this OPEN neither grows it nor resets
    /// it. From OPEN, the period is replaced, in a new generation, with no transition.
    pub(crate) fn open_for(
        &mut self,
        open_for: Duration,
        reason: TransitionReason,
        now: &mut LazyNow<'_>,
    ) -> Option<Transition> {
        if !self.seated(State::Open, reason) {
            return None;
        }
        let phase = Phase::Open {
            reason,
            since: now.get(),
            open_for,
        };
        self.change(phase, reason)
    }

    /// Moves to `to` in a new generation, for `reason`. A change of state is returned, and
    /// kept for [`take_events`](Self::take_events).
    fn enter(
        &mut self,
        to: State,
        reason: TransitionReason,
        now: &mut LazyNow<'_>,
    ) -> Option<Transition> {
        if !self.seated(to, reason) {
            return None;
        }
        let from = self.state();
        let phase = match to {
            State::Open => {
                let open_for = self.recovery.on_open(&self.config, from == State::HalfOpen);
                Phase::Open {
                    reason,
                    since: now.get(),
                    open_for,
                }
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
        self.change(phase, reason)
    }

    /// Leaves the current phase for `phase` in a new generation: the one place the
    /// generation moves with the state.
    fn change(&mut self, phase: Phase, reason: TransitionReason) -> Option<Transition> {
        let from = self.state();
        // Leaving CLOSED: nothing recorded from here on counts (see `window::packed`).
        self.write_packed(PackedWrite::Seal);
        self.generation += 1;
        // Probes out, if any, are of the generation left.
        self.probes.clear();
        self.phase = phase;
        let to = self.state();
        if let Some(seat) = &mut self.seat {
            seat.entered(to);
        }
        if to == State::Closed {
            self.empty_packed();
        }
        let transition = (from != to).then_some(Transition { from, to, reason });
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

#[cfg(test)]
mod tests;

/// The reason a call is rejected for in an OPEN entered for `reason`: the fleet's OPEN
/// rejects by its own reason, to be counted apart.
pub(crate) const fn rejection_of(reason: TransitionReason) -> RejectReason {
    match reason {
        TransitionReason::FleetOpen => RejectReason::FleetOpen,
        _ => RejectReason::Open,
    }
}

impl Machine {
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
}
