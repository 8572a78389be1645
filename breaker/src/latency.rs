//! A small fixed histogram of call latencies, for the ramp-up's p99 guard.
//!
//! 256 log-linear buckets (four per power of two of nanoseconds, exact below 16ns) give a p99
//! within 25% of the true value, with O(1) recording and no sorting of samples.

use std::time::Duration;

const BUCKETS: usize = 256;
const EXACT: u64 = 16;
const SUB_BITS: u32 = 2;

/// Latency counts; the baseline halves them all once `DECAY_AT` samples are in, so that it
/// follows recent traffic.
#[derive(Debug, Clone)]
pub(crate) struct LatencyHistogram {
    counts: Box<[u32; BUCKETS]>,
    total: u32,
}

const DECAY_AT: u32 = 1 << 16;

impl LatencyHistogram {
    pub(crate) fn new() -> Self {
        Self {
            counts: Box::new([0; BUCKETS]),
            total: 0,
        }
    }

    fn index(nanos: u64) -> usize {
        if nanos < EXACT {
            return nanos as usize;
        }
        let exponent = 63 - nanos.leading_zeros();
        let sub = (nanos >> (exponent - SUB_BITS)) & ((1 << SUB_BITS) - 1);
        (EXACT + u64::from(exponent - 4) * (1 << SUB_BITS) + sub) as usize
    }

    /// The smallest latency of the bucket after `index`: an upper bound of the bucket.
    fn upper_bound(index: usize) -> Duration {
        let next = index as u64 + 1;
        if next <= EXACT {
            return Duration::from_nanos(next);
        }
        let rel = next - EXACT;
        let exponent = rel / (1 << SUB_BITS) + 4;
        let sub = rel % (1 << SUB_BITS);
        if exponent >= 64 {
            return Duration::from_nanos(u64::MAX);
        }
        let base = 1u64 << exponent;
        Duration::from_nanos(base + sub * (base >> SUB_BITS))
    }

    pub(crate) fn record(&mut self, latency: Duration) {
        let nanos = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX);
        let slot = &mut self.counts[Self::index(nanos)];
        *slot = slot.saturating_add(1);
        self.total = self.total.saturating_add(1);
        if self.total >= DECAY_AT {
            self.counts.iter_mut().for_each(|c| *c /= 2);
            self.total = self.counts.iter().sum();
        }
    }

    /// The latency under which 99% of the samples fall, or `None` without samples.
    pub(crate) fn p99(&self) -> Option<Duration> {
        if self.total == 0 {
            return None;
        }
        let rank = (u64::from(self.total) * 99).div_ceil(100);
        let mut seen = 0u64;
        for (index, count) in self.counts.iter().enumerate() {
            seen += u64::from(*count);
            if seen >= rank {
                return Some(Self::upper_bound(index));
            }
        }
        None
    }

    pub(crate) fn clear(&mut self) {
        self.counts.fill(0);
        self.total = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_ordered_and_bound_their_values() {
        let mut last = 0;
        for nanos in (0..10_000u64).chain([1 << 20, 123_456_789, u64::MAX]) {
            let i = LatencyHistogram::index(nanos);
            assert!(i >= last, "index must not decrease at {nanos}");
            assert!(i < BUCKETS);
            assert!(
                Duration::from_nanos(nanos) < LatencyHistogram::upper_bound(i) || nanos == u64::MAX
            );
            last = i;
        }
    }

    #[test]
    fn p99_is_within_a_quarter_of_the_true_value() {
        let mut h = LatencyHistogram::new();
        assert_eq!(h.p99(), None);
        for _ in 0..990 {
            h.record(Duration::from_millis(10));
        }
        for _ in 0..10 {
            h.record(Duration::from_millis(500));
        }
        let p99 = h.p99().unwrap();
        assert!(
            p99 > Duration::from_millis(10) && p99 <= Duration::from_micros(12_500),
            "{p99:?}"
        );
        h.record(Duration::from_millis(500));
        let p99 = h.p99().unwrap();
        assert!(
            p99 > Duration::from_millis(500) && p99 <= Duration::from_millis(625),
            "{p99:?}"
        );
    }

    #[test]
    fn decay_keeps_the_shape() {
        let mut h = LatencyHistogram::new();
        for _ in 0..DECAY_AT * 3 {
            h.record(Duration::from_micros(100));
        }
        assert!(h.total < DECAY_AT);
        assert!(h.p99().unwrap() > Duration::from_micros(100));
        h.clear();
        assert_eq!(h.p99(), None);
    }
}
