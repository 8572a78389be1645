//! What an attacker controls cannot hurt the breaker: business errors never open it.

use breakerbox::{circuit_breaker, registry, Classify, Outcome, Rejected, State};

/// A gRPC-like status: only a sick downstream is a failure.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Status {
    NotFound,
    InvalidArgument,
    PermissionDenied,
    Unavailable,
    Rejected,
}

impl Classify for Status {
    fn classify(&self) -> Outcome {
        match self {
            Status::Unavailable => Outcome::Failure,
            Status::Rejected => Outcome::Ignored,
            _ => Outcome::Success,
        }
    }
}

impl From<Rejected> for Status {
    fn from(_: Rejected) -> Self {
        Status::Rejected
    }
}

#[circuit_breaker(name = "it::security::get_book", window = 20, min = 10, rate = 0.5)]
async fn get_book(answer: Status) -> Result<&'static str, Status> {
    Err(answer)
}

#[tokio::test]
async fn a_stream_of_business_errors_cannot_open_the_breaker() {
    let answers = [
        Status::NotFound,
        Status::InvalidArgument,
        Status::PermissionDenied,
    ];
    for i in 0..10_000 {
        let answer = answers[i % answers.len()];
        assert_eq!(
            get_book(answer).await,
            Err(answer),
            "every call reaches the downstream"
        );
    }
    let b = registry().get("it::security::get_book").unwrap();
    let s = b.snapshot();
    assert_eq!(
        (s.state, s.calls, s.failures, s.rejected),
        (State::Closed, 20, 0, 0)
    );

    // The same breaker still opens on real failures.
    for _ in 0..10 {
        let _ = get_book(Status::Unavailable).await;
    }
    assert_eq!(b.state(), State::Open);
}
