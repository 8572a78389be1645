//! The router's handlers: read through the registry and snapshots, steer through the
//! overrides' one door ([`Registry::apply`]).

use std::collections::HashMap;

use axum::body::{to_bytes, Body};
use axum::extract::{Path, Query, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use serde_json::{Map, Value};

use super::auth::{Access, Need, Refusal};
use super::events::OperatorAction;
use super::health::{health_of, Critical};
use super::view::{BreakerView, Detail};
use crate::overrides::{Action, Overrides};
use crate::registry::Registry;

/// What every handler shares: the registry the router reads and steers.
#[derive(Clone, Copy)]
pub(crate) struct Ctx {
    pub(crate) registry: &'static Registry,
}

/// An error answer: `{"error": "...", "field": "action"}`, the field when one is to blame.
#[derive(Debug, Serialize)]
struct Problem {
    error: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    field: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    did_you_mean: Option<Vec<String>>,
}

fn problem(status: StatusCode, error: String, field: Option<&'static str>) -> Response {
    let body = Problem {
        error,
        field,
        did_you_mean: None,
    };
    (status, Json(body)).into_response()
}

fn refused(refusal: Refusal) -> Response {
    problem(refusal.status, refusal.message, None)
}

fn access(parts: &Parts) -> Access {
    parts
        .extensions
        .get::<Access>()
        .cloned()
        .unwrap_or_default()
}

fn not_found(registry: &Registry, name: &str) -> Response {
    let body = Problem {
        error: format!("no breaker is registered as {name:?}"),
        field: None,
        did_you_mean: Some(registry.nearest_names(name)),
    };
    (StatusCode::NOT_FOUND, Json(body)).into_response()
}

/// The list of every breaker: `{"breakers": [...]}`.
#[derive(Serialize)]
struct List {
    breakers: Vec<BreakerView>,
}

pub(crate) async fn list(State(ctx): State<Ctx>, request: Request<Body>) -> Response {
    let (parts, _) = request.into_parts();
    if let Err(refusal) = access(&parts).check(&parts, Need::Read) {
        return refused(refusal);
    }
    let breakers = ctx
        .registry
        .list()
        .iter()
        .map(|e| BreakerView::of_entry(ctx.registry, e))
        .collect();
    Json(List { breakers }).into_response()
}

pub(crate) async fn detail(
    State(ctx): State<Ctx>,
    Path(name): Path<String>,
    request: Request<Body>,
) -> Response {
    let (parts, _) = request.into_parts();
    if let Err(refusal) = access(&parts).check(&parts, Need::Read) {
        return refused(refusal);
    }
    match Detail::of(ctx.registry, &name) {
        Some(detail) => Json(detail).into_response(),
        None => not_found(ctx.registry, &name),
    }
}

pub(crate) async fn health(State(ctx): State<Ctx>, request: Request<Body>) -> Response {
    let (parts, _) = request.into_parts();
    if let Err(refusal) = access(&parts).check(&parts, Need::Read) {
        return refused(refusal);
    }
    let critical = parts
        .extensions
        .get::<Critical>()
        .cloned()
        .unwrap_or_default();
    let names: Vec<&str> = critical
        .0
        .iter()
        .flat_map(|n| n.iter())
        .map(String::as_str)
        .collect();
    let health = health_of(ctx.registry, &names);
    let status = if health.is_up() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(health)).into_response()
}

pub(crate) async fn events(
    State(ctx): State<Ctx>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
    request: Request<Body>,
) -> Response {
    let (parts, _) = request.into_parts();
    if let Err(refusal) = access(&parts).check(&parts, Need::Read) {
        return refused(refusal);
    }
    if let Some(unknown) = query.keys().find(|k| k.as_str() != "calls") {
        let error = format!("unknown query parameter {unknown:?}; the one known is `calls`");
        return problem(StatusCode::BAD_REQUEST, error, None);
    }
    let calls = match query.get("calls").map(|v| v.parse::<f64>()) {
        None => 0.0,
        Some(Ok(rate)) if (0.0..=1.0).contains(&rate) => rate,
        Some(_) => {
            let error = format!(
                "calls must be a sampling rate in [0, 1], got {:?}",
                query["calls"]
            );
            return problem(StatusCode::BAD_REQUEST, error, Some("calls"));
        }
    };
    let last_id = match headers
        .get("last-event-id")
        .map(|v| v.to_str().map(str::parse::<u64>))
    {
        None => None,
        Some(Ok(Ok(id))) => Some(id),
        Some(_) => {
            let error = "Last-Event-ID must be the id of an event, a whole number".to_owned();
            return problem(StatusCode::BAD_REQUEST, error, Some("Last-Event-ID"));
        }
    };
    ctx.registry
        .journal()
        .stream(ctx.registry, last_id, calls)
        .into_response()
}

/// A checked `POST /{name}` body.
#[derive(Debug, PartialEq)]
pub(crate) struct Steer {
    action: Action,
    record: OperatorAction,
}

const ACTIONS: &str = "\"force_open\", \"open_for\", \"disable\", \"reset\" or \"close\"";

/// Parses a `POST /{name}` body: `{"action": ..., "for": "30s"}`; the error names the field.
pub(crate) fn parse_steer(body: &[u8]) -> Result<Steer, (String, Option<&'static str>)> {
    let object: Map<String, Value> = match serde_json::from_slice(body) {
        Ok(Value::Object(object)) => object,
        Ok(_) => return Err(("the body must be a JSON object".into(), None)),
        Err(e) => return Err((format!("the body is not JSON: {e}"), None)),
    };
    if let Some(unknown) = object
        .keys()
        .find(|k| !["action", "for"].contains(&k.as_str()))
    {
        return Err((
            format!("unknown field {unknown:?}; the fields are \"action\" and \"for\""),
            None,
        ));
    }
    let action = match object.get("action") {
        None => {
            return Err((
                format!("action is missing: one of {ACTIONS}"),
                Some("action"),
            ))
        }
        Some(Value::String(action)) => action.as_str(),
        Some(other) => {
            return Err((
                format!("action must be one of {ACTIONS}, got {other}"),
                Some("action"),
            ))
        }
    };
    let period = object.get("for");
    let action_run = match action {
        "force_open" => Action::ForceOpen,
        "disable" => Action::Disable,
        // The only way back to CLOSED empties the window: `close` is `reset`.
        "reset" | "close" => Action::Reset,
        "open_for" => match period {
            Some(Value::String(text)) => match humantime::parse_duration(text) {
                Ok(d) if !d.is_zero() => Action::OpenFor(d),
                Ok(_) => return Err(("for must be longer than zero".into(), Some("for"))),
                Err(e) => {
                    return Err((
                        format!("for must be a duration such as \"30s\", got {text:?}: {e}"),
                        Some("for"),
                    ))
                }
            },
            None => {
                return Err((
                    "for is missing: open_for needs a duration such as \"30s\"".into(),
                    Some("for"),
                ))
            }
            Some(other) => {
                return Err((
                    format!("for must be a duration such as \"30s\", got {other}"),
                    Some("for"),
                ))
            }
        },
        other => {
            return Err((
                format!("action must be one of {ACTIONS}, got {other:?}"),
                Some("action"),
            ))
        }
    };
    if !matches!(action_run, Action::OpenFor(_)) && period.is_some() {
        return Err((
            format!("for belongs to open_for, not to {action}"),
            Some("for"),
        ));
    }
    Ok(Steer {
        action: action_run,
        record: OperatorAction {
            action: action.to_owned(),
            open_for: period.and_then(Value::as_str).map(str::to_owned),
            operator: String::new(),
        },
    })
}

/// Bodies longer than this are refused: an action is a few dozen bytes.
const MAX_BODY: usize = 4096;

pub(crate) async fn steer(
    State(ctx): State<Ctx>,
    Path(name): Path<String>,
    request: Request<Body>,
) -> Response {
    let (parts, body) = request.into_parts();
    let operator = match access(&parts).check(&parts, Need::Write) {
        Ok(Some(operator)) => operator,
        Ok(None) => unreachable!("a write is checked by an authorizer or refused"),
        Err(refusal) => return refused(refusal),
    };
    let registry = ctx.registry;
    if !registry.names().contains(&name) {
        return not_found(registry, &name);
    }
    let body = match to_bytes(body, MAX_BODY).await {
        Ok(body) => body,
        Err(e) => {
            let error = format!("the body could not be read (at most {MAX_BODY} bytes): {e}");
            return problem(StatusCode::BAD_REQUEST, error, None);
        }
    };
    let mut steer = match parse_steer(&body) {
        Ok(steer) => steer,
        Err((error, field)) => return problem(StatusCode::BAD_REQUEST, error, field),
    };
    steer.record.operator = operator.name().to_owned();
    let targets = match registry.get(&name) {
        Some(breaker) => vec![breaker],
        None => registry
            .list()
            .into_iter()
            .filter(|e| e.name() == name)
            .map(|e| e.breaker().clone())
            .collect(),
    };
    for breaker in &targets {
        registry
            .journal()
            .operator_action(breaker, steer.record.clone());
    }
    tracing::warn!(
        target: "breakerbox::admin",
        breaker = %name,
        action = %steer.record.action,
        period = steer.record.open_for.as_deref().unwrap_or(""),
        operator = %operator.name(),
        "operator action on breaker {name:?}: {} by {:?}",
        steer.record.action,
        operator.name(),
    );
    let overrides = Overrides::action("admin", &name, steer.action);
    if let Err(e) = super::events::acting(operator.name(), || registry.apply(&overrides)) {
        // Checked above; a breaker removed meanwhile lands here.
        return problem(StatusCode::NOT_FOUND, e.to_string(), None);
    }
    match Detail::of(registry, &name) {
        Some(detail) => Json(detail).into_response(),
        None => not_found(registry, &name),
    }
}
