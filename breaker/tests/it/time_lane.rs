//! A time window's CLOSED results counted without the lock, in its lane, while none can
//! trip the window (any success, and as many failures as the lane was given credit for):
//! every one is counted, in its own bucket and generation, and the call that reaches the
//! threshold is still the one that trips. The races are loom's
//! (`tests/loom_time_lane.rs`); these are the sequences, on a manual clock.

use std::sync::Arc;
use std::thread;
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

#[test]
fn failures_past_the_lanes_credit_are_judged_and_the_one_that_reaches_the_rate_trips() {
    let (b, _) = manual("libraryd", window(10_000, 10, 2));
    // Judged at 2 calls: one more failure (1 of 3) cannot trip, two could (2 of 4).
    succeed_n(&b, 2);
    succeed_n(&b, 10);
    // The lane's one credit, then the lock: 2 of 14, and a credit of 9 (11 of 23 stays
    // under, 12 of 24 reaches the rate).
    fail_n(&b, 2);
    let s = b.snapshot();
    assert_eq!((s.state, s.calls, s.failures), (State::Closed, 14, 2));
    fail_n(&b, 9);
    let s = b.snapshot();
    assert_eq!((s.state, s.calls, s.failures), (State::Closed, 23, 11));
    fail_n(&b, 1);
    let s = b.snapshot();
    assert_eq!((s.state, s.calls, s.failures), (State::Open, 24, 12));
}

#[test]
fn failures_and_successes_in_any_order_trip_exactly_at_the_rate() {
    for failures_first in [true, false] {
        let (b, _) = manual("libraryd", window(10_000, 10, 4));
        succeed_n(&b, 4);
        let (mut calls, mut failed) = (4u32, 0u32);
        // One failure and one success a round until the rate is reached: 4 + 2k calls with
        // k failures never reach 0.5, so it never trips this way.
        for _ in 0..50 {
            if failures_first {
                fail_n(&b, 1);
                succeed_n(&b, 1);
            } else {
                succeed_n(&b, 1);
                fail_n(&b, 1);
            }
            calls += 2;
            failed += 1;
        }
        let s = b.snapshot();
        assert_eq!(
            (s.state, s.calls, s.failures),
            (State::Closed, calls, failed)
        );
        // 50 of 104: the 4 failures that make 54 of 108 reach the rate; 3 do not.
        fail_n(&b, 3);
        assert_eq!(b.state(), State::Closed, "53 of 107");
        fail_n(&b, 1);
        let s = b.snapshot();
        assert_eq!((s.state, s.calls, s.failures), (State::Open, 108, 54));
    }
}

#[test]
fn a_failure_admitted_in_an_earlier_generation_is_discarded_while_the_lane_is_open() {
    let (b, _) = manual("libraryd", window(10_000, 10, 2));
    let stale: Vec<_> = (0..3).map(|_| b.try_acquire().unwrap()).collect();
    b.reset();
    succeed_n(&b, 4);
    stale.into_iter().for_each(|permit| permit.failure());
    let s = b.snapshot();
    assert_eq!((s.state, s.calls, s.failures), (State::Closed, 4, 0));
    assert_eq!(s.totals.failure, 3, "a lifetime total");
}

#[test]
fn a_failure_past_its_bucket_is_counted_in_the_next() {
    // Two buckets of a second.
    let (b, clock) = manual("libraryd", window(2_000, 2, 2));
    succeed_n(&b, 3);
    clock.advance(Duration::from_millis(1_000));
    // The lane was opened for the first bucket, which has ended.
    fail_n(&b, 1);
    assert_eq!(b.snapshot().calls, 4);
    clock.advance(Duration::from_millis(1_000));
    let s = b.snapshot();
    assert_eq!((s.calls, s.failures), (1, 1), "the first bucket expired");
}

#[test]
fn results_of_the_totals_owner_and_of_other_threads_are_each_counted_once() {
    let (b, _) = manual("libraryd", window(10_000, 10, 4));
    // This thread counts first: it owns the totals, and counts its successes on its own.
    succeed_n(&b, 4);
    let b = Arc::new(b);
    let calls = |b: &Breaker| {
        for i in 0..10_000 {
            let permit = b.try_acquire().expect("one failure in ten never trips");
            if i % 10 == 0 {
                permit.failure();
            } else {
                permit.success();
            }
        }
    };
    let others: Vec<_> = (0..3)
        .map(|_| {
            let b = Arc::clone(&b);
            thread::spawn(move || calls(&b))
        })
        .collect();
    calls(&b);
    others.into_iter().for_each(|t| t.join().unwrap());
    let s = b.snapshot();
    assert_eq!(
        (s.state, s.calls, s.failures),
        (State::Closed, 40_004, 4_000)
    );
    assert_eq!((s.totals.success, s.totals.failure), (36_004, 4_000));
}
