//! The downstream's health over time, estimated from a recording's outcomes.

use std::ops::Range;
use std::time::Duration;

use breaker::recording::{CallOutcome, RecordedCall, Recording};
use breaker::Outcome;

/// A stretch is sick from this failure rate up.
pub const SICK_RATE: f64 = 0.3;
/// ... or when its median success is this many times slower than the healthy p99.
pub const SICK_SLOWDOWN: f64 = 3.0;
/// A stretch is healthy, for the healthy p99, below this failure rate.
const HEALTHY_RATE: f64 = 0.1;

/// One stretch of the recording.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Bucket {
    /// Calls that ran (rejected ones did not).
    pub calls: u32,
    pub failures: u32,
    /// The median latency of its successes, if any.
    pub median: Option<Duration>,
    /// Whether the downstream was sick; for a bucket without a call that ran, what the last
    /// bucket that had one said (the first one's, at the start).
    pub sick: bool,
}

impl Bucket {
    /// Failures over calls that ran, if any ran.
    pub fn failure_rate(&self) -> Option<f64> {
        (self.calls > 0).then(|| f64::from(self.failures) / f64::from(self.calls))
    }
}

/// The downstream's health, a bucket of time at a time.
#[derive(Clone, Debug, PartialEq)]
pub struct Health {
    pub bucket: Duration,
    pub buckets: Vec<Bucket>,
    /// The p99 latency of successes in healthy buckets.
    pub healthy_p99: Duration,
    /// The sick stretches, as times from the recording's start.
    pub outages: Vec<Range<Duration>>,
    /// When the last call started.
    pub end: Duration,
}

impl Health {
    /// Estimates health in buckets of `bucket` from the calls that ran.
    pub fn estimate(recording: &Recording, bucket: Duration) -> Health {
        let calls = recording.calls();
        let end = calls.last().map_or(Duration::ZERO, |c| c.start);
        let n = (end.as_nanos() / bucket.as_nanos()) as usize + 1;
        let index = |c: &RecordedCall| (c.start.as_nanos() / bucket.as_nanos()) as usize;

        let mut latencies = vec![Vec::new(); n];
        let mut buckets = vec![Bucket::default(); n];
        for call in calls {
            let (b, i) = (&mut buckets[index(call)], index(call));
            match call.outcome {
                CallOutcome::Completed(Outcome::Success) => {
                    b.calls += 1;
                    latencies[i].push(call.latency);
                }
                CallOutcome::Completed(Outcome::Failure) => {
                    b.calls += 1;
                    b.failures += 1;
                }
                CallOutcome::Completed(Outcome::Ignored) | CallOutcome::Rejected(_) => {}
            }
        }
        let mut healthy = Vec::new();
        for (b, lat) in buckets.iter_mut().zip(&mut latencies) {
            lat.sort_unstable();
            b.median = lat.get(lat.len() / 2).copied();
            if b.failure_rate().is_some_and(|r| r < HEALTHY_RATE) {
                healthy.extend_from_slice(lat);
            }
        }
        healthy.sort_unstable();
        let healthy_p99 = quantile(&healthy, 0.99).unwrap_or(Duration::ZERO);

        let mut known = None;
        let first_known = buckets.iter().find_map(|b| sick(b, healthy_p99));
        for b in &mut buckets {
            known = sick(b, healthy_p99).or(known);
            b.sick = known.or(first_known).unwrap_or(false);
        }
        let mut outages: Vec<Range<Duration>> = Vec::new();
        for (i, _) in buckets.iter().enumerate().filter(|(_, b)| b.sick) {
            let start = bucket * i as u32;
            match outages.last_mut() {
                Some(last) if last.end == start => last.end = start + bucket,
                _ => outages.push(start..start + bucket),
            }
        }
        Health {
            bucket,
            buckets,
            healthy_p99,
            outages,
            end,
        }
    }

    /// The outage that `t` falls in, if any.
    pub fn outage_at(&self, t: Duration) -> Option<usize> {
        let i = self.outages.partition_point(|o| o.end <= t);
        (i < self.outages.len() && self.outages[i].start <= t).then_some(i)
    }
}

/// Whether a bucket with calls that ran was sick; `None` without such calls.
fn sick(b: &Bucket, healthy_p99: Duration) -> Option<bool> {
    let rate = b.failure_rate()?;
    let slow = b.median.is_some_and(|m| {
        !healthy_p99.is_zero() && m.as_secs_f64() >= SICK_SLOWDOWN * healthy_p99.as_secs_f64()
    });
    Some(rate >= SICK_RATE || slow)
}

/// The `q` quantile of sorted values (nearest rank).
pub fn quantile(sorted: &[Duration], q: f64) -> Option<Duration> {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1));
    sorted.get(rank - 1).copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::tests::call;

    const OK: CallOutcome = CallOutcome::Completed(Outcome::Success);
    const FAIL: CallOutcome = CallOutcome::Completed(Outcome::Failure);
    const REJECTED: CallOutcome = CallOutcome::Rejected(breaker::RejectReason::Open);

    #[test]
    fn failing_and_rejected_stretches_between_healthy_ones_make_one_outage() {
        let mut calls = Vec::new();
        for s in 0..10u64 {
            for k in 0..10 {
                let outcome = match s {
                    3 | 4 => FAIL,
                    5 | 6 => REJECTED, // nothing ran: as sick as the last stretch that ran
                    _ => OK,
                };
                calls.push(call(s * 1000 + k * 100, 10 + k, outcome));
            }
        }
        let health = Health::estimate(&calls.into_iter().collect(), Duration::from_secs(1));
        assert_eq!(
            health.outages,
            [Duration::from_secs(3)..Duration::from_secs(7)]
        );
        assert_eq!(health.healthy_p99, Duration::from_millis(19));
        assert_eq!(health.outage_at(Duration::from_millis(6999)), Some(0));
        assert_eq!(health.outage_at(Duration::from_secs(7)), None);
        assert_eq!(health.buckets[3].failure_rate(), Some(1.0));
        assert_eq!(health.buckets[5].failure_rate(), None);
    }

    #[test]
    fn successes_three_times_slower_than_the_healthy_p99_are_sick() {
        let mut calls = Vec::new();
        for s in 0..6u64 {
            let latency = if s == 2 { 60 } else { 20 };
            calls.extend((0..10).map(|k| call(s * 1000 + k * 100, latency, OK)));
        }
        let health = Health::estimate(&calls.into_iter().collect(), Duration::from_secs(1));
        // The slow stretch is healthy by failures, so it lifts the healthy p99 to 60 ms...
        assert_eq!(health.healthy_p99, Duration::from_millis(60));
        assert_eq!(health.outages, []);
        // ... unless it also failed enough to be told apart.
        let mut calls = Vec::new();
        for s in 0..6u64 {
            let (latency, fail) = if s == 2 { (60, 1) } else { (20, 0) };
            calls.extend((0..10).map(|k| {
                call(
                    s * 1000 + k * 100,
                    latency,
                    if k < fail { FAIL } else { OK },
                )
            }));
        }
        let health = Health::estimate(&calls.into_iter().collect(), Duration::from_secs(1));
        assert_eq!(health.healthy_p99, Duration::from_millis(20));
        assert_eq!(
            health.outages,
            [Duration::from_secs(2)..Duration::from_secs(3)]
        );
    }
}
