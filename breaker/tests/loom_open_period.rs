#![cfg(loom)]
//! Model checking, with loom, of open periods asked for from outside the window racing the
//! window's own decisions: a manual open period (`open_for`) racing a failure that trips
//! the window, and a failure carrying the downstream's pushback racing a probe's success.
//! Whatever the order, the breaker ends in one state with a sane period, and every change
//! of state (or of period) moved the generation exactly once.
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p breaker --test loom_open_period --release
//! ```

use std::time::Duration;

use breakerbox::clock::ManualClock;
use breakerbox::{events::Event, events::TransitionReason, Breaker, Config, Permit, State};
use loom::sync::{Arc, Mutex};
use loom::thread;

const OPEN_FOR: Duration = Duration::from_secs(5);

/// The period asked for, longer than `OPEN_FOR` so that the two cannot be mistaken.
const ASKED: Duration = Duration::from_secs(30);

fn check(model: impl Fn() + Send + Sync + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(3);
    builder.check(model);
}

/// A count window of 2 calls that opens at 2 failures, with `probes` probes of which
/// `successes` close it.
fn breaker(probes: u32, successes: u32) -> (Breaker, ManualClock) {
    let config = Config::builder()
        .count_window(2)
        .min_calls(2)
        .failure_rate(1.0)
        .open_for(OPEN_FOR)
        .probes(probes)
        .successes(successes)
        .build()
        .unwrap();
    let clock = ManualClock::new();
    (
        Breaker::with_clock("libraryd", config, clock.clone()),
        clock,
    )
}

type Log = Arc<Mutex<Vec<(State, State, TransitionReason)>>>;

/// The transitions `b` reports, with their reasons.
fn transitions(b: &Breaker) -> Log {
    let log = Log::default();
    let sink = Arc::clone(&log);
    b.on_event(move |e: &Event| {
        if let Event::StateTransition {
            from, to, reason, ..
        } = e
        {
            sink.lock().unwrap().push((*from, *to, *reason));
        }
    });
    log
}

/// The generation a permit was admitted in, which only its `Debug` output shows.
fn generation_of(permit: &Permit<'_>) -> u64 {
    let debug = format!("{permit:?}");
    let (_, rest) = debug
        .split_once("generation: ")
        .expect("a permit's Debug shows its generation");
    let digits = rest.split(|c: char| !c.is_ascii_digit()).next().unwrap();
    digits.parse().unwrap()
}

/// The generation `b` is in, OPEN until `until` of `clock`: read from the probe admitted
/// when the period ends, one generation later.
fn generation_after_open(b: &Breaker, clock: &ManualClock, until: Duration) -> u64 {
    assert_eq!(b.try_acquire().unwrap_err().retry_after(), Some(until));
    clock.advance(until);
    let probe = b.try_acquire().expect("the period ended: a probe");
    generation_of(&probe) - 1
}

/// One failure is in the window; a second trips it while an operator opens the breaker for
/// 30 s. Either the manual period comes first and the failure is stale, or the failure
/// opens the breaker and the manual period replaces its 5 s: OPEN for 30 s either way, never
/// the failure's 5 s after the operator's 30 s, and one generation per change.
#[test]
fn a_manual_open_period_racing_a_tripping_failure_ends_open_for_the_period_asked() {
    check(|| {
        let (b, clock) = breaker(1, 1);
        let b = Arc::new(b);
        b.try_acquire().unwrap().failure();
        let log = transitions(&b);
        let permit = b.try_acquire().unwrap();
        let before = generation_of(&permit);

        let operator = {
            let b = Arc::clone(&b);
            thread::spawn(move || b.open_for(ASKED))
        };
        permit.failure();
        operator.join().unwrap();

        assert_eq!(b.state(), State::Open);
        let seen = log.lock().unwrap().clone();
        let changes = generation_after_open(&b, &clock, ASKED) - before;
        let end = (seen, changes);
        let allowed = [
            // The manual period first: the failure is of the generation before.
            (
                vec![(State::Closed, State::Open, TransitionReason::ManualOpen)],
                1,
            ),
            // The failure first; the manual period then replaces the OPEN's, with no
            // transition (the state is the same) but a generation of its own.
            (
                vec![(State::Closed, State::Open, TransitionReason::FailureRate)],
                2,
            ),
        ];
        assert!(allowed.contains(&end), "{end:?}");
    });
}

/// Two probes out of a trial that one success passes: one succeeds while the other fails
/// with a pushback of 30 s. Either the success closes the breaker and the failure is stale,
/// or the pushback opens it for 30 s and the success is stale; one generation either way.
#[test]
fn a_pushback_racing_a_probe_success_either_closes_or_opens_for_the_pushback() {
    check(|| {
        let (b, clock) = breaker(2, 1);
        // `try_acquire_owned` takes the standard `Arc`; the race is in the breaker.
        let b = std::sync::Arc::new(b);
        b.try_acquire().unwrap().failure();
        b.try_acquire().unwrap().failure();
        clock.advance(OPEN_FOR);
        let pushed_back = b.try_acquire_owned().unwrap();
        let log = transitions(&b);
        let probe = b.try_acquire().unwrap();
        let before = generation_of(&probe);

        let downstream = thread::spawn(move || pushed_back.failure_with_pushback(ASKED));
        probe.success();
        downstream.join().unwrap();

        let seen = log.lock().unwrap().clone();
        let state = b.state();
        let after = match state {
            State::Closed => generation_of(&b.try_acquire().unwrap()),
            _ => generation_after_open(&b, &clock, ASKED),
        };
        let end = (state, seen, after - before);
        let allowed = [
            (
                State::Closed,
                vec![(
                    State::HalfOpen,
                    State::Closed,
                    TransitionReason::TrialPassed,
                )],
                1,
            ),
            (
                State::Open,
                vec![(State::HalfOpen, State::Open, TransitionReason::Pushback)],
                1,
            ),
        ];
        assert!(allowed.contains(&end), "{end:?}");
    });
}
