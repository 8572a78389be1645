//! The lines a `tracing` subscriber writes on this thread, for the tests that read the logs.
//!
//! `tracing` caches each callsite's interest and the maximum level process-wide, from the
//! subscribers alive when it builds them; two tests setting subscribers on two threads at
//! once would rebuild them under each other's feet. So the tests that read logs take turns:
//! one capture at a time in the binary, its subscriber's interest rebuilt when it starts.
//! The other tests set no subscriber.

use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tracing::subscriber::DefaultGuard;

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

/// A capture's turn: its subscriber is this thread's default until it drops.
pub struct Capturing {
    // Dropped first: the subscriber goes before the next capture may start.
    _subscriber: DefaultGuard,
    _turn: MutexGuard<'static, ()>,
}

/// Captures this thread's logs, without colours or times, until the guard drops; waits
/// while another test captures.
pub fn capture() -> (Captured, Capturing) {
    static TURN: Mutex<()> = Mutex::new(());
    // A test that failed while capturing leaves nothing behind for the next one.
    let turn = TURN.lock().unwrap_or_else(PoisonError::into_inner);
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .without_time()
        .finish();
    let subscriber = tracing::subscriber::set_default(subscriber);
    // A callsite that another thread registered as this subscriber arrived may have cached
    // the interest of the subscribers before it: ask every callsite again.
    tracing::callsite::rebuild_interest_cache();
    (
        captured,
        Capturing {
            _subscriber: subscriber,
            _turn: turn,
        },
    )
}
