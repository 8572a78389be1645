//! Every state transition says why (`TransitionReason`): each reason is proved here by the
//! path that makes it, on a manual clock. (The ramp's reasons are in `recovery.rs`, the
//! manual open period's in `open_period.rs`.)

use std::time::Duration;

use breakerbox::clock::ManualClock;
use breakerbox::{config::ConfigBuilder, events::TransitionReason, Breaker, Config, State};

use TransitionReason::*;

const SEC: Duration = Duration::from_secs(1);

use crate::support::transitions;

use transitions::{watched, Seen};

fn breaker(config: ConfigBuilder) -> (Breaker, ManualClock, Seen) {
    watched("libraryd", config.build().unwrap())
}

/// A window of `n` calls judged from `n`, one probe.
fn window(n: u32) -> ConfigBuilder {
    Config::builder().count_window(n).min_calls(n).probes(1)
}

fn reasons(seen: &Seen) -> Vec<TransitionReason> {
    seen.lock().unwrap().iter().map(|t| t.2).collect()
}

#[test]
fn a_window_of_failures_opens_for_the_failure_rate_in_a_packed_and_a_locked_window() {
    // 4 calls pack in one word; 40 are kept under the lock.
    for n in [4, 40] {
        let (b, _, seen) = breaker(window(n));
        for _ in 0..n {
            b.try_acquire().unwrap().failure();
        }
        assert_eq!(
            *seen.lock().unwrap(),
            [(State::Closed, State::Open, FailureRate)]
        );
    }
}

#[test]
fn a_window_of_slow_calls_opens_for_the_slow_call_rate() {
    let (b, clock, seen) = breaker(window(2).slow_calls(SEC, 0.5));
    for _ in 0..2 {
        let permit = b.try_acquire().unwrap();
        clock.advance(2 * SEC);
        permit.success();
    }
    assert_eq!(reasons(&seen), [SlowCallRate]);
}

#[test]
fn failures_and_slow_calls_reaching_their_rates_at_once_tell_the_failure_rate() {
    let (b, clock, seen) = breaker(window(2).slow_calls(SEC, 0.5));
    for _ in 0..2 {
        let permit = b.try_acquire().unwrap();
        clock.advance(2 * SEC);
        permit.failure();
    }
    assert_eq!(reasons(&seen), [FailureRate]);
}

#[test]
fn a_trial_tells_the_end_of_the_period_then_its_verdict() {
    let (b, clock, seen) = breaker(window(1));
    b.try_acquire().unwrap().failure();
    clock.advance(5 * SEC);
    b.try_acquire().unwrap().failure();
    clock.advance(5 * SEC);
    b.try_acquire().unwrap().success();
    assert_eq!(
        reasons(&seen),
        [
            FailureRate,
            OpenElapsed,
            ProbeFailed,
            OpenElapsed,
            TrialPassed
        ]
    );
}

#[test]
fn a_slow_probe_fails_its_trial() {
    let (b, clock, seen) = breaker(window(1).slow_calls(SEC, 1.0));
    b.try_acquire().unwrap().failure();
    clock.advance(5 * SEC);
    let probe = b.try_acquire().unwrap();
    clock.advance(2 * SEC);
    probe.success();
    assert_eq!(reasons(&seen), [FailureRate, OpenElapsed, ProbeFailed]);
}

#[test]
fn a_hung_probe_fails_its_trial_as_timed_out_told_by_a_call_or_a_result() {
    for told_by_result in [false, true] {
        let (b, clock, seen) = breaker(window(1).probes(2).probe_timeout(10 * SEC));
        b.try_acquire().unwrap().failure();
        clock.advance(5 * SEC);
        let hung = b.try_acquire().unwrap();
        let other = b.try_acquire().unwrap();
        clock.advance(10 * SEC);
        if told_by_result {
            other.success();
        } else {
            let _ = b.try_acquire().unwrap_err();
        }
        drop(hung);
        assert_eq!(
            *seen.lock().unwrap().last().unwrap(),
            (State::HalfOpen, State::Open, ProbeTimedOut)
        );
    }
}

#[test]
fn operators_actions_tell_themselves() {
    let (b, _, seen) = breaker(window(2));
    b.force_open();
    b.disable();
    b.reset();
    b.open_for(SEC);
    assert_eq!(reasons(&seen), [Forced, Disabled, Reset, ManualOpen]);
}

#[test]
fn a_new_configuration_that_trips_the_window_or_passes_the_trial_tells_reconfigured() {
    let (b, clock, seen) = breaker(window(4).failure_rate(1.0));
    b.try_acquire().unwrap().success();
    for _ in 0..3 {
        b.try_acquire().unwrap().failure();
    }
    assert_eq!(b.state(), State::Closed, "3 of 4 is below 1.0");
    b.reconfigure(window(4).failure_rate(0.5).probes(3).build().unwrap());
    clock.advance(5 * SEC);
    b.try_acquire().unwrap().success();
    b.reconfigure(window(4).failure_rate(0.5).probes(1).build().unwrap());
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (State::Closed, State::Open, Reconfigured),
            (State::Open, State::HalfOpen, OpenElapsed),
            (State::HalfOpen, State::Closed, Reconfigured),
        ]
    );
}

#[test]
fn reasons_have_one_low_cardinality_name_each() {
    let all = [
        FailureRate,
        SlowCallRate,
        OpenElapsed,
        ProbeFailed,
        ProbeTimedOut,
        TrialPassed,
        RampCompleted,
        Pushback,
        ManualOpen,
        Forced,
        Disabled,
        Reset,
        Reconfigured,
    ];
    let names: Vec<&str> = all.iter().map(|r| r.as_str()).collect();
    assert_eq!(
        names,
        [
            "failure_rate",
            "slow_call_rate",
            "open_elapsed",
            "probe_failed",
            "probe_timed_out",
            "trial_passed",
            "ramp_completed",
            "pushback",
            "manual_open",
            "forced",
            "disabled",
            "reset",
            "reconfigured",
        ]
    );
    assert_eq!(ProbeTimedOut.to_string(), "probe_timed_out");
}
