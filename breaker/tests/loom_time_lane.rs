#![cfg(loom)]
//! Model checking, with loom, of the time window's lane (`engine/lane.rs`): a CLOSED success
//! or failure counted without the lock racing what the lock does, a failure, the failure
//! that trips the window, a rotation of the buckets and a reset, and two failures racing
//! for the lane's last credit. Whatever the order, every result is counted once, in the
//! generation it was admitted in, and the failure that reaches the threshold trips the
//! window judged with every result before it. The main thread counts first, so it owns the
//! breaker's totals and swaps the lane from its guess; the spawned ones read the word.
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p breakerbox --test loom_time_lane --release
//! ```

use std::time::Duration;

use breakerbox::clock::ManualClock;
use breakerbox::{Breaker, Config, State};
use loom::sync::Arc;
use loom::thread;

fn check(model: impl Fn() + Send + Sync + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(3);
    builder.check(model);
}

/// A time window of `span` in `buckets`, judged from 2 calls at a failure rate of 0.5.
fn breaker(span: Duration, buckets: u32) -> (Arc<Breaker>, ManualClock) {
    let config = Config::builder()
        .time_window(span, buckets)
        .min_calls(2)
        .failure_rate(0.5)
        .build()
        .unwrap();
    let clock = ManualClock::new();
    (
        Arc::new(Breaker::with_clock("libraryd", config, clock.clone())),
        clock,
    )
}

/// Runs `here` on this thread while `there` runs on another, on the same breaker, and waits
/// for both.
fn race(b: &Arc<Breaker>, here: impl FnOnce(), there: impl FnOnce(&Breaker) + Send + 'static) {
    let b = Arc::clone(b);
    let other = thread::spawn(move || there(&b));
    here();
    other.join().unwrap();
}

fn succeed_n(b: &Breaker, n: usize) {
    for _ in 0..n {
        b.try_acquire().expect("closed").success();
    }
}

fn fail_n(b: &Breaker, n: usize) {
    for _ in 0..n {
        b.try_acquire().expect("closed").failure();
    }
}

/// The state and the window's calls and failures.
fn window(b: &Breaker) -> (State, u32, u32) {
    let s = b.snapshot();
    (s.state, s.calls, s.failures)
}

#[test]
fn a_lane_success_racing_a_failure_is_counted_once() {
    check(|| {
        let (b, _) = breaker(Duration::from_secs(10), 10);
        // Judged and healthy: the lane is open.
        succeed_n(&b, 2);
        let success = b.try_acquire().unwrap();
        race(
            &b,
            || success.success(),
            |b| b.try_acquire().unwrap().failure(),
        );
        assert_eq!(window(&b), (State::Closed, 4, 1));
    });
}

#[test]
fn a_lane_success_racing_the_failure_that_trips_is_judged_before_it_or_discarded() {
    check(|| {
        let (b, _) = breaker(Duration::from_secs(10), 10);
        succeed_n(&b, 3);
        fail_n(&b, 2);
        let success = b.try_acquire().unwrap();
        race(
            &b,
            || success.success(),
            |b| b.try_acquire().unwrap().failure(),
        );
        match window(&b) {
            // The success first: 3 of 7.
            (State::Closed, calls, failures) => assert_eq!((calls, failures), (7, 3)),
            // The failure first: 3 of 6 tripped, and the success, of the generation before,
            // was discarded.
            (State::Open, calls, failures) => assert_eq!((calls, failures), (6, 3)),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            b.snapshot().totals.success,
            4,
            "every end is a lifetime total"
        );
    });
}

#[test]
fn a_lane_success_racing_a_rotation_is_counted_once_in_a_live_bucket() {
    check(|| {
        // Two buckets of a second.
        let (b, clock) = breaker(Duration::from_secs(2), 2);
        succeed_n(&b, 2);
        let success = b.try_acquire().unwrap();
        let there = clock.clone();
        race(
            &b,
            || success.success(),
            move |b| {
                there.advance(Duration::from_secs(1));
                // Moves the window to the second bucket.
                fail_n(b, 1);
            },
        );
        assert_eq!(window(&b), (State::Closed, 4, 1));
        clock.advance(Duration::from_secs(1));
        // The first bucket expired: the success is in it if its reading was before the
        // rotation, else in the second, with the failure.
        let (state, calls, failures) = window(&b);
        assert_eq!((state, failures), (State::Closed, 1));
        assert!(calls == 1 || calls == 2, "{calls} calls");
    });
}

#[test]
fn a_stale_success_racing_a_reset_never_counts_in_the_next_generation() {
    check(|| {
        let (b, _) = breaker(Duration::from_secs(10), 10);
        // The third through the lane: the main thread owns the totals, and counts its
        // successes on its own.
        succeed_n(&b, 3);
        let stale = b.try_acquire().unwrap();
        race(
            &b,
            || stale.success(),
            |b| {
                b.reset();
                // Judged again: the lane opens in the new generation.
                succeed_n(b, 2);
            },
        );
        // Counted before the reset, which emptied the window, or discarded after it.
        assert_eq!(window(&b), (State::Closed, 2, 0));
    });
}

#[test]
fn two_failures_racing_for_the_last_credit_trip_the_window_whichever_takes_it() {
    check(|| {
        let (b, _) = breaker(Duration::from_secs(10), 10);
        // 2 successes: judged, and one more failure (1 of 3) cannot trip: a credit of 1.
        succeed_n(&b, 2);
        let first = b.try_acquire().unwrap();
        race(
            &b,
            || first.failure(),
            |b| b.try_acquire().unwrap().failure(),
        );
        // One took the credit; the other was judged under the lock with it: 2 of 4.
        assert_eq!(window(&b), (State::Open, 4, 2));
    });
}

#[test]
fn a_lane_failure_racing_a_success_is_counted_once() {
    check(|| {
        let (b, _) = breaker(Duration::from_secs(10), 10);
        succeed_n(&b, 3);
        let failing = b.try_acquire().unwrap();
        race(
            &b,
            || failing.failure(),
            |b| b.try_acquire().unwrap().success(),
        );
        assert_eq!(window(&b), (State::Closed, 5, 1));
    });
}

#[test]
fn a_stale_failure_racing_a_reset_never_counts_in_the_next_generation() {
    check(|| {
        let (b, _) = breaker(Duration::from_secs(10), 10);
        // The third through the lane: the main thread owns the totals, and counts its
        // successes on its own.
        succeed_n(&b, 3);
        let stale = b.try_acquire().unwrap();
        race(
            &b,
            || stale.failure(),
            |b| {
                b.reset();
                succeed_n(b, 2);
            },
        );
        // Counted before the reset, which emptied the window, or discarded after it.
        assert_eq!(window(&b), (State::Closed, 2, 0));
        assert_eq!(b.snapshot().totals.failure, 1, "a lifetime total");
    });
}
