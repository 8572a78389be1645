//! `hedge`: each attempt runs the body anew with `&self` and copies of the arguments, beside
//! the others, and the future stays `Send`.

use std::future::Future;

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

#[circuit_breaker(hedge = "50ms")]
async fn untimed(isbn: &str) -> Result<usize, Down> {
    Ok(isbn.len())
}

#[circuit_breaker(timeout = "1s", hedge = "50ms", hedges = 2, retries = 1)]
async fn timed_and_retried(isbn: String) -> Result<String, Down> {
    Ok(isbn)
}

struct Catalog {
    shelves: Vec<u32>,
}

impl Catalog {
    #[circuit_breaker(hedge = "20ms")]
    async fn shelf(&self, n: usize) -> Result<u32, Down> {
        Ok(self.shelves[n])
    }
}

fn assert_send<F: Future + Send>(f: F) -> F {
    f
}

fn main() {
    let catalog = Catalog { shelves: vec![7] };
    let _ = assert_send(untimed("978-1"));
    let _ = assert_send(timed_and_retried("978-1".to_owned()));
    let _ = assert_send(catalog.shelf(0));
}
