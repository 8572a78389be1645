//! The wait before a retry: exponential up to a ceiling, with full jitter, on tokio's clock
//! (or, for a plain function's retries, a sleep of its thread).

use std::time::Duration;

/// The longest wait before retry `n` (from 1): `base * 2^(n-1)`, saturating, and at most
/// `max`.
pub(crate) fn ceiling(base: Duration, max: Duration, retry: u32) -> Duration {
    let factor = 1_u32
        .checked_shl(retry.saturating_sub(1))
        .unwrap_or(u32::MAX);
    base.saturating_mul(factor).min(max)
}

/// The wait before retry `n`, drawn uniformly from `[0, ceiling(base, max, n)]` (full
/// jitter: callers that failed together spread their retries over the whole interval).
pub(crate) fn delay(base: Duration, max: Duration, retry: u32) -> Duration {
    let top = u64::try_from(ceiling(base, max, retry).as_nanos()).unwrap_or(u64::MAX);
    Duration::from_nanos(fastrand::u64(0..=top))
}

/// The wait before retry `n`, at least `floor` (the pushback the downstream asked for); zero
/// for a zero base and floor, drawing nothing.
pub(crate) fn delay_at_least(
    base: Duration,
    max: Duration,
    retry: u32,
    floor: Duration,
) -> Duration {
    let drawn = if base.is_zero() {
        Duration::ZERO
    } else {
        delay(base, max, retry)
    };
    drawn.max(floor)
}

/// Waits before retry `n`, at least `floor`; a zero base and floor retry at once, without
/// touching the timer.
pub(crate) async fn wait_at_least(base: Duration, max: Duration, retry: u32, floor: Duration) {
    let delay = delay_at_least(base, max, retry, floor);
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
}

/// Waits before retry `n` with `sleep`, at least `floor`: the blocking runner's wait, which
/// passes `std::thread::sleep`; a zero base and floor retry at once, calling no sleep.
pub(crate) fn sleep_at_least(
    base: Duration,
    max: Duration,
    retry: u32,
    floor: Duration,
    sleep: impl FnOnce(Duration),
) {
    let delay = delay_at_least(base, max, retry, floor);
    if !delay.is_zero() {
        sleep(delay);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: Duration = Duration::from_millis(20);
    const NONE: Duration = Duration::MAX;

    #[test]
    fn a_blocking_wait_sleeps_at_least_the_floor_and_not_at_all_for_none() {
        let mut slept = Vec::new();
        sleep_at_least(Duration::ZERO, NONE, 1, Duration::ZERO, |d| slept.push(d));
        assert_eq!(slept, [], "no wait, no sleep");
        let floor = Duration::from_millis(5);
        sleep_at_least(Duration::ZERO, NONE, 1, floor, |d| slept.push(d));
        assert_eq!(slept, [floor]);
        // A drawn wait is within the ceiling and never below the floor.
        for _ in 0..100 {
            sleep_at_least(BASE, NONE, 2, floor, |d| slept.push(d));
        }
        assert_eq!(slept.len(), 101);
        assert!(slept[1..]
            .iter()
            .all(|&d| d >= floor && d <= ceiling(BASE, NONE, 2)));
    }

    #[test]
    fn the_ceiling_doubles_from_the_base_and_saturates() {
        assert_eq!(ceiling(BASE, NONE, 1), BASE);
        assert_eq!(ceiling(BASE, NONE, 2), Duration::from_millis(40));
        assert_eq!(ceiling(BASE, NONE, 10), Duration::from_millis(20 * 512));
        assert_eq!(ceiling(Duration::MAX, NONE, 3), Duration::MAX);
        assert_eq!(ceiling(BASE, NONE, 40), BASE.saturating_mul(u32::MAX));
        assert_eq!(ceiling(Duration::ZERO, NONE, 5), Duration::ZERO);
    }

    #[test]
    fn the_ceiling_stops_doubling_at_the_max() {
        let max = Duration::from_millis(100);
        assert_eq!(ceiling(BASE, max, 3), Duration::from_millis(80));
        assert_eq!(ceiling(BASE, max, 4), max);
        assert_eq!(ceiling(BASE, max, 40), max);
        // 10 retries with a 60 s base: the last waits at most the default 10 s, not 8.5 h.
        let sixty = Duration::from_secs(60);
        assert_eq!(ceiling(sixty, NONE, 10), Duration::from_secs(30_720));
        assert_eq!(ceiling(sixty, sixty, 10), sixty);
    }

    #[test]
    fn delays_are_drawn_over_the_whole_interval() {
        let max = Duration::from_millis(100);
        for retry in 1..=6 {
            let top = ceiling(BASE, max, retry);
            let draws: Vec<Duration> = (0..10_000).map(|_| delay(BASE, max, retry)).collect();
            assert!(draws.iter().all(|d| *d <= top), "retry {retry}");
            // 10,000 uniform draws: each tenth of the interval holds some of them.
            for tenth in 0..10 {
                let (from, to) = (top * tenth / 10, top * (tenth + 1) / 10);
                assert!(
                    draws.iter().any(|d| from <= *d && *d <= to),
                    "retry {retry}: nothing in [{from:?}, {to:?}]"
                );
            }
        }
    }

    #[test]
    fn a_zero_base_never_waits() {
        assert_eq!(delay(Duration::ZERO, NONE, 3), Duration::ZERO);
    }
}
