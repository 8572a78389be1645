//! Outcome windows: what the breaker remembers of recent completed calls.

mod count;
mod time;

use crate::clock::LazyNow;
use crate::config::Window;

pub(crate) use crate::engine::{Packed, PackedCalls, Threshold, MAX_PACKED};
pub(crate) use crate::rule::Totals;
pub(crate) use count::CountWindow;
pub(crate) use time::TimeWindow;

/// One completed call, as the window stores it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Mark {
    pub(crate) failure: bool,
    pub(crate) slow: bool,
}

#[cfg(test)]
pub(crate) mod marks {
    use super::Mark;

    pub(crate) const OK: Mark = Mark {
        failure: false,
        slow: false,
    };
    pub(crate) const FAIL: Mark = Mark {
        failure: true,
        slow: false,
    };
    pub(crate) const SLOW_OK: Mark = Mark {
        failure: false,
        slow: true,
    };
}

/// The window a machine keeps. `Packed` lives in the breaker's [`PackedWindow`], outside the
/// lock: its calls are handed in where they are needed ([`PackedCalls`]).
#[derive(Debug)]
pub(crate) enum OutcomeWindow {
    /// Kept in the machine, recorded under the lock.
    Locked(LockedWindow),
    /// A count window of this many calls, recorded without the lock.
    Packed(u32),
}

/// A window the machine holds itself.
#[derive(Debug)]
pub(crate) enum LockedWindow {
    /// Boxed, as the time window: most breakers pack their window in a word, and a keyed
    /// family holds many breakers.
    Count(Box<CountWindow>),
    Time(Box<TimeWindow>),
}

impl OutcomeWindow {
    /// The window for `window`; a small count window is packed unless calls are `timed`
    /// (its word has no room for slow calls).
    /// `origin` is the clock's ticks when the window starts: a time window's buckets are
    /// counted from it.
    pub(crate) fn new(window: Window, timed: bool, origin: u64) -> Self {
        match window {
            Window::Count(n) if n <= MAX_PACKED && !timed => OutcomeWindow::Packed(n.max(1)),
            Window::Count(n) => {
                OutcomeWindow::Locked(LockedWindow::Count(Box::new(CountWindow::new(n))))
            }
            Window::Time { span, buckets } => OutcomeWindow::Locked(LockedWindow::Time(Box::new(
                TimeWindow::new(span, buckets, origin),
            ))),
        }
    }

    /// The capacity of a packed window.
    pub(crate) fn packed(&self) -> Option<u32> {
        match self {
            OutcomeWindow::Packed(n) => Some(*n),
            _ => None,
        }
    }

    /// Whether `record` and `totals` need the current time.
    pub(crate) fn needs_clock(&self) -> bool {
        matches!(self, OutcomeWindow::Locked(LockedWindow::Time(_)))
    }

    /// Counts of the calls in the window at `now` (ticks).
    /// A packed window's are those of `packed`, its word's calls.
    pub(crate) fn totals(&mut self, now: Option<u64>, packed: PackedCalls) -> Totals {
        match self {
            OutcomeWindow::Locked(LockedWindow::Count(w)) => w.totals(),
            OutcomeWindow::Locked(LockedWindow::Time(w)) => w.totals(now),
            OutcomeWindow::Packed(capacity) => packed.totals(*capacity),
        }
    }

    /// Drops the slow marks of the calls the window holds, keeping the calls; a packed window
    /// holds none.
    pub(crate) fn forget_slow(&mut self) {
        match self {
            OutcomeWindow::Locked(LockedWindow::Count(w)) => w.forget_slow(),
            OutcomeWindow::Locked(LockedWindow::Time(w)) => w.forget_slow(),
            OutcomeWindow::Packed(_) => {}
        }
    }

    /// Empties the window; a packed one is emptied by its owner, at the machine's request.
    pub(crate) fn clear(&mut self) {
        match self {
            OutcomeWindow::Locked(LockedWindow::Count(w)) => w.clear(),
            OutcomeWindow::Locked(LockedWindow::Time(w)) => w.clear(),
            OutcomeWindow::Packed(_) => {}
        }
    }
}

impl LockedWindow {
    /// Adds one completed call and returns the counts after it. Only a time window reads
    /// the time, and only when the coarse clock cannot prove its newest bucket holds the
    /// present.
    #[inline]
    pub(crate) fn record(&mut self, mark: Mark, now: &mut LazyNow<'_>) -> Totals {
        match self {
            LockedWindow::Count(w) => {
                w.record(mark);
                w.totals()
            }
            LockedWindow::Time(w) => {
                if w.surely_current() {
                    return w.record_current(mark);
                }
                let totals = w.record(mark, Some(now.ticks()));
                w.pair(|start, end| now.coarse_period(start, end));
                totals
            }
        }
    }
}
