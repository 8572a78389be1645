//! Time sources: the default clock (the calibrated time-stamp counter in production, tokio's
//! clock with `test-util`) and a manual clock for tests.
//!
//! A breaker reads the clock only where time matters: to expire OPEN, to time slow calls and
//! to place outcomes in a time window. With a count window and no slow-call threshold, the
//! closed-state path never reads it.

mod coarse;
mod instant;

pub(crate) use coarse::CoarsePeriod;
pub use instant::ClockInstant;

use std::any::Any;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// A monotonic time source.
///
/// Implement it to drive breakers from your own notion of time; [`ManualClock`] is the one
/// tests usually want.
///
/// ```
/// use std::time::Instant;
/// use breakerbox::clock::Clock;
///
/// #[derive(Debug)]
/// struct Wall;
///
/// impl Clock for Wall {
///     fn now(&self) -> Instant {
///         Instant::now()
///     }
/// }
/// let before = Instant::now();
/// assert!(Wall.now() >= before);
/// ```
pub trait Clock: Send + Sync + fmt::Debug + 'static {
    /// The current instant. It must never go backwards.
    fn now(&self) -> Instant;
}

/// The clock a breaker uses unless told otherwise.
///
/// [`MonotonicClock`] in production. With the `test-util` feature it is tokio's clock
/// instead, so that `tokio::time::pause()` and `tokio::time::advance()` drive every breaker in
/// a test.
#[derive(Clone, Copy, Debug, Default)]
pub struct DefaultClock;

impl Clock for DefaultClock {
    #[inline]
    fn now(&self) -> Instant {
        #[cfg(feature = "test-util")]
        {
            tokio::time::Instant::now().into_std()
        }
        #[cfg(not(feature = "test-util"))]
        {
            MonotonicClock.now()
        }
    }
}

/// The production clock: the CPU's time-stamp counter, calibrated against the monotonic
/// clock (through `quanta`, which falls back to the monotonic clock where the counter is
/// not reliable). A read costs a few nanoseconds where `Instant::now()` costs tens.
///
/// On Linux an open breaker on this clock rejects on the kernel's coarse monotonic clock
/// (`CLOCK_MONOTONIC_COARSE`, cheaper still, one timer tick of 1 to 10 ms behind) while it is
/// more than 20 ms and a 1024th of the period (room for NTP to slew one clock and not
/// the other) from the end of its open period, and reads this clock near the end, so the
/// period ends exactly when this clock says. The time left a rejection tells is then
/// never less than the time truly left, and at most one coarse tick and a millisecond more
/// (the clocks are paired by a reading of one between two of the other, less than a
/// millisecond apart; a thread preempted in between pairs them again).
///
/// It is [`DefaultClock`] without the `test-util` feature; name it to keep it with
/// `test-util` on. The first reading in a process calibrates the counter, which takes up to
/// a fifth of a second.
///
/// ```
/// use breakerbox::clock::{Clock, MonotonicClock};
///
/// let a = MonotonicClock.now();
/// assert!(MonotonicClock.now() >= a);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct MonotonicClock;

impl Clock for MonotonicClock {
    #[inline]
    fn now(&self) -> Instant {
        let counter = Counter::get();
        counter.origin + Duration::from_nanos(counter.nanos())
    }
}

/// The calibrated time-stamp counter, and the `Instant` its zero stands for.
struct Counter {
    clock: quanta::Clock,
    start: u64,
    origin: Instant,
}

impl Counter {
    #[inline]
    fn get() -> &'static Counter {
        static COUNTER: OnceLock<Counter> = OnceLock::new();
        COUNTER.get_or_init(|| {
            let clock = quanta::Clock::new();
            Counter {
                start: clock.raw(),
                origin: Instant::now(),
                clock,
            }
        })
    }

    /// Nanoseconds since `origin`.
    #[inline]
    fn nanos(&self) -> u64 {
        self.clock.delta_as_nanos(self.start, self.clock.raw())
    }
}

/// A clock that moves only when told to. Clones share one time.
///
/// ```
/// use std::time::Duration;
/// use breakerbox::clock::{Clock, ManualClock};
///
/// let clock = ManualClock::new();
/// let start = clock.now();
/// let shared = clock.clone();
/// shared.advance(Duration::from_secs(5));
/// assert_eq!(clock.now() - start, Duration::from_secs(5));
/// ```
#[derive(Clone, Debug)]
pub struct ManualClock {
    inner: Arc<ManualInner>,
}

#[derive(Debug)]
struct ManualInner {
    origin: Instant,
    elapsed_nanos: AtomicU64,
}

impl ManualClock {
    /// A clock standing at the moment of its creation.
    pub fn new() -> Self {
        Self {
            inner: Arc::new(ManualInner {
                origin: Instant::now(),
                elapsed_nanos: AtomicU64::new(0),
            }),
        }
    }

    /// Moves the time forward by `by` (saturating after about 584 years).
    pub fn advance(&self, by: Duration) {
        let by = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
        let _ = self
            .inner
            .elapsed_nanos
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |now| {
                Some(now.saturating_add(by))
            });
    }

    /// Time advanced since the clock was created.
    pub fn elapsed(&self) -> Duration {
        Duration::from_nanos(self.inner.elapsed_nanos.load(Ordering::Acquire))
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.inner.origin + self.elapsed()
    }
}

/// The clock a breaker holds: the counter or tokio's without indirection, or a user's.
///
/// Besides `Instant`s, it tells time in *ticks*: nanoseconds since an origin of its own, a
/// `u64` that fits in an atomic, so that OPEN can reject without the lock. For every
/// source, `now() == origin + ticks()` for one reading.
#[derive(Clone, Debug)]
pub(crate) enum ClockSource {
    Counter,
    /// Tokio's clock may go back to before a breaker was made (a paused runtime built
    /// earlier); instants before the origin have no ticks, and the lock-free paths then step
    /// aside.
    #[cfg(feature = "test-util")]
    Tokio {
        origin: Instant,
    },
    Custom {
        clock: Arc<dyn Clock>,
        origin: Instant,
    },
}

impl ClockSource {
    pub(crate) fn default_clock() -> Self {
        #[cfg(feature = "test-util")]
        {
            ClockSource::Tokio {
                origin: DefaultClock.now(),
            }
        }
        #[cfg(not(feature = "test-util"))]
        {
            ClockSource::Counter
        }
    }

    /// A user's clock; [`MonotonicClock`] is recognised and read without indirection.
    pub(crate) fn custom<C: Clock>(clock: C) -> Self {
        if (&clock as &dyn Any).is::<MonotonicClock>() {
            return ClockSource::Counter;
        }
        let origin = clock.now();
        ClockSource::Custom {
            clock: Arc::new(clock),
            origin,
        }
    }

    /// The time a breaker is made at. The counter is read through `Instant` here, so that
    /// making a breaker never waits for its calibration.
    pub(crate) fn origin_now(&self) -> Instant {
        match self {
            ClockSource::Counter => Instant::now(),
            _ => self.now(),
        }
    }

    #[inline]
    pub(crate) fn now(&self) -> Instant {
        match self {
            ClockSource::Counter => MonotonicClock.now(),
            #[cfg(feature = "test-util")]
            ClockSource::Tokio { .. } => DefaultClock.now(),
            ClockSource::Custom { clock, .. } => clock.now(),
        }
    }

    /// The current time in ticks, or `None` when it is before the origin.
    #[inline]
    pub(crate) fn ticks(&self) -> Option<u64> {
        match self {
            ClockSource::Counter => Some(Counter::get().nanos()),
            _ => self.ticks_of(self.now()),
        }
    }

    /// The open period `[from, until)` in ticks, on the coarse clock: only for the
    /// production clock, which has a coarse twin.
    ///
    /// Read when a breaker opens. The counter's pairing is a function of its own, so that a
    /// clock without a coarse twin pays only the test of its kind.
    #[inline]
    pub(crate) fn coarse_period(&self, from: u64, until: u64) -> Option<CoarsePeriod> {
        match self {
            ClockSource::Counter => Self::counter_coarse_period(from, until),
            _ => None,
        }
    }

    #[inline(never)]
    fn counter_coarse_period(from: u64, until: u64) -> Option<CoarsePeriod> {
        let counter = Counter::get();
        CoarsePeriod::paired(from, until, || counter.nanos())
    }

    /// The nanoseconds left in a [`CoarsePeriod`] if the coarse clock is sure it has not
    /// ended (see `coarse::left`).
    #[inline(always)]
    pub(crate) fn coarse_left(from: impl FnOnce() -> u64, until: u64) -> Option<u64> {
        coarse::left(from, until)
    }

    /// `at` in ticks, or `None` when it is before the origin or too far after it.
    pub(crate) fn ticks_of(&self, at: Instant) -> Option<u64> {
        let origin = match self {
            ClockSource::Counter => Counter::get().origin,
            #[cfg(feature = "test-util")]
            ClockSource::Tokio { origin } => *origin,
            ClockSource::Custom { origin, .. } => *origin,
        };
        let since = at.checked_duration_since(origin)?;
        u64::try_from(since.as_nanos()).ok()
    }
}

/// The current time, read from the clock at most once and only if asked for, as an
/// `Instant` or in ticks.
pub(crate) struct LazyNow<'a> {
    clock: &'a ClockSource,
    at: Option<Instant>,
    ticks: Option<u64>,
}

impl<'a> LazyNow<'a> {
    pub(crate) fn new(clock: &'a ClockSource) -> Self {
        Self {
            clock,
            at: None,
            ticks: None,
        }
    }

    /// A time already read.
    pub(crate) fn at(clock: &'a ClockSource, at: Instant) -> Self {
        Self {
            clock,
            at: Some(at),
            ticks: None,
        }
    }

    pub(crate) fn get(&mut self) -> Instant {
        if let Some(at) = self.at {
            return at;
        }
        let at = match (self.clock, self.ticks) {
            (ClockSource::Counter, Some(ticks)) => {
                Counter::get().origin + Duration::from_nanos(ticks)
            }
            _ => self.clock.now(),
        };
        self.at = Some(at);
        at
    }

    /// A time already known both ways: `at`, which is `ticks` after the clock's origin.
    #[cfg(feature = "recording")]
    pub(crate) fn given(clock: &'a ClockSource, at: Instant, ticks: u64) -> Self {
        debug_assert_eq!(clock.ticks_of(at), Some(ticks));
        Self {
            clock,
            at: Some(at),
            ticks: Some(ticks),
        }
    }

    /// The period `[from, until)` in ticks on the coarse clock, if the clock has a coarse
    /// twin (see [`ClockSource::coarse_period`]).
    pub(crate) fn coarse_period(&self, from: u64, until: u64) -> Option<CoarsePeriod> {
        self.clock.coarse_period(from, until)
    }

    /// The time in ticks; an instant before the clock's origin counts as its origin.
    pub(crate) fn ticks(&mut self) -> u64 {
        if let Some(ticks) = self.ticks {
            return ticks;
        }
        let ticks = match (self.clock, self.at) {
            (ClockSource::Counter, None) => Counter::get().nanos(),
            _ => {
                let at = self.get();
                self.clock.ticks_of(at).unwrap_or(0)
            }
        };
        self.ticks = Some(ticks);
        ticks
    }
}

/// The farthest a deadline is set: thirty years, as tokio's timers do. Nothing waits longer.
#[cfg_attr(not(feature = "fleet"), allow(dead_code))]
pub(crate) const FAR: Duration = Duration::from_secs(30 * 365 * 24 * 3600);

/// `at + by`, never past [`FAR`] from `at`: an open period or a wait of any length, up to
/// `Duration::MAX`, is a deadline and never an overflow.
#[cfg_attr(not(feature = "fleet"), allow(dead_code))]
pub(crate) fn later(at: Instant, by: Duration) -> Instant {
    at.checked_add(by.min(FAR)).unwrap_or(at)
}

#[cfg(test)]
mod later_tests {
    use super::*;

    #[test]
    fn a_deadline_of_any_length_saturates_at_thirty_years() {
        let at = Instant::now();
        assert_eq!(later(at, Duration::MAX), at + FAR);
        assert_eq!(later(at, FAR + Duration::from_nanos(1)), at + FAR);
        assert_eq!(
            later(at, Duration::from_secs(3)),
            at + Duration::from_secs(3)
        );
    }
}
