//! The synchronization of the breaker's concurrent paths: std's, or loom's when the paths are
//! model checked (`RUSTFLAGS="--cfg loom"`, see `tests/loom.rs`).
//!
//! Locks ignore poisoning, as tokio's do: every critical section of the crate leaves its data
//! consistent before anything in it can panic (a panicking listener or classifier runs with no
//! lock held), so a lock poisoned by a panic elsewhere guards data as good as ever.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::{
    atomic::{AtomicU32, AtomicU64, Ordering},
    OnceLock,
};

/// Defines `Mutex` and `RwLock` over the locks of the module in scope as `imp`, ignoring
/// poisoning.
macro_rules! poisonless_locks {
    ($($constness:ident)?) => {
        #[allow(unused_imports)] // the process-wide locks' guards are never named
        pub(crate) use imp::{MutexGuard, RwLockReadGuard, RwLockWriteGuard};

        /// A mutex whose `lock` ignores poisoning.
        pub(crate) struct Mutex<T: ?Sized>(imp::Mutex<T>);

        impl<T: ?Sized + std::fmt::Debug> std::fmt::Debug for Mutex<T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }

        impl<T: Default> Default for Mutex<T> {
            fn default() -> Self {
                Self::new(T::default())
            }
        }

        impl<T> Mutex<T> {
            pub(crate) $($constness)? fn new(value: T) -> Self {
                Self(imp::Mutex::new(value))
            }
        }

        impl<T: ?Sized> Mutex<T> {
            pub(crate) fn lock(&self) -> imp::MutexGuard<'_, T> {
                self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
            }
        }

        /// A reader-writer lock whose `read` and `write` ignore poisoning.
        pub(crate) struct RwLock<T: ?Sized>(imp::RwLock<T>);

        impl<T: ?Sized + std::fmt::Debug> std::fmt::Debug for RwLock<T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }

        impl<T: Default> Default for RwLock<T> {
            fn default() -> Self {
                Self::new(T::default())
            }
        }

        impl<T> RwLock<T> {
            pub(crate) $($constness)? fn new(value: T) -> Self {
                Self(imp::RwLock::new(value))
            }
        }

        impl<T: ?Sized> RwLock<T> {
            pub(crate) fn read(&self) -> imp::RwLockReadGuard<'_, T> {
                self.0.read().unwrap_or_else(std::sync::PoisonError::into_inner)
            }

            pub(crate) fn write(&self) -> imp::RwLockWriteGuard<'_, T> {
                self.0.write().unwrap_or_else(std::sync::PoisonError::into_inner)
            }
        }
    };
}

#[cfg(loom)]
mod checked {
    use loom::sync as imp;
    poisonless_locks!();
}
#[cfg(not(loom))]
mod checked {
    use std::sync as imp;
    poisonless_locks!(const);
}
/// The locks of the paths loom checks.
pub(crate) use checked::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// The locks of process-wide state that loom never sees (statics, the registry's maps): std's
/// under loom too, so that they can be built in a `static`.
pub(crate) mod process {
    // The mutex serves the `overrides`, `prometheus` and `recording` features only.
    #![allow(dead_code)]
    use std::sync as imp;
    poisonless_locks!(const);
}

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
        let _initializing = self.init.lock();
        let value = self.value.get_or_init(init);
        self.ready.store(true, Ordering::Release);
        value
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::path::{Path, PathBuf};

    /// Every `.rs` file under `dir`, at any depth.
    fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// Whether a line of code (not a comment, whose examples may use std's locks) takes a
    /// lock of its own or recovers a poisoned one by hand.
    fn handles_poison(line: &str) -> bool {
        let code = line.trim_start();
        !code.starts_with("//")
            && ((code.contains("std::sync") && (code.contains("Mutex") || code.contains("RwLock")))
                || code.contains("PoisonError")
                || code.contains("poison")
                || (code.contains("unwrap_or_else(") && code.contains(".into_inner()"))
                || [".lock()", ".read()", ".write()"].iter().any(|take| {
                    [".unwrap()", ".expect("]
                        .iter()
                        .any(|then| code.contains(&format!("{take}{then}")))
                }))
    }

    #[test]
    fn poison_is_handled_in_sync_rs_alone() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        sources(&src, &mut files);
        assert!(
            files.len() > 20,
            "the crate's sources under {}",
            src.display()
        );
        let mut found = Vec::new();
        for file in files.iter().filter(|f| !f.ends_with("sync.rs")) {
            let text = std::fs::read_to_string(file).unwrap();
            for (i, line) in text.lines().enumerate() {
                if handles_poison(line) {
                    let file = file.strip_prefix(&src).unwrap().display();
                    found.push(format!("{file}:{}: {}", i + 1, line.trim()));
                }
            }
        }
        assert_eq!(found, Vec::<String>::new(), "use crate::sync's locks");
    }

    #[test]
    fn a_lock_of_its_own_or_poison_recovered_by_hand_is_found() {
        for line in [
            "static ALL: std::sync::Mutex<Vec<u8>> = Mutex::new(Vec::new());",
            "use std::sync::{Arc, RwLock};",
            "let all = ALL.lock().unwrap_or_else(|p| p.into_inner());",
            "let all = ALL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);",
            "let all = ALL.write().unwrap();",
            "let all = ALL.read().expect(\"not poisoned\");",
        ] {
            assert!(handles_poison(line), "{line}");
        }
        for line in [
            "use crate::sync::process::Mutex;",
            "let mut all = ALL.lock();",
            "/// let log = std::sync::Mutex::new(Vec::new()); log.lock().unwrap();",
            "use std::sync::{Arc, Weak};",
        ] {
            assert!(!handles_poison(line), "{line}");
        }
    }
}
