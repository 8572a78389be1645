//! `Breaker::on_call`: every call's end told to its listeners, with its duration, in order,
//! on a manual clock or tokio's paused clock.

use std::io;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use breakerbox::clock::ManualClock;
use breakerbox::{
    circuit_breaker, config::ConfigBuilder, events::CallEnding, events::CallEvent, events::Event,
    registry, Breaker, Classify, Config, Outcome, RejectReason, Rejected, State,
};
use tokio::time::sleep;

/// What a listener saw: each call's ending, duration and staleness, and the breaker's
/// transitions among them.
#[derive(Clone, Debug, PartialEq)]
enum Seen {
    Call(CallEnding, Option<Duration>, bool),
    Moved(State, State),
}

type Log = Arc<Mutex<Vec<Seen>>>;

fn ms(n: u64) -> Option<Duration> {
    Some(Duration::from_millis(n))
}

fn call(ending: CallEnding, duration: Option<Duration>) -> Seen {
    Seen::Call(ending, duration, false)
}

fn rejected(reason: RejectReason) -> Seen {
    Seen::Call(CallEnding::Rejected(reason), None, false)
}

/// Listens to `b`'s calls and transitions, into one log.
fn listen(b: &Breaker) -> Log {
    let log = Log::default();
    let calls = log.clone();
    b.on_call(move |e: &CallEvent| {
        calls
            .lock()
            .unwrap()
            .push(Seen::Call(e.ending, e.duration, e.stale))
    });
    let moves = log.clone();
    b.on_event(move |e: &Event| {
        if let Event::StateTransition { from, to, .. } = *e {
            moves.lock().unwrap().push(Seen::Moved(from, to));
        }
    });
    log
}

fn seen(log: &Log) -> Vec<Seen> {
    std::mem::take(&mut *log.lock().unwrap())
}

fn on_manual_clock(name: &str, config: ConfigBuilder) -> (Breaker, ManualClock) {
    let clock = ManualClock::new();
    let b = Breaker::with_clock(name, config.build().unwrap(), clock.clone());
    (b, clock)
}

/// A library's error: `NotFound` is a business answer, `Interrupted` says nothing.
#[derive(Debug)]
enum LibError {
    NotFound,
    Interrupted,
    Unavailable,
    Rejected,
}

impl Classify for LibError {
    fn classify(&self) -> Outcome {
        match self {
            LibError::NotFound => Outcome::Success,
            LibError::Interrupted => Outcome::Ignored,
            LibError::Unavailable | LibError::Rejected => Outcome::Failure,
        }
    }
}

impl From<Rejected> for LibError {
    fn from(_: Rejected) -> Self {
        LibError::Rejected
    }
}

#[test]
fn each_ending_is_told_with_its_duration() {
    let (b, clock) = on_manual_clock("it::call_events::endings", Config::builder());
    let log = listen(&b);
    fn step<'a>(
        clock: &ManualClock,
        permit: breakerbox::Permit<'a>,
        millis: u64,
    ) -> breakerbox::Permit<'a> {
        clock.advance(Duration::from_millis(millis));
        permit
    }
    step(&clock, b.try_acquire().unwrap(), 10).success();
    step(&clock, b.try_acquire().unwrap(), 20).failure();
    step(&clock, b.try_acquire().unwrap(), 5).ignore();
    drop(step(&clock, b.try_acquire().unwrap(), 7));
    let business: Result<(), LibError> = Err(LibError::NotFound);
    step(&clock, b.try_acquire().unwrap(), 3).record_output(&business);
    let interrupted: Result<(), LibError> = Err(LibError::Interrupted);
    step(&clock, b.try_acquire().unwrap(), 4).record_output(&interrupted);
    assert_eq!(
        seen(&log),
        [
            call(CallEnding::Success, ms(10)),
            call(CallEnding::Failure, ms(20)),
            call(CallEnding::Ignored, ms(5)),
            call(CallEnding::Cancelled, ms(7)),
            call(CallEnding::Success, ms(3)),
            call(CallEnding::Ignored, ms(4)),
        ]
    );
    // Told, and counted as ever.
    let t = b.snapshot().totals;
    assert_eq!((t.success, t.failure, t.ignored, t.cancelled), (2, 1, 2, 1));
}

#[test]
fn a_failure_that_opens_is_told_before_its_transition_and_rejections_carry_their_reason() {
    let config = Config::builder()
        .count_window(2)
        .min_calls(2)
        .open_for(Duration::from_secs(5))
        .probes(1);
    let (b, clock) = on_manual_clock("it::call_events::opens", config);
    let log = listen(&b);
    let first = b.try_acquire().unwrap();
    clock.advance(Duration::from_millis(30));
    first.failure();
    let second = b.try_acquire().unwrap();
    clock.advance(Duration::from_millis(50));
    second.failure();
    assert_eq!(b.try_acquire().unwrap_err().reason(), RejectReason::Open);
    assert_eq!(
        seen(&log),
        [
            call(CallEnding::Failure, ms(30)),
            call(CallEnding::Failure, ms(50)),
            Seen::Moved(State::Closed, State::Open),
            rejected(RejectReason::Open),
        ]
    );

    // HALF_OPEN: one probe at once; the second call is rejected while it runs.
    clock.advance(Duration::from_secs(5));
    let probe = b.try_acquire().unwrap();
    let full = b.try_acquire().unwrap_err();
    assert_eq!(full.reason(), RejectReason::HalfOpenFull);
    clock.advance(Duration::from_millis(12));
    probe.success();
    assert_eq!(
        seen(&log),
        [
            Seen::Moved(State::Open, State::HalfOpen),
            rejected(RejectReason::HalfOpenFull),
            call(CallEnding::Success, ms(12)),
            Seen::Moved(State::HalfOpen, State::Closed),
        ]
    );

    b.force_open();
    let _ = b.try_acquire();
    assert_eq!(
        seen(&log),
        [
            Seen::Moved(State::Closed, State::ForcedOpen),
            rejected(RejectReason::ForcedOpen),
        ]
    );
}

#[test]
fn a_failure_with_pushback_is_told_then_the_opening_it_asked_for() {
    let (b, clock) = on_manual_clock("it::call_events::pushback", Config::builder());
    let log = listen(&b);
    let permit = b.try_acquire().unwrap();
    clock.advance(Duration::from_millis(15));
    permit.failure_with_pushback(Duration::from_secs(30));
    let _ = b.try_acquire();
    assert_eq!(
        seen(&log),
        [
            call(CallEnding::Failure, ms(15)),
            Seen::Moved(State::Closed, State::Open),
            rejected(RejectReason::Open),
        ]
    );
}

#[test]
fn a_full_bulkhead_is_told_as_a_rejection() {
    let (b, clock) = on_manual_clock(
        "it::call_events::bulkhead",
        Config::builder().max_concurrent(1),
    );
    let log = listen(&b);
    let held = b.try_acquire().unwrap();
    assert_eq!(
        b.try_acquire().unwrap_err().reason(),
        RejectReason::Bulkhead
    );
    clock.advance(Duration::from_millis(8));
    held.success();
    assert_eq!(
        seen(&log),
        [
            rejected(RejectReason::Bulkhead),
            call(CallEnding::Success, ms(8)),
        ]
    );
}

#[test]
fn a_result_of_an_earlier_generation_is_told_stale_and_discarded() {
    let (b, clock) = on_manual_clock("it::call_events::stale", Config::builder().count_window(2));
    let log = listen(&b);
    let late = b.try_acquire().unwrap();
    b.force_open();
    b.reset();
    clock.advance(Duration::from_millis(90));
    late.success();
    assert_eq!(
        seen(&log),
        [
            Seen::Moved(State::Closed, State::ForcedOpen),
            Seen::Moved(State::ForcedOpen, State::Closed),
            Seen::Call(CallEnding::Success, ms(90), true),
        ]
    );
    // Discarded: the new window holds nothing.
    assert_eq!(b.snapshot().calls, 0);
}

#[test]
fn a_panicking_listener_is_contained_and_the_others_still_hear() {
    let (b, _clock) = on_manual_clock("it::call_events::panics", Config::builder());
    b.on_call(|_| panic!("a listener's bug"));
    let log = listen(&b);
    b.try_acquire().unwrap().failure();
    assert_eq!(seen(&log), [call(CallEnding::Failure, ms(0))]);
    assert_eq!(b.snapshot().failures, 1);
}

#[test]
fn a_call_admitted_before_the_first_listener_is_not_told() {
    let (b, _clock) = on_manual_clock("it::call_events::before", Config::builder());
    let early = b.try_acquire().unwrap();
    let log = listen(&b);
    early.success();
    b.try_acquire().unwrap().success();
    assert_eq!(seen(&log), [call(CallEnding::Success, ms(0))]);
    assert_eq!(b.snapshot().totals.success, 2);
}

#[test]
fn a_shadow_breaker_tells_how_the_calls_it_lets_through_end() {
    let config = Config::builder().count_window(1).min_calls(1).shadow(true);
    let (b, clock) = on_manual_clock("it::call_events::shadow", config);
    let log = listen(&b);
    b.try_acquire().unwrap().failure();
    let through = b.try_acquire().expect("a shadow admits");
    clock.advance(Duration::from_millis(6));
    through.success();
    assert_eq!(
        seen(&log),
        [
            call(CallEnding::Failure, ms(0)),
            Seen::Moved(State::Closed, State::Open),
            call(CallEnding::Success, ms(6)),
        ]
    );
}

#[test]
fn a_listener_may_call_back_into_its_breaker() {
    let (b, _clock) = on_manual_clock("it::call_events::reentrant", Config::builder());
    let b = Arc::new(b);
    let inside = Arc::new(Mutex::new(Vec::new()));
    let (weak, log) = (Arc::downgrade(&b), inside.clone());
    b.on_call(move |_| {
        if let Some(b) = weak.upgrade() {
            log.lock().unwrap().push(b.snapshot().totals.failure);
        }
    });
    b.try_acquire().unwrap().failure();
    assert_eq!(*inside.lock().unwrap(), [1]);
}

#[tokio::test(start_paused = true)]
async fn each_attempt_of_a_retried_run_is_a_call_of_its_own() {
    let config = Config::builder()
        .retries(2)
        .retry_backoff(Duration::ZERO)
        .build()
        .unwrap();
    let b = Breaker::new("it::call_events::run", config);
    let log = listen(&b);
    let attempts = AtomicU32::new(0);
    let out = b
        .run(|| {
            let n = attempts.fetch_add(1, Ordering::Relaxed);
            async move {
                sleep(Duration::from_millis(10 * (u64::from(n) + 1))).await;
                match n {
                    0 | 1 => Err(io::Error::from(io::ErrorKind::ConnectionRefused)),
                    _ => Ok(n),
                }
            }
        })
        .await;
    assert_eq!(out.unwrap().unwrap(), 2);
    assert_eq!(
        seen(&log),
        [
            call(CallEnding::Failure, ms(10)),
            call(CallEnding::Failure, ms(20)),
            call(CallEnding::Success, ms(30)),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_attempt_is_a_failure_and_a_dropped_call_is_cancelled() {
    let config = Config::builder()
        .timeout(Duration::from_millis(800))
        .build()
        .unwrap();
    let b = Breaker::new("it::call_events::timeout", config);
    let log = listen(&b);
    let hung = b.run(std::future::pending::<Result<(), io::Error>>).await;
    assert!(hung.is_err());
    let dropped = tokio::time::timeout(
        Duration::from_millis(300),
        b.run(std::future::pending::<Result<(), io::Error>>),
    )
    .await;
    assert!(dropped.is_err());
    assert_eq!(
        seen(&log),
        [
            call(CallEnding::Failure, ms(800)),
            call(CallEnding::Cancelled, ms(300)),
        ]
    );
}

static ATTEMPTS: AtomicU32 = AtomicU32::new(0);

/// Attempt 1 warms the breaker up (it is made on the first call); 2 and 3 find the
/// downstream sick, 4 is interrupted, 5 finds no such book.
#[circuit_breaker(retries = 3, retry_backoff = "0s")]
async fn get_book(isbn: &str) -> Result<String, LibError> {
    let n = ATTEMPTS.fetch_add(1, Ordering::SeqCst) + 1;
    sleep(Duration::from_millis(u64::from(n))).await;
    match n {
        1 => Ok(isbn.to_owned()),
        2 | 3 => Err(LibError::Unavailable),
        4 => Err(LibError::Interrupted),
        _ => Err(LibError::NotFound),
    }
}

#[tokio::test(start_paused = true)]
async fn each_attempt_of_an_annotated_function_is_told() {
    get_book("978-0").await.unwrap();
    let b = registry()
        .get("it::call_events::get_book")
        .expect("made on the first call");
    let log = listen(&b);
    // Two failures retried; an ignored result is not retried.
    assert!(matches!(
        get_book("978-1").await,
        Err(LibError::Interrupted)
    ));
    assert!(matches!(get_book("978-2").await, Err(LibError::NotFound)));
    assert_eq!(
        seen(&log),
        [
            call(CallEnding::Failure, ms(2)),
            call(CallEnding::Failure, ms(3)),
            call(CallEnding::Ignored, ms(4)),
            call(CallEnding::Success, ms(5)),
        ]
    );
}
