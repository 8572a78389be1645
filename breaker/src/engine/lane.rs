//! The time window's lane: CLOSED successes counted without the lock while none of them can
//! trip the window.
//!
//! A time window is judged under the machine's lock. Once it has been judged (at least
//! `min_calls` completed) with its failure rate below the threshold, and calls are not timed
//! (no slow calls to judge), another success in its newest bucket only lowers the rate: it
//! needs counting, not judging. After every operation under the lock that leaves the window
//! so, the lock *opens* the lane for that bucket ([`TimeLane::open`]); a success of the
//! breaker's generation whose clock reading proves the bucket still holds the present adds
//! one to the lane's word in one compare-and-swap ([`TimeLane::count_success`]). Every
//! operation under the lock first *closes* the lane ([`TimeLane::close`]) and adds what it
//! counted to that bucket, so every count read under the lock is exact.
//!
//! The word is `tag << TAG_SHIFT | OPEN | pending`. Closing swaps in a new tag with no
//! `OPEN` and no pending successes, so a success that read the lane before it was closed
//! fails its swap, whatever the lock did since (a rotation of the buckets, a new state, a
//! new generation), and takes the lock instead. Nothing but the lock opens or closes the
//! lane, so under the lock a closed word stays as it is.
//!
//! The bucket's end, on the coarse clock or in ticks, is stored before the word that opens
//! the lane, and read after it: a reading of a later bucket's end means the lock closed
//! the lane before storing it, and the swap then fails. Likewise the admission word, which
//! the lock stores before the lane is opened: a later generation's means the lane was closed.

use crate::clock::{ClockSource, CoarsePeriod};
use crate::sync::{AtomicU64, Ordering};

use super::word::{Stamp, Word};

/// Pending successes fill the low bits; a lane that holds this many takes no more.
const PENDING: u64 = (1 << 24) - 1;
/// The lane counts successes.
const OPEN: u64 = 1 << 24;
const TAG_SHIFT: u32 = 25;

/// Where the lane's bucket ends, as the machine tells it when the lane may open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LaneBucket {
    /// The bucket on the coarse clock, if the window has paired it.
    pub(crate) coarse: Option<CoarsePeriod>,
    /// The clock's ticks at which the bucket ends.
    pub(crate) end: u64,
}

/// The lane of a time window's successes (see the module's docs).
#[derive(Debug, Default)]
pub(crate) struct TimeLane {
    word: AtomicU64,
    /// The bucket on the coarse clock; `coarse_until` is 0 when it has not been paired.
    coarse_from: AtomicU64,
    coarse_until: AtomicU64,
    /// The bucket's end in ticks, read when `coarse_until` is 0.
    end: AtomicU64,
}

impl TimeLane {
    /// Under the lock, before the machine is read or changed: closes the lane with a new
    /// tag and returns the successes it counted since it was opened, for the bucket it was
    /// opened for.
    #[inline]
    pub(crate) fn close(&self) -> u64 {
        // Only the lock opens the lane: a closed word read here stays closed.
        let word = self.word.load(Ordering::Relaxed);
        if word & OPEN == 0 {
            return 0;
        }
        let closed = ((word >> TAG_SHIFT).wrapping_add(1)) << TAG_SHIFT;
        self.word.swap(closed, Ordering::AcqRel) & PENDING
    }

    /// Under the lock, after the admission word is published: opens the lane for `bucket`,
    /// the newest bucket of a window that no success can trip.
    #[inline]
    pub(crate) fn open(&self, bucket: LaneBucket) {
        let coarse = bucket.coarse.unwrap_or_default();
        self.coarse_from.store(coarse.from, Ordering::Release);
        self.coarse_until.store(coarse.until, Ordering::Release);
        self.end.store(bucket.end, Ordering::Release);
        let closed = self.word.load(Ordering::Relaxed);
        debug_assert_eq!(closed & (OPEN | PENDING), 0, "opened twice");
        self.word.store(closed | OPEN, Ordering::Release);
    }

    /// Counts a success of the permit stamped `stamp` if the lane is open in its
    /// generation (`word` reads the admission word) and the clock proves the lane's bucket
    /// holds the present; says whether it did. If not, nothing was written.
    #[inline]
    pub(crate) fn count_success(
        &self,
        stamp: Stamp,
        word: impl FnOnce() -> Word,
        clock: &ClockSource,
    ) -> bool {
        let mut seen = self.word.load(Ordering::Acquire);
        if seen & OPEN == 0 || !stamp.is(word()) || !self.holds_present(clock) {
            return false;
        }
        loop {
            if seen & PENDING == PENDING {
                return false;
            }
            match self.word.compare_exchange_weak(
                seen,
                seen + 1,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                // Another success: the same lane, try again.
                Err(found) if found & !PENDING == seen & !PENDING => seen = found,
                // Closed since: the lock decides.
                Err(_) => return false,
            }
        }
    }

    /// Whether the clock proves the lane's bucket has not ended: the coarse clock if the
    /// bucket was paired with it (unsure near the end: then no), else the clock's ticks.
    #[inline]
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
