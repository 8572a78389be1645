//! Client-side adaptive throttling: in CLOSED, a call is refused with probability
//! `max(0, (requests - K * accepts) / (requests + 1))`, at most `throttle_max`, of the calls
//! that reached the downstream in the last `throttle_window`. Every count is exact: the
//! refusals are made by an accumulator, and time is a manual clock.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use breakerbox::clock::ManualClock;
use breakerbox::config::ConfigBuilder;
use breakerbox::events::CallEnding;
use breakerbox::{Breaker, Config, RejectReason, State};

/// A breaker whose failure window never trips on the calls of these tests, throttled by
/// `k` over a window of 10 s (10 buckets of 1 s).
fn throttled(k: f64) -> ConfigBuilder {
    Config::builder()
        .count_window(1000)
        .min_calls(1000)
        .throttle(k)
        .throttle_window(Duration::from_secs(10))
}

/// Asks `b` before any call has answered (nothing is refused then), then answers `accepts`
/// calls well and `requests - accepts` with a failure.
fn answered(b: &Breaker, requests: u32, accepts: u32) {
    let calls: Vec<_> = (0..requests).map(|_| b.try_acquire().unwrap()).collect();
    for (i, call) in calls.into_iter().enumerate() {
        if (i as u32) < accepts {
            call.success();
        } else {
            call.failure();
        }
    }
}

/// Asks `n` calls and drops those admitted (cancelled: no answer, so the counts stay as
/// they are); returns how many were refused.
fn refused_of(b: &Breaker, n: u32) -> u32 {
    let mut refused = 0;
    for _ in 0..n {
        match b.try_acquire() {
            Ok(permit) => drop(permit),
            Err(rejected) => {
                assert_eq!(rejected.reason(), RejectReason::Shed);
                refused += 1;
            }
        }
    }
    refused
}

#[test]
fn of_n_calls_exactly_the_floor_of_p_times_n_are_refused_for_k_1_5_2_and_3() {
    // (K, requests, accepts, p = (requests - K * accepts) / (requests + 1), refused of the
    // first 20 calls, of the first 50).
    for (k, requests, accepts, p, of_20, of_50) in [
        (1.5, 7, 2, 0.5, 10, 25),
        (2.0, 7, 2, 0.375, 7, 18),
        (3.0, 15, 3, 0.375, 7, 18),
        (3.0, 15, 4, 0.1875, 3, 9),
    ] {
        let b = Breaker::with_clock(
            "throttle",
            throttled(k).build().unwrap(),
            ManualClock::new(),
        );
        answered(&b, requests, accepts);
        assert_eq!(b.shed_probability(), p, "K = {k}");
        assert_eq!(refused_of(&b, 20), of_20, "K = {k}");
        // The accumulator carries what the first run left: the floor is of all 50 calls.
        assert_eq!(refused_of(&b, 30), of_50 - of_20, "K = {k}");
        let snapshot = b.snapshot();
        let by = snapshot.totals.rejected_by;
        assert_eq!(
            (by.shed, snapshot.totals.rejected),
            (of_50.into(), of_50.into())
        );
        // Refusals never enter the window: it holds the calls that answered.
        assert_eq!(
            (snapshot.calls, snapshot.failures),
            (requests, requests - accepts)
        );
    }
}

#[test]
fn no_call_is_refused_while_the_downstream_is_healthy() {
    for k in [1.0, 1.5, 2.0, 3.0] {
        let clock = ManualClock::new();
        let b = Breaker::with_clock("throttle", throttled(k).build().unwrap(), clock.clone());
        for _ in 0..50 {
            for _ in 0..20 {
                b.try_acquire().expect("a healthy downstream").success();
            }
            assert_eq!(b.shed_probability(), 0.0);
            clock.advance(Duration::from_millis(500));
        }
        assert_eq!(b.snapshot().totals.rejected, 0, "K = {k}");
    }
    // Failures at most (K - 1) times the successes refuse nothing either.
    let b = Breaker::with_clock(
        "throttle",
        throttled(2.0).build().unwrap(),
        ManualClock::new(),
    );
    answered(&b, 100, 50);
    assert_eq!(b.shed_probability(), 0.0);
    assert_eq!(refused_of(&b, 100), 0);
}

#[test]
fn the_refusals_stop_within_one_throttle_window_of_the_recovery() {
    for k in [1.0, 1.5, 2.0, 3.0] {
        let clock = ManualClock::new();
        let b = Breaker::with_clock("throttle", throttled(k).build().unwrap(), clock.clone());
        // The outage: every call that goes through fails, 200 calls asked at 0 s.
        for _ in 0..200 {
            if let Ok(call) = b.try_acquire() {
                call.failure();
            }
        }
        assert_eq!(b.shed_probability(), 0.9, "K = {k}: at the cap");
        // The downstream recovers at 1 s: it answers every call well, 20 calls a second.
        let mut refused_after = 0;
        for second in 1..=20 {
            clock.advance(Duration::from_secs(1));
            if second == 10 {
                // The outage's bucket, [0 s, 1 s), expires at 10 s: all its failures with it.
                assert_eq!(b.shed_probability(), 0.0, "K = {k}");
            }
            for _ in 0..20 {
                match b.try_acquire() {
                    Ok(call) => call.success(),
                    Err(_) => refused_after += u32::from(second >= 10),
                }
            }
        }
        assert_eq!(refused_after, 0, "K = {k}: refused after one window");
        assert_eq!(b.shed_probability(), 0.0);
    }
    // With K = 1 nothing but the expiry ends the refusals: the failures stay in the window
    // until then, whatever the successes.
    let clock = ManualClock::new();
    let b = Breaker::with_clock("throttle", throttled(1.0).build().unwrap(), clock.clone());
    let calls: Vec<_> = (0..99).map(|_| b.try_acquire().unwrap()).collect();
    let mut calls = calls.into_iter();
    calls.by_ref().take(10).for_each(|call| call.failure());
    clock.advance(Duration::from_secs(1));
    calls.for_each(|call| call.success());
    clock.advance(Duration::from_millis(8999));
    assert_eq!(b.shed_probability(), 0.1); // 10 / 100
    clock.advance(Duration::from_millis(1));
    assert_eq!(b.shed_probability(), 0.0);
}

#[test]
fn throttling_acts_beside_the_threshold_which_still_opens_at_its_rate() {
    let config = Config::builder()
        .count_window(10)
        .min_calls(10)
        .failure_rate(0.5)
        .throttle(2.0)
        .build()
        .unwrap();
    let b = Breaker::with_clock("throttle", config, ManualClock::new());
    let (mut failed, mut shed) = (0, 0);
    while b.state() == State::Closed {
        match b.try_acquire() {
            Ok(call) => {
                call.failure();
                failed += 1;
            }
            Err(rejected) => {
                assert_eq!(rejected.reason(), RejectReason::Shed);
                assert_eq!(rejected.retry_after(), None);
                shed += 1;
            }
        }
    }
    // The window counts the ten calls that answered, none of the 42 refused.
    assert_eq!((failed, shed), (10, 42));
    assert_eq!(b.state(), State::Open);
    let rejected = b.try_acquire().unwrap_err();
    assert_eq!(rejected.reason(), RejectReason::Open);
    assert_eq!(b.shed_probability(), 0.0);
    let by = b.snapshot().totals.rejected_by;
    assert_eq!((by.shed, by.open), (42, 1));
}

#[test]
fn a_refusal_is_told_to_call_listeners_and_says_why() {
    let b = Breaker::with_clock(
        "libraryd",
        throttled(2.0).build().unwrap(),
        ManualClock::new(),
    );
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    b.on_call(move |e| log.lock().unwrap().push(e.ending));
    answered(&b, 3, 0);
    // p = 3 / 4: the first call owes 0.75 of a refusal, the second is refused.
    drop(b.try_acquire().unwrap());
    let rejected = b.try_acquire().unwrap_err();
    assert_eq!(
        rejected.to_string(),
        "circuit 'libraryd' is shedding load by adaptive throttling"
    );
    assert_eq!(
        *seen.lock().unwrap(),
        [
            CallEnding::Failure,
            CallEnding::Failure,
            CallEnding::Failure,
            CallEnding::Cancelled,
            CallEnding::Rejected(RejectReason::Shed)
        ]
    );
}

#[test]
fn a_shadow_breaker_admits_the_calls_throttling_would_refuse_and_counts_them() {
    let config = throttled(2.0).shadow(true).build().unwrap();
    let b = Breaker::with_clock("throttle", config, ManualClock::new());
    answered(&b, 7, 2);
    // p = 0.375: of 20 calls, an enforcing breaker refuses 7.
    for _ in 0..20 {
        drop(b.try_acquire().expect("a shadow admits"));
    }
    let totals = b.snapshot().totals;
    assert_eq!((totals.rejected, totals.shadow_rejected), (0, 7));
    // The calls it let through answer as they will; those an enforcing breaker would have
    // refused count for nothing, so the probability moves as that breaker's would.
    // The first adds an accept (p is then (8 - 6) / 9); the second is one it would refuse,
    // whose success counts in the totals only; then p falls to 0.
    for _ in 0..8 {
        b.try_acquire().expect("a shadow admits").success();
    }
    let totals = b.snapshot().totals;
    assert_eq!(
        (totals.shadow_rejected, totals.success, totals.rejected),
        (8, 10, 0)
    );
    assert_eq!(b.shed_probability(), 0.0);
}

#[test]
fn throttling_turned_on_and_off_by_a_new_configuration() {
    let clock = ManualClock::new();
    let plain = Config::builder()
        .count_window(1000)
        .min_calls(1000)
        .build()
        .unwrap();
    let b = Breaker::with_clock("throttle", plain.clone(), clock);
    answered(&b, 7, 2);
    assert_eq!(refused_of(&b, 20), 0);
    b.reconfigure(throttled(2.0).build().unwrap());
    // Counted from the configuration on: the answers before it were no throttle's.
    answered(&b, 7, 2);
    assert_eq!(refused_of(&b, 20), 7);
    b.reconfigure(plain);
    assert_eq!((refused_of(&b, 20), b.shed_probability()), (0, 0.0));
}
