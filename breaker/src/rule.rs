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

/// How many failures in a row, and no other call, a window of `calls` completed calls with
/// `failures` among them takes without reaching `rate` (by [`reaches`]), up to `most`: the
/// largest `k <= most` for which `failures + k` of `calls + k` does not reach it, given that
/// the window does not reach it now. Every call that is not a failure only lowers the rate,
/// so a window that took at most `k` more failures, and any number of other calls, mixed in
/// any order, has not tripped.
pub(crate) fn failure_room(calls: u32, failures: u32, min_calls: u32, rate: f64, most: u32) -> u32 {
    let trips = |k: u32| {
        reaches(
            failures.saturating_add(k),
            calls.saturating_add(k),
            min_calls,
            rate,
        )
    };
    // (failures + k) / (calls + k) >= rate from k = (rate * calls - failures) / (1 - rate)
    // on: the guess is k's neighbour, then the rule itself settles it, a step or two from
    // there. A rate of 1 is reached only by a window of failures alone, never by adding
    // failures to one that is not.
    let guess = if rate >= 1.0 {
        f64::from(most)
    } else {
        ((rate * f64::from(calls) - f64::from(failures)) / (1.0 - rate)).ceil() - 1.0
    };
    // `as` saturates: a negative guess is 0, one past `most` is capped below.
    let mut k = (guess as u32).min(most);
    while k > 0 && trips(k) {
        k -= 1;
    }
    while k < most && !trips(k + 1) {
        k += 1;
    }
    k
}

/// Whether a window of `calls` completed calls is judged at all.
#[inline]
pub(crate) fn judged(calls: u32, min_calls: u32) -> bool {
    calls != 0 && calls >= min_calls
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{failure_room, reaches};

    /// The room counted one failure at a time.
    fn counted(calls: u32, failures: u32, min_calls: u32, rate: f64, most: u32) -> u32 {
        (0..most)
            .take_while(|&k| !reaches(failures + k + 1, calls + k + 1, min_calls, rate))
            .count() as u32
    }

    #[test]
    fn the_room_is_the_failures_before_the_one_that_reaches_the_rate() {
        // 3 of 10 at 0.5: 4 of 11, 5 of 12 and 6 of 13 stay under; 7 of 14 reaches it.
        assert_eq!(failure_room(10, 3, 5, 0.5, 4095), 3);
        // 0 of 100 at 0.5: 99 of 199 stays under, 100 of 200 reaches.
        assert_eq!(failure_room(100, 0, 5, 0.5, 4095), 99);
        // Capped.
        assert_eq!(failure_room(100_000, 0, 5, 0.5, 4095), 4095);
        // A rate of 1 is never reached by adding failures to a window with a success.
        assert_eq!(failure_room(10, 9, 5, 1.0, 4095), 4095);
        // 4 of 10: 5 of 11 stays under, 6 of 12 reaches it. 4 of 9: 5 of 10 reaches it.
        assert_eq!(failure_room(10, 4, 5, 0.5, 4095), 1);
        assert_eq!(failure_room(9, 4, 5, 0.5, 4095), 0);
    }

    proptest! {
        #[test]
        fn the_room_is_what_counting_one_failure_at_a_time_finds(
            calls in 1u32..5_000,
            failed in 0.0f64..1.0,
            min_calls in 1u32..200,
            rate in 0.01f64..=1.0,
            most in 0u32..4096,
        ) {
            let failures = (f64::from(calls) * failed) as u32;
            prop_assume!(!reaches(failures, calls, min_calls, rate));
            prop_assert_eq!(
                failure_room(calls, failures, min_calls, rate, most),
                counted(calls, failures, min_calls, rate, most)
            );
        }
    }
}
