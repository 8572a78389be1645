//! A rejection says nothing about the downstream's health, so one breaker's rejection, passed
//! on as an error, never opens another: a guarded call inside a guarded call whose inner
//! breaker is forced open leaves the outer breaker closed, and so does a tower layer inside
//! another whose rejections are boxed on their way up. A status that arrives over the
//! network is still judged by its code.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use breakerbox::{circuit_breaker, registry, Breaker, Classify, Outcome, State};
use tonic::{Code, Status};

const CALLS: u64 = 20;

fn registered(name: &str) -> std::sync::Arc<Breaker> {
    registry().get(name).expect("registered by its first call")
}

#[circuit_breaker(
    name = "nested::grpc::inner",
    window = 4,
    min = 4,
    rate = 0.5,
    open = "5s"
)]
async fn inner_grpc() -> Result<&'static str, Status> {
    Ok("book")
}

#[circuit_breaker(
    name = "nested::grpc::outer",
    window = 4,
    min = 4,
    rate = 0.5,
    open = "5s"
)]
async fn outer_grpc() -> Result<&'static str, Status> {
    inner_grpc().await
}

#[tokio::test]
async fn a_forced_open_inner_breaker_never_opens_the_outer_one_through_tonic_status() {
    assert_eq!(outer_grpc().await.unwrap(), "book");
    let (inner, outer) = (
        registered("nested::grpc::inner"),
        registered("nested::grpc::outer"),
    );
    inner.force_open();
    for _ in 0..CALLS {
        let status = outer_grpc().await.unwrap_err();
        assert_eq!(status.code(), Code::Unavailable);
        assert_eq!(status.classify(), Outcome::Ignored);
    }
    assert_eq!(outer.state(), State::Closed);
    let totals = outer.snapshot().totals;
    assert_eq!(
        (totals.success, totals.failure, totals.ignored),
        (1, 0, CALLS)
    );
    assert_eq!(totals.rejected, 0);
    assert_eq!(inner.snapshot().totals.rejected, CALLS);
}

#[circuit_breaker(
    name = "nested::http::inner",
    window = 4,
    min = 4,
    rate = 0.5,
    open = "5s"
)]
async fn inner_handler() -> Result<String, Response> {
    Ok("3 left".to_owned())
}

#[circuit_breaker(
    name = "nested::http::outer",
    window = 4,
    min = 4,
    rate = 0.5,
    open = "5s"
)]
async fn outer_handler() -> Result<String, Response> {
    inner_handler().await
}

#[tokio::test]
async fn a_forced_open_inner_breaker_never_opens_the_outer_one_through_http_response() {
    assert_eq!(outer_handler().await.unwrap(), "3 left");
    let (inner, outer) = (
        registered("nested::http::inner"),
        registered("nested::http::outer"),
    );
    inner.force_open();
    for _ in 0..CALLS {
        let response = outer_handler().await.unwrap_err();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(response.classify(), Outcome::Ignored);
    }
    assert_eq!(outer.state(), State::Closed);
    let totals = outer.snapshot().totals;
    assert_eq!(
        (totals.success, totals.failure, totals.ignored),
        (1, 0, CALLS)
    );
    assert_eq!(inner.snapshot().totals.rejected, CALLS);
}

/// What a client gets over the wire carries the code and the message, not the `Rejected`: a
/// server that sheds load is judged as any `UNAVAILABLE` is.
#[test]
fn a_rejection_that_crossed_the_network_is_judged_by_its_code() {
    let b = Breaker::new("nested::wire", breakerbox::Config::default());
    b.force_open();
    let sent = Status::from(b.try_acquire().unwrap_err());
    assert_eq!(sent.classify(), Outcome::Ignored);
    let received = Status::with_metadata(sent.code(), sent.message(), sent.metadata().clone());
    assert_eq!(received.classify(), Outcome::Failure);

    let sent = b.try_acquire().unwrap_err().into_response();
    assert_eq!(sent.classify(), Outcome::Ignored);
    let mut received = Response::new(());
    *received.status_mut() = sent.status();
    *received.headers_mut() = sent.headers().clone();
    assert_eq!(received.classify(), Outcome::Failure);
}

/// A breaker of `window` calls judged from `window` calls, opening at half of them failed,
/// for 5 s of a clock that never moves.
fn tower_breaker(name: &str, window: u32) -> std::sync::Arc<Breaker> {
    let config = breakerbox::Config::builder()
        .count_window(window)
        .min_calls(window)
        .failure_rate(0.5)
        .open_for(std::time::Duration::from_secs(5))
        .build()
        .unwrap();
    let clock = breakerbox::clock::ManualClock::new();
    std::sync::Arc::new(Breaker::with_clock(name, config, clock))
}

#[tokio::test]
async fn an_inner_tower_layers_rejection_boxed_on_its_way_up_never_opens_the_outer_one() {
    use breakerbox::tower::{BreakerError, CircuitBreakerLayer};
    use tower::{service_fn, BoxError, Service, ServiceBuilder, ServiceExt};

    let inner = tower_breaker("nested::tower::inner", 4);
    let outer = tower_breaker("nested::tower::outer", 10);
    // The downstream refuses every connection; the errors are boxed between the layers, as
    // a stack with a timeout, a buffer or `BoxError` handlers does.
    let mut svc = ServiceBuilder::new()
        .layer(CircuitBreakerLayer::new(outer.clone()))
        .map_err(|e: BreakerError<std::io::Error>| -> BoxError { e.into() })
        .layer(CircuitBreakerLayer::new(inner.clone()))
        .service(service_fn(|_: ()| async {
            Err::<http::StatusCode, _>(std::io::Error::from(std::io::ErrorKind::ConnectionRefused))
        }));
    let mut errors = Vec::new();
    for _ in 0..CALLS {
        let err = svc.ready().await.unwrap().call(()).await.unwrap_err();
        errors.push(err.rejected().is_some());
    }
    // The outer breaker let every call through: 4 refused, then 16 the inner one rejected.
    assert_eq!(errors, [false; CALLS as usize]);
    assert_eq!(inner.state(), State::Open);
    let totals = inner.snapshot().totals;
    assert_eq!((totals.failure, totals.rejected), (4, CALLS - 4));
    assert_eq!(outer.state(), State::Closed);
    let totals = outer.snapshot().totals;
    assert_eq!(
        (
            totals.success,
            totals.failure,
            totals.ignored,
            totals.rejected
        ),
        (0, 4, CALLS - 4, 0)
    );
}
