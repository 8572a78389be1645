//! A [`tower`](https://docs.rs/tower) layer that guards any `Service` with a breaker.
//!
//! [`CircuitBreakerLayer`] wraps a service so that every request asks one shared [`Breaker`]
//! first. A rejected request never reaches the inner service and fails with
//! [`BreakerError::Rejected`]; an admitted one is judged, response or error, by a
//! [`ClassifyResponse`] hook. The default, [`DefaultClassifier`], asks the response's
//! [`Classify`] impl (for `http::Response<B>`, 5xx is a failure) and counts every error of the
//! inner service as a failure.
//!
//! ```
//! use std::sync::Arc;
//! use breaker::tower::{BreakerError, CircuitBreakerLayer};
//! use breaker::{Breaker, Config, State};
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
//! # Ok::<(), breaker::ConfigError>(())
//! # }).unwrap();
//! ```
//!
//! # Design
//!
//! - One breaker per layer, shared by every service that [`Layer::layer`] makes: routers call
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
//! - Services and response futures hold the breaker through an `Arc`: a response future
//!   carries an [`OwnedPermit`], so it is `'static` and the breaker lives as long as its
//!   last layer, service or call.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;
use tower_layer::Layer;
use tower_service::Service;

mod keyed;

pub use self::keyed::{KeyedCircuitBreakerLayer, KeyedCircuitBreakerService};

use crate::{Breaker, Classify, Outcome, OwnedPermit, Rejected};

/// Judges a service's result, response or error, for the breaker.
///
/// Implemented by [`DefaultClassifier`], by [`ErrorClassifier`] and by every
/// `Fn(&Result<Res, E>) -> Outcome`.
///
/// ```
/// use breaker::tower::ClassifyResponse;
/// use breaker::Outcome;
///
/// // A JSON API that reports overload in a 200 body.
/// let overloaded = |r: &Result<String, std::io::Error>| match r {
///     Ok(body) if body.contains("\"overloaded\"") => Outcome::Failure,
///     Ok(_) => Outcome::Success,
///     Err(_) => Outcome::Failure,
/// };
/// assert_eq!(overloaded.classify(&Ok("{\"overloaded\":1}".into())), Outcome::Failure);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot judge a `Result<{Res}, {E}>` for the breaker",
    note = "implement `breaker::Classify` for `{Res}` to use the default classifier, or pass \
            a `Fn(&Result<{Res}, {E}>) -> breaker::Outcome` to `classify_with`"
)]
pub trait ClassifyResponse<Res, E> {
    /// The outcome this result means for the breaker.
    fn classify(&self, result: &Result<Res, E>) -> Outcome;
}

impl<F, Res, E> ClassifyResponse<Res, E> for F
where
    F: Fn(&Result<Res, E>) -> Outcome,
{
    #[inline]
    fn classify(&self, result: &Result<Res, E>) -> Outcome {
        self(result)
    }
}

/// The default classifier: a response as its [`Classify`] impl says (for `http::Response<B>`,
/// 5xx is a failure), every error of the inner service a failure.
///
/// Errors of a tower stack are transport errors (refused, reset, timed out), which is why
/// they all count; answers the downstream gave arrive as responses.
///
/// ```
/// use breaker::tower::{ClassifyResponse, DefaultClassifier};
/// use breaker::Outcome;
///
/// let ok = http::Response::builder().status(404).body(()).unwrap();
/// assert_eq!(DefaultClassifier.classify(&Ok::<_, ()>(ok)), Outcome::Success);
/// assert_eq!(
///     ClassifyResponse::<http::Response<()>, _>::classify(&DefaultClassifier, &Err(())),
///     Outcome::Failure,
/// );
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DefaultClassifier;

impl<Res: Classify, E> ClassifyResponse<Res, E> for DefaultClassifier {
    #[inline]
    fn classify(&self, result: &Result<Res, E>) -> Outcome {
        match result {
            Ok(response) => response.classify(),
            Err(_) => Outcome::Failure,
        }
    }
}

/// Every response is a success; an error is judged by its own [`Classify`] impl. For services
/// whose errors tell answers from failures, e.g. a gRPC client returning `tonic::Status`.
///
/// ```
/// use breaker::tower::{ClassifyResponse, ErrorClassifier};
/// use breaker::Outcome;
///
/// let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
/// let not_found = std::io::Error::from(std::io::ErrorKind::NotFound);
/// assert_eq!(ErrorClassifier.classify(&Err::<(), _>(refused)), Outcome::Failure);
/// assert_eq!(ErrorClassifier.classify(&Err::<(), _>(not_found)), Outcome::Success);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ErrorClassifier;

impl<Res, E: Classify> ClassifyResponse<Res, E> for ErrorClassifier {
    #[inline]
    fn classify(&self, result: &Result<Res, E>) -> Outcome {
        match result {
            Ok(_) => Outcome::Success,
            Err(e) => e.classify(),
        }
    }
}

/// The error of a guarded service: the breaker rejected the request, or the inner service
/// failed.
///
/// ```
/// use std::sync::Arc;
/// use breaker::tower::{BreakerError, CircuitBreakerLayer};
/// use breaker::{Breaker, Config};
/// use tower::{service_fn, Layer, ServiceExt};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let b = Arc::new(Breaker::new("docs::errors", Config::default()));
/// b.force_open();
/// let svc = CircuitBreakerLayer::new(b).layer(service_fn(|_: ()| async {
///     Ok::<_, std::io::Error>(http::StatusCode::OK)
/// }));
/// let err = svc.oneshot(()).await.unwrap_err();
/// assert_eq!(err.to_string(), "circuit 'docs::errors' is forced open");
/// assert!(err.rejected().is_some());
/// let boxed: tower::BoxError = err.into(); // with `?` in a `BoxError` stack
/// # });
/// ```
#[derive(Debug)]
pub enum BreakerError<E> {
    /// The breaker rejected the request; the inner service never saw it.
    Rejected(Rejected),
    /// The inner service failed.
    Inner(E),
}

impl<E> BreakerError<E> {
    /// The rejection, if the breaker rejected the request.
    pub fn rejected(&self) -> Option<&Rejected> {
        match self {
            BreakerError::Rejected(r) => Some(r),
            BreakerError::Inner(_) => None,
        }
    }

    /// The inner service's error, if it failed.
    pub fn into_inner(self) -> Option<E> {
        match self {
            BreakerError::Rejected(_) => None,
            BreakerError::Inner(e) => Some(e),
        }
    }
}

impl<E> From<Rejected> for BreakerError<E> {
    fn from(rejected: Rejected) -> Self {
        BreakerError::Rejected(rejected)
    }
}

impl<E: fmt::Display> fmt::Display for BreakerError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BreakerError::Rejected(r) => r.fmt(f),
            BreakerError::Inner(e) => e.fmt(f),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for BreakerError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BreakerError::Rejected(r) => Some(r),
            BreakerError::Inner(e) => Some(e),
        }
    }
}

/// Guards services with one shared [`Breaker`].
///
/// Every service made by [`layer`](Layer::layer) uses the same breaker:
///
/// ```
/// use std::sync::Arc;
/// use breaker::tower::CircuitBreakerLayer;
/// use breaker::{Breaker, Config};
/// use tower::{service_fn, Layer};
///
/// let layer = CircuitBreakerLayer::new(Arc::new(Breaker::new("docs::shared", Config::default())));
/// let books = layer.layer(service_fn(|_: ()| async { Ok::<_, std::io::Error>(http::StatusCode::OK) }));
/// let authors = layer.layer(service_fn(|_: ()| async { Ok::<_, std::io::Error>(http::StatusCode::OK) }));
/// assert!(std::ptr::eq(books.breaker(), authors.breaker()));
/// ```
#[derive(Clone)]
pub struct CircuitBreakerLayer<C = DefaultClassifier> {
    breaker: Arc<Breaker>,
    classifier: C,
}

impl CircuitBreakerLayer {
    /// A layer guarding services with `breaker`, judging results with [`DefaultClassifier`].
    pub fn new(breaker: Arc<Breaker>) -> Self {
        Self {
            breaker,
            classifier: DefaultClassifier,
        }
    }
}

impl<C> CircuitBreakerLayer<C> {
    /// The same layer, judging results with `classifier` instead.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use breaker::tower::CircuitBreakerLayer;
    /// use breaker::{Breaker, Config, Outcome};
    ///
    /// let layer = CircuitBreakerLayer::new(Arc::new(Breaker::new("docs::custom", Config::default())))
    ///     .classify_with(|r: &Result<u16, std::io::Error>| match r {
    ///         Ok(status) if *status >= 500 => Outcome::Failure,
    ///         Ok(_) => Outcome::Success,
    ///         Err(_) => Outcome::Failure,
    ///     });
    /// assert_eq!(layer.breaker().name(), "docs::custom");
    /// ```
    pub fn classify_with<D>(self, classifier: D) -> CircuitBreakerLayer<D> {
        CircuitBreakerLayer {
            breaker: self.breaker,
            classifier,
        }
    }

    /// The breaker the layer's services share.
    pub fn breaker(&self) -> &Arc<Breaker> {
        &self.breaker
    }
}

impl<S, C: Clone> Layer<S> for CircuitBreakerLayer<C> {
    type Service = CircuitBreakerService<S, C>;

    fn layer(&self, inner: S) -> Self::Service {
        CircuitBreakerService {
            inner,
            breaker: Arc::clone(&self.breaker),
            classifier: self.classifier.clone(),
        }
    }
}

impl<C: fmt::Debug> fmt::Debug for CircuitBreakerLayer<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CircuitBreakerLayer")
            .field("breaker", &self.breaker.name())
            .field("classifier", &self.classifier)
            .finish()
    }
}

/// A service guarded by a breaker; made by [`CircuitBreakerLayer`].
#[derive(Clone)]
pub struct CircuitBreakerService<S, C = DefaultClassifier> {
    inner: S,
    breaker: Arc<Breaker>,
    classifier: C,
}

impl<S, C> CircuitBreakerService<S, C> {
    /// The breaker guarding this service.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use breaker::tower::CircuitBreakerLayer;
    /// use breaker::{Breaker, Config, State};
    /// use tower::{service_fn, Layer};
    ///
    /// let layer = CircuitBreakerLayer::new(Arc::new(Breaker::new("docs::svc", Config::default())));
    /// let svc = layer.layer(service_fn(|_: ()| async { Ok::<_, std::io::Error>(http::StatusCode::OK) }));
    /// assert_eq!(svc.breaker().state(), State::Closed);
    /// ```
    pub fn breaker(&self) -> &Breaker {
        &self.breaker
    }

    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }
}

impl<S, C, Req> Service<Req> for CircuitBreakerService<S, C>
where
    S: Service<Req>,
    C: ClassifyResponse<S::Response, S::Error> + Clone,
{
    type Response = S::Response;
    type Error = BreakerError<S::Error>;
    type Future = ResponseFuture<S::Future, C>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // Only the inner service is asked: a permit taken here would hold a half-open probe
        // slot for a request that may never come.
        self.inner.poll_ready(cx).map_err(BreakerError::Inner)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        let admission = self.breaker.try_acquire_owned();
        respond(&mut self.inner, request, admission, &self.classifier)
    }
}

/// Calls `inner` if the breaker admitted the request; the rejection otherwise.
fn respond<S, C, Req>(
    inner: &mut S,
    request: Req,
    admission: Result<OwnedPermit, Rejected>,
    classifier: &C,
) -> ResponseFuture<S::Future, C>
where
    S: Service<Req>,
    C: Clone,
{
    let kind = match admission {
        Ok(permit) => Kind::Admitted {
            inner: inner.call(request),
            permit: Some(permit),
            classifier: classifier.clone(),
        },
        Err(rejected) => Kind::Rejected {
            rejected: Some(rejected),
        },
    };
    ResponseFuture { kind }
}

impl<S: fmt::Debug, C: fmt::Debug> fmt::Debug for CircuitBreakerService<S, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CircuitBreakerService")
            .field("inner", &self.inner)
            .field("breaker", &self.breaker.name())
            .field("classifier", &self.classifier)
            .finish()
    }
}

pin_project! {
    /// The response future of [`CircuitBreakerService`]: the inner call with its permit, or
    /// the rejection.
    ///
    /// Dropped before it completes, it records nothing and frees a half-open probe slot.
    pub struct ResponseFuture<F, C> {
        #[pin]
        kind: Kind<F, C>,
    }
}

pin_project! {
    #[project = KindProj]
    enum Kind<F, C> {
        Admitted {
            #[pin]
            inner: F,
            permit: Option<OwnedPermit>,
            classifier: C,
        },
        Rejected {
            rejected: Option<Rejected>,
        },
    }
}

impl<F, C, Res, E> Future for ResponseFuture<F, C>
where
    F: Future<Output = Result<Res, E>>,
    C: ClassifyResponse<Res, E>,
{
    type Output = Result<Res, BreakerError<E>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().kind.project() {
            KindProj::Admitted {
                inner,
                permit,
                classifier,
            } => {
                let result = match inner.poll(cx) {
                    Poll::Ready(result) => result,
                    Poll::Pending => return Poll::Pending,
                };
                if let Some(permit) = permit.take() {
                    permit.record(classifier.classify(&result));
                }
                Poll::Ready(result.map_err(BreakerError::Inner))
            }
            KindProj::Rejected { rejected } => match rejected.take() {
                Some(rejected) => Poll::Ready(Err(BreakerError::Rejected(rejected))),
                None => panic!("ResponseFuture polled after it completed"),
            },
        }
    }
}

impl<F, C> fmt::Debug for ResponseFuture<F, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.kind {
            Kind::Admitted { permit, .. } => match permit {
                Some(_) => "admitted",
                None => "completed",
            },
            Kind::Rejected { .. } => "rejected",
        };
        f.debug_struct("ResponseFuture")
            .field("state", &state)
            .finish()
    }
}
