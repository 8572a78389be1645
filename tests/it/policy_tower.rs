//! `breakerbox::tower::RetryFailures` under tower's `Retry`, outside the breaker's layer: every
//! attempt asks the breaker, failures are retried within the budget, rejections never.

use std::convert::Infallible;
use std::future::Future;
use std::future::{ready, Ready};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use breakerbox::tower::{BreakerError, CircuitBreakerLayer, RetryFailures};
use breakerbox::{config::ConfigBuilder, Breaker, Config, RejectReason, State};
use http::Response;
use tower::retry::RetryLayer;
use tower::timeout::TimeoutLayer;
use tower::{Service, ServiceBuilder, ServiceExt};

/// Answers each request with the next status of its script (the last one repeated), counting
/// the requests that reach it.
#[derive(Clone)]
struct Upstream {
    script: Arc<[u16]>,
    hits: Arc<AtomicU32>,
}

impl Upstream {
    fn new(script: &[u16]) -> Self {
        Self {
            script: script.into(),
            hits: Arc::new(AtomicU32::new(0)),
        }
    }

    fn hits(&self) -> u32 {
        self.hits.load(Ordering::SeqCst)
    }
}

impl Service<()> for Upstream {
    type Response = Response<()>;
    type Error = Infallible;
    type Future = Ready<Result<Response<()>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, (): ()) -> Self::Future {
        let n = self.hits.fetch_add(1, Ordering::SeqCst) as usize;
        let status = self.script[n.min(self.script.len() - 1)];
        ready(Ok(Response::builder().status(status).body(()).unwrap()))
    }
}

fn breaker(name: &str, policy: ConfigBuilder) -> Arc<Breaker> {
    Arc::new(Breaker::new(name, policy.build().unwrap()))
}

/// Retry, then the breaker's layer, then the upstream.
fn guarded(
    b: &Arc<Breaker>,
    upstream: &Upstream,
) -> impl Service<(), Response = Response<()>, Error = BreakerError<Infallible>> {
    ServiceBuilder::new()
        .layer(RetryLayer::new(RetryFailures::new(b.clone())))
        .layer(CircuitBreakerLayer::new(b.clone()))
        .service(upstream.clone())
}

#[tokio::test(start_paused = true)]
async fn failures_are_retried_until_an_answer() {
    let b = breaker("tower_retry::blip", Config::builder().retries(3));
    let upstream = Upstream::new(&[503, 502, 200]);
    let response = guarded(&b, &upstream).oneshot(()).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(upstream.hits(), 3);
    let t = b.snapshot().totals;
    assert_eq!((t.failure, t.success, t.retries), (2, 1, 2));
}

#[tokio::test(start_paused = true)]
async fn an_answer_is_never_retried() {
    let b = breaker("tower_retry::answer", Config::builder().retries(3));
    let upstream = Upstream::new(&[404]);
    let response = guarded(&b, &upstream).oneshot(()).await.unwrap();
    assert_eq!(response.status(), 404);
    assert_eq!(upstream.hits(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_rejection_is_never_retried() {
    let b = breaker("tower_retry::forced", Config::builder().retries(3));
    b.force_open();
    let upstream = Upstream::new(&[200]);
    let err = guarded(&b, &upstream).oneshot(()).await.unwrap_err();
    assert_eq!(err.rejected().unwrap().reason(), RejectReason::ForcedOpen);
    assert_eq!(upstream.hits(), 0);
    let t = b.snapshot().totals;
    assert_eq!((t.rejected, t.retries, t.retry_budget_exhausted), (1, 0, 0));
}

#[tokio::test(start_paused = true)]
async fn every_retry_asks_the_breaker_and_a_rejected_one_ends_the_call() {
    let policy = Config::builder()
        .count_window(2)
        .min_calls(2)
        .failure_rate(1.0)
        .retries(3);
    let b = breaker("tower_retry::opens", policy);
    let upstream = Upstream::new(&[503]);
    let err = guarded(&b, &upstream).oneshot(()).await.unwrap_err();
    // Two failures open the breaker: the third attempt is rejected, and not retried.
    assert_eq!(err.rejected().unwrap().reason(), RejectReason::Open);
    assert_eq!(upstream.hits(), 2);
    assert_eq!(b.state(), State::Open);
    let t = b.snapshot().totals;
    assert_eq!((t.failure, t.rejected, t.retries), (2, 1, 1));
}

#[tokio::test(start_paused = true)]
async fn the_budget_is_the_breakers_own() {
    let policy = Config::builder()
        .count_window(1000)
        .min_calls(1000)
        .retries(1)
        .retry_backoff(Duration::ZERO)
        .retry_budget(0.0)
        .retry_floor(1);
    let b = breaker("tower_retry::budget", policy);
    let upstream = Upstream::new(&[503]);
    // The floor's ten retries, half spent by `run`, half by the tower stack.
    for _ in 0..5 {
        let out = b
            .run(|| async { Err::<(), _>(std::io::Error::other("down")) })
            .await;
        assert!(matches!(out, Ok(Err(_))));
    }
    for _ in 0..6 {
        let response = guarded(&b, &upstream).oneshot(()).await.unwrap();
        assert_eq!(response.status(), 503);
    }
    assert_eq!(upstream.hits(), 11);
    let t = b.snapshot().totals;
    assert_eq!((t.retries, t.retry_budget_exhausted), (10, 1));
}

#[tokio::test(start_paused = true)]
async fn without_retries_nothing_is_retried() {
    let b = breaker("tower_retry::none", Config::builder());
    let upstream = Upstream::new(&[503, 200]);
    let response = guarded(&b, &upstream).oneshot(()).await.unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(upstream.hits(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_timeout_inside_the_layer_is_a_failure_and_retried() {
    let policy = Config::builder().retries(1).retry_backoff(Duration::ZERO);
    let b = breaker("tower_retry::timeout", policy);
    let hits = Arc::new(AtomicU32::new(0));
    let counted = hits.clone();
    let svc = ServiceBuilder::new()
        .layer(RetryLayer::new(RetryFailures::new(b.clone())))
        .layer(CircuitBreakerLayer::new(b.clone()))
        .layer(TimeoutLayer::new(Duration::from_millis(800)))
        .service(tower::service_fn(move |()| {
            counted.fetch_add(1, Ordering::SeqCst);
            std::future::pending::<Result<Response<()>, Infallible>>()
        }));
    let start = tokio::time::Instant::now();
    let err = svc.oneshot(()).await.unwrap_err();
    assert_eq!(start.elapsed(), Duration::from_millis(1600));
    assert!(err
        .into_inner()
        .unwrap()
        .is::<tower::timeout::error::Elapsed>());
    assert_eq!(hits.load(Ordering::SeqCst), 2);
    let t = b.snapshot().totals;
    assert_eq!((t.failure, t.cancelled, t.retries), (2, 0, 1));
}

#[tokio::test(start_paused = true)]
async fn a_concurrency_limit_outside_the_retries_holds_one_slot_for_the_whole_call() {
    let policy = Config::builder().retries(1).retry_backoff(Duration::ZERO);
    let b = breaker("tower_retry::limited", policy);
    let hits = Arc::new(AtomicU32::new(0));
    let counted = hits.clone();
    let svc = ServiceBuilder::new()
        .load_shed()
        .concurrency_limit(1)
        .layer(RetryLayer::new(RetryFailures::new(b.clone())))
        .layer(CircuitBreakerLayer::new(b.clone()))
        .service(tower::service_fn(move |()| {
            let n = counted.fetch_add(1, Ordering::SeqCst);
            async move {
                tokio::time::sleep(Duration::from_millis(10)).await;
                let status = if n == 0 { 503 } else { 200 };
                Ok::<_, Infallible>(Response::builder().status(status).body(()).unwrap())
            }
        }));
    let first = svc.clone().oneshot(());
    // While the first call is in its retry, a second one is shed at once, not queued.
    let second = async {
        tokio::time::sleep(Duration::from_millis(15)).await;
        svc.clone().oneshot(()).await
    };
    let (first, second) = tokio::join!(first, second);
    assert_eq!(first.unwrap().status(), 200);
    assert!(second
        .unwrap_err()
        .is::<tower::load_shed::error::Overloaded>());
    assert_eq!(hits.load(Ordering::SeqCst), 2);
    let t = b.snapshot().totals;
    assert_eq!((t.admitted(), t.rejected, t.retries), (2, 0, 1));
}

#[tokio::test(start_paused = true)]
async fn a_call_dropped_in_its_retry_delay_gives_its_retry_back() {
    let policy = Config::builder()
        .count_window(1000)
        .min_calls(1000)
        .retries(1)
        .retry_backoff(Duration::from_secs(1))
        .retry_budget(0.0)
        .retry_floor(1);
    let b = breaker("tower_retry::dropped_in_delay", policy);
    let down = Upstream::new(&[503]);
    // Ten callers give up while their call waits before its retry: no retry starts.
    for _ in 0..10 {
        let mut call = std::pin::pin!(guarded(&b, &down).oneshot(()));
        let polled = std::future::poll_fn(|cx| Poll::Ready(call.as_mut().poll(cx))).await;
        assert!(polled.is_pending(), "the call waits before its retry");
    }
    assert_eq!(down.hits(), 10);
    // The eleventh still has the floor's retries.
    let blip = Upstream::new(&[503, 200]);
    let response = guarded(&b, &blip).oneshot(()).await.unwrap();
    assert_eq!(response.status(), 200);
    let t = b.snapshot().totals;
    assert_eq!(
        (blip.hits(), t.retries, t.retry_budget_exhausted),
        (2, 1, 0)
    );
}
