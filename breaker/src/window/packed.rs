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
//! - Leaving CLOSED (under the lock) first *seals* the window, and a result whose recording
//!   trips the breaker seals it in the same swap that adds it. No swap succeeds on a sealed
//!   word: the seal is the instant CLOSED ends for results, and nothing recorded after it
//!   counts. A new CLOSED stores a new word with a new tag.
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

use crate::machine::reaches;
use crate::sync::{AtomicU64, Ordering};

use super::Totals;

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

    /// Starts an empty window of `capacity` calls for `generation`. Called under the
    /// breaker's lock, before the generation is published.
    pub(crate) fn open(&self, generation: u64, capacity: u32) {
        self.open_with(generation, capacity, std::iter::empty());
    }

    /// Starts a window for `generation` holding `outcomes` (failure bits, oldest first): a
    /// locked window's calls, when the configuration moves the breaker to a packed one.
    pub(crate) fn open_with(
        &self,
        generation: u64,
        capacity: u32,
        outcomes: impl Iterator<Item = bool>,
    ) {
        self.fill(generation, capacity, outcomes, 0);
    }

    /// Holds `outcomes` in a sealed window of `capacity` calls: the window of a breaker
    /// outside CLOSED, readable and never recorded into.
    pub(crate) fn sealed_with(&self, capacity: u32, outcomes: impl Iterator<Item = bool>) {
        self.fill(0, capacity, outcomes, SEALED);
    }

    fn fill(
        &self,
        generation: u64,
        capacity: u32,
        outcomes: impl Iterator<Item = bool>,
        sealed: u64,
    ) {
        let word = outcomes.fold(empty(capacity), |word, failure| {
            step(word, entered(capacity, failure))
        });
        self.bits
            .store(Self::tag(generation) | sealed | word, Ordering::Release);
    }

    /// Ends counting for the current generation; the counts stay readable.
    pub(crate) fn seal(&self) {
        self.bits.fetch_or(SEALED, Ordering::AcqRel);
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
    /// `open_with` under the lock must come with the thresholds stored before it (no
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

    /// [`record`](Self::record)'s common case in one attempt, from `current`, a
    /// [`word`](Self::word) read just before: the window is `generation`'s and open, and the
    /// result cannot trip it: a success into a full window, a success into a window still
    /// filling that holds no failure, or a failure into a full window that leaves it below
    /// `when_full` failures (see [`Threshold`]). `capacity` is asked only for a failure.
    /// Says whether the outcome was added; if not, nothing was written and `record` decides.
    /// (A success into a full window of successes would swap the word for itself: callers
    /// check for it first.)
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
    ) -> bool {
        // The tag and the seal at once: the counts are the word's low bits, and nothing
        // above them may differ.
        if current ^ Self::tag(generation) > COUNTS_MASK {
            return false;
        }
        let next = if failure {
            let capacity = capacity();
            if capacity == 0 {
                return false;
            }
            let next = step(current, entered(capacity, true));
            if next & FULL == 0 || failures(next) >= when_full() {
                return false;
            }
            next
        } else if current & FULL != 0 {
            step_full(current, 0)
        } else if current & CREDIT_MASK == CREDIT << CREDIT_SHIFT {
            step_filling(current, 0)
        } else {
            // Until it is full, a success brings the window closer to its minimum of
            // calls, which a window holding failures may then reach tripped.
            return false;
        };
        // Strong: a spurious failure would send a result the long way for nothing.
        self.bits
            .compare_exchange(current, next, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// The counts of a window of `capacity` calls.
    pub(crate) fn totals(&self, capacity: u32) -> Totals {
        let bits = self.bits.load(Ordering::Acquire);
        Totals {
            calls: calls(bits, capacity),
            failures: failures(bits),
            slow: 0,
        }
    }

    /// The failure bits of the calls in a window of `capacity` calls, oldest first.
    pub(crate) fn outcomes(&self, capacity: u32) -> impl Iterator<Item = bool> {
        let word = self.bits.load(Ordering::Acquire);
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
mod tests {
    use super::*;

    /// A threshold no window reaches.
    fn never() -> Threshold {
        Threshold {
            min_calls: u32::MAX,
            failure_rate: 1.0,
            when_full: u32::MAX,
        }
    }

    #[test]
    fn keeps_only_the_last_n_outcomes() {
        let w = PackedWindow::new();
        w.open(7, 3);
        for failure in [true, true, false, false] {
            assert_eq!(w.record(7, 3, failure, never), Packed::Counted);
        }
        assert_eq!((w.totals(3).calls, w.totals(3).failures), (3, 1));
        assert_eq!(w.outcomes(3).collect::<Vec<_>>(), [true, false, false]);
        for _ in 0..3 {
            w.record(7, 3, false, never);
        }
        assert_eq!((w.totals(3).calls, w.totals(3).failures), (3, 0));
        assert!(w.holds(PackedWindow::full_of_successes(7)));
    }

    #[test]
    fn failures_are_counted_as_they_enter_and_leave() {
        let w = PackedWindow::new();
        w.open(9, 5);
        let mut model = std::collections::VecDeque::new();
        let mut x = 0x9E37_79B9_u32;
        for _ in 0..500 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let failure = x.is_multiple_of(3);
            w.record(9, 5, failure, never);
            model.push_back(failure);
            if model.len() > 5 {
                model.pop_front();
            }
            let failures = model.iter().filter(|f| **f).count() as u32;
            let totals = w.totals(5);
            assert_eq!(
                (totals.calls, totals.failures),
                (model.len() as u32, failures)
            );
            assert!(w.outcomes(5).eq(model.iter().copied()));
        }
    }

    #[test]
    fn racing_recorders_lose_nothing_and_stale_ones_count_nothing() {
        let w = PackedWindow::new();
        w.open(2, 20);
        std::thread::scope(|s| {
            for t in 0..4 {
                let w = &w;
                s.spawn(move || {
                    for i in 0..5_000 {
                        if t % 2 == 0 {
                            // A permit of the generation before: never counted.
                            assert_eq!(w.record(1, 20, true, never), Packed::Stale);
                        } else if i < 8 {
                            assert_eq!(w.record(2, 20, i % 4 == 0, never), Packed::Counted);
                        }
                    }
                });
            }
        });
        let totals = w.totals(20);
        assert_eq!((totals.calls, totals.failures), (16, 4));
    }

    #[test]
    fn a_full_window_of_the_largest_size_fits() {
        let w = PackedWindow::new();
        w.open(u64::MAX, MAX_PACKED);
        for i in 0..100 {
            w.record(u64::MAX, MAX_PACKED, i % 2 == 0, never);
        }
        assert_eq!(w.totals(MAX_PACKED).calls, MAX_PACKED);
        assert_eq!(w.totals(MAX_PACKED).failures, MAX_PACKED / 2);
        assert!(!w.is_sealed());
    }

    /// The credit at both ends: a full window of failures, at every size, then of successes;
    /// a window of one call is filled by its first result.
    #[test]
    fn a_window_of_failures_then_of_successes_at_every_size() {
        for capacity in 1..=MAX_PACKED {
            let w = PackedWindow::new();
            w.open(5, capacity);
            for i in 1..=capacity {
                assert_eq!(w.record(5, capacity, true, never), Packed::Counted);
                assert_eq!(
                    (w.totals(capacity).calls, w.totals(capacity).failures),
                    (i, i)
                );
            }
            assert!(w.word() & FULL != 0, "{capacity}: full");
            for i in 1..=capacity {
                assert_eq!(w.record(5, capacity, false, never), Packed::Counted);
                let totals = w.totals(capacity);
                assert_eq!((totals.calls, totals.failures), (capacity, capacity - i));
            }
            assert!(w.holds(PackedWindow::full_of_successes(5)), "{capacity}");
            assert!(w.outcomes(capacity).all(|failure| !failure));
        }
    }

    #[test]
    fn other_generations_and_sealed_windows_count_nothing() {
        let w = PackedWindow::new();
        assert_eq!(
            w.record(0, 4, true, never),
            Packed::Sealed,
            "not opened yet"
        );
        w.open(0, 4);
        assert_eq!(w.record(1, 4, true, never), Packed::Stale);
        assert_eq!(w.record(0, 4, true, never), Packed::Counted);
        w.seal();
        assert_eq!(w.record(0, 4, true, never), Packed::Sealed);
        assert_eq!(w.totals(4).failures, 1, "a sealed window keeps its counts");
    }

    #[test]
    fn the_tripping_result_seals_the_window() {
        let w = PackedWindow::new();
        w.open(3, 4);
        let half = || Threshold::new(4, 2, 0.5);
        assert_eq!(w.record(3, 4, true, half), Packed::Counted, "below min");
        assert_eq!(
            w.record(3, 4, false, half),
            Packed::Tripped,
            "1 of 2 >= 0.5"
        );
        assert_eq!(w.record(3, 4, false, half), Packed::Sealed);
        assert_eq!(w.totals(4).calls, 2);
    }

    #[test]
    fn a_full_window_trips_as_the_division_says() {
        for (capacity, min, rate) in [(20, 10, 0.5), (3, 1, 0.34), (7, 7, 1.0), (10, 10, 0.3)] {
            let t = Threshold::new(capacity, min, rate);
            for failures in 0..=capacity {
                let ring = FULL | ((1 << failures) - 1) << (MAX_PACKED - capacity);
                let divided = f64::from(failures) / f64::from(capacity) >= rate && failures > 0;
                let tripped = t.trips(ring, failures, capacity);
                assert_eq!(tripped, divided, "{failures} of {capacity} at {rate}");
            }
        }
    }

    /// `record_once` adds what `record` would, or writes nothing: compared, outcome by
    /// outcome, with a window recorded only through `record`.
    #[test]
    fn record_once_adds_what_record_would_or_nothing() {
        // 9 failures of 10 trip: never reached here, so every outcome is counted.
        let t = Threshold::new(10, 5, 0.9);
        let (once, model) = (PackedWindow::new(), PackedWindow::new());
        once.open(4, 10);
        model.open(4, 10);
        let mut x = 0x2545_F491_u32;
        let (mut at_once, mut declined) = (0, 0);
        for _ in 0..400 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let failure = x.is_multiple_of(4);
            let before = once.word();
            if once.record_once(before, 4, failure, || 10, || t.when_full) {
                at_once += 1;
            } else {
                declined += 1;
                assert_eq!(once.word(), before, "declined: nothing written");
                assert_eq!(once.record(4, 10, failure, || t), Packed::Counted);
            }
            assert_eq!(model.record(4, 10, failure, || t), Packed::Counted);
            assert_eq!(once.word(), model.word());
        }
        assert!(
            at_once > 0 && declined > 0,
            "{at_once} at once, {declined} declined"
        );
    }

    #[test]
    fn record_once_declines_what_only_record_may_judge() {
        let t = Threshold::new(4, 2, 0.5);
        let w = PackedWindow::new();
        let once = |generation, failure| {
            w.record_once(w.word(), generation, failure, || 4, || t.when_full)
        };
        assert!(!once(0, false), "sealed: not opened yet");
        w.open(6, 4);
        assert!(!once(5, false), "another generation's window");
        assert!(!once(6, true), "a failure into a window not yet full");
        assert!(once(6, false));
        for _ in 0..3 {
            assert!(once(6, false));
        }
        assert_eq!(w.totals(4).calls, 4);
        assert!(once(6, true), "1 of 4 is below 0.5");
        assert!(
            !once(6, true),
            "2 of 4 trips: left to `record`, which seals"
        );
        assert_eq!((w.totals(4).calls, w.totals(4).failures), (4, 1));
        assert_eq!(w.record(6, 4, true, || t), Packed::Tripped);
        assert!(!once(6, false), "sealed");

        w.open(7, 4);
        assert_eq!(w.record(7, 4, true, never), Packed::Counted);
        assert!(
            !once(7, false),
            "a success into a window still filling, holding a failure"
        );
    }

    /// A success into a full window is taken without being judged, even one holding as many
    /// failures as trip it (as after a reconfiguration lowered the rate, which the breaker
    /// judges itself): it cannot raise the window's rate.
    #[test]
    fn record_once_takes_a_success_into_a_full_window_unjudged() {
        let t = Threshold::new(4, 2, 0.5);
        let w = PackedWindow::new();
        w.open(8, 4);
        for failure in [false, false, true, true] {
            assert_eq!(w.record(8, 4, failure, never), Packed::Counted);
        }
        let once = |failure| w.record_once(w.word(), 8, failure, || 4, || t.when_full);
        assert!(once(false), "the oldest success leaves, a success enters");
        assert_eq!(
            w.outcomes(4).collect::<Vec<_>>(),
            [false, true, true, false]
        );
        assert!(
            once(false),
            "the other success leaves: still 2 failures of 4"
        );
        assert_eq!(
            w.outcomes(4).collect::<Vec<_>>(),
            [true, true, false, false]
        );
        assert!(!once(true), "a failure is judged: 2 of 4 trips");
        assert!(!w.is_sealed());
    }
}
