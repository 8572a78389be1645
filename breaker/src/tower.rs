//! A [`tower`](https://docs.rs/tower) layer that guards any `Service` with a breaker.
//!
//! [`CircuitBreakerLayer`] wraps a service so that every request asks one shared [`Breaker`](crate::Breaker)
//! first. A rejected request never reaches the inner service and fails with
//! [`BreakerError::Rejected`]; an admitted one is judged, response or error, by a
//! [`ClassifyResponse`] hook. The default, [`DefaultClassifier`], asks the response's
//! [`Classify`](crate::Classify) impl (for `http::Response<B>`, 5xx is a failure) and counts every error of the
//! inner service as a failure.
//!
//! ```
//! use std::sync::Arc;
//! use breakerbox::tower::{BreakerError, CircuitBreakerLayer};
//! use breakerbox::{Breaker, Config, State};
//! use tower::{service_fn, Layer, ServiceExt};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let upstream = Arc::new(Breaker::new("docs::upstream", Config::builder().count_window(1).build()?));
//! let layer = CircuitBreakerLayer::new(upstream.clone());
//! let svc = layer.layer(service_fn(|_: ()| async {
//!     Ok::<_, std::io::Error>(http::Response::builder().status(503).body(()).unwrap())
//! }));
//!
//! let answer = svc.clone().oneshot(()).await.unwrap();
//! assert_eq!(answer.status(), 503); // the response is returned as is, and counted as a failure
//! assert_eq!(upstream.state(), State::Open);
//! assert!(matches!(svc.oneshot(()).await, Err(BreakerError::Rejected(_))));
//! # Ok::<(), breakerbox::config::ConfigError>(())
//! # }).unwrap();
//! ```
//!
//! # Design
//!
//! - One breaker per layer, shared by every service that [`Layer::layer`](tower_layer::Layer::layer) makes: routers call
//!   `layer()` once per route, and each route still sees the same breaker.
//! - `poll_ready` only asks the inner service; the permit is taken in `call`, so a request
//!   dropped between `poll_ready` and `call` holds no half-open probe slot. A response future
//!   dropped before it completes records nothing and frees its slot, as a dropped
//!   [`Permit`](crate::Permit) does.
//! - The inner service need not be `Clone`, and no future is boxed: [`ResponseFuture`] is a
//!   plain pin-projected enum.
//! - A rejection is an error of its own, [`BreakerError<E>`], rather than a bound
//!   `E: From<Rejected>` on the inner service: it works with every service, and
//!   `BreakerError<E>` converts into `tower::BoxError` whenever `E` does.
//! - Retries are tower's `Retry` outside the layer, so that every attempt asks the breaker,
//!   with [`RetryFailures`] (feature `tower-retry`) as its policy: it retries only what the
//!   classifier calls a failure, never a [`BreakerError::Rejected`], within the breaker's
//!   retry budget and backoff. A timeout per attempt is tower's `Timeout` inside the layer,
//!   whose errors count as failures.
//! - Services and response futures hold the breaker through an `Arc`: a response future
//!   carries an [`OwnedPermit`](crate::OwnedPermit), so it is `'static` and the breaker lives as long as its
//!   last layer, service or call.

mod classify;
mod error;
mod future;
mod keyed_layer;
mod keyed_service;
mod layer;
#[cfg(feature = "tower-retry")]
mod retry;
mod service;

pub use self::classify::{ClassifyResponse, DefaultClassifier, ErrorClassifier};
pub use self::error::BreakerError;
pub use self::future::ResponseFuture;
pub use self::keyed_layer::KeyedCircuitBreakerLayer;
pub use self::keyed_service::KeyedCircuitBreakerService;
pub use self::layer::CircuitBreakerLayer;
#[cfg(feature = "tower-retry")]
pub use self::retry::{RetryDelay, RetryFailures};
pub use self::service::CircuitBreakerService;
