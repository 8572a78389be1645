//! How the ramp is logged: a line per step and a warning when the latency guard holds one
//! (alone in its process, as `support/logs.rs` says why).

use crate::support::logs;

use std::time::Duration;

use breakerbox::{circuit_breaker, Classify, Outcome, Rejected};

#[derive(Debug)]
enum StockError {
    Down,
    Rejected,
}

impl Classify for StockError {
    fn classify(&self) -> Outcome {
        Outcome::Failure
    }
}

impl From<Rejected> for StockError {
    fn from(_: Rejected) -> Self {
        StockError::Rejected
    }
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

/// Calls `logged` `n` times, each taking `latency_ms` when admitted.
async fn logged_calls(n: usize, latency_ms: u64) {
    for _ in 0..n {
        match logged(latency_ms, true).await {
            Ok(_) | Err(StockError::Rejected) => {}
            Err(e) => panic!("{e:?}"),
        }
    }
}

#[tokio::test(start_paused = true)]
async fn each_ramp_step_is_logged_and_a_held_step_warns() {
    let Some((captured, _guard)) = logs::capture(concat!(
        module_path!(),
        "::each_ramp_step_is_logged_and_a_held_step_warns"
    )) else {
        return;
    };

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

    let who = r#"breaker="recovery::logged""#;
    let expected = [
        format!(" WARN breakerbox::trace: circuit breaker opened {who} from=closed to=open reason=failure_rate failure_rate=0.5 calls=2"),
        format!(" INFO breakerbox::trace: circuit breaker state changed {who} from=open to=half_open reason=open_elapsed"),
        format!(" INFO breakerbox::trace: circuit breaker ramp step {who} step=0 percent=50"),
        // The p99s are the upper bounds of their histogram buckets.
        format!(" WARN breakerbox::trace: circuit breaker ramp step held by the latency guard {who} step=0 percent=50 p99=100.663296ms baseline=10.48576ms"),
        format!(" INFO breakerbox::trace: circuit breaker ramp step {who} step=1 percent=100"),
        format!(" INFO breakerbox::trace: circuit breaker closed {who} from=half_open to=closed reason=ramp_completed"),
    ];
    assert_eq!(captured.lines(), expected);
}
