//! Manual open periods (`Breaker::open_for`, `Breaker::open_until`): OPEN now for exactly the
//! period asked, whatever the state, then HALF_OPEN at the first call after it, lazily, as
//! after any OPEN; the transition says `ManualOpen`; the backoff is left as it stands. Each
//! test is named for the rule it proves, on a manual clock.

use std::time::Duration;

use breakerbox::clock::ManualClock;
use breakerbox::{events::TransitionReason, Breaker, Config, RejectReason, State};

const NANO: Duration = Duration::from_nanos(1);
const SEC: Duration = Duration::from_secs(1);

use crate::support::transitions;

use transitions::{watched, Seen};

/// A breaker named `libraryd` on a manual clock, and the transitions it makes.
fn breaker(config: Config) -> (Breaker, ManualClock, Seen) {
    watched("libraryd", config)
}

/// A window of 2 calls that opens on 2 failures for 5 s, one probe.
fn config() -> Config {
    Config::builder()
        .count_window(2)
        .min_calls(2)
        .probes(1)
        .build()
        .unwrap()
}

fn retry_after(b: &Breaker) -> Option<Duration> {
    let rejected = b.try_acquire().expect_err("open");
    assert_eq!(rejected.reason(), RejectReason::Open);
    rejected.retry_after()
}

#[test]
fn open_for_rejects_for_exactly_that_long_then_half_opens_at_the_next_call() {
    let (b, clock, seen) = breaker(config());
    b.open_for(30 * SEC);
    assert_eq!(b.state(), State::Open);
    assert_eq!(retry_after(&b), Some(30 * SEC));
    clock.advance(30 * SEC - NANO);
    assert_eq!(retry_after(&b), Some(NANO));
    clock.advance(NANO);
    assert_eq!(
        b.state(),
        State::Open,
        "no timer: OPEN ends at the next call"
    );
    b.try_acquire().expect("a probe").success();
    assert_eq!(b.state(), State::Closed);
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (State::Closed, State::Open, TransitionReason::ManualOpen),
            (State::Open, State::HalfOpen, TransitionReason::OpenElapsed),
            (
                State::HalfOpen,
                State::Closed,
                TransitionReason::TrialPassed
            ),
        ]
    );
    let totals = b.snapshot().totals;
    assert_eq!((totals.rejected_by.open, totals.success), (2, 1));
}

#[test]
fn open_until_opens_until_that_instant_of_the_breakers_clock() {
    let (b, clock, seen) = breaker(config());
    clock.advance(7 * SEC);
    b.open_until(b.now() + 90 * SEC);
    assert_eq!(retry_after(&b), Some(90 * SEC));
    clock.advance(90 * SEC);
    b.try_acquire().expect("a probe").success();
    assert_eq!(seen.lock().unwrap().len(), 3);
}

#[test]
fn open_until_an_instant_past_makes_the_next_call_a_probe() {
    let (b, clock, seen) = breaker(config());
    let earlier = b.now();
    clock.advance(SEC);
    b.open_until(earlier);
    assert_eq!(b.state(), State::Open);
    let probe = b.try_acquire().expect("the period is over: a probe");
    assert_eq!(b.state(), State::HalfOpen);
    probe.failure();
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (State::Closed, State::Open, TransitionReason::ManualOpen),
            (State::Open, State::HalfOpen, TransitionReason::OpenElapsed),
            (State::HalfOpen, State::Open, TransitionReason::ProbeFailed),
        ]
    );
}

#[test]
fn a_manual_open_discards_the_results_of_calls_admitted_before() {
    let (b, clock, _) = breaker(config());
    let before = b.try_acquire().unwrap();
    let also_before = b.try_acquire().unwrap();
    b.open_for(10 * SEC);
    before.failure();
    also_before.failure();
    assert_eq!(b.snapshot().calls, 0, "stale results count nowhere");
    clock.advance(10 * SEC);
    b.try_acquire().expect("a probe").success();
    assert_eq!(b.state(), State::Closed);
}

#[test]
fn a_late_success_cannot_close_a_manually_opened_breaker() {
    let (b, clock, _) = breaker(config());
    clock.advance(SEC);
    b.open_until(b.now());
    let probe = b.try_acquire().expect("a probe");
    b.open_for(20 * SEC);
    probe.success();
    assert_eq!(b.state(), State::Open);
    assert_eq!(retry_after(&b), Some(20 * SEC));
}

#[test]
fn open_for_in_open_replaces_the_period_without_a_transition() {
    let (b, clock, seen) = breaker(config());
    b.try_acquire().unwrap().failure();
    b.try_acquire().unwrap().failure();
    assert_eq!(retry_after(&b), Some(5 * SEC));
    clock.advance(SEC);
    b.open_for(60 * SEC);
    assert_eq!(retry_after(&b), Some(60 * SEC));
    b.open_for(2 * SEC);
    assert_eq!(
        retry_after(&b),
        Some(2 * SEC),
        "shorter too: the period asked"
    );
    assert_eq!(
        *seen.lock().unwrap(),
        [(State::Closed, State::Open, TransitionReason::FailureRate)]
    );
}

#[test]
fn open_for_lifts_a_forced_open_or_disabled_breaker_into_a_period_that_ends() {
    for operator in [Breaker::force_open, Breaker::disable] {
        let (b, clock, seen) = breaker(config());
        operator(&b);
        b.open_for(3 * SEC);
        assert_eq!(retry_after(&b), Some(3 * SEC));
        clock.advance(3 * SEC);
        b.try_acquire().expect("a probe").success();
        assert_eq!(b.state(), State::Closed);
        let seen = seen.lock().unwrap();
        assert_eq!(seen[1].1, State::Open);
        assert_eq!(seen[1].2, TransitionReason::ManualOpen);
    }
}

#[test]
fn a_manual_open_leaves_the_backoff_as_it_stands() {
    let config = Config::builder()
        .count_window(2)
        .min_calls(2)
        .probes(1)
        .open_for(5 * SEC)
        .open_backoff(2.0, 60 * SEC)
        .build()
        .unwrap();
    let (b, clock, _) = breaker(config);
    b.try_acquire().unwrap().failure();
    b.try_acquire().unwrap().failure();
    clock.advance(5 * SEC);
    b.try_acquire().unwrap().failure(); // the trial fails: 10 s
    assert_eq!(retry_after(&b), Some(10 * SEC));
    b.open_for(30 * SEC);
    clock.advance(30 * SEC);
    b.try_acquire().unwrap().failure(); // 10 s grown once: the manual 30 s is no step
    assert_eq!(retry_after(&b), Some(20 * SEC));
    clock.advance(20 * SEC);
    b.try_acquire().unwrap().success();
    assert_eq!(b.state(), State::Closed);
    b.open_for(SEC);
    clock.advance(SEC);
    b.try_acquire().unwrap().failure(); // closed since: the backoff starts again
    assert_eq!(retry_after(&b), Some(10 * SEC));
}

#[test]
fn a_new_configuration_keeps_the_length_of_a_manual_open_period() {
    let (b, clock, _) = breaker(config());
    b.open_for(40 * SEC);
    clock.advance(10 * SEC);
    b.reconfigure(
        Config::builder()
            .count_window(2)
            .min_calls(2)
            .probes(1)
            .open_for(SEC)
            .build()
            .unwrap(),
    );
    assert_eq!(retry_after(&b), Some(30 * SEC));
}

#[test]
fn a_shadow_breaker_opened_manually_still_admits() {
    let config = Config::builder().shadow(true).build().unwrap();
    let (b, _, seen) = breaker(config);
    b.open_for(10 * SEC);
    b.try_acquire().expect("a shadow admits").success();
    assert_eq!(b.snapshot().totals.shadow_rejected, 1);
    assert_eq!(seen.lock().unwrap().len(), 1);
}
