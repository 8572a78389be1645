//! No heap growth across 1,000 open/close cycles: every transition, the ramp-up, the backoff,
//! listeners, time and count windows, and rejections leave the live heap where it was.
//!
//! The live heap is this thread's (`support/heap.rs`): the binary's other tests, running
//! beside this one, allocate on theirs.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use breakerbox::clock::ManualClock;
use breakerbox::{events::Event, Breaker, Config, RejectReason, State};

use crate::support::heap;

const MS: Duration = Duration::from_millis(1);

/// One full cycle: trip, rejections, a failed trial (backoff), probes, the ramp with its
/// throttled calls, and CLOSED again.
fn cycle(b: &Breaker, clock: &ManualClock) {
    while b.state() == State::Closed {
        b.try_acquire().unwrap().failure();
        clock.advance(MS);
    }
    let rejected = b.try_acquire().unwrap_err();
    assert_eq!(rejected.reason(), RejectReason::Open);
    clock.advance(rejected.retry_after().unwrap());
    b.try_acquire().unwrap().failure(); // the trial fails: OPEN backs off
    clock.advance(b.try_acquire().unwrap_err().retry_after().unwrap());
    let probes = [b.try_acquire().unwrap(), b.try_acquire().unwrap()];
    assert_eq!(b.probes_in_flight(), 2);
    probes.into_iter().for_each(|p| p.success());
    assert_eq!(b.snapshot().admit_percent, 50);
    while b.state() == State::HalfOpen {
        match b.try_acquire() {
            Ok(permit) => permit.success(),
            Err(rejected) => assert_eq!(rejected.reason(), RejectReason::Throttled),
        }
        clock.advance(MS);
    }
    assert_eq!(b.state(), State::Closed);
}

fn breaker(config: breakerbox::config::ConfigBuilder, clock: &ManualClock) -> Breaker {
    let config = config
        .min_calls(4)
        .probes(2)
        .open_for(10 * MS)
        .open_backoff(2.0, 40 * MS)
        .ramp_up(&[50, 100], 5 * MS)
        .build()
        .unwrap();
    Breaker::with_clock("cycles", config, clock.clone())
}

#[test]
fn open_close_cycles_do_not_grow_the_heap() {
    let clock = ManualClock::new();
    let count = breaker(Config::builder().count_window(8), &clock);
    let time = breaker(
        Config::builder()
            .time_window(100 * MS, 10)
            .slow_calls(50 * MS, 1.0),
        &clock,
    );
    let transitions = Arc::new(AtomicU64::new(0));
    for b in [&count, &time] {
        let seen = transitions.clone();
        b.on_event(move |e: &Event| {
            if let Event::StateTransition { .. } = e {
                seen.fetch_add(1, Ordering::Relaxed);
            }
        });
    }

    for _ in 0..100 {
        cycle(&count, &clock);
        cycle(&time, &clock);
    }
    let warm = heap::live();
    for _ in 0..1_000 {
        cycle(&count, &clock);
        cycle(&time, &clock);
    }
    let after = heap::live();

    // Each cycle: CLOSED→OPEN, OPEN→HALF_OPEN, HALF_OPEN→OPEN, OPEN→HALF_OPEN, HALF_OPEN→CLOSED.
    assert_eq!(transitions.load(Ordering::Relaxed), 2 * 1_100 * 5);
    assert_eq!(after.curr_bytes, warm.curr_bytes);
    assert_eq!(after.curr_blocks, warm.curr_blocks);
}
