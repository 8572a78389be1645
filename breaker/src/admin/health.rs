//! The health answer: up unless a critical breaker is OPEN.

use std::sync::Arc;

use serde::Serialize;

use crate::{registry, registry::Registry, State};

/// Whether the service is healthy as its breakers see it: `UP`, or `CIRCUIT_OPEN` naming the
/// critical breakers that are OPEN or forced open (Spring's `CIRCUIT_OPEN`). A HALF_OPEN
/// breaker is up: it is trying. An OPEN whose period has passed reads OPEN until its next
/// call half-opens it (OPEN ends lazily).
///
/// As JSON: `{"status": "UP", "open": []}` or `{"status": "CIRCUIT_OPEN", "open":
/// ["app::stock"]}`; a keyed family's member is named `family[key]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Health {
    status: &'static str,
    open: Vec<String>,
}

impl Health {
    /// Whether no critical breaker is open.
    pub fn is_up(&self) -> bool {
        self.open.is_empty()
    }

    /// The critical breakers that are open, by name.
    pub fn open(&self) -> &[String] {
        &self.open
    }
}

/// The critical breakers of a router: those named, or every breaker.
#[derive(Clone, Debug, Default)]
pub(crate) struct Critical(pub(crate) Option<Arc<[String]>>);

/// The health of [`registry()`]'s breakers, for a service's own health endpoint: a name in
/// `critical` is a breaker's, or a keyed family's (any member open counts); an empty
/// `critical` makes every breaker critical.
///
/// ```
/// use std::sync::Arc;
/// use breakerbox::{admin, registry, Breaker, Config};
///
/// let stock = registry().register(Arc::new(Breaker::new("docs::health_stock", Config::default())));
/// registry().register(Arc::new(Breaker::new("docs::health_search", Config::default())));
/// assert!(admin::health(&["docs::health_stock"]).is_up());
/// stock.force_open();
/// let health = admin::health(&["docs::health_stock", "docs::health_search"]);
/// assert_eq!((health.is_up(), health.open()), (false, &["docs::health_stock".to_string()][..]));
/// assert!(admin::health(&["docs::health_search"]).is_up());
/// ```
pub fn health(critical: &[&str]) -> Health {
    health_of(registry(), critical)
}

/// [`health`] of the breakers of `registry`.
pub fn health_of(registry: &Registry, critical: &[&str]) -> Health {
    let open: Vec<String> = registry
        .list()
        .into_iter()
        .filter(|e| critical.is_empty() || critical.contains(&e.name()))
        .filter(|e| matches!(e.breaker().state(), State::Open | State::ForcedOpen))
        .map(|e| e.breaker().name().to_owned())
        .collect();
    Health {
        status: if open.is_empty() {
            "UP"
        } else {
            "CIRCUIT_OPEN"
        },
        open,
    }
}
