//! Who may steer: with no authorizer, a missing or wrong token, or a token for reads only,
//! every write is refused and nothing changes: state, generation, counts.

use axum::http::request::Parts;
use axum::Router;
use breakerbox::admin::{self, Authorize, Denied, Operator};
use breakerbox::{registry::Registry, State};
use serde_json::json;

use super::support::{breaker, get, own_registry, post, send};

const WRITES: [&str; 5] = [
    r#"{"action": "force_open"}"#,
    r#"{"action": "open_for", "for": "30s"}"#,
    r#"{"action": "disable"}"#,
    r#"{"action": "reset"}"#,
    r#"{"action": "close"}"#,
];

/// Sends every write with `token`, each refused with `status` and `error`; then proves that
/// the breaker kept its state, its counts and its generation.
async fn every_write_is_refused(
    registry: &'static Registry,
    app: Router,
    token: Option<&str>,
    status: u16,
    error: &str,
) {
    let (b, _) = breaker(registry, "svc::stock");
    b.try_acquire().unwrap().failure();
    // Admitted before the writes: its result counts only if the generation is the same.
    let permit = b.try_acquire().unwrap();
    let before = b.snapshot();
    for body in WRITES {
        let (answer, json) = post(&app, "/svc::stock", body, token).await;
        assert_eq!(answer.as_u16(), status, "{body}");
        assert_eq!(json, json!({"error": error}), "{body}");
    }
    assert_eq!(b.snapshot(), before);
    assert_eq!(b.state(), State::Closed);
    permit.success();
    let after = b.snapshot();
    assert_eq!(
        (after.calls, after.failures, after.totals.success),
        (2, 1, 1)
    );
    let mut read = axum::http::Request::get("/svc::stock");
    if let Some(token) = token {
        read = read.header("authorization", format!("Bearer {token}"));
    }
    let (_, detail) = send(&app, read.body(axum::body::Body::empty()).unwrap()).await;
    assert_eq!(detail["breakers"][0]["recent"], json!([]), "{detail}");
}

#[tokio::test]
async fn without_an_authorizer_every_write_answers_403() {
    let registry = own_registry();
    let app = admin::router_of(registry);
    let error = "writes are locked: the admin router was given no authorizer";
    every_write_is_refused(registry, app, None, 403, error).await;
}

#[tokio::test]
async fn without_a_token_every_write_answers_401() {
    let registry = own_registry();
    let app = admin::router_of(registry).authorize(admin::bearer_token("w"));
    let error = "no bearer token: send `Authorization: Bearer <token>`";
    every_write_is_refused(registry, app, None, 401, error).await;
}

#[tokio::test]
async fn with_a_wrong_token_every_write_answers_401() {
    let registry = own_registry();
    let app = admin::router_of(registry).authorize(admin::bearer_token("w"));
    every_write_is_refused(
        registry,
        app,
        Some("guess"),
        401,
        "the bearer token is wrong",
    )
    .await;
}

/// Two tokens: `w` may write, `r` only read.
fn two_tokens(parts: &Parts) -> Result<Operator, Denied> {
    let writer = admin::bearer_token("w");
    let reader = admin::bearer_token("r");
    writer(parts).or_else(|_| reader(parts).map(|_| Operator::reader("dashboard")))
}

#[tokio::test]
async fn with_a_token_for_reads_only_every_write_answers_403() {
    let registry = own_registry();
    let app = admin::router_of(registry).authorize_all(two_tokens);
    let error = "operator \"dashboard\" may read, not write";
    every_write_is_refused(registry, app, Some("r"), 403, error).await;
}

#[tokio::test]
async fn reads_behind_the_authorizer_need_a_token_that_it_accepts() {
    let registry = own_registry();
    breaker(registry, "svc::stock");
    let app = admin::router_of(registry).authorize_all(two_tokens);
    for path in ["/", "/svc::stock", "/health", "/events"] {
        let (status, json) = get(&app, path).await;
        assert_eq!(status, 401, "{path}");
        assert_eq!(
            json["error"],
            "no bearer token: send `Authorization: Bearer <token>`"
        );
    }
    let request = axum::http::Request::get("/svc::stock")
        .header("authorization", "Bearer r")
        .body(axum::body::Body::empty())
        .unwrap();
    let (status, json) = send(&app, request).await;
    assert_eq!(
        (status.as_u16(), json["name"].clone()),
        (200, json!("svc::stock"))
    );
    let (status, _) = post(&app, "/svc::stock", r#"{"action": "reset"}"#, Some("w")).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn reads_stay_open_when_only_writes_are_authorized() {
    let registry = own_registry();
    breaker(registry, "svc::stock");
    let app = admin::router_of(registry).authorize(admin::bearer_token("w"));
    let (status, json) = get(&app, "/").await;
    assert_eq!(
        (status.as_u16(), json["breakers"][0]["name"].clone()),
        (200, json!("svc::stock"))
    );
}
