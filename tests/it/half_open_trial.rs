//! HALF_OPEN shows its trial: the probes admitted, in flight and succeeded in the current
//! half-open period, in the snapshot and the metrics, each trial from zero.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use breakerbox::clock::ManualClock;
use breakerbox::metrics::BreakerCollector;
use breakerbox::{config::ConfigBuilder, registry::Registry, Breaker, Config, RejectReason, State};

const OPEN_FOR: Duration = Duration::from_secs(5);

/// A breaker of 4 calls, open for 5 s, whose trial runs `probes` probes at once and passes
/// at `successes`.
fn breaker(builder: ConfigBuilder, probes: u32, successes: u32) -> (Breaker, ManualClock) {
    let config = builder
        .count_window(4)
        .min_calls(4)
        .open_for(OPEN_FOR)
        .probes(probes)
        .successes(successes)
        .build()
        .unwrap();
    breakerbox::testing::manual("libraryd", config)
}

/// Three failures and a success: 4 calls at a failure rate of 0.75, which the default
/// rate of 0.5 opens on.
fn trip(b: &Breaker) {
    for _ in 0..3 {
        b.try_acquire().unwrap().failure();
    }
    b.try_acquire().unwrap().success();
    assert_eq!(b.state(), State::Open);
}

/// The trial as `(admitted, in_flight, succeeded)`.
fn trial(b: &Breaker) -> Option<(u32, u32, u32)> {
    b.snapshot()
        .trial
        .map(|t| (t.admitted, t.in_flight, t.succeeded))
}

#[test]
fn the_trial_counts_probes_admitted_in_flight_and_succeeded() {
    let (b, clock) = breaker(Config::builder(), 3, 3);
    assert_eq!(trial(&b), None, "no trial in CLOSED");
    trip(&b);
    assert_eq!(trial(&b), None, "no trial in OPEN");
    clock.advance(OPEN_FOR);

    let first = b.try_acquire().unwrap();
    assert_eq!(b.state(), State::HalfOpen);
    assert_eq!(trial(&b), Some((1, 1, 0)));
    let second = b.try_acquire().unwrap();
    let third = b.try_acquire().unwrap();
    assert_eq!(trial(&b), Some((3, 3, 0)));
    let full = b.try_acquire().unwrap_err();
    assert_eq!(full.reason(), RejectReason::HalfOpenFull);
    assert_eq!(trial(&b), Some((3, 3, 0)), "a rejected call is no probe");

    first.success();
    assert_eq!(trial(&b), Some((3, 2, 1)));
    second.success();
    assert_eq!(trial(&b), Some((3, 1, 2)));
    let s = b.snapshot();
    // The window is still the one that opened the breaker: probes never enter it.
    assert_eq!(
        (s.state, s.calls, s.failures, s.failure_rate),
        (State::HalfOpen, 4, 3, Some(0.75))
    );
    assert_eq!(b.probes_in_flight(), 1);

    third.success();
    let s = b.snapshot();
    assert_eq!((s.state, s.trial), (State::Closed, None));
    assert_eq!((s.calls, s.failures, s.failure_rate), (0, 0, None));
}

#[test]
fn a_probe_that_ended_frees_its_slot_and_stays_admitted() {
    let (b, clock) = breaker(Config::builder(), 2, 2);
    trip(&b);
    clock.advance(OPEN_FOR);
    let first = b.try_acquire().unwrap();
    let second = b.try_acquire().unwrap();
    assert_eq!(trial(&b), Some((2, 2, 0)));

    drop(first); // cancelled: no verdict
    assert_eq!(trial(&b), Some((2, 1, 0)));
    second.ignore(); // not the downstream's failure: no verdict either
    assert_eq!(trial(&b), Some((2, 0, 0)));

    let third = b.try_acquire().unwrap();
    assert_eq!(trial(&b), Some((3, 1, 0)));
    third.success();
    assert_eq!(trial(&b), Some((3, 0, 1)));
    b.try_acquire().unwrap().success();
    assert_eq!((b.state(), trial(&b)), (State::Closed, None));
}

#[test]
fn a_probe_failure_reopens_and_the_next_trial_starts_at_zero() {
    let (b, clock) = breaker(Config::builder(), 3, 3);
    trip(&b);
    clock.advance(OPEN_FOR);
    b.try_acquire().unwrap().success();
    let out = b.try_acquire().unwrap();
    b.try_acquire().unwrap().failure();
    assert_eq!((b.state(), trial(&b)), (State::Open, None));

    clock.advance(OPEN_FOR);
    let probe = b.try_acquire().unwrap();
    assert_eq!(b.state(), State::HalfOpen);
    assert_eq!(trial(&b), Some((1, 1, 0)), "a new trial counts from zero");
    // The probe still out of the failed trial is of an earlier generation.
    out.success();
    assert_eq!(trial(&b), Some((1, 1, 0)), "a stale success is not counted");
    probe.success();
    assert_eq!(trial(&b), Some((1, 0, 1)));
}

#[test]
fn a_stale_result_from_an_earlier_generation_is_not_counted() {
    let (b, clock) = breaker(Config::builder(), 2, 2);
    // Admitted in CLOSED, before the breaker opened.
    let closed_call = b.try_acquire().unwrap();
    trip(&b);
    clock.advance(OPEN_FOR);
    let probe = b.try_acquire().unwrap();
    closed_call.success();
    assert_eq!(trial(&b), Some((1, 1, 0)));
    probe.success();
    assert_eq!(trial(&b), Some((1, 0, 1)));

    // A manual open period ends the trial; the next one starts from zero, and a probe of
    // the trial it ended counts in neither.
    let late = b.try_acquire().unwrap();
    assert_eq!(trial(&b), Some((2, 1, 1)));
    b.open_for(Duration::from_secs(1));
    assert_eq!(trial(&b), None);
    clock.advance(Duration::from_secs(1));
    let probe = b.try_acquire().unwrap();
    late.success();
    assert_eq!((b.state(), trial(&b)), (State::HalfOpen, Some((1, 1, 0))));
    drop(probe);
}

#[test]
fn a_new_window_during_the_trial_starts_it_again() {
    let (b, clock) = breaker(Config::builder(), 2, 2);
    trip(&b);
    clock.advance(OPEN_FOR);
    let out = b.try_acquire().unwrap();
    b.try_acquire().unwrap().success();
    assert_eq!(trial(&b), Some((2, 1, 1)));

    let wider = Config::builder()
        .count_window(8)
        .min_calls(4)
        .open_for(OPEN_FOR)
        .probes(2)
        .successes(2)
        .build()
        .unwrap();
    b.reconfigure(wider);
    assert_eq!((b.state(), trial(&b)), (State::HalfOpen, Some((0, 0, 0))));
    out.success();
    assert_eq!(
        trial(&b),
        Some((0, 0, 0)),
        "the probe out is of the window before"
    );
}

/// The next call the ramp-up's step admits.
fn ramp_call(b: &Breaker) -> breakerbox::Permit<'_> {
    loop {
        match b.try_acquire() {
            Ok(permit) => return permit,
            Err(rejected) => assert_eq!(rejected.reason(), RejectReason::Throttled),
        }
    }
}

#[test]
fn the_ramp_up_after_a_passed_trial_shows_no_trial() {
    let builder = Config::builder().ramp_up(&[50, 100], Duration::from_secs(60));
    let (b, clock) = breaker(builder, 1, 1);
    trip(&b);
    clock.advance(OPEN_FOR);
    let probe = b.try_acquire().unwrap();
    assert_eq!(trial(&b), Some((1, 1, 0)));
    probe.success();
    let s = b.snapshot();
    assert_eq!(
        (s.state, s.admit_percent, s.trial),
        (State::HalfOpen, 50, None)
    );
    // The ramp's calls do not enter the window: it is still the one that opened it.
    ramp_call(&b).success();
    let s = b.snapshot();
    assert_eq!((s.calls, s.failures, s.trial), (4, 3, None));

    // A failure of the ramp reopens; the trial after it starts from zero.
    ramp_call(&b).failure();
    assert_eq!(b.state(), State::Open);
    clock.advance(b.try_acquire().unwrap_err().retry_after().unwrap());
    let _probe = b.try_acquire().unwrap();
    assert_eq!(trial(&b), Some((1, 1, 0)));
}

#[test]
fn the_trial_is_exported_as_gauges_while_it_runs() {
    static OWN: OnceLock<Registry> = OnceLock::new();
    let own = OWN.get_or_init(Registry::default);
    let config = Config::builder()
        .count_window(4)
        .min_calls(4)
        .open_for(OPEN_FOR)
        .probes(2)
        .build()
        .unwrap();
    let clock = ManualClock::new();
    let b = own.register(Arc::new(Breaker::with_clock(
        "trial::metrics",
        config,
        clock.clone(),
    )));
    let mut prometheus = prometheus_client::registry::Registry::default();
    prometheus.register_collector(Box::new(BreakerCollector::of(own)));
    let probes = || {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &prometheus).unwrap();
        text.lines()
            .filter(|l| l.starts_with("circuitbreaker_half_open_probes{"))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(probes(), Vec::<String>::new(), "no trial in CLOSED");
    trip(&b);
    clock.advance(OPEN_FOR);
    let out = b.try_acquire().unwrap();
    b.try_acquire().unwrap().success();
    assert_eq!(
        probes(),
        [
            "circuitbreaker_half_open_probes{name=\"trial::metrics\",probes=\"admitted\"} 2",
            "circuitbreaker_half_open_probes{name=\"trial::metrics\",probes=\"in_flight\"} 1",
            "circuitbreaker_half_open_probes{name=\"trial::metrics\",probes=\"succeeded\"} 1",
        ]
    );
    out.failure();
    assert_eq!(probes(), Vec::<String>::new(), "no trial in OPEN");
}

#[test]
fn outside_closed_the_window_is_the_one_the_breaker_left_closed_with() {
    let (b, clock) = breaker(Config::builder(), 1, 1);
    let counts = |b: &Breaker| {
        let s = b.snapshot();
        (s.state, s.calls, s.failures, s.failure_rate)
    };
    trip(&b);
    assert_eq!(counts(&b), (State::Open, 4, 3, Some(0.75)));
    let _ = b.try_acquire().unwrap_err();
    assert_eq!(counts(&b), (State::Open, 4, 3, Some(0.75)), "a rejection");
    clock.advance(OPEN_FOR);
    b.try_acquire().unwrap().failure();
    assert_eq!(
        counts(&b),
        (State::Open, 4, 3, Some(0.75)),
        "a failed probe"
    );

    b.force_open();
    assert_eq!(counts(&b), (State::ForcedOpen, 4, 3, Some(0.75)));
    b.disable();
    b.try_acquire().unwrap().failure();
    assert_eq!(
        counts(&b),
        (State::Disabled, 4, 3, Some(0.75)),
        "nothing counted"
    );
    b.reset();
    assert_eq!(counts(&b), (State::Closed, 0, 0, None));

    // From CLOSED, a manual open period keeps the window as it was.
    b.try_acquire().unwrap().failure();
    b.open_for(Duration::from_secs(1));
    assert_eq!(counts(&b), (State::Open, 1, 1, None));
}
