//! The retry budget of one breaker: retries in the last 10 seconds may be at most `budget`
//! times the first attempts of those seconds, plus `floor` retries a second.
//!
//! Counted in ten one-second buckets on the breaker's own clock, each a word holding its
//! second and its count, so a bucket left from ten seconds ago is reset by the same
//! compare-and-swap that counts into it. The ratio is held in parts per billion and compared
//! in integers: a budget of 0.3 allows exactly 3 retries per 10 first attempts.
//!
//! The present second is read on the production clock's coarse twin while that clock proves
//! it (see [`Present`]), and on the breaker's clock otherwise: every call with retries asks
//! for it, and the precise clock is the dearest part of a call that succeeds.

use crate::clock::{ClockSource, CoarsePeriod, LazyNow};
use crate::sync::{AtomicU64, Ordering};

/// Seconds the budget remembers, one bucket each.
const SECONDS: u64 = 10;
const NANOS_PER_SECOND: u64 = 1_000_000_000;
/// A bucket's word: `second << COUNT_BITS | count`; seconds since the clock's origin fit the
/// remaining 40 bits for 34,000 years.
const COUNT_BITS: u32 = 24;
/// A bucket's count saturates here (16.7 million in a second, for one breaker).
const COUNT_MAX: u64 = (1 << COUNT_BITS) - 1;
/// The unit a ratio is held in: parts per billion.
pub(crate) const PPB: u64 = 1_000_000_000;

/// How many retries the budget allows: `floor` a second, plus `ppb` per billion first
/// attempts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limit {
    pub(crate) ppb: u64,
    pub(crate) floor: u64,
}

impl Limit {
    /// Retries allowed in the window, given its first attempts. Exact: `r` retries are
    /// allowed when `r <= ppb / 1e9 * first + 10 * floor`, and `r` is an integer.
    fn allowed(self, first: u64) -> u64 {
        let earned = u128::from(self.ppb) * u128::from(first) / u128::from(PPB);
        let floor = u128::from(self.floor) * u128::from(SECONDS);
        u64::try_from(earned + floor).unwrap_or(u64::MAX)
    }
}

/// The second of a clock reading in ticks (nanoseconds since the breaker's origin).
fn second_of(ticks: u64) -> u64 {
    ticks / NANOS_PER_SECOND
}

fn pack(second: u64, count: u64) -> u64 {
    second << COUNT_BITS | count
}

fn unpack(word: u64) -> (u64, u64) {
    (word >> COUNT_BITS, word & COUNT_MAX)
}

/// Ten one-second counters; bucket `s % 10` counts second `s`.
struct Buckets([AtomicU64; SECONDS as usize]);

impl Buckets {
    fn new() -> Self {
        Self(std::array::from_fn(|_| AtomicU64::new(0)))
    }

    fn bucket(&self, second: u64) -> &AtomicU64 {
        &self.0[(second % SECONDS) as usize]
    }

    /// Counts one at `second`.
    fn add(&self, second: u64) {
        let bucket = self.bucket(second);
        let mut word = bucket.load(Ordering::Relaxed);
        loop {
            let (at, count) = current(word, second);
            let new = pack(at, (count + 1).min(COUNT_MAX));
            match bucket.compare_exchange_weak(word, new, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return,
                Err(seen) => word = seen,
            }
        }
    }

    /// The counts of the ten seconds up to `second`, but the bucket of `second` itself when
    /// `but_now`.
    fn sum(&self, second: u64, but_now: bool) -> u64 {
        let now = (second % SECONDS) as usize;
        self.0
            .iter()
            .enumerate()
            .filter(|&(i, _)| !(but_now && i == now))
            .map(|(_, bucket)| {
                let (at, count) = unpack(bucket.load(Ordering::Relaxed));
                // A bucket of a later second was counted by a thread whose reading is newer.
                if at + SECONDS > second {
                    count
                } else {
                    0
                }
            })
            .sum()
    }
}

/// A bucket's second and count as seen at `second`: a bucket ten or more seconds old counts
/// nothing and is taken over; one of a later second (a thread with a newer reading counted
/// into it) is counted into as it is.
fn current(word: u64, second: u64) -> (u64, u64) {
    let (at, count) = unpack(word);
    if at >= second {
        (at, count)
    } else {
        (second, 0)
    }
}

/// The present second on the production clock, as the budget counts it: the newest second
/// a precise reading told, and that second's end on the kernel's coarse clock (see
/// `clock::coarse`), paired once a second by the first reading that tells it. While a
/// coarse reading is more than the coarse clock's margin (20ms and a 1024th of the second)
/// before that end, the present is in that second, and the precise clock is not read; near
/// the end it is. A clock without a coarse twin (a
/// [`ManualClock`](crate::clock::ManualClock), tokio's, a user's) is read as it always was,
/// and nothing is learned.
///
/// Two words, each only ever raised (`fetch_max`), read without a lock, and no pair of them
/// is torn in a way that matters: `learned` is raised before `until`, and read after it, so
/// the second read is never older than the one `until` ends. A newer one (a reading of the
/// next second learned, its pairing not yet published) comes from a precise reading that
/// happened before this coarse one, which therefore is past the end `until` tells less the
/// margin: the coarse clock proves nothing, and the precise one is read.
struct Present {
    /// The newest second a precise reading told, plus one; 0 before any.
    learned: AtomicU64,
    /// The end of a learned second on the coarse clock, in nanoseconds; 0 when none was
    /// paired (more than the coarse margin when one was).
    until: AtomicU64,
}

impl Present {
    fn new() -> Self {
        Self {
            learned: AtomicU64::new(0),
            until: AtomicU64::new(0),
        }
    }

    /// The present second if the coarse clock proves it. `until` is read first, `learned`
    /// second, the clock last.
    #[inline(always)]
    fn surely(&self) -> Option<u64> {
        let until = self.until.load(Ordering::Acquire);
        let learned = self.learned.load(Ordering::Acquire);
        let from = || until.saturating_sub(NANOS_PER_SECOND);
        ClockSource::coarse_left(from, until).and_then(|_| learned.checked_sub(1))
    }

    /// [`surely`](Self::surely) at the coarse reading `now`.
    #[cfg(test)]
    fn surely_at(&self, now: u64) -> Option<u64> {
        let until = self.until.load(Ordering::Acquire);
        let learned = self.learned.load(Ordering::Acquire);
        let period = CoarsePeriod {
            from: until.saturating_sub(NANOS_PER_SECOND),
            until,
        };
        (until != 0 && period.surely_holds_at(now))
            .then(|| learned.checked_sub(1))
            .flatten()
    }

    /// Notes `second`, which a precise reading told, and pairs it with the coarse clock if
    /// it is the newest: `period` tells a span in ticks on the coarse clock (`None` for a
    /// clock without a coarse twin).
    #[inline]
    fn learn(&self, second: u64, period: impl FnOnce(u64, u64) -> Option<CoarsePeriod>) {
        if second >= self.learned.load(Ordering::Relaxed) {
            self.learn_anew(second, period);
        }
    }

    /// [`learn`](Self::learn) for a second newer than the newest learned: once a second,
    /// out of the line of every call. Of readings racing with the same second, the first
    /// pairs it.
    #[cold]
    #[inline(never)]
    fn learn_anew(&self, second: u64, period: impl FnOnce(u64, u64) -> Option<CoarsePeriod>) {
        let next = second.saturating_add(1);
        if self.learned.fetch_max(next, Ordering::AcqRel) >= next {
            return;
        }
        let Some(from) = second.checked_mul(NANOS_PER_SECOND) else {
            return;
        };
        let Some(until) = from.checked_add(NANOS_PER_SECOND) else {
            return;
        };
        if let Some(paired) = period(from, until) {
            self.until.fetch_max(paired.until, Ordering::Release);
        }
    }
}

/// A retry the budget allowed: where it was counted, to give it back if no attempt follows.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Withdrawal {
    second: u64,
}

/// A withdrawal not yet spent: given back when dropped, unless [`spend`](Self::spend) said
/// an attempt started. A call cancelled in its backoff (a deadline, a client gone) or whose
/// retry the breaker rejects makes no retry, and must leave the budget as it found it.
#[must_use = "dropped, the withdrawal is given back"]
pub(crate) struct Unspent<'a> {
    budget: &'a RetryBudget,
    withdrawal: Withdrawal,
}

impl Unspent<'_> {
    /// The retry's attempt started: the withdrawal is spent, and counted as a retry.
    pub(crate) fn spend(self) {
        self.budget.count_retry();
        std::mem::forget(self);
    }
}

impl Drop for Unspent<'_> {
    fn drop(&mut self) {
        self.budget.refund(self.withdrawal);
    }
}

/// One breaker's retry budget, and its lifetime counts.
pub(crate) struct RetryBudget {
    first: Buckets,
    retries: Buckets,
    retried: AtomicU64,
    exhausted: AtomicU64,
    present: Present,
}

impl RetryBudget {
    pub(crate) fn new() -> Self {
        Self {
            first: Buckets::new(),
            retries: Buckets::new(),
            retried: AtomicU64::new(0),
            exhausted: AtomicU64::new(0),
            present: Present::new(),
        }
    }

    /// The present second on `clock` (the breaker's), as the budget counts it: on the
    /// production clock, on its coarse twin while that proves the second (see [`Present`]);
    /// on any other clock, read as it is. Inlined into the runner, where a call of its own
    /// cost more than the other clocks' reading.
    #[inline(always)]
    pub(crate) fn second(&self, clock: &ClockSource) -> u64 {
        match clock {
            ClockSource::Counter => match self.present.surely() {
                Some(second) => second,
                None => self.second_precise(clock),
            },
            _ => second_of(LazyNow::new(clock).ticks()),
        }
    }

    /// [`second`](Self::second) on the production clock itself, learned for the coarse one.
    #[inline(never)]
    fn second_precise(&self, clock: &ClockSource) -> u64 {
        let second = second_of(LazyNow::new(clock).ticks());
        self.present
            .learn(second, |from, until| clock.coarse_period(from, until));
        second
    }

    /// Counts a first attempt made at `second`.
    pub(crate) fn deposit(&self, second: u64) {
        self.first.add(second);
    }

    /// Takes one retry at `second` if `limit` allows it, or counts the budget exhausted.
    ///
    /// Retries are counted only into the bucket of the present second, so the other nine
    /// are summed once, and the compare-and-swap on the present one decides: two callers
    /// racing for the last retry cannot both take it.
    pub(crate) fn withdraw(&self, second: u64, limit: Limit) -> Option<Withdrawal> {
        let allowed = limit.allowed(self.first.sum(second, false));
        let before = self.retries.sum(second, true);
        let bucket = self.retries.bucket(second);
        let mut word = bucket.load(Ordering::Relaxed);
        loop {
            let (at, count) = current(word, second);
            if before.saturating_add(count) >= allowed {
                self.exhausted.fetch_add(1, Ordering::Relaxed);
                return None;
            }
            let new = pack(at, (count + 1).min(COUNT_MAX));
            match bucket.compare_exchange_weak(word, new, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Some(Withdrawal { second: at }),
                Err(seen) => word = seen,
            }
        }
    }

    /// [`withdraw`](Self::withdraw), held by a guard that gives it back unless spent.
    pub(crate) fn withdraw_held(&self, second: u64, limit: Limit) -> Option<Unspent<'_>> {
        let withdrawal = self.withdraw(second, limit)?;
        Some(Unspent {
            budget: self,
            withdrawal,
        })
    }

    /// Gives back a retry that never started (rejected by the breaker, or its call
    /// cancelled): it never reached the downstream. A bucket that moved on to another
    /// second keeps its count.
    pub(crate) fn refund(&self, withdrawal: Withdrawal) {
        let bucket = self.retries.bucket(withdrawal.second);
        let _ = bucket.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |word| {
            let (at, count) = unpack(word);
            (at == withdrawal.second && count > 0).then(|| pack(at, count - 1))
        });
    }

    /// Counts a retry the breaker admitted.
    pub(crate) fn count_retry(&self) {
        self.retried.fetch_add(1, Ordering::Relaxed);
    }

    /// Retries made, and failures returned because the budget was exhausted, since the
    /// breaker was made.
    pub(crate) fn totals(&self) -> (u64, u64) {
        (
            self.retried.load(Ordering::Relaxed),
            self.exhausted.load(Ordering::Relaxed),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NO_FLOOR: Limit = Limit {
        ppb: 300_000_000,
        floor: 0,
    };

    fn retries_allowed(budget: &RetryBudget, second: u64, limit: Limit) -> u64 {
        std::iter::from_fn(|| budget.withdraw(second, limit))
            .take(1000)
            .count() as u64
    }

    #[test]
    fn a_ratio_of_three_tenths_allows_three_retries_per_ten_first_attempts() {
        let b = RetryBudget::new();
        for _ in 0..10 {
            b.deposit(0);
        }
        assert_eq!(retries_allowed(&b, 0, NO_FLOOR), 3);
        assert_eq!(b.totals().1, 1, "the refusal is counted");
        for _ in 0..9 {
            b.deposit(0);
        }
        assert_eq!(
            retries_allowed(&b, 0, NO_FLOOR),
            2,
            "19 first attempts: 5.7"
        );
    }

    #[test]
    fn first_attempts_and_retries_expire_after_ten_seconds() {
        let b = RetryBudget::new();
        (0..10).for_each(|_| b.deposit(3));
        assert_eq!(retries_allowed(&b, 12, NO_FLOOR), 3);
        assert_eq!(retries_allowed(&b, 12, NO_FLOOR), 0);
        // Second 13 forgets the first attempts of second 3, not the retries of second 12.
        (0..10).for_each(|_| b.deposit(13));
        assert_eq!(retries_allowed(&b, 13, NO_FLOOR), 0);
        // Second 22 forgets them too.
        assert_eq!(retries_allowed(&b, 22, NO_FLOOR), 3);
        assert_eq!(
            retries_allowed(&b, 23, NO_FLOOR),
            0,
            "nothing left of second 13"
        );
    }

    #[test]
    fn the_floor_allows_its_retries_per_second_over_ten_seconds() {
        let b = RetryBudget::new();
        let floor = Limit { ppb: 0, floor: 2 };
        assert_eq!(retries_allowed(&b, 5, floor), 20);
        assert_eq!(retries_allowed(&b, 14, floor), 0);
        assert_eq!(retries_allowed(&b, 15, floor), 20);
    }

    #[test]
    fn a_refund_gives_back_a_retry_of_the_same_second_only() {
        let b = RetryBudget::new();
        let one = Limit { ppb: 0, floor: 0 };
        b.deposit(0);
        let all = Limit { ppb: PPB, floor: 0 };
        let w = b.withdraw(0, all).unwrap();
        assert!(b.withdraw(0, all).is_none());
        b.refund(w);
        assert!(b.withdraw(0, all).is_some());
        assert!(b.withdraw(0, one).is_none());
    }

    #[test]
    fn concurrent_withdrawals_never_exceed_the_budget() {
        let b = RetryBudget::new();
        (0..1000).for_each(|_| b.deposit(7));
        let limit = Limit {
            ppb: 200_000_000,
            floor: 0,
        };
        let taken: u64 = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| s.spawn(|| retries_allowed(&b, 7, limit)))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(taken, 200);
    }

    const SECOND: u64 = NANOS_PER_SECOND;

    /// A budget that learned second `second` from a precise reading, on a coarse clock
    /// `offset` ahead of the ticks and paired exactly.
    fn learned(second: u64, offset: u64) -> Present {
        let present = Present::new();
        present.learn(second, |from, until| {
            Some(CoarsePeriod {
                from: from + offset,
                until: until + offset,
            })
        });
        present
    }

    #[test]
    fn a_coarse_reading_well_inside_the_learned_second_tells_it() {
        let offset = 7 * SECOND + 123;
        let p = learned(42, offset);
        let start = 42 * SECOND + offset;
        assert_eq!(p.surely_at(start), Some(42));
        assert_eq!(p.surely_at(start + SECOND / 2), Some(42));
        // A coarse reading trails the precise one: one from before the second's start
        // still tells the second a precise reading already told.
        assert_eq!(p.surely_at(start - 5_000_000), Some(42));
    }

    #[test]
    fn a_coarse_reading_near_the_seconds_end_is_left_to_the_precise_clock() {
        let offset = 7 * SECOND + 123;
        let p = learned(42, offset);
        let end = 43 * SECOND + offset;
        // Sure until 20ms (two ticks) and a 1024th of the second (976,562ns, the clocks'
        // drift) before its end.
        let sure_until = end - 20_000_000 - 976_562;
        assert_eq!(p.surely_at(sure_until - 1), Some(42));
        assert_eq!(p.surely_at(sure_until), None);
        assert_eq!(p.surely_at(end - 1), None);
        assert_eq!(p.surely_at(end), None);
        assert_eq!(p.surely_at(end + SECOND / 2), None, "in the next second");
    }

    #[test]
    fn each_second_is_paired_once_and_only_the_newest() {
        let p = learned(42, 0);
        let mut asked = Vec::new();
        for second in [42, 41, 43, 43, 42, 45] {
            p.learn(second, |from, until| {
                asked.push((from, until));
                None
            });
        }
        assert_eq!(
            asked,
            [(43 * SECOND, 44 * SECOND), (45 * SECOND, 46 * SECOND)]
        );
        // 43 and 45 found no coarse twin: the pairing of 42 stays, and a coarse reading
        // within 42 tells the newest second learned. (It cannot come after a precise
        // reading of 45, which the `learned` it read was raised by; one that does come
        // after it is past 42's end, and proves nothing.)
        assert_eq!(p.learned.load(Ordering::Relaxed), 46);
        assert_eq!(p.until.load(Ordering::Relaxed), 43 * SECOND);
        assert_eq!(p.surely_at(42 * SECOND + SECOND / 2), Some(45));
    }

    #[test]
    fn a_clock_without_a_coarse_twin_is_always_read() {
        let p = Present::new();
        assert_eq!(p.surely(), None, "nothing learned");
        p.learn(0, |_, _| None);
        assert_eq!(p.learned.load(Ordering::Relaxed), 1);
        assert_eq!(p.surely(), None);
        assert_eq!(p.surely_at(SECOND / 2), None);
        let b = RetryBudget::new();
        let manual = crate::clock::ManualClock::new();
        let clock = ClockSource::custom(manual.clone());
        assert_eq!(b.second(&clock), 0);
        manual.advance(std::time::Duration::from_millis(2_500));
        assert_eq!(b.second(&clock), 2);
        assert_eq!(
            b.present.learned.load(Ordering::Relaxed),
            0,
            "nothing learned"
        );
    }

    #[test]
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn the_production_clock_pairs_its_second_with_the_coarse_clock() {
        let b = RetryBudget::new();
        let clock = ClockSource::Counter;
        let second = b.second(&clock);
        let until = b.present.until.load(Ordering::Relaxed);
        assert_eq!(b.present.learned.load(Ordering::Relaxed), second + 1);
        assert_ne!(until, 0, "paired");
        // Whatever the coarse clock proves now is the second learned, or a later one read
        // precisely.
        let again = b.second(&clock);
        assert!(
            again == second || again == second + 1,
            "{second} then {again}"
        );
    }

    #[test]
    fn limits_are_exact_in_integers() {
        let third = Limit {
            ppb: 300_000_000,
            floor: 0,
        };
        assert_eq!(third.allowed(10), 3);
        assert_eq!(third.allowed(9), 2);
        assert_eq!(
            Limit {
                ppb: PPB,
                floor: u64::from(u32::MAX)
            }
            .allowed(u64::MAX),
            u64::MAX
        );
    }
}
