//! A timed-out call as its caller's answer: 504 Gateway Timeout for an axum handler,
//! DEADLINE_EXCEEDED for a gRPC service; `?` on `Breaker::run` answers either way.

use std::error::Error;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use breakerbox::{policy::TimedOut, Breaker, CallError, Config};
use tonic::{Code, Status};
use tower::ServiceExt;

const TIMEOUT: Duration = Duration::from_millis(800);

fn breaker(name: &str) -> Arc<Breaker> {
    let config = Config::builder().timeout(TIMEOUT).build().unwrap();
    Arc::new(Breaker::new(name, config))
}

/// `GET /stock`: the warehouse hangs.
async fn stock(State(warehouse): State<Arc<Breaker>>) -> Result<String, Response> {
    warehouse
        .run(|| async {
            std::future::pending::<()>().await;
            Ok::<_, Response>("3 left".to_owned())
        })
        .await?
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_handler_answers_504_with_the_timeouts_text() {
    let b = breaker("shop::warehouse");
    let app = Router::new()
        .route("/stock", get(stock))
        .with_state(b.clone());
    let request = Request::get("/stock").body(Body::empty()).unwrap();
    let response = app.oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::GATEWAY_TIMEOUT);
    assert_eq!(
        response.headers()[header::CONTENT_TYPE],
        "text/plain; charset=utf-8"
    );
    assert!(response.extensions().get::<TimedOut>().is_some());
    let body = axum::body::to_bytes(response.into_body(), 1024)
        .await
        .unwrap();
    assert_eq!(body, "call to 'shop::warehouse' timed out after 800ms");
    assert_eq!(b.snapshot().totals.failure, 1);
}

#[test]
fn a_call_error_answers_as_its_rejection_or_its_timeout() {
    let b = Breaker::new("shop::forced", Config::default());
    b.force_open();
    let rejected = CallError::from(b.try_acquire().unwrap_err());
    assert_eq!(
        rejected.into_response().status(),
        StatusCode::SERVICE_UNAVAILABLE
    );
    let timed_out = CallError::from(TimedOut::new("shop::slow", TIMEOUT));
    let response = Response::from(timed_out);
    assert_eq!(response.status(), StatusCode::GATEWAY_TIMEOUT);
}

/// A service method's shape: `Result<T, tonic::Status>`, the downstream hanging.
async fn get_book(library: &Breaker) -> Result<String, Status> {
    library
        .run(|| async {
            std::future::pending::<()>().await;
            Ok::<_, Status>("Dune".to_owned())
        })
        .await?
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_grpc_call_answers_deadline_exceeded_with_the_timeout_as_source() {
    let b = breaker("library::get_book");
    let status = get_book(&b).await.unwrap_err();
    assert_eq!(status.code(), Code::DeadlineExceeded);
    assert_eq!(
        status.message(),
        "call to 'library::get_book' timed out after 800ms"
    );
    let timed_out = status.source().unwrap().downcast_ref::<TimedOut>().unwrap();
    assert_eq!(
        (timed_out.name(), timed_out.limit()),
        ("library::get_book", TIMEOUT)
    );
    assert_eq!(b.snapshot().totals.failure, 1);
}

#[test]
fn a_rejected_call_error_answers_unavailable() {
    let b = Breaker::new("library::forced", Config::default());
    b.force_open();
    let status = Status::from(CallError::from(b.try_acquire().unwrap_err()));
    assert_eq!(status.code(), Code::Unavailable);
    assert_eq!(status.message(), "circuit 'library::forced' is forced open");
}
