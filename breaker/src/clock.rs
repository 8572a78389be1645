//! Time sources: the default monotonic clock and a manual clock for tests.
//!
//! A breaker reads the clock only where time matters: to expire OPEN, to time slow calls and
//! to place outcomes in a time window. With a count window and no slow-call threshold, the
//! closed-state path never reads it.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A monotonic time source.
///
/// Implement it to drive breakers from your own notion of time; [`ManualClock`] is the one
/// tests usually want.
///
/// ```
/// use std::time::Instant;
/// use breaker::clock::Clock;
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
/// `std::time::Instant`, or, with the `test-util` feature, tokio's clock, so that
/// `tokio::time::pause()` and `tokio::time::advance()` drive every breaker in a test.
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
            Instant::now()
        }
    }
}

/// A clock that moves only when told to. Clones share one time.
///
/// ```
/// use std::time::Duration;
/// use breaker::clock::{Clock, ManualClock};
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

/// The clock a breaker holds: the default one without indirection, or a user's.
#[derive(Clone, Debug)]
pub(crate) enum ClockSource {
    Default,
    Custom(Arc<dyn Clock>),
}

impl ClockSource {
    #[inline]
    pub(crate) fn now(&self) -> Instant {
        match self {
            ClockSource::Default => DefaultClock.now(),
            ClockSource::Custom(clock) => clock.now(),
        }
    }
}

/// The current time, read from the clock at most once and only if asked for.
pub(crate) struct LazyNow<'a> {
    clock: &'a ClockSource,
    at: Option<Instant>,
}

impl<'a> LazyNow<'a> {
    pub(crate) fn new(clock: &'a ClockSource) -> Self {
        Self { clock, at: None }
    }

    pub(crate) fn get(&mut self) -> Instant {
        *self.at.get_or_insert_with(|| self.clock.now())
    }
}
