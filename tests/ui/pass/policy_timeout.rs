//! `timeout` without `retries`: the body runs once, so every signature the plain attribute
//! takes keeps compiling, `&mut self` and `self: Arc<Self>` included; with a fallback, the
//! body gets copies of the arguments and the fallback the arguments themselves.

use std::fmt::Debug;
use std::future::Future;
use std::sync::Arc;

use breakerbox::{circuit_breaker, Outcome, Rejected, policy::TimedOut};

#[derive(Debug)]
struct Down;

impl breakerbox::Classify for Down {
    fn classify(&self) -> Outcome {
        Outcome::Failure
    }
}

impl From<Rejected> for Down {
    fn from(_: Rejected) -> Self {
        Down
    }
}

impl From<TimedOut> for Down {
    fn from(_: TimedOut) -> Self {
        Down
    }
}

type Res<T> = Result<T, Down>;

#[circuit_breaker(timeout = "800ms")]
async fn borrowed<'a>(isbn: &'a str, mut shelf: Vec<u8>, _unused: u32) -> Res<&'a str> {
    shelf.push(1);
    let _ = "7".parse::<u32>().map_err(|_| Down)?;
    Ok(isbn)
}

#[circuit_breaker(timeout = "1s", window = 10, min = 4, probe_timeout = "2s")]
async fn generic<T: Debug + Send>(value: T, render: impl Fn(&T) -> String + Send) -> Res<String> {
    Ok(render(&value))
}

#[circuit_breaker(timeout = "1s")]
async fn opaque() -> Res<impl Debug> {
    Ok(3_u8)
}

/// An HTTP status, or why there is none.
#[derive(Debug, PartialEq)]
enum Status {
    Answered(u16),
    Unavailable,
    TimedOut,
}

impl From<TimedOut> for Status {
    fn from(_: TimedOut) -> Self {
        Status::TimedOut
    }
}

fn server_errors(result: &Result<u16, Status>) -> Outcome {
    match result {
        Ok(status) if *status < 500 => Outcome::Success,
        _ => Outcome::Failure,
    }
}

async fn unavailable(_path: &str, _query: String, _rejected: Rejected) -> Result<u16, Status> {
    Err(Status::Unavailable)
}

#[circuit_breaker(timeout = "1s", classify = server_errors, fallback = unavailable)]
async fn status_of(path: &str, mut query: String) -> Result<u16, Status> {
    query.push('?');
    if path.is_empty() {
        return Err(Status::Answered(404));
    }
    Ok(200 + (path.len() + query.len()) as u16 - 4)
}

#[circuit_breaker(timeout = "1s", key = host, max_concurrent = 4)]
async fn keyed(host: &str, body: Vec<u8>) -> Res<usize> {
    Ok(host.len() + body.len())
}

struct Client {
    base: String,
    calls: u32,
}

impl Client {
    #[circuit_breaker(timeout = "1s")]
    async fn count(&mut self) -> Res<u32> {
        self.calls += 1;
        Ok(self.calls)
    }

    #[circuit_breaker(timeout = "1s")]
    async fn shared(self: Arc<Self>) -> Res<usize> {
        Ok(self.base.len())
    }

    #[circuit_breaker(timeout = "1s", fallback = Self::cached)]
    async fn get(&self, path: &str) -> Res<String> {
        Ok(format!("{}{path}", self.base))
    }

    async fn cached(&self, path: &str, _rejected: Rejected) -> Res<String> {
        Ok(format!("cached {path}"))
    }
}

fn is_send<F: Future + Send>(future: F) -> F {
    future
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        assert_eq!(
            is_send(borrowed("978-1", vec![], 0)).await.unwrap(),
            "978-1"
        );
        assert_eq!(generic(7, |v| format!("<{v}>")).await.unwrap(), "<7>");
        assert_eq!(format!("{:?}", opaque().await.unwrap()), "3");
        assert_eq!(status_of("/a", "q=".into()).await, Ok(201));
        assert_eq!(keyed("h", vec![1, 2]).await.unwrap(), 3);
        let mut client = Client {
            base: "http://l/".into(),
            calls: 0,
        };
        assert_eq!(client.count().await.unwrap(), 1);
        assert_eq!(is_send(client.get("b")).await.unwrap(), "http://l/b");
        assert_eq!(Arc::new(client).shared().await.unwrap(), 9);
    });
}
