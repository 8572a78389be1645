//! Hung probes (`probe_timeout`): a HALF_OPEN probe still in flight `probe_timeout` after it
//! was admitted counts as failed. The next call or result of the trial from that instant
//! reopens the breaker, as a failed probe does (backoff included), lazily, with no timer; the
//! hung probe's late result belongs to the trial that ended and is discarded. Each test is
//! named for the rule it proves, on a manual clock.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use breakerbox::clock::ManualClock;
use breakerbox::{config::ConfigBuilder, events::Event, Breaker, Config, RejectReason, State};

const OPEN_FOR: Duration = Duration::from_secs(5);
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);
const NANO: Duration = Duration::from_nanos(1);

/// A window of one call that opens on a failure, for `OPEN_FOR`, with `probes` probes.
fn builder(probes: u32) -> ConfigBuilder {
    Config::builder()
        .count_window(1)
        .min_calls(1)
        .open_for(OPEN_FOR)
        .probes(probes)
}

/// The state changes a breaker reported, in order.
type Transitions = Arc<Mutex<Vec<(State, State)>>>;

fn breaker(config: Config) -> (Breaker, ManualClock, Transitions) {
    let clock = ManualClock::new();
    let b = Breaker::with_clock("libraryd", config, clock.clone());
    let log = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&log);
    b.on_event(move |e: &Event| {
        if let Event::StateTransition { from, to, .. } = e {
            sink.lock().unwrap().push((*from, *to));
        }
    });
    (b, clock, log)
}

/// Opens `b` and lets the open period pass.
fn open_then_expire(b: &Breaker, clock: &ManualClock) {
    b.try_acquire().unwrap().failure();
    assert_eq!(b.state(), State::Open);
    clock.advance(OPEN_FOR);
}

const TRIAL_FAILED: [(State, State); 3] = [
    (State::Closed, State::Open),
    (State::Open, State::HalfOpen),
    (State::HalfOpen, State::Open),
];

#[test]
fn a_hung_probe_reopens_the_breaker_at_the_next_call_after_probe_timeout() {
    let (b, clock, log) = breaker(builder(1).probe_timeout(PROBE_TIMEOUT).build().unwrap());
    open_then_expire(&b, &clock);
    let hung = b.try_acquire().expect("the probe");

    clock.advance(PROBE_TIMEOUT - NANO);
    let rejected = b.try_acquire().unwrap_err();
    assert_eq!(rejected.reason(), RejectReason::HalfOpenFull);
    assert_eq!((b.state(), b.probes_in_flight()), (State::HalfOpen, 1));

    clock.advance(NANO);
    let rejected = b.try_acquire().unwrap_err();
    assert_eq!(rejected.reason(), RejectReason::Open);
    assert_eq!(rejected.retry_after(), Some(OPEN_FOR), "a new open period");
    assert_eq!((b.state(), b.probes_in_flight()), (State::Open, 0));
    assert_eq!(*log.lock().unwrap(), TRIAL_FAILED);

    // Its late success belongs to the trial that ended: discarded, the breaker stays open.
    hung.success();
    let s = b.snapshot();
    assert_eq!((s.state, s.calls, s.failures), (State::Open, 1, 1));
    let by = s.totals.rejected_by;
    assert_eq!((s.totals.success, by.half_open_full, by.open), (1, 1, 1));
    assert_eq!(*log.lock().unwrap(), TRIAL_FAILED);

    // The next trial is a trial like any other.
    clock.advance(OPEN_FOR);
    b.try_acquire().expect("the next probe").success();
    assert_eq!(b.state(), State::Closed);
}

#[test]
fn a_hung_probe_reopens_the_breaker_at_another_probes_result() {
    let (b, clock, log) = breaker(builder(2).probe_timeout(PROBE_TIMEOUT).build().unwrap());
    open_then_expire(&b, &clock);
    let hung = b.try_acquire().expect("the first probe");
    clock.advance(Duration::from_secs(20));
    let timely = b.try_acquire().expect("the second probe");

    // 10 s later the second probe has run 10 s, the first 30 s: the trial failed.
    clock.advance(Duration::from_secs(10));
    timely.success();
    assert_eq!((b.state(), b.probes_in_flight()), (State::Open, 0));
    assert_eq!(*log.lock().unwrap(), TRIAL_FAILED);
    assert_eq!(b.try_acquire().unwrap_err().retry_after(), Some(OPEN_FOR));

    hung.success();
    assert_eq!(b.state(), State::Open);
    assert_eq!(b.snapshot().calls, 1);
}

#[test]
fn a_hung_probes_own_late_result_reopens_the_breaker() {
    for (ending, end) in [
        (
            "success",
            (|p: breakerbox::Permit<'_>| p.success()) as fn(breakerbox::Permit<'_>),
        ),
        ("ignored", |p| p.ignore()),
        ("cancelled", |p| drop(p)),
    ] {
        let (b, clock, log) = breaker(builder(1).probe_timeout(PROBE_TIMEOUT).build().unwrap());
        open_then_expire(&b, &clock);
        let hung = b.try_acquire().expect("the probe");
        // No call in between: the probe's own result, past the limit, tells.
        clock.advance(PROBE_TIMEOUT);
        end(hung);
        assert_eq!(b.state(), State::Open, "{ending}");
        assert_eq!(*log.lock().unwrap(), TRIAL_FAILED, "{ending}");
        let rejected = b.try_acquire().unwrap_err();
        assert_eq!(rejected.retry_after(), Some(OPEN_FOR), "{ending}");
    }
}

#[test]
fn a_probe_within_probe_timeout_closes_the_breaker() {
    let (b, clock, log) = breaker(builder(1).probe_timeout(PROBE_TIMEOUT).build().unwrap());
    open_then_expire(&b, &clock);
    let probe = b.try_acquire().expect("the probe");
    clock.advance(PROBE_TIMEOUT - NANO);
    probe.success();
    assert_eq!(b.state(), State::Closed);
    assert_eq!(
        log.lock().unwrap().last(),
        Some(&(State::HalfOpen, State::Closed))
    );
}

#[test]
fn reopening_for_a_hung_probe_backs_off() {
    let config = builder(1)
        .open_backoff(2.0, Duration::from_secs(60))
        .probe_timeout(PROBE_TIMEOUT)
        .build()
        .unwrap();
    let (b, clock, _log) = breaker(config);
    open_then_expire(&b, &clock);
    let _hung = b.try_acquire().expect("the probe");
    clock.advance(PROBE_TIMEOUT);
    let rejected = b.try_acquire().unwrap_err();
    assert_eq!(
        (rejected.reason(), rejected.retry_after()),
        (RejectReason::Open, Some(2 * OPEN_FOR))
    );
    // Hung again: the open period doubles again.
    clock.advance(2 * OPEN_FOR);
    let _hung_again = b.try_acquire().expect("the next probe");
    clock.advance(PROBE_TIMEOUT);
    assert_eq!(
        b.try_acquire().unwrap_err().retry_after(),
        Some(4 * OPEN_FOR)
    );
}

#[test]
fn probe_timeout_defaults_to_the_timeout_else_60_seconds() {
    assert_eq!(Config::default().probe_timeout(), Duration::from_secs(60));
    let timed = Config::builder()
        .timeout(Duration::from_millis(800))
        .build()
        .unwrap();
    assert_eq!(timed.probe_timeout(), Duration::from_millis(800));
    let both = Config::builder()
        .timeout(Duration::from_millis(800))
        .probe_timeout(PROBE_TIMEOUT)
        .build()
        .unwrap();
    assert_eq!(both.probe_timeout(), PROBE_TIMEOUT);

    // Unset, a breaker's probe hangs after 60 s.
    let (b, clock, _log) = breaker(builder(1).build().unwrap());
    open_then_expire(&b, &clock);
    let _hung = b.try_acquire().expect("the probe");
    clock.advance(Duration::from_secs(60) - NANO);
    assert_eq!(
        b.try_acquire().unwrap_err().reason(),
        RejectReason::HalfOpenFull
    );
    clock.advance(NANO);
    assert_eq!(b.try_acquire().unwrap_err().reason(), RejectReason::Open);
}

#[test]
fn a_new_probe_timeout_applies_to_probes_already_out() {
    let (b, clock, _log) = breaker(builder(1).build().unwrap());
    open_then_expire(&b, &clock);
    let _hung = b.try_acquire().expect("the probe");
    clock.advance(Duration::from_secs(10));
    assert_eq!(
        b.try_acquire().unwrap_err().reason(),
        RejectReason::HalfOpenFull
    );
    // Out for 10 s, under a limit of 5 s from now on: it hung.
    let shorter = builder(1)
        .probe_timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    b.reconfigure(shorter);
    assert_eq!(b.state(), State::HalfOpen, "told lazily, by the next call");
    assert_eq!(b.try_acquire().unwrap_err().reason(), RejectReason::Open);
}

#[test]
fn the_ramp_after_the_probes_is_not_bounded_by_probe_timeout() {
    let config = builder(1)
        .ramp_up(&[50, 100], Duration::from_secs(60))
        .probe_timeout(Duration::from_secs(1))
        .build()
        .unwrap();
    let (b, clock, _log) = breaker(config);
    open_then_expire(&b, &clock);
    b.try_acquire().expect("the probe").success();
    assert_eq!(
        (b.state(), b.snapshot().admit_percent),
        (State::HalfOpen, 50)
    );
    // The ramp admits every other call; one held 10 s is no hung probe.
    assert_eq!(
        b.try_acquire().unwrap_err().reason(),
        RejectReason::Throttled
    );
    let slow_ramp_call = b.try_acquire().expect("admitted by the ramp");
    clock.advance(Duration::from_secs(10));
    assert_eq!(
        b.try_acquire().unwrap_err().reason(),
        RejectReason::Throttled
    );
    slow_ramp_call.success();
    let s = b.snapshot();
    assert_eq!((s.state, s.admit_percent), (State::HalfOpen, 50));
}

#[test]
fn a_probes_limit_runs_from_its_own_start() {
    let (b, clock, _log) = breaker(builder(2).probe_timeout(PROBE_TIMEOUT).build().unwrap());
    open_then_expire(&b, &clock);
    let first = b.try_acquire().expect("the first probe");
    clock.advance(Duration::from_secs(20));
    let second = b.try_acquire().expect("the second probe");
    first.success();
    // 50 s after the first probe, 30 s less a nanosecond after the second: none hung.
    clock.advance(PROBE_TIMEOUT - NANO);
    let third = b.try_acquire().expect("the first probe's slot");
    assert_eq!((b.state(), b.probes_in_flight()), (State::HalfOpen, 2));
    clock.advance(NANO);
    third.success();
    assert_eq!(b.state(), State::Open, "the second probe hung");
    second.success();
    assert_eq!(b.state(), State::Open);
}
