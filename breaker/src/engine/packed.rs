//! A count window of up to [`MAX_PACKED`] calls in one atomic word, recorded without a lock.
//!
//! # Layout
//!
//! ```text
//!  63                    27   26      25    24 ..... 20   19 ............ 0
//! [ generation tag (37 bits) ][SEALED][FULL][  credit  ][ calls, newest lowest ]
//! ```
//!
//! One bit per completed call, 1 for a failure. The newest call enters at the *entry bit*,
//! `20 - capacity`, and every result moves the calls before it up one bit: it adds the calls
//! to themselves. A sentinel bit sits just above the oldest call, so the word tells how many
//! calls the window holds: an empty window is the entry bit alone. The result that fills the
//! window carries the sentinel out of bit 19, and sets `FULL` instead; from then on the
//! oldest call, at bit 19, leaves as each new one enters, carried into the *credit* above.
//!
//! The credit counts failures down: it is 31 less the failures the window holds. A failure
//! that enters takes one from it, and one that leaves is the carry that gives it back, so in
//! a full window, the common case, a result is one addition, `word + calls + entered`, with
//! every position fixed whatever the capacity, and the failures kept without a popcount
//! (at most 20, so the credit stays within its five bits). Slow calls are not kept: a
//! breaker that times its calls uses the locked [`CountWindow`](super::CountWindow).
//!
//! # Why a stale result can never be counted
//!
//! Recording is one compare-and-swap of the whole word, so the window, the generation it
//! belongs to and whether it is still open to results change together or not at all:
//!
//! - A window is created (under the breaker's lock) when its generation enters CLOSED, with
//!   that generation's tag, and is stored *before* the generation is published to admission.
//! - Leaving CLOSED (under the lock) *seals* the window, or, for a CLOSED of a new
//!   generation (a reset), swaps in the new generation's word; a result whose recording
//!   trips the breaker seals it in the same swap that adds it. No result's swap succeeds on
//!   a sealed word or on another generation's: that write is the instant CLOSED ends for
//!   results, and nothing recorded after it counts.
//! - The lock writes the word only as the machine asks, after the operation that decided it
//!   (`engine/packed_owner.rs`); where the machine judges the word's calls, the lock seals
//!   the word first, so that they are the calls it writes back.
//! - A recorder compares the full generation of its permit with the breaker's admission word
//!   first, then swaps only a word that carries its generation's tag and is not sealed.
//!
//! A success into a full window of successes leaves the word as it is, without a swap. The
//! breaker checks this first, against the full word of the current CLOSED, with no check of
//! the generation: if the window holds that word it is open and full of successes, and a
//! success of its generation changes nothing, while one of another generation is discarded,
//! which changes nothing either.
//!
//! So a result is counted only into the window of the generation that admitted it, while
//! that generation is CLOSED. The tag is the generation's low 37 bits; for a result to be
//! misfiled, the breaker would have to go through 2^37 state changes, each under its lock,
//! between the recorder's check of the generation and its swap, a few instructions apart.

use crate::rule::{reaches, Totals};
use crate::sync::{AtomicU64, Ordering};

/// The largest count window kept in one word.
pub(crate) const MAX_PACKED: u32 = 20;

/// The calls of a window, and the sentinel above them until it is full.
const CALLS_MASK: u64 = (1 << MAX_PACKED) - 1;
/// Where the sentinel stands when one more result fills the window.
const LAST_CALL: u64 = 1 << (MAX_PACKED - 1);
/// The credit: `CREDIT - failures`, in five bits.
const CREDIT_SHIFT: u32 = MAX_PACKED;
const CREDIT_MASK: u64 = 0x1f << CREDIT_SHIFT;
const CREDIT: u64 = 31;
/// One failure's worth of credit.
const ONE_FAILURE: u64 = 1 << CREDIT_SHIFT;
/// The window holds `capacity` calls.
const FULL: u64 = 1 << (MAX_PACKED + 5);
const SEALED: u64 = 1 << (MAX_PACKED + 6);
const TAG_SHIFT: u32 = MAX_PACKED + 7;
const COUNTS_MASK: u64 = CALLS_MASK | CREDIT_MASK | FULL;
const _: () = assert!(
    COUNTS_MASK == SEALED - 1,
    "the counts are the bits below the seal"
);

/// What became of one recorded result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Packed {
    /// Counted; the breaker stays closed.
    Counted,
    /// Counted, and it trips the breaker: the window is sealed, the caller must open it.
    Tripped,
    /// The window is sealed: CLOSED is ending or has ended for this generation.
    Sealed,
    /// The window belongs to another generation: the result is discarded.
    Stale,
}

/// When the window's counts open the breaker: the machine's rule ([`reaches`]), with the
/// fewest failures that trip a full window worked out once.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Threshold {
    pub(crate) min_calls: u32,
    pub(crate) failure_rate: f64,
    /// The fewest failures that trip a full window: `failures >= when_full` is the rule's
    /// `failures / capacity >= rate`, computed once with the same division, so that the
    /// common case (a full window) compares integers.
    pub(crate) when_full: u32,
}

impl Threshold {
    pub(crate) fn new(capacity: u32, min_calls: u32, failure_rate: f64) -> Self {
        let trips = |failures| reaches(failures, capacity, min_calls, failure_rate);
        Self {
            min_calls,
            failure_rate,
            when_full: (1..=capacity).find(|&f| trips(f)).unwrap_or(u32::MAX),
        }
    }

    /// Whether a window of `capacity` with the counts of `word`, which holds `failures`,
    /// trips.
    #[inline]
    fn trips(self, word: u64, failures: u32, capacity: u32) -> bool {
        // Rates are in (0, 1], so a window without failures never trips: callers that know
        // there are none need not ask.
        if word & FULL != 0 {
            return failures >= self.when_full;
        }
        reaches(
            failures,
            calls(word, capacity),
            self.min_calls,
            self.failure_rate,
        )
    }
}

/// The window word; see the module documentation.
#[derive(Debug)]
pub(crate) struct PackedWindow {
    bits: AtomicU64,
}

impl PackedWindow {
    /// A sealed window of no generation: nothing is counted until [`open`](Self::open).
    pub(crate) fn new() -> Self {
        Self {
            bits: AtomicU64::new(SEALED | FULL | CREDIT << CREDIT_SHIFT),
        }
    }

    fn tag(generation: u64) -> u64 {
        generation << TAG_SHIFT
    }

    /// Stores `calls` as the window of `generation`: open to its results if `open`, else
    /// sealed. Called under the breaker's lock, before the generation is published, and only
    /// over a sealed word or a word of an older generation, whose results no longer count:
    /// so no result is lost.
    ///
    /// A swap, not a store: it reads the word as every result left it, so it comes after
    /// each of their swaps in the word's order of writes, which a plain store need not in the
    /// model checker's memory model (a result that swapped in an older generation's word
    /// could otherwise be read after it). It runs at a change of state or configuration only.
    pub(crate) fn store(&self, generation: u64, calls: PackedCalls, open: bool) {
        let sealed = if open { 0 } else { SEALED };
        self.bits
            .swap(Self::tag(generation) | sealed | calls.0, Ordering::AcqRel);
    }

    /// Ends counting for the current generation, and returns the calls the window holds,
    /// which no result changes from here on.
    pub(crate) fn seal(&self) -> PackedCalls {
        PackedCalls(self.bits.fetch_or(SEALED, Ordering::AcqRel) & COUNTS_MASK)
    }

    /// The calls the window holds as it stands, which an open window's results may change
    /// the next moment: to be shown, never judged.
    pub(crate) fn read(&self) -> PackedCalls {
        PackedCalls(self.word() & COUNTS_MASK)
    }

    #[cfg(test)]
    fn is_sealed(&self) -> bool {
        self.bits.load(Ordering::Acquire) & SEALED != 0
    }

    /// The word of a full window of successes open for `generation`, whatever its capacity:
    /// the one word a success leaves as it is.
    pub(crate) fn full_of_successes(generation: u64) -> u64 {
        Self::tag(generation) | FULL | CREDIT << CREDIT_SHIFT
    }

    /// A word no window ever holds (sealed, full of failures and not one counted).
    pub(crate) const NEVER: u64 = u64::MAX;

    /// The window's word as it stands: compare it with a word of
    /// [`full_of_successes`](Self::full_of_successes), then hand it to
    /// [`record_once`](Self::record_once). A window holding such a word is full of successes
    /// and still open for results, so a success leaves it as it is whichever generation the
    /// success is of (a result of another generation is discarded anyway): no write, and a
    /// healthy breaker's calls share the window's cache line.
    ///
    /// Acquire, as every read of the word that a result is judged from: a word published by
    /// `store` under the lock must come with the thresholds stored before it (no
    /// instruction on x86).
    #[inline]
    pub(crate) fn word(&self) -> u64 {
        self.bits.load(Ordering::Acquire)
    }

    #[cfg(test)]
    fn holds(&self, full: u64) -> bool {
        self.word() == full
    }

    /// Adds one outcome to a window of `capacity` calls, if it is `generation`'s and not
    /// sealed.
    pub(crate) fn record(
        &self,
        generation: u64,
        capacity: u32,
        failure: bool,
        threshold: impl Fn() -> Threshold,
    ) -> Packed {
        let tag = Self::tag(generation);
        let entered = entered(capacity, failure);
        let mut current = self.word();
        loop {
            if current & !COUNTS_MASK != tag {
                return if current & !(COUNTS_MASK | SEALED) != tag {
                    Packed::Stale
                } else {
                    Packed::Sealed
                };
            }
            let mut next = step(current, entered);
            let failures = failures(next);
            let tripped = failures != 0 && threshold().trips(next, failures, capacity);
            if tripped {
                next |= SEALED;
            }
            match self.bits.compare_exchange_weak(
                current,
                next,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) if tripped => return Packed::Tripped,
                Ok(_) => return Packed::Counted,
                Err(seen) => current = seen,
            }
        }
    }

    /// [`record`](Self::record)'s common case in one attempt, from `current`, the word as
    /// the caller last found it: the window is `generation`'s and open, and the result
    /// cannot trip it: a success into a full window, a success into a window still filling
    /// that holds no failure, or a failure into a full window that leaves it below
    /// `when_full` failures (see [`Threshold`]). `capacity` is asked only for a failure.
    /// Returns the word it swapped in; or, if it wrote nothing (and `record` decides), the
    /// word it found: `current`, or the word that failed the swap. (A success into a full
    /// window of successes swaps the word for itself: callers that read the word check for it
    /// first, and write nothing.)
    ///
    /// `current` need not be the word as it stands: every judgement here is made of
    /// `current`, and the swap writes only if the window still holds it, so a word the
    /// window no longer holds costs a failed swap and nothing else. A thread that records
    /// call after call can so start from the word its last swap left, rather than read the
    /// window's line again just after its own swap of it (a read that waits for that swap
    /// to be written back, longer than the swap itself takes).
    ///
    /// A success into a full window is not judged: it takes the oldest call out and adds
    /// none of its failures, so the window's rate cannot rise, and the window was judged
    /// when its last failure entered, or when the breaker was last reconfigured (see
    /// `Machine::reconfigure`).
    #[inline(always)]
    pub(crate) fn record_once(
        &self,
        current: u64,
        generation: u64,
        failure: bool,
        capacity: impl FnOnce() -> u32,
        when_full: impl FnOnce() -> u32,
    ) -> Result<u64, u64> {
        // The tag and the seal at once: the counts are the word's low bits, and nothing
        // above them may differ.
        if current ^ Self::tag(generation) > COUNTS_MASK {
            return Err(current);
        }
        let next = if failure {
            let capacity = capacity();
            if capacity == 0 {
                return Err(current);
            }
            let next = step(current, entered(capacity, true));
            if next & FULL == 0 || failures(next) >= when_full() {
                return Err(current);
            }
            next
        } else if current & FULL != 0 {
            step_full(current, 0)
        } else if current & CREDIT_MASK == CREDIT << CREDIT_SHIFT {
            step_filling(current, 0)
        } else {
            // Until it is full, a success brings the window closer to its minimum of
            // calls, which a window holding failures may then reach tripped.
            return Err(current);
        };
        // Strong: a spurious failure would send a result the long way for nothing.
        self.bits
            .compare_exchange(current, next, Ordering::AcqRel, Ordering::Acquire)
            .map(|_| next)
    }
}

/// A packed window's calls as plain data: the counts of its word, without its generation or
/// seal. The lock reads them from a sealed word, so that no result changes them while the
/// machine judges them, and writes them back with [`PackedWindow::store`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PackedCalls(u64);

impl PackedCalls {
    /// No calls in a window of `capacity`.
    pub(crate) fn empty(capacity: u32) -> Self {
        Self(empty(capacity))
    }

    /// A window of `capacity` holding `outcomes` (failure bits, oldest first): a locked
    /// window's calls, when the configuration moves the breaker to a packed one.
    pub(crate) fn of(capacity: u32, outcomes: impl Iterator<Item = bool>) -> Self {
        Self(outcomes.fold(empty(capacity), |word, failure| {
            step(word, entered(capacity, failure))
        }))
    }

    /// The counts of a window of `capacity` calls.
    pub(crate) fn totals(self, capacity: u32) -> Totals {
        Totals {
            calls: calls(self.0, capacity),
            failures: failures(self.0),
            slow: 0,
        }
    }

    /// The failure bits of the calls in a window of `capacity` calls, oldest first.
    pub(crate) fn outcomes(self, capacity: u32) -> impl Iterator<Item = bool> {
        let word = self.0;
        let entry = MAX_PACKED - capacity;
        (0..calls(word, capacity))
            .rev()
            .map(move |i| word >> (entry + i) & 1 != 0)
    }
}

/// The bit where a window of `capacity` calls takes its newest call.
#[inline]
fn entry(capacity: u32) -> u64 {
    1 << (MAX_PACKED - capacity)
}

/// The counts of an empty window of `capacity` calls: the sentinel at the entry bit, and
/// all the credit.
fn empty(capacity: u32) -> u64 {
    CREDIT << CREDIT_SHIFT | entry(capacity)
}

/// What a result adds to a window of `capacity` besides moving its calls up: for a
/// failure, its bit at the entry, less one failure's worth of credit.
#[inline]
fn entered(capacity: u32, failure: bool) -> u64 {
    if failure {
        entry(capacity).wrapping_sub(ONE_FAILURE)
    } else {
        0
    }
}

/// The failures a window word holds.
#[inline]
fn failures(word: u64) -> u32 {
    (CREDIT - ((word & CREDIT_MASK) >> CREDIT_SHIFT)) as u32
}

/// The counts after one more result, which adds `entered`.
#[inline]
fn step(word: u64, entered: u64) -> u64 {
    if word & FULL != 0 {
        step_full(word, entered)
    } else {
        step_filling(word, entered)
    }
}

/// [`step`] in a full window: every call moves up one bit (the calls are added to
/// themselves), and the oldest, from bit 19, leaves; a failure leaving carries one
/// failure's worth of credit back.
#[inline(always)]
fn step_full(word: u64, entered: u64) -> u64 {
    word.wrapping_add(word & CALLS_MASK).wrapping_add(entered)
}

/// [`step`] in a window still filling: the calls and the sentinel move up one bit; the
/// result that carries the sentinel out of bit 19 fills the window, and sets `FULL` for it
/// rather than give the credit one.
#[inline(always)]
fn step_filling(word: u64, entered: u64) -> u64 {
    let filled = if word & LAST_CALL != 0 {
        FULL - ONE_FAILURE
    } else {
        0
    };
    word.wrapping_add(word & CALLS_MASK)
        .wrapping_add(entered)
        .wrapping_add(filled)
}

/// The calls a window of `capacity` holds: all of them once full, or else the sentinel's
/// distance from the entry bit.
#[inline]
fn calls(word: u64, capacity: u32) -> u32 {
    if word & FULL != 0 {
        return capacity;
    }
    (63 - (word & CALLS_MASK).leading_zeros()) + capacity - MAX_PACKED
}

#[cfg(test)]
mod tests;
