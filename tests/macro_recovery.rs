//! Progressive recovery through the attribute: backoff of OPEN and the stepwise ramp-up,
//! and how the ramp is logged.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker::{circuit_breaker, registry, Classify, Outcome, RejectReason, Rejected, State};

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

#[circuit_breaker(
    name = "recovery::logged",
    window = 2, min = 2, probes = 1, open = "5s",
    ramp = [50, 100], ramp_step = "10s", ramp_guard = 2.0,
)]
async fn logged(latency_ms: u64, up: bool) -> Result<u32, StockError> {
    tokio::time::sleep(Duration::from_millis(latency_ms)).await;
    if up {
        Ok(7)
    } else {
        Err(StockError::Down)
    }
}

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Calls `logged` `n` times, each taking `latency_ms` when admitted.
async fn logged_calls(n: usize, latency_ms: u64) {
    for _ in 0..n {
        match logged(latency_ms, true).await {
            Ok(_) | Err(StockError::Rejected(_)) => {}
            Err(e) => panic!("{e:?}"),
        }
    }
}

#[tokio::test(start_paused = true)]
async fn each_ramp_step_is_logged_and_a_held_step_warns() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .without_time()
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    logged_calls(10, 10).await; // the baseline: 10 ms
    logged(0, false).await.unwrap_err(); // 1 of 2 failed: open
    tokio::time::advance(Duration::from_secs(5)).await;
    logged_calls(1, 10).await; // the probe: the ramp starts at 50%
    logged_calls(4, 100).await; // two admitted, 100 ms each
    tokio::time::advance(Duration::from_secs(10)).await;
    logged_calls(4, 10).await; // held: 100 ms > 2 x 10 ms; two admitted, 10 ms each
    tokio::time::advance(Duration::from_secs(10)).await;
    logged_calls(1, 10).await; // climbs to 100%
    tokio::time::advance(Duration::from_secs(10)).await;
    logged_calls(1, 10).await; // closes

    let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let who = r#"breaker="recovery::logged" key="""#;
    let expected = [
        format!(" WARN breaker::trace: circuit breaker opened {who} from=closed to=open failure_rate=0.5 calls=2"),
        format!(" INFO breaker::trace: circuit breaker state changed {who} from=open to=half_open"),
        format!(" INFO breaker::trace: circuit breaker ramp step {who} step=0 percent=50"),
        // The p99s are the upper bounds of their histogram buckets.
        format!(" WARN breaker::trace: circuit breaker ramp step held by the latency guard {who} step=0 percent=50 p99=100.663296ms baseline=10.48576ms"),
        format!(" INFO breaker::trace: circuit breaker ramp step {who} step=1 percent=100"),
        format!(" INFO breaker::trace: circuit breaker closed {who} from=half_open to=closed"),
    ];
    assert_eq!(text.lines().collect::<Vec<_>>(), expected);
}
