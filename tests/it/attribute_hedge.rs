//! `#[circuit_breaker(hedge = ...)]`: an annotated call hedged on tokio's paused clock.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use breakerbox::{circuit_breaker, registry, Classify, Outcome, Rejected};
use tokio::time::{sleep, Instant};

/// The downstream never fails here; the breaker may still reject.
#[derive(Debug, PartialEq)]
enum ShelfError {
    Rejected,
}

impl Classify for ShelfError {
    fn classify(&self) -> Outcome {
        Outcome::Failure
    }
}

impl From<Rejected> for ShelfError {
    fn from(_: Rejected) -> Self {
        ShelfError::Rejected
    }
}

/// Attempts of `shelf` so far; the first hangs 100 ms, the second answers in 10.
static ATTEMPTS: AtomicU32 = AtomicU32::new(0);

#[circuit_breaker(name = "hedge::shelf", hedge = "30ms", hedges = 1)]
async fn shelf(isbn: &str) -> Result<String, ShelfError> {
    let n = ATTEMPTS.fetch_add(1, Ordering::SeqCst);
    sleep(Duration::from_millis(if n == 0 { 100 } else { 10 })).await;
    Ok(format!("{isbn} from attempt {n}"))
}

#[tokio::test(start_paused = true)]
async fn an_annotated_call_is_hedged_and_its_first_answer_wins() {
    let started = Instant::now();
    assert_eq!(shelf("978-1").await.unwrap(), "978-1 from attempt 1");
    assert_eq!(started.elapsed(), Duration::from_millis(40));
    assert_eq!(ATTEMPTS.load(Ordering::SeqCst), 2);
    let totals = registry().get("hedge::shelf").unwrap().snapshot().totals;
    assert_eq!(
        (
            totals.success,
            totals.cancelled,
            totals.failure,
            totals.retries
        ),
        (1, 1, 0, 1)
    );
}
