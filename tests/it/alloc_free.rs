//! No heap allocation per call: CLOSED, OPEN and HALF_OPEN paths, a time window, a
//! recording, the attribute, and the lookup of an existing key, counted by a global
//! allocator.
//!
//! The binary's allocator (`support/heap.rs`) counts each thread's allocations apart, so
//! the other tests, running beside these on threads of their own, do not disturb the count. Each path is warmed up first: a first
//! call may initialise what lives for the whole process (a calibrated clock, a static
//! breaker, a key's breaker).

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use breakerbox::clock::{ManualClock, MonotonicClock};
use breakerbox::{circuit_breaker, Breaker, Config, Outcome, Rejected, State};

use crate::support::heap::allocations;

fn config() -> Config {
    Config::builder()
        .count_window(20)
        .min_calls(10)
        .failure_rate(0.5)
        .open_for(Duration::from_secs(5))
        .probes(3)
        .build()
        .unwrap()
}

/// One call of each kind of result; nine successes for a failure never trip the breaker.
fn closed_calls(b: &Breaker, n: u64) {
    for i in 0..n {
        let permit = b.try_acquire().expect("closed");
        match i % 20 {
            0 => permit.failure(),
            1 => permit.ignore(),
            2 => drop(permit),
            3 => permit.record(Outcome::Success),
            _ => permit.success(),
        }
    }
}

#[test]
fn closed_calls_allocate_nothing() {
    for b in [
        Breaker::new("closed", config()),
        Breaker::with_clock("closed", config(), MonotonicClock),
        Breaker::with_clock("closed", config(), ManualClock::new()),
    ] {
        closed_calls(&b, 100);
        assert_eq!(allocations(|| closed_calls(&b, 10_000)), 0);
        assert_eq!(b.state(), State::Closed);
    }
}

#[test]
fn recorded_calls_and_rejections_allocate_nothing() {
    let b = Breaker::new("recorded", config());
    b.start_recording(1000).unwrap();
    closed_calls(&b, 100);
    assert_eq!(allocations(|| closed_calls(&b, 10_000)), 0);
    b.force_open();
    let _ = b.try_acquire().unwrap_err();
    let rejections = allocations(|| {
        for _ in 0..1000 {
            let _ = b.try_acquire().unwrap_err();
        }
    });
    assert_eq!(rejections, 0);
    assert_eq!(b.recording().calls().len(), 1000);
}

#[test]
fn slow_calls_and_time_windows_allocate_nothing() {
    let timed = Config::builder()
        .time_window(Duration::from_secs(10), 10)
        .slow_calls(Duration::from_secs(1), 1.0)
        .build()
        .unwrap();
    let clock = ManualClock::new();
    let b = Breaker::with_clock("timed", timed, clock.clone());
    closed_calls(&b, 100);
    let n = allocations(|| {
        for _ in 0..100 {
            closed_calls(&b, 100);
            clock.advance(Duration::from_millis(300));
        }
    });
    assert_eq!(n, 0);
}

#[test]
fn open_rejections_allocate_nothing() {
    for b in [
        Breaker::new("open", config()),
        Breaker::with_clock("open", config(), MonotonicClock),
        Breaker::with_clock("open", config(), ManualClock::new()),
    ] {
        while b.state() == State::Closed {
            b.try_acquire().unwrap().failure();
        }
        b.try_acquire().unwrap_err();
        let n = allocations(|| {
            for _ in 0..10_000 {
                let rejected = b.try_acquire().unwrap_err();
                assert!(rejected.retry_after().is_some());
            }
        });
        assert_eq!(n, 0);
    }
}

/// Opens, half-opens with every probe slot taken, and closes or reopens, again and again.
#[test]
fn half_open_cycles_allocate_nothing() {
    let clock = ManualClock::new();
    let b = Breaker::with_clock("cycling", config(), clock.clone());
    b.on_event(|_| {});
    let cycle = |recover: bool| {
        while b.state() == State::Closed {
            b.try_acquire().unwrap().failure();
        }
        clock.advance(Duration::from_secs(5));
        let probes = [
            b.try_acquire().unwrap(),
            b.try_acquire().unwrap(),
            b.try_acquire().unwrap(),
        ];
        b.try_acquire().unwrap_err();
        for (i, probe) in probes.into_iter().enumerate() {
            match (recover, i) {
                (false, 1) => probe.failure(),
                (_, 2) => drop(probe),
                _ => probe.success(),
            }
        }
        if recover {
            b.try_acquire().unwrap().success();
            assert_eq!(b.state(), State::Closed);
        } else {
            assert_eq!(b.state(), State::Open);
            clock.advance(Duration::from_secs(5));
            b.try_acquire().unwrap().success();
            b.try_acquire().unwrap().success();
            b.try_acquire().unwrap().success();
        }
    };
    cycle(true);
    cycle(false);
    let n = allocations(|| {
        for i in 0..200 {
            cycle(i % 3 == 0);
        }
    });
    assert_eq!(n, 0);
}

#[derive(Debug)]
struct Down;

impl breakerbox::Classify for Down {
    fn classify(&self) -> Outcome {
        Outcome::Failure
    }
}

impl From<Rejected> for Down {
    fn from(_: Rejected) -> Self {
        Down
    }
}

#[circuit_breaker(window = 20)]
async fn annotated(n: u64) -> Result<u64, Down> {
    Ok(n + 1)
}

#[circuit_breaker(window = 20, key = host)]
async fn annotated_keyed(host: &str, n: u64) -> Result<u64, Down> {
    let _ = host;
    Ok(n + 1)
}

fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

#[test]
fn attribute_calls_and_existing_keys_allocate_nothing() {
    let hosts = ["10.0.0.1:7000", "10.0.0.2:7000", "10.0.0.3:7000"];
    block_on(annotated(1)).unwrap();
    for host in hosts {
        block_on(annotated_keyed(host, 1)).unwrap();
    }
    let n = allocations(|| {
        for i in 0..10_000 {
            block_on(annotated(i)).unwrap();
            block_on(annotated_keyed(hosts[i as usize % 3], i)).unwrap();
        }
    });
    assert_eq!(n, 0);
}
