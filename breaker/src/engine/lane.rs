//! The time window's lane: CLOSED results counted without the lock while none of them can
//! trip the window.
//!
//! A time window is judged under the machine's lock. Once it has been judged (at least
//! `min_calls` completed) with its failure rate below the threshold, and calls are not timed
//! (no slow calls to judge), another success in its newest bucket only lowers the rate, and
//! the next few failures cannot raise it to the threshold: the lock works out how many
//! ([`failure_room`](crate::rule::failure_room)), failures in a row with no success between.
//! Such results need counting, not judging. After every operation under the lock that
//! leaves the window so, the lock *opens* the lane for that bucket with that many failures
//! of *credit* ([`TimeLane::open`]); a result of the breaker's generation whose clock
//! reading proves the bucket still holds the present is counted in the lane's word in one
//! compare-and-swap ([`TimeLane::count`]): a success adds one to its successes, a failure
//! takes one credit, and a failure that finds no credit left goes to the lock, which judges
//! it. Every operation under the lock first *closes* the lane ([`TimeLane::close`]) and adds
//! what it counted to that bucket, so every count read under the lock is exact.
//!
//! Successes only lower the rate, so the failures the lane took, at most the credit, in any
//! order with any number of successes, leave the window under the threshold: no result
//! the lane counts trips the window, and the result that would is judged under the lock.
//!
//! The word is `tag << TAG_SHIFT | OPEN | credit << CREDIT_SHIFT | successes`. Closing swaps
//! in a new tag with no `OPEN`, no credit and no successes, so a result that read the lane
//! before it was closed fails its swap, whatever the lock did since (a rotation of the
//! buckets, a new state, a new generation), and takes the lock instead. Nothing but the
//! lock opens or closes the lane, so under the lock a closed word stays as it is.
//!
//! The bucket's end, on the coarse clock or in ticks, is stored before the word that opens
//! the lane, and read after it: a reading of a later bucket's end means the lock closed
//! the lane before storing it, and the swap then fails. Likewise the admission word, which
//! the lock stores before the lane is opened: a later generation's means the lane was closed.

use crate::clock::{ClockSource, CoarsePeriod};
use crate::sync::{AtomicU64, Ordering};

use super::word::{Stamp, Word};

/// Pending successes fill the low bits; a lane that holds this many takes no more.
const SUCCESSES: u64 = (1 << 20) - 1;
/// The failures the lane may still take, above the successes.
const CREDIT_SHIFT: u32 = 20;
const ONE_CREDIT: u64 = 1 << CREDIT_SHIFT;
/// The most credit a lane is opened with.
pub(crate) const MAX_CREDIT: u32 = (1 << 12) - 1;
const CREDIT: u64 = (MAX_CREDIT as u64) << CREDIT_SHIFT;
/// The lane counts results.
const OPEN: u64 = 1 << 32;
/// The counts, below the tag and `OPEN`.
const COUNTS: u64 = CREDIT | SUCCESSES;
const TAG_SHIFT: u32 = 33;
const _: () = assert!(COUNTS == OPEN - 1, "the counts are the bits below OPEN");

/// Where the lane's bucket ends, as the machine tells it when the lane may open, and the
/// failures it may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LaneBucket {
    /// The bucket on the coarse clock, if the window has paired it.
    pub(crate) coarse: Option<CoarsePeriod>,
    /// The clock's ticks at which the bucket ends.
    pub(crate) end: u64,
    /// The failures in a row that cannot trip the window (at most [`MAX_CREDIT`]).
    pub(crate) credit: u32,
}

/// What a lane counted between its opening and its closing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LaneCounts {
    pub(crate) successes: u64,
    /// The credit left: the failures it took are its opening credit less this.
    pub(crate) credit_left: u32,
}

/// The lane of a time window's results (see the module's docs).
#[derive(Debug, Default)]
pub(crate) struct TimeLane {
    word: AtomicU64,
    /// The word as the breaker's totals' owner (`engine/tally.rs`) last left it by a swap,
    /// written by it alone: the word its next swap tries first, unread.
    owner_seen: OwnLine,
    /// The bucket on the coarse clock; `coarse_until` is 0 when it has not been paired.
    coarse_from: AtomicU64,
    coarse_until: AtomicU64,
    /// The bucket's end in ticks, read when `coarse_until` is 0.
    end: AtomicU64,
}

/// A word on a cache line of its own: the owner's guess, away from the lane's word, which
/// a thread reads slowly just after its own swap of it.
#[derive(Debug, Default)]
#[repr(align(128))]
struct OwnLine(AtomicU64);

/// The word a result makes of `seen`: one more success, or one credit less for a failure;
/// `None` if the lane has no room for it (the lock then decides).
#[inline(always)]
fn counted(seen: u64, failure: bool) -> Option<u64> {
    if failure {
        (seen & CREDIT != 0).then(|| seen - ONE_CREDIT)
    } else {
        (seen & SUCCESSES != SUCCESSES).then(|| seen + 1)
    }
}

impl TimeLane {
    /// Under the lock, before the machine is read or changed: closes the lane with a new
    /// tag and returns what it counted since it was opened, for the bucket it was opened
    /// for. `None` if it was not open.
    #[inline]
    pub(crate) fn close(&self) -> Option<LaneCounts> {
        // Only the lock opens the lane: a closed word read here stays closed.
        let word = self.word.load(Ordering::Relaxed);
        if word & OPEN == 0 {
            return None;
        }
        let closed = ((word >> TAG_SHIFT).wrapping_add(1)) << TAG_SHIFT;
        let counted = self.word.swap(closed, Ordering::AcqRel);
        Some(LaneCounts {
            successes: counted & SUCCESSES,
            credit_left: ((counted & CREDIT) >> CREDIT_SHIFT) as u32,
        })
    }

    /// Under the lock, after the admission word is published: opens the lane for `bucket`,
    /// the newest bucket of a window that no success, nor `bucket.credit` failures, can trip.
    #[inline]
    pub(crate) fn open(&self, bucket: LaneBucket) {
        let coarse = bucket.coarse.unwrap_or_default();
        self.coarse_from.store(coarse.from, Ordering::Release);
        self.coarse_until.store(coarse.until, Ordering::Release);
        self.end.store(bucket.end, Ordering::Release);
        let closed = self.word.load(Ordering::Relaxed);
        debug_assert_eq!(closed & (OPEN | COUNTS), 0, "opened twice");
        let credit = u64::from(bucket.credit.min(MAX_CREDIT)) << CREDIT_SHIFT;
        self.word.store(closed | OPEN | credit, Ordering::Release);
    }

    /// Counts a success, or a `failure`, of the permit stamped `stamp` if the lane is open
    /// in its generation (`word` reads the admission word), the clock proves the lane's
    /// bucket holds the present and, for a failure, credit is left; says whether it did. If
    /// not, nothing was written.
    ///
    /// The breaker's totals' `owner` swaps first from the word its last swap left, unread
    /// (a read of the word just after the thread's own swap of it waits for that swap to
    /// be written back). That guess is a word of a lane the owner's own swap found open, and
    /// so saw opened, with its bucket's end and its generation's admission word: what the
    /// owner reads of them is that lane's, or a later one's, written after that lane was
    /// closed, and then the word is no longer the guess and the swap fails. A guess that
    /// fails for any reason leaves the decision to a reading of the word.
    #[inline(always)]
    pub(crate) fn count(
        &self,
        stamp: Stamp,
        failure: bool,
        word: impl Fn() -> Word,
        clock: &ClockSource,
        owner: bool,
    ) -> bool {
        if owner {
            let guess = self.owner_seen.0.load(Ordering::Relaxed);
            if guess & OPEN != 0 && stamp.is(word()) && self.holds_present(clock) {
                if let Some(next) = counted(guess, failure) {
                    if self
                        .word
                        .compare_exchange(guess, next, Ordering::AcqRel, Ordering::Relaxed)
                        .is_ok()
                    {
                        self.owner_seen.0.store(next, Ordering::Relaxed);
                        return true;
                    }
                }
            }
        }
        self.count_read(stamp, failure, word, clock, owner)
    }

    /// [`count`](Self::count) from a reading of the word: every thread's but the owner's,
    /// and the owner's when its guess failed.
    #[inline(never)]
    fn count_read(
        &self,
        stamp: Stamp,
        failure: bool,
        word: impl Fn() -> Word,
        clock: &ClockSource,
        owner: bool,
    ) -> bool {
        let mut seen = self.word.load(Ordering::Acquire);
        if seen & OPEN == 0 || !stamp.is(word()) || !self.holds_present(clock) {
            return false;
        }
        loop {
            let Some(next) = counted(seen, failure) else {
                return false;
            };
            match self
                .word
                .compare_exchange_weak(seen, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => {
                    if owner {
                        self.owner_seen.0.store(next, Ordering::Relaxed);
                    }
                    return true;
                }
                // Another result: the same lane, try again.
                Err(found) if found & !COUNTS == seen & !COUNTS => seen = found,
                // Closed since: the lock decides.
                Err(_) => return false,
            }
        }
    }

    /// Whether the clock proves the lane's bucket has not ended: the coarse clock if the
    /// bucket was paired with it (unsure near the end: then no), else the clock's ticks.
    #[inline(always)]
    fn holds_present(&self, clock: &ClockSource) -> bool {
        let until = self.coarse_until.load(Ordering::Acquire);
        if until != 0 {
            return ClockSource::coarse_left(|| self.coarse_from.load(Ordering::Acquire), until)
                .is_some();
        }
        let end = self.end.load(Ordering::Acquire);
        clock.ticks().is_some_and(|now| now < end)
    }
}
