//! Reconfiguring a running breaker: the window it shows is the one its new configuration
//! keeps, and a closed breaker is judged at once under the new configuration.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use breakerbox::clock::ManualClock;
use breakerbox::{config::ConfigBuilder, events::Event, Breaker, Config, OwnedPermit, State};

fn opened(config: Config) -> Breaker {
    let b = Breaker::with_clock("libraryd", config, ManualClock::new());
    for _ in 0..4 {
        b.try_acquire().unwrap().failure();
    }
    assert_eq!(b.state(), State::Open);
    b
}

/// A count window of `n` calls judged from 4 on.
fn count_window(n: u32) -> Config {
    Config::builder()
        .count_window(n)
        .min_calls(4)
        .build()
        .unwrap()
}

#[test]
fn a_new_window_shape_while_open_starts_empty() {
    // A locked window of 30 calls, then a packed one of 10.
    let b = opened(count_window(30));
    b.reconfigure(count_window(10));
    let s = b.snapshot();
    assert_eq!((s.state, s.calls, s.failures), (State::Open, 0, 0));

    // A packed window of 10, then one of 5.
    let b = opened(count_window(10));
    b.reconfigure(count_window(5));
    let s = b.snapshot();
    assert_eq!((s.state, s.calls, s.failures), (State::Open, 0, 0));
}

#[test]
fn turning_slow_calls_off_while_open_keeps_the_calls_that_opened_it() {
    let slow = Duration::from_secs(1);
    let timed = Config::builder()
        .count_window(10)
        .min_calls(4)
        .slow_calls(slow, 1.0)
        .build()
        .unwrap();
    let b = opened(timed);
    assert_eq!((b.snapshot().calls, b.snapshot().failures), (4, 4));
    // Same window, kept packed from now on.
    b.reconfigure(count_window(10));
    let s = b.snapshot();
    assert_eq!((s.state, s.calls, s.failures), (State::Open, 4, 4));
}

/// A count window of `n` calls judged from 4 on, opening at `rate`.
fn at_rate(n: u32, rate: f64) -> Config {
    Config::builder()
        .count_window(n)
        .min_calls(4)
        .failure_rate(rate)
        .build()
        .unwrap()
}

/// The transitions `b` reports from now on.
fn transitions(b: &Breaker) -> Arc<Mutex<Vec<(State, State)>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    b.on_event(move |e: &Event| {
        if let Event::StateTransition { from, to, .. } = e {
            log.lock().unwrap().push((*from, *to));
        }
    });
    seen
}

/// 3 failures in every 10 calls stay below 0.5; at a rate of 0.3 the same window trips, and
/// the breaker opens when the new rate is applied, not at its next failure (a success into a
/// full window only lowers its rate, so the packed window does not judge one). Both for a
/// packed window (10 calls) and a locked one (30 calls, beyond what one word holds).
#[test]
fn lowering_the_rate_of_a_closed_breaker_opens_it_at_once() {
    for n in [10, 30] {
        let b = Breaker::with_clock("libraryd", at_rate(n, 0.5), ManualClock::new());
        for i in 0..n {
            let permit = b.try_acquire().unwrap();
            if i % 10 >= 7 {
                permit.failure();
            } else {
                permit.success();
            }
        }
        let s = b.snapshot();
        assert_eq!(
            (s.state, s.calls, s.failures),
            (State::Closed, n, n / 10 * 3)
        );
        let seen = transitions(&b);

        b.reconfigure(at_rate(n, 0.4));
        assert_eq!(b.state(), State::Closed, "{n}: 0.3 is below 0.4");
        b.reconfigure(at_rate(n, 0.3));
        assert_eq!(b.state(), State::Open, "{n}: 0.3 >= 0.3");
        assert_eq!(*seen.lock().unwrap(), [(State::Closed, State::Open)]);
        assert!(b.try_acquire().is_err());
    }
}

/// A count window of 4, open for 5 s, `probes` at once, closing after `successes`, with
/// the given ramp-up if any.
fn trial(probes: u32, successes: u32, ramp: Option<&[u32]>) -> Config {
    let mut builder = Config::builder()
        .count_window(4)
        .min_calls(4)
        .probes(probes)
        .successes(successes);
    if let Some(percents) = ramp {
        builder = builder.ramp_up(percents, Duration::from_secs(5));
    }
    builder.build().unwrap()
}

/// A half-open breaker of `config` whose trial has seen `n` probe successes, with the
/// probes it still has out (`probes - n`).
fn half_open_after(config: Config, n: usize) -> (Arc<Breaker>, Vec<OwnedPermit>) {
    let clock = ManualClock::new();
    let b = Arc::new(Breaker::with_clock(
        "libraryd",
        config.clone(),
        clock.clone(),
    ));
    for _ in 0..4 {
        b.try_acquire().unwrap().failure();
    }
    clock.advance(Duration::from_secs(5));
    let mut out: Vec<_> = (0..config.probes())
        .map(|_| b.try_acquire_owned().unwrap())
        .collect();
    for permit in out.drain(..n) {
        permit.success();
    }
    assert_eq!(b.state(), State::HalfOpen);
    (b, out)
}

/// The probe successes counted are kept and judged at once under the new `successes`: a
/// trial they pass ends at the reconfiguration, as its last success would have ended it,
/// and the probes still out are then stale.
#[test]
fn lowering_successes_in_half_open_ends_a_trial_already_passed() {
    let (b, out) = half_open_after(trial(3, 3, None), 2);
    let seen = transitions(&b);
    b.reconfigure(trial(3, 2, None));
    assert_eq!((b.state(), b.probes_in_flight()), (State::Closed, 0));
    assert_eq!(*seen.lock().unwrap(), [(State::HalfOpen, State::Closed)]);
    for permit in out {
        permit.failure();
    }
    let s = b.snapshot();
    assert_eq!((s.state, s.calls, s.failures), (State::Closed, 0, 0));
}

#[test]
fn lowering_successes_in_half_open_starts_the_ramp_of_a_trial_already_passed() {
    let (b, out) = half_open_after(trial(2, 2, Some(&[25, 100])), 1);
    b.reconfigure(trial(2, 1, Some(&[25, 100])));
    let s = b.snapshot();
    assert_eq!((s.state, s.admit_percent), (State::HalfOpen, 25));
    assert_eq!(b.probes_in_flight(), 0);
    for permit in out {
        permit.failure(); // a probe of the trial that passed: stale
    }
    assert_eq!(b.state(), State::HalfOpen);
}

#[test]
fn raising_successes_in_half_open_asks_for_more() {
    let (b, mut out) = half_open_after(trial(3, 1, None), 0);
    b.reconfigure(trial(3, 3, None));
    out.pop().unwrap().success();
    out.pop().unwrap().success();
    assert_eq!(b.state(), State::HalfOpen, "two of three successes");
    assert_eq!(b.probes_in_flight(), 1);
    out.pop().unwrap().success();
    assert_eq!(b.state(), State::Closed);
}

#[test]
fn lowering_successes_not_yet_reached_keeps_the_trial() {
    let (b, mut out) = half_open_after(trial(3, 3, None), 0);
    b.reconfigure(trial(3, 2, None));
    assert_eq!((b.state(), b.probes_in_flight()), (State::HalfOpen, 3));
    out.pop().unwrap().success();
    assert_eq!(b.state(), State::HalfOpen);
    out.pop().unwrap().success();
    assert_eq!(b.state(), State::Closed);
}

/// Sets a window on a builder.
type Shape = fn(ConfigBuilder) -> ConfigBuilder;

/// One slow success and three fast ones, judged from 4 calls on, slow calls at `rate`:
/// `window` takes the window, and `guarded` keeps calls timed with slow calls off.
fn slow_calls_in(window: Shape, guarded: bool, slow_rate: Option<f64>) -> Config {
    let mut builder = window(Config::builder()).min_calls(4);
    if let Some(rate) = slow_rate {
        builder = builder.slow_calls(Duration::from_millis(100), rate);
    }
    if guarded {
        builder = builder
            .ramp_up(&[50, 100], Duration::from_secs(5))
            .ramp_latency_guard(2.0);
    }
    builder.build().unwrap()
}

/// Turning slow calls off drops the slow marks, whatever holds the window: a packed window
/// (10 calls, untimed once slow calls are off) has no room for them, and the others drop
/// them too, a count window kept under the lock (10 calls still timed by the latency
/// guard, 30 calls) and a time window. Turning them back on then counts none of the old
/// marks: at a rate of 0.25, the one old slow mark of four calls would open the breaker.
#[test]
fn turning_slow_calls_off_drops_the_slow_marks_of_every_window() {
    let windows: [(&str, Shape, bool); 4] = [
        ("packed", |b| b.count_window(10), false),
        ("count, guarded", |b| b.count_window(10), true),
        ("count of 30", |b| b.count_window(30), false),
        ("time", |b| b.time_window(Duration::from_secs(60), 6), false),
    ];
    for (what, window, guarded) in windows {
        let clock = ManualClock::new();
        let b = Breaker::with_clock(
            "libraryd",
            slow_calls_in(window, guarded, Some(0.5)),
            clock.clone(),
        );
        let permit = b.try_acquire().unwrap();
        clock.advance(Duration::from_millis(101));
        permit.success();
        for _ in 0..3 {
            b.try_acquire().unwrap().success();
        }
        let s = b.snapshot();
        assert_eq!(
            (s.calls, s.slow_calls, s.slow_call_rate),
            (4, 1, Some(0.25)),
            "{what}"
        );

        b.reconfigure(slow_calls_in(window, guarded, None));
        let s = b.snapshot();
        assert_eq!(
            (s.calls, s.slow_calls, s.slow_call_rate),
            (4, 0, None),
            "{what}"
        );

        b.reconfigure(slow_calls_in(window, guarded, Some(0.25)));
        let s = b.snapshot();
        assert_eq!(
            (s.state, s.calls, s.slow_calls, s.slow_call_rate),
            (State::Closed, 4, 0, Some(0.0)),
            "{what}"
        );
    }
}
