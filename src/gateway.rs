//! A gateway in front of a flaky upstream, on real HTTP: the code behind
//! `examples/http_gateway.rs` and `tests/http_gateway.rs`.
//!
//! - The upstream is an axum service on 127.0.0.1 serving `GET /book/{isbn}`, with a fault
//!   switch (`POST /fault/healthy|erroring|slow`) and a count of the requests it served.
//! - The gateway is an axum service too. It serves `GET /book/{isbn}` by asking the upstream
//!   with reqwest through [`get_book`], which one breaker per upstream address guards, with a
//!   cached answer as the fallback; and `GET /metrics`, every breaker in Prometheus text.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::Router;
use breakerbox::{
    circuit_breaker, config::ConfigBuilder, snapshot::CallTotals, Breaker, CallError, Classify,
    Config, Outcome, Rejected,
};

/// The registry name of the breakers of [`get_book`], one per upstream address.
pub const BREAKER: &str = "gateway::get_book";

/// How long the gateway waits for the upstream; a slow upstream answers later.
pub const UPSTREAM_TIMEOUT: Duration = Duration::from_millis(300);

/// How slow the upstream is when [`Fault::Slow`].
const SLOW_ANSWER: Duration = Duration::from_secs(2);

/// What the upstream does with a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Answers 200 with the book.
    Healthy,
    /// Answers 503 Service Unavailable.
    Erroring,
    /// Answers 200, but only after the gateway's timeout.
    Slow,
}

impl Fault {
    fn from_code(code: u8) -> Fault {
        match code {
            1 => Fault::Erroring,
            2 => Fault::Slow,
            _ => Fault::Healthy,
        }
    }

    /// The name used in the upstream's `/fault/{name}` path.
    pub fn as_str(self) -> &'static str {
        match self {
            Fault::Healthy => "healthy",
            Fault::Erroring => "erroring",
            Fault::Slow => "slow",
        }
    }
}

#[derive(Default)]
struct UpstreamState {
    fault: AtomicU8,
    hits: AtomicU64,
}

/// The upstream service, running on 127.0.0.1.
pub struct Upstream {
    addr: SocketAddr,
    state: Arc<UpstreamState>,
}

impl Upstream {
    /// Starts the upstream on a free port of 127.0.0.1, healthy.
    pub async fn start() -> std::io::Result<Upstream> {
        let state = Arc::new(UpstreamState::default());
        let app = Router::new()
            .route("/book/{isbn}", get(serve_book))
            .route("/fault/{fault}", post(set_fault))
            .with_state(state.clone());
        let addr = serve(app).await?;
        Ok(Upstream { addr, state })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Book requests it has received, answered or not.
    pub fn hits(&self) -> u64 {
        self.state.hits.load(Ordering::SeqCst)
    }
}

async fn serve_book(
    State(state): State<Arc<UpstreamState>>,
    Path(isbn): Path<String>,
) -> (StatusCode, String) {
    state.hits.fetch_add(1, Ordering::SeqCst);
    match Fault::from_code(state.fault.load(Ordering::SeqCst)) {
        Fault::Healthy => (StatusCode::OK, format!("book {isbn}")),
        Fault::Erroring => (StatusCode::SERVICE_UNAVAILABLE, "restarting".to_owned()),
        Fault::Slow => {
            tokio::time::sleep(SLOW_ANSWER).await;
            (StatusCode::OK, format!("book {isbn}, late"))
        }
    }
}

async fn set_fault(
    State(state): State<Arc<UpstreamState>>,
    Path(fault): Path<String>,
) -> StatusCode {
    let code = match fault.as_str() {
        "healthy" => 0,
        "erroring" => 1,
        "slow" => 2,
        _ => return StatusCode::NOT_FOUND,
    };
    state.fault.store(code, Ordering::SeqCst);
    StatusCode::NO_CONTENT
}

/// Serves `app` on a free port of 127.0.0.1, in the background.
async fn serve(app: Router) -> std::io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(addr)
}

/// Asks the upstream at `upstream` for a book. One breaker per upstream address: opens when
/// half of the last 4 calls failed, stays open 2s, then lets one probe through.
///
/// It returns `reqwest::Error` as it is: reqwest judges it (timeouts, refused connections
/// and 5xx are failures, a 404 an answer), and the fallback answers a rejected call, since
/// no `reqwest::Error` can be made from a rejection.
#[circuit_breaker(
    name = "gateway::get_book",
    key = upstream,
    window = 4,
    min = 4,
    rate = 0.5,
    open = "2s",
    probes = 1,
    fallback = cached_book
)]
pub async fn get_book(
    client: &reqwest::Client,
    upstream: SocketAddr,
    isbn: &str,
) -> Result<String, reqwest::Error> {
    let url = format!("http://{upstream}/book/{isbn}");
    let response = client.get(url).timeout(UPSTREAM_TIMEOUT).send().await?;
    response.error_for_status()?.text().await
}

/// The fallback while the breaker is open: an answer without asking the upstream.
async fn cached_book(
    _client: &reqwest::Client,
    _upstream: SocketAddr,
    isbn: &str,
    rejected: Rejected,
) -> Result<String, reqwest::Error> {
    Ok(format!("cached book {isbn} ({rejected})"))
}

#[derive(Clone)]
struct GatewayState {
    client: reqwest::Client,
    upstream: SocketAddr,
    metrics: Arc<prometheus_client::registry::Registry>,
}

/// The gateway, running on 127.0.0.1.
pub struct Gateway {
    addr: SocketAddr,
}

impl Gateway {
    /// Starts the gateway in front of the upstream at `upstream`, on a free port of
    /// 127.0.0.1.
    pub async fn start(upstream: SocketAddr) -> std::io::Result<Gateway> {
        // Registered first, so that every transition from now on is counted.
        let mut metrics = prometheus_client::registry::Registry::default();
        breakerbox::metrics::register(&mut metrics);
        let state = GatewayState {
            client: reqwest::Client::new(),
            upstream,
            metrics: Arc::new(metrics),
        };
        let app = Router::new()
            .route("/book/{isbn}", get(proxy_book))
            .route("/metrics", get(serve_metrics))
            .with_state(state);
        let addr = serve(app).await?;
        Ok(Gateway { addr })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

async fn proxy_book(
    State(state): State<GatewayState>,
    Path(isbn): Path<String>,
) -> (StatusCode, String) {
    match get_book(&state.client, state.upstream, &isbn).await {
        Ok(book) => (StatusCode::OK, book),
        Err(e) => (StatusCode::BAD_GATEWAY, format!("upstream failed: {e}")),
    }
}

async fn serve_metrics(State(state): State<GatewayState>) -> impl IntoResponse {
    let mut text = String::new();
    match prometheus_client::encoding::text::encode(&mut text, &state.metrics) {
        Ok(()) => (
            StatusCode::OK,
            [(
                header::CONTENT_TYPE,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            )],
            text,
        ),
        Err(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            [(header::CONTENT_TYPE, "text/plain")],
            "cannot encode the metrics".to_owned(),
        ),
    }
}

/// A client of both services, as a person with `curl` would be.
pub struct Client {
    http: reqwest::Client,
}

impl Default for Client {
    fn default() -> Self {
        Client {
            http: reqwest::Client::new(),
        }
    }
}

impl Client {
    /// `GET http://{addr}{path}`: the status and the body.
    pub async fn get(&self, addr: SocketAddr, path: &str) -> reqwest::Result<(u16, String)> {
        let response = self.http.get(format!("http://{addr}{path}")).send().await?;
        let status = response.status().as_u16();
        Ok((status, response.text().await?))
    }

    /// Flips the upstream's fault switch.
    pub async fn set_fault(&self, upstream: SocketAddr, fault: Fault) -> reqwest::Result<()> {
        let url = format!("http://{upstream}/fault/{}", fault.as_str());
        self.http.post(url).send().await?.error_for_status()?;
        Ok(())
    }
}

// ---- The call policy, in virtual time ----
//
// The same gateway's calls with retries, a retry budget and a bulkhead, against an upstream
// in process: without sockets, tokio's paused clock runs seconds of outage at once, and
// every count below is exact. (The breakers follow tokio's clock: the dev-dependencies of
// the example's and the test's packages turn on `breaker/test-util`.)

/// How the in-process upstream answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Behaviour {
    /// Answers with the book.
    Healthy,
    /// Fails the next request (a connection reset), then is healthy.
    Blip,
    /// Fails every request.
    Down,
    /// Never answers.
    Hanging,
}

impl Behaviour {
    fn from_code(code: u8) -> Behaviour {
        match code {
            1 => Behaviour::Blip,
            2 => Behaviour::Down,
            3 => Behaviour::Hanging,
            _ => Behaviour::Healthy,
        }
    }

    fn code(self) -> u8 {
        self as u8
    }
}

/// The in-process upstream's failure: the breaker counts it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unavailable;

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("upstream unavailable")
    }
}

impl std::error::Error for Unavailable {}

impl Classify for Unavailable {
    fn classify(&self) -> Outcome {
        Outcome::Failure
    }
}

/// An upstream in process, answering on tokio's clock after its latency, counting the
/// requests it receives.
pub struct SimUpstream {
    behaviour: AtomicU8,
    hits: AtomicU64,
    latency: Duration,
}

impl SimUpstream {
    /// An upstream that answers after `latency`, as `behaviour` says.
    pub fn new(behaviour: Behaviour, latency: Duration) -> SimUpstream {
        SimUpstream {
            behaviour: AtomicU8::new(behaviour.code()),
            hits: AtomicU64::new(0),
            latency,
        }
    }

    /// Changes how it answers from the next request on.
    pub fn set(&self, behaviour: Behaviour) {
        self.behaviour.store(behaviour.code(), Ordering::SeqCst);
    }

    /// Requests it has received, answered or not.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::SeqCst)
    }

    /// `GET {path}`: the path back, as the answer.
    pub async fn get(&self, path: &str) -> Result<String, Unavailable> {
        self.hits.fetch_add(1, Ordering::SeqCst);
        let behaviour = Behaviour::from_code(self.behaviour.load(Ordering::SeqCst));
        if behaviour == Behaviour::Blip {
            self.set(Behaviour::Healthy);
        }
        if behaviour == Behaviour::Hanging {
            std::future::pending::<()>().await;
        }
        tokio::time::sleep(self.latency).await;
        match behaviour {
            Behaviour::Healthy => Ok(path.to_owned()),
            Behaviour::Blip | Behaviour::Down | Behaviour::Hanging => Err(Unavailable),
        }
    }
}

/// The breaker of one route in virtual time: a window of 20 calls judged from 10 on, open
/// at a failure rate of 0.5 for 2s, one probe; `policy` adds the call policy.
pub fn route_breaker(name: &str, policy: ConfigBuilder) -> Breaker {
    let config = policy
        .count_window(20)
        .min_calls(10)
        .failure_rate(0.5)
        .open_for(Duration::from_secs(2))
        .probes(1)
        .build()
        .expect("the routes' configurations are valid");
    Breaker::new(name, config)
}

/// How a run of calls went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// Calls made.
    pub calls: u64,
    /// Requests the upstream received.
    pub hits: u64,
    /// Calls that answered with a book.
    pub answered: u64,
    /// Calls that ended with the upstream's failure (or a timeout).
    pub failed: u64,
    /// Calls the breaker rejected, first attempt or retry.
    pub rejected: u64,
    /// The breaker's lifetime totals after the run.
    pub totals: CallTotals,
    /// Virtual time the run took.
    pub took: Duration,
}

/// Runs `calls` calls of `GET /book/978-1` through `breaker`, one after the other, `every` apart
/// (or back to back when zero).
pub async fn run_calls(
    breaker: &Breaker,
    upstream: &SimUpstream,
    calls: u64,
    every: Duration,
) -> Run {
    let start = tokio::time::Instant::now();
    let hits = upstream.hits();
    let (mut answered, mut failed, mut rejected) = (0, 0, 0);
    for _ in 0..calls {
        let next = tokio::time::Instant::now() + every;
        match breaker.run(|| upstream.get("/book/978-1")).await {
            Ok(Ok(_)) => answered += 1,
            Ok(Err(Unavailable)) | Err(CallError::TimedOut(_)) => failed += 1,
            Err(CallError::Rejected(_)) => rejected += 1,
        }
        tokio::time::sleep_until(next).await;
    }
    Run {
        calls,
        hits: upstream.hits() - hits,
        answered,
        failed,
        rejected,
        totals: breaker.snapshot().totals,
        took: start.elapsed(),
    }
}

/// A blip: the upstream fails one request. With `retries = 2` the call fails once, waits
/// its backoff (at most 20ms) and is answered by its second attempt; the caller never sees
/// the failure.
pub async fn blip() -> Run {
    let breaker = route_breaker(
        "gateway::blip",
        Config::builder()
            .timeout(Duration::from_millis(800))
            .retries(2),
    );
    let upstream = SimUpstream::new(Behaviour::Blip, Duration::ZERO);
    run_calls(&breaker, &upstream, 1, Duration::ZERO).await
}

/// A full outage, 1,000 calls back to back with `retries = 2`. With the breaker on, it
/// opens once its window has seen 10 failures and rejects every attempt from then on,
/// retries included. With the breaker disabled (as an override may leave it), only the
/// retry budget stands between the callers and the upstream: the default one (retries at
/// most 0.2 times the first attempts of the last 10s, plus 10 a second), or, without
/// `budget`, a floor so high that the budget never refuses a retry.
pub async fn outage(breaker_on: bool, budget: bool) -> Run {
    let mut policy = Config::builder()
        .timeout(Duration::from_millis(800))
        .retries(2);
    if !budget {
        policy = policy.retry_floor(u32::MAX);
    }
    let breaker = route_breaker("gateway::outage", policy);
    if !breaker_on {
        breaker.disable();
    }
    let upstream = SimUpstream::new(Behaviour::Down, Duration::ZERO);
    run_calls(&breaker, &upstream, 1000, Duration::ZERO).await
}

/// The gateway's workers: a request holds one from its arrival to its answer, as the
/// threads of a servlet container do (seed 004's scenario pins them).
pub const WORKERS: usize = 8;

/// How long a call of the hanging upstream waits before it gives up.
pub const HANG_TIMEOUT: Duration = Duration::from_secs(5);

/// The answers of one route of the gateway.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Route {
    /// Requests of this route.
    pub requests: u64,
    /// Answered by the upstream.
    pub answered: u64,
    /// Failed by the upstream.
    pub failed: u64,
    /// Ended by the timeout.
    pub timed_out: u64,
    /// Rejected by the breaker (its bulkhead, or open), answered at once by the gateway.
    pub rejected: u64,
    /// The longest a request of this route waited for its answer, worker included.
    pub slowest: Duration,
    /// The longest a rejected request waited for its rejection, worker included.
    pub slowest_rejected: Duration,
}

/// The two routes of [`hanging_upstream`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Isolation {
    /// `GET /book`, whose upstream hangs.
    pub book: Route,
    /// `GET /author`, whose upstream answers in 5ms.
    pub author: Route,
}

/// Seed 004's scenario: the `/book` upstream hangs and each call waits its 5s timeout,
/// while 50 requests arrive 20ms apart, every fifth for `/author`, whose upstream is
/// healthy. Without a bulkhead, the hanging calls take all [`WORKERS`] and every request
/// behind them waits; with `max_concurrent`, the call past the limit is rejected at once,
/// its worker freed, and `/author` keeps answering.
pub async fn hanging_upstream(max_concurrent: Option<u32>) -> Isolation {
    let mut policy = Config::builder().timeout(HANG_TIMEOUT);
    if let Some(calls) = max_concurrent {
        policy = policy.max_concurrent(calls);
    }
    let books = Arc::new((
        route_breaker("gateway::books", policy),
        SimUpstream::new(Behaviour::Hanging, Duration::ZERO),
    ));
    let authors = Arc::new(SimUpstream::new(
        Behaviour::Healthy,
        Duration::from_millis(5),
    ));
    let workers = Arc::new(tokio::sync::Semaphore::new(WORKERS));
    let start = tokio::time::Instant::now();
    let mut requests = Vec::new();
    for i in 0..50_u32 {
        tokio::time::sleep_until(start + Duration::from_millis(20) * i).await;
        let for_author = i % 5 == 4;
        let (books, authors, workers) = (books.clone(), authors.clone(), workers.clone());
        requests.push(tokio::spawn(async move {
            let arrived = tokio::time::Instant::now();
            let _worker = workers.acquire().await.expect("the pool is never closed");
            let ending = if for_author {
                Ok(authors.get("/author/1").await)
            } else {
                let (breaker, upstream) = &*books;
                breaker.run(|| upstream.get("/book/978-1")).await
            };
            (for_author, ending, arrived.elapsed())
        }));
    }
    let mut isolation = Isolation {
        book: Route::default(),
        author: Route::default(),
    };
    for request in requests {
        let (for_author, ending, waited) = request.await.expect("no request panics");
        let route = if for_author {
            &mut isolation.author
        } else {
            &mut isolation.book
        };
        route.requests += 1;
        match ending {
            Ok(Ok(_)) => route.answered += 1,
            Ok(Err(Unavailable)) => route.failed += 1,
            Err(CallError::TimedOut(_)) => route.timed_out += 1,
            Err(CallError::Rejected(_)) => {
                route.rejected += 1;
                route.slowest_rejected = route.slowest_rejected.max(waited);
            }
        }
        route.slowest = route.slowest.max(waited);
    }
    isolation
}
