//! The admin router's log lines: a router with no authorizer says at its making that writes
//! are locked, and every operator action is a warning naming the operator.

use crate::support::logs;

use std::sync::Arc;

use axum::body::Body;
use axum::http::Request;
use breakerbox::admin::{self, Authorize};
use breakerbox::{registry::Registry, Breaker, Config};
use tower::ServiceExt;

#[test]
fn a_locked_router_says_so_and_each_action_names_its_operator() {
    let Some((captured, _guard)) = logs::capture(concat!(
        module_path!(),
        "::a_locked_router_says_so_and_each_action_names_its_operator"
    )) else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let own: &'static Registry = Box::leak(Box::default());
    own.register(Arc::new(Breaker::new("logs::stock", Config::default())));

    let _locked: axum::Router = admin::router_of(own);
    assert_eq!(
        captured.lines(),
        [" WARN breakerbox::admin: admin router: writes answer 403 until `.authorize(...)` gives it an authorizer"]
    );

    let open = admin::router_of(own).authorize(admin::bearer_token("w"));
    let request = Request::post("/logs::stock")
        .header("authorization", "Bearer w")
        .body(Body::from(r#"{"action": "open_for", "for": "30s"}"#))
        .unwrap();
    let response = runtime.block_on(open.oneshot(request)).unwrap();
    assert_eq!(response.status(), 200);
    let lines = captured.lines();
    assert_eq!(
        lines[1..3],
        [
            " WARN breakerbox::admin: admin router: writes answer 403 until `.authorize(...)` gives it an authorizer",
            " INFO breakerbox::admin: admin router: writes open to the authorizer's operators",
        ]
    );
    assert_eq!(
        lines[3],
        " WARN breakerbox::admin: operator action on breaker \"logs::stock\": open_for by \"token\" breaker=logs::stock action=open_for period=\"30s\" operator=token"
    );
}
