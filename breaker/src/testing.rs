//! Helpers for tests of code that uses breakers (feature `test-util`): a breaker on a
//! [`ManualClock`], and calls that fail on purpose to open it.
//!
//! They drive a breaker only through its public surface, as a caller would, and panic with
//! a message naming the breaker when it does not do what they ask of it, as an assertion
//! does.
//!
//! ```
//! use breakerbox::testing::{manual, trip};
//! use breakerbox::{Config, State};
//!
//! let config = Config::builder().count_window(4).min_calls(4).build().unwrap();
//! let (b, clock) = manual("libraryd", config);
//! assert_eq!(trip(&b), 4);
//! assert_eq!(b.state(), State::Open);
//! clock.advance(b.config().open_for());
//! assert!(b.try_acquire().is_ok()); // a probe
//! assert_eq!(b.state(), State::HalfOpen);
//! ```

use crate::clock::ManualClock;
use crate::{Breaker, Config, State};

/// The most failures [`trip`] makes before it gives up on a breaker that stays CLOSED.
const TRIP_LIMIT: usize = 1_000_000;

/// A breaker named `name` on a new [`ManualClock`], and the clock, which moves only when the
/// test advances it.
///
/// ```
/// use std::time::Duration;
/// use breakerbox::testing::manual;
/// use breakerbox::Config;
///
/// let (b, clock) = manual("libraryd", Config::default());
/// clock.advance(Duration::from_secs(5));
/// assert_eq!(clock.elapsed(), Duration::from_secs(5));
/// assert_eq!(b.name(), "libraryd");
/// ```
pub fn manual(name: &str, config: Config) -> (Breaker, ManualClock) {
    let clock = ManualClock::new();
    (Breaker::with_clock(name, config, clock.clone()), clock)
}

/// Fails calls of `b` while it is CLOSED, and returns how many it failed; the breaker is
/// then OPEN.
///
/// # Panics
///
/// If a call is rejected while the breaker is CLOSED (its bulkhead is full), if it is still
/// CLOSED after a million failures, or if it leaves CLOSED for another state than OPEN.
///
/// ```
/// use breakerbox::testing::{fail_n, manual, trip};
/// use breakerbox::{Config, State};
///
/// let config = Config::builder().count_window(10).min_calls(5).build().unwrap();
/// let (b, _clock) = manual("libraryd", config);
/// fail_n(&b, 2);
/// assert_eq!(trip(&b), 3); // the fifth failure completes the minimum
/// assert_eq!(b.state(), State::Open);
/// assert_eq!(trip(&b), 0); // already open
/// ```
pub fn trip(b: &Breaker) -> usize {
    let mut failed = 0;
    while b.state() == State::Closed {
        assert!(
            failed < TRIP_LIMIT,
            "breaker '{}' is still closed after {failed} failures",
            b.name()
        );
        match b.try_acquire() {
            Ok(permit) => permit.failure(),
            Err(rejected) => panic!("tripping: {rejected}"),
        }
        failed += 1;
    }
    assert_eq!(b.state(), State::Open, "breaker '{}' tripped", b.name());
    failed
}

/// Fails `n` calls of `b`, each one admitted.
///
/// # Panics
///
/// If `b` rejects one of them, naming which.
///
/// ```
/// use breakerbox::testing::{fail_n, manual};
/// use breakerbox::{Config, State};
///
/// let config = Config::builder().count_window(4).min_calls(4).build().unwrap();
/// let (b, _clock) = manual("libraryd", config);
/// fail_n(&b, 3);
/// assert_eq!((b.state(), b.snapshot().failures), (State::Closed, 3));
/// fail_n(&b, 1);
/// assert_eq!(b.state(), State::Open);
/// ```
pub fn fail_n(b: &Breaker, n: usize) {
    for i in 0..n {
        match b.try_acquire() {
            Ok(permit) => permit.failure(),
            Err(rejected) => panic!("failure {} of {n}: {rejected}", i + 1),
        }
    }
}
