//! The parts every registry is born with, so that they hear each breaker from its joining:
//! the metrics' transition counts (a breaker that opened before the first scrape is counted
//! all the same) and the admin journal. The one place the features are wired to a registry.

use std::any::Any;
use std::sync::Arc;

use super::hooks::Watch;

type Born = (Arc<dyn Any + Send + Sync>, Arc<dyn Watch>);

/// The born parts, for the features compiled in.
pub(super) fn parts() -> Vec<Born> {
    vec![
        #[cfg(feature = "prometheus")]
        part(crate::metrics::Transitions::default()),
        #[cfg(feature = "admin")]
        part(crate::admin::Journal::default()),
    ]
}

#[allow(dead_code)]
fn part<T: Watch>(state: T) -> Born {
    let state = Arc::new(state);
    (state.clone(), state)
}
