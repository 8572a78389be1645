//! Any value for every builder field, durations given as numbers or as humantime text (as
//! the attribute and the overrides loader parse them): `build` never panics, and a built
//! configuration drives a breaker through open, half-open and back without panicking, its
//! bulkhead never holding more calls than its limit, nor a slot after they end.

#![no_main]

use std::time::Duration;

use arbitrary::Arbitrary;
use breakerbox::clock::ManualClock;
use breakerbox::{Breaker, Config, State};
use libfuzzer_sys::fuzz_target;

/// A duration as a caller could write it.
#[derive(Arbitrary, Debug)]
enum RawDuration {
    Text(String),
    Nanos(u64),
    Parts(u64, u32),
}

impl RawDuration {
    /// The duration, or `None` when the text does not parse (an error, never a panic).
    fn get(&self) -> Option<Duration> {
        match self {
            RawDuration::Text(text) => humantime::parse_duration(text).ok(),
            RawDuration::Nanos(n) => Some(Duration::from_nanos(*n)),
            RawDuration::Parts(secs, nanos) => Some(Duration::new(*secs, nanos % 1_000_000_000)),
        }
    }
}

#[derive(Arbitrary, Debug)]
enum RawWindow {
    Count(u32),
    Time(RawDuration, u32),
}

#[derive(Arbitrary, Debug)]
enum Step {
    Acquire,
    Success,
    Failure,
    Ignore,
    Drop,
    Advance(RawDuration),
    ForceOpen,
    Disable,
    Reset,
    Snapshot,
}

#[derive(Arbitrary, Debug)]
struct Input {
    window: Option<RawWindow>,
    min_calls: Option<u32>,
    failure_rate: Option<f64>,
    slow_calls: Option<(RawDuration, f64)>,
    open_for: Option<RawDuration>,
    probes: Option<u32>,
    open_backoff: Option<(f64, RawDuration)>,
    ramp_up: Option<(Vec<u32>, RawDuration)>,
    ramp_latency_guard: Option<f64>,
    max_concurrent: Option<u32>,
    probe_timeout: Option<RawDuration>,
    steps: Vec<Step>,
}

fn config(input: &Input) -> Result<Config, breakerbox::config::ConfigError> {
    let mut b = Config::builder();
    match &input.window {
        Some(RawWindow::Count(n)) => b = b.count_window(*n),
        Some(RawWindow::Time(span, buckets)) => {
            if let Some(span) = span.get() {
                b = b.time_window(span, *buckets);
            }
        }
        None => {}
    }
    if let Some(n) = input.min_calls {
        b = b.min_calls(n);
    }
    if let Some(rate) = input.failure_rate {
        b = b.failure_rate(rate);
    }
    if let Some((threshold, rate)) = &input.slow_calls {
        if let Some(threshold) = threshold.get() {
            b = b.slow_calls(threshold, *rate);
        }
    }
    if let Some(open) = input.open_for.as_ref().and_then(RawDuration::get) {
        b = b.open_for(open);
    }
    if let Some(n) = input.probes {
        b = b.probes(n);
    }
    if let Some((factor, max)) = &input.open_backoff {
        if let Some(max) = max.get() {
            b = b.open_backoff(*factor, max);
        }
    }
    if let Some((percents, step)) = &input.ramp_up {
        if let Some(step) = step.get() {
            b = b.ramp_up(percents, step);
        }
    }
    if let Some(factor) = input.ramp_latency_guard {
        b = b.ramp_latency_guard(factor);
    }
    if let Some(calls) = input.max_concurrent {
        b = b.max_concurrent(calls);
    }
    if let Some(limit) = input.probe_timeout.as_ref().and_then(RawDuration::get) {
        b = b.probe_timeout(limit);
    }
    b.build()
}

fuzz_target!(|input: Input| {
    let config = match config(&input) {
        Ok(config) => config,
        Err(e) => {
            // An error names its field and says something.
            assert!(!e.field().is_empty() && !e.to_string().is_empty());
            return;
        }
    };
    let clock = ManualClock::new();
    let b = Breaker::with_clock("fuzz", config.clone(), clock.clone());
    let mut held = Vec::new();
    for step in input.steps.iter().take(200) {
        match step {
            Step::Acquire => {
                if let Ok(permit) = b.try_acquire() {
                    held.push(permit);
                }
            }
            Step::Success => {
                if let Some(p) = held.pop() {
                    p.success();
                }
            }
            Step::Failure => {
                if let Some(p) = held.pop() {
                    p.failure();
                }
            }
            Step::Ignore => {
                if let Some(p) = held.pop() {
                    p.ignore();
                }
            }
            Step::Drop => drop(held.pop()),
            Step::Advance(by) => {
                if let Some(by) = by.get() {
                    clock.advance(by);
                }
            }
            Step::ForceOpen => b.force_open(),
            Step::Disable => b.disable(),
            Step::Reset => b.reset(),
            Step::Snapshot => {
                let s = b.snapshot();
                assert!(s.failures <= s.calls && s.slow_calls <= s.calls);
                assert!((1..=100).contains(&s.admit_percent));
                assert!(b.probes_in_flight() <= config.probes());
                let by = s.totals.rejected_by;
                let reasons = by.open + by.half_open_full + by.forced_open + by.throttled;
                assert_eq!(reasons + by.bulkhead, s.totals.rejected);
            }
        }
        // Every permit held holds a slot, and no more calls than the limit are in flight.
        match config.max_concurrent() {
            Some(limit) => assert!(b.in_flight() as usize == held.len() && b.in_flight() <= limit),
            None => assert_eq!(b.in_flight(), 0),
        }
    }
    drop(held);
    assert_eq!(b.in_flight(), 0);
    // Whatever happened, a reset gives a working breaker.
    b.reset();
    assert_eq!(b.state(), State::Closed);
    b.try_acquire().expect("a reset breaker admits").success();
});
