//! With the `test-util` feature, the default clock follows tokio's clock: a paused runtime
//! drives every breaker built with `Breaker::new`.

use std::time::Duration;

use breakerbox::{Breaker, Config, State};

#[tokio::test(start_paused = true)]
async fn paused_tokio_time_drives_the_default_clock() {
    let config = Config::builder()
        .count_window(2)
        .min_calls(2)
        .probes(1)
        .build()
        .unwrap();
    let b = Breaker::new("paused", config);
    b.try_acquire().unwrap().failure();
    b.try_acquire().unwrap().failure();
    assert_eq!(b.state(), State::Open);

    tokio::time::advance(Duration::from_millis(1_500)).await;
    let rejected = b.try_acquire().unwrap_err();
    assert_eq!(rejected.retry_after(), Some(Duration::from_millis(3_500)));

    tokio::time::advance(Duration::from_millis(3_500)).await;
    b.try_acquire().unwrap().success();
    assert_eq!(b.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn slow_calls_are_timed_on_the_paused_clock() {
    let config = Config::builder()
        .count_window(2)
        .min_calls(2)
        .slow_calls(Duration::from_millis(800), 1.0)
        .build()
        .unwrap();
    let b = Breaker::new("slow", config);
    for _ in 0..2 {
        let out = b
            .call(async {
                tokio::time::advance(Duration::from_millis(801)).await;
                Ok::<(), std::io::Error>(())
            })
            .await;
        assert!(matches!(out, Ok(Ok(()))));
    }
    let s = b.snapshot();
    assert_eq!((s.state, s.slow_calls, s.failures), (State::Open, 2, 0));
}
