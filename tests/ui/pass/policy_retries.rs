//! `retries`: each attempt runs the body anew with `&self` and copies of the arguments
//! (references copied as references), and the future stays `Send`.

use std::fmt::Display;
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

/// An error with no `From<TimedOut>`: a function with `retries` and no `timeout` never times
/// out, so it needs none.
#[derive(Debug)]
struct Refused;

impl breakerbox::Classify for Refused {
    fn classify(&self) -> Outcome {
        Outcome::Failure
    }
}

impl From<Rejected> for Refused {
    fn from(_: Rejected) -> Self {
        Refused
    }
}

#[circuit_breaker(retries = 2)]
async fn untimed(isbn: &str) -> Result<usize, Refused> {
    Ok(isbn.len())
}

#[circuit_breaker(retries = 2, retry_backoff = "0s")]
async fn references<'a>(isbn: &'a str, shelves: &[u32], _unused: &str) -> Res<&'a str> {
    let _ = shelves.len();
    Ok(isbn)
}

#[circuit_breaker(timeout = "1s", retries = 2, retry_budget = 0.5, max_concurrent = 8)]
async fn owned(mut title: String, copies: u32, tags: Arc<Vec<String>>) -> Res<String> {
    title.push('!');
    let extra = "1".parse::<u32>().map_err(|_| Down)?;
    Ok(format!("{title}{}{}", copies + extra, tags.len()))
}

#[circuit_breaker(retries = 1)]
async fn generic<T>(value: T, render: impl Fn(&T) -> String + Clone + Send) -> Res<String>
where
    T: Display + Clone + Send + Sync,
{
    Ok(render(&value))
}

#[circuit_breaker(retries = 1, key = host, max_keys = 16)]
async fn keyed(host: &str, body: Vec<u8>) -> Res<usize> {
    Ok(host.len() + body.len())
}

struct Client {
    base: String,
}

impl Client {
    #[circuit_breaker(retries = 2, fallback = Self::cached)]
    async fn get(&self, path: &str, page: u32) -> Res<String> {
        Ok(format!("{}{path}?page={page}", self.base))
    }

    async fn cached(&self, path: &str, _page: u32, _rejected: Rejected) -> Res<String> {
        Ok(format!("cached {path}"))
    }

    #[circuit_breaker(retries = 1, key = self.base.as_str())]
    async fn keyed(self: &Self, path: String) -> Res<usize> {
        Ok(self.base.len() + path.len())
    }

    #[circuit_breaker(retries = 1)]
    async fn opaque(&self) -> Res<impl Display> {
        Ok(self.base.len())
    }
}

trait Lookup {
    async fn lookup(&self, isbn: &str) -> Res<String>;
}

impl Lookup for Client {
    #[circuit_breaker(retries = 1, timeout = "1s")]
    async fn lookup(&self, isbn: &str) -> Res<String> {
        Ok(format!("{}{isbn}", self.base))
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
        assert_eq!(is_send(untimed("978-1")).await.unwrap(), 5);
        assert_eq!(
            is_send(references("978-1", &[1], "")).await.unwrap(),
            "978-1"
        );
        let tags = Arc::new(vec!["sf".to_owned()]);
        assert_eq!(
            is_send(owned("Dune".into(), 1, tags)).await.unwrap(),
            "Dune!21"
        );
        assert_eq!(generic(7, |v| format!("<{v}>")).await.unwrap(), "<7>");
        assert_eq!(keyed("h", vec![1, 2]).await.unwrap(), 3);
        let client = Client {
            base: "http://l/".into(),
        };
        assert_eq!(
            is_send(client.get("b", 2)).await.unwrap(),
            "http://l/b?page=2"
        );
        assert_eq!(client.keyed("ab".into()).await.unwrap(), 11);
        assert_eq!(client.opaque().await.unwrap().to_string(), "9");
        assert_eq!(client.lookup("1").await.unwrap(), "http://l/1");
    });
}
