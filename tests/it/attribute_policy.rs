//! `#[circuit_breaker]` with `timeout` and `retries`: what an annotated call does, attempt by
//! attempt, on tokio's paused clock.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use breakerbox::{
    circuit_breaker, policy::TimedOut, registry, Breaker, Classify, Outcome, RejectReason,
    Rejected, State,
};
use tokio::time::{sleep, Instant};

#[derive(Debug, PartialEq)]
enum LibError {
    /// A business answer: the downstream is healthy.
    NotFound,
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

/// Counts a function's attempts: each test has its own function and counter.
struct Attempts(AtomicU32);

impl Attempts {
    const fn new() -> Self {
        Attempts(AtomicU32::new(0))
    }

    /// The attempt starting now, from 1.
    fn next(&self) -> u32 {
        self.0.fetch_add(1, Ordering::SeqCst) + 1
    }

    fn made(&self) -> u32 {
        self.0.load(Ordering::SeqCst)
    }
}

static BLIP: Attempts = Attempts::new();

#[circuit_breaker(retries = 2)]
async fn get_book(isbn: &str) -> Result<String, LibError> {
    let n = BLIP.next();
    if n == 1 {
        Err(LibError::Unavailable(n))
    } else {
        Ok(format!("{isbn} on attempt {n}"))
    }
}

#[tokio::test(start_paused = true)]
async fn a_retried_function_rescues_a_blip_with_a_second_attempt() {
    let start = Instant::now();
    assert_eq!(get_book("978-1").await.unwrap(), "978-1 on attempt 2");
    assert_eq!(BLIP.made(), 2);
    // The one wait before the retry is drawn from [0, 20ms], the default base.
    assert!(
        start.elapsed() <= Duration::from_millis(20),
        "{:?}",
        start.elapsed()
    );
    let t = breaker_of("it::attribute_policy::get_book")
        .snapshot()
        .totals;
    assert_eq!((t.failure, t.success, t.retries), (1, 1, 1));
}

static DOWN: Attempts = Attempts::new();

#[circuit_breaker(retries = 2, retry_backoff = "0s")]
async fn get_cover(isbn: &str) -> Result<String, LibError> {
    let n = DOWN.next();
    let _ = isbn;
    Err(LibError::Unavailable(n))
}

#[tokio::test(start_paused = true)]
async fn retries_stop_at_retries_and_the_caller_gets_the_last_failure() {
    assert_eq!(get_cover("978-1").await, Err(LibError::Unavailable(3)));
    assert_eq!(DOWN.made(), 3);
    let t = breaker_of("it::attribute_policy::get_cover")
        .snapshot()
        .totals;
    assert_eq!((t.failure, t.success, t.retries), (3, 0, 2));
}

static MISSING: Attempts = Attempts::new();

#[circuit_breaker(retries = 3)]
async fn find_book(isbn: &str) -> Result<String, LibError> {
    MISSING.next();
    let _ = isbn;
    Err(LibError::NotFound)
}

#[tokio::test(start_paused = true)]
async fn a_business_error_is_an_answer_and_never_retried() {
    assert_eq!(find_book("978-0").await, Err(LibError::NotFound));
    assert_eq!(MISSING.made(), 1);
    let t = breaker_of("it::attribute_policy::find_book")
        .snapshot()
        .totals;
    assert_eq!((t.success, t.failure, t.retries), (1, 0, 0));
}

static STATUSES: Attempts = Attempts::new();

fn server_errors(result: &Result<u16, LibError>) -> Outcome {
    match result {
        Ok(status) if *status >= 500 => Outcome::Failure,
        Ok(_) => Outcome::Success,
        Err(e) => e.classify(),
    }
}

#[circuit_breaker(retries = 2, classify = server_errors)]
async fn status_of(path: &str) -> Result<u16, LibError> {
    let _ = path;
    match STATUSES.next() {
        1 => Ok(503),
        _ => Ok(404),
    }
}

#[tokio::test(start_paused = true)]
async fn a_classify_path_decides_what_is_retried() {
    // 503 is a failure by `server_errors`, retried; 404 an answer, returned.
    assert_eq!(status_of("/books/1").await, Ok(404));
    assert_eq!(STATUSES.made(), 2);
    let t = breaker_of("it::attribute_policy::status_of")
        .snapshot()
        .totals;
    assert_eq!((t.failure, t.success, t.retries), (1, 1, 1));
}

struct Library {
    base: String,
    attempts: Attempts,
}

impl Library {
    #[circuit_breaker(retries = 1)]
    async fn lookup(&self, isbn: &str) -> Result<String, LibError> {
        let n = self.attempts.next();
        if n == 1 {
            return Err(LibError::Unavailable(n));
        }
        Ok(format!("{}/books/{isbn}", self.base))
    }
}

#[tokio::test(start_paused = true)]
async fn a_method_with_shared_self_retries_on_the_same_receiver() {
    let library = Library {
        base: "http://libraryd".to_owned(),
        attempts: Attempts::new(),
    };
    assert_eq!(
        library.lookup("978-1").await.unwrap(),
        "http://libraryd/books/978-1"
    );
    assert_eq!(library.attempts.made(), 2);
    let t = breaker_of("it::attribute_policy::Library::lookup")
        .snapshot()
        .totals;
    assert_eq!((t.failure, t.success, t.retries), (1, 1, 1));
}

/// A request that counts its clones.
#[derive(Debug)]
struct Request {
    body: String,
    clones: Arc<AtomicU32>,
}

impl Clone for Request {
    fn clone(&self) -> Self {
        self.clones.fetch_add(1, Ordering::SeqCst);
        Request {
            body: self.body.clone(),
            clones: Arc::clone(&self.clones),
        }
    }
}

static SENT: Attempts = Attempts::new();

#[circuit_breaker(retries = 2, retry_backoff = "0s")]
async fn send(mut request: Request, seen: &Mutex<Vec<String>>) -> Result<(), LibError> {
    // Each attempt changes its own copy: the next one starts from the caller's request.
    request.body.push('!');
    seen.lock().unwrap().push(request.body);
    Err(LibError::Unavailable(SENT.next()))
}

#[tokio::test(start_paused = true)]
async fn each_attempt_gets_its_own_clone_of_an_owned_argument() {
    let clones = Arc::new(AtomicU32::new(0));
    let request = Request {
        body: "PUT".to_owned(),
        clones: Arc::clone(&clones),
    };
    let seen = Mutex::new(Vec::new());
    assert_eq!(send(request, &seen).await, Err(LibError::Unavailable(3)));
    assert_eq!(clones.load(Ordering::SeqCst), 3);
    assert_eq!(*seen.lock().unwrap(), ["PUT!", "PUT!", "PUT!"]);
}

#[circuit_breaker(timeout = "800ms")]
async fn slow_lookup(delay_ms: u64) -> Result<u64, LibError> {
    sleep(Duration::from_millis(delay_ms)).await;
    Ok(delay_ms)
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_attempt_is_a_failure_and_its_caller_gets_timed_out() {
    let start = Instant::now();
    assert_eq!(
        slow_lookup(5000).await,
        Err(LibError::TimedOut(
            "call to 'it::attribute_policy::slow_lookup' timed out after 800ms".to_owned()
        ))
    );
    assert_eq!(start.elapsed(), Duration::from_millis(800));
    assert_eq!(slow_lookup(100).await, Ok(100));
    let t = breaker_of("it::attribute_policy::slow_lookup")
        .snapshot()
        .totals;
    assert_eq!((t.failure, t.cancelled, t.success), (1, 0, 1));
}

static STOCK: Attempts = Attempts::new();

#[circuit_breaker(
    window = 2, min = 2, rate = 0.5, open = "5s",
    retries = 2, retry_backoff = "0s", fallback = cached_stock,
)]
async fn get_stock(sku: u32) -> Result<u32, LibError> {
    let _ = sku;
    Err(LibError::Unavailable(STOCK.next()))
}

async fn cached_stock(sku: u32, rejected: Rejected) -> Result<u32, LibError> {
    assert_eq!(rejected.reason(), RejectReason::Open);
    Ok(sku + 1000)
}

#[tokio::test(start_paused = true)]
async fn a_retry_the_opened_breaker_rejects_goes_to_the_fallback() {
    // Two failed attempts open the breaker; the second retry is rejected, not made.
    assert_eq!(get_stock(7).await, Ok(1007));
    assert_eq!(STOCK.made(), 2);
    let b = breaker_of("it::attribute_policy::get_stock");
    assert_eq!(b.state(), State::Open);
    let t = b.snapshot().totals;
    assert_eq!((t.failure, t.rejected, t.retries), (2, 1, 1));
    // Open: the next call is rejected before any attempt.
    assert_eq!(get_stock(8).await, Ok(1008));
    assert_eq!(STOCK.made(), 2);
    let t = b.snapshot().totals;
    assert_eq!((t.failure, t.rejected, t.retries), (2, 2, 1));
}

static FETCHED: Attempts = Attempts::new();

#[circuit_breaker(key = host, retries = 1)]
async fn fetch(host: &str, path: &str) -> Result<String, LibError> {
    if host == "a" && FETCHED.next() == 1 {
        return Err(LibError::Unavailable(1));
    }
    Ok(format!("{host}{path}"))
}

#[tokio::test(start_paused = true)]
async fn a_keyed_retried_function_retries_on_the_breaker_of_its_key() {
    assert_eq!(fetch("a", "/1").await.unwrap(), "a/1");
    assert_eq!(fetch("b", "/2").await.unwrap(), "b/2");
    let totals = |key| {
        registry()
            .get_keyed("it::attribute_policy::fetch", key)
            .expect("made on the key's first call")
            .snapshot()
            .totals
    };
    let (a, b) = (totals("a"), totals("b"));
    assert_eq!((a.failure, a.success, a.retries), (1, 1, 1));
    assert_eq!((b.failure, b.success, b.retries), (0, 1, 0));
}

#[circuit_breaker(
    name = "it::attribute_policy::capped",
    retries = 4,
    retry_backoff = "1s",
    retry_backoff_max = "1500ms"
)]
async fn capped(calls: &AtomicU32) -> Result<u32, LibError> {
    Err(LibError::Unavailable(calls.fetch_add(1, Ordering::SeqCst)))
}

#[tokio::test(start_paused = true)]
async fn retry_backoff_max_caps_each_wait() {
    let calls = AtomicU32::new(0);
    let start = Instant::now();
    // At most 1 s, then 1.5 s thrice, before retries 1 to 4: never the 2, 4 and 8 s of the
    // doubling.
    let out = capped(&calls).await;
    assert_eq!(out, Err(LibError::Unavailable(4)));
    assert!(
        start.elapsed() <= Duration::from_millis(5500),
        "{:?}",
        start.elapsed()
    );
    let policy = breaker_of("it::attribute_policy::capped").config().policy();
    assert_eq!(policy.retry_backoff_max(), Duration::from_millis(1500));
}

#[circuit_breaker(
    name = "it::attribute_policy::floorless",
    retries = 2,
    retry_budget = 0.0,
    retry_floor = 0
)]
async fn floorless(calls: &AtomicU32) -> Result<u32, LibError> {
    Err(LibError::Unavailable(calls.fetch_add(1, Ordering::SeqCst)))
}

#[tokio::test(start_paused = true)]
async fn retry_floor_sets_the_retries_a_quiet_breaker_may_make() {
    let calls = AtomicU32::new(0);
    // No floor and no budget: the default floor's 10 retries a second are gone.
    assert_eq!(floorless(&calls).await, Err(LibError::Unavailable(0)));
    let b = breaker_of("it::attribute_policy::floorless");
    assert_eq!(b.config().policy().retry_floor(), 0);
    let t = b.snapshot().totals;
    assert_eq!((t.retries, t.retry_budget_exhausted), (0, 1));
}

#[circuit_breaker(
    name = "it::attribute_policy::shadow_timed",
    window = 2,
    min = 2,
    timeout = "1s",
    max_concurrent = 1,
    shadow = true
)]
async fn shadow_timed(delay_ms: u64, fail: bool) -> Result<u32, LibError> {
    sleep(Duration::from_millis(delay_ms)).await;
    if fail {
        Err(LibError::Unavailable(0))
    } else {
        Ok(1)
    }
}

#[tokio::test(start_paused = true)]
async fn a_shadow_with_a_timeout_runs_a_call_its_bulkhead_would_reject_without_counting_it() {
    let second = async {
        sleep(Duration::from_millis(5)).await;
        shadow_timed(0, true).await
    };
    let (first, second) = tokio::join!(shadow_timed(10, false), second);
    assert_eq!(first, Ok(1));
    assert_eq!(
        second,
        Err(LibError::Unavailable(0)),
        "admitted as a shadow"
    );
    let b = breaker_of("it::attribute_policy::shadow_timed");
    let s = b.snapshot();
    // An enforcing breaker rejected the second call: only the first is in the window.
    assert_eq!((s.state, s.calls, s.failures), (State::Closed, 1, 0));
    let t = s.totals;
    assert_eq!((t.shadow_rejected, t.success, t.failure), (1, 1, 1));
    assert_eq!(b.in_flight(), 0);
}
