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
use breaker::{circuit_breaker, Rejected};

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
        breaker::metrics::register(&mut metrics);
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
