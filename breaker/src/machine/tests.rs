use super::*;
use crate::clock::{ClockSource, ManualClock};

#[test]
fn judging_waits_for_min_calls_and_uses_completed_calls() {
    let config = Config::builder()
        .count_window(20)
        .min_calls(10)
        .build()
        .unwrap();
    let nine = Totals {
        calls: 9,
        failures: 9,
        slow: 0,
    };
    assert!(!trips(&config, nine));
    let half = Totals {
        calls: 10,
        failures: 5,
        slow: 0,
    };
    assert!(trips(&config, half), "5 of 10 at 0.5 opens: the rule is >=");
    let below = Totals {
        calls: 11,
        failures: 5,
        slow: 0,
    };
    assert!(!trips(&config, below));
}

/// A count window of 4 judged from 2 calls at `rate`: at 0.5 one failure in 2 calls
/// trips it, at 0.6 it does not.
fn at_rate(rate: f64) -> Config {
    Config::builder()
        .count_window(4)
        .min_calls(2)
        .failure_rate(rate)
        .build()
        .unwrap()
}

/// A machine with a packed window holding one success, and the threshold it judges by.
fn one_success(rate: f64, clock: &ClockSource, packed: &PackedWindow) -> (Machine, Threshold) {
    let mut now = LazyNow::new(clock);
    let m = Machine::new(Arc::new(at_rate(rate)), &mut now, packed);
    let threshold = m.threshold();
    assert_eq!(packed.record(0, 4, false, || threshold), Packed::Counted);
    (m, threshold)
}

#[test]
fn a_trip_judged_under_a_threshold_raised_since_keeps_the_breaker_closed() {
    let clock = ClockSource::custom(ManualClock::new());
    let packed = PackedWindow::new();
    let (mut m, at_half) = one_success(0.5, &clock, &packed);
    let mut now = LazyNow::new(&clock);
    assert_eq!(m.reconfigure(at_rate(0.6), &mut now, &packed), None);
    // A failure judged under 0.5 lands on the seal the reconfigure left; under the lock
    // it is judged under 0.6 and counted.
    assert_eq!(packed.record(0, 4, true, || at_half), Packed::Sealed);
    let failure = m.record(0, Admission::Counted, true, None, false, &mut now, &packed);
    assert_eq!((failure, m.state()), (None, State::Closed));
    // One that sealed the window first asks the lock to open the breaker: judged under
    // 0.6, the window is open to results again, with every call.
    let (mut m, at_half) = one_success(0.5, &clock, &packed);
    assert_eq!(packed.record(0, 4, true, || at_half), Packed::Tripped);
    assert_eq!(m.reconfigure(at_rate(0.6), &mut now, &packed), None);
    assert_eq!(m.trip(0, &mut now, &packed), None);
    assert_eq!((m.state(), m.generation()), (State::Closed, 0));
    let counts = packed.totals(4);
    assert_eq!((counts.calls, counts.failures), (2, 1));
    assert_eq!(
        packed.record(0, 4, false, || m.threshold()),
        Packed::Counted
    );
}

#[test]
fn a_failure_judged_under_a_threshold_lowered_since_opens_the_breaker() {
    let clock = ClockSource::custom(ManualClock::new());
    let packed = PackedWindow::new();
    let (mut m, at_more) = one_success(0.6, &clock, &packed);
    let mut now = LazyNow::new(&clock);
    assert_eq!(m.reconfigure(at_rate(0.5), &mut now, &packed), None);
    // Judged under 0.6 it would be counted without tripping: it lands on the seal and
    // is judged under 0.5 under the lock.
    assert_eq!(packed.record(0, 4, true, || at_more), Packed::Sealed);
    let failure = m.record(0, Admission::Counted, true, None, false, &mut now, &packed);
    assert_eq!(failure, Some((State::Closed, State::Open)));
}

#[test]
fn a_probe_out_for_probe_timeout_fails_its_trial_at_the_next_call_or_result() {
    let clock = ClockSource::custom(ManualClock::new());
    let packed = PackedWindow::new();
    let config = Config::builder()
        .count_window(1)
        .min_calls(1)
        .probes(2)
        .probe_timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let origin = clock.now();
    let at = |secs: u64| LazyNow::at(&clock, origin + Duration::from_secs(secs));
    let mut m = Machine::new(Arc::new(config), &mut at(0), &packed);
    assert_eq!(
        m.set(State::Open, &mut at(0), &packed),
        Some((State::Closed, State::Open))
    );
    assert_eq!(m.acquire(&mut at(5), &packed), Ok(Admission::Probe));
    assert_eq!(m.acquire(&mut at(20), &packed), Ok(Admission::Probe));
    let trial = m.generation();
    // The second probe ends at 34 s, when the first has been out 29 s: its slot is freed.
    let second = Some(origin + Duration::from_secs(20));
    assert_eq!(m.release_probe(trial, second, &mut at(34), &packed), None);
    assert_eq!((m.state(), m.probes_in_flight()), (State::HalfOpen, 1));
    // At 35 s the first has been out 30 s: the next call finds the trial failed.
    assert_eq!(
        m.acquire(&mut at(35), &packed),
        Err((RejectReason::Open, Some(Duration::from_secs(5))))
    );
    assert_eq!((m.state(), m.probes_in_flight()), (State::Open, 0));
    // Its late success is of the trial that ended.
    let first = Some(origin + Duration::from_secs(5));
    let late = m.record(
        trial,
        Admission::Probe,
        false,
        first,
        false,
        &mut at(36),
        &packed,
    );
    assert_eq!((late, m.state()), (None, State::Open));
}
