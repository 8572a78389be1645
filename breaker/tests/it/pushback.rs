//! The downstream's pushback: a failure that carries one (`Permit::failure_with_pushback`,
//! `Classify::pushback`) opens the breaker at once for that long, capped by `pushback_max`,
//! whatever the window says; the transition says `Pushback`; the backoff is not bumped. Each
//! test is named for the rule it proves, on a manual clock.

use std::sync::Arc;
use std::time::Duration;

use breakerbox::clock::ManualClock;
use breakerbox::{
    config::ConfigBuilder, events::TransitionReason, Breaker, Classify, Config, Outcome,
    RejectReason, State,
};

const SEC: Duration = Duration::from_secs(1);

use crate::support::transitions;

use transitions::{watched, Seen};

fn breaker(config: ConfigBuilder) -> (Breaker, ManualClock, Seen) {
    watched("stockd", config.build().unwrap())
}

fn retry_after(b: &Breaker) -> Option<Duration> {
    let rejected = b.try_acquire().expect_err("open");
    assert_eq!(rejected.reason(), RejectReason::Open);
    rejected.retry_after()
}

/// An answer of the stock service: overloaded, with how long to stay away, or in stock.
enum Stock {
    Available,
    Overloaded(Duration),
    /// A business answer that happens to carry a pushback header.
    Unknown(Duration),
}

impl Classify for Stock {
    fn classify(&self) -> Outcome {
        match self {
            Stock::Overloaded(_) => Outcome::Failure,
            Stock::Available | Stock::Unknown(_) => Outcome::Success,
        }
    }

    fn pushback(&self) -> Option<Duration> {
        match self {
            Stock::Overloaded(after) | Stock::Unknown(after) => Some(*after),
            Stock::Available => None,
        }
    }
}

#[test]
fn a_failure_with_pushback_opens_at_once_for_that_long_whatever_the_window_says() {
    let (b, clock, seen) = breaker(Config::builder().probes(1));
    b.try_acquire().unwrap().success();
    b.try_acquire()
        .unwrap()
        .record_output(&Stock::Overloaded(30 * SEC));
    assert_eq!(b.state(), State::Open, "1 failure of 2, below min_calls");
    assert_eq!(retry_after(&b), Some(30 * SEC));
    clock.advance(30 * SEC);
    b.try_acquire()
        .expect("a probe")
        .record_output(&Stock::Available);
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (State::Closed, State::Open, TransitionReason::Pushback),
            (State::Open, State::HalfOpen, TransitionReason::OpenElapsed),
            (
                State::HalfOpen,
                State::Closed,
                TransitionReason::TrialPassed
            ),
        ]
    );
    let totals = b.snapshot().totals;
    assert_eq!((totals.success, totals.failure), (2, 1));
}

#[test]
fn a_pushback_is_capped_by_pushback_max() {
    let (b, _, _) = breaker(Config::builder().pushback_max(10 * SEC));
    b.try_acquire()
        .unwrap()
        .failure_with_pushback(Duration::from_secs(3600));
    assert_eq!(retry_after(&b), Some(10 * SEC));
}

#[test]
fn the_default_cap_is_five_minutes() {
    let (b, _, _) = breaker(Config::builder());
    b.try_acquire()
        .unwrap()
        .failure_with_pushback(Duration::from_secs(3600));
    assert_eq!(retry_after(&b), Some(Duration::from_secs(300)));
}

#[test]
fn a_zero_pushback_max_turns_pushback_off() {
    let (b, _, seen) = breaker(Config::builder().pushback_max(Duration::ZERO));
    b.try_acquire().unwrap().failure_with_pushback(30 * SEC);
    let s = b.snapshot();
    assert_eq!((s.state, s.calls, s.failures), (State::Closed, 1, 1));
    assert!(seen.lock().unwrap().is_empty());
}

#[test]
fn a_zero_pushback_is_a_plain_failure() {
    let (b, _, _) = breaker(Config::builder());
    b.try_acquire()
        .unwrap()
        .failure_with_pushback(Duration::ZERO);
    b.try_acquire()
        .unwrap()
        .record_output(&Stock::Overloaded(Duration::ZERO));
    let s = b.snapshot();
    assert_eq!((s.state, s.calls, s.failures), (State::Closed, 2, 2));
}

#[test]
fn a_pushback_on_a_success_is_ignored() {
    let (b, _, _) = breaker(Config::builder());
    b.try_acquire()
        .unwrap()
        .record_output(&Stock::Unknown(30 * SEC));
    let s = b.snapshot();
    assert_eq!((s.state, s.calls, s.failures), (State::Closed, 1, 0));
}

#[test]
fn a_stale_pushback_cannot_reopen_a_breaker_that_moved_on() {
    let (b, _, seen) = breaker(Config::builder());
    let before = b.try_acquire().unwrap();
    b.reset();
    before.failure_with_pushback(30 * SEC);
    assert_eq!(b.state(), State::Closed);
    assert!(seen.lock().unwrap().is_empty());
    assert_eq!(b.snapshot().totals.failure, 1, "counted where calls end");
}

#[test]
fn a_probe_failing_with_pushback_reopens_for_it_without_bumping_the_backoff() {
    let config = Config::builder()
        .count_window(1)
        .min_calls(1)
        .probes(1)
        .open_for(5 * SEC)
        .open_backoff(2.0, 60 * SEC);
    let (b, clock, seen) = breaker(config);
    b.try_acquire().unwrap().failure();
    clock.advance(5 * SEC);
    b.try_acquire().unwrap().failure_with_pushback(30 * SEC);
    assert_eq!(retry_after(&b), Some(30 * SEC));
    clock.advance(30 * SEC);
    b.try_acquire().unwrap().failure(); // a failed trial: 5 s grown once
    assert_eq!(retry_after(&b), Some(10 * SEC));
    assert_eq!(
        seen.lock().unwrap()[2],
        (State::HalfOpen, State::Open, TransitionReason::Pushback)
    );
}

#[test]
fn a_disabled_breaker_ignores_pushback() {
    let (b, _, _) = breaker(Config::builder());
    b.disable();
    b.try_acquire().unwrap().failure_with_pushback(30 * SEC);
    assert_eq!(b.state(), State::Disabled);
}

#[test]
fn an_owned_permit_carries_pushback_too() {
    let clock = ManualClock::new();
    let b = Arc::new(Breaker::with_clock(
        "stockd",
        Config::default(),
        clock.clone(),
    ));
    let permit = b.try_acquire_owned().unwrap();
    permit.record_output(&Err::<(), _>(Stock::Overloaded(7 * SEC)));
    assert_eq!(retry_after(&b), Some(7 * SEC));
}

#[tokio::test(start_paused = true)]
async fn call_records_the_pushback_of_its_output() {
    let (b, _, _) = breaker(Config::builder());
    let out = b
        .call(async { Err::<u32, _>(Stock::Overloaded(12 * SEC)) })
        .await;
    assert!(matches!(out, Ok(Err(Stock::Overloaded(_)))));
    assert_eq!(retry_after(&b), Some(12 * SEC));
}

#[test]
fn pushback_max_is_a_key_of_the_builder_and_the_config() {
    let config = Config::builder().pushback_max(SEC).build().unwrap();
    assert_eq!(config.pushback_max(), SEC);
    assert_eq!(
        config.to_builder().build().unwrap().pushback_max(),
        SEC,
        "kept by to_builder"
    );
    assert_eq!(Config::default().pushback_max(), 300 * SEC);
}
