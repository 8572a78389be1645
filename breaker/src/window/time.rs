//! A time window: calls completed in the last span, kept in fixed buckets.

use std::time::Duration;

use super::{Mark, Totals};
use crate::clock::{ClockSource, CoarsePeriod};
use crate::engine::LaneBucket;

/// Outcomes of the last `span`, at a granularity of `span / buckets`.
///
/// Memory is O(buckets) whatever the traffic, its counts 64 bits wide: a busy service may
/// complete more than `u32::MAX` calls within one span, and wide counts neither saturate
/// nor wrap, so expiring a bucket takes from the totals exactly what the bucket added. Recording is amortised O(1): moving forward
/// clears each expired bucket once, and an idle period of a whole span clears them all.
/// Within the newest bucket, recording compares the time with the bucket's end and divides
/// nothing. On the production clock the newest bucket is also kept on the kernel's coarse
/// clock (see `clock::coarse`): while that clock proves the bucket has not ended, recording
/// needs no reading of the precise clock, and the bucket ends exactly when it did. A success
/// that cannot trip the window, and a failure that cannot either, is counted beside it, in the
/// breaker's lane (`engine/lane.rs`), and added to the newest bucket under the lock
/// ([`add_lane`](Self::add_lane)).
#[derive(Debug)]
pub(crate) struct TimeWindow {
    buckets: Box<[Wide]>,
    width_nanos: u64,
    /// The clock's ticks (nanoseconds) at which the first bucket starts.
    origin: u64,
    /// Index (since `origin`) of the newest bucket.
    current: u64,
    /// `current % buckets.len()`: where the newest bucket is, kept so that recording divides
    /// nothing.
    slot: usize,
    /// Nanoseconds since `origin` at which the newest bucket ends.
    current_end: u64,
    /// The sum of the buckets.
    totals: Wide,
    /// The newest bucket on the coarse clock, if it has been paired with it.
    coarse: Option<CoarsePeriod>,
    /// The bucket `coarse` was asked for (paired or not), so that pairing is tried once a
    /// bucket.
    paired: Option<u64>,
}

impl TimeWindow {
    pub(crate) fn new(span: Duration, buckets: u32, origin: u64) -> Self {
        let buckets = buckets.max(1);
        let span_nanos = u64::try_from(span.as_nanos()).unwrap_or(u64::MAX);
        Self {
            buckets: vec![Wide::default(); buckets as usize].into_boxed_slice(),
            width_nanos: (span_nanos / u64::from(buckets)).max(1),
            origin,
            current: 0,
            slot: 0,
            current_end: (span_nanos / u64::from(buckets)).max(1),
            totals: Wide::default(),
            coarse: None,
            paired: None,
        }
    }

    /// Expires the buckets that fell out of the window by `now`. A clock that went backwards
    /// keeps the newest bucket.
    #[inline]
    fn advance(&mut self, now: Option<u64>) {
        let Some(now) = now else { return };
        let elapsed = now.saturating_sub(self.origin);
        if elapsed < self.current_end {
            return;
        }
        self.move_to(elapsed / self.width_nanos);
    }

    fn move_to(&mut self, index: u64) {
        if index <= self.current {
            return;
        }
        let len = self.buckets.len() as u64;
        if index - self.current >= len {
            self.buckets.fill(Wide::default());
            self.totals = Wide::default();
        } else {
            for i in self.current + 1..=index {
                let bucket = &mut self.buckets[(i % len) as usize];
                // Exact: the totals are the sum of the buckets, and no count wraps.
                self.totals.calls -= bucket.calls;
                self.totals.failures -= bucket.failures;
                self.totals.slow -= bucket.slow;
                *bucket = Wide::default();
            }
        }
        self.current = index;
        self.coarse = None;
        self.slot = (index % len) as usize;
        self.current_end = index.saturating_add(1).saturating_mul(self.width_nanos);
    }

    /// Adds one call at `now` (ticks) and returns the counts after it.
    #[inline]
    pub(crate) fn record(&mut self, mark: Mark, now: Option<u64>) -> Totals {
        self.advance(now);
        self.add(mark)
    }

    /// Counts `mark` in the newest bucket and the totals. The totals returned are the ones
    /// computed, not read back: read back whole, fields just stored one by one would wait for
    /// the stores to reach the cache (a failed store-to-load forwarding).
    #[inline]
    fn add(&mut self, mark: Mark) -> Totals {
        let bucket = &mut self.buckets[self.slot];
        *bucket = bucket.with(mark);
        let totals = self.totals.with(mark);
        self.totals = totals;
        totals.narrow()
    }

    /// Whether the coarse clock proves the newest bucket still holds the present, so that
    /// [`record_current`](Self::record_current) may record without the time.
    #[inline]
    pub(crate) fn surely_current(&self) -> bool {
        self.coarse
            .is_some_and(|p| ClockSource::coarse_left(|| p.from, p.until).is_some())
    }

    /// Adds one call to the newest bucket, which [`surely_current`](Self::surely_current)
    /// said holds the present: what [`record`](Self::record) at the present would do.
    #[inline]
    pub(crate) fn record_current(&mut self, mark: Mark) -> Totals {
        self.add(mark)
    }

    /// Pairs the newest bucket with the coarse clock, once a bucket: `period` tells the
    /// bucket, `[start, end)` in ticks, in the coarse clock's nanoseconds (`None` for a
    /// clock without a coarse twin).
    #[inline]
    pub(crate) fn pair(&mut self, period: impl FnOnce(u64, u64) -> Option<CoarsePeriod>) {
        if self.paired != Some(self.current) {
            self.pair_anew(period);
        }
    }

    /// [`pair`](Self::pair) for a bucket not paired yet: once a bucket, out of the line of
    /// every call.
    #[cold]
    #[inline(never)]
    fn pair_anew(&mut self, period: impl FnOnce(u64, u64) -> Option<CoarsePeriod>) {
        self.paired = Some(self.current);
        let start = self.current.saturating_mul(self.width_nanos);
        let ticks = |since: u64| self.origin.checked_add(since);
        if let (Some(start), Some(end)) = (ticks(start), ticks(self.current_end)) {
            self.coarse = period(start, end);
        }
    }

    /// The counts the window holds, as they stand: not moved on to the present.
    pub(crate) fn held(&self) -> Totals {
        self.totals.narrow()
    }

    /// Where the newest bucket ends: on the coarse clock if paired with it, and in ticks,
    /// for a lane given `credit` failures; `None` when its end is past what ticks can tell.
    pub(crate) fn lane_bucket(&self, credit: u32) -> Option<LaneBucket> {
        Some(LaneBucket {
            coarse: self.coarse,
            end: self.origin.checked_add(self.current_end)?,
            credit,
            index: self.current,
        })
    }

    /// Adds `successes` and `failures` to the newest bucket, as as many calls of
    /// [`record_current`](Self::record_current) would.
    pub(crate) fn add_lane(&mut self, successes: u64, failures: u64) {
        let more = |counts: Wide| Wide {
            calls: counts.calls + successes + failures,
            failures: counts.failures + failures,
            ..counts
        };
        self.buckets[self.slot] = more(self.buckets[self.slot]);
        self.totals = more(self.totals);
    }

    /// Adds `successes` to the bucket of index `bucket`, the newest or an older one, if it is
    /// still in the window; one that expired since takes them with it.
    pub(crate) fn add_successes_at(&mut self, bucket: u64, successes: u64) {
        let live = self.buckets.len() as u64;
        if bucket > self.current || self.current - bucket >= live {
            return;
        }
        let slot = (bucket % live) as usize;
        self.buckets[slot].calls += successes;
        self.totals.calls += successes;
    }

    pub(crate) fn totals(&mut self, now: Option<u64>) -> Totals {
        self.advance(now);
        self.totals.narrow()
    }

    /// Drops every slow mark, keeping the calls and their failures.
    pub(crate) fn forget_slow(&mut self) {
        self.buckets.iter_mut().for_each(|bucket| bucket.slow = 0);
        self.totals.slow = 0;
    }

    /// Adds `n` calls of `mark` at `now` as `n` calls of [`record`](Self::record) would, for
    /// tests of counts no test could make one call at a time.
    #[cfg(test)]
    fn record_many(&mut self, mark: Mark, n: u64, now: Option<u64>) -> Totals {
        self.advance(now);
        let times = |counts: Wide| Wide {
            calls: counts.calls + n,
            failures: counts.failures + u64::from(mark.failure) * n,
            slow: counts.slow + u64::from(mark.slow) * n,
        };
        self.buckets[self.slot] = times(self.buckets[self.slot]);
        self.totals = times(self.totals);
        self.totals.narrow()
    }

    pub(crate) fn clear(&mut self) {
        self.buckets.fill(Wide::default());
        self.totals = Wide::default();
    }
}

/// Counts of a bucket, or of the window. A count grows by at most one a call, and a call
/// takes a nanosecond at the very least: 64 bits last some 580 years of calls.
/// `failures` and `slow` never exceed `calls`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Wide {
    calls: u64,
    failures: u64,
    slow: u64,
}

impl Wide {
    /// These counts and one more call, `mark`.
    #[inline]
    fn with(self, mark: Mark) -> Self {
        Self {
            calls: self.calls + 1,
            failures: self.failures + u64::from(mark.failure),
            slow: self.slow + u64::from(mark.slow),
        }
    }

    /// The counts as the breaker judges and shows them; exact up to `u32::MAX` calls.
    #[inline]
    fn narrow(self) -> Totals {
        match u32::try_from(self.calls) {
            // Both at most `calls`, so they fit too.
            Ok(calls) => Totals {
                calls,
                failures: self.failures as u32,
                slow: self.slow as u32,
            },
            Err(_) => self.scaled(),
        }
    }

    /// More than `u32::MAX` calls: `u32::MAX` of them, and the failures and slow calls
    /// scaled alike, so that both rates hold (to 1 in 2^32).
    #[cold]
    fn scaled(self) -> Totals {
        let scale = |count: u64| {
            let scaled = u128::from(count) * u128::from(u32::MAX) / u128::from(self.calls);
            scaled as u32
        };
        Totals {
            calls: u32::MAX,
            failures: scale(self.failures),
            slow: scale(self.slow),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::marks::{FAIL, OK, SLOW_OK};

    fn at(origin: u64, ms: u64) -> Option<u64> {
        Some(origin + ms * 1_000_000)
    }

    #[test]
    fn buckets_expire_one_at_a_time() {
        let origin = 123_456_789;
        // 10s in 10 buckets of 1s.
        let mut w = TimeWindow::new(Duration::from_secs(10), 10, origin);
        w.record(FAIL, at(origin, 0));
        w.record(OK, at(origin, 4_500));
        assert_eq!(
            w.totals(at(origin, 9_999)),
            Totals {
                calls: 2,
                failures: 1,
                slow: 0
            }
        );
        // The first bucket [0s, 1s) expires at 10s; the one at 4.5s stays until 14s.
        assert_eq!(
            w.totals(at(origin, 10_000)),
            Totals {
                calls: 1,
                failures: 0,
                slow: 0
            }
        );
        assert_eq!(w.totals(at(origin, 13_999)).calls, 1);
        assert_eq!(w.totals(at(origin, 14_000)).calls, 0);
    }

    #[test]
    fn an_idle_span_expires_everything() {
        let origin = 123_456_789;
        let mut w = TimeWindow::new(Duration::from_secs(10), 10, origin);
        for _ in 0..1000 {
            w.record(FAIL, at(origin, 500));
        }
        assert_eq!(w.totals(at(origin, 500)).failures, 1000);
        assert_eq!(w.totals(at(origin, 3_600_000)), Totals::default());
        w.record(OK, at(origin, 3_600_001));
        assert_eq!(
            w.totals(at(origin, 3_600_001)),
            Totals {
                calls: 1,
                failures: 0,
                slow: 0
            }
        );
    }

    #[test]
    fn forgetting_slow_marks_keeps_calls_and_expires_cleanly() {
        let origin = 123_456_789;
        let mut w = TimeWindow::new(Duration::from_secs(10), 10, origin);
        w.record(SLOW_OK, at(origin, 0));
        w.record(FAIL, at(origin, 0));
        w.record(SLOW_OK, at(origin, 5_000));
        w.forget_slow();
        let expected = Totals {
            calls: 3,
            failures: 1,
            slow: 0,
        };
        assert_eq!(w.totals(at(origin, 5_000)), expected);
        // The buckets lost their marks too: expiring them takes none from the totals.
        w.record(SLOW_OK, at(origin, 9_000));
        assert_eq!(
            w.totals(at(origin, 10_000)),
            Totals {
                calls: 2,
                failures: 0,
                slow: 1
            }
        );
    }

    #[test]
    fn a_bucket_past_u32_max_expires_exactly() {
        let origin = 123_456_789;
        let mut w = TimeWindow::new(Duration::from_secs(10), 10, origin);
        let many = u64::from(u32::MAX) + 10;
        w.record_many(FAIL, many, at(origin, 0));
        for _ in 0..5 {
            w.record(OK, at(origin, 5_000));
        }
        // 2^32 + 14 calls, 2^32 + 9 failed: told as u32::MAX calls at the same rate.
        assert_eq!(
            w.totals(at(origin, 5_000)),
            Totals {
                calls: u32::MAX,
                failures: u32::MAX - 5,
                slow: 0
            }
        );
        assert_eq!(
            w.totals(at(origin, 10_000)),
            Totals {
                calls: 5,
                failures: 0,
                slow: 0
            },
            "the first bucket expired, and only it"
        );
        assert_eq!(w.totals(at(origin, 15_000)), Totals::default());
    }

    #[test]
    fn a_clock_going_backwards_records_into_the_newest_bucket() {
        let origin = 123_456_789;
        let mut w = TimeWindow::new(Duration::from_secs(10), 10, origin);
        w.record(OK, at(origin, 5_000));
        w.record(FAIL, at(origin, 1_000));
        assert_eq!(
            w.totals(at(origin, 5_000)),
            Totals {
                calls: 2,
                failures: 1,
                slow: 0
            }
        );
        assert_eq!(w.totals(at(origin, 15_000)), Totals::default());
    }

    /// A window of 10s in 10 buckets of 1s whose first bucket is paired with a coarse
    /// clock that reads the ticks themselves (an offset of 0), so that a test chooses the
    /// coarse reading.
    fn paired_exactly(origin: u64) -> TimeWindow {
        let mut w = TimeWindow::new(Duration::from_secs(10), 10, origin);
        w.pair(|from, until| Some(CoarsePeriod { from, until }));
        w
    }

    /// [`TimeWindow::surely_current`] at the coarse reading `coarse`.
    fn surely_current_at(w: &TimeWindow, coarse: u64) -> bool {
        w.coarse.is_some_and(|p| p.surely_holds_at(coarse))
    }

    #[test]
    fn a_coarse_reading_near_the_buckets_end_is_left_to_the_precise_clock() {
        let origin = 5_000;
        let w = paired_exactly(origin);
        let end = origin + 1_000_000_000;
        // Sure until 20ms (two ticks) and a 1024th of the bucket (976,562ns, the clocks'
        // drift) before the bucket's end.
        let sure_until = end - 20_000_000 - 976_562;
        assert!(surely_current_at(&w, origin));
        assert!(surely_current_at(&w, origin + 500_000_000));
        assert!(surely_current_at(&w, sure_until - 1));
        assert!(!surely_current_at(&w, sure_until));
        assert!(!surely_current_at(&w, end - 1));
        assert!(!surely_current_at(&w, end));
        assert!(!surely_current_at(&w, end + 1));
    }

    #[test]
    fn a_call_near_the_buckets_end_lands_in_the_bucket_of_its_precise_reading() {
        let origin = 5_000;
        let one_ok = Totals {
            calls: 1,
            failures: 0,
            slow: 0,
        };
        let both = Totals {
            calls: 2,
            failures: 1,
            slow: 0,
        };
        // Half-way through the first bucket the coarse clock is sure: a failure is counted
        // there without the time. 10ms before its end it is not: the precise clock places
        // the next call, at 999ms still in the first bucket...
        let mut w = paired_exactly(origin);
        assert!(surely_current_at(&w, origin + 500_000_000));
        w.record_current(FAIL);
        assert!(!surely_current_at(&w, origin + 990_000_000));
        assert_eq!(w.record(OK, at(origin, 999)), both);
        // ...which expires with it at 10s.
        assert_eq!(w.totals(at(origin, 9_999)), both);
        assert_eq!(w.totals(at(origin, 10_000)), Totals::default());

        // ...and at 1s in the second, which expires at 11s.
        let mut w = paired_exactly(origin);
        w.record_current(FAIL);
        assert!(!surely_current_at(&w, origin + 990_000_000));
        assert_eq!(w.record(OK, at(origin, 1_000)), both);
        assert_eq!(w.totals(at(origin, 10_000)), one_ok);
        assert_eq!(w.totals(at(origin, 10_999)), one_ok);
        assert_eq!(w.totals(at(origin, 11_000)), Totals::default());
    }

    /// A window of an hour in 10 buckets of 6 minutes, paired with the coarse clock as if
    /// its first bucket began now.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn paired_now(origin: u64) -> TimeWindow {
        let mut w = TimeWindow::new(Duration::from_secs(3_600), 10, origin);
        assert!(!w.surely_current(), "not paired yet");
        w.pair(|start, end| CoarsePeriod::of_ticks(start, end, start));
        w
    }

    #[test]
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn a_bucket_the_coarse_clock_is_sure_of_records_without_the_time() {
        let origin = 5_000;
        let mut w = paired_now(origin);
        assert!(w.surely_current());
        w.record_current(FAIL);
        let after = w.record_current(OK);
        let expected = Totals {
            calls: 2,
            failures: 1,
            slow: 0,
        };
        assert_eq!(after, expected);
        assert_eq!(w.totals(at(origin, 1)), expected, "in the first bucket");
        assert_eq!(w.totals(at(origin, 3_600_000)), Totals::default());
    }

    #[test]
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn each_bucket_is_paired_once_and_a_new_bucket_forgets_the_old_pairing() {
        let origin = 5_000;
        let mut w = paired_now(origin);
        // Into the second bucket, [6min, 12min): the first one's pairing no longer holds.
        w.record(OK, at(origin, 360_000));
        assert!(!w.surely_current());
        let mut asked = Vec::new();
        for _ in 0..3 {
            w.pair(|start, end| {
                asked.push((start - origin, end - origin));
                None
            });
        }
        let minutes = |m: u64| m * 60_000_000_000;
        assert_eq!(asked, [(minutes(6), minutes(12))], "once a bucket");
        assert!(!w.surely_current(), "a clock without a coarse twin");
    }
}
