//! The operator's surface: every breaker of a registry over HTTP, as an axum 0.8 [`Router`]
//! a service nests where it likes.
//!
//! ```
//! use breakerbox::admin::{self, Authorize};
//!
//! let app: axum::Router = axum::Router::new()
//!     .nest("/breakers", admin::router().authorize(admin::bearer_token("s3cret")));
//! ```
//!
//! | route | answers |
//! |---|---|
//! | `GET /` | `{"breakers": [breaker, ...]}`: every breaker and keyed family's member |
//! | `GET /{name}` | one breaker or keyed family with its configuration: `{"name", "keyed", "config": [{"key", "value", "source"}], "breakers": [breaker, ...]}` |
//! | `POST /{name}` | an operator's action: `{"action": "force_open" \| "open_for" \| "disable" \| "reset" \| "close"}`, with `"for": "30s"` for `open_for`; answers as `GET /{name}` after it |
//! | `GET /events` | server-sent events: every transition, ramp step and operator action; `?calls=0.01` adds that share of calls; `Last-Event-ID` resumes from the last [`RING`] records |
//! | `GET /ui` | the live page: a tile per breaker (its state in colour, the failure rate against its threshold, the open period's countdown, the last transitions), live from `/events`; with `#token=<bearer token>` after its URL, the operator's buttons (force open, reset) |
//! | `GET /health` | 200 `{"status": "UP", "open": []}`, or 503 `{"status": "CIRCUIT_OPEN", "open": [names]}` ([`health`]) |
//!
//! # The JSON format
//!
//! These field names are kept stable. A `breaker` of `GET /`:
//!
//! - `name`, `key` (`null` but for a keyed family's member);
//! - the [`Snapshot`](crate::snapshot::Snapshot)'s fields: `state` (`closed`, `open`, `half_open`,
//!   `forced_open`, `disabled`), `calls`, `failures`, `slow_calls`, `failure_rate`,
//!   `slow_call_rate` (`null` before `min` calls), `rejected`, `admit_percent`, `totals`
//!   (`success`, `failure`, `ignored`, `cancelled`, `rejected`, `rejected_by` {`open`,
//!   `half_open_full`, `forced_open`, `throttled`, `bulkhead`, `fleet_open`, `shed`},
//!   `shadow_rejected`, `retries`, `retry_budget_exhausted`), `trial` (`null`, or
//!   `admitted`, `in_flight`, `succeeded`);
//! - `thresholds`: `failure_rate`, `slow_call_rate` (`null` without slow calls);
//! - `open_left_ms`: the open period left, `null` unless OPEN;
//! - `shed_probability`: for a breaker with adaptive throttling (`throttle`), the probability
//!   that it refuses the next call in CLOSED (0 outside CLOSED), `null` without throttling;
//! - `fleet`: `member` (`fleet = true`), `open_for_fleet`, `degraded` and `peers_open`
//!   (`null` with no fleet running);
//! - `last_transition`: the last `state_transition` record, `null` before one;
//! - `recent`: the last [`RECENT`] records (transitions, ramp steps, operator actions).
//!
//! A record (a `recent` entry, an event's `data`): `id` (counting up from 1 per registry,
//! also the event's SSE `id`; `null` for a call), `at_ms` (milliseconds since the Unix epoch),
//! `name`, `key`, `operator` (who did it: the operator of an action and of the transition
//! it caused, `null` for what the breaker did by itself), and by its `type`: `state_transition` with `from`, `to`, `reason`
//! ([`TransitionReason::as_str`](crate::events::TransitionReason::as_str)) and `shadow`; `ramp_step`
//! with `step`, `percent`, `shadow`; `operator_action` with `action`, `for` (for `open_for`)
//! (the transition it causes follows with the same `operator` and its action's reason:
//! `force_open` gives `forced`; `disable` gives `disabled`; `reset` and `close` give `reset`;
//! `open_for` gives `manual_open`); `call` with
//! `ending`, `duration_ms` and `stale`.
//!
//! A configuration entry: `key` (the `#[circuit_breaker]` key: `window`, `min`, `rate`...),
//! `value` (counts and rates as numbers, durations as text such as `"5s"`, `null` when
//! unset, as [`Config`](crate::Config)'s `Serialize` writes them) and `source`:
//! `attribute` (the breaker of a `#[circuit_breaker]` function, the key written or its
//! default), `builder` (a breaker built and registered by code) or `overrides` (a key an
//! override set since).
//!
//! An error: `{"error": "..."}`, with `"field"` naming the field a bad body got wrong, and
//! for an unknown name (404) `"did_you_mean"`, the nearest registered names.
//!
//! # Steering
//!
//! An action goes through [`Registry::apply`](crate::registry::Registry::apply), as an overrides file's
//! `action` or `open_for` does: on a keyed family's name it reaches every member, and
//! `force_open` and `disable` the members created later. A name no breaker has answers 404:
//! the router never creates a breaker. Each action is an `operator_action` record, then the
//! transition it caused carrying the same `operator`, and a warning in the log (target
//! `breakerbox::admin`) naming the operator.
//!
//! # Who may
//!
//! Writes are locked by default: without an authorizer every `POST` answers 403, and the
//! router logs so when it is made. [`Authorize::authorize`] gives it one, a function of the
//! request's head returning the [`Operator`] (who may write, or only read) or why not
//! ([`Denied`], answered 401); [`Authorize::authorize_all`] puts the reads behind it too.
//! [`bearer_token`] is the usual one.

mod auth;
mod events;
mod health;
mod page;
mod routes;
mod view;

use std::sync::Arc;

use axum::routing::get;
use axum::{Extension, Router};
use http::request::Parts;

pub use self::auth::{bearer_token, Denied, Operator};
pub(crate) use self::events::Journal;
pub use self::events::{RECENT, RING};
pub use self::health::{health, health_of, Health};

use self::auth::Access;
use self::health::Critical;
use self::routes::Ctx;
use crate::{registry, registry::Registry};

/// The admin router over [`registry()`]: nest it where the service likes.
///
/// ```
/// let app: axum::Router = axum::Router::new().nest("/breakers", breakerbox::admin::router());
/// ```
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    router_of(registry())
}

/// The admin router over the breakers of `registry`, a registry of your own.
///
/// ```
/// use std::sync::OnceLock;
/// use breakerbox::registry::Registry;
///
/// static OWN: OnceLock<Registry> = OnceLock::new();
/// let app: axum::Router = breakerbox::admin::router_of(OWN.get_or_init(Registry::default));
/// ```
pub fn router_of<S: Clone + Send + Sync + 'static>(registry: &'static Registry) -> Router<S> {
    #[cfg(feature = "tracing")]
    tracing::warn!(
        target: "breakerbox::admin",
        "admin router: writes answer 403 until `.authorize(...)` gives it an authorizer"
    );
    Router::new()
        .route("/", get(routes::list))
        .route("/events", get(routes::events))
        .route("/health", get(routes::health))
        .route("/ui", get(page::page))
        .route("/{name}", get(routes::detail).post(routes::steer))
        .with_state(Ctx { registry })
}

/// The settings of an admin router: who may write (and read), and which breakers its health
/// answer watches. Each applies to the routes the router holds when it is called.
pub trait Authorize: Sized {
    /// Lets the operators `authorizer` accepts write; reads stay open to all.
    ///
    /// ```
    /// use breakerbox::admin::{self, Authorize, Denied, Operator};
    ///
    /// let token = admin::bearer_token("write-secret");
    /// let app: axum::Router = admin::router().authorize(move |parts: &http::request::Parts| {
    ///     match parts.headers.get("x-dashboard") {
    ///         Some(_) => Ok(Operator::reader("dashboard")),
    ///         None => token(parts),
    ///     }
    /// });
    /// ```
    fn authorize(
        self,
        authorizer: impl Fn(&Parts) -> Result<Operator, Denied> + Send + Sync + 'static,
    ) -> Self;

    /// Like [`authorize`](Authorize::authorize), and reads too need the authorizer's yes.
    ///
    /// ```
    /// use breakerbox::admin::{self, Authorize};
    ///
    /// let app: axum::Router = admin::router().authorize_all(admin::bearer_token("s3cret"));
    /// ```
    fn authorize_all(
        self,
        authorizer: impl Fn(&Parts) -> Result<Operator, Denied> + Send + Sync + 'static,
    ) -> Self;

    /// The breakers `GET /health` watches: single breakers' or keyed families' names. Without
    /// it, every breaker is critical.
    ///
    /// ```
    /// use breakerbox::admin::{self, Authorize};
    ///
    /// let app: axum::Router = admin::router().critical(["app::stock", "app::payments"]);
    /// ```
    fn critical<I: IntoIterator<Item = N>, N: Into<String>>(self, names: I) -> Self;
}

impl<S: Clone + Send + Sync + 'static> Authorize for Router<S> {
    fn authorize(
        self,
        authorizer: impl Fn(&Parts) -> Result<Operator, Denied> + Send + Sync + 'static,
    ) -> Self {
        #[cfg(feature = "tracing")]
        tracing::info!(target: "breakerbox::admin", "admin router: writes open to the authorizer's operators");
        self.layer(Extension(Access {
            authorizer: Some(Arc::new(authorizer)),
            guard_reads: false,
        }))
    }

    fn authorize_all(
        self,
        authorizer: impl Fn(&Parts) -> Result<Operator, Denied> + Send + Sync + 'static,
    ) -> Self {
        #[cfg(feature = "tracing")]
        tracing::info!(target: "breakerbox::admin", "admin router: reads and writes open to the authorizer's operators");
        self.layer(Extension(Access {
            authorizer: Some(Arc::new(authorizer)),
            guard_reads: true,
        }))
    }

    fn critical<I: IntoIterator<Item = N>, N: Into<String>>(self, names: I) -> Self {
        let names: Vec<String> = names.into_iter().map(Into::into).collect();
        self.layer(Extension(Critical(Some(names.into()))))
    }
}
