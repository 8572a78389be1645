//! The breaker against its Rust peers, path by path, in one criterion run.
//!
//! Every breaker is configured alike: a count window of 20 calls, judged from 10 on, opening
//! at a failure rate of 0.5, open for 5s, 3 half-open probes. Where a peer lacks a setting,
//! its nearest equivalent is used and said below. Each closure consumes the call's result in
//! a statement instead of returning it (a `black_box`ed `Result` costs several nanoseconds
//! of its own). References bound what is possible: no breaker at all, one
//! `AtomicU64::fetch_add` (all successes), and one `AtomicU64::swap` or compare-and-swap a
//! call (one failure in ten).
//!
//! Run with `cargo bench -p breaker-benches --bench peers`; `benches/README.md` has the table of one run.

use std::hint::black_box;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use std::thread;
use std::time::{Duration, Instant};

use breakerbox::__private::{Name, StaticKeyed};
use breakerbox::clock::{Clock, MonotonicClock};
use breakerbox::{circuit_breaker, Breaker, Classify, Config};
use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion};
use failsafe::CircuitBreaker as _;
use tower::{Service, ServiceExt};

mod common;

#[path = "common/asynchronous.rs"]
mod asynchronous;

use asynchronous::{block_on, PolicyDown};
use common::{
    call_failsafe, call_ours, call_recloser, downstream, failsafe_consecutive, ours, recloser,
    Down, Mix, MIN_CALLS, OPEN, PROBES, RATE, WINDOW,
};

/// Breakers measured while open stay open for the whole run.
const OPEN_LONG: Duration = Duration::from_secs(3600);

// ---- the breakers under test, built alike ----

/// Ours with a time window of 10s in 10 buckets.
fn ours_timed() -> Breaker {
    let config = Config::builder()
        .time_window(Duration::from_secs(10), 10)
        .min_calls(MIN_CALLS)
        .failure_rate(RATE)
        .open_for(OPEN)
        .probes(PROBES)
        .build()
        .unwrap();
    Breaker::with_clock("bench", config, MonotonicClock)
}

type FailsafeRate = failsafe::StateMachine<
    failsafe::failure_policy::SuccessRateOverTimeWindow<failsafe::backoff::Constant>,
    (),
>;

/// failsafe's second policy: a success rate of 0.5 over a 10s time window, from 10 calls on.
fn failsafe_rate(open: Duration) -> FailsafeRate {
    let policy = failsafe::failure_policy::success_rate_over_time_window(
        1.0 - RATE,
        MIN_CALLS,
        Duration::from_secs(10),
        failsafe::backoff::constant(open),
    );
    failsafe::Config::new().failure_policy(policy).build()
}

type CbRs = circuitbreaker_rs::CircuitBreaker<circuitbreaker_rs::DefaultPolicy, Down>;

/// circuitbreaker-rs counts since the last reset, not over a window; 3 probes.
fn cbrs(open: Duration) -> CbRs {
    CbRs::builder()
        .failure_threshold(RATE)
        .min_throughput(u64::from(MIN_CALLS))
        .cooldown(open)
        .probe_interval(PROBES)
        .build()
}

#[inline(always)]
fn call_cbrs(c: &CbRs, fail: bool) {
    let _ = c.call(|| downstream(fail));
}

/// tower-resilience-circuitbreaker is a tower layer: measured through `Service`, with a
/// trivial inner service.
/// The registry's `breaker` (2.0.2): a failure-rate window of 20 calls judged from 10 on, 3
/// half-open calls, as ours.
fn registry_breaker(open: Duration) -> registry_breaker::CircuitBreaker {
    let config = registry_breaker::CircuitBreakerConfig::builder()
        .sliding_window_size(WINDOW)
        .minimum_calls(MIN_CALLS)
        .failure_rate_threshold(RATE as f32)
        .wait_duration(open)
        .half_open_max_calls(PROBES)
        .build();
    registry_breaker::CircuitBreaker::new(config)
}

/// One call through the registry's `breaker`, whose only call is async; nothing waits.
#[inline(always)]
fn call_registry_breaker(r: &registry_breaker::CircuitBreaker, fail: bool) {
    if let Ok(v) = block_on(r.call(|| async move { downstream(fail) })) {
        black_box(v);
    }
}

fn tower_breaker(
    open: Duration,
    timed: bool,
) -> impl Service<bool, Response = u64, Error = impl Sized> + Clone + Send {
    let mut builder = tower_resilience_circuitbreaker::CircuitBreakerLayer::builder()
        .failure_rate_threshold(RATE)
        .sliding_window_size(WINDOW as usize)
        .minimum_number_of_calls(MIN_CALLS as usize)
        .wait_duration_in_open(open)
        .permitted_calls_in_half_open(PROBES as usize);
    if timed {
        builder = builder
            .sliding_window_type(tower_resilience_circuitbreaker::SlidingWindowType::TimeBased)
            .sliding_window_duration(Duration::from_secs(10));
    }
    let svc = tower::service_fn(|fail: bool| async move {
        if black_box(fail) {
            Err(io::Error::other("down"))
        } else {
            Ok(black_box(1u64))
        }
    });
    builder.build().unwrap().layer_fn(svc)
}

#[inline(always)]
fn call_tower<S: Service<bool, Response = u64>>(svc: &mut S, fail: bool) {
    block_on(async {
        if let Ok(ready) = svc.ready().await {
            if let Ok(v) = ready.call(fail).await {
                black_box(v);
            }
        }
    });
}

// ---- paths ----

/// Closed breakers, all successes or one failure in ten.
fn closed(c: &mut Criterion, name: &str, mixed: bool) {
    let mut g = c.benchmark_group(name);
    let fail = move |m: &mut Mix| mixed && m.next();
    g.bench_function("no breaker", |b| {
        let mut m = Mix(0);
        b.iter(|| {
            if let Ok(v) = downstream(fail(&mut m)) {
                black_box(v);
            }
        })
    });
    if !mixed {
        let counter = AtomicU64::new(0);
        g.bench_function("one fetch_add", |b| {
            b.iter(|| {
                counter.fetch_add(1, Ordering::Relaxed);
            })
        });
    } else {
        // The least an exact window shared by threads costs: every result that changes it is
        // one compare-and-swap of a word read just before.
        let ring = AtomicU64::new(0);
        g.bench_function("one compare-and-swap", |b| {
            let mut m = Mix(0);
            b.iter(|| {
                let failed = downstream(fail(&mut m)).is_err();
                let current = ring.load(Ordering::Relaxed);
                let next = current << 1 | u64::from(failed);
                let _ = ring.compare_exchange(current, next, Ordering::AcqRel, Ordering::Relaxed);
            })
        });
        // The reference this path is held to: one uncontended `AtomicU64::swap` a call, in
        // a loop of nothing else; then the same swap after the call every row makes (the
        // downstream and the mix of failures), the least a breaker that writes one word a
        // call could measure here.
        let word = AtomicU64::new(0);
        g.bench_function("one swap", |b| {
            b.iter(|| {
                word.swap(1, Ordering::AcqRel);
            })
        });
        g.bench_function("the call and one swap", |b| {
            let mut m = Mix(0);
            b.iter(|| {
                if let Ok(v) = downstream(fail(&mut m)) {
                    black_box(v);
                }
                word.swap(1, Ordering::AcqRel);
            })
        });
    }
    let ours = ours(OPEN);
    g.bench_function("breaker", |b| {
        let mut m = Mix(0);
        b.iter(|| call_ours(&ours, fail(&mut m)))
    });
    let r = recloser(OPEN);
    g.bench_function("recloser", |b| {
        let mut m = Mix(0);
        b.iter(|| call_recloser(&r, fail(&mut m)))
    });
    let f = failsafe_consecutive(OPEN);
    g.bench_function("failsafe consecutive", |b| {
        let mut m = Mix(0);
        b.iter(|| call_failsafe(&f, fail(&mut m)))
    });
    let f = failsafe_rate(OPEN);
    g.bench_function("failsafe rate window", |b| {
        let mut m = Mix(0);
        b.iter(|| call_failsafe(&f, fail(&mut m)))
    });
    let cb = cbrs(OPEN);
    g.bench_function("circuitbreaker-rs", |b| {
        let mut m = Mix(0);
        b.iter(|| call_cbrs(&cb, fail(&mut m)))
    });
    let mut t = tower_breaker(OPEN, false);
    g.bench_function("tower-resilience", |b| {
        let mut m = Mix(0);
        b.iter(|| call_tower(&mut t, fail(&mut m)))
    });
    g.finish();
}

fn closed_success(c: &mut Criterion) {
    closed(c, "closed success", false);
}

fn closed_mixed(c: &mut Criterion) {
    closed(c, "closed 10% failures", true);
}

/// Fails calls until `rejects` says the breaker rejects.
fn trip(mut call: impl FnMut() -> bool) {
    for _ in 0..1000 {
        if call() {
            return;
        }
    }
    panic!("the breaker did not open");
}

/// Open breakers rejecting every call.
fn open(c: &mut Criterion) {
    let mut g = c.benchmark_group("open rejection");
    let ours = ours(OPEN_LONG);
    trip(|| {
        call_ours(&ours, true);
        ours.try_acquire().is_err()
    });
    // The least a rejection that looks at the time costs: one reading of the production clock.
    g.bench_function("MonotonicClock reading", |b| {
        b.iter(|| {
            black_box(MonotonicClock.now());
        })
    });
    g.bench_function("breaker", |b| b.iter(|| call_ours(&ours, false)));
    let r = recloser(OPEN_LONG);
    trip(|| matches!(r.call(|| downstream(true)), Err(recloser::Error::Rejected)));
    g.bench_function("recloser", |b| b.iter(|| call_recloser(&r, false)));
    let f = failsafe_consecutive(OPEN_LONG);
    trip(|| matches!(f.call(|| downstream(true)), Err(failsafe::Error::Rejected)));
    g.bench_function("failsafe consecutive", |b| {
        b.iter(|| call_failsafe(&f, false))
    });
    let cb = cbrs(OPEN_LONG);
    trip(|| {
        matches!(
            cb.call(|| downstream(true)),
            Err(circuitbreaker_rs::BreakerError::Open)
        )
    });
    g.bench_function("circuitbreaker-rs", |b| b.iter(|| call_cbrs(&cb, false)));
    let mut t = tower_breaker(OPEN_LONG, false);
    trip(|| {
        call_tower(&mut t, true);
        block_on(async {
            match t.ready().await {
                Ok(ready) => ready.call(false).await.is_err(),
                Err(_) => true,
            }
        })
    });
    g.bench_function("tower-resilience", |b| b.iter(|| call_tower(&mut t, false)));
    let rb = registry_breaker(OPEN_LONG);
    trip(|| {
        call_registry_breaker(&rb, true);
        rb.is_open()
    });
    g.bench_function("registry breaker", |b| {
        b.iter(|| call_registry_breaker(&rb, false))
    });
    // failsafe's rate window opens only once it has seen a whole window (10s) of calls.
    g.finish();
}

/// Two threads calling one breaker; the time is per call of each thread.
fn contended<T: Sync>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    shared: &T,
    call: impl Fn(&T, bool) + Sync,
) {
    g.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            thread::scope(|s| {
                for _ in 0..2 {
                    s.spawn(|| {
                        for _ in 0..iters {
                            call(shared, false);
                        }
                    });
                }
            });
            start.elapsed()
        })
    });
}

fn two_threads(c: &mut Criterion) {
    let mut g = c.benchmark_group("2 threads, closed success");
    contended(&mut g, "no breaker", &(), |_, fail| {
        if let Ok(v) = downstream(fail) {
            black_box(v);
        }
    });
    let counter = AtomicU64::new(0);
    contended(&mut g, "one fetch_add", &counter, |c, _| {
        c.fetch_add(1, Ordering::Relaxed);
    });
    contended(&mut g, "breaker", &ours(OPEN), call_ours);
    contended(&mut g, "recloser", &recloser(OPEN), call_recloser);
    contended(
        &mut g,
        "failsafe consecutive",
        &failsafe_consecutive(OPEN),
        call_failsafe,
    );
    contended(
        &mut g,
        "failsafe rate window",
        &failsafe_rate(OPEN),
        call_failsafe,
    );
    contended(&mut g, "circuitbreaker-rs", &cbrs(OPEN), call_cbrs);
    contended(
        &mut g,
        "registry breaker",
        &registry_breaker(OPEN),
        call_registry_breaker,
    );
    // Each thread holds its own handle of one shared circuit, as tower services are cloned.
    let t = tower_breaker(OPEN, false);
    g.bench_function("tower-resilience", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            thread::scope(|s| {
                for _ in 0..2 {
                    let mut t = t.clone();
                    s.spawn(move || {
                        for _ in 0..iters {
                            call_tower(&mut t, false);
                        }
                    });
                }
            });
            start.elapsed()
        })
    });
    g.finish();
}

/// Time windows: ours (10s in 10 buckets) against the peers that have one.
fn time_window(c: &mut Criterion) {
    for (name, mixed) in [
        ("time window, closed success", false),
        ("time window, 10% failures", true),
    ] {
        let mut g = c.benchmark_group(name);
        let fail = move |m: &mut Mix| mixed && m.next();
        let ours = ours_timed();
        g.bench_function("breaker", |b| {
            let mut m = Mix(0);
            b.iter(|| call_ours(&ours, fail(&mut m)))
        });
        let f = failsafe_rate(OPEN);
        g.bench_function("failsafe rate window", |b| {
            let mut m = Mix(0);
            b.iter(|| call_failsafe(&f, fail(&mut m)))
        });
        // No time window: its consecutive-failures rule, the nearest of its cheap policies.
        let fc = failsafe_consecutive(OPEN);
        g.bench_function("failsafe consecutive", |b| {
            let mut m = Mix(0);
            b.iter(|| call_failsafe(&fc, fail(&mut m)))
        });
        let mut t = tower_breaker(OPEN, true);
        g.bench_function("tower-resilience", |b| {
            let mut m = Mix(0);
            b.iter(|| call_tower(&mut t, fail(&mut m)))
        });
        g.finish();
    }
}

// ---- the attribute against the same calls by hand ----

async fn downstream_async(n: u64) -> Result<u64, Down> {
    Ok(black_box(n) + 1)
}

#[circuit_breaker(window = 20, min = 10, rate = 0.5, open = "5s", probes = 3)]
async fn annotated(n: u64) -> Result<u64, Down> {
    downstream_async(n).await
}

#[circuit_breaker(window = 20, min = 10, rate = 0.5, open = "5s", probes = 3, key = host)]
async fn annotated_keyed(host: &str, n: u64) -> Result<u64, Down> {
    downstream_async(n).await
}

/// What the attribute saves you from writing.
async fn by_hand(n: u64) -> Result<u64, Down> {
    static BREAKER: OnceLock<Breaker> = OnceLock::new();
    let breaker = BREAKER.get_or_init(|| ours(OPEN));
    match breaker.try_acquire() {
        Ok(permit) => {
            let out = downstream_async(n).await;
            permit.record(out.classify());
            out
        }
        Err(rejected) => Err(Down::from(rejected)),
    }
}

fn attribute(c: &mut Criterion) {
    let mut g = c.benchmark_group("async fn");
    g.bench_function("by hand", |b| {
        b.iter(|| {
            if let Ok(v) = block_on(by_hand(black_box(1))) {
                black_box(v);
            }
        })
    });
    g.bench_function("#[circuit_breaker]", |b| {
        b.iter(|| {
            if let Ok(v) = block_on(annotated(black_box(1))) {
                black_box(v);
            }
        })
    });
    let rb = registry_breaker(OPEN);
    g.bench_function("registry breaker call", |b| {
        b.iter(|| {
            if let Ok(v) = block_on(rb.call(|| downstream_async(black_box(1)))) {
                black_box(v);
            }
        })
    });
    g.bench_function("#[circuit_breaker(key)]", |b| {
        b.iter(|| {
            if let Ok(v) = block_on(annotated_keyed(black_box("10.0.0.1:7000"), black_box(1))) {
                black_box(v);
            }
        })
    });
    g.finish();
}

/// Finding the breaker of an existing key among 1,000, against a map behind a lock.
fn keyed(c: &mut Criterion) {
    let mut g = c.benchmark_group("keyed lookup");
    static FAMILY: StaticKeyed = StaticKeyed::new(
        Name::Fixed("bench::keyed"),
        match Config::builder().count_window(WINDOW).build() {
            Ok(config) => config,
            Err(_) => panic!("the bench's configuration is valid"),
        },
        10_000,
    );
    let keys: Vec<String> = (0..1000)
        .map(|i| format!("10.0.{}.{}:7000", i / 256, i % 256))
        .collect();
    for key in &keys {
        drop(FAMILY.breaker(key.as_str()));
    }
    let key = keys[517].as_str();
    g.bench_function("breaker family", |b| {
        b.iter(|| {
            let breaker = FAMILY.breaker(black_box(key));
            black_box(&*breaker);
        })
    });
    let map: RwLock<std::collections::HashMap<String, Arc<Breaker>>> = RwLock::new(
        keys.iter()
            .map(|k| (k.clone(), Arc::new(ours(OPEN))))
            .collect(),
    );
    g.bench_function("RwLock<HashMap<String, Arc<_>>>", |b| {
        b.iter(|| {
            let breaker = map.read().unwrap().get(black_box(key)).cloned();
            black_box(&breaker);
        })
    });
    g.finish();
}

// ---- the call policy: retries, a breaker and a per-attempt timeout, around one call ----

/// Retries after a failure, at most this many.
const RETRIES: u32 = 2;
/// Each attempt's limit.
const ATTEMPT_TIMEOUT: Duration = Duration::from_millis(800);
/// The base of the exponential backoff with full jitter.
const BACKOFF: Duration = Duration::from_millis(20);

/// How a peer's stack can end a call: the downstream failed, the attempt ran out of time, or
/// the breaker refused it (which is never retried, as ours never retries a rejection).
#[derive(Debug, Clone, Copy, PartialEq)]
enum PolicyError {
    Down,
    TimedOut,
    Rejected,
}

type PolicyOut = Result<u64, PolicyError>;

/// A failure of the downstream or of its time limit: what the peers retry and what their
/// breakers count, as ours does through `Classify`.
fn seatbelt_recovery(out: &PolicyOut) -> seatbelt::RecoveryInfo {
    match out {
        Err(PolicyError::Down | PolicyError::TimedOut) => seatbelt::RecoveryInfo::retry(),
        Ok(_) | Err(PolicyError::Rejected) => seatbelt::RecoveryInfo::never(),
    }
}

/// seatbelt's recommended order, `Retry → Breaker → Timeout → operation`, on tokio's clock
/// through `tick`. Its breaker has no count window: failures are judged over a sampling
/// period (10s here, like our time-window runs) from 10 calls on, at a rate of 0.5, open 5s;
/// its half-open state is either one probe (`quick`, used here) or a progressive ramp, not a
/// limit of concurrent probes. Its retry has no budget; its backoff is exponential from 20ms
/// with its own jitter.
fn seatbelt_policy() -> impl layered::Service<u64, Out = PolicyOut> {
    use layered::{Execute, Stack};
    use seatbelt::breaker::{Breaker as SeatbeltBreaker, HalfOpenMode};
    use seatbelt::retry::Retry;
    use seatbelt::timeout::Timeout;

    let clock = tick::Clock::new_tokio();
    let context = seatbelt::ResilienceContext::new(&clock);
    (
        Retry::layer("retry", &context)
            .clone_input()
            .max_retry_attempts(RETRIES)
            .base_delay(BACKOFF)
            .use_jitter(true)
            .recovery_with(|out: &PolicyOut, _| seatbelt_recovery(out)),
        SeatbeltBreaker::layer("breaker", &context)
            .recovery_with(|out: &PolicyOut, _| seatbelt_recovery(out))
            .rejected_input_error(|_, _| PolicyError::Rejected)
            .failure_threshold(RATE as f32)
            .min_throughput(MIN_CALLS)
            .sampling_duration(Duration::from_secs(10))
            .break_duration(OPEN)
            .half_open_mode(HalfOpenMode::quick()),
        Timeout::layer("timeout", &context)
            .timeout(ATTEMPT_TIMEOUT)
            .timeout_error(|_| PolicyError::TimedOut),
        Execute::new(
            |n: u64| async move { downstream_async(n).await.map_err(|_| PolicyError::Down) },
        ),
    )
        .into_service()
}

type TowerPolicyError = tower_resilience_circuitbreaker::CircuitBreakerError<
    tower_resilience_timelimiter::TimeLimiterError<Down>,
>;

/// tower-resilience's three layers, `Retry → CircuitBreaker → TimeLimiter → service`, the
/// breaker configured as in the paths above (a count window of 20). Its retry counts attempts
/// (3 = the first and 2 retries), never retries an open circuit, and backs off exponentially
/// with full jitter ([0, 20ms], then [0, 40ms], as ours). Its budget is the nearest it has to
/// ours (retries at most 20% of first attempts, with a floor of 10 a second): a token bucket
/// refilled at 10 a second, to which every success adds one token (a ratio of 1, not 0.2).
fn tower_policy() -> impl Service<u64, Response = u64, Error = TowerPolicyError> + Clone + Send {
    use tower::Layer;
    use tower_resilience_retry::{ExponentialRandomBackoff, RetryBudgetBuilder, RetryLayer};
    use tower_resilience_timelimiter::TimeLimiterLayer;

    let time_limit = TimeLimiterLayer::builder()
        .timeout_duration(ATTEMPT_TIMEOUT)
        .build();
    let breaker = tower_resilience_circuitbreaker::CircuitBreakerLayer::builder()
        .failure_rate_threshold(RATE)
        .sliding_window_size(WINDOW as usize)
        .minimum_number_of_calls(MIN_CALLS as usize)
        .wait_duration_in_open(OPEN)
        .permitted_calls_in_half_open(PROBES as usize)
        .build()
        .unwrap();
    let budget = RetryBudgetBuilder::new()
        .token_bucket()
        .tokens_per_second(10.0)
        .build()
        .unwrap();
    let retry = RetryLayer::<u64, u64, TowerPolicyError>::builder()
        .max_attempts(RETRIES as usize + 1)
        .backoff(ExponentialRandomBackoff::new(BACKOFF / 2, 1.0).unwrap())
        .retry_on(|e: &TowerPolicyError| !e.is_circuit_open())
        .budget(budget)
        .build();
    let svc = tower::service_fn(|n: u64| downstream_async(n));
    retry.layer(breaker.layer_fn(time_limit.layer(svc)))
}

/// The same policy written in the attribute. Its breaker is on the default clock, the
/// production one: this package leaves `test-util` out, under which the default would be
/// tokio's clock, read under a lock that no production build takes (and seatbelt's clock,
/// tick's system clock, never takes either).
#[circuit_breaker(
    window = 20,
    min = 10,
    rate = 0.5,
    open = "5s",
    probes = 3,
    timeout = "800ms",
    retries = 2
)]
async fn annotated_policy(n: u64) -> Result<u64, PolicyDown> {
    downstream_async(n).await.map_err(|_| PolicyDown)
}

/// Ours under a policy, on the production clock.
fn ours_with(policy: breakerbox::config::ConfigBuilder) -> Breaker {
    let config = policy
        .count_window(WINDOW)
        .min_calls(MIN_CALLS)
        .failure_rate(RATE)
        .open_for(OPEN)
        .probes(PROBES)
        .build()
        .unwrap();
    Breaker::with_clock("bench::policy", config, MonotonicClock)
}

/// `Breaker::run` on a ready future that succeeds, so no retry: the cost of the policy
/// itself, with and without a timeout and retries; then the peers' stacks around the same
/// call, each polled the same way. The ratio compares "run, timeout and retries 2" with the
/// faster peer.
fn policy(c: &mut Criterion) {
    let mut g = c.benchmark_group("policy");
    // A timeout needs tokio's timer: the runtime is entered, and the future still polled
    // here, with nothing to wait for.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let _entered = runtime.enter();
    let cases = [
        ("run, no timeout, no retries", Config::builder()),
        ("run, retries 2", Config::builder().retries(RETRIES)),
        ("run, timeout", Config::builder().timeout(ATTEMPT_TIMEOUT)),
        (
            "run, timeout and retries 2",
            Config::builder().timeout(ATTEMPT_TIMEOUT).retries(RETRIES),
        ),
    ];
    for (name, policy) in cases {
        let b = ours_with(policy);
        g.bench_function(name, |bench| {
            bench.iter(|| {
                let out = block_on(b.run(|| downstream_async(black_box(1))));
                if let Ok(Ok(v)) = out {
                    black_box(v);
                }
            })
        });
    }
    assert_eq!(block_on(annotated_policy(1)).ok(), Some(2));
    g.bench_function("#[circuit_breaker(timeout, retries = 2)]", |b| {
        b.iter(|| {
            if let Ok(v) = block_on(annotated_policy(black_box(1))) {
                black_box(v);
            }
        })
    });
    let seatbelt = seatbelt_policy();
    assert_eq!(block_on(layered::Service::execute(&seatbelt, 1)), Ok(2));
    g.bench_function("seatbelt", |b| {
        b.iter(|| {
            if let Ok(v) = block_on(layered::Service::execute(&seatbelt, black_box(1))) {
                black_box(v);
            }
        })
    });
    let mut tower = tower_policy();
    assert_eq!(
        block_on(async { tower.ready().await?.call(1).await }).ok(),
        Some(2)
    );
    g.bench_function("tower-resilience", |b| {
        b.iter(|| {
            block_on(async {
                if let Ok(ready) = tower.ready().await {
                    if let Ok(v) = ready.call(black_box(1)).await {
                        black_box(v);
                    }
                }
            })
        })
    });
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .sample_size(50)
}

criterion_group! {
    name = peers;
    config = config();
    targets = closed_success, closed_mixed, open, two_threads, time_window, attribute, keyed, policy
}
criterion_main!(peers);
