//! `#[circuit_breaker]` on plain functions: every signature the `async fn` form takes.

use std::fmt::Display;

use breakerbox::{circuit_breaker, policy::CallFailure, Classify, Outcome, Rejected};

#[derive(Debug)]
pub struct Down;

impl Classify for Down {
    fn classify(&self) -> Outcome {
        Outcome::Failure
    }
}

impl From<Rejected> for Down {
    fn from(_: Rejected) -> Self {
        Down
    }
}

#[circuit_breaker(window = 20)]
fn free(isbn: &str) -> Result<String, Down> {
    if isbn.is_empty() {
        return Err(Down);
    }
    let n: u32 = isbn.len().try_into().map_err(|_| Down)?;
    Ok(format!("{isbn}/{n}"))
}

#[circuit_breaker(window = 20)]
fn generic<T: Display>(value: T) -> Result<String, Down> {
    Ok(value.to_string())
}

#[circuit_breaker(window = 20)]
fn borrowed(text: &str) -> Result<&str, Down> {
    Ok(text.trim())
}

#[circuit_breaker(key = host, window = 20)]
fn keyed(host: &str, path: &str) -> Result<String, Down> {
    Ok(format!("{host}{path}"))
}

#[circuit_breaker(window = 20, fallback = cached)]
fn with_fallback(isbn: &str, shelf: u32) -> Result<String, Down> {
    Ok(format!("{isbn}@{shelf}"))
}

fn cached(isbn: &str, _: Rejected) -> Result<String, Down> {
    Ok(isbn.to_owned())
}

#[circuit_breaker(window = 20, fallback = on_failure, fallback_on = "failure")]
fn with_failure_fallback(isbn: String) -> Result<String, std::io::Error> {
    Ok(isbn)
}

fn on_failure(failure: CallFailure<std::io::Error>) -> Result<String, std::io::Error> {
    failure.into_error().map_or(Ok(String::new()), Err)
}

#[circuit_breaker(window = 20, retries = 2, retry_backoff = "0s")]
fn retried(isbn: &str, shelf: u32) -> Result<String, Down> {
    Ok(format!("{isbn}@{shelf}"))
}

pub trait Catalogue {
    fn title(&self, isbn: &str) -> Result<String, Down>;
}

struct Library {
    name: String,
    lent: u32,
}

impl Catalogue for Library {
    #[circuit_breaker(window = 20)]
    fn title(&self, isbn: &str) -> Result<String, Down> {
        Ok(format!("{}: {isbn}", self.name))
    }
}

impl Library {
    #[circuit_breaker(window = 20)]
    fn lend(&mut self) -> Result<u32, Down> {
        self.lent += 1;
        Ok(self.lent)
    }

    #[circuit_breaker(window = 20, retries = 1)]
    fn shared(&self, isbn: &str) -> Result<String, Down> {
        Ok(format!("{}: {isbn}", self.name))
    }

    #[circuit_breaker(window = 20)]
    fn owned(self) -> Result<String, Down> {
        Ok(self.name)
    }
}

#[circuit_breaker(window = 20, classify = by_status, fallback = unavailable)]
fn status(code: u16) -> u16 {
    code
}

fn unavailable(_: Rejected) -> u16 {
    503
}

fn by_status(code: &u16) -> Outcome {
    if *code >= 500 {
        Outcome::Failure
    } else {
        Outcome::Success
    }
}

fn main() {
    let _ = free("978-1");
    let _ = generic(7);
    let _ = borrowed(" x ");
    let _ = keyed("a", "/b");
    let _ = with_fallback("978-1", 2);
    let _ = with_failure_fallback(String::new());
    let _ = retried("978-1", 2);
    let mut library = Library {
        name: "east".into(),
        lent: 0,
    };
    let _ = library.title("978-1");
    let _ = library.lend();
    let _ = library.shared("978-1");
    let _ = library.owned();
    let _ = status(200);
}
