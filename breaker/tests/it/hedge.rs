//! Hedged attempts (`hedge`, `hedges`) on tokio's paused clock: an extra attempt starts at
//! exactly the delay, asks the breaker first, draws from the retry budget; the first success
//! wins and the losers are counted cancelled, never failed.

use std::io;
use std::sync::Mutex;
use std::time::Duration;

use breakerbox::{Breaker, Config};
use tokio::time::{sleep, Instant};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A downstream whose `n`th attempt takes `answers[n].0` ms and succeeds if `answers[n].1`;
/// it notes when each attempt started, from its making.
struct Downstream {
    origin: Instant,
    answers: Vec<(u64, bool)>,
    started: Mutex<Vec<Duration>>,
}

impl Downstream {
    fn new(answers: &[(u64, bool)]) -> Self {
        Self {
            origin: Instant::now(),
            answers: answers.to_vec(),
            started: Mutex::new(Vec::new()),
        }
    }

    async fn call(&self) -> Result<usize, io::Error> {
        let n = {
            let mut started = self.started.lock().unwrap();
            started.push(self.origin.elapsed());
            started.len() - 1
        };
        let (latency, ok) = self.answers[n];
        sleep(ms(latency)).await;
        match ok {
            true => Ok(n),
            false => Err(io::ErrorKind::ConnectionRefused.into()),
        }
    }

    fn started(&self) -> Vec<Duration> {
        self.started.lock().unwrap().clone()
    }
}

fn hedged(delay: u64, hedges: u32) -> Breaker {
    let config = Config::builder()
        .hedge(ms(delay))
        .hedges(hedges)
        .build()
        .unwrap();
    Breaker::new("hedged", config)
}

#[tokio::test(start_paused = true)]
async fn a_hedge_starts_at_exactly_the_delay_and_a_fast_second_attempt_wins() {
    let b = hedged(30, 1);
    let down = Downstream::new(&[(100, true), (10, true)]);
    let out = b.run(|| down.call()).await.unwrap();
    assert_eq!(out.unwrap(), 1, "the second attempt answered first");
    assert_eq!(down.origin.elapsed(), ms(40));
    assert_eq!(down.started(), [ms(0), ms(30)]);
    let totals = b.snapshot().totals;
    // The loser is cancelled, never a failure; the hedge drew from the retry budget.
    assert_eq!(
        (
            totals.success,
            totals.cancelled,
            totals.failure,
            totals.retries
        ),
        (1, 1, 0, 1)
    );
}

#[tokio::test(start_paused = true)]
async fn an_answer_before_the_delay_starts_no_hedge() {
    let b = hedged(30, 2);
    let down = Downstream::new(&[(20, true)]);
    assert_eq!(b.run(|| down.call()).await.unwrap().unwrap(), 0);
    assert_eq!(down.started(), [ms(0)]);
    assert_eq!(b.snapshot().totals.retries, 0);
}

#[tokio::test(start_paused = true)]
async fn a_failed_attempt_cancels_none_of_the_others() {
    let b = hedged(10, 1);
    let down = Downstream::new(&[(20, false), (30, true)]);
    assert_eq!(b.run(|| down.call()).await.unwrap().unwrap(), 1);
    assert_eq!(down.origin.elapsed(), ms(40));
    assert_eq!(down.started(), [ms(0), ms(10)]);
    let totals = b.snapshot().totals;
    assert_eq!(
        (totals.success, totals.failure, totals.cancelled),
        (1, 1, 0)
    );
}

#[tokio::test(start_paused = true)]
async fn when_the_last_running_attempt_fails_the_next_hedge_starts_at_once() {
    let b = hedged(50, 2);
    let down = Downstream::new(&[(10, false), (10, true)]);
    assert_eq!(b.run(|| down.call()).await.unwrap().unwrap(), 1);
    assert_eq!(down.started(), [ms(0), ms(10)]);
    assert_eq!(down.origin.elapsed(), ms(20));
}

#[tokio::test(start_paused = true)]
async fn at_most_hedges_extra_attempts_start_and_the_last_failure_is_returned() {
    let b = hedged(10, 2);
    let down = Downstream::new(&[(100, false), (100, false), (100, false)]);
    let out = b.run(|| down.call()).await.unwrap();
    assert_eq!(out.unwrap_err().kind(), io::ErrorKind::ConnectionRefused);
    assert_eq!(down.started(), [ms(0), ms(10), ms(20)]);
    assert_eq!(
        down.origin.elapsed(),
        ms(120),
        "every attempt was waited for"
    );
    let totals = b.snapshot().totals;
    assert_eq!((totals.failure, totals.retries), (3, 2));
}

#[tokio::test(start_paused = true)]
async fn the_budget_stops_hedging() {
    let config = Config::builder()
        .hedge(ms(30))
        .retry_budget(0.0)
        .retry_floor(0)
        .build()
        .unwrap();
    let b = Breaker::new("hedged", config);
    let down = Downstream::new(&[(100, true), (10, true)]);
    assert_eq!(b.run(|| down.call()).await.unwrap().unwrap(), 0);
    assert_eq!(down.started(), [ms(0)], "no budget, no hedge");
    assert_eq!(down.origin.elapsed(), ms(100));
    assert_eq!(b.snapshot().totals.retries, 0);
}

#[tokio::test(start_paused = true)]
async fn a_rejected_hedge_is_never_started_and_never_a_failure() {
    let b = hedged(30, 1);
    let down = Downstream::new(&[(100, true), (10, true)]);
    let out = b
        .run(|| async {
            // An operator forces the breaker open while the first attempt runs.
            b.force_open();
            down.call().await
        })
        .await
        .unwrap();
    assert_eq!(out.unwrap(), 0, "the first attempt's answer");
    assert_eq!(down.started(), [ms(0)], "the rejected hedge never started");
    let totals = b.snapshot().totals;
    assert_eq!(
        (
            totals.failure,
            totals.rejected,
            totals.rejected_by.forced_open,
            totals.retries
        ),
        (0, 1, 1, 0)
    );
}
