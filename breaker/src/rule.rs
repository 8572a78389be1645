//! The trip rule, the one place it is written: when a window's counts open the breaker, and
//! whether they are judged at all. A leaf: the machine judges by it, the packed window's
//! threshold is derived from it ([`reaches`]), and a window only counts.

use crate::config::Config;
use crate::transition::TransitionReason;

/// Counts over the calls a window currently holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Totals {
    pub(crate) calls: u32,
    pub(crate) failures: u32,
    pub(crate) slow: u32,
}

/// Whether the window's counts open the breaker, and why: its failures, or else its slow
/// calls, reach their rate (see [`reaches`]).
pub(crate) fn trips(config: &Config, totals: Totals) -> Option<TransitionReason> {
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
pub(crate) fn judged(calls: u32, min_calls: u32) -> bool {
    calls != 0 && calls >= min_calls
}
