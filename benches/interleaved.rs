//! The closed path with one failure in ten, ours against recloser and failsafe's
//! consecutive-failures policy, with one bare `AtomicU64::swap` a call and the same swap
//! after the downstream's call for reference, measured in alternation: round after round,
//! each runs the same number of calls in turn, and each round gives the ratios of ours to
//! the others.
//!
//! A criterion run measures one breaker after the other, seconds apart, so when the machine
//! is shared they may meet different neighbours. Alternating in rounds of a few
//! milliseconds puts all of them under the same conditions, and the spread of the
//! per-round ratios shows how those conditions move them.
//!
//! Run with `cargo bench -p breaker-benches --bench interleaved`; `benches/README.md` has
//! the output of runs.

mod common;

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use common::{
    call_failsafe, call_ours, call_recloser, downstream, failsafe_consecutive, ours, recloser, Mix,
    OPEN,
};

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

/// Nanoseconds per swap of `CALLS` uncontended swaps of `word`, with nothing else in the loop.
#[inline(never)]
fn time_swaps(word: &AtomicU64) -> f64 {
    let start = Instant::now();
    for i in 0..CALLS {
        word.swap(i, Ordering::AcqRel);
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
    let r = recloser(OPEN);
    let f = failsafe_consecutive(OPEN);
    let word = AtomicU64::new(0);
    // Per round: ours, recloser, failsafe, one swap, the call and one swap; then ours over
    // each of the four.
    let mut ns: [Vec<f64>; 5] = Default::default();
    let mut ratios: [Vec<f64>; 4] = Default::default();
    for _ in 0..ROUNDS {
        let o = time(|fail| call_ours(&b, fail));
        let times = [
            o,
            time(|fail| call_recloser(&r, fail)),
            time(|fail| call_failsafe(&f, fail)),
            time_swaps(&word),
            time(|fail| {
                if let Ok(v) = downstream(fail) {
                    black_box(v);
                }
                word.swap(1, Ordering::AcqRel);
            }),
        ];
        for (v, t) in ns.iter_mut().zip(times) {
            v.push(t);
        }
        for (v, t) in ratios.iter_mut().zip(&times[1..]) {
            v.push(o / t);
        }
    }
    for v in ns.iter_mut().chain(ratios.iter_mut()) {
        v.sort_by(f64::total_cmp);
    }
    println!("closed, 10% failures: {ROUNDS} rounds of {CALLS} calls each, in alternation");
    println!(
        "{:<30}{:>10}{:>10}{:>10}{:>10}{:>10}",
        "", "min", "q1", "median", "q3", "max"
    );
    let row = |name: &str, v: &[f64], unit: &str| {
        let cells: String = [0.0, 0.25, 0.5, 0.75, 1.0]
            .iter()
            .map(|&q| format!("{:>10}", format!("{:.2}{unit}", quantile(v, q))))
            .collect();
        println!("{name:<30}{cells}");
    };
    let names = [
        "breaker",
        "recloser",
        "failsafe consecutive",
        "one swap",
        "the call and one swap",
    ];
    for (name, v) in names.iter().zip(&ns) {
        row(name, v, " ns");
    }
    for (name, v) in names[1..].iter().zip(&ratios) {
        row(&format!("ratio to {name}"), v, "x");
    }
}
