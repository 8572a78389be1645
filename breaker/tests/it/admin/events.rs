//! `GET /events`: the server-sent events of transitions and actions, resumed by
//! `Last-Event-ID`, with sampled calls on request.

use std::time::Duration;

use axum::body::Body;
use axum::http::Request;
use axum::Router;
use breakerbox::admin;
use futures_util::StreamExt;
use serde_json::{json, Value};
use tower::ServiceExt;

use super::support::{breaker, get, own_registry};

/// One server-sent event: its `event`, `id` and `data`.
#[derive(Debug, PartialEq)]
struct Sse {
    event: String,
    id: Option<u64>,
    data: Value,
}

/// Reads the stream of `request` until `n` events came, for at most five seconds.
async fn events(app: &Router, request: Request<Body>, n: usize, during: impl FnOnce()) -> Vec<Sse> {
    let response = app.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    during();
    let mut body = response.into_body().into_data_stream();
    let mut text = String::new();
    let mut out = Vec::new();
    let read = async {
        while out.len() < n {
            let chunk = body.next().await.expect("the stream ended").unwrap();
            text.push_str(std::str::from_utf8(&chunk).unwrap());
            while let Some(end) = text.find("\n\n") {
                let frame: String = text.drain(..end + 2).collect();
                let field = |name: &str| {
                    frame
                        .lines()
                        .find_map(|l| l.strip_prefix(name).map(str::to_owned))
                };
                if let Some(data) = field("data: ") {
                    out.push(Sse {
                        event: field("event: ").unwrap(),
                        id: field("id: ").map(|id| id.parse().unwrap()),
                        data: serde_json::from_str(&data).unwrap(),
                    });
                }
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(5), read)
        .await
        .unwrap_or_else(|_| panic!("only {} of {n} events came", out.len()));
    out
}

fn request(path: &str, last_id: Option<u64>) -> Request<Body> {
    let mut request = Request::get(path);
    if let Some(id) = last_id {
        request = request.header("last-event-id", id.to_string());
    }
    request.body(Body::empty()).unwrap()
}

#[tokio::test]
async fn transitions_stream_live_and_a_reconnect_resumes_after_its_last_id() {
    let registry = own_registry();
    let (b, _) = breaker(registry, "svc::stock");
    let app = admin::router_of(registry);
    let seen = events(&app, request("/events", None), 2, || {
        b.force_open();
        b.reset();
    })
    .await;
    assert_eq!(seen[0].event, "state_transition");
    assert_eq!(seen[0].id, Some(1));
    let data = &seen[0].data;
    assert_eq!(
        (
            data["name"].clone(),
            data["from"].clone(),
            data["to"].clone(),
            data["reason"].clone()
        ),
        (
            json!("svc::stock"),
            json!("closed"),
            json!("forced_open"),
            json!("forced")
        )
    );
    assert_eq!(
        (seen[1].id, seen[1].data["reason"].clone()),
        (Some(2), json!("reset"))
    );

    b.disable(); // id 3, while no one listens
    let resumed = events(&app, request("/events", Some(1)), 2, || {}).await;
    let ids: Vec<_> = resumed.iter().map(|e| e.id).collect();
    assert_eq!(ids, [Some(2), Some(3)]);
    assert_eq!(resumed[1].data["to"], "disabled");
}

#[tokio::test]
async fn calls_are_sampled_only_when_asked() {
    let registry = own_registry();
    let (b, _) = breaker(registry, "svc::stock");
    let app = admin::router_of(registry);
    let seen = events(&app, request("/events?calls=1", None), 3, || {
        b.try_acquire().unwrap().success();
        b.try_acquire().unwrap().failure();
        b.force_open();
    })
    .await;
    let kinds: Vec<_> = seen.iter().map(|e| (e.event.as_str(), e.id)).collect();
    assert_eq!(
        kinds,
        [
            ("call", None),
            ("call", None),
            ("state_transition", Some(1))
        ]
    );
    assert_eq!(
        (
            seen[0].data["ending"].clone(),
            seen[1].data["ending"].clone(),
            seen[0].data["stale"].clone()
        ),
        (json!("success"), json!("failure"), json!(false))
    );
    assert!(seen[0].data["duration_ms"].is_number());

    // A stream that did not ask gets the transitions only.
    let plain = events(&app, request("/events", None), 1, || {
        b.reset();
        let _ = b.try_acquire().map(|p| p.success());
        b.force_open();
    })
    .await;
    assert_eq!(
        (plain[0].event.as_str(), plain[0].id),
        ("state_transition", Some(2))
    );
}

#[tokio::test]
async fn a_bad_sampling_rate_or_last_event_id_answers_400_naming_it() {
    let app = admin::router_of(own_registry());
    let (status, json) = get(&app, "/events?calls=2").await;
    assert_eq!(status, 400);
    assert_eq!(
        json,
        json!({"error": "calls must be a sampling rate in [0, 1], got \"2\"", "field": "calls"})
    );
    let (status, json) = get(&app, "/events?call=0.5").await;
    assert_eq!(status, 400);
    assert_eq!(
        json["error"],
        "unknown query parameter \"call\"; the one known is `calls`"
    );
    let bad_id = Request::get("/events")
        .header("last-event-id", "x")
        .body(Body::empty())
        .unwrap();
    let (status, json) = super::support::send(&app, bad_id).await;
    assert_eq!(status, 400);
    assert_eq!(json["field"], "Last-Event-ID");
}
