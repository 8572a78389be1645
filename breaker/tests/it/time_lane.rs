//! A time window's CLOSED successes counted without the lock, in its lane, while none can
//! trip the window: every one is counted, in its own bucket and generation, and the call
//! that reaches the threshold is still the one that trips. The races are loom's
//! (`tests/loom_time_lane.rs`); these are the sequences, on a manual clock.

use std::time::Duration;

use breakerbox::testing::{fail_n, manual};
use breakerbox::{Breaker, Config, State};

fn succeed_n(b: &Breaker, n: usize) {
    for _ in 0..n {
        b.try_acquire().expect("admitted").success();
    }
}

/// A window of `span_ms` in `buckets`, judged from `min_calls` at a failure rate of 0.5.
fn window(span_ms: u64, buckets: u32, min_calls: u32) -> Config {
    Config::builder()
        .time_window(Duration::from_millis(span_ms), buckets)
        .min_calls(min_calls)
        .failure_rate(0.5)
        .build()
        .unwrap()
}

#[test]
fn successes_counted_in_the_lane_are_all_judged_with_the_failure_that_trips() {
    let (b, _) = manual("libraryd", window(10_000, 10, 4));
    // From the 5th on, the window is judged and healthy: the lane counts them.
    succeed_n(&b, 100);
    fail_n(&b, 99);
    assert_eq!(b.state(), State::Closed, "99 of 199 failed");
    let s = b.snapshot();
    assert_eq!((s.calls, s.failures), (199, 99));
    fail_n(&b, 1);
    assert_eq!(b.state(), State::Open, "100 of 200 failed");
    assert_eq!((b.snapshot().calls, b.snapshot().failures), (200, 100));
}

#[test]
fn a_success_past_its_bucket_is_counted_in_the_next() {
    // Two buckets of a second.
    let (b, clock) = manual("libraryd", window(2_000, 2, 2));
    succeed_n(&b, 3);
    clock.advance(Duration::from_millis(1_000));
    // The lane was opened for the first bucket, which has ended.
    succeed_n(&b, 1);
    clock.advance(Duration::from_millis(1_000));
    let s = b.snapshot();
    assert_eq!((s.calls, s.failures), (1, 0), "the first bucket expired");
}

#[test]
fn a_success_after_buckets_expire_is_judged_and_may_trip() {
    let (b, clock) = manual("libraryd", window(2_000, 2, 2));
    succeed_n(&b, 3);
    clock.advance(Duration::from_millis(1_000));
    fail_n(&b, 2);
    assert_eq!(b.state(), State::Closed, "2 of 5 failed");
    clock.advance(Duration::from_millis(1_000));
    // The 3 successes expire: with this one, 2 failures of 3 calls.
    succeed_n(&b, 1);
    assert_eq!(b.state(), State::Open);
}

#[test]
fn the_success_that_brings_the_window_to_min_calls_is_judged_and_may_trip() {
    let (b, _) = manual("libraryd", window(10_000, 10, 4));
    fail_n(&b, 3);
    assert_eq!(b.state(), State::Closed, "3 calls, fewer than min_calls");
    succeed_n(&b, 1);
    assert_eq!(b.state(), State::Open, "3 of 4 failed");
}

#[test]
fn a_success_admitted_in_an_earlier_generation_is_discarded_while_the_lane_is_open() {
    let (b, _) = manual("libraryd", window(10_000, 10, 2));
    let stale: Vec<_> = (0..3).map(|_| b.try_acquire().unwrap()).collect();
    b.reset();
    succeed_n(&b, 4);
    stale.into_iter().for_each(|permit| permit.success());
    let s = b.snapshot();
    assert_eq!((s.state, s.calls, s.failures), (State::Closed, 4, 0));
    assert_eq!(
        s.totals.success, 7,
        "every end is counted in the lifetime totals"
    );
}

#[test]
fn a_snapshot_between_lane_successes_counts_each_once() {
    let (b, clock) = manual("libraryd", window(4_000, 4, 2));
    let mut counted = Vec::new();
    for round in 0..6 {
        succeed_n(&b, 5);
        fail_n(&b, usize::from(round % 2 == 0));
        counted.push(b.snapshot().calls);
        clock.advance(Duration::from_millis(500));
    }
    // Buckets of a second: the first expires at 4s, after the 6th snapshot at 2.5s.
    assert_eq!(counted, [6, 11, 17, 22, 28, 33]);
    clock.advance(Duration::from_millis(1_500));
    // At 4.5s the bucket [0s, 1s) of rounds 0 and 1 is gone: 11 calls of 33.
    assert_eq!(b.snapshot().calls, 22);
}
