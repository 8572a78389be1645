//! The synchronization of the breaker's concurrent paths: std's, or loom's when the paths are
//! model checked (`RUSTFLAGS="--cfg loom"`, see `tests/loom.rs`).

#[cfg(loom)]
pub(crate) use loom::sync::{
    atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering},
    Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
};
#[cfg(not(loom))]
pub(crate) use std::sync::{
    atomic::{AtomicU32, AtomicU64, Ordering},
    Mutex, MutexGuard, OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard,
};

/// std's `OnceLock` publishes its value by synchronization loom does not see, so the loom
/// atomics inside it would look unsynchronized to other threads: this one publishes the
/// value by a loom mutex and flag.
#[cfg(loom)]
pub(crate) struct OnceLock<T> {
    value: std::sync::OnceLock<T>,
    init: Mutex<()>,
    ready: AtomicBool,
}

#[cfg(loom)]
impl<T> OnceLock<T> {
    pub(crate) fn new() -> Self {
        Self {
            value: std::sync::OnceLock::new(),
            init: Mutex::new(()),
            ready: AtomicBool::new(false),
        }
    }

    pub(crate) fn get(&self) -> Option<&T> {
        if self.ready.load(Ordering::Acquire) {
            self.value.get()
        } else {
            None
        }
    }

    pub(crate) fn get_or_init(&self, init: impl FnOnce() -> T) -> &T {
        let _initializing = self.init.lock().unwrap();
        let value = self.value.get_or_init(init);
        self.ready.store(true, Ordering::Release);
        value
    }
}
