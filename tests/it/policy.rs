//! `Breaker::run`: the order of one call (the breaker asked before every attempt, the
//! timeout per attempt, only failures retried), on tokio's paused clock.

use std::cell::Cell;
use std::io;
use std::time::Duration;

use breakerbox::{config::ConfigBuilder, Breaker, CallError, Config, Outcome, RejectReason, State};
use tokio::time::{sleep, Instant};

const TIMEOUT: Duration = Duration::from_millis(800);

/// A breaker whose window never trips in these tests (1,000 calls before it judges).
fn breaker(name: &str, policy: ConfigBuilder) -> Breaker {
    Breaker::new(
        name,
        policy.count_window(1000).min_calls(1000).build().unwrap(),
    )
}

fn refused(attempt: u32) -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionRefused,
        format!("attempt {attempt}"),
    )
}

/// Counts the attempts a closure makes: the runner calls it once per attempt.
#[derive(Default)]
struct Attempts(Cell<u32>);

impl Attempts {
    fn next(&self) -> u32 {
        self.0.set(self.0.get() + 1);
        self.0.get()
    }

    fn made(&self) -> u32 {
        self.0.get()
    }
}

#[tokio::test(start_paused = true)]
async fn a_failed_attempt_is_retried_and_the_retry_answers() {
    let b = breaker("policy::blip", Config::builder().retries(2));
    let attempts = Attempts::default();
    let out = b
        .run(|| {
            let n = attempts.next();
            async move {
                if n == 1 {
                    Err(refused(n))
                } else {
                    Ok(n)
                }
            }
        })
        .await;
    assert_eq!(out.unwrap().unwrap(), 2);
    let t = b.snapshot().totals;
    assert_eq!((t.failure, t.success, t.retries), (1, 1, 1));
}

#[tokio::test(start_paused = true)]
async fn retries_stop_at_retries_and_the_last_failure_is_returned() {
    let b = breaker("policy::stop", Config::builder().retries(3));
    let attempts = Attempts::default();
    let out = b
        .run(|| {
            let n = attempts.next();
            async move { Err::<(), _>(refused(n)) }
        })
        .await;
    assert_eq!(out.unwrap().unwrap_err().to_string(), "attempt 4");
    assert_eq!(attempts.made(), 4);
    let t = b.snapshot().totals;
    assert_eq!((t.failure, t.retries, t.retry_budget_exhausted), (4, 3, 0));
}

#[tokio::test(start_paused = true)]
async fn no_retry_after_a_success_a_business_error_or_an_ignored_outcome() {
    let b = breaker("policy::answers", Config::builder().retries(3));
    for (kind, outcome) in [
        (io::ErrorKind::NotFound, Outcome::Success),
        (io::ErrorKind::Interrupted, Outcome::Ignored),
    ] {
        let attempts = Attempts::default();
        let out = b
            .run(|| {
                attempts.next();
                async move { Err::<(), _>(io::Error::from(kind)) }
            })
            .await;
        assert_eq!(out.unwrap().unwrap_err().kind(), kind, "{outcome:?}");
        assert_eq!(attempts.made(), 1, "{kind:?} is {outcome:?}: not retried");
    }
    let attempts = Attempts::default();
    let ok = b
        .run(|| async { Ok::<_, io::Error>(attempts.next()) })
        .await;
    assert_eq!(ok.unwrap().unwrap(), 1);
    let t = b.snapshot().totals;
    assert_eq!((t.success, t.ignored, t.failure, t.retries), (2, 1, 0, 0));
}

#[tokio::test(start_paused = true)]
async fn a_classifier_decides_what_is_retried() {
    let b = breaker("policy::classifier", Config::builder().retries(1));
    let attempts = Attempts::default();
    let status = b
        .run_with(
            || {
                let n = attempts.next();
                async move {
                    if n == 1 {
                        503_u16
                    } else {
                        200
                    }
                }
            },
            |s| {
                if *s >= 500 {
                    Outcome::Failure
                } else {
                    Outcome::Success
                }
            },
        )
        .await;
    assert_eq!(status.unwrap(), 200);
    assert_eq!(attempts.made(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_rejected_first_attempt_is_counted_only_as_rejected() {
    let b = breaker("policy::rejected", Config::builder().retries(2));
    b.force_open();
    let attempts = Attempts::default();
    let out = b
        .run(|| {
            attempts.next();
            async { Ok::<_, io::Error>(()) }
        })
        .await;
    let Err(CallError::Rejected(rejected)) = out else {
        panic!("{out:?}")
    };
    assert_eq!(rejected.reason(), RejectReason::ForcedOpen);
    assert_eq!(attempts.made(), 0);
    let t = b.snapshot().totals;
    assert_eq!(
        (
            t.rejected,
            t.admitted(),
            t.retries,
            t.retry_budget_exhausted
        ),
        (1, 0, 0, 0)
    );
}

/// Seed 000: the breaker is asked before each retry; another task that opened it in the
/// meantime stops the retry, and the rejected retry is not a failure.
#[tokio::test(start_paused = true)]
async fn a_breaker_opened_by_another_task_between_attempts_stops_the_retry() {
    let config = Config::builder()
        .count_window(2)
        .min_calls(2)
        .failure_rate(1.0)
        .retries(2)
        .build()
        .unwrap();
    let b = breaker_with(config);
    let attempts = Attempts::default();
    let call = b.run(|| {
        let n = attempts.next();
        async move {
            sleep(Duration::from_millis(10)).await;
            Err::<(), _>(refused(n))
        }
    });
    // Two failures of another caller open the breaker while the first attempt runs.
    let other = async {
        sleep(Duration::from_millis(5)).await;
        for n in 0..2 {
            b.try_acquire().unwrap().record(Outcome::Failure);
            assert_eq!(b.state() == State::Open, n == 1);
        }
    };
    let (out, ()) = tokio::join!(call, other);
    let Err(CallError::Rejected(rejected)) = out else {
        panic!("{out:?}")
    };
    assert_eq!(rejected.reason(), RejectReason::Open);
    assert_eq!(attempts.made(), 1, "the retry never ran");
    let t = b.snapshot().totals;
    assert_eq!((t.failure, t.rejected, t.retries), (3, 1, 0));
    assert_eq!(
        b.snapshot().failures,
        2,
        "the rejection is not in the window"
    );
}

fn breaker_with(config: Config) -> Breaker {
    Breaker::new("policy::opened_between", config)
}

#[tokio::test(start_paused = true)]
async fn an_attempt_past_its_timeout_is_a_failure_never_a_cancellation() {
    let b = breaker("policy::timeout", Config::builder().timeout(TIMEOUT));
    let start = Instant::now();
    let out = b
        .run(|| async {
            sleep(Duration::from_secs(5)).await;
            Ok::<_, io::Error>(())
        })
        .await;
    assert_eq!(start.elapsed(), TIMEOUT);
    let Err(CallError::TimedOut(timed_out)) = out else {
        panic!("{out:?}")
    };
    assert_eq!(
        timed_out.to_string(),
        "call to 'policy::timeout' timed out after 800ms"
    );
    assert_eq!(
        (timed_out.name(), timed_out.limit()),
        ("policy::timeout", TIMEOUT)
    );
    let t = b.snapshot().totals;
    assert_eq!((t.failure, t.cancelled), (1, 0));
}

#[tokio::test(start_paused = true)]
async fn an_attempt_within_its_timeout_returns_its_output() {
    let b = breaker("policy::in_time", Config::builder().timeout(TIMEOUT));
    let start = Instant::now();
    let out = b
        .run(|| async {
            sleep(TIMEOUT - Duration::from_millis(1)).await;
            Ok::<_, io::Error>("Dune")
        })
        .await;
    assert_eq!(out.unwrap().unwrap(), "Dune");
    assert_eq!(start.elapsed(), TIMEOUT - Duration::from_millis(1));
    assert_eq!(b.snapshot().totals.success, 1);
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_attempt_counts_as_slow_when_slow_calls_are_judged() {
    let policy = Config::builder()
        .timeout(TIMEOUT)
        .slow_calls(Duration::from_millis(500), 1.0);
    let b = breaker("policy::slow", policy);
    let out = b.run(std::future::pending::<Result<(), io::Error>>).await;
    assert!(matches!(out, Err(CallError::TimedOut(_))));
    let s = b.snapshot();
    assert_eq!((s.calls, s.failures, s.slow_calls), (1, 1, 1));
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_probe_frees_its_slot_and_reopens_the_breaker() {
    let config = Config::builder()
        .count_window(1)
        .probes(1)
        .open_for(Duration::from_secs(5))
        .timeout(TIMEOUT)
        .build()
        .unwrap();
    let b = Breaker::new("policy::probe", config);
    b.try_acquire().unwrap().failure();
    tokio::time::advance(Duration::from_secs(5)).await;
    let out = b.run(std::future::pending::<Result<(), io::Error>>).await;
    assert!(matches!(out, Err(CallError::TimedOut(_))));
    assert_eq!(b.probes_in_flight(), 0);
    assert_eq!(b.state(), State::Open, "a failed probe reopens at once");
    assert_eq!(b.snapshot().totals.cancelled, 0);
}

#[tokio::test(start_paused = true)]
async fn the_last_attempt_timing_out_is_a_timed_out_error() {
    let policy = Config::builder()
        .timeout(TIMEOUT)
        .retries(2)
        .retry_backoff(Duration::ZERO);
    let b = breaker("policy::all_hung", policy);
    let attempts = Attempts::default();
    let start = Instant::now();
    let out = b
        .run(|| {
            attempts.next();
            std::future::pending::<Result<(), io::Error>>()
        })
        .await;
    assert_eq!(start.elapsed(), TIMEOUT * 3);
    assert_eq!(
        out.unwrap_err().to_string(),
        "call to 'policy::all_hung' timed out after 800ms"
    );
    assert_eq!(attempts.made(), 3);
    let t = b.snapshot().totals;
    assert_eq!((t.failure, t.cancelled, t.retries), (3, 0, 2));
}

#[tokio::test(start_paused = true)]
async fn a_retry_after_a_timeout_returns_its_own_output() {
    let policy = Config::builder()
        .timeout(TIMEOUT)
        .retries(1)
        .retry_backoff(Duration::ZERO);
    let b = breaker("policy::hung_once", policy);
    let attempts = Attempts::default();
    let out = b
        .run(|| {
            let n = attempts.next();
            async move {
                if n == 1 {
                    std::future::pending::<()>().await;
                }
                Ok::<_, io::Error>(n)
            }
        })
        .await;
    assert_eq!(out.unwrap().unwrap(), 2);
    let t = b.snapshot().totals;
    assert_eq!((t.failure, t.success, t.retries), (1, 1, 1));
}

#[tokio::test(start_paused = true)]
async fn reconfigure_changes_the_policy_of_the_next_call() {
    let b = breaker("policy::reconfigured", Config::builder());
    let attempts = Attempts::default();
    let failing = || {
        let n = attempts.next();
        async move { Err::<(), _>(refused(n)) }
    };
    let _ = b.run(failing).await;
    assert_eq!(attempts.made(), 1, "no retries configured");

    b.reconfigure(
        Config::builder()
            .count_window(1000)
            .min_calls(1000)
            .retries(2)
            .retry_backoff(Duration::ZERO)
            .build()
            .unwrap(),
    );
    let _ = b.run(failing).await;
    assert_eq!(attempts.made(), 4, "two retries now");

    b.reconfigure(
        Config::builder()
            .timeout(Duration::from_millis(100))
            .build()
            .unwrap(),
    );
    let start = Instant::now();
    let out = b.run(std::future::pending::<Result<(), io::Error>>).await;
    assert_eq!(start.elapsed(), Duration::from_millis(100));
    assert_eq!(
        out.unwrap_err().timed_out().unwrap().limit(),
        Duration::from_millis(100)
    );
}

#[tokio::test(start_paused = true)]
async fn a_panicking_attempt_is_a_failure() {
    let b = std::sync::Arc::new(breaker("policy::panic", Config::builder().retries(1)));
    let shared = b.clone();
    let joined = tokio::spawn(async move {
        shared
            .run(|| async { panic!("the attempt panics") as Result<(), io::Error> })
            .await
    })
    .await;
    assert!(joined.unwrap_err().is_panic());
    let t = b.snapshot().totals;
    assert_eq!((t.failure, t.cancelled, t.retries), (1, 0, 0));
}

#[tokio::test(start_paused = true)]
async fn a_dropped_call_cancels_its_attempt_in_flight() {
    let b = breaker("policy::dropped", Config::builder().retries(1));
    let call = b.run(std::future::pending::<Result<(), io::Error>>);
    let raced = tokio::time::timeout(Duration::from_secs(1), call).await;
    assert!(raced.is_err());
    let t = b.snapshot().totals;
    assert_eq!((t.cancelled, t.failure), (1, 0));
}

#[test]
fn the_call_future_is_send() {
    fn send<T: Send>(_: T) {}
    let b = Breaker::new("policy::send", Config::default());
    send(b.run(|| async { Ok::<_, io::Error>(1) }));
    send(b.run_with(|| async { 503_u16 }, |_| Outcome::Failure));
}
