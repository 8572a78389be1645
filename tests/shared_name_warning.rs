//! Two annotated functions sharing a breaker's name with different configurations: the first
//! in source order is used, and the other logs a warning when the registry first registers
//! them all.
//!
//! Alone in its test binary, outside `it`: the warning is logged once in a process, at the
//! registry's first access, and this test must be that access, with its subscriber set. In
//! a binary of other tests any of them may touch the registry first, on another thread.

use std::sync::Arc;

use breakerbox::{circuit_breaker, registry, Classify, Outcome, Rejected};

/// The downstream's error: every one a failure.
#[derive(Debug)]
struct Down;

impl Classify for Down {
    fn classify(&self) -> Outcome {
        Outcome::Failure
    }
}

impl From<Rejected> for Down {
    fn from(_: Rejected) -> Self {
        Down
    }
}

/// Counts the warnings logged on this thread.
struct Warnings(Arc<std::sync::atomic::AtomicUsize>);

impl tracing::Subscriber for Warnings {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        if *event.metadata().level() == tracing::Level::WARN {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[circuit_breaker(name = "catalog", window = 10)]
async fn catalog_read() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(name = "catalog", window = 10)]
async fn catalog_list() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(name = "catalog", window = 30)]
async fn catalog_write() -> Result<(), Down> {
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_shared_name_with_a_different_config_logs_a_warning_at_boot() {
    let warnings = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let _guard = tracing::subscriber::set_default(Warnings(warnings.clone()));
    let b = registry()
        .get("catalog")
        .expect("registered at the first access");
    assert_eq!(warnings.load(std::sync::atomic::Ordering::SeqCst), 1);
    // The first function in source order configures it, whatever order the linker chose.
    assert_eq!(b.config().window(), breakerbox::config::Window::Count(10));
    catalog_read().await.unwrap();
    catalog_list().await.unwrap();
    catalog_write().await.unwrap();
    assert_eq!(warnings.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(b.snapshot().calls, 3);
}
