//! [`KeyedCircuitBreakerLayer`]: one breaker per request key (an upstream host, say), bounded.

use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

use tower_layer::Layer;

use super::{DefaultClassifier, KeyedCircuitBreakerService};
use crate::keyed::Keyed;
use crate::{Breaker, Config};

/// A layer giving each request key its own breaker, at most `max_keys` of them: past that
/// the least recently used one is dropped, closed ones first and among them those with no
/// request in flight, so keys chosen by clients cannot grow memory. The family is registered in [`registry()`](crate::registry()) under
/// `name`, each breaker found by its key's `Display` text.
///
/// The key function returns an owned key (`SocketAddr`, `String`, a small enum); a key that
/// exists already is found without allocating beyond what the key function does.
///
/// ```
/// use breakerbox::tower::KeyedCircuitBreakerLayer;
/// use breakerbox::{registry, Config};
/// use tower::{service_fn, Layer, Service, ServiceExt};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// // Requests are upstream addresses here; the key is the request itself.
/// let layer = KeyedCircuitBreakerLayer::new("docs::upstreams", Config::default(), 64, |host: &String| {
///     host.clone()
/// });
/// let mut svc = layer.layer(service_fn(|_host: String| async { Ok::<_, std::io::Error>(http::StatusCode::OK) }));
/// let status = svc.ready().await.unwrap().call("10.0.0.1:7000".to_string()).await.unwrap();
/// assert_eq!(status, http::StatusCode::OK);
/// assert!(registry().get_keyed("docs::upstreams", "10.0.0.1:7000").is_some());
/// # });
/// ```
pub struct KeyedCircuitBreakerLayer<F, C = DefaultClassifier> {
    family: Arc<Keyed>,
    key: F,
    classifier: C,
}

impl<F> KeyedCircuitBreakerLayer<F> {
    /// A layer keying requests with `key`, each key's breaker configured with `config`.
    pub fn new(name: impl Into<Arc<str>>, config: Config, max_keys: usize, key: F) -> Self {
        let family = Arc::new(Keyed::new(name.into(), config, max_keys));
        Self {
            family: crate::registry().register_keyed(family),
            key,
            classifier: DefaultClassifier,
        }
    }
}

impl<F, C> KeyedCircuitBreakerLayer<F, C> {
    /// Takes `key`'s breaker out of the family (an upstream gone for good), as
    /// [`Registry::remove_keyed`](crate::registry::Registry::remove_keyed) does: the next request with
    /// that key gets a new breaker. The layer's services share the family.
    ///
    /// ```
    /// use breakerbox::tower::KeyedCircuitBreakerLayer;
    /// use breakerbox::{registry, Config};
    /// use tower::{service_fn, Layer, Service, ServiceExt};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let layer = KeyedCircuitBreakerLayer::new("docs::gone", Config::default(), 64, |host: &String| {
    ///     host.clone()
    /// });
    /// let mut svc = layer.layer(service_fn(|_host: String| async { Ok::<_, std::io::Error>(http::StatusCode::OK) }));
    /// svc.ready().await.unwrap().call("10.0.0.9:7000".to_string()).await.unwrap();
    /// let removed = layer.remove("10.0.0.9:7000").expect("created by the call");
    /// assert_eq!(removed.snapshot().calls, 1);
    /// assert!(registry().get_keyed("docs::gone", "10.0.0.9:7000").is_none());
    /// # });
    /// ```
    pub fn remove<Q>(&self, key: &Q) -> Option<Arc<Breaker>>
    where
        Q: ?Sized + Hash + Eq + ToOwned,
        Q::Owned: 'static,
    {
        self.family.remove(key)
    }

    /// The same layer, judging results with `classifier` instead.
    pub fn classify_with<D>(self, classifier: D) -> KeyedCircuitBreakerLayer<F, D> {
        KeyedCircuitBreakerLayer {
            family: self.family,
            key: self.key,
            classifier,
        }
    }
}

impl<F: Clone, C: Clone> Clone for KeyedCircuitBreakerLayer<F, C> {
    fn clone(&self) -> Self {
        Self {
            family: Arc::clone(&self.family),
            key: self.key.clone(),
            classifier: self.classifier.clone(),
        }
    }
}

impl<S, F: Clone, C: Clone> Layer<S> for KeyedCircuitBreakerLayer<F, C> {
    type Service = KeyedCircuitBreakerService<S, F, C>;

    fn layer(&self, inner: S) -> Self::Service {
        KeyedCircuitBreakerService {
            inner,
            family: Arc::clone(&self.family),
            key: self.key.clone(),
            classifier: self.classifier.clone(),
        }
    }
}

impl<F, C: fmt::Debug> fmt::Debug for KeyedCircuitBreakerLayer<F, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyedCircuitBreakerLayer")
            .field("family", &self.family)
            .field("classifier", &self.classifier)
            .finish_non_exhaustive()
    }
}
