//! With `fallback_on = "failure"`, a fallback taking `CallFailure<E>` answers rejections and
//! timeouts: an error type that has no `From<Rejected>` nor `From<TimedOut>`, and cannot be
//! given one (`std::io::Error` is foreign, as `reqwest::Error` is), is returned as it is.

use std::io;

use breakerbox::{circuit_breaker, policy::CallFailure};

#[circuit_breaker(timeout = "1s", fallback = cached, fallback_on = "failure")]
async fn get_timed(isbn: String) -> Result<String, io::Error> {
    Ok(isbn)
}

#[circuit_breaker(fallback = cached, fallback_on = "failure")]
async fn get_plain(isbn: String) -> Result<String, io::Error> {
    Ok(isbn)
}

#[circuit_breaker(retries = 2, fallback = cached, fallback_on = "failure")]
async fn get_retried(isbn: String) -> Result<String, io::Error> {
    Ok(isbn)
}

#[circuit_breaker(timeout = "1s", retries = 1, fallback = cached, fallback_on = "failure")]
async fn get_timed_retried(isbn: String) -> Result<String, io::Error> {
    Ok(isbn)
}

async fn cached(isbn: String, failure: CallFailure<io::Error>) -> Result<String, io::Error> {
    match failure {
        CallFailure::Rejected(_) | CallFailure::TimedOut(_) => Ok(format!("{isbn} (cached)")),
        CallFailure::Error(e) => Err(e),
    }
}

fn main() {
    drop(get_timed(String::new()));
    drop(get_plain(String::new()));
    drop(get_retried(String::new()));
    drop(get_timed_retried(String::new()));
}
