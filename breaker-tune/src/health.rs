//! The downstream's health over time, estimated from a recording's outcomes and latencies.
//!
//! Buckets are kept only for the seconds that have a call, so the estimate takes memory in
//! proportion to the calls, whatever the span of the trace.

use std::ops::Range;
use std::time::Duration;

use breakerbox::recording::{CallOutcome, RecordedCall};
use breakerbox::Outcome;

/// A stretch is sick from this failure rate up.
pub const SICK_RATE: f64 = 0.3;
/// ... or when its median success is this many times slower than the healthy p99.
pub const SICK_SLOWDOWN: f64 = 3.0;
/// A stretch may be healthy, for the healthy p99, below this failure rate.
const HEALTHY_RATE: f64 = 0.1;

/// One stretch of the recording that has a call.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Bucket {
    /// Its index: it starts at `at` times the bucket's length.
    pub at: u64,
    /// Calls that ran (rejected ones did not).
    pub calls: u32,
    pub failures: u32,
    /// Calls the recorded breaker rejected.
    pub rejected: u32,
    /// The median latency of its successes, if any.
    pub median: Option<Duration>,
    /// Whether the downstream was sick (failing or slow); for a bucket without a call that
    /// ran, what the last bucket that had one said (the first one's, at the start).
    pub sick: bool,
    /// Whether it was sick for being slow, not for failing.
    pub slow: bool,
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
    /// The buckets that have a call, in order.
    pub buckets: Vec<Bucket>,
    /// The median of the healthy-looking buckets' medians: the downstream's usual speed,
    /// which a slow stretch shorter than half the trace cannot move.
    pub baseline_median: Duration,
    /// The p99 latency of successes in the baseline buckets: those failing under 10% whose
    /// median is within 3 times the baseline median.
    pub healthy_p99: Duration,
    /// The sick stretches (failing or slow), as times from the recording's start.
    pub outages: Vec<Range<Duration>>,
    /// The stretches sick for being slow only; each lies within an outage.
    pub slow: Vec<Range<Duration>>,
    /// For each outage, whether the recorded breaker rejected calls in it: then nothing
    /// showed how the downstream answered them, and the outage's end is a guess.
    pub censored: Vec<bool>,
    /// When the last call started.
    pub end: Duration,
}

impl Health {
    /// Estimates health in buckets of `bucket` from calls in the order of their start.
    pub fn estimate(calls: &[RecordedCall], bucket: Duration) -> Health {
        let end = calls.last().map_or(Duration::ZERO, |c| c.start);
        let index = |c: &RecordedCall| index_of(bucket, c.start);

        // The successes' latencies, grouped by bucket (the calls are in order).
        let mut latencies = Vec::new();
        let mut ranges = Vec::new();
        let mut buckets: Vec<Bucket> = Vec::new();
        for call in calls {
            let at = index(call);
            if buckets.last().is_none_or(|b| b.at != at) {
                buckets.push(Bucket {
                    at,
                    ..Bucket::default()
                });
                ranges.push(latencies.len()..latencies.len());
            }
            let (b, range) = (buckets.last_mut().unwrap(), ranges.last_mut().unwrap());
            match call.outcome {
                CallOutcome::Completed(Outcome::Success) => {
                    b.calls += 1;
                    latencies.push(call.latency);
                    range.end += 1;
                }
                CallOutcome::Completed(Outcome::Failure) => {
                    b.calls += 1;
                    b.failures += 1;
                }
                CallOutcome::Completed(Outcome::Ignored) => {}
                CallOutcome::Rejected(_) => b.rejected += 1,
            }
        }
        for (b, range) in buckets.iter_mut().zip(&ranges) {
            let lat = &mut latencies[range.clone()];
            lat.sort_unstable();
            b.median = lat.get(lat.len() / 2).copied();
        }
        let low_failure = |b: &Bucket| b.failure_rate().is_some_and(|r| r < HEALTHY_RATE);
        let mut medians: Vec<Duration> = buckets
            .iter()
            .filter(|b| low_failure(b))
            .filter_map(|b| b.median)
            .collect();
        medians.sort_unstable();
        let baseline_median = medians
            .get(medians.len().saturating_sub(1) / 2)
            .copied()
            .unwrap_or_default();
        let mut healthy = Vec::new();
        for (b, range) in buckets.iter().zip(&ranges) {
            let usual = b
                .median
                .is_some_and(|m| m.as_secs_f64() <= SICK_SLOWDOWN * baseline_median.as_secs_f64());
            if low_failure(b) && usual {
                healthy.extend_from_slice(&latencies[range.clone()]);
            }
        }
        drop(latencies);
        healthy.sort_unstable();
        let healthy_p99 = quantile(&healthy, 0.99).unwrap_or(Duration::ZERO);
        drop(healthy);

        let openings = openings(calls);
        let first_known = buckets.iter().find_map(|b| judge(b, healthy_p99));
        let mut known = None;
        for b in &mut buckets {
            known = judge(b, healthy_p99).or(known);
            let (sick, slow) = known.or(first_known).unwrap_or((false, false));
            (b.sick, b.slow) = (sick, slow);
            // Where the recorded breaker started rejecting, it had judged the downstream
            // sick: so was the stretch, whatever its other calls say.
            if openings
                .iter()
                .any(|o| index_of(bucket, o.rejected) == b.at)
            {
                known = Some((true, false));
                (b.sick, b.slow) = (true, false);
            }
        }
        let mut outages = stretches(&buckets, bucket, end, |b| b.sick);
        // An outage the breaker rejected in began no later than the failures that opened it.
        for opening in &openings {
            if let Some(o) = outages
                .iter_mut()
                .find(|o| o.start <= opening.rejected && opening.rejected < o.end)
            {
                o.start = o.start.min(opening.failed);
            }
        }
        let outages = merged(outages);
        let slow = stretches(&buckets, bucket, end, |b| b.slow);
        let censored = outages
            .iter()
            .map(|o| {
                buckets.iter().any(|b| {
                    let start = start_of(bucket, b.at);
                    b.rejected > 0 && o.start <= start && start < o.end
                })
            })
            .collect();
        Health {
            bucket,
            buckets,
            baseline_median,
            healthy_p99,
            outages,
            slow,
            censored,
            end,
        }
    }

    /// The outage that `t` falls in, if any.
    pub fn outage_at(&self, t: Duration) -> Option<usize> {
        let i = self.outages.partition_point(|o| o.end <= t);
        (i < self.outages.len() && self.outages[i].start <= t).then_some(i)
    }

    /// Where bucket `b` starts.
    pub fn start_of(&self, b: &Bucket) -> Duration {
        start_of(self.bucket, b.at)
    }
}

/// Where the recorded breaker began to reject: its first rejection, and the first of the
/// failures since the last success before it (the failures that opened it).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Opening {
    failed: Duration,
    rejected: Duration,
}

/// Every time the recorded breaker began to reject after failures, in order.
fn openings(calls: &[RecordedCall]) -> Vec<Opening> {
    let mut out = Vec::new();
    let mut failing_since = None;
    let mut rejecting = false;
    for call in calls {
        match call.outcome {
            CallOutcome::Completed(Outcome::Success) => (failing_since, rejecting) = (None, false),
            CallOutcome::Completed(Outcome::Failure) => {
                failing_since = failing_since.or(Some(call.start));
                rejecting = false;
            }
            CallOutcome::Completed(Outcome::Ignored) => {}
            CallOutcome::Rejected(_) => {
                if let (false, Some(failed)) = (rejecting, failing_since) {
                    out.push(Opening {
                        failed,
                        rejected: call.start,
                    });
                }
                rejecting = true;
            }
        }
    }
    out
}

/// The index of the bucket `t` falls in.
fn index_of(bucket: Duration, t: Duration) -> u64 {
    (t.as_nanos() / bucket.as_nanos()) as u64
}

/// Stretches in order with those that overlap joined.
fn merged(mut stretches: Vec<Range<Duration>>) -> Vec<Range<Duration>> {
    stretches.sort_by_key(|s| s.start);
    let mut out: Vec<Range<Duration>> = Vec::new();
    for s in stretches {
        match out.last_mut() {
            Some(last) if s.start <= last.end => last.end = last.end.max(s.end),
            _ => out.push(s),
        }
    }
    out
}

/// Where the bucket of index `at` starts.
fn start_of(bucket: Duration, at: u64) -> Duration {
    let nanos = bucket.as_nanos() * u128::from(at);
    Duration::new(
        (nanos / 1_000_000_000) as u64,
        (nanos % 1_000_000_000) as u32,
    )
}

/// Whether a bucket with calls that ran was sick, and whether for being slow only; `None`
/// without such calls.
fn judge(b: &Bucket, healthy_p99: Duration) -> Option<(bool, bool)> {
    let failing = b.failure_rate()? >= SICK_RATE;
    let slow = b.median.is_some_and(|m| {
        !healthy_p99.is_zero() && m.as_secs_f64() >= SICK_SLOWDOWN * healthy_p99.as_secs_f64()
    });
    Some((failing || slow, slow && !failing))
}

/// The stretches of buckets that `holds`: each from its first bucket's start to the start of
/// the next bucket that does not hold (or the end of the last bucket).
fn stretches(
    buckets: &[Bucket],
    bucket: Duration,
    end: Duration,
    holds: impl Fn(&Bucket) -> bool,
) -> Vec<Range<Duration>> {
    let start_of = |b: &Bucket| start_of(bucket, b.at);
    let mut out: Vec<Range<Duration>> = Vec::new();
    let mut open: Option<Duration> = None;
    for b in buckets {
        match (open, holds(b)) {
            (None, true) => open = Some(start_of(b)),
            (Some(from), false) => {
                out.push(from..start_of(b));
                open = None;
            }
            _ => {}
        }
    }
    if let Some(from) = open {
        let last = buckets.last().map_or(end, |b| start_of(b) + bucket);
        out.push(from..last);
    }
    out
}

/// The `q` quantile of sorted values (nearest rank).
pub fn quantile(sorted: &[Duration], q: f64) -> Option<Duration> {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1));
    sorted.get(rank - 1).copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::call;

    const OK: CallOutcome = CallOutcome::Completed(Outcome::Success);
    const FAIL: CallOutcome = CallOutcome::Completed(Outcome::Failure);
    const REJECTED: CallOutcome = CallOutcome::Rejected(breakerbox::RejectReason::Open);

    fn estimate(calls: Vec<RecordedCall>) -> Health {
        let mut calls = calls;
        calls.sort_by_key(|c| c.start);
        Health::estimate(&calls, Duration::from_secs(1))
    }

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
        let health = estimate(calls);
        assert_eq!(
            health.outages,
            [Duration::from_secs(3)..Duration::from_secs(7)]
        );
        assert_eq!(health.censored, [true]);
        assert_eq!(health.slow, []);
        assert_eq!(health.healthy_p99, Duration::from_millis(19));
        assert_eq!(health.outage_at(Duration::from_millis(6999)), Some(0));
        assert_eq!(health.outage_at(Duration::from_secs(7)), None);
        assert_eq!(health.buckets[3].failure_rate(), Some(1.0));
        assert_eq!(health.buckets[5].failure_rate(), None);
    }

    #[test]
    fn a_slow_stretch_without_errors_is_found_from_the_healthy_baseline() {
        // 5 ms calls, but 150 ms from 2 s to 4 s: no failure at all.
        let mut calls = Vec::new();
        for s in 0..10u64 {
            let latency = if (2..4).contains(&s) { 150 } else { 5 };
            calls.extend((0..10).map(|k| call(s * 1000 + k * 100, latency, OK)));
        }
        let health = estimate(calls);
        assert_eq!(health.baseline_median, Duration::from_millis(5));
        assert_eq!(health.healthy_p99, Duration::from_millis(5));
        let secs = Duration::from_secs;
        assert_eq!(health.outages, [secs(2)..secs(4)]);
        assert_eq!(health.slow, [secs(2)..secs(4)]);
        assert_eq!(health.censored, [false]);
    }

    #[test]
    fn an_enforcing_trace_places_the_outage_at_the_failures_that_opened_the_breaker() {
        // 100 calls a second; the downstream fails from 46.5 s to 51 s. The recorded breaker
        // opens after 10 failures, at 46.6 s, rejects for 3 s, probes at 49.6 s (a failure,
        // so 3 s more) and at 52.6 s (a success). Second 46 ran 50 successes and 10
        // failures, under the sick rate: by its calls alone it looks healthy, and the
        // seconds after it ran nothing.
        let mut calls = Vec::new();
        for ms in (0..60_000u64).step_by(10) {
            let outcome = match ms {
                46_500..46_600 => FAIL,
                49_600 => FAIL,
                46_600..52_600 => REJECTED,
                _ => OK,
            };
            calls.push(call(ms, 5, outcome));
        }
        let health = estimate(calls);
        // From the start of the second the failures began in (by its calls alone, the
        // outage began at 49 s, where the probe failed), to the second a call succeeded.
        let secs = Duration::from_secs;
        assert_eq!(health.outages, [secs(46)..secs(52)]);
        assert!(health.outages[0].start <= Duration::from_millis(46_500));
        assert_eq!(health.censored, [true]);
    }

    #[test]
    fn seconds_without_calls_take_no_memory() {
        // Two calls 31 years apart, in milliseconds since 1970 as an access log gives them.
        let calls = vec![
            call(1_000_000_000_000, 5, OK),
            call(1_000_000_000_500, 5, OK),
            call(2_000_000_000_000, 5, FAIL),
        ];
        let health = estimate(calls);
        assert_eq!(health.buckets.len(), 2);
        assert_eq!(health.buckets[1].at, 2_000_000_000);
        assert_eq!(
            health.outages,
            [Duration::from_secs(2_000_000_000)..Duration::from_secs(2_000_000_001)]
        );
    }
}
