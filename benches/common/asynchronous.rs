//! What the async benchmarks share, beside `common`: the executor that polls every breaker's
//! future alike, and the error of the attribute's call policy. Included by the benchmarks
//! that poll futures only, so that the others carry none of it.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use breakerbox::{Classify, Outcome, Rejected};

/// Polls `future` to completion on this thread; nothing here waits. Inlined, as every
/// breaker's call wrapper is, so that no future is copied into a function of its own (which
/// weighs most on the fastest: `benches/README.md`, "The async fn and the call policy").
#[inline(always)]
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

/// The downstream's error for the attribute with a timeout, which needs `From<TimedOut>`.
#[derive(Debug)]
pub struct PolicyDown;

impl Classify for PolicyDown {
    fn classify(&self) -> Outcome {
        Outcome::Failure
    }
}

impl From<Rejected> for PolicyDown {
    fn from(_: Rejected) -> Self {
        PolicyDown
    }
}

impl From<breakerbox::policy::TimedOut> for PolicyDown {
    fn from(_: breakerbox::policy::TimedOut) -> Self {
        PolicyDown
    }
}
