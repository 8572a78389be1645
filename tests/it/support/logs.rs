//! The lines a `tracing` subscriber writes on this thread, for the tests that read the logs.
//!
//! `tracing` caches each callsite's interest and the maximum level process-wide, from the
//! subscribers alive when it builds them. A test on another thread that reaches a callsite
//! for the first time while a capture starts may cache that callsite's interest as it was
//! before the capture's subscriber, after the capture asked every callsite again: the
//! capture would then miss that callsite's lines. So a capture runs in a process of its own
//! ([`process::alone`]), where no other test runs. The other tests set no subscriber.

use std::io::Write;
use std::sync::{Arc, Mutex};

use tracing::subscriber::DefaultGuard;

use super::process;

/// What the subscriber wrote, shared with it.
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    /// The lines written so far.
    pub fn lines(&self) -> Vec<String> {
        let text = String::from_utf8(self.0.lock().unwrap().clone()).unwrap();
        text.lines().map(str::to_owned).collect()
    }
}

/// A capture: its subscriber is this thread's default until it drops.
pub struct Capturing {
    _subscriber: DefaultGuard,
}

/// Captures this thread's logs, without colours or times, until the guard drops, for the
/// test at `test` (`module_path!()` and its name). In the binary's own process it runs that
/// test again in a process of its own and answers `None` once it passed (the caller
/// returns); there it answers the capture.
pub fn capture(test: &str) -> Option<(Captured, Capturing)> {
    if !process::alone(test) {
        return None;
    }
    // The registry's first access in a process warns of the binary's functions that share a
    // name (`tests/shared_name_warning.rs`): made before the subscriber, not in the lines.
    breakerbox::registry();
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .without_time()
        .finish();
    let subscriber = tracing::subscriber::set_default(subscriber);
    // A callsite reached before the subscriber (by this test's earlier code) cached the
    // interest of no subscriber: ask every callsite again.
    tracing::callsite::rebuild_interest_cache();
    Some((
        captured,
        Capturing {
            _subscriber: subscriber,
        },
    ))
}
