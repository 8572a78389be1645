//! A panic is a failure of the call, whoever catches it: a call whose future panics is
//! recorded as failed when it panics, also when the panic is caught around the future (a web
//! framework's panic handler, a test harness) and the future is dropped later, on a thread
//! no longer unwinding.
//!
//! `call`, `run` and the attribute hold their permit in an `async fn`, whose locals a panic
//! drops as it leaves the function; the tower layer's response future holds it in a field,
//! which it must settle itself.

use std::future::Future;
use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use breakerbox::{circuit_breaker, policy::TimedOut, registry, Breaker, Config, Rejected};

const MARK: &str = "the call panics";

/// Polls `future` once, catching a panic as `catch_unwind` around a future does; the future
/// itself is kept, to be dropped by the caller later.
fn poll_catching<F: Future + ?Sized>(future: Pin<&mut F>) -> Result<Poll<F::Output>, String> {
    static QUIET: std::sync::Once = std::sync::Once::new();
    QUIET.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<&str>() != Some(&MARK) {
                default(info);
            }
        }));
    });
    let mut cx = Context::from_waker(Waker::noop());
    panic::catch_unwind(AssertUnwindSafe(|| future.poll(&mut cx))).map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map_or_else(String::new, |s| (*s).to_owned())
    })
}

/// Failures and cancellations of `b` so far.
fn failed_and_cancelled(b: &Breaker) -> (u64, u64) {
    let t = b.snapshot().totals;
    (t.failure, t.cancelled)
}

/// Polls `call` once, which must panic, then drops it: the panic is a failure, counted once.
fn panics_and_is_a_failure<F: Future>(b: &Breaker, call: F) {
    let mut call = Box::pin(call);
    assert_eq!(poll_catching(call.as_mut()).err().as_deref(), Some(MARK));
    assert_eq!(failed_and_cancelled(b), (1, 0), "recorded when it panics");
    drop(call);
    assert_eq!(
        failed_and_cancelled(b),
        (1, 0),
        "and not again when dropped"
    );
}

async fn panicking() -> Result<(), io::Error> {
    panic::panic_any(MARK)
}

#[test]
fn a_caught_panic_in_call_is_a_failure() {
    let b = Breaker::new("caught::call", Config::default());
    panics_and_is_a_failure(&b, b.call(panicking()));
}

#[test]
fn a_caught_panic_in_run_is_a_failure_and_not_retried() {
    let config = Config::builder().retries(2).retry_backoff(Duration::ZERO);
    let b = Breaker::new("caught::run", config.build().unwrap());
    panics_and_is_a_failure(&b, b.run(panicking));
    assert_eq!(b.snapshot().totals.retries, 0);
}

#[tokio::test(start_paused = true)]
async fn a_caught_panic_in_a_timed_run_is_a_failure() {
    let config = Config::builder().timeout(Duration::from_secs(1));
    let b = Breaker::new("caught::timed", config.build().unwrap());
    panics_and_is_a_failure(&b, b.run(panicking));
}

#[test]
fn a_panic_dropping_the_permit_as_it_unwinds_is_one_failure_too() {
    let b = Breaker::new("caught::unwound", Config::default());
    let unwound = panic::catch_unwind(AssertUnwindSafe(|| {
        let call = pin!(b.call(panicking()));
        let _ = call.poll(&mut Context::from_waker(Waker::noop()));
    }));
    assert!(unwound.is_err());
    assert_eq!(failed_and_cancelled(&b), (1, 0));
}

#[derive(Debug)]
pub struct Down;

impl breakerbox::Classify for Down {
    fn classify(&self) -> breakerbox::Outcome {
        breakerbox::Outcome::Failure
    }
}

impl From<Rejected> for Down {
    fn from(_: Rejected) -> Self {
        Down
    }
}

impl From<TimedOut> for Down {
    fn from(_: TimedOut) -> Self {
        Down
    }
}

#[circuit_breaker(name = "caught::attribute")]
async fn annotated() -> Result<(), Down> {
    panic::panic_any(MARK)
}

#[circuit_breaker(name = "caught::attribute_retried", retries = 2, retry_backoff = "0s")]
async fn annotated_retried() -> Result<(), Down> {
    panic::panic_any(MARK)
}

#[circuit_breaker(name = "caught::attribute_timed", timeout = "1s")]
async fn annotated_timed() -> Result<(), Down> {
    panic::panic_any(MARK)
}

#[tokio::test(start_paused = true)]
async fn a_caught_panic_in_an_annotated_call_is_a_failure() {
    let mut calls: [(Pin<Box<dyn Future<Output = _>>>, &str); 3] = [
        (Box::pin(annotated()), "caught::attribute"),
        (Box::pin(annotated_retried()), "caught::attribute_retried"),
        (Box::pin(annotated_timed()), "caught::attribute_timed"),
    ];
    for (call, name) in &mut calls {
        assert_eq!(poll_catching(call.as_mut()).err().as_deref(), Some(MARK));
        let b = registry().get(name).expect("registered on its first call");
        assert_eq!(failed_and_cancelled(&b), (1, 0), "{name}");
    }
    for (call, name) in calls {
        drop(call);
        let b = registry().get(name).unwrap();
        assert_eq!(failed_and_cancelled(&b), (1, 0), "{name}");
        assert_eq!(b.snapshot().totals.retries, 0, "{name}");
    }
}

#[test]
fn a_caught_panic_behind_the_tower_layer_is_a_failure() {
    use breakerbox::tower::CircuitBreakerLayer;
    use tower::{service_fn, Layer, Service};

    let b = Arc::new(Breaker::new("caught::tower", Config::default()));
    let mut svc = CircuitBreakerLayer::new(b.clone()).layer(service_fn(|()| async {
        panic::panic_any::<&str>(MARK);
        #[allow(unreachable_code)]
        Ok::<_, io::Error>(http::Response::new(()))
    }));
    let ready = poll_catching(pin!(std::future::poll_fn(|cx| svc.poll_ready(cx))));
    assert!(matches!(ready, Ok(Poll::Ready(Ok(())))));
    panics_and_is_a_failure(&b, svc.call(()));
}
