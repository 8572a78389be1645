//! The trip rule, the one place it is written: when a window's counts open the breaker, and
//! the rates a snapshot shows. The packed window's [`Threshold`](crate::window::Threshold)
//! is derived from [`reaches`].

use crate::config::Config;
use crate::transition::TransitionReason;
use crate::window::Totals;

use super::Machine;

impl Machine {
    /// `failures / calls` and `slow / calls`, or `None` before `min_calls` calls completed.
    pub(crate) fn rates(&self, totals: Totals) -> (Option<f64>, Option<f64>) {
        if !judged(totals.calls, self.config.min_calls()) {
            return (None, None);
        }
        let calls = f64::from(totals.calls);
        let slow = self
            .config
            .slow_calls()
            .map(|_| f64::from(totals.slow) / calls);
        (Some(f64::from(totals.failures) / calls), slow)
    }
}

/// Whether the window's counts open the breaker, and why: its failures, or else its slow
/// calls, reach their rate (see [`reaches`]).
pub(super) fn trips(config: &Config, totals: Totals) -> Option<TransitionReason> {
    let min_calls = config.min_calls();
    if reaches(
        totals.failures,
        totals.calls,
        min_calls,
        config.failure_rate(),
    ) {
        return Some(TransitionReason::FailureRate);
    }
    config
        .slow_calls()
        .filter(|slow| reaches(totals.slow, totals.calls, min_calls, slow.rate))
        .map(|_| TransitionReason::SlowCallRate)
}

/// `count` of `calls` completed calls reach `rate` once at least `min_calls` calls
/// completed, on `count / calls` (not over the window's size), with `>=`.
#[inline]
pub(crate) fn reaches(count: u32, calls: u32, min_calls: u32, rate: f64) -> bool {
    // Rates are in (0, 1]: a count of 0 never reaches one, and needs no division.
    judged(calls, min_calls) && count != 0 && f64::from(count) / f64::from(calls) >= rate
}

/// Whether a window of `calls` completed calls is judged at all.
#[inline]
fn judged(calls: u32, min_calls: u32) -> bool {
    calls != 0 && calls >= min_calls
}
