//! A new configuration, taken in any state.

use std::sync::Arc;

use crate::clock::LazyNow;
use crate::config::Config;
use crate::recovery::Recovery;
use crate::transition::TransitionReason;
use crate::window::{LockedWindow, Mark, OutcomeWindow, PackedCalls};

use super::packed_write::PackedWrite;
use super::{times_calls, window_origin, Machine, Phase, Transition};
use crate::rule::trips;

impl Machine {
    /// Takes a new configuration and keeps the state. A new window shape starts an empty
    /// window in a new generation, so results of calls admitted before are discarded.
    /// `packed`: the calls of the packed window's word, which its owner sealed first.
    ///
    /// In CLOSED the window is then judged under the new configuration, and opens the breaker
    /// at once if its counts trip it (a lower rate or minimum): a packed window does not judge
    /// a success into a full window (see `PackedWindow::record_once`), so without this it
    /// would open only at its next failure. Likewise in HALF_OPEN, before a ramp, the probe
    /// successes already counted are judged under the new `successes`.
    ///
    /// A packed window is judged without the lock too, by each result, under the threshold
    /// it read, which may be the old one: so a CLOSED breaker's packed window is left sealed.
    /// A result judged before then lands on the seal, and goes to the lock with the results
    /// after it; the first to take it judges the window under the new configuration and
    /// opens it to results again (see [`judge`](Self::judge)).
    pub(crate) fn reconfigure(
        &mut self,
        config: Config,
        now: &mut LazyNow<'_>,
        packed: PackedCalls,
    ) -> Option<Transition> {
        let origin = window_origin(&config, now);
        let window = OutcomeWindow::new(config.window(), times_calls(&config), origin);
        if config.window() != self.config.window() {
            self.window = window;
            self.generation += 1;
            if let Phase::HalfOpen { .. } = self.phase {
                // The probes out are of the generation before: their slots are free.
                self.start_trial();
            }
            self.empty_packed();
        } else if window.packed() != self.window.packed() {
            // Same calls, another representation (slow calls were turned on or off): the
            // window moves over, oldest first; slow marks are not kept in a packed window.
            self.window = match (window, &self.window) {
                (OutcomeWindow::Packed(n), OutcomeWindow::Locked(LockedWindow::Count(old))) => {
                    self.store_packed(PackedCalls::of(n, old.outcomes()));
                    OutcomeWindow::Packed(n)
                }
                (
                    OutcomeWindow::Locked(LockedWindow::Count(mut new)),
                    OutcomeWindow::Packed(capacity),
                ) => {
                    for failure in packed.outcomes(*capacity) {
                        new.record(Mark {
                            failure,
                            slow: false,
                        });
                    }
                    OutcomeWindow::Locked(LockedWindow::Count(new))
                }
                (window, _) => window,
            };
        }
        if config.slow_calls().is_none() && self.config.slow_calls().is_some() {
            // One rule for every window: slow calls turned off take their marks with them
            // (a packed window has no room for any), so that turning them on again counts
            // none of the old ones.
            self.window.forget_slow();
        }
        let recovery_changed = config.open_backoff() != self.config.open_backoff()
            || config.ramp_up() != self.config.ramp_up()
            || config.ramp_latency_guard() != self.config.ramp_latency_guard()
            || config.open_for() != self.config.open_for();
        self.config = Arc::new(config);
        self.configured = true;
        if recovery_changed {
            if let Phase::Ramp(_) = self.phase {
                // The ramp it was on may no longer exist: judge the recovery afresh.
                self.generation += 1;
                self.start_trial();
            }
            self.recovery = Recovery::new(&self.config);
            if let Phase::Open {
                reason, open_for, ..
            } = &mut self.phase
            {
                // The OPEN under way lasts as the new recovery says, unless its length was
                // asked for.
                if !reason.chooses_its_period() {
                    *open_for = self.recovery.open_for();
                }
            }
        }
        match self.phase {
            Phase::Closed => {
                if self.window.packed().is_some() {
                    self.write_packed(PackedWrite::Seal);
                }
                let packed = self.packed_calls(packed);
                let totals = self.totals(now, packed);
                if trips(&self.config, totals).is_some() {
                    return self.enter(crate::State::Open, TransitionReason::Reconfigured, now);
                }
                None
            }
            // The probe successes counted so far are kept, and judged at once under the new
            // `successes`: a trial they already pass ends now, as its last success would
            // have ended it.
            Phase::HalfOpen { successes, .. } if successes >= self.config.successes() => {
                self.trial_passed(TransitionReason::Reconfigured, now)
            }
            _ => None,
        }
    }
}
