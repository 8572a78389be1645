//! What the time window's lane (`engine/lane.rs`) asks of the machine: whether it may open,
//! for which bucket, and where its successes go when it closes.

use super::{Machine, Phase};
use crate::engine::LaneBucket;
use crate::rule::{judged, trips};
use crate::window::{LockedWindow, OutcomeWindow};

impl Machine {
    /// The bucket the lane may count successes in: the newest bucket of a CLOSED time
    /// window, judged (at least `min_calls` completed) and not tripped, of a breaker that
    /// does not time its calls (no slow call to judge). One more success then only lowers
    /// the failure rate, so none can trip the window. `None` otherwise.
    #[inline]
    pub(crate) fn lane(&self) -> Option<LaneBucket> {
        if !matches!(self.phase, Phase::Closed) {
            return None;
        }
        let OutcomeWindow::Locked(LockedWindow::Time(window)) = &self.window else {
            return None;
        };
        if self.times_calls() {
            return None;
        }
        let totals = window.held();
        if !judged(totals.calls, self.config.min_calls()) || trips(&self.config, totals).is_some() {
            return None;
        }
        window.lane_bucket()
    }

    /// Whether the lane is open: opened ([`lane_opened`](Self::lane_opened)) and not closed
    /// since ([`lane_closed`](Self::lane_closed)).
    #[inline(always)]
    pub(crate) fn lane_open(&self) -> bool {
        self.lane_open
    }

    /// The lane was opened for the bucket [`lane`](Self::lane) told.
    #[inline]
    pub(crate) fn lane_opened(&mut self) {
        self.lane_open = true;
    }

    /// The lane was closed, having counted `successes` into the bucket it was opened for,
    /// which is still the newest: only the lock moves the window, and it closes the lane
    /// first. They are counted there.
    #[inline]
    pub(crate) fn lane_closed(&mut self, successes: u64) {
        self.lane_open = false;
        if let (OutcomeWindow::Locked(LockedWindow::Time(window)), 1..) =
            (&mut self.window, successes)
        {
            window.add_successes(successes);
        }
    }
}
