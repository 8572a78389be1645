//! The kernel's coarse monotonic clock: how OPEN rejects without reading the time-stamp
//! counter.
//!
//! On Linux, `CLOCK_MONOTONIC_COARSE` is `CLOCK_MONOTONIC` as of the kernel's last timer
//! tick, read from the vDSO's memory without `rdtsc`, which is slow in a virtual machine. It
//! is never ahead of `CLOCK_MONOTONIC` and trails it by about one tick
//! (`clock_getres(CLOCK_MONOTONIC_COARSE)`, 1 to 10 ms). So a coarse reading more than two
//! ticks before the end of an open period proves that the period has not ended; closer to
//! the end the breaker reads its precise clock, and the deadline is as exact as before.
//!
//! Only the production clock ([`MonotonicClock`](super::MonotonicClock)) has a coarse twin:
//! a period told in its ticks is moved into the coarse clock's nanoseconds with one reading
//! of each clock, when the breaker opens. Elsewhere (other platforms, other clocks) there is
//! no coarse period and OPEN reads the breaker's own clock.

/// An open period `[from, until)` in nanoseconds of `CLOCK_MONOTONIC`, and `sure`: a coarse
/// reading below it proves the period has not ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CoarsePeriod {
    pub(crate) from: u64,
    pub(crate) sure: u64,
    pub(crate) until: u64,
}

impl CoarsePeriod {
    /// The period `[from, until)` in ticks of the production clock, `ticks_now` being its
    /// reading just before: in the coarse clock's nanoseconds, if there is a coarse clock.
    pub(crate) fn of_ticks(from: u64, until: u64, ticks_now: u64) -> Option<Self> {
        let (precise, margin) = imp::precise_now_and_margin()?;
        // Both clocks count nanoseconds; one pair of readings relates them.
        let offset = precise.checked_sub(ticks_now)?;
        let until = until.checked_add(offset)?;
        Some(Self {
            from: from.checked_add(offset)?,
            sure: until.saturating_sub(margin),
            until,
        })
    }
}

/// The coarse clock's reading in nanoseconds; `u64::MAX` where there is none, which no
/// period is sure of.
#[inline]
pub(crate) fn now() -> u64 {
    imp::now()
}

#[cfg(any(target_os = "linux", target_os = "android"))]
mod imp {
    use rustix::time::{clock_getres, clock_gettime, ClockId, Timespec};

    fn nanos(t: Timespec) -> Option<u64> {
        let secs = u64::try_from(t.tv_sec).ok()?;
        let nanos = u64::try_from(t.tv_nsec).ok()?;
        secs.checked_mul(1_000_000_000)?.checked_add(nanos)
    }

    #[inline]
    pub(super) fn now() -> u64 {
        nanos(clock_gettime(ClockId::MonotonicCoarse)).unwrap_or(u64::MAX)
    }

    /// `CLOCK_MONOTONIC` now, and how far a coarse reading may trail it: two of its ticks.
    pub(super) fn precise_now_and_margin() -> Option<(u64, u64)> {
        let tick = nanos(clock_getres(ClockId::MonotonicCoarse))?;
        Some((
            nanos(clock_gettime(ClockId::Monotonic))?,
            tick.checked_mul(2)?,
        ))
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
mod imp {
    #[inline]
    pub(super) fn now() -> u64 {
        u64::MAX
    }

    pub(super) fn precise_now_and_margin() -> Option<(u64, u64)> {
        None
    }
}

#[cfg(all(test, any(target_os = "linux", target_os = "android")))]
mod tests {
    use super::*;

    #[test]
    fn a_period_moves_by_the_offset_between_the_clocks() {
        let ticks_now = 1_000;
        let before = now();
        let p = CoarsePeriod::of_ticks(1_000, 5_000_000_000 + 1_000, ticks_now).unwrap();
        let after = now();
        // The period starts at the precise reading, which no coarse reading is ahead of.
        assert!(before <= p.from, "{before} > {}", p.from);
        assert_eq!(p.until - p.from, 5_000_000_000);
        let margin = p.until - p.sure;
        assert!(
            margin > 0 && margin <= 200_000_000,
            "two ticks: {margin} ns"
        );
        // A reading just after the period began is sure of it.
        assert!(after < p.sure);
    }

    #[test]
    fn a_period_shorter_than_the_margin_is_never_sure() {
        let p = CoarsePeriod::of_ticks(0, 1, 0).unwrap();
        assert!(p.sure < p.from, "the margin reaches back before the period");
        assert!(now() >= p.sure);
    }

    #[test]
    fn ticks_ahead_of_the_monotonic_clock_give_no_period() {
        assert_eq!(CoarsePeriod::of_ticks(0, 1, u64::MAX), None);
    }
}
