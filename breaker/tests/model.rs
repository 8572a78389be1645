//! Model-based property test: random operation sequences run against a real breaker on a
//! manual clock and against a small reference model written from the rules, and every
//! decision and every observable state must agree.
//!
//! The model is deliberately naive: a `VecDeque` of the last N outcomes for a count window,
//! a plain list of `(bucket index, outcome)` for a time window, and a handful of fields for
//! the state machine. It is written from the rules, not from the implementation.
//!
//! Operations that settle a permit pick the `i`-th newest live one (modulo their number).
//! After every operation the state, the snapshot's counts, rate and rejections, and the
//! number of probes in flight must be equal; every rejection must give the same reason and
//! the same `retry_after`, to the nanosecond.
//!
//! One choice the rules leave open is pinned down here: the window is emptied only when the
//! breaker enters CLOSED (a reset or a successful half-open); in the other states it keeps
//! what it held (and a time window keeps ageing it), so the snapshot shows those counts.

use std::collections::VecDeque;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;
use std::time::Duration;

use breaker::clock::ManualClock;
use breaker::{Breaker, Config, Permit, RejectReason, State};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

// ---------------------------------------------------------------------------------------
// Configurations
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
enum WindowSpec {
    Count { calls: u32 },
    Time { span_ms: u64, buckets: u32 },
}

#[derive(Clone, Copy, Debug)]
struct Spec {
    window: WindowSpec,
    min_calls: u32,
    failure_rate: f64,
    /// Slow-call threshold and rate.
    slow: Option<(u64, f64)>,
    open_ms: u64,
    probes: u32,
}

impl Spec {
    fn config(&self) -> Config {
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
        if let Some((threshold_ms, rate)) = self.slow {
            b = b.slow_calls(Duration::from_millis(threshold_ms), rate);
        }
        b.build().expect("generated configurations are valid")
    }
}

fn rate() -> impl Strategy<Value = f64> {
    prop::sample::select(vec![0.25, 0.5, 1.0])
}

fn slow() -> impl Strategy<Value = Option<(u64, f64)>> {
    prop::option::of((prop::sample::select(vec![100u64, 250, 500, 1000]), rate()))
}

fn spec() -> impl Strategy<Value = Spec> {
    let count = (1u32..=8)
        .prop_flat_map(|calls| (Just(calls), 1..=calls))
        .prop_map(|(calls, min)| (WindowSpec::Count { calls }, min));
    let time = ((1u64..=4), (1u32..=4), (1u32..=6)).prop_map(|(secs, buckets, min)| {
        (
            WindowSpec::Time {
                span_ms: secs * 1000,
                buckets,
            },
            min,
        )
    });
    (
        prop_oneof![count, time],
        rate(),
        slow(),
        (1u64..=5),
        (1u32..=3),
    )
        .prop_map(
            |((window, min_calls), failure_rate, slow, open_s, probes)| Spec {
                window,
                min_calls,
                failure_rate,
                slow,
                open_ms: open_s * 1000,
                probes,
            },
        )
}

// ---------------------------------------------------------------------------------------
// Operations
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
enum Op {
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
}

fn advance_ms() -> impl Strategy<Value = u64> {
    prop_oneof![
        // Multiples of 250 ms land exactly on open deadlines and on many bucket edges.
        3 => (0u64..=24).prop_map(|k| k * 250),
        1 => 1u64..=3,
        1 => 0u64..=6000,
    ]
}

/// How a stretch of operations leans: failing calls open the breaker, succeeding ones
/// close it again, so a sequence made of stretches goes through whole cycles.
#[derive(Clone, Copy, Debug)]
enum Mood {
    Failing,
    Recovering,
    Mixed,
}

fn op(mood: Mood) -> impl Strategy<Value = Op> {
    // Relative weights of: success, failure, slow success, advance, force open or disable,
    // reset. Forced open and disabled last until a reset, so operator actions are rare
    // outside mixed stretches, and resets the most common of them.
    let (success, failure, slow, advance, operator, reset) = match mood {
        Mood::Failing => (5, 30, 3, 8, 1, 1),
        Mood::Recovering => (30, 2, 3, 15, 1, 1),
        Mood::Mixed => (15, 12, 6, 12, 3, 6),
    };
    // Which live permit: counted from the newest, so that probes, usually the newest
    // permits, get results often.
    let i = || prop_oneof![2 => Just(0usize), 1 => 0usize..16];
    prop_oneof![
        30 => Just(Op::Acquire),
        success => i().prop_map(Op::Success),
        failure => i().prop_map(Op::Failure),
        2 => i().prop_map(Op::Ignore),
        2 => i().prop_map(Op::Drop),
        1 => i().prop_map(Op::PanicDrop),
        slow => i().prop_map(Op::SlowSuccess),
        advance => advance_ms().prop_map(Op::Advance),
        operator => prop::sample::select(vec![Op::ForceOpen, Op::Disable]),
        reset => Just(Op::Reset),
    ]
}

/// Up to 60 operations, in stretches of one mood each.
fn ops() -> impl Strategy<Value = Vec<Op>> {
    let stretch = prop::sample::select(vec![Mood::Failing, Mood::Recovering, Mood::Mixed])
        .prop_flat_map(|mood| prop::collection::vec(op(mood), 1..=20));
    prop::collection::vec(stretch, 1..=6).prop_map(|stretches| {
        let mut ops: Vec<Op> = stretches.into_iter().flatten().collect();
        ops.truncate(60);
        ops
    })
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
    /// Admitted while disabled: records nothing.
    Passthrough,
}

#[derive(Clone, Copy, Debug)]
struct ModelPermit {
    generation: u64,
    kind: Kind,
    acquired_at: Duration,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
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

#[derive(Debug)]
struct Model {
    spec: Spec,
    /// Time since the breaker was created.
    now: Duration,
    state: State,
    generation: u64,
    /// Count window: the last `calls` completed outcomes, oldest first.
    recent: VecDeque<Done>,
    /// Time window: every completed outcome with the bucket index it completed in.
    timed: Vec<(u64, Done)>,
    opened_at: Duration,
    in_flight: u32,
    probe_successes: u32,
    rejected: u64,
}

#[derive(Debug, PartialEq)]
struct Observed {
    state: State,
    calls: u32,
    failures: u32,
    slow_calls: u32,
    failure_rate: Option<f64>,
    rejected: u64,
    probes_in_flight: u32,
}

impl Model {
    fn new(spec: Spec) -> Self {
        Self {
            spec,
            now: Duration::ZERO,
            state: State::Closed,
            generation: 0,
            recent: VecDeque::new(),
            timed: Vec::new(),
            opened_at: Duration::ZERO,
            in_flight: 0,
            probe_successes: 0,
            rejected: 0,
        }
    }

    fn open_for(&self) -> Duration {
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

    fn observe(&self) -> Observed {
        let (calls, failures, slow_calls) = self.totals();
        Observed {
            state: self.state,
            calls,
            failures,
            slow_calls,
            failure_rate: self.failure_rate(),
            rejected: self.rejected,
            probes_in_flight: self.in_flight,
        }
    }

    /// A state change, or a reset: new generation, no probes, and CLOSED starts empty.
    fn enter(&mut self, to: State) {
        self.state = to;
        self.generation += 1;
        self.in_flight = 0;
        self.probe_successes = 0;
        if to == State::Open {
            self.opened_at = self.now;
        }
        if to == State::Closed {
            self.recent.clear();
            self.timed.clear();
        }
    }

    fn admit(&self, kind: Kind) -> ModelPermit {
        ModelPermit {
            generation: self.generation,
            kind,
            acquired_at: self.now,
        }
    }

    fn acquire(&mut self) -> Result<ModelPermit, (RejectReason, Option<Duration>)> {
        let outcome = match self.state {
            State::Closed => Ok(self.admit(Kind::Counted)),
            State::Disabled => Ok(self.admit(Kind::Passthrough)),
            State::ForcedOpen => Err((RejectReason::ForcedOpen, None)),
            State::Open => {
                let elapsed = self.now - self.opened_at;
                if elapsed < self.open_for() {
                    Err((RejectReason::Open, Some(self.open_for() - elapsed)))
                } else {
                    self.enter(State::HalfOpen);
                    self.in_flight = 1;
                    Ok(self.admit(Kind::Probe))
                }
            }
            State::HalfOpen => {
                if self.in_flight < self.spec.probes {
                    self.in_flight += 1;
                    Ok(self.admit(Kind::Probe))
                } else {
                    Err((RejectReason::HalfOpenFull, None))
                }
            }
        };
        if outcome.is_err() {
            self.rejected += 1;
        }
        outcome
    }

    fn complete(&mut self, permit: ModelPermit, result: Verdict) {
        if permit.kind == Kind::Passthrough || permit.generation != self.generation {
            return;
        }
        let slow = match self.spec.slow {
            Some((threshold_ms, _)) => {
                self.now - permit.acquired_at > Duration::from_millis(threshold_ms)
            }
            None => false,
        };
        match (permit.kind, result) {
            (_, Verdict::Ignored) => {
                if permit.kind == Kind::Probe {
                    self.in_flight -= 1;
                }
            }
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
                if self.trips() {
                    self.enter(State::Open);
                }
            }
            (Kind::Probe, _) => {
                assert_eq!(self.state, State::HalfOpen, "same generation, same state");
                self.in_flight -= 1;
                if result == Verdict::Failure || slow {
                    self.enter(State::Open);
                } else {
                    self.probe_successes += 1;
                    if self.probe_successes == self.spec.probes {
                        self.enter(State::Closed);
                    }
                }
            }
            (Kind::Passthrough, _) => unreachable!(),
        }
    }

    fn trips(&self) -> bool {
        let (calls, failures, slow) = self.totals();
        if calls == 0 || calls < self.spec.min_calls {
            return false;
        }
        let calls = f64::from(calls);
        let by_failures = f64::from(failures) / calls >= self.spec.failure_rate;
        let by_slowness = match self.spec.slow {
            Some((_, rate)) => f64::from(slow) / calls >= rate,
            None => false,
        };
        by_failures || by_slowness
    }

    fn force_open(&mut self) {
        if self.state != State::ForcedOpen {
            self.enter(State::ForcedOpen);
        }
    }

    fn disable(&mut self) {
        if self.state != State::Disabled {
            self.enter(State::Disabled);
        }
    }

    fn reset(&mut self) {
        self.enter(State::Closed);
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
        probes_in_flight: b.probes_in_flight(),
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

/// Settles the `i`-th newest live permit (modulo their number) on both sides, if any.
fn settle<'b>(
    live: &mut Vec<(Permit<'b>, ModelPermit)>,
    model: &mut Model,
    i: usize,
    verdict: Verdict,
    how: fn(Permit<'b>),
) {
    if live.is_empty() {
        return;
    }
    let (permit, mp) = live.remove(live.len() - 1 - i % live.len());
    how(permit);
    model.complete(mp, verdict);
}

/// Runs `ops` against both, comparing after every step; returns an error naming the step.
fn run(spec: Spec, ops: &[Op]) -> Result<(), TestCaseError> {
    let clock = ManualClock::new();
    let b = Breaker::with_clock("model", spec.config(), clock.clone());
    let mut model = Model::new(spec);
    let mut live: Vec<(Permit<'_>, ModelPermit)> = Vec::new();

    for (step, &op) in ops.iter().enumerate() {
        match op {
            Op::Acquire => {
                let real = b.try_acquire();
                let expected = model.acquire();
                match (real, expected) {
                    (Ok(permit), Ok(mp)) => live.push((permit, mp)),
                    (Err(rejected), Err((reason, retry_after))) => {
                        prop_assert_eq!(rejected.reason(), reason, "step {}: {:?}", step, op);
                        prop_assert_eq!(
                            rejected.retry_after(),
                            retry_after,
                            "step {}: {:?}",
                            step,
                            op
                        );
                        prop_assert_eq!(rejected.name(), "model");
                    }
                    (real, expected) => {
                        return Err(TestCaseError::fail(format!(
                            "step {step}: acquire: breaker {:?}, model {:?}",
                            real.map(|_| ()),
                            expected.map(|_| ())
                        )));
                    }
                }
            }
            Op::Success(i) => settle(&mut live, &mut model, i, Verdict::Success, |p| p.success()),
            Op::Failure(i) => settle(&mut live, &mut model, i, Verdict::Failure, |p| p.failure()),
            Op::Ignore(i) => settle(&mut live, &mut model, i, Verdict::Ignored, |p| p.ignore()),
            Op::Drop(i) => settle(&mut live, &mut model, i, Verdict::Ignored, drop),
            Op::PanicDrop(i) => settle(&mut live, &mut model, i, Verdict::Failure, drop_panicking),
            Op::SlowSuccess(i) => {
                if let Some((threshold_ms, _)) = spec.slow {
                    let by = Duration::from_millis(threshold_ms + 1);
                    clock.advance(by);
                    model.now += by;
                }
                settle(&mut live, &mut model, i, Verdict::Success, |p| p.success());
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
        }
        prop_assert_eq!(b.state(), model.state, "step {}: {:?}", step, op);
        prop_assert_eq!(observe(&b), model.observe(), "step {}: {:?}", step, op);
    }

    // Settling every permit left must keep both in step too.
    while let Some((permit, mp)) = live.pop() {
        drop(permit);
        model.complete(mp, Verdict::Ignored);
        prop_assert_eq!(observe(&b), model.observe(), "final drops");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 2048,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/model.txt",
        ))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn breaker_agrees_with_the_reference_model(
        spec in spec(),
        ops in ops(),
    ) {
        run(spec, &ops)?;
    }
}

// ---------------------------------------------------------------------------------------
// Named sequences: hand-picked paths through the model, kept as plain tests.
// ---------------------------------------------------------------------------------------

fn count_spec(calls: u32, min_calls: u32, probes: u32) -> Spec {
    Spec {
        window: WindowSpec::Count { calls },
        min_calls,
        failure_rate: 0.5,
        slow: None,
        open_ms: 1000,
        probes,
    }
}

fn check(spec: Spec, ops: &[Op]) {
    if let Err(e) = run(spec, ops) {
        panic!("{e}");
    }
}

#[test]
fn model_open_half_open_close_cycle() {
    use Op::*;
    check(
        count_spec(2, 2, 2),
        &[
            Acquire,
            Acquire,
            Failure(0),
            Success(0),
            Acquire,
            Advance(999),
            Acquire,
            Advance(1),
            Acquire,
            Acquire,
            Acquire,
            Success(0),
            Acquire,
            Success(0),
            Success(0),
            Acquire,
        ],
    );
}

#[test]
fn model_stale_results_and_operator_actions() {
    use Op::*;
    check(
        count_spec(1, 1, 1),
        &[
            Acquire,
            Acquire,
            Failure(0),
            Success(0),
            Advance(1000),
            Acquire,
            Drop(0),
            Acquire,
            Reset,
            Failure(0),
            Acquire,
            Disable,
            Failure(0),
            Acquire,
            Failure(0),
            Reset,
            Acquire,
            Acquire,
            PanicDrop(1),
            ForceOpen,
            Advance(5000),
            Acquire,
            Reset,
            Acquire,
            Ignore(0),
        ],
    );
}

#[test]
fn model_time_window_and_slow_calls() {
    use Op::*;
    let spec = Spec {
        window: WindowSpec::Time {
            span_ms: 1000,
            buckets: 3,
        },
        min_calls: 2,
        failure_rate: 1.0,
        slow: Some((250, 0.5)),
        open_ms: 2000,
        probes: 1,
    };
    check(
        spec,
        &[
            Acquire,
            Success(0),
            Advance(333),
            Acquire,
            Success(0),
            Advance(667),
            Acquire,
            SlowSuccess(0),
            Acquire,
            SlowSuccess(0),
            Advance(2000),
            Acquire,
            SlowSuccess(0),
            Advance(2000),
            Acquire,
            Success(0),
        ],
    );
}
