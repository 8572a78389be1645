//! What an annotated call does: admission, fallback, recording, cancellation and panics.

use std::time::Duration;

use breakerbox::{circuit_breaker, registry, Classify, Outcome, RejectReason, Rejected, State};

#[derive(Debug, PartialEq)]
enum LibError {
    /// A business answer: the downstream is healthy.
    NotFound,
    /// The downstream is sick.
    Unavailable,
    /// The breaker did not let the call through.
    Rejected(String),
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
        LibError::Rejected(rejected.to_string())
    }
}

fn breaker_of(name: &str) -> std::sync::Arc<breakerbox::Breaker> {
    registry().get(name).expect("registered on first call")
}

#[circuit_breaker(window = 4, min = 4, rate = 0.5, open = "5s", probes = 1, fallback = degraded)]
async fn get_book(isbn: &str, fail: bool) -> Result<String, LibError> {
    if fail {
        Err(LibError::Unavailable)
    } else {
        Ok(format!("book {isbn}"))
    }
}

async fn degraded(isbn: &str, fail: bool, rejected: Rejected) -> Result<String, LibError> {
    Ok(format!(
        "cached {isbn} (fail: {fail}, {:?}, retry in {:?})",
        rejected.reason(),
        rejected.retry_after()
    ))
}

#[tokio::test(start_paused = true)]
async fn opens_after_threshold_and_routes_to_fallback_with_rejected() {
    assert_eq!(get_book("1", false).await.unwrap(), "book 1");
    assert_eq!(get_book("2", false).await.unwrap(), "book 2");
    assert_eq!(get_book("3", true).await, Err(LibError::Unavailable));
    let b = breaker_of("it::macro_calls::get_book");
    assert_eq!(b.state(), State::Closed);
    assert_eq!(get_book("4", true).await, Err(LibError::Unavailable));
    assert_eq!(b.state(), State::Open);

    let out = get_book("5", false).await.unwrap();
    assert_eq!(out, "cached 5 (fail: false, Open, retry in Some(5s))");
    tokio::time::advance(Duration::from_secs(5)).await;
    assert_eq!(get_book("6", false).await.unwrap(), "book 6");
    assert_eq!(b.state(), State::Closed);
}

#[circuit_breaker(window = 2, min = 2, rate = 1.0, open = "30s")]
async fn fetch(fail: bool) -> Result<u32, LibError> {
    if fail {
        Err(LibError::Unavailable)
    } else {
        Ok(7)
    }
}

#[tokio::test(start_paused = true)]
async fn without_fallback_a_rejected_call_returns_err_from_rejected() {
    assert_eq!(fetch(true).await, Err(LibError::Unavailable));
    assert_eq!(fetch(true).await, Err(LibError::Unavailable));
    assert_eq!(
        fetch(false).await,
        Err(LibError::Rejected(
            "circuit 'it::macro_calls::fetch' is open; retry in 30.0s".into()
        ))
    );
    assert_eq!(breaker_of("it::macro_calls::fetch").snapshot().rejected, 1);
}

fn lookup(id: u32) -> Result<u32, LibError> {
    match id {
        0 => Err(LibError::Unavailable),
        1 => Err(LibError::NotFound),
        n => Ok(n),
    }
}

#[circuit_breaker(window = 10, min = 10)]
async fn early_exits(id: u32) -> Result<u32, LibError> {
    if id == 99 {
        return Err(LibError::Unavailable);
    }
    let n = lookup(id)?;
    Ok(n * 2)
}

#[tokio::test(start_paused = true)]
async fn question_mark_and_return_in_the_body_still_record() {
    assert_eq!(early_exits(99).await, Err(LibError::Unavailable));
    assert_eq!(early_exits(0).await, Err(LibError::Unavailable));
    assert_eq!(early_exits(1).await, Err(LibError::NotFound));
    assert_eq!(early_exits(4).await, Ok(8));
    let s = breaker_of("it::macro_calls::early_exits").snapshot();
    assert_eq!((s.calls, s.failures), (4, 2));
}

#[circuit_breaker(window = 4, min = 2)]
async fn find(isbn: &str) -> Result<String, LibError> {
    let _ = isbn;
    Err(LibError::NotFound)
}

#[tokio::test(start_paused = true)]
async fn business_errors_never_open_the_breaker() {
    for _ in 0..20 {
        assert_eq!(find("0000").await, Err(LibError::NotFound));
    }
    let s = breaker_of("it::macro_calls::find").snapshot();
    assert_eq!((s.state, s.calls, s.failures), (State::Closed, 4, 0));
}

/// An HTTP-like status: only 5xx means the downstream is sick.
fn by_status(status: &u16) -> Outcome {
    if *status >= 500 {
        Outcome::Failure
    } else {
        Outcome::Success
    }
}

#[circuit_breaker(window = 4, min = 4, classify = by_status, fallback = status_fallback)]
async fn status(code: u16) -> u16 {
    code
}

async fn status_fallback(_code: u16, rejected: Rejected) -> u16 {
    assert_eq!(rejected.reason(), RejectReason::Open);
    503
}

#[tokio::test(start_paused = true)]
async fn classify_path_judges_instead_of_the_classify_impl() {
    for code in [404, 500, 200, 503] {
        assert_eq!(status(code).await, code);
    }
    let s = breaker_of("it::macro_calls::status").snapshot();
    assert_eq!((s.state, s.calls, s.failures), (State::Open, 4, 2));
    assert_eq!(status(200).await, 503, "rejected, answered by the fallback");
}

#[circuit_breaker(window = 1, min = 1, open = "1s", probes = 1)]
async fn hangs(fail: bool, hang: bool) -> Result<(), LibError> {
    if hang {
        std::future::pending::<()>().await;
    }
    if fail {
        Err(LibError::Unavailable)
    } else {
        Ok(())
    }
}

#[tokio::test(start_paused = true)]
async fn cancelled_call_frees_its_half_open_slot() {
    assert_eq!(hangs(true, false).await, Err(LibError::Unavailable));
    let b = breaker_of("it::macro_calls::hangs");
    assert_eq!(b.state(), State::Open);
    tokio::time::advance(Duration::from_secs(1)).await;

    let mut probe = Box::pin(hangs(false, true));
    tokio::select! {
        biased;
        _ = &mut probe => unreachable!("the probe hangs"),
        () = async {} => {}
    }
    assert_eq!(b.state(), State::HalfOpen);
    assert_eq!(b.probes_in_flight(), 1);
    let full = hangs(false, false).await.unwrap_err();
    assert!(matches!(&full, LibError::Rejected(m) if m.contains("half-open")));

    drop(probe);
    assert_eq!(b.probes_in_flight(), 0);
    assert_eq!(hangs(false, false).await, Ok(()));
    assert_eq!(b.state(), State::Closed);
}

#[circuit_breaker(window = 4, min = 4)]
async fn explodes() -> Result<(), LibError> {
    panic!("bug in the body")
}

#[tokio::test(start_paused = true)]
async fn panic_in_the_body_records_a_failure_and_keeps_unwinding() {
    let joined = tokio::spawn(explodes()).await;
    assert!(joined.unwrap_err().is_panic());
    let s = breaker_of("it::macro_calls::explodes").snapshot();
    assert_eq!((s.calls, s.failures), (1, 1));
}

#[circuit_breaker]
async fn send_body(n: u32) -> Result<u32, LibError> {
    tokio::task::yield_now().await;
    Ok(n + 1)
}

#[tokio::test(start_paused = true)]
async fn annotated_future_is_send_and_spawns() {
    fn assert_send<T: Send>(t: T) -> T {
        t
    }
    let handle = tokio::spawn(assert_send(send_body(41)));
    assert_eq!(handle.await.unwrap(), Ok(42));
}

#[circuit_breaker(window = 2, min = 2, rate = 1.0)]
async fn generic<T: Into<u64> + Send>(value: T, fail: bool) -> Result<u64, LibError> {
    if fail {
        Err(LibError::Unavailable)
    } else {
        Ok(value.into())
    }
}

#[tokio::test(start_paused = true)]
async fn a_generic_fn_has_one_breaker_for_all_type_parameters() {
    assert_eq!(generic(1u8, true).await, Err(LibError::Unavailable));
    assert_eq!(generic(2u32, true).await, Err(LibError::Unavailable));
    assert!(matches!(
        generic(3u16, false).await,
        Err(LibError::Rejected(_))
    ));
    assert_eq!(
        breaker_of("it::macro_calls::generic").snapshot().state,
        State::Open
    );
}

/// A fallback may take the function's leading arguments only, or none of them, then the
/// `Rejected`: it need not repeat what it does not use.
struct Shelf {
    name: &'static str,
}

impl Shelf {
    #[circuit_breaker(window = 2, min = 2, rate = 0.5, open = "5s", fallback = Self::closed)]
    async fn lend(&self, isbn: &str, copies: u32) -> Result<String, LibError> {
        let _ = (isbn, copies);
        Err(LibError::Unavailable)
    }

    async fn closed(&self, rejected: Rejected) -> Result<String, LibError> {
        Ok(format!("{} is closed ({:?})", self.name, rejected.reason()))
    }
}

#[circuit_breaker(window = 2, min = 2, rate = 0.5, open = "5s", fallback = by_isbn)]
async fn search_catalogue(isbn: &str, copies: u32) -> Result<String, LibError> {
    let _ = (isbn, copies);
    Err(LibError::Unavailable)
}

async fn by_isbn(isbn: &str, rejected: Rejected) -> Result<String, LibError> {
    Ok(format!("{isbn} from cache ({:?})", rejected.reason()))
}

#[circuit_breaker(window = 2, min = 2, rate = 0.5, open = "5s", fallback = nothing_taken)]
async fn count(isbn: &str, copies: u32) -> Result<String, LibError> {
    let _ = (isbn, copies);
    Err(LibError::Unavailable)
}

async fn nothing_taken(rejected: Rejected) -> Result<String, LibError> {
    Ok(format!("unknown ({:?})", rejected.reason()))
}

#[tokio::test(start_paused = true)]
async fn a_fallback_may_take_only_the_leading_arguments_or_none() {
    let shelf = Shelf { name: "east" };
    for _ in 0..2 {
        assert_eq!(shelf.lend("978-1", 2).await, Err(LibError::Unavailable));
        assert_eq!(
            search_catalogue("978-1", 2).await,
            Err(LibError::Unavailable)
        );
        assert_eq!(count("978-1", 2).await, Err(LibError::Unavailable));
    }
    assert_eq!(
        shelf.lend("978-1", 2).await.unwrap(),
        "east is closed (Open)"
    );
    assert_eq!(
        search_catalogue("978-2", 2).await.unwrap(),
        "978-2 from cache (Open)"
    );
    assert_eq!(count("978-3", 2).await.unwrap(), "unknown (Open)");
    assert_eq!(
        breaker_of("it::macro_calls::search_catalogue")
            .snapshot()
            .totals
            .rejected,
        1
    );
}
