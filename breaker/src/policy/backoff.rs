//! The wait before a retry: exponential, with full jitter, on tokio's clock.

use std::time::Duration;

/// The longest wait before retry `n` (from 1): `base * 2^(n-1)`, saturating.
pub(crate) fn ceiling(base: Duration, retry: u32) -> Duration {
    let factor = 1_u32
        .checked_shl(retry.saturating_sub(1))
        .unwrap_or(u32::MAX);
    base.saturating_mul(factor)
}

/// The wait before retry `n`, drawn uniformly from `[0, ceiling(base, n)]` (full jitter:
/// callers that failed together spread their retries over the whole interval).
pub(crate) fn delay(base: Duration, retry: u32) -> Duration {
    let max = u64::try_from(ceiling(base, retry).as_nanos()).unwrap_or(u64::MAX);
    Duration::from_nanos(fastrand::u64(0..=max))
}

/// Waits before retry `n`, at least `floor` (the pushback the downstream asked for); a zero
/// base and floor retry at once, without touching the timer.
pub(crate) async fn wait_at_least(base: Duration, retry: u32, floor: Duration) {
    let drawn = if base.is_zero() {
        Duration::ZERO
    } else {
        delay(base, retry)
    };
    let delay = drawn.max(floor);
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: Duration = Duration::from_millis(20);

    #[test]
    fn the_ceiling_doubles_from_the_base_and_saturates() {
        assert_eq!(ceiling(BASE, 1), BASE);
        assert_eq!(ceiling(BASE, 2), Duration::from_millis(40));
        assert_eq!(ceiling(BASE, 10), Duration::from_millis(20 * 512));
        assert_eq!(ceiling(Duration::MAX, 3), Duration::MAX);
        assert_eq!(ceiling(BASE, 40), BASE.saturating_mul(u32::MAX));
        assert_eq!(ceiling(Duration::ZERO, 5), Duration::ZERO);
    }

    #[test]
    fn delays_are_drawn_over_the_whole_interval() {
        for retry in 1..=4 {
            let max = ceiling(BASE, retry);
            let draws: Vec<Duration> = (0..10_000).map(|_| delay(BASE, retry)).collect();
            assert!(draws.iter().all(|d| *d <= max), "retry {retry}");
            // 10,000 uniform draws: each tenth of the interval holds some of them.
            for tenth in 0..10 {
                let (from, to) = (max * tenth / 10, max * (tenth + 1) / 10);
                assert!(
                    draws.iter().any(|d| from <= *d && *d <= to),
                    "retry {retry}: nothing in [{from:?}, {to:?}]"
                );
            }
        }
    }

    #[test]
    fn a_zero_base_never_waits() {
        assert_eq!(delay(Duration::ZERO, 3), Duration::ZERO);
    }
}
