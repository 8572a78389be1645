//! Lifetime call totals: how every admitted call ended, and how many were rejected.
//!
//! Each ending is one relaxed add. A breaker used from one thread at a time adds to one row
//! of counters beside its window word. The first time two threads collide on that row (a
//! compare-and-swap finds the counter moved), the tally grows stripes, one per core
//! rounded up to a power of two, each on cache lines of its own; a thread then adds to its
//! own stripe, so threads sharing a breaker never write the same line. A total is the row
//! plus every stripe, so a reading never goes back. Breakers that are never contended,
//! such as most breakers of a keyed family, never pay for stripes.

use std::cell::Cell;
use std::sync::OnceLock;

use crate::sync::{AtomicU64, Ordering};
use crate::Outcome;

/// How a call asked of the breaker ended, as the totals count it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    Success,
    Failure,
    Ignored,
    /// Dropped without a result (a cancelled future), not while panicking.
    Cancelled,
    Rejected,
}

const ENDINGS: usize = 5;

impl Ending {
    /// The outcome the window sees: a cancelled call is not judged.
    pub(crate) fn outcome(self) -> Outcome {
        match self {
            Ending::Success => Outcome::Success,
            Ending::Failure => Outcome::Failure,
            Ending::Ignored | Ending::Cancelled | Ending::Rejected => Outcome::Ignored,
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
/// ignored + cancelled` is the number of calls admitted; rejected calls are counted apart.
/// Results the window discards (a call admitted before a state change finishing after it,
/// calls while disabled) are still counted here: they were made.
///
/// ```
/// use breaker::{Breaker, Config};
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
/// assert_eq!(t.admitted(), 5);
/// # Ok::<(), breaker::ConfigError>(())
/// ```
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
    /// Calls the breaker rejected.
    pub rejected: u64,
}

impl CallTotals {
    /// Calls admitted that have ended: `success + failure + ignored + cancelled`.
    pub fn admitted(&self) -> u64 {
        self.success + self.failure + self.ignored + self.cancelled
    }
}

/// One row of counters, indexed by `Ending as usize`.
type Row = [AtomicU64; ENDINGS];

fn row() -> Row {
    std::array::from_fn(|_| AtomicU64::new(0))
}

/// A stripe: one thread's row, alone on its pair of cache lines (the hardware may fetch
/// lines in pairs).
#[repr(align(128))]
struct Stripe(Row);

pub(crate) struct Tally {
    row: Row,
    stripes: OnceLock<Box<[Stripe]>>,
}

impl Tally {
    pub(crate) fn new() -> Self {
        Self {
            row: row(),
            stripes: OnceLock::new(),
        }
    }

    /// Counts one call that ended as `ending`.
    #[inline]
    pub(crate) fn add(&self, ending: Ending) {
        let i = ending as usize;
        if let Some(stripes) = self.stripes.get() {
            stripes[stripe_of_thread() & (stripes.len() - 1)].0[i].fetch_add(1, Ordering::Relaxed);
            return;
        }
        let counter = &self.row[i];
        let seen = counter.load(Ordering::Relaxed);
        if counter
            .compare_exchange(seen, seen + 1, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            self.add_contended(i);
        }
    }

    /// Another thread moved the counter between our load and our swap: stripe from now on.
    #[cold]
    #[inline(never)]
    fn add_contended(&self, i: usize) {
        let stripes = self.stripes.get_or_init(|| {
            (0..stripe_count())
                .map(|_| Stripe(row()))
                .collect::<Vec<_>>()
                .into_boxed_slice()
        });
        stripes[stripe_of_thread() & (stripes.len() - 1)].0[i].fetch_add(1, Ordering::Relaxed);
    }

    /// The totals so far. Each counter only grows, so a later reading is never smaller.
    pub(crate) fn read(&self) -> CallTotals {
        let mut sums = [0_u64; ENDINGS];
        let rows = std::iter::once(&self.row).chain(
            self.stripes
                .get()
                .into_iter()
                .flat_map(|stripes| stripes.iter().map(|s| &s.0)),
        );
        for row in rows {
            for (sum, counter) in sums.iter_mut().zip(row) {
                *sum += counter.load(Ordering::Relaxed);
            }
        }
        let [success, failure, ignored, cancelled, rejected] = sums;
        CallTotals {
            success,
            failure,
            ignored,
            cancelled,
            rejected,
        }
    }
}

/// Stripes per contended breaker: the cores, rounded up to a power of two, at most 64.
fn stripe_count() -> usize {
    static COUNT: OnceLock<usize> = OnceLock::new();
    *COUNT.get_or_init(|| {
        std::thread::available_parallelism()
            .map_or(8, usize::from)
            .next_power_of_two()
            .min(64)
    })
}

/// This thread's stripe: threads are numbered in the order they first count.
fn stripe_of_thread() -> usize {
    // Not a model-checked atomic: it only spreads threads over stripes.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    thread_local! {
        static STRIPE: Cell<usize> = const { Cell::new(usize::MAX) };
    }
    STRIPE.with(|stripe| {
        let mut s = stripe.get();
        if s == usize::MAX {
            s = NEXT.fetch_add(1, Ordering::Relaxed);
            stripe.set(s);
        }
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_count_each_ending_once() {
        let t = Tally::new();
        for ending in [
            Ending::Success,
            Ending::Success,
            Ending::Failure,
            Ending::Ignored,
            Ending::Cancelled,
            Ending::Rejected,
            Ending::Rejected,
            Ending::Rejected,
        ] {
            t.add(ending);
        }
        let r = t.read();
        assert_eq!(
            (r.success, r.failure, r.ignored, r.cancelled, r.rejected),
            (2, 1, 1, 1, 3)
        );
        assert_eq!(r.admitted(), 5);
    }

    #[test]
    fn contended_counts_lose_nothing() {
        let t = Tally::new();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| (0..10_000).for_each(|_| t.add(Ending::Success)));
            }
        });
        assert_eq!(t.read().success, 40_000);
    }

    #[test]
    fn stripes_once_grown_are_summed_with_the_row() {
        let t = Tally::new();
        t.add(Ending::Failure);
        t.add_contended(Ending::Failure as usize);
        t.add(Ending::Failure);
        assert!(t.stripes.get().is_some());
        assert_eq!(t.read().failure, 3);
    }
}
