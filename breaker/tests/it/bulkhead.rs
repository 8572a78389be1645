//! The bulkhead (`max_concurrent`): at most that many calls of a breaker in flight, the next
//! rejected at once; a slot freed however its call ends; its rejections counted apart, never
//! in the window, never opening the breaker. Each test is named for the rule it proves.

use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::pin;
use std::sync::{Arc, Once};
use std::task::{Context, Waker};
use std::time::Duration;

use breakerbox::testing::manual;
use breakerbox::{Breaker, Config, RejectReason, State};

fn limited(calls: u32) -> Config {
    Config::builder().max_concurrent(calls).build().unwrap()
}

/// The reason `b` rejects its next call with; panics if it admits it.
fn rejection(b: &Breaker) -> RejectReason {
    match b.try_acquire() {
        Ok(_) => panic!("admitted, with {} calls in flight", b.in_flight()),
        Err(rejected) => rejected.reason(),
    }
}

#[test]
fn bulkhead_rejects_the_65th_concurrent_call_with_64_in_flight() {
    let (b, _clock) = manual("libraryd", limited(64));
    let held: Vec<_> = (0..64).map(|_| b.try_acquire().unwrap()).collect();
    assert_eq!(b.in_flight(), 64);

    let rejected = b.try_acquire().unwrap_err();
    assert_eq!(rejected.reason(), RejectReason::Bulkhead);
    assert_eq!(rejected.retry_after(), None);
    assert_eq!(
        rejected.to_string(),
        "circuit 'libraryd' is at its limit of 64 calls in flight"
    );
    assert_eq!(b.in_flight(), 64, "a rejected call holds no slot");

    drop(held);
    assert_eq!(b.in_flight(), 0);
    let t = b.snapshot().totals;
    assert_eq!(
        (t.rejected, t.rejected_by.bulkhead, t.cancelled),
        (1, 1, 64)
    );
}

#[test]
fn a_slot_is_freed_when_its_call_records_a_result() {
    let (b, _clock) = manual("libraryd", limited(1));
    for (i, end) in [
        |p: breakerbox::Permit<'_>| p.success(),
        |p: breakerbox::Permit<'_>| p.failure(),
        |p: breakerbox::Permit<'_>| p.ignore(),
    ]
    .into_iter()
    .enumerate()
    {
        let permit = b.try_acquire().expect("a free slot");
        assert_eq!((b.in_flight(), rejection(&b)), (1, RejectReason::Bulkhead));
        end(permit);
        assert_eq!(b.in_flight(), 0, "ending {i}");
    }
    let t = b.snapshot().totals;
    assert_eq!((t.success, t.failure, t.ignored, t.rejected), (1, 1, 1, 3));
}

#[test]
fn a_slot_is_freed_when_its_call_is_cancelled() {
    let (b, _clock) = manual("libraryd", limited(1));
    // A call whose future is dropped while it waits on its downstream.
    {
        let mut call = pin!(b.call(std::future::pending::<Result<(), std::io::Error>>()));
        let pending = call.as_mut().poll(&mut Context::from_waker(Waker::noop()));
        assert!(pending.is_pending());
        assert_eq!((b.in_flight(), rejection(&b)), (1, RejectReason::Bulkhead));
    }
    assert_eq!(b.in_flight(), 0);
    // A permit dropped without a result.
    drop(b.try_acquire().unwrap());
    assert_eq!(b.in_flight(), 0);
    b.try_acquire().expect("a free slot").success();
    let t = b.snapshot().totals;
    assert_eq!((t.cancelled, t.success, t.rejected_by.bulkhead), (2, 1, 1));
}

/// The payload of the panics these tests raise; the panic hook keeps quiet about them.
const PANIC_MARK: &str = "a call panicked while holding its slot";

fn quiet_panics() {
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

#[test]
fn a_slot_is_freed_when_its_call_panics() {
    quiet_panics();
    let (b, _clock) = manual("libraryd", limited(1));
    let unwound = panic::catch_unwind(AssertUnwindSafe(|| {
        let _permit = b.try_acquire().unwrap();
        assert_eq!(b.in_flight(), 1);
        panic::panic_any(PANIC_MARK);
    }));
    assert!(unwound.is_err());
    assert_eq!(b.in_flight(), 0);
    assert_eq!(b.snapshot().totals.failure, 1, "a panic is a failure");
    b.try_acquire().expect("a free slot").success();
}

#[test]
fn owned_permits_hold_and_free_their_slots() {
    let b = Arc::new(Breaker::new("libraryd", limited(2)));
    let here = b.try_acquire_owned().unwrap();
    let there = b.try_acquire_owned().unwrap();
    assert_eq!(
        b.try_acquire_owned().unwrap_err().reason(),
        RejectReason::Bulkhead
    );
    std::thread::spawn(move || there.failure()).join().unwrap();
    assert_eq!(b.in_flight(), 1);
    drop(here);
    assert_eq!(b.in_flight(), 0);
}

#[test]
fn bulkhead_rejections_never_open_the_breaker_nor_enter_the_window() {
    // Any two results with a failure in them would open this breaker.
    let config = Config::builder()
        .count_window(2)
        .min_calls(2)
        .failure_rate(0.5)
        .max_concurrent(1)
        .build()
        .unwrap();
    let (b, _clock) = manual("libraryd", config);
    let held = b.try_acquire().unwrap();
    for _ in 0..100 {
        assert_eq!(rejection(&b), RejectReason::Bulkhead);
    }
    let s = b.snapshot();
    assert_eq!(
        (s.state, s.calls, s.failures, s.rejected),
        (State::Closed, 0, 0, 100)
    );
    held.success();
    assert_eq!(b.snapshot().calls, 1);
    // The window counts the calls that ran, and opens on them as without a bulkhead.
    b.try_acquire().unwrap().failure();
    assert_eq!((b.state(), b.snapshot().calls), (State::Open, 2));
}

#[test]
fn a_call_the_state_rejects_frees_the_slot_it_took() {
    let config = Config::builder()
        .count_window(1)
        .min_calls(1)
        .probes(1)
        .max_concurrent(2)
        .build()
        .unwrap();
    let (b, clock) = manual("libraryd", config);
    b.force_open();
    assert_eq!(
        (rejection(&b), b.in_flight()),
        (RejectReason::ForcedOpen, 0)
    );
    b.reset();
    b.try_acquire().unwrap().failure();
    assert_eq!((rejection(&b), b.in_flight()), (RejectReason::Open, 0));
    clock.advance(Duration::from_secs(5));
    let probe = b.try_acquire().expect("the probe");
    assert_eq!(
        (rejection(&b), b.in_flight()),
        (RejectReason::HalfOpenFull, 1)
    );
    probe.success();
    assert_eq!((b.state(), b.in_flight()), (State::Closed, 0));
}

#[test]
fn a_full_bulkhead_rejects_whatever_the_state() {
    let config = |limit: u32| {
        Config::builder()
            .count_window(1)
            .min_calls(1)
            .max_concurrent(limit)
            .build()
            .unwrap()
    };
    let (b, _clock) = manual("libraryd", config(3));
    let held = [b.try_acquire().unwrap(), b.try_acquire().unwrap()];
    b.try_acquire().unwrap().failure();
    // OPEN, with a free slot: rejected as OPEN; full (a lower limit): by the bulkhead.
    assert_eq!(
        (b.state(), rejection(&b)),
        (State::Open, RejectReason::Open)
    );
    b.reconfigure(config(2));
    assert_eq!(
        (b.state(), rejection(&b)),
        (State::Open, RejectReason::Bulkhead)
    );
    b.force_open();
    assert_eq!(rejection(&b), RejectReason::Bulkhead);
    b.disable();
    assert_eq!(rejection(&b), RejectReason::Bulkhead);
    drop(held);
    b.try_acquire()
        .expect("disabled, with free slots")
        .failure();
    let by = b.snapshot().totals.rejected_by;
    assert_eq!((by.open, by.bulkhead), (1, 3));
}

#[test]
fn rejections_are_split_by_reason_and_sum_to_rejected() {
    let config = Config::builder()
        .count_window(1)
        .min_calls(1)
        .probes(1)
        .ramp_up(&[50, 100], Duration::from_secs(10))
        .max_concurrent(2)
        .build()
        .unwrap();
    let (b, clock) = manual("libraryd", config);
    let held = [b.try_acquire().unwrap(), b.try_acquire().unwrap()];
    assert_eq!(rejection(&b), RejectReason::Bulkhead);
    drop(held);
    b.try_acquire().unwrap().failure();
    assert_eq!(rejection(&b), RejectReason::Open);
    clock.advance(Duration::from_secs(5));
    let probe = b.try_acquire().unwrap();
    assert_eq!(rejection(&b), RejectReason::HalfOpenFull);
    probe.success();
    // The ramp's first step admits every other call, from the second.
    assert_eq!(rejection(&b), RejectReason::Throttled);
    b.try_acquire().expect("the ramp's second call").success();
    b.force_open();
    assert_eq!(rejection(&b), RejectReason::ForcedOpen);

    let t = b.snapshot().totals;
    let by = t.rejected_by;
    assert_eq!(
        (
            by.open,
            by.half_open_full,
            by.forced_open,
            by.throttled,
            by.bulkhead
        ),
        (1, 1, 1, 1, 1)
    );
    assert_eq!(t.rejected, 5);
    assert_eq!(b.snapshot().rejected, 5);
    assert_eq!(b.in_flight(), 0);
}

#[test]
fn reconfiguring_the_limit_keeps_the_count_of_calls_in_flight() {
    let (b, _clock) = manual("libraryd", limited(2));
    let first = b.try_acquire().unwrap();
    let second = b.try_acquire().unwrap();

    // Lowered below the calls in flight: they keep their slots; new calls wait for room.
    b.reconfigure(limited(1));
    assert_eq!(b.in_flight(), 2);
    let rejected = b.try_acquire().unwrap_err();
    assert_eq!(
        rejected.to_string(),
        "circuit 'libraryd' is at its limit of 1 calls in flight"
    );
    first.success();
    assert_eq!((b.in_flight(), rejection(&b)), (1, RejectReason::Bulkhead));

    // Removed: the call taken under the limit still frees its slot; new calls take none.
    b.reconfigure(Config::default());
    let unlimited: Vec<_> = (0..3).map(|_| b.try_acquire().unwrap()).collect();
    assert_eq!(b.in_flight(), 1);
    drop(second);
    assert_eq!(b.in_flight(), 0);

    // Set again: the calls already in flight hold no slot, and are not counted.
    b.reconfigure(limited(1));
    let slotted = b.try_acquire().unwrap();
    assert_eq!((b.in_flight(), rejection(&b)), (1, RejectReason::Bulkhead));
    drop(unlimited);
    assert_eq!(b.in_flight(), 1);
    slotted.success();
    assert_eq!(b.in_flight(), 0);
}

#[test]
fn a_slot_held_as_the_limit_is_removed_is_freed_by_a_success_into_a_full_window() {
    let config = |limit: Option<u32>| {
        let builder = Config::builder().count_window(2).min_calls(2);
        match limit {
            Some(calls) => builder.max_concurrent(calls),
            None => builder,
        }
        .build()
        .unwrap()
    };
    let (b, _clock) = manual("libraryd", config(Some(1)));
    b.try_acquire().unwrap().success();
    b.try_acquire().unwrap().success();
    let held = b.try_acquire().unwrap();
    // Unlimited now, its window full of successes: the held call's success changes nothing
    // in the window, and still frees its slot.
    b.reconfigure(config(None));
    assert_eq!(b.in_flight(), 1);
    held.success();
    assert_eq!(b.in_flight(), 0);
    for _ in 0..3 {
        b.try_acquire().unwrap().success();
    }
    let s = b.snapshot();
    assert_eq!((s.calls, s.failures, s.totals.success), (2, 0, 6));
    b.reconfigure(config(Some(1)));
    let again = b.try_acquire().unwrap();
    assert_eq!((b.in_flight(), rejection(&b)), (1, RejectReason::Bulkhead));
    again.success();
    assert_eq!(b.in_flight(), 0);
}

#[test]
fn a_breaker_without_a_bulkhead_has_no_calls_in_flight_to_count() {
    let (b, _clock) = manual("libraryd", Config::default());
    let held: Vec<_> = (0..100).map(|_| b.try_acquire().unwrap()).collect();
    assert_eq!(b.in_flight(), 0);
    drop(held);
    assert_eq!(b.snapshot().totals.rejected, 0);
}

#[test]
fn a_limited_breaker_counts_its_window_as_an_unlimited_one() {
    let count = |limit: Option<u32>| {
        let mut builder = Config::builder().count_window(4).min_calls(4);
        if let Some(calls) = limit {
            builder = builder.max_concurrent(calls);
        }
        let (b, _clock) = manual("libraryd", builder.build().unwrap());
        let mut states = Vec::new();
        for failed in [false, true, false, false, true] {
            let permit = b.try_acquire().unwrap();
            if failed {
                permit.failure();
            } else {
                permit.success();
            }
            let s = b.snapshot();
            states.push((s.state, s.calls, s.failures));
        }
        states
    };
    let unlimited = count(None);
    assert_eq!(count(Some(1)), unlimited);
    assert_eq!(count(Some(64)), unlimited);
    assert_eq!(unlimited.last(), Some(&(State::Open, 4, 2)));
}

// Keyed breakers: each key is a breaker of its own, with a bulkhead of its own.

#[test]
fn each_key_of_a_family_has_a_bulkhead_of_its_own() {
    use breakerbox::__private::Keyed;

    let family = Keyed::new(Arc::from("bulkhead::replicas"), limited(1), 8);
    let first = family.breaker("10.0.0.1:7000");
    let held = first.try_acquire().unwrap();
    assert_eq!(rejection(&first), RejectReason::Bulkhead);
    let second = family.breaker("10.0.0.2:7000");
    second
        .try_acquire()
        .expect("another key's bulkhead is empty")
        .success();
    assert_eq!((first.in_flight(), second.in_flight()), (1, 0));
    drop(held);
    first
        .try_acquire()
        .expect("its slot is free again")
        .success();
}

#[cfg(feature = "tower")]
#[tokio::test]
async fn the_keyed_tower_layer_limits_each_key_apart() {
    use breakerbox::tower::{BreakerError, KeyedCircuitBreakerLayer};
    use tower::{service_fn, Layer, Service, ServiceExt};

    let layer = KeyedCircuitBreakerLayer::new("bulkhead::hosts", limited(1), 8, |host: &String| {
        host.clone()
    });
    let mut svc = layer.layer(service_fn(|_host: String| async {
        Ok::<_, std::io::Error>(http::StatusCode::OK)
    }));
    // A call takes its key's slot when it is made, and holds it until its future ends.
    let held = svc.ready().await.unwrap().call("a".to_string());
    let refused = svc.ready().await.unwrap().call("a".to_string()).await;
    match refused {
        Err(BreakerError::Rejected(rejected)) => {
            assert_eq!(rejected.reason(), RejectReason::Bulkhead);
            assert_eq!(rejected.name(), "bulkhead::hosts[a]");
        }
        other => panic!("{other:?}"),
    }
    let other_key = svc.ready().await.unwrap().call("b".to_string()).await;
    assert_eq!(other_key.unwrap(), http::StatusCode::OK);
    assert_eq!(held.await.unwrap(), http::StatusCode::OK);
    let again = svc.ready().await.unwrap().call("a".to_string()).await;
    assert_eq!(again.unwrap(), http::StatusCode::OK);
}
