//! [`CircuitBreakerLayer`], one breaker shared by every service it makes.

use std::fmt;
use std::sync::Arc;

use tower_layer::Layer;

use super::{CircuitBreakerService, DefaultClassifier};
use crate::Breaker;

/// Guards services with one shared [`Breaker`].
///
/// Every service made by [`layer`](Layer::layer) uses the same breaker:
///
/// ```
/// use std::sync::Arc;
/// use breakerbox::tower::CircuitBreakerLayer;
/// use breakerbox::{Breaker, Config};
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
    /// use breakerbox::tower::CircuitBreakerLayer;
    /// use breakerbox::{Breaker, Config, Outcome};
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
