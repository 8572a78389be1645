//! Lifetime call totals: how every admitted call ended, and how many were rejected, and why.
//!
//! The first thread to count becomes the tally's owner and counts into a row of counters,
//! which the breaker keeps apart from the lines every call reads, with a plain load and store: it is the row's only writer, so no
//! count is lost and no read-modify-write is paid. Any other thread adds to a stripe, one
//! per core rounded up to a power of two, each on cache lines of its own and grown the
//! first time another thread counts; threads sharing a stripe add atomically. A total is
//! the row plus every stripe, and each counter only grows, so a reading never goes back.
//! Breakers used from one thread (most breakers of a keyed family) never pay for stripes.

use std::cell::Cell;

use crate::sync::{AtomicU64, OnceLock, Ordering};
use crate::{Outcome, RejectReason};
#[cfg(loom)]
use loom::thread_local;

/// How a call asked of the breaker ended, as the totals count it: the endings every breaker
/// counts often, each with a counter in the owner's row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    Success,
    Failure,
    Ignored,
    /// Dropped without a result (a cancelled future), not while panicking.
    Cancelled,
    /// Rejected by OPEN: the one rejection on a fast path.
    RejectedOpen,
}

/// The endings few breakers see, or see on slow paths only: counted in the stripes alone,
/// so that the owner's row, in every breaker, holds only the five above.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RareEnding {
    RejectedHalfOpenFull,
    RejectedForcedOpen,
    RejectedThrottled,
    RejectedBulkhead,
    /// Admitted by a shadow breaker where an enforcing one would have rejected it; the call
    /// then ends as any other, and is counted again by how.
    ShadowRejected,
    RejectedFleetOpen,
    RejectedShed,
}

/// Counters of the owner's row: one per [`Ending`].
const HOT: usize = 5;
/// Counters of a stripe: the [`Ending`]s, then the [`RareEnding`] ones.
const ENDINGS: usize = HOT + 7;

impl Ending {
    /// The outcome the window sees: a cancelled call is not judged.
    pub(crate) fn outcome(self) -> Outcome {
        match self {
            Ending::Success => Outcome::Success,
            Ending::Failure => Outcome::Failure,
            _ => Outcome::Ignored,
        }
    }
}

impl RareEnding {
    /// The rare ending of a call rejected for `reason`; `None` for OPEN's, an [`Ending`].
    pub(crate) fn rejected(reason: RejectReason) -> Option<RareEnding> {
        match reason {
            RejectReason::Open => None,
            RejectReason::HalfOpenFull => Some(RareEnding::RejectedHalfOpenFull),
            RejectReason::ForcedOpen => Some(RareEnding::RejectedForcedOpen),
            RejectReason::Throttled => Some(RareEnding::RejectedThrottled),
            RejectReason::Bulkhead => Some(RareEnding::RejectedBulkhead),
            RejectReason::FleetOpen => Some(RareEnding::RejectedFleetOpen),
            RejectReason::Shed => Some(RareEnding::RejectedShed),
        }
    }
}

impl From<Outcome> for Ending {
    fn from(outcome: Outcome) -> Self {
        match outcome {
            Outcome::Success => Ending::Success,
            Outcome::Failure => Ending::Failure,
            Outcome::Ignored => Ending::Ignored,
        }
    }
}

/// Calls a breaker has seen since it was created, by how they ended.
///
/// Every admitted call ends exactly once, so at any quiet moment `success + failure +
/// ignored + cancelled` is the number of calls admitted; rejected calls are counted apart,
/// and split by reason in [`rejected_by`](Self::rejected_by).
/// Results the window discards (a call admitted before a state change finishing after it,
/// calls while disabled) are still counted here: they were made.
///
/// ```
/// use breakerbox::{Breaker, Config};
///
/// let b = Breaker::new("libraryd", Config::builder().count_window(3).min_calls(3).build()?);
/// b.try_acquire().unwrap().success();
/// drop(b.try_acquire().unwrap()); // cancelled: dropped without a result
/// b.try_acquire().unwrap().ignore();
/// b.try_acquire().unwrap().failure();
/// b.try_acquire().unwrap().failure(); // 2 of 3 failed: open
/// let _ = b.try_acquire().unwrap_err();
///
/// let t = b.snapshot().totals;
/// assert_eq!((t.success, t.failure, t.ignored, t.cancelled, t.rejected), (1, 2, 1, 1, 1));
/// assert_eq!((t.rejected_by.open, t.rejected_by.bulkhead), (1, 0));
/// assert_eq!(t.admitted(), 5);
/// # Ok::<(), breakerbox::config::ConfigError>(())
/// ```
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct CallTotals {
    /// Calls that reported a success (including business errors that `Classify` calls one).
    pub success: u64,
    /// Calls that reported a failure, or panicked while holding their permit.
    pub failure: u64,
    /// Calls whose result was reported as ignored.
    pub ignored: u64,
    /// Calls dropped without a result, e.g. a future cancelled by a timeout.
    pub cancelled: u64,
    /// Calls the breaker rejected, for any reason.
    pub rejected: u64,
    /// The rejected calls by reason; their sum is `rejected`.
    pub rejected_by: RejectedBy,
    /// Calls a shadow breaker ([`Config::shadow`](crate::Config::shadow)) admitted where an
    /// enforcing one would have rejected them; they are also counted by how they ended.
    pub shadow_rejected: u64,
    /// Retries made by [`Breaker::run`](crate::Breaker::run) (and the attribute's
    /// `retries`): attempts after a failed one that the breaker admitted. Each is counted in
    /// the endings above too.
    pub retries: u64,
    /// Failed calls returned without a retry they had left, because the retry budget was
    /// exhausted.
    pub retry_budget_exhausted: u64,
}

impl CallTotals {
    /// Calls admitted that have ended: `success + failure + ignored + cancelled`.
    pub fn admitted(&self) -> u64 {
        self.success + self.failure + self.ignored + self.cancelled
    }
}

/// The rejections of [`CallTotals`] by [`RejectReason`], a field per reason named as
/// [`RejectReason::as_str`] names it: `open + half_open_full + forced_open + throttled +
/// bulkhead + fleet_open + shed` is `CallTotals::rejected`.
///
/// ```
/// use breakerbox::{Breaker, Config};
///
/// let b = Breaker::new("libraryd", Config::builder().max_concurrent(1).build()?);
/// let held = b.try_acquire().unwrap();
/// let _ = b.try_acquire().unwrap_err(); // the one slot is taken
/// held.success();
/// b.force_open();
/// let _ = b.try_acquire().unwrap_err();
///
/// let t = b.snapshot().totals;
/// assert_eq!((t.rejected_by.bulkhead, t.rejected_by.forced_open, t.rejected), (1, 1, 2));
/// # Ok::<(), breakerbox::config::ConfigError>(())
/// ```
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct RejectedBy {
    /// Rejected by an OPEN breaker ([`RejectReason::Open`]).
    pub open: u64,
    /// Rejected by a HALF_OPEN breaker with every probe in flight
    /// ([`RejectReason::HalfOpenFull`]).
    pub half_open_full: u64,
    /// Rejected by a breaker forced open ([`RejectReason::ForcedOpen`]).
    pub forced_open: u64,
    /// Rejected by a recovery ramp admitting a share of calls ([`RejectReason::Throttled`]).
    pub throttled: u64,
    /// Rejected by a full bulkhead ([`RejectReason::Bulkhead`]).
    pub bulkhead: u64,
    /// Rejected by a breaker open for its fleet ([`RejectReason::FleetOpen`]).
    pub fleet_open: u64,
    /// Refused by adaptive throttling in CLOSED ([`RejectReason::Shed`]).
    pub shed: u64,
}

impl RejectedBy {
    /// The rejections for `reason`.
    #[cfg_attr(not(feature = "prometheus"), allow(dead_code))]
    pub(crate) const fn of(&self, reason: RejectReason) -> u64 {
        match reason {
            RejectReason::Open => self.open,
            RejectReason::HalfOpenFull => self.half_open_full,
            RejectReason::ForcedOpen => self.forced_open,
            RejectReason::Throttled => self.throttled,
            RejectReason::Bulkhead => self.bulkhead,
            RejectReason::FleetOpen => self.fleet_open,
            RejectReason::Shed => self.shed,
        }
    }

    /// Every rejection: the sum of the reasons (every field, by the destructuring: a reason
    /// added is a field added here too). Plain additions, on the path of every snapshot.
    fn sum(&self) -> u64 {
        let RejectedBy {
            open,
            half_open_full,
            forced_open,
            throttled,
            bulkhead,
            fleet_open,
            shed,
        } = *self;
        open + half_open_full + forced_open + throttled + bulkhead + fleet_open + shed
    }
}

/// A row of `N` counters: an [`Ending`]'s at `Ending as usize`, a [`RareEnding`] one's after them.
type Counters<const N: usize> = [AtomicU64; N];

fn counters<const N: usize>() -> Counters<N> {
    std::array::from_fn(|_| AtomicU64::new(0))
}

/// The owner's row: written by one thread only, with plain stores. The breaker keeps it
/// away from the lines every call reads, or its writes would evict them from other cores.
pub(crate) struct OwnerRow(Counters<HOT>);

impl OwnerRow {
    pub(crate) fn new() -> Self {
        Self(counters())
    }
}

/// A stripe: the counters of the threads that share it, alone on their pair of cache lines
/// (the hardware may fetch lines in pairs).
#[repr(align(128))]
struct Stripe(Counters<ENDINGS>);

/// The owner of a row no thread has counted into: never a thread's number (with
/// [`GUESSING`] or without), nor the 0 of a thread without one.
const NO_OWNER: u64 = u64::MAX;

/// The bit of [`Tally`]'s owner word that the owner sets while it records its results
/// into the breaker's packed window from its guess of the window's word rather than from
/// the word itself (see `engine/complete.rs`): the top bit, above every thread's number,
/// so that a thread that does not own the row never reads its own number there, set or not.
const GUESSING: u64 = 1 << 63;

/// How this thread stands to a [`Tally`]: its owner word less this thread's number, so that
/// one subtraction and one comparison tell the owner (and how it records) from the others.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Seat(u64);

impl Seat {
    /// This thread owns the row and records from the window's word as it stands.
    #[inline(always)]
    pub(crate) fn watching(self) -> bool {
        self.0 == 0
    }

    /// This thread owns the row and records from its guess of the window's word.
    #[inline(always)]
    pub(crate) fn guessing(self) -> bool {
        self.0 == GUESSING
    }

    /// This thread owns the row, whichever way it records.
    #[inline(always)]
    pub(crate) fn owned(self) -> bool {
        self.0 & !GUESSING == 0
    }
}

/// What every counting thread reads: who owns the row, and the stripes once grown.
pub(crate) struct Tally {
    /// The thread that writes the [`OwnerRow`] (see [`thread_number`]), with [`GUESSING`]
    /// while it guesses; `NO_OWNER` until one counts.
    owner: AtomicU64,
    stripes: OnceLock<Box<[Stripe]>>,
}

impl Tally {
    pub(crate) fn new() -> Self {
        Self {
            owner: AtomicU64::new(NO_OWNER),
            stripes: OnceLock::new(),
        }
    }

    /// Counts one call that ended as `ending`. One comparison finds the owner while it
    /// watches; a guessing owner is found in [`add_unwatched`](Self::add_unwatched).
    #[inline(always)]
    pub(crate) fn add(&self, row: &OwnerRow, ending: Ending) {
        if self.seat().watching() {
            add_owned(row, ending as usize);
        } else {
            self.add_unwatched(row, ending);
        }
    }

    /// How this thread stands to the row: its owner (watching or guessing), or another.
    /// Once a thread owns the row, it always will, and no other thread writes the row or
    /// anything else only the owner writes.
    #[inline(always)]
    pub(crate) fn seat(&self) -> Seat {
        Seat(
            self.owner
                .load(Ordering::Relaxed)
                .wrapping_sub(this_thread()),
        )
    }

    /// Notes whether the owner records from its guess of the window's word; by the owner
    /// only, and only when that changes.
    #[inline]
    pub(crate) fn set_guessing(&self, guessing: bool) {
        let me = this_thread();
        let owner = if guessing { me | GUESSING } else { me };
        self.owner.store(owner, Ordering::Relaxed);
    }

    /// Counts one call that ended as `ending`, for a thread that owns the row if `owned`
    /// (as [`owned`](Self::owned) said).
    #[inline(always)]
    pub(crate) fn add_as(&self, row: &OwnerRow, ending: Ending, owned: bool) {
        if owned {
            add_owned(row, ending as usize);
        } else {
            self.add_other(row, ending);
        }
    }

    /// Counts a call for a thread that does not own the row: the first thread to count
    /// takes the row; any other adds to its stripe.
    #[cold]
    #[inline(never)]
    fn add_other(&self, row: &OwnerRow, ending: Ending) {
        self.add_not_owned(row, ending);
    }

    /// [`add`](Self::add) for a thread that is not the watching owner: the guessing owner
    /// counts in its row, any other thread as in [`add_other`](Self::add_other).
    #[cold]
    #[inline(never)]
    fn add_unwatched(&self, row: &OwnerRow, ending: Ending) {
        if self.seat().guessing() {
            return add_owned(row, ending as usize);
        }
        self.add_not_owned(row, ending);
    }

    /// The first thread to count takes the row; any other adds to its stripe.
    #[inline(always)]
    fn add_not_owned(&self, row: &OwnerRow, ending: Ending) {
        let i = ending as usize;
        let me = thread_number();
        // Only while the row has no owner: a swap that fails still takes the cache line.
        if self.owner.load(Ordering::Relaxed) == NO_OWNER
            && self
                .owner
                .compare_exchange(NO_OWNER, me, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            return add_owned(row, i);
        }
        self.add_striped(me, i);
    }

    /// Counts one call that ended as `rare`: in this thread's stripe, grown if need be.
    #[cold]
    #[inline(never)]
    pub(crate) fn add_rare(&self, rare: RareEnding) {
        self.add_striped(thread_number(), HOT + rare as usize);
    }

    /// Adds one to counter `i` of the stripe of the thread numbered `me`.
    fn add_striped(&self, me: u64, i: usize) {
        let stripes = self.stripes.get_or_init(|| {
            (0..stripe_count())
                .map(|_| Stripe(counters()))
                .collect::<Vec<_>>()
                .into_boxed_slice()
        });
        // The stripe count is a power of two; a thread's number picks its stripe.
        let stripe = me as usize & (stripes.len() - 1);
        stripes[stripe].0[i].fetch_add(1, Ordering::Relaxed);
    }

    /// The totals so far. Each counter only grows, so a later reading is never smaller.
    pub(crate) fn read(&self, row: &OwnerRow) -> CallTotals {
        let mut sums = [0_u64; ENDINGS];
        let rows = std::iter::once(&row.0[..]).chain(
            self.stripes
                .get()
                .into_iter()
                .flat_map(|stripes| stripes.iter().map(|s| &s.0[..])),
        );
        for row in rows {
            for (sum, counter) in sums.iter_mut().zip(row) {
                *sum += counter.load(Ordering::Relaxed);
            }
        }
        let [success, failure, ignored, cancelled, open, half_open_full, forced_open, throttled, bulkhead, shadow_rejected, fleet_open, shed] =
            sums;
        let rejected_by = RejectedBy {
            open,
            half_open_full,
            forced_open,
            throttled,
            bulkhead,
            fleet_open,
            shed,
        };
        CallTotals {
            success,
            failure,
            ignored,
            cancelled,
            rejected: rejected_by.sum(),
            rejected_by,
            shadow_rejected,
            retries: 0,
            retry_budget_exhausted: 0,
        }
    }
}

/// The owner's add: no other thread writes the row, so a load and a store are exact.
#[inline]
fn add_owned(row: &OwnerRow, i: usize) {
    let counter = &row.0[i];
    counter.store(counter.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
}

/// Stripes per contended breaker: the cores, rounded up to a power of two, at most 64.
fn stripe_count() -> usize {
    static COUNT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *COUNT.get_or_init(|| {
        std::thread::available_parallelism()
            .map_or(8, usize::from)
            .next_power_of_two()
            .min(64)
    })
}

// This thread's number (see `thread_number`); 0 until it is given one.
//
// Loom runs its threads on one thread of the process: its own thread locals tell them apart.
// It also replays every execution of a model, so threads are numbered afresh in each, and
// pick the same stripes in every replay.
#[cfg(not(loom))]
thread_local! {
    static NUMBER: Cell<u64> = const { Cell::new(0) };
}
#[cfg(loom)]
thread_local! {
    static NUMBER: Cell<u64> = Cell::new(0);
}

/// This thread's number if it has one, 0 if not: no owner has number 0, so the owner's
/// check reads the number without giving one.
#[inline(always)]
fn this_thread() -> u64 {
    NUMBER.with(Cell::get)
}

/// This thread's number, from 1 in the order threads first count: never 0, never reused.
fn thread_number() -> u64 {
    // Not a model-checked atomic: it only names threads.
    #[cfg(not(loom))]
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    #[cfg(not(loom))]
    let next = || NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    #[cfg(loom)]
    loom::lazy_static! {
        static ref NEXT: AtomicU64 = AtomicU64::new(1);
    }
    #[cfg(loom)]
    let next = || NEXT.fetch_add(1, Ordering::Relaxed);
    NUMBER.with(|number| {
        let mut n = number.get();
        if n == 0 {
            n = next();
            number.set(n);
        }
        n
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_count_each_ending_once() {
        let (t, row) = (Tally::new(), OwnerRow::new());
        for ending in [
            Ending::Success,
            Ending::Success,
            Ending::Failure,
            Ending::Ignored,
            Ending::Cancelled,
            Ending::RejectedOpen,
            Ending::RejectedOpen,
        ] {
            t.add(&row, ending);
        }
        for rare in [
            RareEnding::RejectedBulkhead,
            RareEnding::RejectedThrottled,
            RareEnding::ShadowRejected,
        ] {
            t.add_rare(rare);
        }
        let r = t.read(&row);
        assert_eq!(
            (r.success, r.failure, r.ignored, r.cancelled, r.rejected),
            (2, 1, 1, 1, 4)
        );
        let by = r.rejected_by;
        assert_eq!(
            (
                by.open,
                by.half_open_full,
                by.forced_open,
                by.throttled,
                by.bulkhead
            ),
            (2, 0, 0, 1, 1)
        );
        assert_eq!(r.shadow_rejected, 1);
        assert_eq!(r.admitted(), 5);
    }

    #[test]
    fn contended_counts_lose_nothing() {
        let (t, row) = (Tally::new(), OwnerRow::new());
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| (0..10_000).for_each(|_| t.add(&row, Ending::Success)));
            }
        });
        assert_eq!(t.read(&row).success, 40_000);
    }

    /// The owner's guessing bit never makes it another thread, nor another thread the
    /// owner: its counts stay in its row, watching or guessing, and others' in stripes.
    #[test]
    fn a_guessing_owner_is_still_the_owner_and_no_other_thread_becomes_it() {
        let (t, row) = (Tally::new(), OwnerRow::new());
        t.add(&row, Ending::Success);
        let seat = t.seat();
        assert!(seat.watching() && seat.owned() && !seat.guessing());
        t.set_guessing(true);
        let seat = t.seat();
        assert!(seat.guessing() && seat.owned() && !seat.watching());
        t.add(&row, Ending::Success);
        std::thread::scope(|s| {
            s.spawn(|| {
                let seat = t.seat();
                assert!(!seat.owned() && !seat.guessing() && !seat.watching());
                t.add(&row, Ending::Success);
                let seat = t.seat();
                assert!(!seat.owned() && !seat.guessing() && !seat.watching());
            });
        });
        t.set_guessing(false);
        t.add(&row, Ending::Success);
        assert!(t.seat().watching());
        assert_eq!(row.0[Ending::Success as usize].load(Ordering::Relaxed), 3);
        assert_eq!(t.read(&row).success, 4);
    }

    #[test]
    fn the_owner_counts_in_the_row_and_others_in_stripes() {
        let (t, row) = (Tally::new(), OwnerRow::new());
        t.add(&row, Ending::Failure);
        std::thread::scope(|s| {
            s.spawn(|| t.add(&row, Ending::Failure));
        });
        t.add(&row, Ending::Failure);
        assert_eq!(t.owner.load(Ordering::Relaxed), thread_number());
        assert_eq!(this_thread(), thread_number(), "numbered once it counted");
        assert_eq!(row.0[Ending::Failure as usize].load(Ordering::Relaxed), 2);
        assert!(t.stripes.get().is_some());
        assert_eq!(t.read(&row).failure, 3);
    }
}
