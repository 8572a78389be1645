//! `breakerbox::tower::CircuitBreakerLayer` around real `tower` services.

use std::convert::Infallible;
use std::future::{ready, Ready};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use breakerbox::clock::ManualClock;
use breakerbox::tower::{BreakerError, CircuitBreakerLayer};
use breakerbox::{http::StatusClassifier, Breaker, Config, Outcome, RejectReason, State};
use http::{Response, StatusCode};
use tower::{service_fn, Layer, Service, ServiceExt};

/// A service that is not `Clone`, answering each request with the status it is given and
/// counting the requests that reach it.
struct Upstream {
    hits: Arc<AtomicU32>,
}

impl Service<u16> for Upstream {
    type Response = Response<()>;
    type Error = Infallible;
    type Future = Ready<Result<Response<()>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, status: u16) -> Self::Future {
        self.hits.fetch_add(1, Ordering::SeqCst);
        ready(Ok(Response::builder().status(status).body(()).unwrap()))
    }
}

fn upstream() -> (Upstream, Arc<AtomicU32>) {
    let hits = Arc::new(AtomicU32::new(0));
    (Upstream { hits: hits.clone() }, hits)
}

fn breaker(name: &str, window: u32, clock: &ManualClock) -> Arc<Breaker> {
    let config = Config::builder()
        .count_window(window)
        .min_calls(window)
        .failure_rate(0.5)
        .open_for(Duration::from_secs(5))
        .probes(1)
        .build()
        .unwrap();
    Arc::new(Breaker::with_clock(name, config, clock.clone()))
}

#[tokio::test]
async fn layer_called_twice_shares_one_breaker() {
    let clock = ManualClock::new();
    let b = breaker("tower::shared", 4, &clock);
    let layer = CircuitBreakerLayer::new(b.clone());
    let (books, book_hits) = upstream();
    let (authors, author_hits) = upstream();
    let mut books = layer.layer(books);
    let mut authors = layer.layer(authors);

    for _ in 0..2 {
        assert_eq!(
            books
                .ready()
                .await
                .unwrap()
                .call(503)
                .await
                .unwrap()
                .status(),
            503
        );
        assert_eq!(
            authors
                .ready()
                .await
                .unwrap()
                .call(200)
                .await
                .unwrap()
                .status(),
            200
        );
    }
    let s = b.snapshot();
    assert_eq!((s.calls, s.failures, s.state), (4, 2, State::Open));
    // Both routes are rejected by the one breaker that opened.
    for svc in [&mut books, &mut authors] {
        let err = svc.ready().await.unwrap().call(200).await.unwrap_err();
        assert_eq!(err.rejected().map(|r| r.reason()), Some(RejectReason::Open));
    }
    assert_eq!(book_hits.load(Ordering::SeqCst), 2);
    assert_eq!(author_hits.load(Ordering::SeqCst), 2);
    assert!(std::ptr::eq(books.breaker(), authors.breaker()));
    assert!(std::ptr::eq(books.breaker(), &*b));
}

#[tokio::test]
async fn ok_server_error_response_is_a_failure_and_client_error_a_success() {
    let clock = ManualClock::new();
    let b = breaker("tower::statuses", 10, &clock);
    let (svc, _) = upstream();
    let mut svc = CircuitBreakerLayer::new(b.clone()).layer(svc);
    for status in [200, 404, 500, 503, 429, 400] {
        svc.ready().await.unwrap().call(status).await.unwrap();
    }
    let s = b.snapshot();
    assert_eq!((s.calls, s.failures), (6, 2));
}

#[tokio::test]
async fn too_many_requests_fails_only_when_configured() {
    let clock = ManualClock::new();
    let b = breaker("tower::throttled", 10, &clock);
    let (svc, _) = upstream();
    let mut svc = CircuitBreakerLayer::new(b.clone())
        .classify_with(StatusClassifier::SERVER_ERRORS.with_too_many_requests())
        .layer(svc);
    for status in [429, 200, 502] {
        svc.ready().await.unwrap().call(status).await.unwrap();
    }
    let s = b.snapshot();
    assert_eq!((s.calls, s.failures), (3, 2));
}

#[tokio::test]
async fn rejected_requests_never_reach_the_inner_service() {
    let clock = ManualClock::new();
    let b = breaker("tower::rejects", 2, &clock);
    let (svc, hits) = upstream();
    let mut svc = CircuitBreakerLayer::new(b.clone()).layer(svc);
    for _ in 0..2 {
        svc.ready().await.unwrap().call(503).await.unwrap();
    }
    assert_eq!(b.state(), State::Open);
    for _ in 0..5 {
        let err = svc.ready().await.unwrap().call(200).await.unwrap_err();
        assert!(matches!(err, BreakerError::Rejected(_)));
        assert_eq!(
            err.to_string(),
            "circuit 'tower::rejects' is open; retry in 5.0s"
        );
    }
    assert_eq!(hits.load(Ordering::SeqCst), 2);
    assert_eq!(b.snapshot().rejected, 5);

    clock.advance(Duration::from_secs(5));
    assert_eq!(
        svc.ready().await.unwrap().call(200).await.unwrap().status(),
        200
    );
    assert_eq!(b.state(), State::Closed);
    assert_eq!(hits.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn poll_ready_reserves_no_half_open_slot() {
    let clock = ManualClock::new();
    let b = breaker("tower::ready", 2, &clock);
    let (svc, hits) = upstream();
    let mut svc = CircuitBreakerLayer::new(b.clone()).layer(svc);
    for _ in 0..2 {
        svc.ready().await.unwrap().call(503).await.unwrap();
    }
    clock.advance(Duration::from_secs(5));

    // Ready, then the request is dropped before `call`: the one probe slot stays free.
    for _ in 0..3 {
        svc.ready().await.unwrap();
    }
    assert_eq!(b.probes_in_flight(), 0);
    let probe = svc.ready().await.unwrap().call(200);
    assert_eq!(b.probes_in_flight(), 1);
    // A response future dropped before it completes frees its slot and records nothing.
    drop(probe);
    assert_eq!((b.probes_in_flight(), b.state()), (0, State::HalfOpen));
    assert_eq!(hits.load(Ordering::SeqCst), 3);

    svc.ready().await.unwrap().call(200).await.unwrap();
    assert_eq!(b.state(), State::Closed);
}

#[tokio::test]
async fn half_open_admits_one_probe_while_another_is_in_flight() {
    let clock = ManualClock::new();
    let b = breaker("tower::probe", 2, &clock);
    let (svc, _) = upstream();
    let mut svc = CircuitBreakerLayer::new(b.clone()).layer(svc);
    for _ in 0..2 {
        svc.ready().await.unwrap().call(503).await.unwrap();
    }
    clock.advance(Duration::from_secs(5));
    let probe = svc.ready().await.unwrap().call(200);
    let second = svc.ready().await.unwrap().call(200).await.unwrap_err();
    assert_eq!(
        second.rejected().map(|r| r.reason()),
        Some(RejectReason::HalfOpenFull)
    );
    assert_eq!(probe.await.unwrap().status(), StatusCode::OK);
    assert_eq!(b.state(), State::Closed);
}

#[tokio::test]
async fn inner_errors_count_as_failures_by_default_and_pass_through() {
    let clock = ManualClock::new();
    let b = breaker("tower::errors", 2, &clock);
    let svc = service_fn(|fail: bool| async move {
        if fail {
            Err(std::io::Error::from(std::io::ErrorKind::ConnectionRefused))
        } else {
            Ok(StatusCode::OK)
        }
    });
    let svc = CircuitBreakerLayer::new(b.clone()).layer(svc);
    let err = svc.clone().oneshot(true).await.unwrap_err();
    let inner = err.into_inner().expect("the inner error");
    assert_eq!(inner.kind(), std::io::ErrorKind::ConnectionRefused);
    svc.clone().oneshot(false).await.unwrap();
    let s = b.snapshot();
    assert_eq!((s.calls, s.failures, s.state), (2, 1, State::Open));
}

#[tokio::test]
async fn closure_classifier_judges_responses_and_errors() {
    let clock = ManualClock::new();
    let b = breaker("tower::closure", 10, &clock);
    let svc = service_fn(|body: &'static str| async move { Ok::<_, Infallible>(body) });
    let layer = CircuitBreakerLayer::new(b.clone()).classify_with(
        |r: &Result<&'static str, Infallible>| match r {
            Ok(body) if body.contains("overloaded") => Outcome::Failure,
            Ok("") => Outcome::Ignored,
            _ => Outcome::Success,
        },
    );
    let svc = layer.layer(svc);
    for body in ["ok", "overloaded", "", "fine"] {
        assert_eq!(svc.clone().oneshot(body).await.unwrap(), body);
    }
    let s = b.snapshot();
    assert_eq!((s.calls, s.failures), (3, 1));
}

#[tokio::test]
async fn breaker_error_converts_into_a_box_error() {
    let clock = ManualClock::new();
    let b = breaker("tower::boxed", 2, &clock);
    b.force_open();
    let (svc, _) = upstream();
    let svc = CircuitBreakerLayer::new(b).layer(svc);
    let boxed: tower::BoxError = svc.oneshot(200).await.unwrap_err().into();
    assert_eq!(boxed.to_string(), "circuit 'tower::boxed' is forced open");
}

#[tokio::test]
async fn the_breaker_is_freed_with_its_last_layer_service_and_call() {
    let clock = ManualClock::new();
    let b = breaker("tower::freed", 4, &clock);
    let layer = CircuitBreakerLayer::new(b.clone());
    let (upstream, _) = upstream();
    let mut svc = layer.layer(upstream);
    drop(layer);
    let pending = svc.ready().await.unwrap().call(200);
    assert_eq!(
        Arc::strong_count(&b),
        3,
        "ours, the service's and the call's permit"
    );
    drop(svc);
    assert_eq!(pending.await.unwrap().status(), StatusCode::OK);
    assert_eq!(Arc::strong_count(&b), 1);
    assert_eq!(b.snapshot().calls, 1);
}

#[tokio::test(start_paused = true)]
async fn keyed_layer_gives_each_upstream_its_own_bounded_breaker() {
    use breakerbox::registry;
    use breakerbox::tower::KeyedCircuitBreakerLayer;

    let config = Config::builder()
        .count_window(4)
        .min_calls(4)
        .build()
        .unwrap();
    let hits = Arc::new(AtomicU32::new(0));
    let counted = hits.clone();
    let layer = KeyedCircuitBreakerLayer::new(
        "tower::upstreams",
        config,
        2,
        |req: &(&'static str, u16)| req.0,
    );
    let mut svc = layer.layer(service_fn(move |(_, status): (&'static str, u16)| {
        counted.fetch_add(1, Ordering::SeqCst);
        ready(Ok::<_, Infallible>(
            Response::builder().status(status).body(()).unwrap(),
        ))
    }));
    for _ in 0..4 {
        let sick = svc
            .ready()
            .await
            .unwrap()
            .call(("sick", 503))
            .await
            .unwrap();
        assert_eq!(sick.status(), StatusCode::SERVICE_UNAVAILABLE);
        let healthy = svc
            .ready()
            .await
            .unwrap()
            .call(("healthy", 200))
            .await
            .unwrap();
        assert_eq!(healthy.status(), StatusCode::OK);
    }
    let err = svc
        .ready()
        .await
        .unwrap()
        .call(("sick", 200))
        .await
        .unwrap_err();
    assert!(matches!(err, BreakerError::Rejected(ref r) if r.reason() == RejectReason::Open));
    let ok = svc
        .ready()
        .await
        .unwrap()
        .call(("healthy", 200))
        .await
        .unwrap();
    assert_eq!(ok.status(), StatusCode::OK);
    assert_eq!(
        hits.load(Ordering::SeqCst),
        9,
        "the rejected call never reached upstream"
    );

    let sick = registry().get_keyed("tower::upstreams", "sick").unwrap();
    assert_eq!((sick.state(), sick.key()), (State::Open, Some("sick")));
    assert_eq!(
        registry()
            .get_keyed("tower::upstreams", "healthy")
            .unwrap()
            .state(),
        State::Closed
    );
    // A third key evicts the least recently used closed breaker: max_keys is 2.
    svc.ready()
        .await
        .unwrap()
        .call(("third", 200))
        .await
        .unwrap();
    assert!(registry()
        .get_keyed("tower::upstreams", "healthy")
        .is_none());
    assert!(registry().get_keyed("tower::upstreams", "sick").is_some());
}
