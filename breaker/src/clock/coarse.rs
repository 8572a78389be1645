//! The kernel's coarse monotonic clock: how OPEN rejects without reading the time-stamp
//! counter.
//!
//! On Linux, `CLOCK_MONOTONIC_COARSE` is `CLOCK_MONOTONIC` as of the kernel's last timer
//! tick, read from the vDSO's memory without `rdtsc`, which is slow in a virtual machine. It
//! is never ahead of `CLOCK_MONOTONIC` and trails it by about one tick (1 to 10 ms: the
//! kernel's timer runs at 100 to 1000 Hz). So a coarse reading more than [`MARGIN`] (two
//! ticks of the slowest timer) before the end of an open period proves that the period has
//! not ended; closer to the end the breaker reads its precise clock, and the deadline is as
//! exact as before.
//!
//! The two clocks are paired with one reading of each when the breaker opens, and may then
//! drift apart: the time-stamp counter is not slewed by NTP, `CLOCK_MONOTONIC` is, by at
//! most 500 parts per million. So the coarse clock also leaves to the precise one the last
//! 1024th of a period ([`DRIFT_SHIFT`]), more than the clocks can drift apart within it.
//!
//! Only the production clock ([`MonotonicClock`](super::MonotonicClock)) has a coarse twin:
//! a period told in its ticks is moved into the coarse clock's nanoseconds with one reading
//! of each clock, when the breaker opens. Elsewhere (other platforms, other clocks) there is
//! no coarse period and OPEN reads the breaker's own clock.

/// How far before the end of a period a coarse reading must be to prove the period has not
/// ended: two ticks of a 100 Hz timer.
const MARGIN: u64 = 20_000_000;

/// The part of a period's length left to the precise clock for the drift between the
/// clocks since they were paired: a 1024th (a shift, not a division), about twice the most
/// NTP slews a clock.
const DRIFT_SHIFT: u32 = 10;

/// An open period `[from, until)` in nanoseconds of `CLOCK_MONOTONIC`. `until` is more than
/// [`MARGIN`], so 0 can stand for no period.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CoarsePeriod {
    pub(crate) from: u64,
    pub(crate) until: u64,
}

impl CoarsePeriod {
    /// The period `[from, until)` in ticks of the production clock, `ticks_now` being its
    /// reading just before: in the coarse clock's nanoseconds, if there is a coarse clock.
    pub(crate) fn of_ticks(from: u64, until: u64, ticks_now: u64) -> Option<Self> {
        if until <= from {
            return None;
        }
        let precise = imp::precise_now()?;
        // Both clocks count nanoseconds; one pair of readings relates them.
        let offset = precise.checked_sub(ticks_now)?;
        let period = Self {
            from: from.checked_add(offset)?,
            until: until.checked_add(offset)?,
        };
        (period.until > MARGIN).then_some(period)
    }
}

/// The nanoseconds left in the period `[from, until)` if the coarse clock proves it has not
/// ended; `None` when only the precise clock can tell (the period's last [`MARGIN`] and
/// 1024th), or when `until` is 0 (no period). `from` is read only after the clock.
///
/// The time left is never less than the precise one, because a coarse reading is never
/// ahead, and never more than the period.
#[inline(always)]
pub(crate) fn left(from: impl FnOnce() -> u64, until: u64) -> Option<u64> {
    if until == 0 {
        return None;
    }
    let now = imp::now()?;
    left_at(now, from(), until)
}

/// [`left`] at the coarse reading `now`.
#[inline(always)]
fn left_at(now: u64, from: u64, until: u64) -> Option<u64> {
    let sure_until = until.saturating_sub(MARGIN + (until.saturating_sub(from) >> DRIFT_SHIFT));
    (now < sure_until).then(|| until - now.max(from))
}

#[cfg(any(target_os = "linux", target_os = "android"))]
mod imp {
    use rustix::time::{clock_gettime, ClockId, Timespec};

    fn nanos(t: Timespec) -> Option<u64> {
        let secs = u64::try_from(t.tv_sec).ok()?;
        let nanos = u64::try_from(t.tv_nsec).ok()?;
        secs.checked_mul(1_000_000_000)?.checked_add(nanos)
    }

    #[inline(always)]
    pub(super) fn now() -> Option<u64> {
        nanos(clock_gettime(ClockId::MonotonicCoarse))
    }

    /// `CLOCK_MONOTONIC` now.
    pub(super) fn precise_now() -> Option<u64> {
        nanos(clock_gettime(ClockId::Monotonic))
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
mod imp {
    #[inline(always)]
    pub(super) fn now() -> Option<u64> {
        None
    }

    pub(super) fn precise_now() -> Option<u64> {
        None
    }
}

#[cfg(all(test, any(target_os = "linux", target_os = "android")))]
mod tests {
    use super::*;

    const SECOND: u64 = 1_000_000_000;

    #[test]
    fn a_period_moves_by_the_offset_between_the_clocks() {
        let before = imp::now().unwrap();
        let p = CoarsePeriod::of_ticks(1_000, 5 * SECOND + 1_000, 1_000).unwrap();
        // The period starts at a precise reading, which no coarse reading is ahead of.
        assert!(before <= p.from, "{before} > {}", p.from);
        assert_eq!(p.until - p.from, 5 * SECOND);
        // Just after the period began, the coarse clock is sure of it: what it tells is
        // the period less the time since, to within a tick (the reading may trail `from`).
        let left = left(|| p.from, p.until).unwrap();
        assert!(left <= 5 * SECOND && left > 4 * SECOND, "{left}");
    }

    #[test]
    fn the_last_twenty_milliseconds_are_left_to_the_precise_clock() {
        let now = imp::now().unwrap();
        let ending = |until| left(|| now, until);
        assert_eq!(ending(now + MARGIN), None);
        assert_eq!(ending(now), None);
        assert_eq!(ending(now - 1), None, "ended");
        // Far enough: the reading may have moved on by a tick since `now`, no more.
        let far = ending(now + MARGIN + SECOND).unwrap();
        assert!(far <= MARGIN + SECOND && far > SECOND, "{far}");
    }

    #[test]
    fn a_long_period_leaves_its_last_1024th_to_the_precise_clock() {
        // An hour from 0: its last 3.515625s (a 1024th) for the drift and 20ms for the tick.
        let until = 3_600 * SECOND;
        let sure_until = until - 3_515_625_000 - MARGIN;
        assert_eq!(left_at(sure_until, 0, until), None);
        assert_eq!(left_at(sure_until - 1, 0, until), Some(3_535_625_001));
        // 5.12 seconds: 5ms and 20ms.
        let (from, until) = (7 * SECOND, 12_120_000_000);
        assert_eq!(left_at(until - 25_000_000, from, until), None);
        assert_eq!(left_at(until - 25_000_001, from, until), Some(25_000_001));
        // Before the period began (a reading from before the pairing), the whole period.
        assert_eq!(left_at(from - 9, from, until), Some(5_120_000_000));
    }

    #[test]
    fn no_period_is_never_sure() {
        assert_eq!(left(|| 0, 0), None);
    }

    #[test]
    fn ticks_ahead_of_the_monotonic_clock_give_no_period() {
        assert_eq!(CoarsePeriod::of_ticks(0, 1, u64::MAX), None);
    }

    #[test]
    fn a_period_the_ticks_cannot_tell_has_no_coarse_twin() {
        assert_eq!(CoarsePeriod::of_ticks(0, 0, 0), None);
        assert_eq!(CoarsePeriod::of_ticks(7, 7, 0), None);
    }
}
