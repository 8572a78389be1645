//! An axum handler under `#[circuit_breaker]`, returning `Result<T, Response>` as it is: a
//! rejection is `503 Service Unavailable` with `Retry-After` in whole seconds, rounded up.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use breakerbox::clock::ManualClock;
use breakerbox::{circuit_breaker, registry, Breaker, Config, Rejected};
use tower::ServiceExt;

/// The warehouse the handler asks, which can fail.
#[derive(Default)]
struct Warehouse {
    down: AtomicBool,
    calls: AtomicU64,
}

/// `GET /stock/{sku}`: a failed warehouse is a 502 (counted as a failure, being 5xx), an
/// unknown product a 404 (an answer).
#[circuit_breaker(name = "shop::stock", window = 2, min = 2, rate = 1.0, open = "5s")]
async fn stock(
    State(warehouse): State<Arc<Warehouse>>,
    Path(sku): Path<u64>,
) -> Result<String, Response> {
    warehouse.calls.fetch_add(1, Ordering::SeqCst);
    if warehouse.down.load(Ordering::SeqCst) {
        return Err((StatusCode::BAD_GATEWAY, "warehouse down").into_response());
    }
    match sku {
        0 => Err(StatusCode::NOT_FOUND.into_response()),
        _ => Ok(format!("{sku}: 3 left")),
    }
}

fn shop(warehouse: Arc<Warehouse>) -> Router {
    Router::new()
        .route("/stock/{sku}", get(stock))
        .with_state(warehouse)
}

/// `GET path` of `app`: status, `Retry-After`, content type and body.
async fn get_page(app: &Router, path: &str) -> (StatusCode, Option<String>, String, String) {
    let request = Request::get(path).body(Body::empty()).unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    let header = |name| {
        response
            .headers()
            .get(name)
            .map(|v: &header::HeaderValue| v.to_str().unwrap().to_owned())
    };
    let retry_after = header(header::RETRY_AFTER);
    let content_type = header(header::CONTENT_TYPE).unwrap_or_default();
    let status = response.status();
    let body = axum::body::to_bytes(response.into_body(), 1 << 16)
        .await
        .unwrap();
    let body = String::from_utf8(body.to_vec()).unwrap();
    (status, retry_after, content_type, body)
}

#[tokio::test(start_paused = true)]
async fn a_rejected_handler_answers_503_with_retry_after_in_whole_seconds() {
    let warehouse = Arc::new(Warehouse::default());
    let app = shop(warehouse.clone());
    let (status, _, _, body) = get_page(&app, "/stock/7").await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "7: 3 left"));
    for _ in 0..3 {
        let (status, ..) = get_page(&app, "/stock/0").await;
        assert_eq!(status, StatusCode::NOT_FOUND, "an answer, not a failure");
    }

    warehouse.down.store(true, Ordering::SeqCst);
    for _ in 0..2 {
        let (status, retry_after, _, body) = get_page(&app, "/stock/7").await;
        assert_eq!((status, retry_after), (StatusCode::BAD_GATEWAY, None));
        assert_eq!(body, "warehouse down");
    }
    assert_eq!(warehouse.calls.load(Ordering::SeqCst), 6);

    tokio::time::advance(Duration::from_millis(1_500)).await;
    let page = get_page(&app, "/stock/7").await;
    assert_eq!(
        page,
        (
            StatusCode::SERVICE_UNAVAILABLE,
            Some("4".to_owned()),
            "text/plain; charset=utf-8".to_owned(),
            "circuit 'shop::stock' is open; retry in 3.5s".to_owned(),
        ),
        "3.5s left, rounded up"
    );
    tokio::time::advance(Duration::from_millis(500)).await;
    let (status, retry_after, ..) = get_page(&app, "/stock/7").await;
    assert_eq!(
        (status, retry_after.as_deref()),
        (StatusCode::SERVICE_UNAVAILABLE, Some("3"))
    );
    assert_eq!(
        warehouse.calls.load(Ordering::SeqCst),
        6,
        "warehouse spared"
    );
    assert_eq!(
        registry().get("shop::stock").unwrap().snapshot().rejected,
        2
    );
}

#[test]
fn retry_after_is_the_open_period_left_in_whole_seconds_rounded_up() {
    let clock = ManualClock::new();
    let config = Config::builder().count_window(1).build().unwrap();
    let b = Breaker::with_clock("shop::retry_after", config, clock.clone());
    b.try_acquire().unwrap().failure();
    for (advance, retry_after) in [
        (Duration::ZERO, "5"),
        (Duration::from_nanos(1), "5"),
        (Duration::from_nanos(999_999_999), "4"),
        (Duration::from_secs(3), "1"),
        (Duration::from_nanos(999_999_999), "1"),
    ] {
        clock.advance(advance);
        let response = b.try_acquire().unwrap_err().into_response();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        let got = &response.headers()[header::RETRY_AFTER];
        assert_eq!(got, retry_after, "after {:?}", clock.elapsed());
    }
}

#[test]
fn a_rejection_without_a_known_end_has_no_retry_after() {
    let b = Breaker::with_clock("shop::forced", Config::default(), ManualClock::new());
    b.force_open();
    let response = Response::from(b.try_acquire().unwrap_err());
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(response.headers().get(header::RETRY_AFTER), None);
    let rejected = response.extensions().get::<Rejected>().unwrap();
    assert_eq!(
        rejected.to_string(),
        "circuit 'shop::forced' is forced open"
    );
}
