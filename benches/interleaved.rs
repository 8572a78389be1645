//! The closed path with one failure in ten, ours against failsafe's consecutive-failures
//! policy, measured in alternation: round after round, each breaker runs the same calls in
//! turn, and each round gives the ratio of the two.
//!
//! A criterion run measures one breaker after the other, seconds apart, so when the machine
//! is shared the two may meet different neighbours. Alternating in rounds of a few
//! milliseconds puts both under the same conditions, and the spread of the per-round ratios
//! shows how those conditions move it.
//!
//! Run with `cargo bench -p breaker-benches --bench interleaved`; `benches/README.md` has the output of three runs.

mod common;

use std::time::Instant;

use common::{call_failsafe, call_ours, failsafe_consecutive, ours, Mix, OPEN};

/// Calls per breaker per round: a few milliseconds.
const CALLS: u64 = 1_000_000;
const ROUNDS: usize = 301;

/// Nanoseconds per call of `calls` calls of `call`, each told whether to fail as `Mix` says.
#[inline(never)]
fn time(mut call: impl FnMut(bool)) -> f64 {
    let mut mix = Mix(0);
    let start = Instant::now();
    for _ in 0..CALLS {
        call(mix.next());
    }
    start.elapsed().as_nanos() as f64 / CALLS as f64
}

/// The value a fraction `q` of the way through `sorted`.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn main() {
    // `cargo bench` passes `--bench`; any other argument (a criterion filter) skips the run.
    if std::env::args().skip(1).any(|a| !a.starts_with("--")) {
        return;
    }
    let b = ours(OPEN);
    let f = failsafe_consecutive(OPEN);
    let (mut ns_ours, mut ns_failsafe, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let o = time(|fail| call_ours(&b, fail));
        let s = time(|fail| call_failsafe(&f, fail));
        ns_ours.push(o);
        ns_failsafe.push(s);
        ratios.push(o / s);
    }
    for v in [&mut ns_ours, &mut ns_failsafe, &mut ratios] {
        v.sort_by(f64::total_cmp);
    }
    println!("closed, 10% failures: {ROUNDS} rounds of {CALLS} calls each, in alternation");
    println!(
        "{:<24}{:>9}{:>9}{:>9}{:>9}{:>9}",
        "", "min", "q1", "median", "q3", "max"
    );
    let row = |name: &str, v: &[f64], unit: &str| {
        let cells: String = [0.0, 0.25, 0.5, 0.75, 1.0]
            .iter()
            .map(|&q| format!("{:>9}", format!("{:.2}{unit}", quantile(v, q))))
            .collect();
        println!("{name:<24}{cells}");
    };
    row("breaker", &ns_ours, " ns");
    row("failsafe consecutive", &ns_failsafe, " ns");
    row("ratio, round by round", &ratios, "x");
}
