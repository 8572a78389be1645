//! The cost of `#[circuit_breaker]` over the same calls written by hand against the runtime.
//!
//! Both sides run the same trivial body through the same breaker configuration; each future
//! is driven by a no-op waker, so the numbers are the breaker's bookkeeping and nothing else.

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::sync::OnceLock;
use std::task::{Context, Poll, Waker};

use breaker::{circuit_breaker, Breaker, Classify, Config, Outcome, Rejected};
use criterion::{criterion_group, criterion_main, Criterion};

#[derive(Debug)]
struct Down;

impl Classify for Down {
    fn classify(&self) -> Outcome {
        Outcome::Failure
    }
}

impl From<Rejected> for Down {
    fn from(_: Rejected) -> Self {
        Down
    }
}

/// Polls `future` to completion on this thread; the bodies here never wait.
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

async fn downstream(n: u64) -> Result<u64, Down> {
    Ok(black_box(n) + 1)
}

#[circuit_breaker(window = 100, min = 100)]
async fn annotated(n: u64) -> Result<u64, Down> {
    downstream(n).await
}

#[circuit_breaker(window = 100, min = 100, key = host)]
async fn annotated_keyed(host: &str, n: u64) -> Result<u64, Down> {
    downstream(n).await
}

/// What the attribute saves you from writing.
async fn by_hand(n: u64) -> Result<u64, Down> {
    static BREAKER: OnceLock<Breaker> = OnceLock::new();
    let config = Config::builder().count_window(100).min_calls(100);
    let breaker =
        BREAKER.get_or_init(|| Breaker::new("by_hand", config.build().expect("valid config")));
    match breaker.try_acquire() {
        Ok(permit) => {
            let out = downstream(n).await;
            permit.record(out.classify());
            out
        }
        Err(rejected) => Err(Down::from(rejected)),
    }
}

fn attribute(c: &mut Criterion) {
    let mut group = c.benchmark_group("closed_call");
    group.bench_function("by_hand", |b| b.iter(|| block_on(by_hand(black_box(1)))));
    group.bench_function("attribute", |b| {
        b.iter(|| block_on(annotated(black_box(1))))
    });
    group.bench_function("attribute_keyed", |b| {
        b.iter(|| block_on(annotated_keyed(black_box("10.0.0.1:7000"), black_box(1))))
    });
    group.finish();
}

criterion_group!(benches, attribute);
criterion_main!(benches);
