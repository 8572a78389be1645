//! `#[circuit_breaker(fallback = ..., fallback_on = "failure")]`: the fallback answers every
//! call that ends in a rejection, a timeout or an error classified `Failure` (after the
//! retries), and gets the function's own error; a business error or an ignored one is
//! returned as it is. On tokio's paused clock.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use breakerbox::{
    circuit_breaker, policy::CallFailure, policy::TimedOut, registry, Breaker, Classify, Outcome,
    Rejected, State,
};
use tokio::time::{sleep, Instant};

#[derive(Debug, Clone, PartialEq)]
enum LibError {
    /// A business answer: the downstream is healthy.
    NotFound,
    /// Says nothing about the downstream.
    Cancelled,
    /// The downstream is sick; the attempt that saw it.
    Unavailable(u32),
    /// The breaker did not let the call through.
    Rejected(String),
    /// The attempt ran past the timeout.
    TimedOut(String),
}

impl Classify for LibError {
    fn classify(&self) -> Outcome {
        match self {
            LibError::NotFound => Outcome::Success,
            LibError::Cancelled => Outcome::Ignored,
            _ => Outcome::Failure,
        }
    }
}

impl From<Rejected> for LibError {
    fn from(rejected: Rejected) -> Self {
        LibError::Rejected(rejected.to_string())
    }
}

impl From<TimedOut> for LibError {
    fn from(timed_out: TimedOut) -> Self {
        LibError::TimedOut(timed_out.to_string())
    }
}

fn breaker_of(name: &str) -> Arc<Breaker> {
    registry().get(name).expect("registered on first call")
}

/// Counts calls: each test has its own function and counters.
struct Count(AtomicU32);

impl Count {
    const fn new() -> Self {
        Count(AtomicU32::new(0))
    }

    /// The call starting now, from 1.
    fn next(&self) -> u32 {
        self.0.fetch_add(1, Ordering::SeqCst) + 1
    }

    fn made(&self) -> u32 {
        self.0.load(Ordering::SeqCst)
    }
}

#[circuit_breaker(
    window = 4, min = 4, rate = 0.5, open = "5s",
    fallback = from_cache, fallback_on = "failure",
)]
async fn get_book(isbn: String, answer: Result<(), LibError>) -> Result<String, LibError> {
    answer.map(|()| format!("{isbn} from libraryd"))
}

async fn from_cache(
    isbn: String,
    answer: Result<(), LibError>,
    error: LibError,
) -> Result<String, LibError> {
    let _ = answer;
    Ok(format!("{isbn} from cache after {error:?}"))
}

#[tokio::test(start_paused = true)]
async fn failures_and_rejections_go_to_the_fallback_with_the_error_business_errors_do_not() {
    let isbn = || "978-1".to_owned();
    assert_eq!(
        get_book(isbn(), Ok(())).await.unwrap(),
        "978-1 from libraryd"
    );
    assert_eq!(
        get_book(isbn(), Err(LibError::NotFound)).await,
        Err(LibError::NotFound)
    );
    assert_eq!(
        get_book(isbn(), Err(LibError::Cancelled)).await,
        Err(LibError::Cancelled)
    );
    assert_eq!(
        get_book(isbn(), Err(LibError::Unavailable(1)))
            .await
            .unwrap(),
        "978-1 from cache after Unavailable(1)"
    );
    let b = breaker_of("it::fallback_on_failure::get_book");
    assert_eq!(b.state(), State::Closed);
    // The second failure of four completed calls opens the breaker.
    assert_eq!(
        get_book(isbn(), Err(LibError::Unavailable(2)))
            .await
            .unwrap(),
        "978-1 from cache after Unavailable(2)"
    );
    assert_eq!(b.state(), State::Open);
    // Rejected: the body does not run, and the fallback gets the rejection as a `LibError`.
    assert_eq!(
        get_book(isbn(), Ok(())).await.unwrap(),
        "978-1 from cache after Rejected(\"circuit 'it::fallback_on_failure::get_book' is open; retry in 5.0s\")"
    );
    // The fallback changes nothing the breaker counts.
    let t = b.snapshot().totals;
    assert_eq!((t.success, t.failure, t.ignored, t.rejected), (2, 2, 1, 1));
}

struct Library {
    shelf: &'static str,
}

impl Library {
    #[circuit_breaker(fallback = Self::shelved, fallback_on = "failure")]
    async fn get(&self, isbn: &str, fail: bool) -> Result<String, LibError> {
        if fail {
            Err(LibError::Unavailable(1))
        } else {
            Ok(format!("{isbn} from libraryd"))
        }
    }

    async fn shelved(&self, isbn: &str, fail: bool, error: LibError) -> Result<String, LibError> {
        assert!(fail);
        Ok(format!("{isbn} from {} after {error:?}", self.shelf))
    }
}

#[tokio::test(start_paused = true)]
async fn a_method_falls_back_to_a_method_with_self_and_the_error() {
    let library = Library { shelf: "shelf 3" };
    assert_eq!(
        library.get("978-2", false).await.unwrap(),
        "978-2 from libraryd"
    );
    assert_eq!(
        library.get("978-2", true).await.unwrap(),
        "978-2 from shelf 3 after Unavailable(1)"
    );
    let t = breaker_of("it::fallback_on_failure::Library::get")
        .snapshot()
        .totals;
    assert_eq!((t.success, t.failure), (1, 1));
}

#[circuit_breaker(
    key = host, window = 2, min = 2, rate = 1.0,
    fallback = fetch_elsewhere, fallback_on = "failure",
)]
async fn fetch(host: &str, fail: bool) -> Result<String, LibError> {
    if fail {
        Err(LibError::Unavailable(0))
    } else {
        Ok(format!("{host}: fresh"))
    }
}

async fn fetch_elsewhere(host: &str, fail: bool, error: LibError) -> Result<String, LibError> {
    let _ = fail;
    Ok(match error {
        LibError::Rejected(_) => format!("{host}: rejected"),
        other => format!("{host}: {other:?}"),
    })
}

#[tokio::test(start_paused = true)]
async fn a_keyed_function_falls_back_on_the_failures_of_its_key_only() {
    assert_eq!(fetch("a", true).await.unwrap(), "a: Unavailable(0)");
    assert_eq!(fetch("a", true).await.unwrap(), "a: Unavailable(0)");
    // Two failures of two: the breaker of `a` is open, and rejects into the fallback.
    assert_eq!(fetch("a", false).await.unwrap(), "a: rejected");
    assert_eq!(fetch("b", false).await.unwrap(), "b: fresh");
    let state = |key| {
        registry()
            .get_keyed("it::fallback_on_failure::fetch", key)
            .expect("made on its first call")
            .state()
    };
    assert_eq!((state("a"), state("b")), (State::Open, State::Closed));
}

static ATTEMPTS: Count = Count::new();
static FALLBACKS: Count = Count::new();

/// Fails its first `failures` attempts (counted across calls), each after `delay_ms`.
#[circuit_breaker(
    window = 100, min = 100, timeout = "800ms", retries = 2, retry_backoff = "0s",
    fallback = lookup_cached, fallback_on = "failure",
)]
async fn lookup(failures: u32, delay_ms: u64, error: LibError) -> Result<u32, LibError> {
    let n = ATTEMPTS.next();
    sleep(Duration::from_millis(delay_ms)).await;
    if n <= failures {
        Err(error)
    } else {
        Ok(n)
    }
}

async fn lookup_cached(
    failures: u32,
    delay_ms: u64,
    error: LibError,
    last: LibError,
) -> Result<u32, LibError> {
    let _ = (failures, delay_ms, error);
    FALLBACKS.next();
    Err(last)
}

#[tokio::test(start_paused = true)]
async fn with_retries_and_a_timeout_the_fallback_answers_only_what_the_retries_did_not() {
    let unavailable = LibError::Unavailable(0);
    // A failure the retry cures: no fallback.
    assert_eq!(lookup(1, 0, unavailable.clone()).await, Ok(2));
    assert_eq!((ATTEMPTS.made(), FALLBACKS.made()), (2, 0));
    // Every attempt fails: the fallback gets the last attempt's error, once.
    assert_eq!(
        lookup(5, 0, unavailable.clone()).await,
        Err(LibError::Unavailable(0))
    );
    assert_eq!((ATTEMPTS.made(), FALLBACKS.made()), (5, 1));
    // Every attempt times out: the fallback gets the timeout as a `LibError`, once.
    let start = Instant::now();
    assert_eq!(
        lookup(100, 5000, unavailable).await,
        Err(LibError::TimedOut(
            "call to 'it::fallback_on_failure::lookup' timed out after 800ms".to_owned()
        ))
    );
    assert_eq!(start.elapsed(), Duration::from_millis(3 * 800));
    assert_eq!((ATTEMPTS.made(), FALLBACKS.made()), (8, 2));
    // A business error is not retried and goes back as it is.
    assert_eq!(
        lookup(100, 0, LibError::NotFound).await,
        Err(LibError::NotFound)
    );
    assert_eq!((ATTEMPTS.made(), FALLBACKS.made()), (9, 2));
    let t = breaker_of("it::fallback_on_failure::lookup")
        .snapshot()
        .totals;
    assert_eq!((t.success, t.failure, t.retries), (2, 7, 5));
}

/// The integration a user reaches for first: an HTTP call returning `reqwest::Error`, which no
/// user can give a `From<Rejected>` or `From<TimedOut>`. The fallback takes a `CallFailure`.
#[circuit_breaker(
    window = 4, min = 2, rate = 0.5, open = "5s",
    timeout = "1s", fallback = cached, fallback_on = "failure",
)]
async fn get_page(delay_ms: u64) -> Result<String, reqwest::Error> {
    sleep(Duration::from_millis(delay_ms)).await;
    Ok("fresh".to_owned())
}

async fn cached(failure: CallFailure<reqwest::Error>) -> Result<String, reqwest::Error> {
    Ok(match failure {
        CallFailure::Rejected(r) => format!("cached: {r}"),
        CallFailure::TimedOut(t) => format!("cached: {t}"),
        CallFailure::Error(e) => format!("cached: {e}"),
    })
}

#[tokio::test(start_paused = true)]
async fn a_fallback_taking_a_call_failure_answers_timeouts_and_rejections_of_a_foreign_error() {
    assert_eq!(get_page(10).await.unwrap(), "fresh");
    let start = Instant::now();
    assert_eq!(
        get_page(5_000).await.unwrap(),
        "cached: call to 'it::fallback_on_failure::get_page' timed out after 1s"
    );
    assert_eq!(start.elapsed(), Duration::from_secs(1));
    // One timeout in two completed calls reaches the rate: the breaker opened.
    let b = breaker_of("it::fallback_on_failure::get_page");
    assert_eq!(b.state(), State::Open);
    assert_eq!(
        get_page(10).await.unwrap(),
        "cached: circuit 'it::fallback_on_failure::get_page' is open; retry in 5.0s"
    );
    let t = b.snapshot().totals;
    assert_eq!((t.success, t.failure, t.rejected), (1, 1, 1));
}
