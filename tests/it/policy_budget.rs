//! The retry budget and the backoff of `Breaker::run`, on tokio's paused clock (and the
//! budget on a manual clock, the breaker's own).

use std::cell::RefCell;
use std::io;
use std::time::Duration;

use breakerbox::clock::ManualClock;
use breakerbox::{config::ConfigBuilder, Breaker, CallError, Config, RejectReason};
use tokio::time::{sleep, Instant};

/// A breaker whose window never trips in these tests.
fn breaker(name: &str, policy: ConfigBuilder) -> Breaker {
    let config = policy
        .count_window(100_000)
        .min_calls(100_000)
        .build()
        .unwrap();
    Breaker::new(name, config)
}

/// Runs `calls` calls whose every attempt fails.
async fn failing_calls(b: &Breaker, calls: u32) {
    for _ in 0..calls {
        let out = b
            .run(|| async { Err::<(), _>(io::Error::from(io::ErrorKind::ConnectionRefused)) })
            .await;
        assert!(matches!(out, Ok(Err(_))));
    }
}

fn retries_and_exhausted(b: &Breaker) -> (u64, u64) {
    let t = b.snapshot().totals;
    (t.retries, t.retry_budget_exhausted)
}

#[tokio::test(start_paused = true)]
async fn a_budget_of_two_tenths_allows_twenty_retries_for_a_hundred_failing_calls() {
    let policy = Config::builder()
        .retries(3)
        .retry_backoff(Duration::ZERO)
        .retry_budget(0.2)
        .retry_floor(0);
    let b = breaker("budget::two_tenths", policy);
    failing_calls(&b, 100).await;
    // Every call ends refused by the budget, after its first attempt or its one retry.
    assert_eq!(retries_and_exhausted(&b), (20, 100));
    assert_eq!(b.snapshot().totals.failure, 120);
}

#[tokio::test(start_paused = true)]
async fn a_budget_of_three_tenths_allows_exactly_thirty_retries_not_a_third() {
    let policy = Config::builder()
        .retries(3)
        .retry_backoff(Duration::ZERO)
        .retry_budget(0.3)
        .retry_floor(0);
    let b = breaker("budget::three_tenths", policy);
    failing_calls(&b, 100).await;
    assert_eq!(retries_and_exhausted(&b).0, 30);
    assert_eq!(b.snapshot().totals.failure, 130);
}

#[tokio::test(start_paused = true)]
async fn the_floor_lets_a_quiet_breaker_retry_ten_seconds_of_its_rate() {
    let policy = Config::builder()
        .retries(1)
        .retry_backoff(Duration::ZERO)
        .retry_budget(0.0)
        .retry_floor(1);
    let b = breaker("budget::floor", policy);
    failing_calls(&b, 15).await;
    assert_eq!(retries_and_exhausted(&b), (10, 5));
    // The retries of second 0 are forgotten at second 10, not before.
    tokio::time::advance(Duration::from_millis(9_999)).await;
    failing_calls(&b, 1).await;
    assert_eq!(retries_and_exhausted(&b), (10, 6));
    tokio::time::advance(Duration::from_millis(1)).await;
    failing_calls(&b, 1).await;
    assert_eq!(retries_and_exhausted(&b), (11, 6));
}

#[tokio::test(start_paused = true)]
async fn the_budget_counts_on_the_breakers_own_clock() {
    let config = Config::builder()
        .count_window(1000)
        .min_calls(1000)
        .retries(1)
        .retry_backoff(Duration::ZERO)
        .retry_budget(0.0)
        .retry_floor(1)
        .build()
        .unwrap();
    let clock = ManualClock::new();
    let b = Breaker::with_clock("budget::manual", config, clock.clone());
    failing_calls(&b, 11).await;
    assert_eq!(retries_and_exhausted(&b), (10, 1));
    // Tokio's clock moving on changes nothing; the breaker's does.
    tokio::time::advance(Duration::from_secs(60)).await;
    failing_calls(&b, 1).await;
    assert_eq!(retries_and_exhausted(&b), (10, 2));
    clock.advance(Duration::from_secs(10));
    failing_calls(&b, 1).await;
    assert_eq!(retries_and_exhausted(&b), (11, 2));
}

#[tokio::test(start_paused = true)]
async fn a_retry_the_breaker_rejects_gives_its_budget_back() {
    let policy = Config::builder()
        .retries(1)
        .retry_backoff(Duration::ZERO)
        .retry_budget(0.0)
        .retry_floor(1);
    let b = breaker("budget::refund", policy);
    let call = b.run(|| async {
        sleep(Duration::from_millis(10)).await;
        Err::<(), _>(io::Error::from(io::ErrorKind::ConnectionRefused))
    });
    let operator = async {
        sleep(Duration::from_millis(5)).await;
        b.force_open();
    };
    let (out, ()) = tokio::join!(call, operator);
    let Err(CallError::Rejected(rejected)) = out else {
        panic!("{out:?}")
    };
    assert_eq!(rejected.reason(), RejectReason::ForcedOpen);
    assert_eq!(
        retries_and_exhausted(&b),
        (0, 0),
        "a rejected retry is no retry"
    );
    b.reset();
    // All ten retries of the floor are left.
    failing_calls(&b, 11).await;
    assert_eq!(retries_and_exhausted(&b), (10, 1));
}

#[tokio::test(start_paused = true)]
async fn backoff_delays_stay_within_their_jitter_bounds() {
    const BASE: Duration = Duration::from_millis(20);
    let policy = Config::builder()
        .retries(3)
        .retry_backoff(BASE)
        .retry_budget(1.0)
        .retry_floor(10_000);
    let b = breaker("budget::backoff", policy);
    // The waits before retries 1, 2 and 3 of every call.
    let mut waits: [Vec<Duration>; 3] = Default::default();
    for _ in 0..300 {
        let starts = RefCell::new(Vec::new());
        let _ = b
            .run(|| {
                starts.borrow_mut().push(Instant::now());
                async { Err::<(), _>(io::Error::from(io::ErrorKind::ConnectionRefused)) }
            })
            .await;
        let starts = starts.into_inner();
        assert_eq!(starts.len(), 4);
        for (retry, pair) in starts.windows(2).enumerate() {
            waits[retry].push(pair[1] - pair[0]);
        }
    }
    for (retry, waits) in waits.iter().enumerate() {
        let ceiling = BASE * (1 << retry);
        let longest = *waits.iter().max().unwrap();
        let shortest = *waits.iter().min().unwrap();
        assert!(longest <= ceiling, "retry {}: {longest:?}", retry + 1);
        // 300 uniform draws: the longest is past 90% of the ceiling, the shortest below 10%,
        // but for one chance in 10^13.
        assert!(
            longest > ceiling * 9 / 10,
            "retry {}: {longest:?}",
            retry + 1
        );
        assert!(shortest < ceiling / 10, "retry {}: {shortest:?}", retry + 1);
    }
    assert_eq!(b.snapshot().totals.retries, 900);
}

#[tokio::test(start_paused = true)]
async fn a_zero_backoff_retries_at_once() {
    let policy = Config::builder().retries(5).retry_backoff(Duration::ZERO);
    let b = breaker("budget::at_once", policy);
    let start = Instant::now();
    failing_calls(&b, 3).await;
    assert_eq!(start.elapsed(), Duration::ZERO);
    assert_eq!(b.snapshot().totals.retries, 15);
}

/// Polls `call` once, as a caller that gives up at once does: it must be waiting then.
async fn give_up_after_one_poll<F: std::future::Future>(call: F) {
    let mut call = std::pin::pin!(call);
    let polled = std::future::poll_fn(|cx| std::task::Poll::Ready(call.as_mut().poll(cx))).await;
    assert!(polled.is_pending(), "the call is waiting");
}

#[tokio::test(start_paused = true)]
async fn a_call_dropped_in_its_backoff_gives_its_retry_back() {
    let policy = Config::builder()
        .retries(1)
        .retry_backoff(Duration::from_secs(1))
        .retry_budget(0.0)
        .retry_floor(1);
    let b = breaker("budget::dropped_in_backoff", policy);
    // Ten callers give up while their call waits before its retry: no retry starts.
    for _ in 0..10 {
        give_up_after_one_poll(
            b.run(|| async { Err::<(), _>(io::Error::from(io::ErrorKind::ConnectionRefused)) }),
        )
        .await;
    }
    assert_eq!(retries_and_exhausted(&b), (0, 0));
    assert_eq!(b.snapshot().totals.failure, 10);
    // The eleventh still has the floor's retries.
    failing_calls(&b, 1).await;
    assert_eq!(retries_and_exhausted(&b), (1, 0));
    assert_eq!(b.snapshot().totals.failure, 12);
}

#[tokio::test(start_paused = true)]
async fn backoff_delays_stop_doubling_at_retry_backoff_max() {
    const BASE: Duration = Duration::from_millis(20);
    const MAX: Duration = Duration::from_millis(50);
    let policy = Config::builder()
        .retries(4)
        .retry_backoff(BASE)
        .retry_backoff_max(MAX)
        .retry_budget(1.0)
        .retry_floor(10_000);
    let b = breaker("budget::backoff_max", policy);
    // The waits before retries 1 to 4 of every call.
    let mut waits: [Vec<Duration>; 4] = Default::default();
    for _ in 0..300 {
        let starts = RefCell::new(Vec::new());
        let _ = b
            .run(|| {
                starts.borrow_mut().push(Instant::now());
                async { Err::<(), _>(io::Error::from(io::ErrorKind::ConnectionRefused)) }
            })
            .await;
        for (retry, pair) in starts.into_inner().windows(2).enumerate() {
            waits[retry].push(pair[1] - pair[0]);
        }
    }
    // Drawn from [0, min(50ms, 20ms * 2^(n-1))]: 20, 40, 50, 50 ms.
    for (retry, ceiling) in [BASE, BASE * 2, MAX, MAX].into_iter().enumerate() {
        let longest = *waits[retry].iter().max().unwrap();
        assert!(longest <= ceiling, "retry {}: {longest:?}", retry + 1);
        // 300 uniform draws: the longest is past 90% of the ceiling but for one chance in
        // 10^13.
        assert!(
            longest > ceiling * 9 / 10,
            "retry {}: {longest:?}",
            retry + 1
        );
    }
}
