//! `POST /{name}`: the operator's actions, through the overrides' actions.

use std::time::Duration;

use axum::Router;
use breakerbox::admin::{self, Authorize};
use breakerbox::{registry::Registry, State};
use serde_json::json;

use super::support::{breaker, get, only_breaker, own_registry, post};

fn app(registry: &'static Registry) -> Router {
    admin::router_of(registry).authorize(admin::bearer_token("w"))
}

#[tokio::test]
async fn force_open_is_an_operator_action_then_a_forced_transition() {
    let registry = own_registry();
    let (b, _) = breaker(registry, "svc::stock");
    let (status, detail) = post(
        &app(registry),
        "/svc::stock",
        r#"{"action": "force_open"}"#,
        Some("w"),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(b.state(), State::ForcedOpen);
    let view = only_breaker(&detail);
    assert_eq!(view["state"], "forced_open");
    let recent = view["recent"].as_array().unwrap();
    assert_eq!(recent.len(), 2);
    assert_eq!(recent[0]["type"], "operator_action");
    assert_eq!(
        (
            recent[0]["action"].clone(),
            recent[0]["operator"].clone(),
            recent[0]["id"].clone()
        ),
        (json!("force_open"), json!("token"), json!(1))
    );
    assert_eq!(recent[0].get("for"), None);
    assert_eq!(
        (
            recent[1]["to"].clone(),
            recent[1]["reason"].clone(),
            recent[1]["id"].clone()
        ),
        (json!("forced_open"), json!("forced"), json!(2))
    );
    assert_eq!(recent[1]["operator"], "token");
    // What the breaker does by itself afterwards is no one's.
    b.reset();
    let (_, detail) = get(&app(registry), "/svc::stock").await;
    let last = &only_breaker(&detail)["last_transition"];
    assert_eq!(
        (last["reason"].clone(), last["operator"].clone()),
        (json!("reset"), json!(null))
    );
}

#[tokio::test]
async fn open_for_opens_for_the_period_asked() {
    let registry = own_registry();
    let (b, clock) = breaker(registry, "svc::stock");
    let body = r#"{"action": "open_for", "for": "30s"}"#;
    let (status, detail) = post(&app(registry), "/svc::stock", body, Some("w")).await;
    assert_eq!(status, 200);
    let view = only_breaker(&detail);
    assert_eq!(
        (view["state"].clone(), view["open_left_ms"].clone()),
        (json!("open"), json!(30_000))
    );
    assert_eq!(view["recent"][0]["for"], "30s");
    assert_eq!(view["last_transition"]["reason"], "manual_open");
    clock.advance(Duration::from_secs(30));
    b.try_acquire().unwrap().success(); // the probe after the period
    assert_eq!(b.state(), State::HalfOpen);
}

#[tokio::test]
async fn disable_reset_and_close_move_the_breaker() {
    let registry = own_registry();
    let (b, _) = breaker(registry, "svc::stock");
    let app = app(registry);
    post(&app, "/svc::stock", r#"{"action": "disable"}"#, Some("w")).await;
    assert_eq!(b.state(), State::Disabled);
    post(&app, "/svc::stock", r#"{"action": "reset"}"#, Some("w")).await;
    assert_eq!(b.state(), State::Closed);
    b.force_open();
    let (status, detail) = post(&app, "/svc::stock", r#"{"action": "close"}"#, Some("w")).await;
    assert_eq!((status.as_u16(), b.state()), (200, State::Closed));
    // The last five records: an action is followed by the transition it caused.
    let recent: Vec<String> = only_breaker(&detail)["recent"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| match r["type"].as_str().unwrap() {
            "operator_action" => format!("action {}", r["action"].as_str().unwrap()),
            _ => format!(
                "{} for {}",
                r["to"].as_str().unwrap(),
                r["reason"].as_str().unwrap()
            ),
        })
        .collect();
    assert_eq!(
        recent,
        [
            "action reset",
            "closed for reset",
            "forced_open for forced",
            "action close",
            "closed for reset",
        ]
    );
}

#[tokio::test]
async fn an_unknown_name_answers_404_and_creates_no_breaker() {
    let registry = own_registry();
    breaker(registry, "svc::stock");
    let (status, json) = post(
        &app(registry),
        "/svc::stok",
        r#"{"action": "force_open"}"#,
        Some("w"),
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(json["did_you_mean"], json!(["svc::stock"]));
    assert_eq!(registry.names(), ["svc::stock"]);
    let (status, _) = get(&app(registry), "/svc::stok").await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn a_bad_body_answers_400_naming_the_field_and_changes_nothing() {
    let registry = own_registry();
    let (b, _) = breaker(registry, "svc::stock");
    let app = app(registry);
    let cases = [
        (r#"{}"#, json!("action"), "action is missing: one of \"force_open\", \"open_for\", \"disable\", \"reset\" or \"close\""),
        (r#"{"action": "explode"}"#, json!("action"), "action must be one of \"force_open\", \"open_for\", \"disable\", \"reset\" or \"close\", got \"explode\""),
        (r#"{"action": 3}"#, json!("action"), "action must be one of \"force_open\", \"open_for\", \"disable\", \"reset\" or \"close\", got 3"),
        (r#"{"action": "open_for"}"#, json!("for"), "for is missing: open_for needs a duration such as \"30s\""),
        (r#"{"action": "open_for", "for": "soon"}"#, json!("for"), "for must be a duration such as \"30s\", got \"soon\": expected number at 0"),
        (r#"{"action": "open_for", "for": "0s"}"#, json!("for"), "for must be longer than zero"),
        (r#"{"action": "reset", "for": "30s"}"#, json!("for"), "for belongs to open_for, not to reset"),
        (r#"{"action": "reset", "force": true}"#, json!(null), "unknown field \"force\"; the fields are \"action\" and \"for\""),
        (r#"["reset"]"#, json!(null), "the body must be a JSON object"),
    ];
    for (body, field, error) in cases {
        let (status, json) = post(&app, "/svc::stock", body, Some("w")).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(
            json.get("field").cloned().unwrap_or(json!(null)),
            field,
            "{body}"
        );
        assert_eq!(json["error"], error, "{body}");
    }
    let (status, json) = post(&app, "/svc::stock", "reset", Some("w")).await;
    assert_eq!(status, 400);
    assert!(
        json["error"]
            .as_str()
            .unwrap()
            .starts_with("the body is not JSON: "),
        "{json}"
    );
    assert_eq!(
        (b.state(), b.snapshot().totals.rejected),
        (State::Closed, 0)
    );
    assert_eq!(
        only_breaker(&get(&app, "/svc::stock").await.1)["recent"],
        json!([])
    );
}
