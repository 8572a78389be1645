//! A circuit breaker that gets the rules right.
//!
//! A breaker counts the outcomes of recent calls to a downstream. When failures reach a
//! threshold it rejects calls at once (OPEN); after a pause it lets a few probes through
//! (HALF_OPEN), and it closes again only when they succeed.
//!
//! ```
//! use std::time::Duration;
//! use breakerbox::{Breaker, Config, State};
//! use breakerbox::clock::ManualClock;
//!
//! let config = Config::builder()
//!     .count_window(20)
//!     .min_calls(10)
//!     .failure_rate(0.5)
//!     .open_for(Duration::from_secs(5))
//!     .probes(3)
//!     .build()?;
//! let clock = ManualClock::new();
//! let b = Breaker::with_clock("libraryd", config, clock.clone());
//!
//! for _ in 0..10 {
//!     b.try_acquire().unwrap().failure();
//! }
//! assert_eq!(b.state(), State::Open);
//! assert!(b.try_acquire().is_err());
//!
//! clock.advance(Duration::from_secs(5));
//! let probes: Vec<_> = (0..3).map(|_| b.try_acquire().unwrap()).collect();
//! assert!(b.try_acquire().is_err(), "at most 3 probes at once");
//! probes.into_iter().for_each(|p| p.success());
//! assert_eq!(b.state(), State::Closed);
//! # Ok::<(), breakerbox::config::ConfigError>(())
//! ```
//!
//! # The attribute
//!
//! Most code only needs [`#[circuit_breaker]`](circuit_breaker) on an `async fn`: a breaker
//! per function (or per key), configured and checked at compile time, registered in
//! [`registry()`] for metrics and operators.
//!
//! ```
//! use breakerbox::{circuit_breaker, registry, Rejected};
//!
//! #[derive(Debug)]
//! struct Refused;
//!
//! impl breakerbox::Classify for Refused {
//!     fn classify(&self) -> breakerbox::Outcome {
//!         breakerbox::Outcome::Failure
//!     }
//! }
//!
//! impl From<Rejected> for Refused {
//!     fn from(_: Rejected) -> Self {
//!         Refused
//!     }
//! }
//!
//! #[circuit_breaker(name = "libraryd", window = 20, min = 10, rate = 0.5, open = "5s")]
//! async fn get_book(isbn: &str) -> Result<String, Refused> {
//!     Ok(format!("book {isbn}"))
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! get_book("978-1").await.unwrap();
//! let b = registry().get("libraryd").unwrap();
//! assert_eq!(b.snapshot().calls, 1);
//! # });
//! ```
//!
//! # The call policy
//!
//! With the `policy` feature (on by default), [`Breaker::run`] runs a call the way the
//! breaker needs it, under the breaker's current configuration: each attempt asks the breaker
//! first, runs under the `timeout` (past it, it is cancelled and recorded as a failure, and
//! the caller gets a [`TimedOut`]), and only a failure is retried, up to `retries` times,
//! after an exponential backoff with full jitter up to `retry_backoff_max`, within a retry
//! budget per breaker (at most `retry_budget` retries per first attempt of the last 10
//! seconds, plus `retry_floor` a second; a retry is spent only by an attempt that starts).
//! A rejection ends the call with [`CallError::Rejected`]: it is never retried nor counted as
//! a failure. Waits and timeouts are on tokio's clock.
//!
//! ```
//! use std::io;
//! use std::time::Duration;
//! use breakerbox::{Breaker, CallError, Config};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true)
//! #     .build().unwrap().block_on(async {
//! let config = Config::builder()
//!     .timeout(Duration::from_millis(800))
//!     .retries(2)
//!     .retry_backoff(Duration::from_millis(20))
//!     .build()?;
//! let b = Breaker::new("libraryd", config);
//! let hung = b.run(|| async {
//!     std::future::pending::<()>().await;
//!     Ok::<_, io::Error>("Dune")
//! });
//! let Err(CallError::TimedOut(timed_out)) = hung.await else { unreachable!() };
//! assert_eq!(timed_out.to_string(), "call to 'libraryd' timed out after 800ms");
//! let totals = b.snapshot().totals;
//! assert_eq!((totals.failure, totals.retries), (3, 2));
//! # Ok::<(), breakerbox::config::ConfigError>(())
//! # }).unwrap();
//! ```
//!
//! # The rules
//!
//! - The window counts **completed** calls only; rejected calls never enter it.
//! - Failure rate is `failures / completed` (not over the window size), compared with `>=`,
//!   and only once `min_calls` calls completed.
//! - HALF_OPEN admits at most `probes` calls **at once**; any probe failure reopens at once;
//!   a permit dropped without a result frees its slot.
//! - Every state change bumps a generation; a result from an earlier generation is discarded,
//!   so a late success can never close a breaker that just opened.
//! - OPEN expires lazily on the next call; there is no timer thread.
//! - Only downstream failures count, as [`Classify`] says; business errors are successes.
//! - The breaker is asked before **every** attempt of a retried call, and a rejected attempt
//!   is never a failure; only failures are retried, within a budget.
//!
//! # Features
//!
//! - `tracing` (default): logs every state transition (a warning when a breaker opens, info
//!   when it closes) with the breaker's name, key and failure rate, and a warning when two
//!   `#[circuit_breaker]` functions share a name with different configurations.
//! - `policy` (default): [`Breaker::run`] and [`Breaker::run_with`], the call policy above
//!   (tokio's timer, and `fastrand` for the jitter). Without it, [`TimedOut`] and
//!   [`CallError`] remain, and the breaker is untouched.
//! - `test-util`: the default clock follows tokio's, so `tokio::time::pause()` and
//!   `tokio::time::advance()` drive every breaker; and [`testing`]: a breaker on a manual clock,
//!   `trip`, `fail_n`. Enable it in `[dev-dependencies]`.
//! - `tower`: [`tower::CircuitBreakerLayer`], a layer guarding any `Service` with one shared
//!   breaker, judging responses as well as errors (an HTTP 503 is a failure), and
//!   [`tower::KeyedCircuitBreakerLayer`], a breaker per request key.
//! - `tower-retry`: `tower::RetryFailures`, a policy for tower's `Retry` outside that layer
//!   that retries failures only, never a rejection, within the breaker's budget.
//! - `http`: [`Classify`] for `http::StatusCode` and `http::Response<B>` (5xx are failures),
//!   and [`StatusClassifier`] to count 429 Too Many Requests too.
//! - `tonic` (tonic 0.14): [`Classify`] for `tonic::Status` (UNAVAILABLE, DEADLINE_EXCEEDED,
//!   INTERNAL are failures; NOT_FOUND, INVALID_ARGUMENT and other business codes are
//!   answers), and `From<Rejected>` for it: UNAVAILABLE with the rejection's text and
//!   `grpc-retry-pushback-ms`, so `#[circuit_breaker]` guards a service method as it is;
//!   `From<TimedOut>` (DEADLINE_EXCEEDED) and `From<CallError>` too.
//! - `tonic013`: the same for tonic 0.13.
//! - `axum` (axum 0.8): [`Rejected`] is an `IntoResponse`, 503 Service Unavailable with
//!   `Retry-After`, and `axum::response::Response` is `From<Rejected>`, so
//!   `#[circuit_breaker]` guards a handler returning `Result<T, Response>` as it is;
//!   [`TimedOut`] answers 504 Gateway Timeout, and [`CallError`] either.
//! - `reqwest`: [`Classify`] for `reqwest::Error` (timeouts, connect errors, 5xx statuses).
//!   A `reqwest::Error` cannot be made from a [`Rejected`]: a function returning it takes a
//!   `fallback`, or returns an error of its own with `impl From<Rejected>`.
//! - `tokio`: [`Classify`] for `tokio::time::error::Elapsed` (a timeout is a failure).
//! - `prometheus`: [`metrics::register`] exports every breaker of [`registry()`] to a
//!   `prometheus-client` registry.
//! - `overrides`: [`overrides::Overrides`], operator settings from a TOML file applied with
//!   [`Registry::apply`].
//! - `recording`: [`Breaker::start_recording`] keeps a breaker's last calls (the attribute's `record`
//!   key too), [`recording`] writes and reads them in the CSV format the replay tuner
//!   `breakerbox-tune` reads, and [`replay`] runs a configuration over such a trace.
//! - `fleet`: [`fleet`], breakers that learn from their peers' opinions through Redis (the
//!   attribute's `fleet` and `fleet_quorum` keys); the hot path stays local, a background task
//!   on tokio owns the connection.
//! - `fleet-tls`: `rediss://` URLs for the fleet's store, TLS by rustls on its `ring`
//!   provider, trusting the system's roots or a CA of your own, with a client certificate if
//!   the store asks for one.
//! - `serde`: `Serialize` for [`Snapshot`], [`State`], [`Trial`], [`CallTotals`],
//!   [`RejectedBy`], [`TransitionReason`], [`Event`] and [`Config`] (a map of the
//!   `#[circuit_breaker]` keys): the JSON format the `admin` module documents.
//! - `admin`: `admin::router()`, an axum 0.8 router for operators: every breaker as JSON,
//!   a server-sent events stream of transitions, the overrides' actions over HTTP (locked
//!   unless given an authorizer), a health answer and a live page.
//!
//! On docs.rs every feature is on, and each item a feature gates says which.
//!
//! [`TimedOut`]: policy::TimedOut
//! [`StatusClassifier`]: http::StatusClassifier
//! [`Registry::apply`]: registry::Registry::apply
//! [`Snapshot`]: snapshot::Snapshot
//! [`Trial`]: snapshot::Trial
//! [`CallTotals`]: snapshot::CallTotals
//! [`RejectedBy`]: snapshot::RejectedBy
//! [`TransitionReason`]: events::TransitionReason
//! [`Event`]: events::Event

#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations)]

// The attribute names the runtime `::breakerbox` wherever it expands, this crate's own tests
// and doc tests included.
extern crate self as breakerbox;

mod action;
#[cfg(feature = "admin")]
pub mod admin;
mod breaker;
mod call_events;
mod call_site;
mod cap;
mod classify;
pub mod clock;
pub mod config;
mod declared;
mod engine;
pub mod events;
#[cfg(feature = "fleet")]
pub mod fleet;
#[cfg(feature = "http")]
pub mod http;
mod integrations;
mod keyed;
mod latency;
mod machine;
#[cfg(feature = "prometheus")]
pub mod metrics;
#[cfg(feature = "overrides")]
pub mod overrides;
mod permit;
pub mod policy;
#[cfg(feature = "recording")]
pub mod recording;
mod recovery;
pub mod registry;
mod rejected;
#[cfg(feature = "recording")]
pub mod replay;
mod rule;
pub mod snapshot;
mod state;
mod sync;
#[cfg(feature = "test-util")]
pub mod testing;
mod throttle;
#[cfg(feature = "tower")]
pub mod tower;
#[cfg(feature = "tracing")]
mod trace;
mod transition;
mod variant_names;
mod window;

pub use crate::breaker::Breaker;
pub use crate::classify::{Classify, Outcome};
pub use crate::config::Config;
pub use crate::declared::registry;
pub use crate::permit::{OwnedPermit, Permit};
pub use crate::policy::CallError;
pub use crate::rejected::{RejectReason, Rejected};
pub use crate::state::State;
pub use breakerbox_macros::circuit_breaker;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
