//! Progressive recovery: backoff of the open duration, the stepwise ramp-up and its
//! latency guard.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use breakerbox::clock::ManualClock;
use breakerbox::testing;
use breakerbox::{
    config::ConfigBuilder, events::Event, events::TransitionReason, Breaker, Config, RejectReason,
    State,
};

const SEC: Duration = Duration::from_secs(1);

fn breaker(builder: ConfigBuilder) -> (Breaker, ManualClock) {
    let config = builder
        .count_window(4)
        .min_calls(4)
        .probes(1)
        .build()
        .unwrap();
    testing::manual("libraryd", config)
}

/// Opens `b`: at most 4 failures of its 4 calls.
fn trip(b: &Breaker) {
    assert!(
        testing::trip(b) <= 4,
        "4 failures of 4 calls open the breaker"
    );
}

/// Time left before the open breaker lets a probe through.
fn open_left(b: &Breaker) -> Duration {
    b.try_acquire().unwrap_err().retry_after().unwrap()
}

/// Waits out OPEN and lets the probe succeed.
fn probe_succeeds(b: &Breaker, clock: &ManualClock) {
    clock.advance(open_left(b));
    b.try_acquire().unwrap().success();
}

#[test]
fn each_failed_trial_multiplies_the_open_duration_up_to_the_max() {
    let (b, clock) = breaker(Config::builder().open_backoff(2.0, 60 * SEC));
    trip(&b);
    let mut seen = vec![];
    for _ in 0..6 {
        let left = open_left(&b);
        seen.push(left.as_secs());
        clock.advance(left);
        b.try_acquire().unwrap().failure();
    }
    assert_eq!(seen, [5, 10, 20, 40, 60, 60]);
}

#[test]
fn backoff_resets_when_the_breaker_closes() {
    let (b, clock) = breaker(Config::builder().open_backoff(3.0, 60 * SEC));
    trip(&b);
    clock.advance(5 * SEC);
    b.try_acquire().unwrap().failure();
    assert_eq!(open_left(&b), 15 * SEC);
    probe_succeeds(&b, &clock);
    assert_eq!(b.state(), State::Closed);
    trip(&b);
    assert_eq!(
        open_left(&b),
        5 * SEC,
        "the first OPEN after CLOSED lasts open_for"
    );
}

#[test]
fn without_backoff_every_open_lasts_open_for() {
    let (b, clock) = breaker(Config::builder());
    trip(&b);
    clock.advance(5 * SEC);
    b.try_acquire().unwrap().failure();
    assert_eq!(open_left(&b), 5 * SEC);
}

fn ramp() -> ConfigBuilder {
    Config::builder().ramp_up(&[10, 30, 60, 100], 5 * SEC)
}

/// Asks `n` calls, records admitted ones as successes, and returns how many were admitted.
fn admitted_of(b: &Breaker, n: usize) -> usize {
    (0..n)
        .filter_map(|_| b.try_acquire().ok())
        .map(|p| p.success())
        .count()
}

#[test]
fn each_ramp_step_admits_its_share_evenly() {
    let (b, clock) = breaker(ramp());
    trip(&b);
    probe_succeeds(&b, &clock);
    assert_eq!(b.state(), State::HalfOpen, "the ramp keeps HALF_OPEN");
    for percent in [10, 30, 60, 100] {
        // Any 100 consecutive calls: the share, never a burst.
        assert_eq!(admitted_of(&b, 100), percent as usize, "step {percent}%");
        assert_eq!(
            admitted_of(&b, 10),
            percent as usize / 10,
            "step {percent}%"
        );
        assert_eq!(b.snapshot().admit_percent, percent);
        clock.advance(5 * SEC);
    }
    assert_eq!(admitted_of(&b, 1), 1);
    let s = b.snapshot();
    assert_eq!((s.state, s.admit_percent, s.calls), (State::Closed, 100, 1));
}

#[test]
fn ramp_admission_is_spread_out() {
    let (b, clock) = breaker(ramp());
    trip(&b);
    probe_succeeds(&b, &clock);
    let pattern: Vec<bool> = (0..30)
        .map(|_| b.try_acquire().map(|p| p.success()).is_ok())
        .collect();
    let admitted: Vec<usize> = (0..30).filter(|&i| pattern[i]).collect();
    assert_eq!(admitted, [9, 19, 29]);
}

#[test]
fn calls_not_admitted_are_throttled_by_recovery() {
    let (b, clock) = breaker(ramp());
    trip(&b);
    probe_succeeds(&b, &clock);
    let rejected = b.try_acquire().unwrap_err();
    assert_eq!(rejected.reason(), RejectReason::Throttled);
    assert_eq!(rejected.retry_after(), None);
    assert_eq!(
        rejected.to_string(),
        "circuit 'libraryd' is throttled by recovery"
    );
}

#[test]
fn a_step_lasts_until_a_call_comes_after_it() {
    let (b, clock) = breaker(ramp());
    trip(&b);
    probe_succeeds(&b, &clock);
    clock.advance(60 * SEC); // idle: one step at a time, moved by the next call
    admitted_of(&b, 1);
    assert_eq!(b.snapshot().admit_percent, 30);
}

#[test]
fn failure_during_the_ramp_reopens_with_backoff() {
    let (b, clock) = breaker(ramp().open_backoff(2.0, 60 * SEC));
    trip(&b);
    probe_succeeds(&b, &clock);
    clock.advance(5 * SEC);
    let permit = (0..10).find_map(|_| b.try_acquire().ok()).unwrap();
    assert_eq!(b.snapshot().admit_percent, 30);
    permit.failure();
    let s = b.snapshot();
    assert_eq!((s.state, s.admit_percent), (State::Open, 100));
    assert_eq!(open_left(&b), 10 * SEC);
}

#[test]
fn late_probe_results_do_not_touch_the_ramp() {
    let config = ramp()
        .count_window(4)
        .min_calls(4)
        .probes(2)
        .build()
        .unwrap();
    let clock = ManualClock::new();
    let b = Breaker::with_clock("libraryd", config, clock.clone());
    trip(&b);
    clock.advance(5 * SEC);
    let first = b.try_acquire().unwrap();
    first.success();
    let late = b.try_acquire().unwrap();
    b.try_acquire().unwrap().success(); // second success: the ramp starts
    assert_eq!(b.snapshot().admit_percent, 10);
    late.failure(); // admitted by the probe phase: stale
    assert_eq!(b.state(), State::HalfOpen);
}

#[test]
fn the_ramp_starts_after_successes_probe_successes() {
    let config = ramp()
        .count_window(4)
        .min_calls(4)
        .probes(3)
        .successes(2)
        .build()
        .unwrap();
    let clock = ManualClock::new();
    let b = Breaker::with_clock("libraryd", config, clock.clone());
    trip(&b);
    clock.advance(5 * SEC);
    let probes: Vec<_> = (0..3).map(|_| b.try_acquire().unwrap()).collect();
    let mut probes = probes.into_iter();
    probes.next().unwrap().success();
    assert_eq!(
        b.snapshot().admit_percent,
        100,
        "one success of two: still probing"
    );
    probes.next().unwrap().success();
    let s = b.snapshot();
    assert_eq!((s.state, s.admit_percent), (State::HalfOpen, 10));
    assert_eq!(b.probes_in_flight(), 0);
    probes.next().unwrap().failure(); // a probe of the trial that passed: stale
    assert_eq!(
        (b.state(), b.snapshot().admit_percent),
        (State::HalfOpen, 10)
    );
}

/// Runs one call that takes `latency`, recording success when admitted.
fn timed_call(b: &Breaker, clock: &ManualClock, latency: Duration) -> bool {
    match b.try_acquire() {
        Ok(p) => {
            clock.advance(latency);
            p.success();
            true
        }
        Err(_) => false,
    }
}

/// A breaker with a ramp guarded at 3 times the CLOSED p99, after 50 calls of 10 ms (the
/// baseline), a trip and a successful probe: on the ramp's first step.
fn guarded_ramp_on_a_10ms_baseline() -> (Breaker, ManualClock) {
    let (b, clock) = breaker(ramp().ramp_latency_guard(3.0));
    for _ in 0..50 {
        timed_call(&b, &clock, Duration::from_millis(10));
    }
    trip(&b);
    probe_succeeds(&b, &clock);
    (b, clock)
}

#[test]
fn latency_guard_holds_a_step_until_latency_comes_back() {
    let (b, clock) = guarded_ramp_on_a_10ms_baseline();
    let fast = Duration::from_millis(10);
    let slow = Duration::from_millis(100);
    assert_eq!(b.snapshot().admit_percent, 10);

    let mut admitted = 0;
    while admitted < 5 {
        admitted += usize::from(timed_call(&b, &clock, slow));
    }
    clock.advance(5 * SEC);
    timed_call(&b, &clock, fast);
    assert_eq!(b.snapshot().admit_percent, 10, "held: p99 100ms > 3 x 10ms");

    for _ in 0..20 {
        timed_call(&b, &clock, fast);
    }
    clock.advance(5 * SEC);
    timed_call(&b, &clock, fast);
    assert_eq!(
        b.snapshot().admit_percent,
        30,
        "latency came back: climbing again"
    );
}

#[test]
fn latency_guard_lets_a_healthy_ramp_climb() {
    let (b, clock) = guarded_ramp_on_a_10ms_baseline();
    let fast = Duration::from_millis(10);
    for _ in 0..20 {
        timed_call(&b, &clock, Duration::from_millis(25));
    }
    clock.advance(5 * SEC);
    timed_call(&b, &clock, fast);
    assert_eq!(b.snapshot().admit_percent, 30, "25ms < 3 x 10ms");
}

/// The failures that open a breaker are often slow (timeouts): they must not lift the
/// baseline, or a ramp as slow as they were would pass the guard. With failures of 1 s
/// among 100 successes of 10 ms, ramp calls of 1 s are held at 50% as they are with failures
/// of 10 ms; ramp calls of 10 ms climb either way.
#[test]
fn the_latency_baseline_holds_successful_calls_only() {
    let ms = Duration::from_millis;
    for failing in [ms(10), SEC] {
        for (ramp_call, percent) in [(SEC, 50), (ms(10), 100)] {
            let config = Config::builder()
                .count_window(20)
                .min_calls(10)
                .failure_rate(0.5)
                .probes(1)
                .ramp_up(&[50, 100], 10 * SEC)
                .ramp_latency_guard(2.0)
                .build()
                .unwrap();
            let clock = ManualClock::new();
            let b = Breaker::with_clock("libraryd", config, clock.clone());
            for _ in 0..100 {
                timed_call(&b, &clock, ms(10));
            }
            let mut failures = 0;
            while b.state() == State::Closed {
                let permit = b.try_acquire().unwrap();
                clock.advance(failing);
                permit.failure();
                failures += 1;
            }
            assert_eq!(failures, 10);
            clock.advance(open_left(&b));
            timed_call(&b, &clock, ms(10)); // the probe: the ramp starts at 50%
            assert_eq!(b.snapshot().admit_percent, 50);
            let mut admitted = 0;
            while admitted < 4 {
                admitted += usize::from(timed_call(&b, &clock, ramp_call));
            }
            clock.advance(10 * SEC);
            timed_call(&b, &clock, ramp_call);
            assert_eq!(
                b.snapshot().admit_percent,
                percent,
                "failures of {failing:?}, ramp calls of {ramp_call:?}"
            );
        }
    }
}

/// Every event `b` sends from now on.
fn events(b: &Breaker) -> Arc<Mutex<Vec<Event>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    b.on_event(move |e: &Event| log.lock().unwrap().push(*e));
    seen
}

fn step(step: u32, percent: u32) -> Event {
    Event::RampStep {
        step,
        percent,
        shadow: false,
    }
}

fn moved(from: State, to: State, reason: TransitionReason) -> Event {
    Event::StateTransition {
        from,
        to,
        reason,
        shadow: false,
    }
}

#[test]
fn each_ramp_step_entered_is_an_event() {
    let (b, clock) = breaker(ramp());
    let seen = events(&b);
    trip(&b);
    probe_succeeds(&b, &clock);
    admitted_of(&b, 10);
    for _ in 0..3 {
        clock.advance(5 * SEC);
        admitted_of(&b, 10);
    }
    assert_eq!(b.state(), State::HalfOpen);
    clock.advance(5 * SEC);
    admitted_of(&b, 1);
    assert_eq!(
        *seen.lock().unwrap(),
        [
            moved(State::Closed, State::Open, TransitionReason::FailureRate),
            moved(State::Open, State::HalfOpen, TransitionReason::OpenElapsed),
            step(0, 10),
            step(1, 30),
            step(2, 60),
            step(3, 100),
            moved(
                State::HalfOpen,
                State::Closed,
                TransitionReason::RampCompleted
            ),
        ]
    );
}

#[test]
fn an_idle_ramp_climbs_one_step_and_sends_one_event_per_call() {
    let (b, clock) = breaker(ramp());
    trip(&b);
    probe_succeeds(&b, &clock);
    let seen = events(&b);
    clock.advance(60 * SEC);
    admitted_of(&b, 1);
    admitted_of(&b, 1);
    assert_eq!(
        *seen.lock().unwrap(),
        [step(1, 30)],
        "one step per step's length"
    );
}

#[test]
fn a_step_held_by_the_latency_guard_sends_no_event() {
    let (b, clock) = guarded_ramp_on_a_10ms_baseline();
    let fast = Duration::from_millis(10);
    let seen = events(&b);
    let mut admitted = 0;
    while admitted < 5 {
        admitted += usize::from(timed_call(&b, &clock, Duration::from_millis(100)));
    }
    clock.advance(5 * SEC);
    timed_call(&b, &clock, fast);
    assert_eq!(b.snapshot().admit_percent, 10, "held");
    assert_eq!(*seen.lock().unwrap(), []);
    for _ in 0..20 {
        timed_call(&b, &clock, fast);
    }
    clock.advance(5 * SEC);
    timed_call(&b, &clock, fast);
    assert_eq!(*seen.lock().unwrap(), [step(1, 30)]);
}

#[test]
fn a_failure_during_the_ramp_sends_the_reopening_only() {
    let (b, clock) = breaker(ramp());
    trip(&b);
    probe_succeeds(&b, &clock);
    let seen = events(&b);
    let permit = (0..10).find_map(|_| b.try_acquire().ok()).unwrap();
    permit.failure();
    assert_eq!(
        *seen.lock().unwrap(),
        [moved(
            State::HalfOpen,
            State::Open,
            TransitionReason::ProbeFailed
        )]
    );
}
