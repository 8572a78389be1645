//! Requests to an admin router, and a registry of each test's own.

use std::sync::Arc;

use axum::body::{to_bytes, Body};
use axum::http::{Request, StatusCode};
use axum::Router;
use breakerbox::clock::ManualClock;
use breakerbox::{registry::Registry, Breaker, Config};
use serde_json::Value;
use tower::ServiceExt;

/// A registry no other test sees.
pub fn own_registry() -> &'static Registry {
    Box::leak(Box::default())
}

/// A breaker of `registry` on a clock of the test's: a count window of 4 calls, judged from 4.
pub fn breaker(registry: &Registry, name: &str) -> (Arc<Breaker>, ManualClock) {
    let clock = ManualClock::new();
    let config = Config::builder()
        .count_window(4)
        .min_calls(4)
        .build()
        .unwrap();
    let b = Arc::new(Breaker::with_clock(name, config, clock.clone()));
    (registry.register(b), clock)
}

/// Sends `request` to `app` and reads its JSON answer.
pub async fn send(app: &Router, request: Request<Body>) -> (StatusCode, Value) {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let body = to_bytes(response.into_body(), 1 << 20).await.unwrap();
    let json = serde_json::from_slice(&body)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&body)));
    (status, json)
}

pub async fn get(app: &Router, path: &str) -> (StatusCode, Value) {
    send(app, Request::get(path).body(Body::empty()).unwrap()).await
}

/// A `POST` of `body`, with `Authorization: Bearer <token>` if given.
pub async fn post(
    app: &Router,
    path: &str,
    body: &str,
    token: Option<&str>,
) -> (StatusCode, Value) {
    let mut request = Request::post(path).header("content-type", "application/json");
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    send(app, request.body(Body::from(body.to_owned())).unwrap()).await
}

/// The one breaker of a `GET /{name}` answer.
pub fn only_breaker(detail: &Value) -> &Value {
    let breakers = detail["breakers"].as_array().unwrap();
    assert_eq!(breakers.len(), 1, "{detail}");
    &breakers[0]
}
