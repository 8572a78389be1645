//! How the tuner scales with the calls: a downstream sick 5 s in every 10 s, 1,000 calls a
//! second, tuned on the full grid and its perturbed copies, for each count of calls given
//! (default 10,000, 100,000 and 1,000,000).
//!
//! ```text
//! cargo run --release -p breakerbox-tune --example scale -- 10000 100000 1000000
//! cargo run --release -p breakerbox-tune --example scale -- --timeouts 1000000
//! cargo run --release -p breakerbox-tune --example scale -- --timeouts --slow-successes 1000000
//! ```
//!
//! The sick calls fail fast (20 ms), so no call reaches the slow-call thresholds of the grid
//! and those candidates are scored as their twins without the rule: 1,800 replays. With
//! `--timeouts` they fail in 1 s: the slow-call rules whose slow rate is at or above the
//! failure rate count only failures and decide as their twins, and the others replay (2,520
//! replays). With `--slow-successes` too, one sick call in 100 succeeds in 1 s, so every
//! slow-call rule counts a success and all 5,400 candidates replay.
//!
//! Prints, per size, the wall time of the whole tuning, the process's CPU time (user and
//! system; on a shared machine the wall time stretches, the CPU time much less), and the
//! peak resident memory (Linux). Each size runs in a process of its own, so each peak is
//! its own.

use std::process::Command;
use std::time::{Duration, Instant};

use breakerbox::recording::{CallOutcome, RecordedCall, Recording};
use breakerbox::Outcome;

use breakerbox_tune::{tune_with, Options};

/// `n` calls at 1,000 a second, 10 to 20 ms, 1% failing; failing in 20 ms (1 s with
/// `timeouts`) from 5 s to 10 s of every 10 s, but one in 100 succeeding in 1 s with
/// `slow_successes`.
fn trace(n: u64, timeouts: bool, slow_successes: bool) -> Recording {
    let mut rng = fastrand::Rng::with_seed(7);
    (0..n)
        .map(|i| {
            let start = Duration::from_micros(i * 1_000 + rng.u64(0..1_000));
            let sick = start.as_secs() % 10 >= 5;
            let (latency, failed) = if sick {
                (
                    Duration::from_millis(if timeouts { 1000 } else { 20 }),
                    !(slow_successes && rng.u64(0..100) == 0),
                )
            } else {
                (
                    Duration::from_micros(10_000 + rng.u64(0..10_000)),
                    rng.u64(0..100) == 0,
                )
            };
            RecordedCall::new(
                start,
                latency,
                CallOutcome::Completed(if failed {
                    Outcome::Failure
                } else {
                    Outcome::Success
                }),
            )
        })
        .collect()
}

/// The process's user and system CPU time, from `/proc/self/stat` (Linux).
fn cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit(')').next()?.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// The peak resident memory, in MB, from `/proc/self/status` (Linux).
fn peak_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn main() {
    let timeouts = std::env::args().any(|a| a == "--timeouts");
    let slow_successes = timeouts && std::env::args().any(|a| a == "--slow-successes");
    let sizes: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    if let [n] = sizes[..] {
        let recording = trace(n, timeouts, slow_successes);
        let (cpu0, started) = (cpu(), Instant::now());
        let options = Options::default();
        let tuning = tune_with(&recording, &breakerbox::Config::default(), options);
        let wall = started.elapsed();
        let cpu = cpu().zip(cpu0).map(|(a, b)| a - b);
        println!(
            "{n:>9} calls{}: {}, {} configurations + {} on {} copies: {:.1} s wall \
             ({:.1} s the grid), {} CPU on {} threads, peak {} MB; pick {}",
            match (timeouts, slow_successes) {
                (true, true) => " (1 s timeouts, 1% slow successes)",
                (true, false) => " (1 s timeouts)",
                _ => "",
            },
            breakerbox_tune::report::plural(
                tuning.health.outages.len() as u64,
                "outage",
                "outages"
            ),
            tuning.specs.len(),
            tuning.robustness.candidates.len() + 1,
            tuning.robustness.perturbations,
            wall.as_secs_f64(),
            tuning.elapsed.as_secs_f64(),
            cpu.map_or("?".into(), |c| format!("{:.1} s", c.as_secs_f64())),
            options.threads,
            peak_mb().map_or("?".into(), |m| format!("{m:.0}")),
            tuning
                .recommended_spec()
                .map_or("none (keep the current)".into(), |s| s.to_string())
        );
        return;
    }
    let sizes = if sizes.is_empty() {
        vec![10_000, 100_000, 1_000_000]
    } else {
        sizes
    };
    let me = std::env::current_exe().expect("the example's path");
    for n in sizes {
        let status = Command::new(&me)
            .arg(n.to_string())
            .args(timeouts.then_some("--timeouts"))
            .args(slow_successes.then_some("--slow-successes"))
            .status()
            .expect("the example runs itself");
        assert!(status.success());
    }
}
