//! Model-based property test: random operation sequences run against a real breaker on a
//! manual clock and against a small reference model written from the rules, and every
//! decision and every observable state must agree.
//!
//! The model and the runner live in `support/reference.rs` (shared with the fuzz target);
//! this file generates configurations and operation sequences, and keeps named sequences
//! (hand-picked paths and shrunk counterexamples) as plain tests.
//!
//! Generated configurations cover both windows, slow calls, progressive recovery (backoff of
//! the open duration and stepwise ramp-up), the bulkhead and the probe timeout; sequences
//! also change the failure rate, the probe successes that end a trial, the bulkhead's limit
//! and the probe timeout of the running breaker, and turn its slow calls off and on.
//! Factors, durations and
//! step lengths are picked so that every duration the model computes is a whole number of nanoseconds
//! (a factor of 1.5 applied to whole milliseconds a few times), so that `retry_after` can be
//! compared exactly. The ramp's latency guard is not modelled (see the model's notes).
//!
//! The same model also follows calls through the call policy (`support/runner.rs`, not shared
//! with the fuzz target, which has no tokio): `Breaker::run_with` with a bulkhead, retries
//! within the budget and timeouts, on tokio's paused clock, enforcing and as a shadow.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{FileFailurePersistence, TestRunner};

use crate::support::reference;
use crate::support::runner;

use reference::{run, run_and_count, run_shadow, Op, Seen, Spec, WindowSpec};
use runner::{run_calls, Answer, CallOp, CallPolicy, Reached};

// ---------------------------------------------------------------------------------------
// Configurations
// ---------------------------------------------------------------------------------------

fn rate() -> impl Strategy<Value = f64> {
    prop::sample::select(vec![0.25, 0.5, 1.0])
}

fn slow() -> impl Strategy<Value = Option<(u64, f64)>> {
    prop::option::of((prop::sample::select(vec![100u64, 250, 500, 1000]), rate()))
}

/// Backoff factor and longest OPEN, as a multiple of `open_ms` (or `open_ms` plus a quarter
/// second, a cap that no product lands on).
fn backoff(open_ms: u64) -> impl Strategy<Value = Option<(f64, u64)>> {
    let max = prop_oneof![
        prop::sample::select(vec![1u64, 2, 3, 8]).prop_map(move |k| open_ms * k),
        Just(open_ms + 250),
    ];
    prop::option::of((prop::sample::select(vec![1.0, 1.5, 2.0, 3.0]), max))
}

/// Ramp-up percentages (strictly rising, ending at 100) and step length.
fn ramp() -> impl Strategy<Value = Option<(Vec<u32>, u64)>> {
    let percents = prop::sample::subsequence(vec![1u32, 10, 25, 33, 50, 67, 99], 0..=3).prop_map(
        |mut percents| {
            percents.push(100);
            percents
        },
    );
    let step_ms = prop::sample::select(vec![250u64, 500, 750, 1500]);
    prop::option::weighted(0.6, (percents, step_ms))
}

/// A bulkhead of 1 to 4 calls, small enough for the acquires of a sequence to fill; in
/// fewer than half the configurations, so that a full one does not keep every other phase
/// from being reached.
fn limit() -> impl Strategy<Value = Option<u32>> {
    prop::option::weighted(0.4, 1u32..=4)
}

/// A probe timeout a sequence's advances reach, or the default 60 s.
fn probe_timeout() -> impl Strategy<Value = Option<u64>> {
    prop::option::weighted(0.4, prop::sample::select(vec![250u64, 500, 1000, 3000]))
}

fn spec() -> impl Strategy<Value = Spec> {
    let count = (1u32..=8)
        .prop_flat_map(|calls| (Just(calls), calls.min(2)..=calls))
        .prop_map(|(calls, min)| (WindowSpec::Count { calls }, min));
    let time = ((1u64..=4), (1u32..=4), (2u32..=6)).prop_map(|(secs, buckets, min)| {
        (
            WindowSpec::Time {
                span_ms: secs * 1000,
                buckets,
            },
            min,
        )
    });
    let open_ms = prop_oneof![(1u64..=5).prop_map(|s| s * 1000), Just(1500u64)];
    (
        prop_oneof![count, time],
        rate(),
        slow(),
        open_ms.prop_flat_map(|open_ms| (Just(open_ms), backoff(open_ms))),
        (1u32..=3).prop_flat_map(|probes| (Just(probes), prop::option::of(1..=probes))),
        ramp(),
        limit(),
        probe_timeout(),
    )
        .prop_map(
            |(
                (window, min_calls),
                failure_rate,
                slow,
                (open_ms, backoff),
                (probes, successes),
                ramp,
                max_concurrent,
                probe_timeout_ms,
            )| Spec {
                window,
                min_calls,
                failure_rate,
                slow,
                open_ms,
                probes,
                successes,
                backoff,
                ramp,
                max_concurrent,
                probe_timeout_ms,
            },
        )
}

// ---------------------------------------------------------------------------------------
// Operations
// ---------------------------------------------------------------------------------------

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
    // and the reconfigurations: reset, a new failure rate, a new number of probe successes,
    // slow calls turned off or on. Forced open and disabled last until a reset, so operator
    // actions are rare outside mixed stretches, and resets the most common of them.
    let (success, failure, slow, advance, operator) = match mood {
        Mood::Failing => (5, 30, 3, 8, 1),
        Mood::Recovering => (30, 1, 1, 15, 0),
        Mood::Mixed => (15, 12, 6, 12, 3),
    };
    let (reset, retune, resucceed, toggle, relimit) = match mood {
        Mood::Failing => (1, 3, 1, 1, 1),
        Mood::Recovering => (0, 1, 8, 1, 1),
        Mood::Mixed => (6, 12, 4, 3, 4),
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
        // One arm for these: a union of more than ten arms takes no weight of 0.
        reset + retune + resucceed + toggle + 2 * relimit + reset.max(1) + 1 => prop_oneof![
            reset.max(1) => Just(Op::Reset),
            // Lower rates too, which a window already holding failures may reach.
            retune.max(1) => prop::sample::select(vec![0.1, 0.25, 0.5, 1.0]).prop_map(Op::Retune),
            // Mostly 1, which a trial with a success counted already passes.
            resucceed.max(1) => prop_oneof![2 => Just(0u32), 1 => 1u32..3].prop_map(Op::Successes),
            toggle => Just(Op::ToggleSlow),
            relimit.max(1) => limit().prop_map(Op::Limit),
            relimit.max(1) => prop::sample::select(vec![250u64, 500, 1000, 3000]).prop_map(Op::ProbeTimeout),
            // A manual open period, of none to a few seconds, on the advances' grid mostly.
            reset.max(1) => prop_oneof![
                2 => prop_oneof![3 => (0u64..=12).prop_map(|k| k * 250), 1 => 1u64..=4000]
                    .prop_map(Op::OpenFor),
                // Or until an instant of the clock, sometimes one already past.
                1 => prop_oneof![3 => (-4i64..=12).prop_map(|k| k * 250), 1 => -2000i64..=4000]
                    .prop_map(Op::OpenUntil),
            ],
            // A failure carrying a pushback, of none to a few seconds.
            1 => (i(), prop_oneof![3 => (0u64..=12).prop_map(|k| k * 250), 1 => 1u64..=4000])
                .prop_map(|(i, ms)| Op::PushbackFailure(i, ms)),
        ],
    ]
}

/// Up to 100 operations, in stretches of one mood each; recovering stretches are the
/// longest, since a ramp needs many calls and several steps' time to climb to CLOSED.
fn ops() -> impl Strategy<Value = Vec<Op>> {
    let stretch = prop_oneof![
        Just(Mood::Failing).prop_flat_map(|mood| prop::collection::vec(op(mood), 1..=15)),
        Just(Mood::Recovering).prop_flat_map(|mood| prop::collection::vec(op(mood), 10..=40)),
        Just(Mood::Mixed).prop_flat_map(|mood| prop::collection::vec(op(mood), 1..=20)),
    ];
    prop::collection::vec(stretch, 1..=6).prop_map(|stretches| {
        let mut ops: Vec<Op> = stretches.into_iter().flatten().collect();
        ops.truncate(100);
        ops
    })
}

proptest! {
    // 2048 cases keep a debug run under ten seconds; `PROPTEST_CASES` may ask for more.
    #![proptest_config(ProptestConfig {
        cases: ProptestConfig::default().cases.max(2048),
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
        if let Err(e) = run(&spec, &ops) {
            return Err(TestCaseError::fail(e));
        }
    }

    /// A shadow breaker on the same traffic moves exactly as the enforcing model: same
    /// states, windows, rates and `retry_after`s, its shadow rejections the model's
    /// rejections, while it rejects nothing and the results of the calls it admitted only
    /// as a shadow change nothing.
    #[test]
    fn shadow_breaker_moves_as_the_enforcing_model_and_rejects_nothing(
        spec in spec(),
        ops in ops(),
    ) {
        if let Err(e) = run_shadow(&spec, &ops) {
            return Err(TestCaseError::fail(e));
        }
    }
}

// ---------------------------------------------------------------------------------------
// Calls through the call policy
// ---------------------------------------------------------------------------------------

/// A timeout the sequences' advances pass (or none), up to 3 retries, budgets and floors
/// that run out within a sequence.
fn call_policy() -> impl Strategy<Value = CallPolicy> {
    (
        prop::option::weighted(0.7, prop::sample::select(vec![100u64, 250, 1000])),
        0u32..=3,
        prop::sample::select(vec![0.0, 0.5, 1.0]),
        prop::sample::select(vec![0u32, 1, 2]),
    )
        .prop_map(|(timeout_ms, retries, budget, floor)| CallPolicy {
            timeout_ms,
            retries,
            budget,
            floor,
        })
}

fn call_op(mood: Mood) -> impl Strategy<Value = CallOp> {
    let (success, failure, advance) = match mood {
        Mood::Failing => (6, 30, 8),
        Mood::Recovering => (30, 2, 15),
        Mood::Mixed => (15, 15, 10),
    };
    let i = || prop_oneof![2 => Just(0usize), 1 => 0usize..8];
    prop_oneof![
        30 => Just(CallOp::Start),
        success => i().prop_map(|i| CallOp::Answer(i, Answer::Success)),
        failure => i().prop_map(|i| CallOp::Answer(i, Answer::Failure)),
        2 => i().prop_map(|i| CallOp::Answer(i, Answer::Ignored)),
        2 => i().prop_map(CallOp::Drop),
        advance => advance_ms().prop_map(CallOp::Advance),
        1 => prop::sample::select(vec![CallOp::ForceOpen, CallOp::Disable, CallOp::Reset, CallOp::Reset]),
    ]
}

fn call_ops() -> impl Strategy<Value = Vec<CallOp>> {
    let stretch = prop_oneof![
        Just(Mood::Failing).prop_flat_map(|mood| prop::collection::vec(call_op(mood), 1..=15)),
        Just(Mood::Recovering).prop_flat_map(|mood| prop::collection::vec(call_op(mood), 5..=30)),
        Just(Mood::Mixed).prop_flat_map(|mood| prop::collection::vec(call_op(mood), 1..=20)),
    ];
    prop::collection::vec(stretch, 1..=6).prop_map(|stretches| {
        let mut ops: Vec<CallOp> = stretches.into_iter().flatten().collect();
        ops.truncate(100);
        ops
    })
}

proptest! {
    // Each case runs its own paused tokio runtime: 512 keep a debug run within seconds.
    #![proptest_config(ProptestConfig {
        cases: ProptestConfig::default().cases.max(512),
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/model_runner.txt",
        ))),
        ..ProptestConfig::default()
    })]

    /// Calls through `Breaker::run_with`, with a bulkhead, retries within the budget and
    /// timeouts: the breaker moves as the model following the runner's rules.
    #[test]
    fn calls_through_the_runner_agree_with_the_reference_model(
        spec in spec(),
        policy in call_policy(),
        ops in call_ops(),
    ) {
        if let Err(e) = run_calls(&spec, policy, &ops, false) {
            return Err(TestCaseError::fail(e));
        }
    }

    /// The same calls through a shadow breaker's runner: it moves exactly as the enforcing
    /// model, its bulkhead included, while it rejects nothing; a call the model rejects runs
    /// once, holding no slot, its result counted nowhere but in the totals, never retried.
    #[test]
    fn a_shadow_through_the_runner_moves_as_the_enforcing_model(
        spec in spec(),
        policy in call_policy(),
        ops in call_ops(),
    ) {
        if let Err(e) = run_calls(&spec, policy, &ops, true) {
            return Err(TestCaseError::fail(e));
        }
    }
}

/// The runner's sequences are not vacuous: over a fixed sample of 512, a shadow meets every
/// path of the runner many times.
#[test]
fn calls_through_the_runner_reach_every_path() {
    let mut runner = TestRunner::deterministic();
    let mut total = Reached::default();
    for _ in 0..512 {
        let spec = spec().new_tree(&mut runner).unwrap().current();
        let policy = call_policy().new_tree(&mut runner).unwrap().current();
        let ops = call_ops().new_tree(&mut runner).unwrap().current();
        let reached =
            run_calls(&spec, policy, &ops, true).unwrap_or_else(|e| panic!("{spec:?}: {e}"));
        total.opened += reached.opened;
        total.retried += reached.retried;
        total.refused_by_budget += reached.refused_by_budget;
        total.timed_out += reached.timed_out;
        total.rejected_retries += reached.rejected_retries;
        total.rejected_by_bulkhead += reached.rejected_by_bulkhead;
        total.rejected_by_state += reached.rejected_by_state;
    }
    println!("{total:#?}");
    let Reached {
        opened,
        retried,
        refused_by_budget,
        timed_out,
        rejected_retries,
        rejected_by_bulkhead,
        rejected_by_state,
    } = total;
    for (what, count) in [
        ("opened", opened),
        ("retried", retried),
        ("refused by the budget", refused_by_budget),
        ("timed out", timed_out),
        ("a retry rejected, run as a shadow", rejected_retries),
        (
            "rejected by the bulkhead, run as a shadow",
            rejected_by_bulkhead,
        ),
        ("rejected by the state, run as a shadow", rejected_by_state),
    ] {
        assert!(count >= 10, "{what}: only {count} times in 512 sequences");
    }
}

/// The generators are not vacuous: over a fixed sample of 1024 sequences, every phase of the
/// breaker's life, progressive recovery included, is reached many times.
#[test]
fn generated_sequences_reach_every_phase() {
    let mut runner = TestRunner::deterministic();
    let mut total = Seen::default();
    for _ in 0..1024 {
        let spec = spec().new_tree(&mut runner).unwrap().current();
        let ops = ops().new_tree(&mut runner).unwrap().current();
        let seen = run_and_count(&spec, &ops).unwrap_or_else(|e| panic!("{spec:?}: {e}"));
        total.opened_by_window += seen.opened_by_window;
        total.opened_by_retune += seen.opened_by_retune;
        total.half_opened += seen.half_opened;
        total.closed_by_probes += seen.closed_by_probes;
        total.passed_with_probes_out += seen.passed_with_probes_out;
        total.passed_by_reconfiguring += seen.passed_by_reconfiguring;
        total.slow_marks_dropped += seen.slow_marks_dropped;
        total.ramps_started += seen.ramps_started;
        total.ramp_steps_climbed += seen.ramp_steps_climbed;
        total.closed_by_ramp += seen.closed_by_ramp;
        total.reopened_by_ramp += seen.reopened_by_ramp;
        total.backed_off += seen.backed_off;
        total.throttled += seen.throttled;
        total.stale_results += seen.stale_results;
        total.bulkhead_rejections += seen.bulkhead_rejections;
        total.hung_probes_told_by_acquire += seen.hung_probes_told_by_acquire;
        total.hung_probes_told_by_result += seen.hung_probes_told_by_result;
        total.manual_opens += seen.manual_opens;
        total.manual_opens_in_open += seen.manual_opens_in_open;
        total.pushbacks += seen.pushbacks;
    }
    println!("{total:#?}");
    let Seen {
        opened_by_window,
        opened_by_retune,
        half_opened,
        closed_by_probes,
        passed_with_probes_out,
        passed_by_reconfiguring,
        slow_marks_dropped,
        ramps_started,
        ramp_steps_climbed,
        closed_by_ramp,
        reopened_by_ramp,
        backed_off,
        throttled,
        stale_results,
        bulkhead_rejections,
        hung_probes_told_by_acquire,
        hung_probes_told_by_result,
        manual_opens,
        manual_opens_in_open,
        pushbacks,
    } = total;
    for (what, count) in [
        ("opened by the window", opened_by_window),
        ("opened by a new rate", opened_by_retune),
        ("half-opened", half_opened),
        ("closed by probes", closed_by_probes),
        ("passed with probes out", passed_with_probes_out),
        ("passed by a new successes", passed_by_reconfiguring),
        ("slow marks dropped", slow_marks_dropped),
        ("ramps started", ramps_started),
        ("ramp steps climbed", ramp_steps_climbed),
        ("closed by the ramp", closed_by_ramp),
        ("reopened during the ramp", reopened_by_ramp),
        ("backed off", backed_off),
        ("throttled", throttled),
        ("stale results", stale_results),
        ("rejected by the bulkhead", bulkhead_rejections),
        (
            "a hung probe told by an acquire",
            hung_probes_told_by_acquire,
        ),
        ("a hung probe told by a result", hung_probes_told_by_result),
        ("a manual open period", manual_opens),
        ("a manual open period in OPEN", manual_opens_in_open),
        ("a failure's pushback", pushbacks),
    ] {
        assert!(count >= 10, "{what}: only {count} times in 1024 sequences");
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
        successes: None,
        backoff: None,
        ramp: None,
        max_concurrent: None,
        probe_timeout_ms: None,
    }
}

fn check(spec: Spec, ops: &[Op]) {
    if let Err(e) = run(&spec, ops) {
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
        successes: None,
        backoff: None,
        ramp: None,
        max_concurrent: None,
        probe_timeout_ms: None,
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

#[test]
fn model_backoff_grows_and_resets() {
    use Op::*;
    let spec = Spec {
        backoff: Some((1.5, 3000)),
        ..count_spec(1, 1, 1)
    };
    check(
        spec,
        &[
            Acquire,
            Failure(0),
            Advance(1000),
            Acquire,
            Failure(0),
            Acquire,
            Advance(1500),
            Acquire,
            SlowSuccess(0),
            Acquire,
            Failure(0),
            Acquire,
            Advance(2250),
            Acquire,
            Failure(0),
            Acquire,
            Advance(3000),
            Acquire,
            Success(0),
            Acquire,
            Failure(0),
            Acquire,
            ForceOpen,
            Reset,
            Acquire,
            Failure(0),
            Acquire,
        ],
    );
}

#[test]
fn model_ramp_steps_throttle_and_close() {
    use Op::*;
    let spec = Spec {
        backoff: Some((2.0, 8000)),
        ramp: Some((vec![25, 50, 100], 1000)),
        ..count_spec(1, 1, 2)
    };
    let mut ops = vec![
        Acquire,
        Failure(0),
        Advance(1000),
        Acquire,
        Acquire,
        Success(0),
    ];
    // The second probe completes the half-open: the ramp starts at 25%.
    ops.extend([Success(0), Acquire, Acquire, Acquire, Acquire, Acquire]);
    // 999 ms later still the first step; at 1000 ms the next call moves to 50%.
    ops.extend([Advance(999), Acquire, Advance(1), Acquire, Acquire, Acquire]);
    // Two steps' time: one step per call, so 100% now, then CLOSED a step later.
    ops.extend([
        Advance(2000),
        Acquire,
        Acquire,
        Success(0),
        Advance(1000),
        Acquire,
    ]);
    ops.extend([Success(0), Acquire, Failure(0)]);
    check(spec, &ops);
}

#[test]
fn model_failure_during_ramp_reopens_with_backoff_and_stale_probes_are_discarded() {
    use Op::*;
    let spec = Spec {
        backoff: Some((2.0, 8000)),
        ramp: Some((vec![50, 100], 500)),
        ..count_spec(1, 1, 2)
    };
    check(
        spec,
        &[
            Acquire,
            Failure(0),
            Advance(1000),
            Acquire,
            Acquire,
            Ignore(0),
            Acquire,
            Acquire,
            Success(1),
            Success(1),
            // One probe is still out when the ramp starts: its result is stale.
            Acquire,
            Acquire,
            Failure(2),
            Acquire,
            Drop(0),
            Ignore(0),
            Acquire,
            Failure(0),
            // Reopened after a failed trial: 2 s now.
            Acquire,
            Advance(2000),
            Acquire,
            Success(0),
            Acquire,
        ],
    );
}

#[test]
fn model_fewer_successes_than_probes_and_a_new_successes_in_half_open() {
    use Op::*;
    let spec = Spec {
        successes: Some(1),
        ramp: Some((vec![50, 100], 500)),
        ..count_spec(2, 2, 3)
    };
    check(
        spec,
        &[
            Acquire,
            Acquire,
            Failure(0),
            Failure(0),
            Advance(1000),
            // Three probes; the first success starts the ramp, the others are stale.
            Acquire,
            Acquire,
            Acquire,
            Success(1),
            Failure(0),
            Success(0),
            Acquire,
            Acquire,
            Failure(0),
            Advance(1000),
            // Two successes needed now; one is counted, then one is enough.
            Successes(1),
            Acquire,
            Acquire,
            Success(0),
            Successes(0),
            Success(0),
            Acquire,
            Success(0),
        ],
    );
}

/// Found by the model once slow calls could be turned off: a time window kept its slow mark,
/// and showed it, with slow calls off.
#[test]
fn model_slow_marks_go_when_slow_calls_go() {
    use Op::*;
    let spec = Spec {
        window: WindowSpec::Time {
            span_ms: 1000,
            buckets: 1,
        },
        min_calls: 2,
        failure_rate: 0.25,
        slow: Some((100, 0.25)),
        ..count_spec(1, 1, 1)
    };
    check(
        spec,
        &[
            Acquire,
            Acquire,
            Acquire,
            SlowSuccess(0),
            Acquire,
            ToggleSlow,
            Acquire,
            ToggleSlow,
            Acquire,
            Success(0),
        ],
    );
}

/// Found by the model once `successes` could change while running: every reconfiguration
/// judges a CLOSED window at once, here a time window whose expired bucket took the fast
/// calls away and left one slow success in two.
#[test]
fn model_a_new_successes_judges_a_closed_window_at_once() {
    use Op::*;
    let spec = Spec {
        window: WindowSpec::Time {
            span_ms: 4000,
            buckets: 3,
        },
        min_calls: 2,
        failure_rate: 1.0,
        slow: None,
        open_ms: 1000,
        ..count_spec(1, 1, 1)
    };
    check(
        spec,
        &[
            ToggleSlow,
            SlowSuccess(0),
            Acquire,
            Acquire,
            Reset,
            Acquire,
            Success(0),
            SlowSuccess(0),
            Acquire,
            Acquire,
            Acquire,
            Acquire,
            Success(0),
            Acquire,
            Acquire,
            Acquire,
            Advance(2498),
            Acquire,
            Success(0),
            Acquire,
            Success(0),
            Success(0),
            Success(0),
            Advance(1000),
            Successes(0),
        ],
    );
}

/// Found by the model once probes carried their start for `probe_timeout`: a probe admitted
/// while slow calls were off was judged slow when they were turned on before its result.
#[test]
fn model_a_probe_admitted_untimed_is_never_slow() {
    use Op::*;
    check(
        count_spec(1, 1, 1),
        &[
            Acquire,
            Failure(0),
            Advance(1000),
            Acquire,
            ToggleSlow,
            SlowSuccess(0),
            Acquire,
            SlowSuccess(0),
        ],
    );
}

#[test]
fn model_bulkhead_fills_frees_and_follows_a_new_limit() {
    use Op::*;
    let spec = Spec {
        max_concurrent: Some(2),
        ..count_spec(2, 2, 1)
    };
    check(
        spec,
        &[
            Acquire,
            Acquire,
            Acquire,
            Success(0),
            Acquire,
            Acquire,
            Limit(Some(1)),
            Drop(0),
            Acquire,
            PanicDrop(0),
            Acquire,
            Limit(None),
            Acquire,
            Acquire,
            Limit(Some(1)),
            Acquire,
            Failure(0),
            Failure(0),
            Acquire,
            ForceOpen,
            Acquire,
            Reset,
            Ignore(0),
            Acquire,
            Disable,
            Acquire,
        ],
    );
}

#[test]
fn model_hung_probes_reopen_with_backoff_and_their_late_results_are_stale() {
    use Op::*;
    let spec = Spec {
        backoff: Some((2.0, 8000)),
        probe_timeout_ms: Some(500),
        ..count_spec(1, 1, 2)
    };
    check(
        spec,
        &[
            Acquire,
            Failure(0),
            Advance(1000),
            Acquire,
            Advance(250),
            Acquire,
            // The first probe has been out 500 ms: the second's result ends the trial.
            Advance(250),
            Success(0),
            Success(0),
            Acquire,
            Advance(2000),
            Acquire,
            // Out 500 ms: the next call reopens, for 4 s now.
            Advance(500),
            Acquire,
            ProbeTimeout(3000),
            Advance(4000),
            Acquire,
            Acquire,
            Advance(1000),
            Success(0),
            Success(1),
            Acquire,
        ],
    );
}

/// Found by the fuzz target: two probes admitted at one instant, one while slow calls were
/// judged and one while they were not, each keep their own timing.
#[test]
fn model_probes_admitted_at_one_instant_keep_their_own_timing() {
    use Op::*;
    let spec = Spec {
        slow: Some((250, 0.5)),
        ..count_spec(1, 1, 2)
    };
    check(
        spec,
        &[
            Acquire,
            Failure(0),
            Advance(1000),
            Acquire,
            ToggleSlow,
            Acquire,
            ToggleSlow,
            SlowSuccess(0),
            Acquire,
            SlowSuccess(1),
            Acquire,
        ],
    );
}

#[test]
fn model_a_manual_open_period_then_a_failed_trial_backs_off_from_the_last_regular_open() {
    use Op::*;
    let spec = Spec {
        backoff: Some((2.0, 8000)),
        ..count_spec(2, 2, 1)
    };
    check(
        spec,
        &[
            Acquire,
            Failure(0),
            Acquire,
            Failure(0),
            Advance(1000),
            Acquire,
            Failure(0), // a failed trial: 2 s
            Acquire,
            OpenFor(3000),
            Acquire,
            Advance(3000),
            Acquire,
            Failure(0), // 2 s grown once: 4 s
            Advance(3999),
            Acquire,
            Advance(1),
            Acquire,
            Success(0),
            OpenFor(0),
            Acquire,
            Success(0),
        ],
    );
}

#[test]
fn model_a_probes_pushback_reopens_for_it_and_a_stale_one_is_a_plain_failure() {
    use Op::*;
    let spec = Spec {
        backoff: Some((2.0, 8000)),
        ..count_spec(2, 2, 2)
    };
    check(
        spec,
        &[
            Acquire,
            Acquire,
            Failure(0),
            Failure(0),
            Advance(1000),
            Acquire,
            Acquire,
            PushbackFailure(0, 3000), // the second probe: 3 s, not the backoff's 2 s
            Success(0),               // the first probe: stale
            Acquire,
            Advance(3000),
            Acquire,
            Failure(0), // a failed trial: 1 s grown once
            Acquire,
            Advance(2000),
            Acquire,
            PushbackFailure(0, 0), // no length: a plain failure of the probe
            Acquire,
        ],
    );
}

#[test]
fn model_open_until_an_instant_and_the_trials_it_ends_and_starts() {
    use Op::*;
    check(
        count_spec(2, 2, 2),
        &[
            Acquire,
            Failure(0),
            OpenUntil(1500), // from CLOSED, until 1.5 s from now
            Acquire,
            Advance(1500),
            Acquire, // a probe: the trial counts 1 admitted, 1 out
            Acquire,
            Success(0),      // 2 admitted, 1 out, 1 succeeded
            OpenUntil(-500), // an instant already past: OPEN for no time
            Success(0),      // the probe out is stale: counted in no trial
            Acquire,         // a new trial from zero
            Drop(0),         // cancelled: still admitted, no longer out
            Acquire,
            Success(0),
            Acquire,
            Success(0), // two successes: CLOSED
        ],
    );
}
