//! A tonic 0.14 service method under `#[circuit_breaker]`, returning `tonic::Status` as it is:
//! a rejection is the gRPC answer `UNAVAILABLE`, with the rejection's text and the
//! `grpc-retry-pushback-ms` trailer, and it reaches a client over HTTP/2 on loopback,
//! through tonic's own server and channel.

use std::convert::Infallible;
use std::error::Error;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use breakerbox::clock::ManualClock;
use breakerbox::{circuit_breaker, registry, Breaker, Config, Rejected, State};
use tonic::body::Body;
use tonic::client::Grpc;
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Channel, Endpoint, Server};
use tonic::{Code, Request, Response, Status};

use crate::support::text_codec;

use text_codec::TextCodec;

/// The server side of `library.Library/GetBook`, in front of a store that can fail.
#[derive(Default)]
struct Library {
    store_down: AtomicBool,
    store_calls: AtomicU64,
}

impl Library {
    #[circuit_breaker(
        name = "library::get_book",
        window = 2,
        min = 2,
        rate = 1.0,
        open = "5s"
    )]
    async fn get_book(&self, request: Request<String>) -> Result<Response<String>, Status> {
        self.store_calls.fetch_add(1, Ordering::SeqCst);
        if self.store_down.load(Ordering::SeqCst) {
            return Err(Status::unavailable("store restarting"));
        }
        Ok(Response::new(format!("book {}", request.into_inner())))
    }
}

/// Serves `library.Library/GetBook` with tonic's server over HTTP/2 on a free port of
/// 127.0.0.1, in the background.
async fn serve(library: Arc<Library>) -> SocketAddr {
    let incoming = TcpIncoming::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = incoming.local_addr().unwrap();
    let service = tower::service_fn(move |request: http::Request<Body>| {
        let library = library.clone();
        async move {
            let get_book = tower::service_fn(move |request: Request<String>| {
                let library = library.clone();
                async move { library.get_book(request).await }
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

/// A gRPC client of the server at `addr`.
async fn connect(addr: SocketAddr) -> Grpc<Channel> {
    let endpoint = Endpoint::from_shared(format!("http://{addr}")).unwrap();
    Grpc::new(endpoint.connect().await.unwrap())
}

/// Calls `library.Library/GetBook` as a remote client would.
async fn call_get_book(client: &mut Grpc<Channel>, isbn: &str) -> Result<String, Status> {
    client.ready().await.unwrap();
    let path = http::uri::PathAndQuery::from_static("/library.Library/GetBook");
    let response = client
        .unary(Request::new(isbn.to_owned()), path, TextCodec)
        .await?;
    Ok(response.into_inner())
}

#[tokio::test(start_paused = true)]
async fn a_rejected_call_reaches_the_grpc_client_as_unavailable_with_retry_pushback() {
    let library = Arc::new(Library::default());
    let mut client = connect(serve(library.clone()).await).await;
    let book = call_get_book(&mut client, "978-1").await.unwrap();
    assert_eq!(book, "book 978-1");

    // The store fails twice: the breaker opens, on the server's own UNAVAILABLE.
    library.store_down.store(true, Ordering::SeqCst);
    for _ in 0..2 {
        let status = call_get_book(&mut client, "978-2").await.unwrap_err();
        assert_eq!(
            (status.code(), status.message()),
            (Code::Unavailable, "store restarting")
        );
        assert_eq!(status.metadata().get("grpc-retry-pushback-ms"), None);
    }
    let b = registry().get("library::get_book").unwrap();
    assert_eq!(b.state(), State::Open);
    assert_eq!(library.store_calls.load(Ordering::SeqCst), 3);

    tokio::time::advance(Duration::from_millis(1_500)).await;
    let status = call_get_book(&mut client, "978-3").await.unwrap_err();
    assert_eq!(status.code(), Code::Unavailable);
    assert_eq!(
        status.message(),
        "circuit 'library::get_book' is open; retry in 3.5s"
    );
    assert_eq!(
        status.metadata().get("grpc-retry-pushback-ms").unwrap(),
        "3500"
    );
    assert_eq!(
        library.store_calls.load(Ordering::SeqCst),
        3,
        "store spared"
    );

    // The method itself, off the wire: the same answer, with the rejection as its source.
    tokio::time::advance(Duration::from_nanos(1_499_999_500)).await;
    let status = library
        .get_book(Request::new("978-4".to_owned()))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unavailable);
    assert_eq!(
        status.message(),
        "circuit 'library::get_book' is open; retry in 2.0s"
    );
    assert_eq!(
        status.metadata().get("grpc-retry-pushback-ms").unwrap(),
        "2001",
        "2000.0005 ms left, rounded up"
    );
    let rejected = status.source().unwrap().downcast_ref::<Rejected>().unwrap();
    assert_eq!(
        rejected.retry_after(),
        Some(Duration::from_nanos(2_000_000_500))
    );
    assert_eq!(b.snapshot().rejected, 2);
}

#[test]
fn a_rejection_without_a_known_end_has_no_pushback() {
    let b = Breaker::with_clock("library::forced", Config::default(), ManualClock::new());
    b.force_open();
    let status = Status::from(b.try_acquire().unwrap_err());
    assert_eq!(status.code(), Code::Unavailable);
    assert_eq!(status.message(), "circuit 'library::forced' is forced open");
    assert_eq!(status.metadata().get("grpc-retry-pushback-ms"), None);
}

#[test]
fn the_pushback_is_the_open_period_left_in_whole_milliseconds_rounded_up() {
    let clock = ManualClock::new();
    let config = Config::builder().count_window(1).build().unwrap();
    let b = Breaker::with_clock("library::pushback", config, clock.clone());
    b.try_acquire().unwrap().failure();
    for (advance, pushback) in [
        (Duration::ZERO, "5000"),
        (Duration::from_nanos(1), "5000"),
        (Duration::from_nanos(999_999), "4999"),
        (Duration::from_nanos(1), "4999"),
        (Duration::from_millis(4_998) - Duration::from_nanos(1), "1"),
        (Duration::from_nanos(999_999), "1"),
    ] {
        clock.advance(advance);
        let status = Status::from(b.try_acquire().unwrap_err());
        let got = status.metadata().get("grpc-retry-pushback-ms").unwrap();
        assert_eq!(got, pushback, "after {:?}", clock.elapsed());
    }
}
