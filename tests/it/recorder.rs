//! A breaker's own recording of its calls: what each call did, in a bounded ring, in the
//! format the replay tuner reads.

use std::time::Duration;

use breakerbox::clock::ManualClock;
use breakerbox::recording::{CallOutcome, RecordedCall, Recording};
use breakerbox::{Breaker, Config, Outcome, RejectReason, State};

fn breaker(clock: &ManualClock) -> Breaker {
    let config = Config::builder()
        .count_window(4)
        .min_calls(4)
        .probes(1)
        .build()
        .unwrap();
    Breaker::with_clock("recorded", config, clock.clone())
}

fn call(start_ms: u64, latency_ms: u64, outcome: CallOutcome) -> RecordedCall {
    RecordedCall::new(
        Duration::from_millis(start_ms),
        Duration::from_millis(latency_ms),
        outcome,
    )
}

const SUCCESS: CallOutcome = CallOutcome::Completed(Outcome::Success);
const FAILURE: CallOutcome = CallOutcome::Completed(Outcome::Failure);
const IGNORED: CallOutcome = CallOutcome::Completed(Outcome::Ignored);

#[test]
fn every_call_is_recorded_with_its_start_latency_and_outcome_through_a_whole_cycle() {
    let clock = ManualClock::new();
    let b = breaker(&clock);
    clock.advance(Duration::from_secs(1));
    b.start_recording(100).unwrap();

    let slow = b.try_acquire().unwrap();
    clock.advance(Duration::from_millis(10));
    b.try_acquire().unwrap().ignore();
    drop(b.try_acquire().unwrap()); // cancelled: recorded as ignored
    clock.advance(Duration::from_millis(15));
    slow.success();
    for _ in 0..3 {
        let p = b.try_acquire().unwrap();
        clock.advance(Duration::from_millis(5));
        p.failure();
    }
    assert_eq!(b.state(), State::Open, "3 of 4 calls failed");
    let _ = b.try_acquire().unwrap_err();
    clock.advance(Duration::from_secs(5));
    let probe = b.try_acquire().unwrap();
    let _ = b.try_acquire().unwrap_err(); // the probe's slot is taken
    clock.advance(Duration::from_millis(7));
    probe.success();

    assert_eq!(
        b.recording().calls(),
        [
            call(0, 25, SUCCESS),
            call(10, 0, IGNORED),
            call(10, 0, IGNORED),
            call(25, 5, FAILURE),
            call(30, 5, FAILURE),
            call(35, 5, FAILURE),
            call(40, 0, CallOutcome::Rejected(RejectReason::Open)),
            // Calls that started together, in the order they ended.
            call(5040, 0, CallOutcome::Rejected(RejectReason::HalfOpenFull)),
            call(5040, 7, SUCCESS),
        ]
    );
}

#[test]
fn the_ring_keeps_the_last_calls_and_a_call_started_before_the_recording_is_left_out() {
    let clock = ManualClock::new();
    let b = breaker(&clock);
    let before = b.try_acquire().unwrap();
    b.start_recording(3).unwrap();
    before.success();
    for _ in 0..5 {
        let p = b.try_acquire().unwrap();
        clock.advance(Duration::from_millis(1));
        p.success();
    }
    assert_eq!(
        b.recording().calls(),
        [
            call(2, 1, SUCCESS),
            call(3, 1, SUCCESS),
            call(4, 1, SUCCESS)
        ]
    );
}

#[test]
fn stopping_returns_the_recording_and_records_no_more() {
    let clock = ManualClock::new();
    let b = breaker(&clock);
    b.start_recording(10).unwrap();
    b.try_acquire().unwrap().failure();
    let recorded = b.stop_recording();
    assert_eq!(recorded.calls(), [call(0, 0, FAILURE)]);
    b.try_acquire().unwrap().success();
    assert_eq!(b.recording(), Recording::new());
    // The window still counts both calls: recording changed nothing of the breaker.
    assert_eq!((b.snapshot().calls, b.snapshot().failures), (2, 1));
}

#[test]
fn a_recording_round_trips_through_its_csv_format() {
    let clock = ManualClock::new();
    let b = breaker(&clock);
    b.start_recording(10).unwrap();
    let p = b.try_acquire().unwrap();
    clock.advance(Duration::from_micros(12_500));
    p.success();
    b.force_open();
    let _ = b.try_acquire().unwrap_err();
    let mut csv = Vec::new();
    b.recording().write_csv_to(&mut csv).unwrap();
    assert_eq!(
        String::from_utf8(csv.clone()).unwrap(),
        "# breaker: recorded\n\
         # config: window = 4, min = 4, rate = 0.5, open = \"5s\", probes = 1\n\
         t_ms,latency_ms,outcome\n0,12.5,success\n12.5,0,rejected_forced_open\n"
    );
    let read = Recording::read_csv_from(&csv[..]).unwrap();
    assert_eq!(read, b.recording());
    assert_eq!(read.config(), Some(&b.config()));
}

#[test]
fn a_shadow_breaker_records_the_real_outcome_of_the_calls_it_would_reject() {
    let clock = ManualClock::new();
    let config = Config::builder()
        .count_window(1)
        .shadow(true)
        .build()
        .unwrap();
    let b = Breaker::with_clock("recorded::shadow", config, clock.clone());
    b.start_recording(10).unwrap();
    b.try_acquire().unwrap().failure();
    assert_eq!(b.state(), State::Open);
    let p = b.try_acquire().unwrap();
    clock.advance(Duration::from_millis(3));
    p.success();
    assert_eq!(
        b.recording().calls(),
        [call(0, 0, FAILURE), call(0, 3, SUCCESS)]
    );
}

#[derive(Debug)]
struct Down;

impl breakerbox::Classify for Down {
    fn classify(&self) -> Outcome {
        Outcome::Failure
    }
}

impl From<breakerbox::Rejected> for Down {
    fn from(_: breakerbox::Rejected) -> Self {
        Down
    }
}

#[breakerbox::circuit_breaker(name = "it::recorder::attribute", record = 2)]
async fn recorded(up: bool) -> Result<(), Down> {
    if up {
        Ok(())
    } else {
        Err(Down)
    }
}

#[tokio::test]
async fn the_attribute_records_the_last_calls_from_the_first() {
    for up in [true, false, true] {
        let _ = recorded(up).await;
    }
    let b = breakerbox::registry()
        .get("it::recorder::attribute")
        .unwrap();
    let outcomes: Vec<_> = b.recording().calls().iter().map(|c| c.outcome).collect();
    assert_eq!(outcomes, [FAILURE, SUCCESS]);
}

#[test]
fn an_absurd_capacity_is_an_error_and_records_nothing() {
    let clock = ManualClock::new();
    let b = breaker(&clock);
    for capacity in [0, breakerbox::recording::MAX_CAPACITY + 1, usize::MAX] {
        let err = b.start_recording(capacity).unwrap_err();
        assert_eq!(err.capacity(), capacity);
        assert_eq!(
            err.to_string(),
            format!("record must be 1 to 10000000 calls, got {capacity}")
        );
    }
    b.try_acquire().unwrap().success();
    assert_eq!(b.recording().calls(), []);
}

#[test]
fn a_breakers_recording_names_it_in_its_csv() {
    let clock = ManualClock::new();
    let b = breaker(&clock);
    b.start_recording(10).unwrap();
    let p = b.try_acquire().unwrap();
    clock.advance(Duration::from_millis(3));
    p.success();
    let mut csv = Vec::new();
    b.stop_recording().write_csv_to(&mut csv).unwrap();
    let text = String::from_utf8(csv).unwrap();
    assert_eq!(
        text,
        "# breaker: recorded\n\
         # config: window = 4, min = 4, rate = 0.5, open = \"5s\", probes = 1\n\
         t_ms,latency_ms,outcome\n0,3,success\n"
    );
    let read = Recording::read_csv_from(text.as_bytes()).unwrap();
    assert_eq!(read.name(), Some("recorded"));
    assert_eq!(read.calls(), [call(0, 3, SUCCESS)]);
}
