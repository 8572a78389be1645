use super::*;
use crate::clock::{ClockSource, ManualClock};

fn moved(from: State, to: State, reason: TransitionReason) -> Option<Transition> {
    Some(Transition { from, to, reason })
}

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
    assert_eq!(trips(&config, nine), None);
    let half = Totals {
        calls: 10,
        failures: 5,
        slow: 0,
    };
    assert_eq!(
        trips(&config, half),
        Some(TransitionReason::FailureRate),
        "5 of 10 at 0.5 opens: the rule is >="
    );
    let below = Totals {
        calls: 11,
        failures: 5,
        slow: 0,
    };
    assert_eq!(trips(&config, below), None);
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

/// A packed window of 4 holding `outcomes`, oldest first.
fn calls(outcomes: &[bool]) -> PackedCalls {
    PackedCalls::of(4, outcomes.iter().copied())
}

#[test]
fn a_reconfigured_packed_window_stays_sealed_until_judged_under_the_new_rate() {
    let clock = ClockSource::custom(ManualClock::new());
    let mut now = LazyNow::new(&clock);
    let mut m = Machine::new(Arc::new(at_rate(0.5)), &mut now);
    let empty = PackedCalls::empty(4);
    assert_eq!(
        m.take_packed_write(),
        Some(PackedWrite::Store {
            calls: empty,
            open: true
        })
    );
    // Raised to 0.6, with one success in the window: it does not trip, and the word is
    // left sealed, for results judged under 0.5 to come to the lock.
    assert_eq!(m.reconfigure(at_rate(0.6), &mut now, calls(&[false])), None);
    assert_eq!(m.take_packed_write(), Some(PackedWrite::Seal));
    // A failure that tripped the word under 0.5 asks the lock to open the breaker: under
    // 0.6, 1 of 2 does not trip, and the word is open again with both calls.
    assert!(m.counts_packed(0));
    assert_eq!(m.judge(&mut now, calls(&[false, true])), None);
    assert_eq!(
        m.take_packed_write(),
        Some(PackedWrite::Store {
            calls: calls(&[false, true]),
            open: true
        })
    );
    assert_eq!((m.state(), m.generation()), (State::Closed, 0));
    // Lowered to 0.5 again: the same window trips at once.
    assert_eq!(
        m.reconfigure(at_rate(0.5), &mut now, calls(&[false, true])),
        moved(State::Closed, State::Open, TransitionReason::Reconfigured)
    );
    assert_eq!(m.take_packed_write(), Some(PackedWrite::Seal));
    assert!(!m.counts_packed(0) && !m.counts_packed(1));
}

#[test]
fn a_closed_result_goes_to_the_packed_window_and_a_stale_one_is_discarded() {
    let clock = ClockSource::custom(ManualClock::new());
    let mut now = LazyNow::new(&clock);
    let mut m = Machine::new(Arc::new(at_rate(0.5)), &mut now);
    let _ = m.take_packed_write();
    let failure = |m: &mut Machine, generation, now: &mut LazyNow<'_>| {
        m.record(generation, Admission::Counted, true, None, false, now)
    };
    assert_eq!(failure(&mut m, 0, &mut now), Recorded::ToPacked);
    assert_eq!(failure(&mut m, 1, &mut now), Recorded::Applied(None));
    // A window whose word tripped: 1 of 2 at 0.5 opens the breaker, the word stays sealed.
    assert_eq!(
        m.judge(&mut now, calls(&[false, true])),
        moved(State::Closed, State::Open, TransitionReason::FailureRate)
    );
    assert_eq!(m.take_packed_write(), Some(PackedWrite::Seal));
    assert_eq!(failure(&mut m, 0, &mut now), Recorded::Applied(None));
    assert_eq!(m.judge(&mut now, calls(&[true, true])), None, "not CLOSED");
    assert_eq!(m.take_packed_write(), None);
    // A reset: a new CLOSED, whose word starts empty and open.
    assert_eq!(
        m.set(State::Closed, &mut now),
        moved(State::Open, State::Closed, TransitionReason::Reset)
    );
    assert_eq!(
        m.take_packed_write(),
        Some(PackedWrite::Store {
            calls: PackedCalls::empty(4),
            open: true
        })
    );
    assert!(m.counts_packed(2));
}

/// Slow calls turned on move a packed window's calls under the lock, and off move them back.
#[test]
fn a_window_moves_between_the_word_and_the_lock_with_its_calls() {
    let clock = ClockSource::custom(ManualClock::new());
    let mut now = LazyNow::new(&clock);
    let mut m = Machine::new(Arc::new(at_rate(0.9)), &mut now);
    let _ = m.take_packed_write();
    let slow = at_rate(0.9)
        .to_builder()
        .slow_calls(Duration::from_secs(1), 1.0)
        .build()
        .unwrap();
    assert_eq!(m.reconfigure(slow, &mut now, calls(&[true, false])), None);
    assert_eq!(m.packed_capacity(), None);
    assert_eq!(m.take_packed_write(), None, "the word stays sealed");
    let totals = m.totals(&mut now, PackedCalls::empty(4));
    assert_eq!((totals.calls, totals.failures), (2, 1));
    assert_eq!(
        m.reconfigure(at_rate(0.9), &mut now, PackedCalls::empty(4)),
        None
    );
    assert_eq!(
        m.take_packed_write(),
        Some(PackedWrite::Store {
            calls: calls(&[true, false]),
            open: false
        }),
        "sealed until a result is judged under the lock"
    );
}

#[test]
fn a_probe_out_for_probe_timeout_fails_its_trial_at_the_next_call_or_result() {
    let clock = ClockSource::custom(ManualClock::new());
    let config = Config::builder()
        .count_window(1)
        .min_calls(1)
        .probes(2)
        .probe_timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let origin = clock.now();
    let at = |secs: u64| LazyNow::at(&clock, origin + Duration::from_secs(secs));
    let mut m = Machine::new(Arc::new(config), &mut at(0));
    assert_eq!(
        m.set(State::Open, &mut at(0)),
        moved(State::Closed, State::Open, TransitionReason::ManualOpen)
    );
    assert_eq!(m.acquire(&mut at(5)), Ok(Admission::Probe));
    assert_eq!(m.acquire(&mut at(20)), Ok(Admission::Probe));
    let trial = m.generation();
    // The second probe ends at 34 s, when the first has been out 29 s: its slot is freed.
    let second = Some(origin + Duration::from_secs(20));
    assert_eq!(m.release_probe(trial, second, &mut at(34)), None);
    assert_eq!((m.state(), m.probes_in_flight()), (State::HalfOpen, 1));
    // At 35 s the first has been out 30 s: the next call finds the trial failed.
    assert_eq!(
        m.acquire(&mut at(35)),
        Err((RejectReason::Open, Some(Duration::from_secs(5))))
    );
    assert_eq!((m.state(), m.probes_in_flight()), (State::Open, 0));
    // Its late success is of the trial that ended.
    let first = Some(origin + Duration::from_secs(5));
    let late = m.record(trial, Admission::Probe, false, first, false, &mut at(36));
    assert_eq!((late, m.state()), (Recorded::Applied(None), State::Open));
}
