//! `#[circuit_breaker]` honours the pushback of its function's output: `pushback_max` caps
//! it, and with `retries` the call policy waits it out or gives up.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use breakerbox::{circuit_breaker, registry, Classify, Outcome, Rejected, State};

#[derive(Debug)]
enum StockError {
    /// The stock service sheds load and says for how long.
    Overloaded(Duration),
    Rejected,
}

impl Classify for StockError {
    fn classify(&self) -> Outcome {
        match self {
            StockError::Overloaded(_) => Outcome::Failure,
            StockError::Rejected => Outcome::Ignored,
        }
    }

    fn pushback(&self) -> Option<Duration> {
        match self {
            StockError::Overloaded(after) => Some(*after),
            StockError::Rejected => None,
        }
    }
}

impl From<Rejected> for StockError {
    fn from(_: Rejected) -> Self {
        StockError::Rejected
    }
}

#[circuit_breaker(name = "pushback::capped", pushback_max = "10s")]
async fn capped() -> Result<u32, StockError> {
    Err(StockError::Overloaded(Duration::from_secs(3600)))
}

#[tokio::test(start_paused = true)]
async fn the_attribute_opens_for_the_pushback_capped_by_pushback_max() {
    assert!(matches!(capped().await, Err(StockError::Overloaded(_))));
    let b = registry().get("pushback::capped").unwrap();
    assert_eq!(b.config().pushback_max(), Duration::from_secs(10));
    assert_eq!(b.state(), State::Open);
    let rejected = b.try_acquire().unwrap_err();
    assert_eq!(rejected.retry_after(), Some(Duration::from_secs(10)));
}

static ATTEMPTS: AtomicU32 = AtomicU32::new(0);

#[circuit_breaker(
    name = "pushback::retried",
    probes = 1,
    retries = 2,
    retry_backoff = "1s"
)]
async fn retried() -> Result<u32, StockError> {
    match ATTEMPTS.fetch_add(1, Ordering::SeqCst) {
        0 => Err(StockError::Overloaded(Duration::from_millis(700))),
        _ => Ok(12),
    }
}

#[tokio::test(start_paused = true)]
async fn the_attributes_call_policy_retries_no_sooner_than_the_pushback() {
    let started = tokio::time::Instant::now();
    assert_eq!(retried().await.unwrap(), 12);
    assert!(
        started.elapsed() >= Duration::from_millis(700),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(ATTEMPTS.load(Ordering::SeqCst), 2);
    let b = registry().get("pushback::retried").unwrap();
    assert_eq!(b.snapshot().totals.retries, 1);
}

/// The fallback of a failed call: the pushback it was given, in seconds; 0 for a rejection.
async fn from_shelf(error: StockError) -> Result<u32, StockError> {
    Ok(match error {
        StockError::Overloaded(after) => after.as_secs() as u32,
        StockError::Rejected => 0,
    })
}

#[circuit_breaker(
    name = "pushback::fallback",
    fallback = from_shelf,
    fallback_on = "failure"
)]
async fn with_fallback() -> Result<u32, StockError> {
    Err(StockError::Overloaded(Duration::from_secs(30)))
}

#[circuit_breaker(
    name = "pushback::fallback_retried",
    retries = 1,
    fallback = from_shelf,
    fallback_on = "failure"
)]
async fn with_fallback_retried() -> Result<u32, StockError> {
    Err(StockError::Overloaded(Duration::from_secs(30)))
}

#[tokio::test(start_paused = true)]
async fn a_failure_handed_to_the_fallback_still_opens_the_breaker_for_its_pushback() {
    // The fallback gets the error; the breaker, the pushback it carries.
    assert_eq!(with_fallback().await.unwrap(), 30);
    let b = registry().get("pushback::fallback").unwrap();
    assert_eq!(b.state(), State::Open);
    let rejected = b.try_acquire().unwrap_err();
    assert_eq!(rejected.retry_after(), Some(Duration::from_secs(30)));
    assert_eq!(
        with_fallback().await.unwrap(),
        0,
        "rejected: to the fallback"
    );

    // With retries, the call policy gives up on a pushback longer than its backoff.
    assert_eq!(with_fallback_retried().await.unwrap(), 30);
    let b = registry().get("pushback::fallback_retried").unwrap();
    assert_eq!(b.state(), State::Open);
    let rejected = b.try_acquire().unwrap_err();
    assert_eq!(rejected.retry_after(), Some(Duration::from_secs(30)));
    assert_eq!(b.snapshot().totals.retries, 0);
}
