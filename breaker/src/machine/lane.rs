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
        let (Phase::Closed, OutcomeWindow::Locked(LockedWindow::Time(window))) =
            (&self.phase, &self.window)
        else {
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

    /// Counts `successes` the lane counted into the bucket it was opened for, which is
    /// still the newest: only the lock moves the window, and it closes the lane first.
    #[inline]
    pub(crate) fn count_lane(&mut self, successes: u64) {
        if let OutcomeWindow::Locked(LockedWindow::Time(window)) = &mut self.window {
            window.add_successes(successes);
        }
    }
}
