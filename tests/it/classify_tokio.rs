//! `Classify` for `tokio::time::error::Elapsed` (feature `tokio`).

use std::time::Duration;

use breakerbox::{Breaker, Classify, Config, Outcome, State};

#[tokio::test(start_paused = true)]
async fn a_timeout_is_a_failure() {
    let late = tokio::time::timeout(Duration::from_millis(100), std::future::pending::<()>()).await;
    let elapsed = late.unwrap_err();
    assert_eq!(elapsed.classify(), Outcome::Failure);
    let on_time = tokio::time::timeout(Duration::from_millis(100), async { 7 }).await;
    assert_eq!(on_time.classify(), Outcome::Success);
}

#[tokio::test(start_paused = true)]
async fn timeouts_open_the_breaker() {
    let b = Breaker::new(
        "classify_tokio::slow",
        Config::builder()
            .count_window(2)
            .min_calls(2)
            .build()
            .unwrap(),
    );
    for _ in 0..2 {
        let out = b
            .call(tokio::time::timeout(
                Duration::from_secs(1),
                std::future::pending::<()>(),
            ))
            .await;
        assert!(matches!(out, Ok(Err(_))));
    }
    assert_eq!(b.state(), State::Open);
}
