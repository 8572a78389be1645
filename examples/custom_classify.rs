//! A gRPC-like client where only some status codes mean the server is sick.
//!
//! `NotFound`, `InvalidArgument` and `PermissionDenied` are answers: a healthy server gave
//! them, and they must never open the breaker. `Unavailable`, `DeadlineExceeded` and
//! `Internal` are failures. The `Classify` impl says so once, and `#[circuit_breaker]` uses it.

use std::fmt;
use std::time::Duration;

use breakerbox::{circuit_breaker, registry, Classify, Outcome, Rejected};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Code {
    NotFound,
    InvalidArgument,
    PermissionDenied,
    Unavailable,
    DeadlineExceeded,
    Internal,
}

#[derive(Debug)]
struct Status {
    code: Code,
    message: String,
    /// The rejection this status was made from, if a breaker of this process rejected the
    /// call; a status from the server has none.
    rejected: Option<Rejected>,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.code, self.message)
    }
}

impl Classify for Status {
    fn classify(&self) -> Outcome {
        // A rejection says nothing about the server, whatever code it answers with: a guarded
        // call that passes it on must not open its own breaker.
        if let Some(rejected) = &self.rejected {
            return rejected.classify();
        }
        match self.code {
            Code::Unavailable | Code::DeadlineExceeded | Code::Internal => Outcome::Failure,
            Code::NotFound | Code::InvalidArgument | Code::PermissionDenied => Outcome::Success,
        }
    }
}

/// A rejected call reaches the caller as `Unavailable`, the code gRPC clients already retry.
impl From<Rejected> for Status {
    fn from(rejected: Rejected) -> Self {
        Status {
            code: Code::Unavailable,
            message: rejected.to_string(),
            rejected: Some(rejected),
        }
    }
}

/// The server's answer is scripted by the caller, to show how each code is judged.
#[circuit_breaker(
    name = "catalog",
    window = 6,
    min = 6,
    rate = 0.5,
    open = "2s",
    probes = 1
)]
async fn get_book(isbn: &str, answer: Option<Code>) -> Result<String, Status> {
    match answer {
        None => Ok(format!("book {isbn}")),
        Some(code) => Err(Status {
            code,
            message: format!("server said {code:?} for {isbn}"),
            rejected: None,
        }),
    }
}

async fn show(isbn: &str, answer: Option<Code>) {
    let out = get_book(isbn, answer).await;
    let catalog = registry()
        .get("catalog")
        .expect("registered on the first call");
    let s = catalog.snapshot();
    let shown = match &out {
        Ok(book) => book.clone(),
        Err(status) => status.to_string(),
    };
    println!(
        "{:<60} state={:<9} calls={} failures={}",
        shown, s.state, s.calls, s.failures
    );
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    println!("-- answers from a healthy server never open the breaker");
    for code in [
        Code::NotFound,
        Code::InvalidArgument,
        Code::PermissionDenied,
    ] {
        show("978-0", Some(code)).await;
        show("978-0", Some(code)).await;
    }

    println!("-- server failures do");
    for code in [Code::Unavailable, Code::DeadlineExceeded, Code::Internal] {
        show("978-1", Some(code)).await;
    }
    println!("-- open: calls are rejected without reaching the server");
    show("978-2", None).await;

    tokio::time::advance(Duration::from_secs(2)).await;
    println!("-- 2s later one probe goes through and closes the breaker");
    show("978-3", None).await;
}
