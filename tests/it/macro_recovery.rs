//! Progressive recovery through the attribute: backoff of OPEN and the stepwise ramp-up (how
//! the ramp is logged is in `ramp_logs.rs`).

use std::time::Duration;

use breakerbox::{circuit_breaker, registry, Classify, Outcome, RejectReason, Rejected, State};

#[derive(Debug)]
enum StockError {
    Down,
    Rejected(Rejected),
}

impl Classify for StockError {
    fn classify(&self) -> Outcome {
        Outcome::Failure
    }
}

impl From<Rejected> for StockError {
    fn from(r: Rejected) -> Self {
        StockError::Rejected(r)
    }
}

#[circuit_breaker(
    name = "recovery::stock",
    window = 2, min = 2, probes = 1, open = "5s",
    backoff = 2.0, open_max = "15s",
    ramp = [25, 100], ramp_step = "10s",
)]
async fn stock(up: bool) -> Result<u32, StockError> {
    if up {
        Ok(7)
    } else {
        Err(StockError::Down)
    }
}

async fn retry_after() -> Duration {
    match stock(true).await {
        Err(StockError::Rejected(r)) => r.retry_after().expect("rejected by OPEN"),
        other => panic!("expected a rejection, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn attribute_backs_off_then_ramps_up() {
    stock(false).await.unwrap_err();
    stock(false).await.unwrap_err();
    let mut waits = vec![];
    for _ in 0..3 {
        let wait = retry_after().await;
        waits.push(wait.as_secs());
        tokio::time::advance(wait).await;
        stock(false).await.unwrap_err(); // the probe fails
    }
    assert_eq!(waits, [5, 10, 15]);

    tokio::time::advance(retry_after().await).await;
    assert_eq!(stock(true).await.unwrap(), 7); // the probe succeeds: the ramp starts
    let b = registry().get("recovery::stock").unwrap();
    assert_eq!(
        (b.state(), b.snapshot().admit_percent),
        (State::HalfOpen, 25)
    );

    let mut admitted = 0;
    for _ in 0..8 {
        match stock(true).await {
            Ok(_) => admitted += 1,
            Err(StockError::Rejected(r)) => assert_eq!(r.reason(), RejectReason::Throttled),
            Err(e) => panic!("{e:?}"),
        }
    }
    assert_eq!(admitted, 2, "25% of 8 calls");

    tokio::time::advance(Duration::from_secs(10)).await;
    assert_eq!(stock(true).await.unwrap(), 7);
    assert_eq!(b.snapshot().admit_percent, 100);
    tokio::time::advance(Duration::from_secs(10)).await;
    assert_eq!(stock(true).await.unwrap(), 7);
    assert_eq!(b.state(), State::Closed);

    stock(false).await.unwrap_err();
    stock(false).await.unwrap_err();
    assert_eq!(
        retry_after().await,
        Duration::from_secs(5),
        "closing reset the backoff"
    );
}
