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
//! The two clocks are paired when the breaker opens: a reading of `CLOCK_MONOTONIC` between
//! two readings of the counter (see [`offset`]). A thread preempted between the readings
//! would shift the period late by as long as it was away, past what [`MARGIN`] can cover,
//! and OPEN would then reject after its deadline; the counter read on both sides bounds the
//! shift, and a pairing that took longer than [`PAIRING_SLACK`] is tried again. The clocks
//! may then drift apart: the time-stamp counter is not slewed by NTP, `CLOCK_MONOTONIC` is,
//! by at most 500 parts per million. So the coarse clock also leaves to the precise one the
//! last 1024th of a period ([`DRIFT_SHIFT`]), more than the clocks can drift apart within it.
//!
//! Only the production clock ([`MonotonicClock`](super::MonotonicClock)) has a coarse twin:
//! a period told in its ticks is moved into the coarse clock's nanoseconds with one pairing
//! of the clocks, when the breaker opens. Elsewhere (other platforms, other clocks) there is
//! no coarse period and OPEN reads the breaker's own clock.

/// How far before the end of a period a coarse reading must be to prove the period has not
/// ended: two ticks of a 100 Hz timer.
const MARGIN: u64 = 20_000_000;

/// How far apart the two readings of the counter around a reading of `CLOCK_MONOTONIC` may
/// be for the pairing to count: a tenth of the slowest timer's tick. [`MARGIN`] holds two
/// such ticks, one for the coarse clock's lag and one to spare, so a period shifted late by
/// this much still ends on the precise clock. An unhurried pairing takes well under a
/// microsecond; only a thread preempted in the middle takes this long.
const PAIRING_SLACK: u64 = 1_000_000;

/// Pairings tried before the period is left to the precise clock: each was preempted, and
/// the next one likely would be too.
const PAIRING_TRIES: u32 = 3;

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
    /// The period `[from, until)` in ticks of the production clock, which `ticks` reads: in
    /// the coarse clock's nanoseconds, if there is a coarse clock and the clocks could be
    /// paired (see [`offset`]).
    pub(crate) fn paired(from: u64, until: u64, ticks: impl FnMut() -> u64) -> Option<Self> {
        if until <= from {
            return None;
        }
        Self::at_offset(from, until, offset(ticks, imp::precise_now)?)
    }

    /// [`paired`](Self::paired) with a counter that reads `ticks_now`: as if the period were
    /// paired at that tick, unhurried.
    #[cfg(test)]
    pub(crate) fn of_ticks(from: u64, until: u64, ticks_now: u64) -> Option<Self> {
        Self::paired(from, until, || ticks_now)
    }

    /// Whether the coarse reading `now` proves the period holds the present: what
    /// [`left`] tells of this period at that reading, for tests that choose the reading.
    #[cfg(test)]
    pub(crate) fn surely_holds_at(self, now: u64) -> bool {
        left_at(now, self.from, self.until).is_some()
    }

    /// The period `[from, until)` in ticks, moved by `offset` into the coarse clock's
    /// nanoseconds.
    fn at_offset(from: u64, until: u64, offset: u64) -> Option<Self> {
        let period = Self {
            from: from.checked_add(offset)?,
            until: until.checked_add(offset)?,
        };
        (period.until > MARGIN).then_some(period)
    }
}

/// What to add to a reading of the counter (`ticks`) to get `CLOCK_MONOTONIC` (`precise`):
/// both count nanoseconds, so one reading of each relates them, if nothing comes between.
///
/// The counter is read on both sides of the precise reading. Paired with the first, the
/// offset is never less than the true one (the precise reading came after), so a period
/// moved by it ends no earlier on the coarse clock than it truly does, and the time left
/// a rejection tells is never less than the true time left. It is more than the true one
/// by at most the time between the counter's readings, which [`PAIRING_SLACK`] bounds, so
/// the period ends late by less than [`MARGIN`] leaves room for, and the precise clock still
/// has the last word. A pairing that took longer (the thread was preempted) is tried again,
/// [`PAIRING_TRIES`] times in all; then there is no offset, and no coarse period.
fn offset(mut ticks: impl FnMut() -> u64, mut precise: impl FnMut() -> Option<u64>) -> Option<u64> {
    for _ in 0..PAIRING_TRIES {
        let before = ticks();
        let now = precise()?;
        let after = ticks();
        if after.saturating_sub(before) <= PAIRING_SLACK {
            return now.checked_sub(before);
        }
    }
    None
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

/// The pairing with readers of a simulated machine, whose thread may be preempted between
/// its readings: no real clock, no sleeping.
#[cfg(test)]
mod preempted {
    use std::cell::Cell;

    use super::*;

    const MS: u64 = 1_000_000;

    /// Every reading takes 40 ns; `CLOCK_MONOTONIC` stands 7s ahead of the counter.
    const READ: u64 = 40;
    const AHEAD: u64 = 7_000 * MS;

    /// A machine on which the thread is preempted for `away[i]` just before the precise
    /// reading of the `i`th pairing.
    struct Machine {
        now: Cell<u64>,
        precise_reads: Cell<usize>,
        away: Vec<u64>,
    }

    impl Machine {
        fn new(away: &[u64]) -> Self {
            Self {
                now: Cell::new(1_000 * MS),
                precise_reads: Cell::new(0),
                away: away.to_vec(),
            }
        }

        fn read(&self) -> u64 {
            let at = self.now.get();
            self.now.set(at + READ);
            at
        }

        fn ticks(&self) -> u64 {
            self.read()
        }

        fn precise(&self) -> Option<u64> {
            let i = self.precise_reads.get();
            self.precise_reads.set(i + 1);
            self.now
                .set(self.now.get() + self.away.get(i).copied().unwrap_or(0));
            Some(self.read() + AHEAD)
        }

        fn offset(&self) -> Option<u64> {
            offset(|| self.ticks(), || self.precise())
        }
    }

    #[test]
    fn an_unhurried_pairing_is_off_by_no_more_than_one_reading() {
        let m = Machine::new(&[]);
        // The precise reading comes one reading after the counter's: the offset is that much
        // more than the true one, never less.
        assert_eq!(m.offset(), Some(AHEAD + READ));
        assert_eq!(m.precise_reads.get(), 1);
    }

    #[test]
    fn a_pairing_preempted_past_the_slack_is_tried_again() {
        // Away 50ms, then exactly the slack (less the two readings, which count too), then
        // unhurried.
        let m = Machine::new(&[50 * MS, PAIRING_SLACK - 2 * READ]);
        assert_eq!(m.offset(), Some(AHEAD + READ + PAIRING_SLACK - 2 * READ));
        assert_eq!(
            m.precise_reads.get(),
            2,
            "the second pairing is within the slack"
        );

        let m = Machine::new(&[50 * MS, PAIRING_SLACK - 2 * READ + 1, 0]);
        assert_eq!(m.offset(), Some(AHEAD + READ));
        assert_eq!(m.precise_reads.get(), 3);
    }

    #[test]
    fn a_pairing_preempted_every_time_leaves_the_period_to_the_precise_clock() {
        let m = Machine::new(&[50 * MS, 2 * MS, 30 * MS, 0]);
        assert_eq!(m.offset(), None);
        assert_eq!(m.precise_reads.get(), PAIRING_TRIES as usize);
    }

    /// The guarantee the pairing keeps, whatever preempts it: paired on a thread away for
    /// `away` before the precise reading, a period of `length` never has the coarse clock
    /// (at most `lag` behind the precise one) sure of it at or after its deadline, and never
    /// tells less time left than there truly is.
    fn check_deadline(away: u64, length: u64, lag: u64) {
        let m = Machine::new(&[away]);
        let from_ticks = m.now.get();
        let until_ticks = from_ticks + length;
        let Some(offset) = m.offset() else {
            return;
        };
        let p = CoarsePeriod::at_offset(from_ticks, until_ticks, offset).unwrap();
        // The true deadline on `CLOCK_MONOTONIC`.
        let deadline = until_ticks + AHEAD;
        let first = deadline.saturating_sub(100 * MS).max(from_ticks + AHEAD);
        for precise in (first..deadline + 100 * MS)
            .step_by(50_000)
            .chain([deadline])
        {
            for behind in [0, lag / 2, lag] {
                let coarse = precise - behind;
                let Some(told) = left_at(coarse, p.from, p.until) else {
                    continue;
                };
                assert!(
                    precise < deadline,
                    "away {away}, lag {behind}: rejected {}ns past the deadline",
                    precise - deadline
                );
                let left = deadline - precise;
                assert!(
                    told >= left,
                    "away {away}, lag {behind}: told {told}ns, {left}ns left"
                );
            }
        }
    }

    #[test]
    fn a_period_paired_by_a_preempted_thread_never_rejects_past_its_deadline() {
        // One tick of the slowest timer, the coarse clock's largest lag.
        let lag = 10 * MS;
        for away in [
            0,
            MS / 2,
            PAIRING_SLACK,
            5 * MS,
            19 * MS,
            30 * MS,
            1_000 * MS,
        ] {
            for length in [25 * MS, 60 * MS, 5_000 * MS, 3_600_000 * MS] {
                check_deadline(away, length, lag);
            }
        }
    }
}
