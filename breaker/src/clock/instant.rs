//! An instant of a breaker's own clock, as a type of its own.

use std::ops::{Add, Sub};
use std::time::{Duration, Instant};

/// An instant of a breaker's clock, read with [`Breaker::now`](crate::Breaker::now) and moved
/// with `+ Duration`: what [`Breaker::open_until`](crate::Breaker::open_until) takes.
///
/// A type of its own, so that an instant of another clock cannot be passed where the
/// breaker's is meant: on a [`ManualClock`](super::ManualClock),
/// `std::time::Instant::now() + d` is an instant of the wall clock, not of the breaker's.
///
/// ```
/// use std::time::Duration;
/// use breakerbox::clock::ManualClock;
/// use breakerbox::{Breaker, Config};
///
/// let clock = ManualClock::new();
/// let b = Breaker::with_clock("libraryd", Config::default(), clock.clone());
/// let start = b.now();
/// clock.advance(Duration::from_secs(3));
/// assert_eq!(b.now() - start, Duration::from_secs(3));
/// assert!(start + Duration::from_secs(3) == b.now());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClockInstant(Instant);

impl ClockInstant {
    /// The instant a clock read.
    pub(crate) const fn of(instant: Instant) -> Self {
        Self(instant)
    }

    /// The clock's reading this instant is.
    pub(crate) const fn reading(self) -> Instant {
        self.0
    }

    /// The time from `earlier` to this instant, or zero if `earlier` is later.
    pub fn saturating_duration_since(self, earlier: ClockInstant) -> Duration {
        self.0.saturating_duration_since(earlier.0)
    }
}

/// `d` later; an instant past what the clock can tell stays at the last it can.
impl Add<Duration> for ClockInstant {
    type Output = ClockInstant;

    fn add(self, d: Duration) -> ClockInstant {
        ClockInstant(super::later(self.0, d))
    }
}

/// `d` earlier; an instant before what the clock can tell stays at the first it can.
impl Sub<Duration> for ClockInstant {
    type Output = ClockInstant;

    fn sub(self, d: Duration) -> ClockInstant {
        ClockInstant(self.0.checked_sub(d).unwrap_or(self.0))
    }
}

/// The time between two instants of the clock, zero if `earlier` is later.
impl Sub<ClockInstant> for ClockInstant {
    type Output = Duration;

    fn sub(self, earlier: ClockInstant) -> Duration {
        self.saturating_duration_since(earlier)
    }
}
