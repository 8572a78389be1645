//! The downstream's pushback over real protocols on loopback: an axum upstream answering 503
//! or 429 with `Retry-After` (in seconds, or as an HTTP date), read as a `reqwest::Response`
//! and through the tower layer; a tonic server answering with `grpc-retry-pushback-ms`; and
//! the call policy, which retries no sooner than a pushback and gives up on a longer one.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use axum::extract::State as AxumState;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::routing::get;
use axum::Router;
use breakerbox::clock::ManualClock;
use breakerbox::tower::CircuitBreakerLayer;
use breakerbox::{
    events::Event, events::TransitionReason, http::StatusClassifier, Breaker, CallError, Config,
    RejectReason, State,
};
use tonic::body::Body;
use tonic::client::Grpc;
use tonic::metadata::MetadataValue;
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Channel, Endpoint, Server};
use tonic::{Code, Request, Response, Status};

use crate::support::text_codec;

use text_codec::TextCodec;
use tower::{Service, ServiceBuilder, ServiceExt};

const SEC: Duration = Duration::from_secs(1);

// ---------------------------------------------------------------------------------------
// An HTTP upstream in axum, answering as scripted
// ---------------------------------------------------------------------------------------

/// What the upstream answers next: a status and a `Retry-After`; `200 OK` once the script
/// is done.
#[derive(Default)]
struct Script {
    answers: Mutex<VecDeque<(u16, Option<String>)>>,
    hits: AtomicU64,
}

async fn stock(AxumState(script): AxumState<Arc<Script>>) -> (StatusCode, HeaderMap, &'static str) {
    script.hits.fetch_add(1, Ordering::SeqCst);
    let next = script.answers.lock().unwrap().pop_front();
    let mut headers = HeaderMap::new();
    match next {
        Some((status, retry_after)) => {
            if let Some(value) = retry_after {
                headers.insert("retry-after", HeaderValue::from_str(&value).unwrap());
            }
            (StatusCode::from_u16(status).unwrap(), headers, "busy")
        }
        None => (StatusCode::OK, headers, "12 in stock"),
    }
}

/// Serves the script on a free port of 127.0.0.1.
async fn upstream(answers: &[(u16, Option<&str>)]) -> (Arc<Script>, String) {
    let script = Arc::new(Script::default());
    script.answers.lock().unwrap().extend(
        answers
            .iter()
            .map(|(status, after)| (*status, after.map(str::to_owned))),
    );
    let app = Router::new()
        .route("/stock", get(stock))
        .with_state(script.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (script, format!("http://{addr}/stock"))
}

/// Every transition `b` makes, with its reason.
fn transitions(b: &Breaker) -> Arc<Mutex<Vec<(State, State, TransitionReason)>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    b.on_event(move |e: &Event| {
        if let Event::StateTransition {
            from, to, reason, ..
        } = e
        {
            log.lock().unwrap().push((*from, *to, *reason));
        }
    });
    seen
}

fn retry_after(b: &Breaker) -> Option<Duration> {
    let rejected = b.try_acquire().expect_err("open");
    assert_eq!(rejected.reason(), RejectReason::Open);
    rejected.retry_after()
}

/// One GET of `url` through `b`, the response judged as it is (a 503 is a failure).
async fn fetch(b: &Breaker, client: &reqwest::Client, url: &str) -> Option<u16> {
    let call = async { client.get(url).send().await.expect("loopback answers") };
    b.call(call).await.ok().map(|r| r.status().as_u16())
}

#[tokio::test]
async fn a_503_with_retry_after_in_seconds_opens_the_breaker_for_that_long() {
    let (script, url) = upstream(&[(503, Some("30"))]).await;
    let clock = ManualClock::new();
    let config = Config::builder().probes(1).build().unwrap();
    let b = Breaker::with_clock("pushback::seconds", config, clock.clone());
    let seen = transitions(&b);
    let client = reqwest::Client::new();

    assert_eq!(fetch(&b, &client, &url).await, Some(503));
    assert_eq!(
        b.state(),
        State::Open,
        "one failure, below min_calls: the server asked"
    );
    assert_eq!(retry_after(&b), Some(30 * SEC));
    assert_eq!(fetch(&b, &client, &url).await, None, "rejected");
    clock.advance(30 * SEC);
    assert_eq!(fetch(&b, &client, &url).await, Some(200), "the probe");
    assert_eq!(b.state(), State::Closed);
    assert_eq!(script.hits.load(Ordering::SeqCst), 2, "spared while open");
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (State::Closed, State::Open, TransitionReason::Pushback),
            (State::Open, State::HalfOpen, TransitionReason::OpenElapsed),
            (
                State::HalfOpen,
                State::Closed,
                TransitionReason::TrialPassed
            ),
        ]
    );
}

#[tokio::test]
async fn a_retry_after_as_an_http_date_and_the_cap_of_pushback_max() {
    let in_a_minute = httpdate_in(60);
    let in_an_hour = httpdate_in(3600);
    let (_, url) = upstream(&[(503, Some(&in_a_minute)), (503, Some(&in_an_hour))]).await;
    let client = reqwest::Client::new();

    let b = Breaker::with_clock("pushback::date", Config::default(), ManualClock::new());
    fetch(&b, &client, &url).await;
    let left = retry_after(&b).unwrap();
    // The date has whole seconds, read a moment after it was written.
    assert!(left > 57 * SEC && left <= 60 * SEC, "{left:?}");

    let capped = Config::builder().pushback_max(10 * SEC).build().unwrap();
    let b = Breaker::with_clock("pushback::capped", capped, ManualClock::new());
    fetch(&b, &client, &url).await;
    assert_eq!(retry_after(&b), Some(10 * SEC));
}

fn httpdate_in(seconds: u64) -> String {
    httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(seconds))
}

#[tokio::test]
async fn a_429_is_an_answer_unless_the_classifier_counts_it_then_its_pushback_opens() {
    let (_, url) = upstream(&[(429, Some("20")), (429, Some("20"))]).await;
    let client = reqwest::Client::new();

    let b = Breaker::with_clock("pushback::answer", Config::default(), ManualClock::new());
    assert_eq!(fetch(&b, &client, &url).await, Some(429));
    assert_eq!(
        b.state(),
        State::Closed,
        "a pushback on an answer is ignored"
    );

    // Through the tower layer, 429 counted as a failure: its pushback opens the breaker.
    let b = Arc::new(Breaker::with_clock(
        "pushback::layer",
        Config::default(),
        ManualClock::new(),
    ));
    let layer = CircuitBreakerLayer::new(b.clone())
        .classify_with(StatusClassifier::SERVER_ERRORS.with_too_many_requests());
    let http = reqwest::Client::new();
    let mut service = ServiceBuilder::new()
        .layer(layer)
        .service(tower::service_fn(move |url: String| {
            let http = http.clone();
            async move {
                let response = http.get(url).send().await?;
                Ok::<_, reqwest::Error>(http::Response::from(response))
            }
        }));
    let response = service.ready().await.unwrap().call(url).await.unwrap();
    assert_eq!(response.status(), 429);
    assert_eq!(b.state(), State::Open);
    assert_eq!(retry_after(&b), Some(20 * SEC));
}

// ---------------------------------------------------------------------------------------
// A gRPC server in tonic, answering with `grpc-retry-pushback-ms`
// ---------------------------------------------------------------------------------------

/// What the gRPC server answers next: a code and a pushback in milliseconds (`Code::Ok`:
/// the book); the book once the script is done.
type GrpcScript = Arc<Mutex<VecDeque<(Code, &'static str)>>>;

/// Serves `library.Library/GetBook` over HTTP/2 on a free port of 127.0.0.1.
async fn grpc_server(script: GrpcScript) -> SocketAddr {
    let incoming = TcpIncoming::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = incoming.local_addr().unwrap();
    let service = tower::service_fn(move |request: http::Request<Body>| {
        let script = script.clone();
        async move {
            let get_book = tower::service_fn(move |request: Request<String>| {
                let next = script.lock().unwrap().pop_front();
                async move {
                    match next.filter(|(code, _)| *code != Code::Ok) {
                        Some((code, pushback)) => {
                            let mut status = Status::new(code, "shedding load");
                            status.metadata_mut().insert(
                                "grpc-retry-pushback-ms",
                                MetadataValue::from_static(pushback),
                            );
                            Err(status)
                        }
                        None => Ok(Response::new(format!("book {}", request.into_inner()))),
                    }
                }
            });
            let response = tonic::server::Grpc::new(TextCodec)
                .unary(get_book, request)
                .await;
            Ok::<_, Infallible>(response)
        }
    });
    tokio::spawn(Server::builder().serve_with_incoming(service, incoming));
    addr
}

async fn connect(addr: SocketAddr) -> Grpc<Channel> {
    let endpoint = Endpoint::from_shared(format!("http://{addr}")).unwrap();
    Grpc::new(endpoint.connect().await.unwrap())
}

async fn get_book(mut client: Grpc<Channel>) -> Result<String, Status> {
    client.ready().await.unwrap();
    let path = http::uri::PathAndQuery::from_static("/library.Library/GetBook");
    let response = client
        .unary(Request::new("978-1".to_owned()), path, TextCodec)
        .await?;
    Ok(response.into_inner())
}

#[tokio::test]
async fn a_grpc_failure_with_retry_pushback_opens_and_an_answer_with_one_does_not() {
    let script: GrpcScript = Arc::new(Mutex::new(VecDeque::from([
        (Code::NotFound, "9000"),
        (Code::Unavailable, "2500"),
    ])));
    let client = connect(grpc_server(script).await).await;
    let b = Breaker::with_clock("pushback::grpc", Config::default(), ManualClock::new());

    let answer = b.call(get_book(client.clone())).await.unwrap();
    assert_eq!(answer.unwrap_err().code(), Code::NotFound);
    assert_eq!(b.state(), State::Closed, "NOT_FOUND is an answer");

    let failed = b.call(get_book(client.clone())).await.unwrap();
    assert_eq!(failed.unwrap_err().code(), Code::Unavailable);
    assert_eq!(retry_after(&b), Some(Duration::from_millis(2500)));
}

#[tokio::test(start_paused = true)]
async fn the_call_policy_waits_out_a_pushback_and_gives_up_on_one_longer_than_its_backoff() {
    let script: GrpcScript = Arc::new(Mutex::new(VecDeque::from([
        (Code::Unavailable, "500"),
        (Code::Ok, ""),
        (Code::Unavailable, "5000"),
    ])));
    let client = connect(grpc_server(script.clone()).await).await;
    let config = Config::builder()
        .probes(1)
        .retries(2)
        .retry_backoff(SEC)
        .build()
        .unwrap();
    let b = Breaker::new("pushback::policy", config);

    // 500 ms asked, a backoff of up to 1 s: retried, no sooner than asked, as the probe of
    // the open period the pushback started.
    let started = tokio::time::Instant::now();
    let book = b.run(|| get_book(client.clone())).await.unwrap();
    assert_eq!(book.unwrap(), "book 978-1");
    assert!(
        started.elapsed() >= Duration::from_millis(500),
        "{:?}",
        started.elapsed()
    );
    assert!(started.elapsed() <= SEC, "{:?}", started.elapsed());
    let totals = b.snapshot().totals;
    assert_eq!((totals.failure, totals.success, totals.retries), (1, 1, 1));
    assert_eq!(b.state(), State::Closed);

    // 5 s asked, more than the backoff would wait: no retry, the failure is the answer.
    let started = tokio::time::Instant::now();
    let out = b.run(|| get_book(client.clone())).await;
    let Ok(Err(status)) = out else {
        panic!("{out:?}")
    };
    assert_eq!(status.code(), Code::Unavailable);
    assert!(
        started.elapsed() < SEC,
        "gave up at once: {:?}",
        started.elapsed()
    );
    assert_eq!(b.snapshot().totals.retries, 1, "no retry");
    assert_eq!(script.lock().unwrap().len(), 0);
    let rejected = b.run(|| get_book(client.clone())).await.unwrap_err();
    let CallError::Rejected(rejected) = rejected else {
        panic!("{rejected:?}")
    };
    assert_eq!(rejected.retry_after(), Some(5 * SEC));
}
