//! [`KeyedCircuitBreakerService`], whose requests each go through the breaker of their key.

use std::fmt;
use std::fmt::Display;
use std::hash::Hash;
use std::sync::Arc;
use std::task::{Context, Poll};

use tower_service::Service;

use super::future::respond;
use super::{BreakerError, ClassifyResponse, DefaultClassifier, ResponseFuture};
use crate::keyed::Keyed;
use crate::Breaker;

/// A service whose requests each go through the breaker of their key.
pub struct KeyedCircuitBreakerService<S, F, C = DefaultClassifier> {
    pub(super) inner: S,
    pub(super) family: Arc<Keyed>,
    pub(super) key: F,
    pub(super) classifier: C,
}

impl<S, F, C> KeyedCircuitBreakerService<S, F, C> {
    /// Takes `key`'s breaker out of the family, as
    /// [`KeyedCircuitBreakerLayer::remove`](super::KeyedCircuitBreakerLayer::remove) does.
    pub fn remove<Q>(&self, key: &Q) -> Option<Arc<Breaker>>
    where
        Q: ?Sized + Hash + Eq + ToOwned,
        Q::Owned: 'static,
    {
        self.family.remove(key)
    }

    /// The inner service.
    ///
    /// ```
    /// use breakerbox::tower::KeyedCircuitBreakerLayer;
    /// use breakerbox::Config;
    /// use tower::Layer;
    ///
    /// let layer = KeyedCircuitBreakerLayer::new("docs::keyed_get_ref", Config::default(), 64, |host: &String| host.clone());
    /// let svc = layer.layer(vec!["10.0.0.1:7000"]);
    /// assert_eq!(svc.get_ref(), &["10.0.0.1:7000"]);
    /// ```
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, to change: the breakers are untouched.
    ///
    /// ```
    /// use breakerbox::tower::KeyedCircuitBreakerLayer;
    /// use breakerbox::Config;
    /// use tower::Layer;
    ///
    /// let layer = KeyedCircuitBreakerLayer::new("docs::keyed_get_mut", Config::default(), 64, |host: &String| host.clone());
    /// let mut svc = layer.layer(vec!["10.0.0.1:7000"]);
    /// svc.get_mut().push("10.0.0.2:7000");
    /// assert_eq!(svc.get_ref(), &["10.0.0.1:7000", "10.0.0.2:7000"]);
    /// ```
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// The inner service, the breakers' guard taken off. The family lives on in the registry,
    /// the layer and its other services.
    ///
    /// ```
    /// use breakerbox::tower::KeyedCircuitBreakerLayer;
    /// use breakerbox::Config;
    /// use tower::Layer;
    ///
    /// let layer = KeyedCircuitBreakerLayer::new("docs::keyed_into_inner", Config::default(), 64, |host: &String| host.clone());
    /// let svc = layer.layer(vec!["10.0.0.1:7000"]);
    /// assert_eq!(svc.into_inner(), ["10.0.0.1:7000"]);
    /// ```
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S, F, C, Req, K> Service<Req> for KeyedCircuitBreakerService<S, F, C>
where
    S: Service<Req>,
    F: Fn(&Req) -> K,
    K: Hash + Eq + Display + Clone + Send + Sync + 'static,
    C: ClassifyResponse<S::Response, S::Error> + Clone,
{
    type Response = S::Response;
    type Error = BreakerError<S::Error>;
    type Future = ResponseFuture<S::Future, C>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // As for the unkeyed service: no permit before the request is known.
        self.inner.poll_ready(cx).map_err(BreakerError::Inner)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        let key = (self.key)(&request);
        let admission = self.family.breaker(&key).try_acquire_owned();
        respond(&mut self.inner, request, admission, &self.classifier)
    }
}

impl<S: fmt::Debug, F, C: fmt::Debug> fmt::Debug for KeyedCircuitBreakerService<S, F, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyedCircuitBreakerService")
            .field("inner", &self.inner)
            .field("family", &self.family)
            .field("classifier", &self.classifier)
            .finish_non_exhaustive()
    }
}
