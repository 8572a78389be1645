//! Waiting on a real process (a server, a sentinel, a cluster) for a state. Its time is its
//! own, not a clock the test holds: the wait asks for the state every `every`, for at most
//! `within`, and never waits for one event.

use std::time::{Duration, Instant};

/// Blocks until `done` holds, asking every `every`, for at most `within`; panics naming
/// `what` past that.
pub fn until(what: &str, within: Duration, every: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !done() {
        assert!(Instant::now() < deadline, "never happened: {what}");
        std::thread::sleep(every);
    }
}
