//! Stress: thousands of tokio tasks calling a flaky fake downstream through one breaker,
//! with random cancellation and panics, through `Breaker::call` and through a
//! `#[circuit_breaker]` function. At the end the books balance, and the breaker recovers.
//!
//! Every call is counted by the test itself: a call that reaches the downstream is
//! *admitted*, and ends exactly one way (success, failure, ignored, cancelled, panicked); a
//! call that does not is *rejected*. The breaker's lifetime totals (`Snapshot::totals`) must
//! give the same numbers, ending by ending. Nothing waits on the wall clock: `Breaker::call` runs on a multi-thread
//! runtime with a manual clock the downstream moves, cancelling by racing a few
//! `yield_now`s; the attribute runs on tokio's paused clock, cancelling with
//! `tokio::time::timeout`.

use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Once};
use std::task::{Context, Poll};
use std::time::Duration;

use breakerbox::clock::ManualClock;
use breakerbox::{
    circuit_breaker, events::Event, registry, snapshot::CallTotals, Breaker, Classify, Config,
    Outcome, RejectReason, Rejected, State,
};

const TASKS: u64 = 4_000;
const CALLS_PER_TASK: u64 = 5;

/// xorshift64: a seeded, reproducible stream of numbers, one per task.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Self((seed + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// The payload of the downstream's panics; the panic hook keeps quiet about them.
const PANIC_MARK: &str = "the downstream panicked";

fn quiet_downstream_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<&str>() != Some(&PANIC_MARK) {
                default(info);
            }
        }));
    });
}

/// Runs a future, turning a panic in its `poll` into an `Err`, as `catch_unwind` does for a
/// closure. The panic unwinds through the breaker's call, which drops its permit.
struct CatchUnwind<F>(Pin<Box<F>>);

impl<F: Future> Future for CatchUnwind<F> {
    type Output = std::thread::Result<F::Output>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.0.as_mut();
        match panic::catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(out)) => Poll::Ready(Ok(out)),
            Err(payload) => Poll::Ready(Err(payload)),
        }
    }
}

fn catch_unwind<F: Future>(future: F) -> CatchUnwind<F> {
    CatchUnwind(Box::pin(future))
}

/// What the downstream answers; `Busy` says nothing about its health.
#[derive(Debug)]
enum Reply {
    Ok,
    Unavailable,
    Busy,
}

impl Classify for Reply {
    fn classify(&self) -> Outcome {
        match self {
            Reply::Ok => Outcome::Success,
            Reply::Unavailable => Outcome::Failure,
            Reply::Busy => Outcome::Ignored,
        }
    }
}

/// What one call will meet: the reply, or a panic.
#[derive(Clone, Copy, Debug)]
enum Plan {
    Reply(Outcome),
    Panic,
}

/// The flaky downstream: 70% failures while sick, 3% while healthy; 3% of calls panic and
/// 4% are ignored either way.
fn plan(rng: &mut Rng, sick: bool) -> Plan {
    let roll = rng.below(100);
    let failing = if sick { 70 } else { 3 };
    match roll {
        0..=2 => Plan::Panic,
        3..=6 => Plan::Reply(Outcome::Ignored),
        _ if roll < 7 + failing => Plan::Reply(Outcome::Failure),
        _ => Plan::Reply(Outcome::Success),
    }
}

fn answer(plan: Plan) -> Reply {
    match plan {
        Plan::Reply(Outcome::Success) => Reply::Ok,
        Plan::Reply(Outcome::Failure) => Reply::Unavailable,
        Plan::Reply(Outcome::Ignored) => Reply::Busy,
        Plan::Panic => panic::panic_any(PANIC_MARK),
    }
}

/// The test's own accounting.
#[derive(Debug, Default)]
struct Books {
    /// Calls whose downstream started: the breaker admitted them.
    admitted: AtomicU64,
    success: AtomicU64,
    failure: AtomicU64,
    ignored: AtomicU64,
    cancelled: AtomicU64,
    panicked: AtomicU64,
    rejected: AtomicU64,
}

impl Books {
    fn count(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    fn settled(&self, reply: &Reply) {
        Self::count(match reply.classify() {
            Outcome::Success => &self.success,
            Outcome::Failure => &self.failure,
            Outcome::Ignored => &self.ignored,
        });
    }

    /// Every call is admitted or rejected; every admitted call ended exactly one way; the
    /// breaker's lifetime totals tell the same story, ending by ending.
    fn check(&self, breaker: CallTotals) {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let admitted = get(&self.admitted);
        let ended = get(&self.success)
            + get(&self.failure)
            + get(&self.ignored)
            + get(&self.cancelled)
            + get(&self.panicked);
        println!("{self:?}\n{breaker:?}");
        assert_eq!(
            admitted, ended,
            "admitted = success + failure + ignored + cancelled + panicked"
        );
        assert_eq!(admitted + get(&self.rejected), TASKS * CALLS_PER_TASK);
        // A panic drops its permit while unwinding: the breaker counts a failure.
        assert_eq!(
            (
                breaker.success,
                breaker.failure,
                breaker.ignored,
                breaker.cancelled,
                breaker.rejected,
            ),
            (
                get(&self.success),
                get(&self.failure) + get(&self.panicked),
                get(&self.ignored),
                get(&self.cancelled),
                get(&self.rejected),
            ),
            "the breaker's totals (success, failure, ignored, cancelled, rejected)"
        );
        assert_eq!(breaker.admitted(), admitted);
        for (what, counter) in [
            ("successes", &self.success),
            ("failures", &self.failure),
            ("ignored", &self.ignored),
            ("cancellations", &self.cancelled),
            ("panics", &self.panicked),
            ("rejections", &self.rejected),
        ] {
            assert!(get(counter) > 0, "the run had no {what}");
        }
    }
}

/// Counts the breaker's transitions into OPEN and into CLOSED.
fn count_transitions(b: &Breaker) -> Arc<(AtomicU64, AtomicU64)> {
    let counts = Arc::new((AtomicU64::new(0), AtomicU64::new(0)));
    let seen = counts.clone();
    b.on_event(move |e| {
        if let Event::StateTransition { to, .. } = e {
            match to {
                State::Open => Books::count(&seen.0),
                State::Closed => Books::count(&seen.1),
                _ => {}
            }
        }
    });
    counts
}

/// Once everything has settled, no slot is held, and the breaker recovers: given time, every
/// call is admitted or throttled by the ramp (never rejected as OPEN or as half-open full),
/// and successes bring it back to CLOSED within a bounded number of calls.
async fn recovers<W: Future<Output = ()>>(b: &Breaker, wait: impl Fn() -> W) {
    assert_eq!(b.probes_in_flight(), 0, "nothing is in flight");
    for _ in 0..32 {
        if b.state() == State::Closed {
            return;
        }
        wait().await;
        match b.try_acquire() {
            Ok(permit) => permit.success(),
            Err(rejected) => assert_eq!(
                rejected.reason(),
                RejectReason::Throttled,
                "{:?}: {rejected}",
                b.snapshot()
            ),
        }
    }
    panic!("still {:?} after 32 calls", b.snapshot());
}

/// Yields `n` times, then completes: a cancellation that races the call.
async fn yields(n: u64) {
    for _ in 0..n {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_tasks_through_call_keep_the_books() {
    quiet_downstream_panics();
    let config = Config::builder()
        .count_window(10)
        .min_calls(5)
        .failure_rate(0.5)
        .open_for(Duration::from_millis(5))
        .probes(2)
        .open_backoff(2.0, Duration::from_millis(40))
        .ramp_up(&[25, 50, 100], Duration::from_millis(5))
        .build()
        .unwrap();
    let clock = ManualClock::new();
    let b = Arc::new(Breaker::with_clock(
        "it::stress::call",
        config,
        clock.clone(),
    ));
    let transitions = count_transitions(&b);
    let books = Arc::new(Books::default());

    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            let (b, clock, books) = (b.clone(), clock.clone(), books.clone());
            tokio::spawn(async move {
                let mut rng = Rng::new(task);
                for _ in 0..CALLS_PER_TASK {
                    // Time passes between calls, admitted or not: 1 ms every 4 calls on
                    // average, so about 400 calls fall in each sick or healthy stretch.
                    if rng.below(4) == 0 {
                        clock.advance(Duration::from_millis(1));
                    }
                    // Sick for 100 ms of the manual clock, healthy for the next 300 ms.
                    let sick = clock.elapsed().as_millis() / 100 % 4 == 0;
                    let plan = plan(&mut rng, sick);
                    let (work, cancel_after) = (rng.below(4), rng.below(10));
                    let (ms, downstream_clock) = (rng.below(2), clock.clone());
                    let books_in = books.clone();
                    let downstream = async move {
                        Books::count(&books_in.admitted);
                        yields(work).await;
                        downstream_clock.advance(Duration::from_millis(ms));
                        answer(plan)
                    };
                    // The call is polled first, so it has asked the breaker before any
                    // cancellation: a cancelled call is one that was running.
                    tokio::select! {
                        biased;
                        out = catch_unwind(b.call(downstream)) => match out {
                            Ok(Ok(reply)) => books.settled(&reply),
                            Ok(Err(_rejected)) => Books::count(&books.rejected),
                            Err(_panic) => Books::count(&books.panicked),
                        },
                        () = yields(cancel_after) => Books::count(&books.cancelled),
                    }
                    // Let the other clients in: traffic stays spread over time.
                    tokio::task::yield_now().await;
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("every panic is caught in its call");
    }

    books.check(b.snapshot().totals);
    let (opened, closed) = (&transitions.0, &transitions.1);
    println!("opened {opened:?}, closed {closed:?}");
    assert!(opened.load(Ordering::Relaxed) > 0 && closed.load(Ordering::Relaxed) > 0);
    recovers(&b, || async { clock.advance(Duration::from_secs(1)) }).await;
}

// ---------------------------------------------------------------------------------------
// Through the attribute, on tokio's paused clock
// ---------------------------------------------------------------------------------------

#[derive(Debug)]
enum FetchError {
    Down(Reply),
    Rejected(Rejected),
}

impl Classify for FetchError {
    fn classify(&self) -> Outcome {
        match self {
            FetchError::Down(reply) => reply.classify(),
            FetchError::Rejected(rejected) => rejected.classify(),
        }
    }
}

impl From<Rejected> for FetchError {
    fn from(rejected: Rejected) -> Self {
        FetchError::Rejected(rejected)
    }
}

static ATTRIBUTE_ADMITTED: AtomicU64 = AtomicU64::new(0);

#[circuit_breaker(
    name = "it::stress::fetch",
    window = 10, min = 5, rate = 0.5, open = "5ms", probes = 2,
    backoff = 2.0, open_max = "40ms",
    ramp = [25, 50, 100], ramp_step = "5ms"
)]
async fn fetch(plan: Plan, latency: Duration, started: Arc<AtomicBool>) -> Result<u32, FetchError> {
    ATTRIBUTE_ADMITTED.fetch_add(1, Ordering::Relaxed);
    started.store(true, Ordering::Relaxed);
    tokio::time::sleep(latency).await;
    match answer(plan) {
        Reply::Ok => Ok(7),
        reply => Err(FetchError::Down(reply)),
    }
}

#[tokio::test(start_paused = true)]
async fn thousands_of_tasks_through_the_attribute_keep_the_books() {
    quiet_downstream_panics();
    let start = tokio::time::Instant::now();
    let books = Arc::new(Books::default());

    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            let books = books.clone();
            tokio::spawn(async move {
                let mut rng = Rng::new(1_000_000 + task);
                for _ in 0..CALLS_PER_TASK {
                    // Steady traffic: each client waits up to 2 s between calls, so the 4,000
                    // of them make about 4 calls per millisecond.
                    tokio::time::sleep(Duration::from_millis(rng.below(2000))).await;
                    // Sick for 200 ms of tokio's clock, healthy for the next 200 ms.
                    let sick = (start.elapsed().as_millis() / 200).is_multiple_of(2);
                    let plan = plan(&mut rng, sick);
                    let latency = Duration::from_millis(rng.below(4));
                    // One call in ten has a deadline shorter than some latencies.
                    let deadline = match rng.below(10) {
                        0 => Duration::from_millis(rng.below(4)),
                        _ => Duration::from_secs(3600),
                    };
                    let started = Arc::new(AtomicBool::new(false));
                    let call = catch_unwind(fetch(plan, latency, started.clone()));
                    match tokio::time::timeout(deadline, call).await {
                        Ok(Ok(Ok(_))) => Books::count(&books.success),
                        Ok(Ok(Err(FetchError::Down(reply)))) => books.settled(&reply),
                        Ok(Ok(Err(FetchError::Rejected(rejected)))) => {
                            assert_eq!(rejected.name(), "it::stress::fetch");
                            Books::count(&books.rejected);
                        }
                        Ok(Err(_panic)) => Books::count(&books.panicked),
                        Err(_elapsed) => {
                            // `timeout` polls the call before its deadline: it was running.
                            assert!(started.load(Ordering::Relaxed));
                            Books::count(&books.cancelled);
                        }
                    }
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("every panic is caught in its call");
    }

    let b = registry()
        .get("it::stress::fetch")
        .expect("registered on the first call");
    books.admitted.store(
        ATTRIBUTE_ADMITTED.load(Ordering::Relaxed),
        Ordering::Relaxed,
    );
    books.check(b.snapshot().totals);
    recovers(&b, || tokio::time::advance(Duration::from_secs(1))).await;
}
