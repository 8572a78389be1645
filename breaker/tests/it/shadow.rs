//! Shadow mode: a breaker that watches, moving through its states on real outcomes while it
//! admits every call.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use breakerbox::clock::ManualClock;
use breakerbox::{events::Event, events::TransitionReason, Breaker, Config, RejectReason, State};

fn config(shadow: bool) -> Config {
    Config::builder()
        .count_window(4)
        .min_calls(4)
        .probes(1)
        .open_for(Duration::from_secs(5))
        .shadow(shadow)
        .build()
        .unwrap()
}

fn events(b: &Breaker) -> Arc<Mutex<Vec<Event>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    b.on_event(move |e| log.lock().unwrap().push(*e));
    seen
}

#[test]
fn a_shadow_breaker_opens_and_recovers_as_an_enforcing_one_but_admits_every_call() {
    let clock = ManualClock::new();
    let b = Breaker::with_clock("shadow", config(true), clock.clone());
    let seen = events(&b);
    for _ in 0..4 {
        b.try_acquire().unwrap().failure();
    }
    assert_eq!(b.state(), State::Open);
    // Would be rejected: admitted, and their results change nothing.
    for _ in 0..3 {
        b.try_acquire().expect("a shadow admits").success();
    }
    assert_eq!(b.state(), State::Open);
    let totals = b.snapshot().totals;
    assert_eq!(
        (totals.rejected, totals.shadow_rejected, totals.success),
        (0, 3, 3)
    );

    clock.advance(Duration::from_secs(5));
    let probe = b.try_acquire().unwrap();
    assert_eq!(b.state(), State::HalfOpen);
    // The probe slot is taken: an enforcing breaker would reject this one too.
    b.try_acquire().expect("a shadow admits").failure();
    assert_eq!(
        b.state(),
        State::HalfOpen,
        "a shadowed failure is not a probe's"
    );
    probe.success();
    assert_eq!(b.state(), State::Closed);
    assert_eq!(b.snapshot().totals.shadow_rejected, 4);

    let shadowed = |from, to, reason| Event::StateTransition {
        from,
        to,
        reason,
        shadow: true,
    };
    assert_eq!(
        *seen.lock().unwrap(),
        [
            shadowed(State::Closed, State::Open, TransitionReason::FailureRate),
            shadowed(State::Open, State::HalfOpen, TransitionReason::OpenElapsed),
            shadowed(
                State::HalfOpen,
                State::Closed,
                TransitionReason::TrialPassed
            ),
        ]
    );
}

#[test]
fn a_forced_open_shadow_still_admits_and_counts_what_it_would_reject() {
    let b = Breaker::new("shadow::forced", config(true));
    b.force_open();
    b.try_acquire().expect("a shadow admits").success();
    let totals = b.snapshot().totals;
    assert_eq!((totals.rejected, totals.shadow_rejected), (0, 1));
}

#[test]
fn switching_a_shadow_to_enforcing_rejects_at_once_with_the_time_left() {
    let clock = ManualClock::new();
    let b = Breaker::with_clock("shadow::switch", config(true), clock.clone());
    for _ in 0..4 {
        b.try_acquire().unwrap().failure();
    }
    clock.advance(Duration::from_secs(2));
    b.try_acquire().expect("watching").success();

    b.reconfigure(config(false));
    let rejected = b.try_acquire().expect_err("enforcing");
    assert_eq!(rejected.reason(), RejectReason::Open);
    assert_eq!(rejected.retry_after(), Some(Duration::from_secs(3)));

    b.reconfigure(config(true));
    b.try_acquire().expect("watching again").success();
    let totals = b.snapshot().totals;
    assert_eq!((totals.rejected, totals.shadow_rejected), (1, 2));
}

#[test]
fn an_enforcing_breaker_flags_its_events_as_enforced() {
    let b = Breaker::new("shadow::enforcing", config(false));
    let seen = events(&b);
    b.force_open();
    assert_eq!(
        *seen.lock().unwrap(),
        [Event::StateTransition {
            from: State::Closed,
            to: State::ForcedOpen,
            reason: TransitionReason::Forced,
            shadow: false,
        }]
    );
}

/// Two calls through `run` while a bulkhead of one is held by the first: the second is
/// rejected by an enforcing breaker, and must change nothing in a shadow's window either.
async fn two_calls_through_a_full_bulkhead(shadow: bool) -> Breaker {
    let config = Config::builder()
        .count_window(2)
        .min_calls(2)
        .failure_rate(0.5)
        .max_concurrent(1)
        .retries(1)
        .retry_backoff(Duration::ZERO)
        .shadow(shadow);
    let b = Breaker::new("shadow::bulkhead", config.build().unwrap());
    let first = b.run(|| async {
        tokio::time::sleep(Duration::from_millis(10)).await;
        Ok::<_, std::io::Error>("first")
    });
    let second = async {
        tokio::time::sleep(Duration::from_millis(5)).await;
        assert_eq!(b.in_flight(), 1);
        let out = b
            .run(|| async { Err::<&str, _>(std::io::Error::other("down")) })
            .await;
        match out {
            Ok(answer) => {
                assert!(shadow, "an enforcing breaker rejects it");
                assert!(answer.is_err(), "the downstream's own answer");
            }
            Err(e) => {
                assert!(!shadow, "a shadow admits it: {e}");
                assert_eq!(e.rejected().unwrap().reason(), RejectReason::Bulkhead);
            }
        }
    };
    let (first, ()) = tokio::join!(first, second);
    assert_eq!(first.unwrap().unwrap(), "first");
    b
}

#[tokio::test(start_paused = true)]
async fn a_shadow_runs_a_call_its_bulkhead_would_reject_without_counting_it() {
    let enforcing = two_calls_through_a_full_bulkhead(false).await;
    let shadow = two_calls_through_a_full_bulkhead(true).await;
    for b in [&enforcing, &shadow] {
        let s = b.snapshot();
        assert_eq!((s.state, s.calls, s.failures), (State::Closed, 1, 0));
        assert_eq!(b.in_flight(), 0);
    }
    let (e, s) = (enforcing.snapshot().totals, shadow.snapshot().totals);
    assert_eq!((e.rejected_by.bulkhead, e.shadow_rejected), (1, 0));
    assert_eq!((s.rejected, s.shadow_rejected), (0, 1));
    // The shadow's call ran once, not retried: an enforcing breaker made no retry.
    assert_eq!((s.success, s.failure, s.retries), (1, 1, 0));
    assert_eq!((e.success, e.failure, e.retries), (1, 0, 0));
}
