//! [`CircuitBreakerService`], a service guarded by one breaker.

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use tower_service::Service;

use super::future::respond;
use super::{BreakerError, ClassifyResponse, DefaultClassifier, ResponseFuture};
use crate::Breaker;

/// A service guarded by a breaker; made by [`CircuitBreakerLayer`](super::CircuitBreakerLayer).
#[derive(Clone)]
pub struct CircuitBreakerService<S, C = DefaultClassifier> {
    pub(super) inner: S,
    pub(super) breaker: Arc<Breaker>,
    pub(super) classifier: C,
}

impl<S, C> CircuitBreakerService<S, C> {
    /// The breaker guarding this service.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use breakerbox::tower::CircuitBreakerLayer;
    /// use breakerbox::{Breaker, Config, State};
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
    ///
    /// ```
    /// use std::sync::Arc;
    /// use breakerbox::tower::CircuitBreakerLayer;
    /// use breakerbox::{Breaker, Config};
    /// use tower::Layer;
    ///
    /// let layer = CircuitBreakerLayer::new(Arc::new(Breaker::new("docs::get_ref", Config::default())));
    /// let svc = layer.layer(vec!["10.0.0.1:7000"]);
    /// assert_eq!(svc.get_ref(), &["10.0.0.1:7000"]);
    /// ```
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, to change: the breaker is untouched.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use breakerbox::tower::CircuitBreakerLayer;
    /// use breakerbox::{Breaker, Config};
    /// use tower::Layer;
    ///
    /// let layer = CircuitBreakerLayer::new(Arc::new(Breaker::new("docs::get_mut", Config::default())));
    /// let mut svc = layer.layer(vec!["10.0.0.1:7000"]);
    /// svc.get_mut().push("10.0.0.2:7000");
    /// assert_eq!(svc.get_ref(), &["10.0.0.1:7000", "10.0.0.2:7000"]);
    /// ```
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// The inner service, the breaker's guard taken off. The breaker lives on in its layer,
    /// its other services and its response futures.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use breakerbox::tower::CircuitBreakerLayer;
    /// use breakerbox::{Breaker, Config};
    /// use tower::Layer;
    ///
    /// let layer = CircuitBreakerLayer::new(Arc::new(Breaker::new("docs::into_inner", Config::default())));
    /// let svc = layer.layer(vec!["10.0.0.1:7000"]);
    /// assert_eq!(svc.into_inner(), ["10.0.0.1:7000"]);
    /// assert_eq!(layer.breaker().name(), "docs::into_inner");
    /// ```
    pub fn into_inner(self) -> S {
        self.inner
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

impl<S: fmt::Debug, C: fmt::Debug> fmt::Debug for CircuitBreakerService<S, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CircuitBreakerService")
            .field("inner", &self.inner)
            .field("breaker", &self.breaker.name())
            .field("classifier", &self.classifier)
            .finish()
    }
}
