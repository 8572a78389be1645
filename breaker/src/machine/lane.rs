//! What the time window's lane (`engine/lane.rs`) asks of the machine: whether it may open,
//! for which bucket and how many failures, and where its counts go when it closes.

use super::{Machine, Phase};
use crate::engine::{LaneBucket, LaneCounts, OwnedSuccesses, MAX_CREDIT};
use crate::rule::{failure_room, judged, trips};
use crate::window::{LockedWindow, OutcomeWindow};

impl Machine {
    /// The bucket the lane may count results in: the newest bucket of a CLOSED time
    /// window, judged (at least `min_calls` completed) and not tripped, of a breaker that
    /// does not time its calls (no slow call to judge). One more success then only lowers
    /// the failure rate, so none can trip the window, and the failures that can come in a
    /// row without tripping it are its credit. `None` otherwise.
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
        let min_calls = self.config.min_calls();
        if !judged(totals.calls, min_calls) || trips(&self.config, totals).is_some() {
            return None;
        }
        let credit = failure_room(
            totals.calls,
            totals.failures,
            min_calls,
            self.config.failure_rate(),
            MAX_CREDIT,
        );
        window.lane_bucket(credit)
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

    /// Whether the totals' owner was given a lane, whose count the lock takes.
    #[inline(always)]
    pub(crate) fn owner_has_lane(&self) -> bool {
        self.owner_lane
    }

    /// The totals' owner was given the lane just opened.
    #[inline]
    pub(crate) fn owner_given(&mut self) {
        self.owner_lane = true;
    }

    /// What the owner counted in the lane it was given and the machine did not take yet:
    /// counted into that lane's bucket if its generation is still the breaker's CLOSED and
    /// the bucket still in the window; else discarded, as a result of an older generation,
    /// or one that expired with its bucket.
    pub(crate) fn owner_counted(&mut self, late: OwnedSuccesses) {
        if late.generation != self.generation || !matches!(self.phase, Phase::Closed) {
            return;
        }
        if let OutcomeWindow::Locked(LockedWindow::Time(window)) = &mut self.window {
            window.add_successes_at(late.bucket, late.successes);
        }
    }

    /// The lane was closed, having counted `counted` into the bucket it was opened for,
    /// which is still the newest: only the lock moves the window, and it closes the lane
    /// first. They are counted there.
    #[inline]
    pub(crate) fn lane_closed(&mut self, counted: LaneCounts) {
        self.lane_open = false;
        if let OutcomeWindow::Locked(LockedWindow::Time(window)) = &mut self.window {
            if counted.successes != 0 || counted.failures != 0 {
                window.add_lane(counted.successes, counted.failures);
            }
        }
    }
}
