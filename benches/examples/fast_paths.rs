//! Runs one fast path of the breaker in a loop, for counting its instructions with callgrind
//! (`.ci/fast-paths` runs every path twice, at two loop lengths, and takes the difference per
//! call, so that start-up and the loop's set-up cancel out):
//!
//! ```text
//! cargo build --release -p breaker-benches --example fast_paths
//! valgrind --tool=callgrind target/release/examples/fast_paths closed_success 200000
//! ```
//!
//! Every breaker made here runs on a `ManualClock`: the production clock's OPEN reads the
//! kernel's coarse clock, whose vDSO valgrind does not map, so that under valgrind the
//! reading is a system call, not what a service runs. The annotated functions run on their
//! default clock, the production one, which only the call policy's retry budget reads (its
//! coarse clock, and its time-stamp counter once a second or near a second's end); the
//! counter's calibration, once per process, is left out of the count. The loop and the downstream (with its mix of failures) are counted with the
//! breaker, as in the criterion benchmarks.

#[path = "../common/mod.rs"]
#[allow(dead_code)]
mod common;

#[path = "../common/asynchronous.rs"]
mod asynchronous;

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Duration;

use asynchronous::{block_on, PolicyDown};
use breakerbox::clock::{Clock, ManualClock, MonotonicClock};
use breakerbox::{circuit_breaker, Breaker, Config};
use common::{call_ours, Down, Mix, MIN_CALLS, OPEN, PROBES, RATE, WINDOW};

/// Every path the gate counts, with what it runs once per call.
const PATHS: [(&str, &str); 12] = [
    ("closed_success", "CLOSED, a success"),
    ("closed_mixed", "CLOSED, one failure in ten"),
    ("open_rejection", "OPEN, a rejection"),
    (
        "half_open_full",
        "HALF_OPEN with every probe out, a rejection",
    ),
    (
        "half_open_cycle",
        "the OPEN expires, a probe fails, the breaker reopens",
    ),
    ("time_window_success", "CLOSED on a time window, a success"),
    (
        "time_window_mixed",
        "CLOSED on a time window, one failure in ten",
    ),
    (
        "async_attribute",
        "an annotated async fn, CLOSED, its future ready at once",
    ),
    (
        "policy_run",
        "Breaker::run with a timeout and 2 retries, CLOSED, its attempt ready at once",
    ),
    (
        "policy_attribute",
        "an async fn under #[circuit_breaker(timeout, retries = 2)], its attempt ready at once",
    ),
    (
        "closed_throttled_success",
        "CLOSED with adaptive throttling (throttle = 2.0), a success",
    ),
    (
        "closed_throttled_mixed",
        "CLOSED with adaptive throttling, one failure in ten",
    ),
];

/// A CLOSED count window never reads the clock: the default clock is never asked.
#[circuit_breaker(window = 20, min = 10, rate = 0.5, open = "5s", probes = 3)]
async fn annotated(n: u64) -> Result<u64, Down> {
    Ok(black_box(n) + 1)
}

/// The call policy in the attribute, on the default clock, the production one (this package
/// leaves `test-util` out), which only the retry budget reads on this path.
#[circuit_breaker(
    window = 20,
    min = 10,
    rate = 0.5,
    open = "5s",
    probes = 3,
    timeout = "800ms",
    retries = 2
)]
async fn annotated_policy(n: u64) -> Result<u64, PolicyDown> {
    Ok(black_box(n) + 1)
}

/// The count window's breaker under a call policy: a timeout of 800ms on each attempt, up
/// to 2 retries (with the defaults of the rest: backoff, budget).
fn policy(clock: &ManualClock) -> Breaker {
    let config = Config::builder()
        .timeout(Duration::from_millis(800))
        .retries(2)
        .count_window(WINDOW)
        .min_calls(MIN_CALLS)
        .failure_rate(RATE)
        .open_for(OPEN)
        .probes(PROBES)
        .build()
        .expect("a valid configuration");
    Breaker::with_clock("fast_paths", config, clock.clone())
}

fn count_window(clock: &ManualClock) -> Breaker {
    let config = Config::builder()
        .count_window(WINDOW)
        .min_calls(MIN_CALLS)
        .failure_rate(RATE)
        .open_for(OPEN)
        .probes(PROBES)
        .build()
        .expect("a valid configuration");
    Breaker::with_clock("fast_paths", config, clock.clone())
}

/// The count window's breaker with adaptive throttling on (K = 2, the default window of
/// 2 minutes): one failure in ten never makes it refuse (a call is refused only while the
/// failures outnumber the successes).
fn throttled(clock: &ManualClock) -> Breaker {
    let config = Config::builder()
        .count_window(WINDOW)
        .min_calls(MIN_CALLS)
        .failure_rate(RATE)
        .open_for(OPEN)
        .probes(PROBES)
        .throttle(2.0)
        .build()
        .expect("a valid configuration");
    Breaker::with_clock("fast_paths", config, clock.clone())
}

fn time_window(clock: &ManualClock) -> Breaker {
    let config = Config::builder()
        .time_window(Duration::from_secs(10), 10)
        .min_calls(MIN_CALLS)
        .failure_rate(RATE)
        .open_for(OPEN)
        .probes(PROBES)
        .build()
        .expect("a valid configuration");
    Breaker::with_clock("fast_paths", config, clock.clone())
}

fn trip(b: &Breaker) {
    while b.state() == breakerbox::State::Closed {
        call_ours(b, true);
    }
}

/// Runs `path` for `calls` calls. Each path's loop is a function of its own, never inlined
/// here, so that the code of one path (the breaker's inlined with it) is laid out and its
/// registers allocated alone: a change to one path does not move another's instructions.
/// Never inlined: `.ci/fast-paths` counts inside this function by its name.
#[inline(never)]
fn run(path: &str, calls: u64) -> Result<(), String> {
    let clock = ManualClock::new();
    match path {
        "closed_success" => closed(&count_window(&clock), calls, false),
        "closed_mixed" => closed(&count_window(&clock), calls, true),
        "open_rejection" => open_rejection(&clock, calls),
        "half_open_full" => half_open_full(&clock, calls),
        "half_open_cycle" => half_open_cycle(&clock, calls),
        "time_window_success" => ticking(&time_window(&clock), &clock, calls, false),
        "time_window_mixed" => ticking(&time_window(&clock), &clock, calls, true),
        "closed_throttled_success" | "closed_throttled_mixed" => {
            let b = throttled(&clock);
            ticking(&b, &clock, calls, path == "closed_throttled_mixed");
            assert_eq!(b.snapshot().totals.rejected, 0, "a healthy downstream");
        }
        "async_attribute" => async_attribute(calls),
        "policy_run" | "policy_attribute" => run_policy(path, calls),
        _ => {
            let names: Vec<_> = PATHS.iter().map(|(name, _)| *name).collect();
            return Err(format!(
                "unknown path {path:?}: one of {}",
                names.join(", ")
            ));
        }
    }
    Ok(())
}

/// A CLOSED breaker's calls, every one a success or (if `mixed`) one in ten a failure.
#[inline(never)]
fn closed(b: &Breaker, calls: u64, mixed: bool) {
    let mut mix = Mix(0);
    for _ in 0..calls {
        call_ours(b, mixed && mix.next());
    }
}

/// [`closed`] at a thousand calls a second of `clock`: a time window's buckets, or the
/// throttle's, are used in turn.
#[inline(never)]
fn ticking(b: &Breaker, clock: &ManualClock, calls: u64, mixed: bool) {
    let mut mix = Mix(0);
    for i in 0..calls {
        if i % 1000 == 999 {
            clock.advance(Duration::from_secs(1));
        }
        call_ours(b, mixed && mix.next());
    }
}

#[inline(never)]
fn open_rejection(clock: &ManualClock, calls: u64) {
    let b = count_window(clock);
    trip(&b);
    for _ in 0..calls {
        call_ours(&b, false);
    }
}

#[inline(never)]
fn half_open_full(clock: &ManualClock, calls: u64) {
    let b = count_window(clock);
    trip(&b);
    clock.advance(OPEN);
    let probes: Vec<_> = (0..PROBES).map(|_| b.try_acquire().unwrap()).collect();
    for _ in 0..calls {
        call_ours(&b, false);
    }
    black_box(probes);
}

#[inline(never)]
fn half_open_cycle(clock: &ManualClock, calls: u64) {
    let b = count_window(clock);
    trip(&b);
    for _ in 0..calls {
        clock.advance(OPEN);
        call_ours(&b, true);
    }
}

#[inline(never)]
fn async_attribute(calls: u64) {
    for i in 0..calls {
        if let Ok(v) = block_on(annotated(i)) {
            black_box(v);
        }
    }
}

/// The call policy's two paths.
#[inline(never)]
fn run_policy(path: &str, calls: u64) {
    if path == "policy_run" {
        let b = policy(&ManualClock::new());
        for i in 0..calls {
            let attempt = || async move { Ok::<_, Down>(black_box(i) + 1) };
            if let Ok(Ok(v)) = block_on(b.run(attempt)) {
                black_box(v);
            }
        }
    } else {
        for i in 0..calls {
            if let Ok(v) = block_on(annotated_policy(i)) {
                black_box(v);
            }
        }
    }
}

/// [`run`] after the production clock's one-time calibration, which `.ci/fast-paths` leaves
/// out of its count (it counts inside `run` only): the calibration takes as long as it takes,
/// a varying number of instructions, where every path must count the same each time.
fn warmed(path: &str, calls: u64) -> Result<(), String> {
    black_box(MonotonicClock.now());
    run(path, calls)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [list] if list == "--list" => {
            for (name, what) in PATHS {
                println!("{name}\t{what}");
            }
            ExitCode::SUCCESS
        }
        [path, calls] => match calls.parse::<u64>() {
            Ok(calls) => match warmed(path, calls) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::FAILURE
                }
            },
            Err(_) => {
                eprintln!("error: calls must be a whole number, got {calls:?}");
                ExitCode::FAILURE
            }
        },
        _ => {
            eprintln!("usage: fast_paths <path> <calls> | fast_paths --list");
            ExitCode::FAILURE
        }
    }
}
