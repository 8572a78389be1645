//! The synchronization of the breaker's concurrent paths: std's, or loom's when the paths are
//! model checked (`RUSTFLAGS="--cfg loom"`, see `tests/loom.rs`).

#[cfg(loom)]
pub(crate) use loom::sync::{
    atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering},
    Mutex, MutexGuard,
};
#[cfg(not(loom))]
pub(crate) use std::sync::{
    atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering},
    Mutex, MutexGuard,
};
