//! [`BreakerError`], the error of a guarded service.

use std::fmt;

use crate::Rejected;

/// The error of a guarded service: the breaker rejected the request, or the inner service
/// failed.
///
/// ```
/// use std::sync::Arc;
/// use breakerbox::tower::{BreakerError, CircuitBreakerLayer};
/// use breakerbox::{Breaker, Config};
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
