//! `#[circuit_breaker]` on plain (blocking) functions: admission, classification, the
//! fallback, keyed families, registration at boot, per-call events, shadow mode, recording,
//! blocking retries within the budget, and a panic counted as a failure. Open periods on
//! tokio's paused clock, which drives every breaker here (`test-util`).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use breakerbox::recording::CallOutcome;
use breakerbox::{
    circuit_breaker, events::CallEnding, registry, Breaker, Classify, Outcome, RejectReason,
    Rejected, State,
};

#[derive(Debug, PartialEq)]
enum LibError {
    /// A business answer: the downstream is healthy.
    NotFound,
    /// The downstream is sick.
    Unavailable,
    /// The breaker did not let the call through.
    Rejected(RejectReason),
}

impl Classify for LibError {
    fn classify(&self) -> Outcome {
        match self {
            LibError::NotFound => Outcome::Success,
            LibError::Unavailable => Outcome::Failure,
            LibError::Rejected(_) => Outcome::Ignored,
        }
    }
}

impl From<Rejected> for LibError {
    fn from(rejected: Rejected) -> Self {
        LibError::Rejected(rejected.reason())
    }
}

fn breaker_of(name: &str) -> Arc<Breaker> {
    registry().get(name).expect("registered at boot")
}

fn answer(up: Option<bool>) -> Result<String, LibError> {
    match up {
        Some(true) => Ok("book".to_owned()),
        Some(false) => Err(LibError::Unavailable),
        None => Err(LibError::NotFound),
    }
}

#[circuit_breaker(window = 4, min = 4, rate = 0.5, open = "5s", probes = 1, fallback = shelved)]
fn get_book(isbn: &str, up: Option<bool>) -> Result<String, LibError> {
    let _ = isbn;
    answer(up)
}

fn shelved(isbn: &str, rejected: Rejected) -> Result<String, LibError> {
    Ok(format!("{isbn} from the shelf ({:?})", rejected.reason()))
}

#[tokio::test(start_paused = true)]
async fn a_plain_function_opens_falls_back_and_closes_by_its_probe() {
    let b = breaker_of("it::plain_functions::get_book");
    assert_eq!(get_book("1", None), Err(LibError::NotFound));
    assert_eq!(get_book("2", Some(true)).unwrap(), "book");
    assert_eq!(get_book("3", Some(false)), Err(LibError::Unavailable));
    assert_eq!(b.state(), State::Closed, "a business error is a success");
    assert_eq!(get_book("4", Some(false)), Err(LibError::Unavailable));
    assert_eq!(b.state(), State::Open, "2 failures of 4 completed calls");
    assert_eq!(
        get_book("5", Some(true)).unwrap(),
        "5 from the shelf (Open)"
    );
    tokio::time::advance(Duration::from_secs(5)).await;
    assert_eq!(get_book("6", Some(true)).unwrap(), "book");
    assert_eq!(b.state(), State::Closed);
    let t = b.snapshot().totals;
    assert_eq!((t.success, t.failure, t.rejected), (3, 2, 1));
}

#[circuit_breaker(key = host, window = 2, min = 2, rate = 0.5, open = "5s")]
fn fetch(host: &str, up: bool) -> Result<String, LibError> {
    answer(Some(up)).map(|book| format!("{book} from {host}"))
}

#[tokio::test(start_paused = true)]
async fn a_keyed_plain_function_opens_only_the_sick_keys_breaker() {
    for _ in 0..2 {
        assert_eq!(fetch("sick:80", false), Err(LibError::Unavailable));
        assert_eq!(fetch("well:80", true).unwrap(), "book from well:80");
    }
    assert_eq!(
        fetch("sick:80", true),
        Err(LibError::Rejected(RejectReason::Open))
    );
    assert_eq!(fetch("well:80", true).unwrap(), "book from well:80");
    let sick = registry()
        .get_keyed("it::plain_functions::fetch", "sick:80")
        .unwrap();
    assert_eq!(sick.state(), State::Open);
}

#[circuit_breaker(window = 4, min = 2, rate = 0.5)]
fn heard(up: bool) -> Result<String, LibError> {
    answer(Some(up))
}

#[tokio::test(start_paused = true)]
async fn a_plain_functions_breaker_is_registered_before_its_first_call_and_tells_each_call() {
    // Registered at boot: the listener is on before any call.
    let b = breaker_of("it::plain_functions::heard");
    assert_eq!(b.snapshot().calls, 0);
    let endings = Arc::new(Mutex::new(Vec::new()));
    let seen = endings.clone();
    b.on_call(move |e| seen.lock().unwrap().push(e.ending));
    assert_eq!(heard(true).unwrap(), "book");
    // 1 failure in 2 completed calls reaches the rate: the breaker opens.
    assert_eq!(heard(false), Err(LibError::Unavailable));
    assert_eq!(heard(true), Err(LibError::Rejected(RejectReason::Open)));
    assert_eq!(
        *endings.lock().unwrap(),
        [
            CallEnding::Success,
            CallEnding::Failure,
            CallEnding::Rejected(RejectReason::Open)
        ]
    );
}

#[circuit_breaker(window = 2, min = 2, rate = 0.5, shadow = true, record = 16)]
fn watched(up: bool) -> Result<String, LibError> {
    answer(Some(up))
}

#[tokio::test(start_paused = true)]
async fn a_shadow_plain_function_runs_every_call_and_records_them() {
    let b = breaker_of("it::plain_functions::watched");
    for _ in 0..2 {
        assert_eq!(watched(false), Err(LibError::Unavailable));
    }
    assert_eq!(b.state(), State::Open);
    // An enforcing breaker would have rejected this call: the shadow runs it anyway.
    assert_eq!(watched(true).unwrap(), "book");
    assert_eq!(b.snapshot().totals.shadow_rejected, 1);
    let outcomes: Vec<_> = b.recording().calls().iter().map(|c| c.outcome).collect();
    assert_eq!(
        outcomes,
        [
            CallOutcome::Completed(Outcome::Failure),
            CallOutcome::Completed(Outcome::Failure),
            CallOutcome::Completed(Outcome::Success),
        ]
    );
}

static ATTEMPTS: AtomicU32 = AtomicU32::new(0);

/// Fails its first `fail_first` attempts (counted in `ATTEMPTS`), then answers the attempt's
/// number.
fn attempt(fail_first: u32) -> Result<u32, LibError> {
    let n = ATTEMPTS.fetch_add(1, Ordering::SeqCst) + 1;
    if n <= fail_first {
        Err(LibError::Unavailable)
    } else {
        Ok(n)
    }
}

#[circuit_breaker(window = 20, min = 10, retries = 2, retry_backoff = "0s")]
fn retried(fail_first: u32) -> Result<u32, LibError> {
    attempt(fail_first)
}

#[circuit_breaker(
    window = 20,
    min = 10,
    retries = 2,
    retry_backoff = "0s",
    retry_floor = 0,
    retry_budget = 1.0
)]
fn budgeted(fail_first: u32) -> Result<u32, LibError> {
    attempt(fail_first)
}

#[tokio::test(start_paused = true)]
async fn a_plain_function_retries_failures_on_its_thread_within_the_budget() {
    // A failure, then a success: one retry. Failing for good: two retries, then the last
    // failure is returned.
    ATTEMPTS.store(0, Ordering::SeqCst);
    assert_eq!(retried(1), Ok(2));
    ATTEMPTS.store(0, Ordering::SeqCst);
    assert_eq!(retried(u32::MAX), Err(LibError::Unavailable));
    assert_eq!(ATTEMPTS.load(Ordering::SeqCst), 3);
    let t = breaker_of("it::plain_functions::retried").snapshot().totals;
    assert_eq!((t.retries, t.failure, t.success), (3, 4, 1));

    // A budget of one retry per first attempt and no floor: the first call spends its one,
    // the second call's first attempt adds one, which its first retry spends.
    ATTEMPTS.store(0, Ordering::SeqCst);
    assert_eq!(budgeted(1), Ok(2));
    ATTEMPTS.store(0, Ordering::SeqCst);
    assert_eq!(budgeted(u32::MAX), Err(LibError::Unavailable));
    assert_eq!(ATTEMPTS.load(Ordering::SeqCst), 2);
    let t = breaker_of("it::plain_functions::budgeted")
        .snapshot()
        .totals;
    assert_eq!((t.retries, t.retry_budget_exhausted), (2, 1));
}

#[circuit_breaker(window = 4, min = 2, rate = 0.5)]
fn panics(panic: bool) -> Result<String, LibError> {
    if panic {
        panic!("the downstream's client crashed");
    }
    answer(Some(true))
}

#[tokio::test(start_paused = true)]
async fn a_panic_in_a_plain_functions_body_is_a_failure_of_the_call() {
    let b = breaker_of("it::plain_functions::panics");
    assert_eq!(panics(false).unwrap(), "book");
    let caught = catch_unwind(AssertUnwindSafe(|| panics(true)));
    assert!(caught.is_err(), "the panic keeps unwinding");
    let t = b.snapshot().totals;
    assert_eq!((t.success, t.failure), (1, 1));
    assert_eq!(
        b.state(),
        State::Open,
        "1 failure in 2 calls reaches the rate"
    );
}
