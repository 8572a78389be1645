//! What the benchmarks build alike: the downstream, the mix of failures, our breaker,
//! recloser and failsafe's consecutive-failures policy, each with its call wrapper. Every
//! breaker is configured alike: a count window of 20 calls, judged from 10 on, opening at a
//! failure rate of 0.5, open for 5s, 3 half-open probes.

use std::hint::black_box;
use std::time::Duration;

use breakerbox::clock::MonotonicClock;
use breakerbox::{Breaker, Classify, Config, Outcome, Rejected};

pub const WINDOW: u32 = 20;
pub const MIN_CALLS: u32 = 10;
pub const RATE: f64 = 0.5;
pub const OPEN: Duration = Duration::from_secs(5);
pub const PROBES: u32 = 3;

/// The downstream: it fails when asked to.
#[derive(Debug)]
pub struct Down;

impl std::fmt::Display for Down {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("down")
    }
}

impl std::error::Error for Down {}

impl Classify for Down {
    fn classify(&self) -> Outcome {
        Outcome::Failure
    }
}

impl From<Rejected> for Down {
    fn from(_: Rejected) -> Self {
        Down
    }
}

#[inline]
pub fn downstream(fail: bool) -> Result<u64, Down> {
    if black_box(fail) {
        Err(Down)
    } else {
        Ok(black_box(1))
    }
}

/// Every tenth call fails: below the failure rate, so every breaker stays closed.
pub struct Mix(pub u64);

impl Mix {
    #[inline]
    pub fn next(&mut self) -> bool {
        self.0 += 1;
        self.0.is_multiple_of(10)
    }
}

// ---- the breakers both benchmarks measure ----

/// Ours, on the production clock, named (it is also the default clock: this package leaves
/// `test-util` out).
pub fn ours(open: Duration) -> Breaker {
    let config = Config::builder()
        .count_window(WINDOW)
        .min_calls(MIN_CALLS)
        .failure_rate(RATE)
        .open_for(open)
        .probes(PROBES)
        .build()
        .unwrap();
    Breaker::with_clock("bench", config, MonotonicClock)
}

#[inline(always)]
pub fn call_ours(b: &Breaker, fail: bool) {
    match b.try_acquire() {
        Ok(permit) => match downstream(fail) {
            Ok(v) => {
                black_box(v);
                permit.success();
            }
            Err(_) => permit.failure(),
        },
        Err(rejected) => {
            black_box(&rejected);
        }
    }
}

pub type FailsafeConsecutive = failsafe::StateMachine<
    failsafe::failure_policy::ConsecutiveFailures<failsafe::backoff::Constant>,
    (),
>;

/// failsafe has no count window: 10 consecutive failures is the nearest rule of its first
/// policy; no half-open probe limit.
pub fn failsafe_consecutive(open: Duration) -> FailsafeConsecutive {
    let policy = failsafe::failure_policy::consecutive_failures(
        MIN_CALLS,
        failsafe::backoff::constant(open),
    );
    failsafe::Config::new().failure_policy(policy).build()
}

#[inline(always)]
pub fn call_failsafe(f: &impl failsafe::CircuitBreaker, fail: bool) {
    let _ = f.call(|| downstream(fail));
}

/// recloser: a count ring of 20 judged only once full (no separate minimum), 3 half-open
/// calls judged as a ring of 3 (not concurrent probes).
pub fn recloser(open: Duration) -> recloser::Recloser {
    recloser::Recloser::custom()
        .error_rate(RATE as f32)
        .closed_len(WINDOW as usize)
        .half_open_len(PROBES as usize)
        .open_wait(open)
        .build()
}

#[inline(always)]
pub fn call_recloser(r: &recloser::Recloser, fail: bool) {
    let _ = r.call(|| downstream(fail));
}
