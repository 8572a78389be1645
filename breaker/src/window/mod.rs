//! Outcome windows: what the breaker remembers of recent completed calls.

mod count;
mod time;

use std::time::Instant;

use crate::config::Window;

pub(crate) use count::CountWindow;
pub(crate) use time::TimeWindow;

/// Counts over the calls a window currently holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Totals {
    pub(crate) calls: u32,
    pub(crate) failures: u32,
    pub(crate) slow: u32,
}

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

#[derive(Debug)]
pub(crate) enum OutcomeWindow {
    Count(CountWindow),
    Time(TimeWindow),
}

impl OutcomeWindow {
    pub(crate) fn new(window: Window, origin: Instant) -> Self {
        match window {
            Window::Count(n) => OutcomeWindow::Count(CountWindow::new(n)),
            Window::Time { span, buckets } => {
                OutcomeWindow::Time(TimeWindow::new(span, buckets, origin))
            }
        }
    }

    /// Whether `record` and `totals` need the current time.
    pub(crate) fn needs_clock(&self) -> bool {
        matches!(self, OutcomeWindow::Time(_))
    }

    /// Adds one completed call. `now` is read only by a time window.
    pub(crate) fn record(&mut self, mark: Mark, now: Option<Instant>) {
        match self {
            OutcomeWindow::Count(w) => w.record(mark),
            OutcomeWindow::Time(w) => w.record(mark, now),
        }
    }

    /// Counts of the calls in the window at `now`.
    pub(crate) fn totals(&mut self, now: Option<Instant>) -> Totals {
        match self {
            OutcomeWindow::Count(w) => w.totals(),
            OutcomeWindow::Time(w) => w.totals(now),
        }
    }

    pub(crate) fn clear(&mut self) {
        match self {
            OutcomeWindow::Count(w) => w.clear(),
            OutcomeWindow::Time(w) => w.clear(),
        }
    }
}
