//! What a call listener (`Breaker::on_call`) costs: ours without one and with one, on the
//! paths of `peers.rs` (CLOSED success, CLOSED with one failure in ten, OPEN rejection), in
//! one criterion run. The listener counts the events it hears, the least a listener does.
//!
//! Run with `cargo bench -p breaker-benches --bench call_events`; `benches/README.md` has the
//! rows of one run and the instruction counts.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use breakerbox::Breaker;
use criterion::{criterion_group, criterion_main, Criterion};

#[allow(dead_code)] // the peers' wrappers, which only the other benchmarks call
mod common;

use common::{call_ours, ours, Mix, OPEN};

/// Breakers measured while open stay open for the whole run.
const OPEN_LONG: Duration = Duration::from_secs(3600);

/// `b` with a listener that counts each call's event.
fn listened(b: Breaker) -> Breaker {
    let heard = Arc::new(AtomicU64::new(0));
    b.on_call(move |e| {
        black_box(e);
        heard.fetch_add(1, Ordering::Relaxed);
    });
    b
}

fn paths(c: &mut Criterion) {
    for (group, mixed) in [("closed success", false), ("closed 10% failures", true)] {
        let mut g = c.benchmark_group(group);
        for (name, b) in [
            ("breaker", ours(OPEN)),
            ("breaker, call listener", listened(ours(OPEN))),
        ] {
            g.bench_function(name, |bench| {
                let mut m = Mix(0);
                bench.iter(|| call_ours(&b, mixed && m.next()))
            });
        }
        g.finish();
    }
    let mut g = c.benchmark_group("open rejection");
    for (name, b) in [
        ("breaker", ours(OPEN_LONG)),
        ("breaker, call listener", listened(ours(OPEN_LONG))),
    ] {
        for _ in 0..20 {
            call_ours(&b, true);
        }
        assert!(b.try_acquire().is_err(), "the breaker did not open");
        g.bench_function(name, |bench| bench.iter(|| call_ours(&b, false)));
    }
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .sample_size(50)
}

criterion_group! {
    name = call_events;
    config = config();
    targets = paths
}
criterion_main!(call_events);
