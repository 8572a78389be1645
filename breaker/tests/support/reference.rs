//! A small reference model of the breaker, written from the rules, and a runner that drives
//! a real breaker on a manual clock and the model with the same operations, comparing every
//! decision and every observable state.
//!
//! Plain Rust with no test-framework types, so that the property test (`tests/model.rs`) and
//! the fuzz target (`fuzz/fuzz_targets/state_machine.rs`) share it.
//!
//! The model is deliberately naive: a `VecDeque` of the last N outcomes for a count window,
//! a plain list of `(bucket index, outcome)` for a time window, and a handful of fields for
//! the state machine and progressive recovery. It is written from the rules (the core's and
//! those of progressive recovery: backoff and ramp-up), not from the implementation.
//!
//! Operations that settle a permit pick the `i`-th newest live one (modulo their number).
//! After every operation the state, the snapshot's counts, rates, rejections and admitted
//! percentage, the number of probes in flight and the half-open trial must be equal; every rejection must give
//! the same reason and the same `retry_after`, to the nanosecond.
//!
//! Choices the rules leave open, pinned down here:
//! - The window is emptied only when the breaker enters CLOSED (a reset, a successful
//!   half-open, the end of a ramp); in the other states it keeps what it held (and a time
//!   window keeps ageing it), so the snapshot shows those counts.
//! - Calls admitted by the ramp are not probes: `probes_in_flight` is 0 during the ramp, and
//!   their results never enter the window.
//! - The trial (`Snapshot::trial`) is shown in HALF_OPEN until the probes pass (not during
//!   the ramp): every probe admitted since the breaker half-opened, those still out, and
//!   the successes counted; a new generation (a reopening, a passed trial) starts it again.
//! - The ramp's latency guard is left out: it depends on a latency estimate that a model
//!   would have to copy from the implementation, so generated configurations never set it
//!   (`tests/recovery.rs` tests it directly).
//! - The bulkhead is asked before the state, in every state: a full one rejects with
//!   `Bulkhead`; a call the state rejects holds no slot; every admitted call holds one until
//!   it is settled, however (a result, a drop, a panic), and whatever became of the breaker.
//!   A new limit leaves the calls in flight counted.
//! - A probe out for `probe_timeout` or longer (at or after its start plus the limit) fails
//!   its trial at the next acquire (rejected as OPEN, with the new period) or the next
//!   settling of a probe of the trial (that result discarded); a new `probe_timeout`
//!   applies to the probes out.
//! - A manual open period (`Breaker::open_for`, or `open_until` an instant of the clock: an
//!   instant already past opens for no time) opens for exactly its length from any state,
//!   in a new generation; from OPEN it replaces the period with no transition. It leaves the
//!   backoff as it stands: the next failed trial grows the open duration from the last one
//!   the recovery set, as if the period had not been.
//! - A failure that carried a pushback (`Permit::failure_with_pushback`, under the default
//!   `pushback_max`) opens the breaker at once for the pushback's length, if its permit still
//!   counts (its generation, not a passthrough), whatever the window says: as a manual open
//!   period, the probes out and the ramp abandoned, the backoff left as it stands; a zero
//!   pushback, or one of a permit that no longer counts, is a plain failure.
//! - Every state change says why, and the listeners hear the same changes, reasons
//!   included, as the model makes: a trip of the window for its failure rate (told first
//!   when both rates are reached) or its slow-call rate, or after a reconfiguration for
//!   `Reconfigured`; the end of OPEN; a failed or slow probe or ramp call; a hung probe; the
//!   trial passed, by its probes or a reconfiguration; the ramp's end; the operator's actions.

use std::collections::VecDeque;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;
use std::time::Duration;

use breakerbox::clock::ManualClock;
use std::sync::{Arc, Mutex};

use breakerbox::{
    config::ConfigError, events::Event, events::TransitionReason, snapshot::RejectedBy, Breaker,
    Config, Permit, RejectReason, State,
};

// ---------------------------------------------------------------------------------------
// Configurations
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
pub enum WindowSpec {
    Count { calls: u32 },
    Time { span_ms: u64, buckets: u32 },
}

#[derive(Clone, Debug)]
pub struct Spec {
    pub window: WindowSpec,
    pub min_calls: u32,
    pub failure_rate: f64,
    /// Slow-call threshold and rate.
    pub slow: Option<(u64, f64)>,
    pub open_ms: u64,
    pub probes: u32,
    /// Probe successes that end the trial; `probes` when `None`.
    pub successes: Option<u32>,
    /// Backoff factor and longest OPEN.
    pub backoff: Option<(f64, u64)>,
    /// Ramp-up percentages and step length.
    pub ramp: Option<(Vec<u32>, u64)>,
    /// The bulkhead's limit of calls in flight.
    pub max_concurrent: Option<u32>,
    /// How long a probe may be out; 60 s when `None` (the default, with no call timeout).
    pub probe_timeout_ms: Option<u64>,
}

impl Spec {
    pub fn config(&self) -> Result<Config, ConfigError> {
        let mut b = Config::builder();
        b = match self.window {
            WindowSpec::Count { calls } => b.count_window(calls),
            WindowSpec::Time { span_ms, buckets } => {
                b.time_window(Duration::from_millis(span_ms), buckets)
            }
        };
        b = b
            .min_calls(self.min_calls)
            .failure_rate(self.failure_rate)
            .open_for(Duration::from_millis(self.open_ms))
            .probes(self.probes);
        if let Some(successes) = self.successes {
            b = b.successes(successes);
        }
        if let Some((threshold_ms, rate)) = self.slow {
            b = b.slow_calls(Duration::from_millis(threshold_ms), rate);
        }
        if let Some((factor, max_ms)) = self.backoff {
            b = b.open_backoff(factor, Duration::from_millis(max_ms));
        }
        if let Some((percents, step_ms)) = &self.ramp {
            b = b.ramp_up(percents, Duration::from_millis(*step_ms));
        }
        if let Some(calls) = self.max_concurrent {
            b = b.max_concurrent(calls);
        }
        if let Some(ms) = self.probe_timeout_ms {
            b = b.probe_timeout(Duration::from_millis(ms));
        }
        b.build()
    }

    fn probe_timeout(&self) -> Duration {
        Duration::from_millis(self.probe_timeout_ms.unwrap_or(60_000))
    }
}

// ---------------------------------------------------------------------------------------
// Operations
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
pub enum Op {
    Acquire,
    Success(usize),
    Failure(usize),
    Ignore(usize),
    Drop(usize),
    /// Drop the permit while the thread unwinds from a panic: a failure.
    PanicDrop(usize),
    /// Let more than the slow threshold pass, then report a success.
    SlowSuccess(usize),
    Advance(u64),
    ForceOpen,
    Disable,
    Reset,
    /// Reconfigure the breaker with this failure rate, the rest of its configuration kept.
    Retune(f64),
    /// Reconfigure the breaker to end its trials after `n % probes + 1` probe successes.
    Successes(u32),
    /// Reconfigure the breaker with slow calls turned off, or back on: as the spec sets them,
    /// or at 250 ms and 0.5 if it sets none.
    ToggleSlow,
    /// Reconfigure the breaker with this bulkhead limit, or none.
    Limit(Option<u32>),
    /// Reconfigure the breaker with this `probe_timeout`, in milliseconds.
    ProbeTimeout(u64),
    /// Open the breaker for this many milliseconds (`Breaker::open_for`).
    OpenFor(u64),
    /// Report a failure that carried a pushback of this many milliseconds.
    PushbackFailure(usize, u64),
    /// Open the breaker until this many milliseconds from now (`Breaker::open_until`); an
    /// instant already past (a negative number) opens it for no time.
    OpenUntil(i64),
}

// ---------------------------------------------------------------------------------------
// The reference model
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Admitted in CLOSED: its outcome goes into the window.
    Counted,
    /// A half-open probe.
    Probe,
    /// Admitted by a step of the ramp-up.
    Ramp,
    /// Admitted while disabled: records nothing.
    Passthrough,
}

#[derive(Clone, Copy, Debug)]
pub struct ModelPermit {
    generation: u64,
    kind: Kind,
    acquired_at: Duration,
    /// Admitted while slow calls were judged: only such a call can be slow.
    timed: bool,
    /// Holds a bulkhead slot.
    slot: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Success,
    Failure,
    /// Ignored, or dropped without a result: the same thing to the breaker.
    Ignored,
}

#[derive(Clone, Copy, Debug)]
struct Done {
    failure: bool,
    slow: bool,
}

/// The ramp-up in progress: which step, since when, and how many calls asked in it.
#[derive(Clone, Copy, Debug)]
struct Ramp {
    step: usize,
    started: Duration,
    asked: u64,
}

#[derive(Debug)]
pub struct Model {
    pub spec: Spec,
    /// Time since the breaker was created.
    pub now: Duration,
    state: State,
    generation: u64,
    /// Count window: the last `calls` completed outcomes, oldest first.
    recent: VecDeque<Done>,
    /// Time window: every completed outcome with the bucket index it completed in.
    timed: Vec<(u64, Done)>,
    opened_at: Duration,
    /// How long the current OPEN lasts.
    period: Duration,
    /// How long the OPEN the recovery set last lasts: grown by the next failed trial.
    open_for: Duration,
    /// When each probe of the trial still out was admitted.
    probes_out: Vec<Duration>,
    /// Probes admitted in the trial under way, ended or not.
    probes_admitted: u32,
    probe_successes: u32,
    ramp: Option<Ramp>,
    /// Admitted calls not yet settled that hold a bulkhead slot.
    pub slots: u32,
    /// Rejections by reason: open, half-open full, forced open, throttled, bulkhead.
    rejected: [u64; 5],
    /// Permits settled, by how: success, failure, ignored, cancelled (the breaker's totals).
    pub ended: [u64; 4],
    /// Every state change, with its reason.
    transitions: Vec<(State, State, TransitionReason)>,
    pub seen: Seen,
}

#[derive(Debug, PartialEq)]
pub struct Observed {
    state: State,
    calls: u32,
    failures: u32,
    slow_calls: u32,
    failure_rate: Option<f64>,
    rejected: u64,
    /// Rejections by reason: open, half-open full, forced open, throttled, bulkhead.
    rejected_by: [u64; 5],
    /// The lifetime totals: success, failure, ignored, cancelled.
    ended: [u64; 4],
    admit_percent: u32,
    probes_in_flight: u32,
    in_flight: u32,
    /// The half-open trial: probes admitted, in flight, succeeded.
    trial: Option<(u32, u32, u32)>,
}

pub type Refusal = (RejectReason, Option<Duration>);

/// How far a run went: what the model saw happen, so that a test can check that generated
/// sequences reach every phase instead of passing vacuously.
#[derive(Clone, Copy, Debug, Default)]
pub struct Seen {
    pub opened_by_window: u32,
    /// Opened by a reconfiguration whose lower rate the window already reached.
    pub opened_by_retune: u32,
    pub half_opened: u32,
    pub closed_by_probes: u32,
    /// Trials that ended with probes still out (`successes` below `probes`).
    pub passed_with_probes_out: u32,
    /// Trials that a reconfiguration with fewer `successes` ended.
    pub passed_by_reconfiguring: u32,
    /// Slow calls turned off while the window held slow marks, which were dropped.
    pub slow_marks_dropped: u32,
    pub ramps_started: u32,
    pub ramp_steps_climbed: u32,
    pub closed_by_ramp: u32,
    pub reopened_by_ramp: u32,
    /// OPEN periods longer than `open_for`.
    pub backed_off: u32,
    pub throttled: u32,
    pub stale_results: u32,
    pub bulkhead_rejections: u32,
    /// Trials failed by a probe out past `probe_timeout`, told by an acquire or a result.
    pub hung_probes_told_by_acquire: u32,
    pub hung_probes_told_by_result: u32,
    /// Manual open periods started, and those that replaced an OPEN's.
    pub manual_opens: u32,
    pub manual_opens_in_open: u32,
    /// Failures whose pushback opened the breaker.
    pub pushbacks: u32,
}

impl Model {
    pub fn new(spec: Spec) -> Self {
        let open_for = Duration::from_millis(spec.open_ms);
        Self {
            spec,
            now: Duration::ZERO,
            state: State::Closed,
            generation: 0,
            recent: VecDeque::new(),
            timed: Vec::new(),
            opened_at: Duration::ZERO,
            period: open_for,
            open_for,
            probes_out: Vec::new(),
            probes_admitted: 0,
            probe_successes: 0,
            ramp: None,
            slots: 0,
            rejected: [0; 5],
            ended: [0; 4],
            transitions: Vec::new(),
            seen: Seen::default(),
        }
    }

    fn configured_open_for(&self) -> Duration {
        Duration::from_millis(self.spec.open_ms)
    }

    fn bucket_index(&self, at: Duration) -> u64 {
        match self.spec.window {
            WindowSpec::Time { span_ms, buckets } => {
                let width = Duration::from_millis(span_ms) / buckets;
                (at.as_nanos() / width.as_nanos()) as u64
            }
            WindowSpec::Count { .. } => 0,
        }
    }

    /// Outcomes currently in the window.
    fn window(&self) -> Vec<Done> {
        match self.spec.window {
            WindowSpec::Count { .. } => self.recent.iter().copied().collect(),
            WindowSpec::Time { buckets, .. } => {
                let current = self.bucket_index(self.now);
                self.timed
                    .iter()
                    .filter(|(index, _)| current - index < u64::from(buckets))
                    .map(|(_, done)| *done)
                    .collect()
            }
        }
    }

    fn totals(&self) -> (u32, u32, u32) {
        let w = self.window();
        let calls = w.len() as u32;
        let failures = w.iter().filter(|d| d.failure).count() as u32;
        let slow = w.iter().filter(|d| d.slow).count() as u32;
        (calls, failures, slow)
    }

    fn failure_rate(&self) -> Option<f64> {
        let (calls, failures, _) = self.totals();
        if calls == 0 || calls < self.spec.min_calls {
            None
        } else {
            Some(f64::from(failures) / f64::from(calls))
        }
    }

    fn ramp_percents(&self) -> &[u32] {
        match &self.spec.ramp {
            Some((percents, _)) => percents,
            None => &[],
        }
    }

    fn admit_percent(&self) -> u32 {
        match self.ramp {
            Some(ramp) => self.ramp_percents()[ramp.step],
            None => 100,
        }
    }

    fn observe(&self) -> Observed {
        let (calls, failures, slow_calls) = self.totals();
        Observed {
            state: self.state,
            calls,
            failures,
            slow_calls,
            failure_rate: self.failure_rate(),
            rejected: self.rejected.iter().sum(),
            rejected_by: self.rejected,
            ended: self.ended,
            admit_percent: self.admit_percent(),
            probes_in_flight: self.probes_out.len() as u32,
            in_flight: self.slots,
            trial: (self.state == State::HalfOpen && self.ramp.is_none()).then(|| {
                let in_flight = self.probes_out.len() as u32;
                (self.probes_admitted, in_flight, self.probe_successes)
            }),
        }
    }

    /// What a breaker must show, enforcing or as a shadow: a shadow rejects nothing, so it
    /// counts no rejection by reason (its shadow rejections are compared with the model's
    /// rejections, see `observe_as`).
    pub fn observe_as(&self, shadow: bool) -> Observed {
        let mut observed = self.observe();
        if shadow {
            observed.rejected_by = [0; 5];
        }
        observed
    }

    /// A state change, or a reset: new generation, no probes, no ramp. CLOSED starts empty;
    /// closing and every operator action forget the backoff.
    fn enter(&mut self, to: State, reason: TransitionReason) {
        if self.state != to {
            self.transitions.push((self.state, to, reason));
        }
        self.state = to;
        self.generation += 1;
        self.probes_out.clear();
        self.probes_admitted = 0;
        self.probe_successes = 0;
        self.ramp = None;
        match to {
            State::Open => {
                self.opened_at = self.now;
                self.period = self.open_for;
            }
            State::Closed => {
                self.recent.clear();
                self.timed.clear();
                self.open_for = self.configured_open_for();
            }
            State::ForcedOpen | State::Disabled => self.open_for = self.configured_open_for(),
            State::HalfOpen => {}
            other => unreachable!("the model knows no state {other:?}"),
        }
    }

    /// Opens after the window tripped in CLOSED: the first OPEN after CLOSED lasts `open_for`.
    fn trip(&mut self, reason: TransitionReason) {
        self.seen.opened_by_window += 1;
        self.open_for = self.configured_open_for();
        self.enter(State::Open, reason);
    }

    /// A manual open period: OPEN for `period` from now, the backoff left as it stands.
    fn open_manually(&mut self, period: Duration) {
        self.seen.manual_opens += 1;
        if self.state == State::Open {
            self.seen.manual_opens_in_open += 1;
        }
        self.enter(State::Open, TransitionReason::ManualOpen);
        self.period = period;
    }

    /// A failure that carried a pushback of `period`.
    fn pushed_back(&mut self, permit: ModelPermit, period: Duration) {
        if period.is_zero()
            || permit.kind == Kind::Passthrough
            || permit.generation != self.generation
        {
            return self.complete(permit, Verdict::Failure);
        }
        self.slots -= u32::from(permit.slot);
        self.seen.pushbacks += 1;
        self.enter(State::Open, TransitionReason::Pushback);
        self.period = period;
    }

    /// Opens after a failed half-open trial: the next OPEN lasts `factor` times the previous
    /// one, up to the max.
    fn trial_failed(&mut self, reason: TransitionReason) {
        self.open_for = match self.spec.backoff {
            Some((factor, max_ms)) => self
                .open_for
                .mul_f64(factor)
                .min(Duration::from_millis(max_ms)),
            None => self.configured_open_for(),
        };
        if self.open_for > self.configured_open_for() {
            self.seen.backed_off += 1;
        }
        if self.ramp.is_some() {
            self.seen.reopened_by_ramp += 1;
        }
        self.enter(State::Open, reason);
    }

    fn admit(&self, kind: Kind) -> ModelPermit {
        ModelPermit {
            generation: self.generation,
            kind,
            acquired_at: self.now,
            timed: self.spec.slow.is_some(),
            slot: false,
        }
    }

    /// A probe of the trial has been out for `probe_timeout` or longer.
    fn probe_hung(&self) -> bool {
        let limit = self.spec.probe_timeout();
        self.probes_out.iter().any(|&at| self.now - at >= limit)
    }

    /// The bulkhead first: full, it rejects; else the state decides, and an admitted call
    /// takes a slot.
    fn acquire(&mut self) -> Result<ModelPermit, Refusal> {
        let slot = self.bulkhead()?;
        let mut outcome = self.admit_by_state();
        if let Ok(permit) = &mut outcome {
            permit.slot = slot;
            self.slots += u32::from(slot);
        }
        outcome
    }

    /// The bulkhead's part of an acquire: full, it rejects (counted); else whether the call
    /// is to take a slot.
    pub fn bulkhead(&mut self) -> Result<bool, Refusal> {
        match self.spec.max_concurrent {
            Some(limit) if self.slots >= limit => {
                self.seen.bulkhead_rejections += 1;
                self.rejected[4] += 1;
                Err((RejectReason::Bulkhead, None))
            }
            limit => Ok(limit.is_some()),
        }
    }

    /// The state's part of an acquire: a permit holding no slot, or a rejection (counted).
    pub fn admit_by_state(&mut self) -> Result<ModelPermit, Refusal> {
        let outcome = self.acquire_in_state();
        if let Err((reason, _)) = &outcome {
            let i = match reason {
                RejectReason::Open => 0,
                RejectReason::HalfOpenFull => 1,
                RejectReason::ForcedOpen => 2,
                RejectReason::Throttled => 3,
                other => panic!("the state rejected with {other:?}"),
            };
            self.rejected[i] += 1;
        }
        outcome
    }

    fn acquire_in_state(&mut self) -> Result<ModelPermit, Refusal> {
        match self.state {
            State::Closed => Ok(self.admit(Kind::Counted)),
            State::Disabled => Ok(self.admit(Kind::Passthrough)),
            State::ForcedOpen => Err((RejectReason::ForcedOpen, None)),
            State::Open => {
                let elapsed = self.now - self.opened_at;
                if elapsed < self.period {
                    Err((RejectReason::Open, Some(self.period - elapsed)))
                } else {
                    self.seen.half_opened += 1;
                    self.enter(State::HalfOpen, TransitionReason::OpenElapsed);
                    self.probes_out.push(self.now);
                    self.probes_admitted += 1;
                    Ok(self.admit(Kind::Probe))
                }
            }
            State::HalfOpen if self.ramp.is_some() => self.ramp_acquire(),
            State::HalfOpen => {
                if self.probe_hung() {
                    self.seen.hung_probes_told_by_acquire += 1;
                    self.trial_failed(TransitionReason::ProbeTimedOut);
                    Err((RejectReason::Open, Some(self.open_for)))
                } else if (self.probes_out.len() as u32) < self.spec.probes {
                    self.probes_out.push(self.now);
                    self.probes_admitted += 1;
                    Ok(self.admit(Kind::Probe))
                } else {
                    Err((RejectReason::HalfOpenFull, None))
                }
            }
            other => unreachable!("the model knows no state {other:?}"),
        }
    }

    /// One call during the ramp: first the lazy move to the next step (or to CLOSED), then
    /// the n-th call of a step at p% is admitted iff floor(n*p/100) > floor((n-1)*p/100).
    fn ramp_acquire(&mut self) -> Result<ModelPermit, Refusal> {
        let (steps, step_len) = match &self.spec.ramp {
            Some((percents, step_ms)) => (percents.len(), Duration::from_millis(*step_ms)),
            None => unreachable!("a ramp runs only when configured"),
        };
        let mut ramp = self.ramp.expect("ramping");
        if self.now - ramp.started >= step_len {
            if ramp.step + 1 == steps {
                self.seen.closed_by_ramp += 1;
                self.enter(State::Closed, TransitionReason::RampCompleted);
                return Ok(self.admit(Kind::Counted));
            }
            ramp = Ramp {
                step: ramp.step + 1,
                started: self.now,
                asked: 0,
            };
            self.seen.ramp_steps_climbed += 1;
        }
        ramp.asked += 1;
        self.ramp = Some(ramp);
        let percent = u64::from(self.ramp_percents()[ramp.step]);
        let n = ramp.asked;
        if n * percent / 100 > (n - 1) * percent / 100 {
            Ok(self.admit(Kind::Ramp))
        } else {
            self.seen.throttled += 1;
            Err((RejectReason::Throttled, None))
        }
    }

    pub fn complete(&mut self, permit: ModelPermit, result: Verdict) {
        self.slots -= u32::from(permit.slot);
        if permit.kind == Kind::Passthrough {
            return;
        }
        if permit.generation != self.generation {
            self.seen.stale_results += 1;
            return;
        }
        if permit.kind == Kind::Probe {
            if self.probe_hung() {
                self.seen.hung_probes_told_by_result += 1;
                self.trial_failed(TransitionReason::ProbeTimedOut);
                return;
            }
            let at = self
                .probes_out
                .iter()
                .position(|&at| at == permit.acquired_at);
            self.probes_out
                .remove(at.expect("a probe of the trial is out"));
        }
        let slow = match self.spec.slow {
            Some((threshold_ms, _)) if permit.timed => {
                self.now - permit.acquired_at > Duration::from_millis(threshold_ms)
            }
            _ => false,
        };
        match (permit.kind, result) {
            (_, Verdict::Ignored) => {}
            (Kind::Counted, _) => {
                assert_eq!(self.state, State::Closed, "same generation, same state");
                let done = Done {
                    failure: result == Verdict::Failure,
                    slow,
                };
                match self.spec.window {
                    WindowSpec::Count { calls } => {
                        self.recent.push_back(done);
                        if self.recent.len() > calls as usize {
                            self.recent.pop_front();
                        }
                    }
                    WindowSpec::Time { .. } => {
                        let index = self.bucket_index(self.now);
                        self.timed.push((index, done));
                    }
                }
                if let Some(reason) = self.trips() {
                    self.trip(reason);
                }
            }
            (Kind::Probe, _) => {
                assert_eq!(self.state, State::HalfOpen, "same generation, same state");
                if result == Verdict::Failure || slow {
                    self.trial_failed(TransitionReason::ProbeFailed);
                } else {
                    self.probe_successes += 1;
                    if self.probe_successes == self.successes() {
                        self.probes_succeeded(TransitionReason::TrialPassed);
                    }
                }
            }
            (Kind::Ramp, _) => {
                assert!(self.ramp.is_some(), "same generation, same ramp");
                if result == Verdict::Failure || slow {
                    self.trial_failed(TransitionReason::ProbeFailed);
                }
            }
            (Kind::Passthrough, _) => unreachable!(),
        }
    }

    fn successes(&self) -> u32 {
        self.spec.successes.unwrap_or(self.spec.probes)
    }

    /// `successes` probes succeeded: CLOSED, or with a ramp, HALF_OPEN in a new generation at
    /// the ramp's first step, so that results of probes still out are discarded.
    fn probes_succeeded(&mut self, reason: TransitionReason) {
        if !self.probes_out.is_empty() {
            self.seen.passed_with_probes_out += 1;
        }
        if self.spec.ramp.is_none() {
            self.seen.closed_by_probes += 1;
            self.enter(State::Closed, reason);
            return;
        }
        self.seen.ramps_started += 1;
        self.generation += 1;
        self.probes_out.clear();
        self.probes_admitted = 0;
        self.probe_successes = 0;
        self.ramp = Some(Ramp {
            step: 0,
            started: self.now,
            asked: 0,
        });
    }

    /// Whether the window trips, and why: its failure rate first.
    fn trips(&self) -> Option<TransitionReason> {
        let (calls, failures, slow) = self.totals();
        if calls == 0 || calls < self.spec.min_calls {
            return None;
        }
        let calls = f64::from(calls);
        let by_failures = f64::from(failures) / calls >= self.spec.failure_rate;
        let by_slowness = match self.spec.slow {
            Some((_, rate)) => f64::from(slow) / calls >= rate,
            None => false,
        };
        if by_failures {
            Some(TransitionReason::FailureRate)
        } else if by_slowness {
            Some(TransitionReason::SlowCallRate)
        } else {
            None
        }
    }

    /// After any reconfiguration, a CLOSED window is judged at once under the new
    /// configuration, and opens as a result would open it, for `Reconfigured`.
    fn judge_reconfigured(&mut self) -> bool {
        let trips = self.state == State::Closed && self.trips().is_some();
        if trips {
            self.trip(TransitionReason::Reconfigured);
        }
        trips
    }

    /// A new `successes`: the probe successes already counted are kept, and a trial they
    /// pass under the new value ends at once.
    fn resucceed(&mut self, successes: u32) {
        self.spec.successes = Some(successes);
        let probing = self.state == State::HalfOpen && self.ramp.is_none();
        if probing && self.probe_successes >= successes {
            self.seen.passed_by_reconfiguring += 1;
            self.probes_succeeded(TransitionReason::Reconfigured);
        }
        // As after any reconfiguration, a CLOSED window is judged at once: a time window
        // whose expired buckets left it tripping opens now.
        self.judge_reconfigured();
    }

    /// Slow calls turned on or off. Turned off, the window's slow marks are dropped, so that
    /// turning them on again counts none of the old ones; a CLOSED window is then judged,
    /// as after any reconfiguration.
    fn set_slow(&mut self, slow: Option<(u64, f64)>) {
        self.spec.slow = slow;
        if slow.is_none() {
            let marks = self
                .recent
                .iter_mut()
                .chain(self.timed.iter_mut().map(|(_, d)| d));
            let mut dropped = false;
            for done in marks {
                dropped |= done.slow;
                done.slow = false;
            }
            self.seen.slow_marks_dropped += u32::from(dropped);
        }
        self.judge_reconfigured();
    }

    pub fn force_open(&mut self) {
        if self.state != State::ForcedOpen {
            self.enter(State::ForcedOpen, TransitionReason::Forced);
        }
    }

    pub fn disable(&mut self) {
        if self.state != State::Disabled {
            self.enter(State::Disabled, TransitionReason::Disabled);
        }
    }

    pub fn reset(&mut self) {
        self.enter(State::Closed, TransitionReason::Reset);
    }

    /// A new bulkhead limit, or none: the calls in flight keep their slots; a CLOSED window
    /// is judged at once, as after any reconfiguration.
    fn relimit(&mut self, limit: Option<u32>) {
        self.spec.max_concurrent = limit;
        self.judge_reconfigured();
    }

    /// A new `probe_timeout`, which the probes out are judged by from now on; a CLOSED
    /// window is judged at once, as after any reconfiguration.
    fn set_probe_timeout(&mut self, ms: u64) {
        self.spec.probe_timeout_ms = Some(ms);
        self.judge_reconfigured();
    }

    /// A new failure rate; the state is kept, but a CLOSED window is judged at once under
    /// it, and opens as a result would open it.
    fn retune(&mut self, failure_rate: f64) {
        self.spec.failure_rate = failure_rate;
        if self.judge_reconfigured() {
            self.seen.opened_by_retune += 1;
        }
    }
}

// ---------------------------------------------------------------------------------------
// The runner
// ---------------------------------------------------------------------------------------

fn observe(b: &Breaker) -> Observed {
    let s = b.snapshot();
    Observed {
        state: s.state,
        calls: s.calls,
        failures: s.failures,
        slow_calls: s.slow_calls,
        failure_rate: s.failure_rate,
        rejected: s.rejected,
        rejected_by: {
            let RejectedBy {
                open,
                half_open_full,
                forced_open,
                throttled,
                bulkhead,
                ..
            } = s.totals.rejected_by;
            [open, half_open_full, forced_open, throttled, bulkhead]
        },
        ended: [
            s.totals.success,
            s.totals.failure,
            s.totals.ignored,
            s.totals.cancelled,
        ],
        admit_percent: s.admit_percent,
        probes_in_flight: b.probes_in_flight(),
        in_flight: b.in_flight(),
        trial: s.trial.map(|t| (t.admitted, t.in_flight, t.succeeded)),
    }
}

/// The payload of the panics `drop_panicking` raises and catches; the panic hook keeps quiet
/// about them.
const PANIC_MARK: &str = "a call panicked while holding its permit";

/// Drops `permit` while unwinding from a panic, as a call that panics does.
fn drop_panicking(permit: Permit<'_>) {
    static QUIET_HOOK: Once = Once::new();
    QUIET_HOOK.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<&str>() != Some(&PANIC_MARK) {
                default(info);
            }
        }));
    });
    let unwound = panic::catch_unwind(AssertUnwindSafe(move || {
        let _held = permit;
        panic::panic_any(PANIC_MARK);
    }));
    assert!(unwound.is_err());
}

type Live<'b> = Vec<(Permit<'b>, ModelPermit)>;

/// How a permit was settled, as the breaker's lifetime totals count it.
#[derive(Clone, Copy)]
pub enum Ended {
    Success,
    Failure,
    Ignored,
    Cancelled,
}

/// Settles the `i`-th newest live permit (modulo their number) on both sides, if any.
fn settle<'b>(
    live: &mut Live<'b>,
    model: &mut Model,
    i: usize,
    (verdict, ended): (Verdict, Ended),
    how: fn(Permit<'b>),
) {
    if live.is_empty() {
        return;
    }
    let (permit, mp) = live.remove(live.len() - 1 - i % live.len());
    how(permit);
    model.ended[ended as usize] += 1;
    model.complete(mp, verdict);
}

const SUCCESS: (Verdict, Ended) = (Verdict::Success, Ended::Success);
const FAILURE: (Verdict, Ended) = (Verdict::Failure, Ended::Failure);

macro_rules! agree {
    ($real:expr, $model:expr, $($context:tt)*) => {{
        let (real, model) = (&$real, &$model);
        if real != model {
            return Err(format!(
                "{}: breaker {:?}, model {:?}",
                format_args!($($context)*),
                real,
                model
            ));
        }
    }};
}

/// Runs `ops` against a breaker built from `spec` and against the model, comparing after
/// every step; the error names the first step where they differ.
pub fn run(spec: &Spec, ops: &[Op]) -> Result<(), String> {
    run_and_count(spec, ops).map(|_| ())
}

/// [`run`], also telling what the model saw happen.
pub fn run_and_count(spec: &Spec, ops: &[Op]) -> Result<Seen, String> {
    run_as(spec, ops, false)
}

/// Runs `ops` against a shadow breaker built from `spec` and against the (enforcing) model:
/// the shadow admits every call, and must move exactly as the model does. A call the model
/// rejects is admitted by the shadow as a shadow rejection; it is settled by the next
/// operation that settles a permit, as that one is, at a later time and whatever the state
/// by then, and its result must change nothing but the totals of how calls ended.
pub fn run_shadow(spec: &Spec, ops: &[Op]) -> Result<Seen, String> {
    run_as(spec, ops, true)
}

fn run_as(spec: &Spec, ops: &[Op], shadow: bool) -> Result<Seen, String> {
    let config_of = |spec: &Spec| {
        spec.config()
            .and_then(|c| c.to_builder().shadow(shadow).build())
    };
    let config = config_of(spec).map_err(|e| format!("invalid spec: {e}"))?;
    let clock = ManualClock::new();
    let b = Breaker::with_clock("model", config, clock.clone());
    let heard = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&heard);
    b.on_event(move |e: &Event| {
        if let Event::StateTransition {
            from, to, reason, ..
        } = e
        {
            log.lock().unwrap().push((*from, *to, *reason));
        }
    });
    let mut model = Model::new(spec.clone());
    let mut live: Live<'_> = Vec::new();
    // The shadow's: calls the model rejected, oldest first, and how those settled ended.
    let mut shadowed: Vec<Permit<'_>> = Vec::new();
    let mut shadow_ended = [0_u64; 4];

    for (step, &op) in ops.iter().enumerate() {
        match op {
            Op::Acquire => match (b.try_acquire(), model.acquire()) {
                (Ok(permit), Ok(mp)) => live.push((permit, mp)),
                (Ok(permit), Err(_)) if shadow => shadowed.push(permit),
                (Err(rejected), Err((reason, retry_after))) => {
                    agree!(rejected.reason(), reason, "step {step}: {op:?}: reason");
                    agree!(
                        rejected.retry_after(),
                        retry_after,
                        "step {step}: {op:?}: retry_after"
                    );
                    agree!(rejected.name(), "model", "step {step}: {op:?}: name");
                }
                (real, expected) => {
                    return Err(format!(
                        "step {step}: acquire: breaker {:?}, model {:?}",
                        real.map(|_| ()),
                        expected.map(|_| ())
                    ));
                }
            },
            Op::Success(i) => {
                settle(&mut live, &mut model, i, SUCCESS, |p| p.success());
                settle_shadowed(&mut shadowed, &mut shadow_ended, Ended::Success, |p| {
                    p.success()
                });
            }
            Op::Failure(i) => {
                settle(&mut live, &mut model, i, FAILURE, |p| p.failure());
                settle_shadowed(&mut shadowed, &mut shadow_ended, Ended::Failure, |p| {
                    p.failure()
                });
            }
            Op::Ignore(i) => {
                let ignored = (Verdict::Ignored, Ended::Ignored);
                settle(&mut live, &mut model, i, ignored, |p| p.ignore());
                settle_shadowed(&mut shadowed, &mut shadow_ended, Ended::Ignored, |p| {
                    p.ignore()
                });
            }
            Op::Drop(i) => {
                let cancelled = (Verdict::Ignored, Ended::Cancelled);
                settle(&mut live, &mut model, i, cancelled, drop);
                settle_shadowed(&mut shadowed, &mut shadow_ended, Ended::Cancelled, drop);
            }
            Op::PanicDrop(i) => {
                settle(&mut live, &mut model, i, FAILURE, drop_panicking);
                settle_shadowed(
                    &mut shadowed,
                    &mut shadow_ended,
                    Ended::Failure,
                    drop_panicking,
                );
            }
            Op::SlowSuccess(i) => {
                if let Some((threshold_ms, _)) = model.spec.slow {
                    let by = Duration::from_millis(threshold_ms + 1);
                    clock.advance(by);
                    model.now += by;
                }
                settle(&mut live, &mut model, i, SUCCESS, |p| p.success());
                settle_shadowed(&mut shadowed, &mut shadow_ended, Ended::Success, |p| {
                    p.success()
                });
            }
            Op::Advance(ms) => {
                clock.advance(Duration::from_millis(ms));
                model.now += Duration::from_millis(ms);
            }
            Op::ForceOpen => {
                b.force_open();
                model.force_open();
            }
            Op::Disable => {
                b.disable();
                model.disable();
            }
            Op::Reset => {
                b.reset();
                model.reset();
            }
            Op::Retune(failure_rate) => {
                let retuned = Spec {
                    failure_rate,
                    ..model.spec.clone()
                };
                let config = config_of(&retuned).map_err(|e| format!("step {step}: {e}"))?;
                b.reconfigure(config);
                model.retune(failure_rate);
            }
            Op::Successes(n) => {
                let successes = n % model.spec.probes + 1;
                let retuned = Spec {
                    successes: Some(successes),
                    ..model.spec.clone()
                };
                let config = config_of(&retuned).map_err(|e| format!("step {step}: {e}"))?;
                b.reconfigure(config);
                model.resucceed(successes);
            }
            Op::ToggleSlow => {
                let slow = match model.spec.slow {
                    Some(_) => None,
                    None => Some(spec.slow.unwrap_or((250, 0.5))),
                };
                let retuned = Spec {
                    slow,
                    ..model.spec.clone()
                };
                let config = config_of(&retuned).map_err(|e| format!("step {step}: {e}"))?;
                b.reconfigure(config);
                model.set_slow(slow);
            }
            Op::Limit(limit) => {
                let retuned = Spec {
                    max_concurrent: limit,
                    ..model.spec.clone()
                };
                let config = config_of(&retuned).map_err(|e| format!("step {step}: {e}"))?;
                b.reconfigure(config);
                model.relimit(limit);
            }
            Op::ProbeTimeout(ms) => {
                let retuned = Spec {
                    probe_timeout_ms: Some(ms),
                    ..model.spec.clone()
                };
                let config = config_of(&retuned).map_err(|e| format!("step {step}: {e}"))?;
                b.reconfigure(config);
                model.set_probe_timeout(ms);
            }
            Op::OpenFor(ms) => {
                b.open_for(Duration::from_millis(ms));
                model.open_manually(Duration::from_millis(ms));
            }
            Op::OpenUntil(ms) => {
                let now = b.now();
                let by = Duration::from_millis(ms.unsigned_abs());
                let until = if ms >= 0 { now + by } else { now - by };
                b.open_until(until);
                model.open_manually(if ms >= 0 { by } else { Duration::ZERO });
            }
            Op::PushbackFailure(i, ms) => {
                let pushback = Duration::from_millis(ms);
                if !live.is_empty() {
                    let (permit, mp) = live.remove(live.len() - 1 - i % live.len());
                    permit.failure_with_pushback(pushback);
                    model.ended[Ended::Failure as usize] += 1;
                    model.pushed_back(mp, pushback);
                }
                // A call only a shadow admitted is a passthrough: a plain failure.
                settle_shadowed(&mut shadowed, &mut shadow_ended, Ended::Failure, |p| {
                    p.failure_with_pushback(Duration::from_secs(1))
                });
            }
        }
        agree!(b.state(), model.state, "step {step}: {op:?}: state");
        agree!(
            *heard.lock().unwrap(),
            model.transitions,
            "step {step}: {op:?}: transitions"
        );
        agree!(
            observe_as(&b, shadow, shadow_ended),
            model.observe_as(shadow),
            "step {step}: {op:?}"
        );
    }

    // Settling every permit left must keep both in step too.
    while let Some((permit, mp)) = live.pop() {
        drop(permit);
        model.ended[Ended::Cancelled as usize] += 1;
        model.complete(mp, Verdict::Ignored);
        agree!(
            observe_as(&b, shadow, shadow_ended),
            model.observe_as(shadow),
            "final drops"
        );
    }
    while !shadowed.is_empty() {
        settle_shadowed(&mut shadowed, &mut shadow_ended, Ended::Failure, |p| {
            p.failure()
        });
        agree!(
            observe_as(&b, shadow, shadow_ended),
            model.observe_as(shadow),
            "final shadowed failures"
        );
    }
    Ok(model.seen)
}

/// What the model observes of `b`; of a shadow, the rejections it turned into admissions
/// count as the model's rejections (it must have rejected none), and the calls it admitted
/// so are taken out of the totals of how calls ended.
pub fn observe_as(b: &Breaker, shadow: bool, shadow_ended: [u64; 4]) -> Observed {
    let mut seen = observe(b);
    if shadow {
        let totals = b.snapshot().totals;
        seen.rejected = if totals.rejected == 0 {
            totals.shadow_rejected
        } else {
            u64::MAX
        };
        for (ended, shadowed) in seen.ended.iter_mut().zip(shadow_ended) {
            *ended -= shadowed;
        }
    }
    seen
}

/// Settles the oldest call a shadow admitted where the model rejected, if any, as `how`.
fn settle_shadowed<'b>(
    shadowed: &mut Vec<Permit<'b>>,
    ended: &mut [u64; 4],
    as_: Ended,
    how: fn(Permit<'b>),
) {
    if shadowed.is_empty() {
        return;
    }
    how(shadowed.remove(0));
    ended[as_ as usize] += 1;
}
