//! The state machine against the reference model of `breaker/tests/model.rs`, with
//! configurations and operation sequences chosen by the fuzzer instead of proptest: wider
//! windows (packed and locked count windows, uneven buckets), any backoff factor in 1..=4,
//! ramps of up to 16 steps, bulkheads of up to 8 calls, probe timeouts of any number of
//! milliseconds, and long sequences; each sequence also runs through a shadow breaker, which
//! must move as the enforcing model does.

#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

#[path = "../../breaker/tests/support/reference.rs"]
#[allow(dead_code)]
mod reference;

use reference::{run, run_shadow, Op, Spec, WindowSpec};

#[derive(Arbitrary, Debug)]
enum RawWindow {
    Count { calls: u8 },
    Time { span_ms: u16, buckets: u8 },
}

#[derive(Arbitrary, Debug)]
struct RawSpec {
    window: RawWindow,
    min_calls: u8,
    /// In twentieths.
    failure_rate: u8,
    /// Threshold in ms, rate in twentieths.
    slow: Option<(u16, u8)>,
    open_ms: u16,
    probes: u8,
    /// Probe successes that end a trial, modulo `probes`, plus 1.
    successes: Option<u8>,
    /// Factor in quarters above 1, max as a multiple of `open_ms` plus some ms.
    backoff: Option<(u8, u8, u16)>,
    /// Which of 1..=99 are steps (bit i: percent i + 1), and the step in ms.
    ramp: Option<([u64; 2], u16)>,
    /// The bulkhead's limit, modulo 8, plus 1.
    max_concurrent: Option<u8>,
    /// In ms, at least 1.
    probe_timeout: Option<u16>,
}

#[derive(Arbitrary, Debug)]
enum RawOp {
    Acquire,
    Success(u8),
    Failure(u8),
    Ignore(u8),
    Drop(u8),
    PanicDrop(u8),
    SlowSuccess(u8),
    Advance(u16),
    ForceOpen,
    Disable,
    Reset,
    /// A new failure rate, in twentieths.
    Retune(u8),
    /// A new number of probe successes that end a trial.
    Successes(u8),
    /// Slow calls turned off, or back on.
    ToggleSlow,
    /// A new bulkhead limit (modulo 8, plus 1), or none.
    Limit(Option<u8>),
    /// A new probe timeout, in ms, at least 1.
    ProbeTimeout(u16),
    /// A manual open period, in ms (`Breaker::open_for`).
    OpenFor(u16),
    /// A failure carrying a pushback, in ms.
    PushbackFailure(u8, u16),
    /// A manual open period until an instant of the clock, in ms from now; past if negative
    /// (`Breaker::open_until`).
    OpenUntil(i16),
}

#[derive(Arbitrary, Debug)]
struct Input {
    spec: RawSpec,
    ops: Vec<RawOp>,
}

/// Maps any raw specification to a valid one.
fn spec(raw: &RawSpec) -> Spec {
    let (window, window_calls) = match raw.window {
        RawWindow::Count { calls } => {
            let calls = u32::from(calls % 40) + 1;
            (WindowSpec::Count { calls }, calls)
        }
        RawWindow::Time { span_ms, buckets } => {
            let buckets = u32::from(buckets % 16) + 1;
            let span_ms = u64::from(span_ms).max(u64::from(buckets));
            (WindowSpec::Time { span_ms, buckets }, 64)
        }
    };
    let open_ms = u64::from(raw.open_ms).max(1);
    let ramp = raw.ramp.map(|(bits, step_ms)| {
        let mut percents: Vec<u32> = (0..99u32)
            .filter(|i| bits[*i as usize / 64] >> (i % 64) & 1 == 1)
            .map(|i| i + 1)
            .take(15)
            .collect();
        percents.push(100);
        (percents, u64::from(step_ms).max(1))
    });
    let probes = u32::from(raw.probes % 4) + 1;
    Spec {
        window,
        min_calls: (u32::from(raw.min_calls) % window_calls + 1).max(window_calls.min(2)),
        failure_rate: f64::from(raw.failure_rate % 20 + 1) / 20.0,
        slow: raw
            .slow
            .map(|(ms, rate)| (u64::from(ms).max(1), f64::from(rate % 20 + 1) / 20.0)),
        open_ms,
        probes,
        successes: raw.successes.map(|n| u32::from(n) % probes + 1),
        backoff: raw.backoff.map(|(quarters, times, extra)| {
            let factor = 1.0 + f64::from(quarters % 13) / 4.0;
            (
                factor,
                open_ms * u64::from(times % 8 + 1) + u64::from(extra),
            )
        }),
        ramp,
        max_concurrent: raw.max_concurrent.map(limit),
        probe_timeout_ms: raw.probe_timeout.map(|ms| u64::from(ms).max(1)),
    }
}

fn limit(raw: u8) -> u32 {
    u32::from(raw % 8) + 1
}

fn op(raw: &RawOp) -> Op {
    let i = |i: &u8| usize::from(*i);
    match raw {
        RawOp::Acquire => Op::Acquire,
        RawOp::Success(n) => Op::Success(i(n)),
        RawOp::Failure(n) => Op::Failure(i(n)),
        RawOp::Ignore(n) => Op::Ignore(i(n)),
        RawOp::Drop(n) => Op::Drop(i(n)),
        RawOp::PanicDrop(n) => Op::PanicDrop(i(n)),
        RawOp::SlowSuccess(n) => Op::SlowSuccess(i(n)),
        RawOp::Advance(ms) => Op::Advance(u64::from(*ms)),
        RawOp::ForceOpen => Op::ForceOpen,
        RawOp::Disable => Op::Disable,
        RawOp::Reset => Op::Reset,
        RawOp::Retune(rate) => Op::Retune(f64::from(rate % 20 + 1) / 20.0),
        RawOp::Successes(n) => Op::Successes(u32::from(*n)),
        RawOp::ToggleSlow => Op::ToggleSlow,
        RawOp::Limit(n) => Op::Limit(n.map(limit)),
        RawOp::ProbeTimeout(ms) => Op::ProbeTimeout(u64::from(*ms).max(1)),
        RawOp::OpenFor(ms) => Op::OpenFor(u64::from(*ms)),
        RawOp::PushbackFailure(n, ms) => Op::PushbackFailure(i(n), u64::from(*ms)),
        RawOp::OpenUntil(ms) => Op::OpenUntil(i64::from(*ms)),
    }
}

fuzz_target!(|input: Input| {
    let spec = spec(&input.spec);
    let ops: Vec<Op> = input.ops.iter().take(400).map(op).collect();
    if let Err(e) = run(&spec, &ops) {
        panic!("{spec:?}\n{ops:?}\n{e}");
    }
    // The same traffic through a shadow: it must move as the enforcing model does.
    if let Err(e) = run_shadow(&spec, &ops) {
        panic!("shadow: {spec:?}\n{ops:?}\n{e}");
    }
});
