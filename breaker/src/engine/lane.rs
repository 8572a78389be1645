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
//!
//! # The owner's successes
//!
//! The thread that owns the breaker's totals (`engine/tally.rs`), the only one in a
//! service that calls from one thread, counts its successes without a read-modify-write:
//! when that thread opens the lane under the lock, it is *given* the lane
//! ([`TimeLane::give_owner`]), and its own word, on a line of its own, holds the lane's tag
//! and a count of none. A success of the owner, checked as any other against the lane's
//! word, its generation and its bucket, adds one to that count with a plain store
//! ([`TimeLane::count_owned`]); a lane it was not given sends it to the lock, which gives
//! it the next. Every operation under the lock reads the count
//! ([`TimeLane::take_owned`]) and the machine takes what was not taken before into the
//! bucket and generation of the lane it belongs to (`Machine::owner_counted`).
//!
//! Without a read-modify-write, the owner cannot know that the lock closed the lane between
//! its check and its store: such a success is counted when the lock next reads the count,
//! into its own bucket while that bucket is in the window, and discarded if the generation
//! changed since, as it would have been had it come after the change. Nothing that happens
//! after the store misses it: whatever reads the breaker under the lock after it reads the
//! count first. Only the owner writes the count, outside the lock or (giving it a lane)
//! under it, so the lane it counts in changes only under the lock, with what the lock keeps
//! of that lane: its generation, its bucket, and how much of the count it took.

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
/// The owner's successes, below the tag of its lane; a count that holds this many takes no
/// more.
const OWNED: u64 = (1 << TAG_SHIFT) - 1;

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
    /// The bucket's index in its window, for the owner's successes counted late.
    pub(crate) index: u64,
}

/// Successes the owner counted in the lane it was given that the machine did not take yet,
/// with that lane's generation and bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OwnedSuccesses {
    pub(crate) generation: u64,
    pub(crate) bucket: u64,
    pub(crate) successes: u64,
}

/// What a lane counted between its opening and its closing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LaneCounts {
    pub(crate) successes: u64,
    /// The credit it was opened with, less the credit left.
    pub(crate) failures: u64,
}

/// The lane of a time window's results (see the module's docs).
#[derive(Debug, Default)]
pub(crate) struct TimeLane {
    word: AtomicU64,
    /// The successes of the breaker's totals' owner (`engine/tally.rs`) in the lane the lock
    /// gave it, `tag << TAG_SHIFT | successes`: written by the owner alone.
    owner: OwnLine,
    /// The bucket on the coarse clock; `coarse_until` is 0 when it has not been paired.
    coarse_from: AtomicU64,
    coarse_until: AtomicU64,
    /// The bucket's end in ticks, read when `coarse_until` is 0.
    end: AtomicU64,
    /// Read and written under the breaker's lock only: the credit and bucket the lane was
    /// last opened with, and the generation and bucket of the lane the owner was given and
    /// how much of its count was taken.
    credit: AtomicU64,
    bucket: AtomicU64,
    owner_generation: AtomicU64,
    owner_bucket: AtomicU64,
    owner_taken: AtomicU64,
}

/// A word on a cache line of its own: the owner's count, away from the lane's word, which
/// the other threads swap.
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
        let left = (counted & CREDIT) >> CREDIT_SHIFT;
        Some(LaneCounts {
            successes: counted & SUCCESSES,
            failures: self.credit.load(Ordering::Relaxed).saturating_sub(left),
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
        let credit = u64::from(bucket.credit.min(MAX_CREDIT));
        self.credit.store(credit, Ordering::Relaxed);
        self.bucket.store(bucket.index, Ordering::Relaxed);
        self.word
            .store(closed | OPEN | credit << CREDIT_SHIFT, Ordering::Release);
    }

    /// Counts a success, or a `failure`, of the permit stamped `stamp` if the lane is open
    /// in its generation (`word` reads the admission word), the clock proves the lane's
    /// bucket holds the present and, for a failure, credit is left; says whether it did. If
    /// not, nothing was written.
    ///
    /// A success of the breaker's totals' `owner` goes to its own count
    /// ([`count_owned`](Self::count_owned)); every other result swaps the word.
    #[inline(always)]
    pub(crate) fn count(
        &self,
        stamp: Stamp,
        failure: bool,
        word: impl Fn() -> Word,
        clock: &ClockSource,
        owner: bool,
    ) -> bool {
        if owner && !failure {
            return self.count_owned(stamp, word, clock);
        }
        self.count_swapped(stamp, failure, word, clock)
    }

    /// The owner's success: one more in its own count, with a plain store, if the lock gave
    /// it the lane that is open (see the module's docs); if not, the lock decides, and gives
    /// it the lane it opens next.
    ///
    /// The word is read again after the bucket's end and the admission word: the same lane
    /// then means they were that lane's (the lock stores a later lane's only after closing
    /// this one, with a new tag), so the success is of that lane's generation, at a time in
    /// its bucket. A swap needs no second reading: it fails on a closed lane by itself.
    #[inline(always)]
    fn count_owned(&self, stamp: Stamp, word: impl Fn() -> Word, clock: &ClockSource) -> bool {
        let seen = self.word.load(Ordering::Acquire);
        if seen & OPEN == 0 || !stamp.is(word()) || !self.holds_present(clock) {
            return false;
        }
        let owned = self.owner.0.load(Ordering::Relaxed);
        let lane = self.word.load(Ordering::Acquire) >> TAG_SHIFT;
        if lane != seen >> TAG_SHIFT || owned >> TAG_SHIFT != lane || owned & OWNED == OWNED {
            return false;
        }
        self.owner.0.store(owned + 1, Ordering::Release);
        true
    }

    /// [`count`](Self::count) by a compare-and-swap of the word: a failure, or a success of
    /// a thread that does not own the totals.
    #[inline(never)]
    fn count_swapped(
        &self,
        stamp: Stamp,
        failure: bool,
        word: impl Fn() -> Word,
        clock: &ClockSource,
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
                Ok(_) => return true,
                // Another result: the same lane, try again.
                Err(found) if found & !COUNTS == seen & !COUNTS => seen = found,
                // Closed since: the lock decides.
                Err(_) => return false,
            }
        }
    }

    /// Under the lock: what the owner counted in the lane it was given since the lock last
    /// took its count, if anything.
    #[inline]
    pub(crate) fn take_owned(&self) -> Option<OwnedSuccesses> {
        let counted = self.owner.0.load(Ordering::Acquire) & OWNED;
        let taken = self.owner_taken.load(Ordering::Relaxed);
        // Only the owner writes its count, and it is given a new lane, with a count of none,
        // only under the lock, after this.
        let successes = counted.checked_sub(taken).filter(|&n| n != 0)?;
        self.owner_taken.store(counted, Ordering::Relaxed);
        Some(OwnedSuccesses {
            generation: self.owner_generation.load(Ordering::Relaxed),
            bucket: self.owner_bucket.load(Ordering::Relaxed),
            successes,
        })
    }

    /// Under the lock, by the totals' owner, once the lane is open in `generation` and the
    /// owner's count of the lane before was taken ([`take_owned`](Self::take_owned)): gives
    /// the owner this lane, with a count of none.
    #[inline]
    pub(crate) fn give_owner(&self, generation: u64) {
        let tag = self.word.load(Ordering::Relaxed) >> TAG_SHIFT;
        self.owner_generation.store(generation, Ordering::Relaxed);
        self.owner_bucket
            .store(self.bucket.load(Ordering::Relaxed), Ordering::Relaxed);
        self.owner_taken.store(0, Ordering::Relaxed);
        self.owner.0.store(tag << TAG_SHIFT, Ordering::Release);
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
