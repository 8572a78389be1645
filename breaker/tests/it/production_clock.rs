//! OPEN on the production clock, which rejects on the kernel's coarse clock while it is
//! sure the period has not ended and reads its precise clock near the end; and a time
//! window on it, which records into its newest bucket the same way.
//!
//! These run on real time, so they assert what real time allows exactly: the time left a
//! rejection tells is never more than the open period and never too early. Waiting for it,
//! and no longer, must find the breaker ready for a probe.

use std::time::{Duration, Instant};

use breakerbox::clock::MonotonicClock;
use breakerbox::{Breaker, Config, RejectReason, State};

fn config(open_for: Duration) -> Config {
    Config::builder()
        .count_window(1)
        .min_calls(1)
        .open_for(open_for)
        .probes(1)
        .build()
        .unwrap()
}

fn opened(open_for: Duration) -> Breaker {
    let b = Breaker::with_clock("libraryd", config(open_for), MonotonicClock);
    b.try_acquire().unwrap().failure();
    assert_eq!(b.state(), State::Open);
    b
}

#[test]
fn a_rejection_tells_no_more_than_the_period() {
    let open_for = Duration::from_secs(5);
    let opened_at = Instant::now();
    let b = opened(open_for);
    for _ in 0..1_000 {
        let rejected = b.try_acquire().unwrap_err();
        assert_eq!(rejected.reason(), RejectReason::Open);
        let left = rejected.retry_after().unwrap();
        assert!(left <= open_for, "{left:?} left of a {open_for:?} period");
        // Never less than the time truly left.
        assert!(left >= open_for.saturating_sub(opened_at.elapsed()));
    }
    assert_eq!(b.snapshot().totals.rejected, 1_000);
    assert_eq!(b.state(), State::Open);
}

/// Rejections within one tick of the coarse clock read the same time, so they tell the same
/// time left: the breaker did not read its precise clock for them.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[test]
fn rejections_far_from_the_end_read_the_coarse_clock() {
    let b = opened(Duration::from_secs(5));
    let mut told: Vec<Duration> = (0..100)
        .map(|_| b.try_acquire().unwrap_err().retry_after().unwrap())
        .collect();
    told.dedup();
    // 100 rejections take microseconds: one or two ticks, and one more each time the
    // thread is descheduled across a tick. Each reading of the precise clock would differ.
    assert!(told.len() < 10, "{} different times left", told.len());
}

#[test]
fn waiting_the_time_a_rejection_tells_finds_a_probe() {
    // A period that starts on the coarse clock (more than 20 ms from its end) and one that
    // reads the precise clock throughout.
    for open_for in [Duration::from_millis(60), Duration::from_millis(3)] {
        let b = opened(open_for);
        let left = b.try_acquire().unwrap_err().retry_after().unwrap();
        assert!(left <= open_for);
        std::thread::sleep(left);
        let probe = b.try_acquire().expect("the period has ended");
        assert_eq!(b.state(), State::HalfOpen);
        probe.success();
        assert_eq!(b.state(), State::Closed);
    }
}

#[test]
fn a_breaker_opened_again_rejects_for_its_new_period() {
    let b = opened(Duration::from_millis(30));
    std::thread::sleep(b.try_acquire().unwrap_err().retry_after().unwrap());
    // The probe fails: a new period of the same length, told afresh.
    let probe = b.try_acquire().unwrap();
    let reopened_at = Instant::now();
    probe.failure();
    assert_eq!(b.state(), State::Open);
    let left = b.try_acquire().unwrap_err().retry_after().unwrap();
    let period = Duration::from_millis(30);
    assert!(left <= period && left >= period.saturating_sub(reopened_at.elapsed()));
}

#[test]
fn a_period_shortened_while_open_is_told_and_kept() {
    let b = opened(Duration::from_secs(5));
    b.try_acquire().unwrap_err();
    // An operator shortens the open period: the breaker stays open, for the new period.
    b.reconfigure(config(Duration::from_millis(30)));
    assert_eq!(b.state(), State::Open);
    let left = b.try_acquire().unwrap_err().retry_after().unwrap();
    assert!(left <= Duration::from_millis(30), "{left:?}");
    std::thread::sleep(left);
    b.try_acquire()
        .expect("the shortened period has ended")
        .success();
    assert_eq!(b.state(), State::Closed);
}

/// A time window on the production clock counts every call and trips at the exact call:
/// recorded on the coarse clock while it is sure of the newest bucket, exactly as on the
/// precise clock.
#[test]
fn a_time_window_counts_exactly_on_the_production_clock() {
    let config = Config::builder()
        .time_window(Duration::from_secs(600), 10)
        .min_calls(1_000)
        .failure_rate(0.5)
        .build()
        .unwrap();
    let b = Breaker::with_clock("libraryd", config, MonotonicClock);
    for _ in 0..500 {
        b.try_acquire().unwrap().success();
    }
    for _ in 0..499 {
        b.try_acquire().unwrap().failure();
    }
    let s = b.snapshot();
    assert_eq!((s.calls, s.failures, s.state), (999, 499, State::Closed));
    // The 1,000th call is judged: 500 of 1,000 failed, 0.5 >= 0.5.
    b.try_acquire().unwrap().failure();
    assert_eq!(b.state(), State::Open);
    assert_eq!(b.snapshot().totals.failure, 500);
}
