//! One test per rule of the breaker, each named for the rule it proves.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use breakerbox::clock::ManualClock;
use breakerbox::testing::{fail_n, manual};
use breakerbox::{events::Event, Breaker, Config, Outcome, RejectReason, State};

fn count(window: u32, min: u32, probes: u32) -> Config {
    Config::builder()
        .count_window(window)
        .min_calls(min)
        .probes(probes)
        .build()
        .unwrap()
}

fn succeed_n(b: &Breaker, n: usize) {
    for _ in 0..n {
        b.try_acquire().unwrap().success();
    }
}

/// Opens `b` (count window of 4, min 4) and moves the clock past the open duration.
fn open_then_expire(b: &Breaker, clock: &ManualClock) {
    fail_n(b, 4);
    assert_eq!(b.state(), State::Open);
    clock.advance(Duration::from_secs(5));
}

// Rule 1: the count window holds the last N completed outcomes only.

#[test]
fn count_window_counts_completed_calls_only() {
    let config = Config::builder()
        .count_window(4)
        .min_calls(4)
        .failure_rate(1.0)
        .build()
        .unwrap();
    let (b, _) = manual("libraryd", config);
    b.try_acquire().unwrap().ignore();
    drop(b.try_acquire().unwrap());
    b.try_acquire().unwrap().record(Outcome::Ignored);
    let s = b.snapshot();
    assert_eq!((s.calls, s.failures), (0, 0));

    fail_n(&b, 3);
    succeed_n(&b, 1);
    fail_n(&b, 1);
    let s = b.snapshot();
    assert_eq!((s.calls, s.failures), (4, 3), "the oldest failure slid out");
}

#[test]
fn rejected_calls_never_enter_the_window() {
    let (b, _) = manual("libraryd", count(4, 4, 1));
    fail_n(&b, 4);
    for _ in 0..10 {
        assert!(b.try_acquire().is_err());
    }
    let s = b.snapshot();
    assert_eq!((s.calls, s.failures, s.rejected), (4, 4, 10));
}

// Rule 2: the time window holds the outcomes of the last span, bucket by bucket.

#[test]
fn time_window_expires_outcomes_older_than_its_span() {
    let config = Config::builder()
        .time_window(Duration::from_secs(10), 10)
        .min_calls(3)
        .build()
        .unwrap();
    let (b, clock) = manual("libraryd", config);
    b.try_acquire().unwrap().failure();
    clock.advance(Duration::from_millis(5_500));
    b.try_acquire().unwrap().success();
    assert_eq!(b.snapshot().calls, 2);
    clock.advance(Duration::from_millis(4_500)); // 10s: the first bucket expires
    let s = b.snapshot();
    assert_eq!((s.calls, s.failures), (1, 0));
    clock.advance(Duration::from_secs(3_600)); // an idle hour empties the window
    assert_eq!(b.snapshot().calls, 0);
}

#[test]
fn time_window_opens_on_failures_within_the_span() {
    let config = Config::builder()
        .time_window(Duration::from_secs(10), 10)
        .min_calls(4)
        .build()
        .unwrap();
    let (b, clock) = manual("libraryd", config);
    fail_n(&b, 2);
    clock.advance(Duration::from_secs(11)); // those two are forgotten
    fail_n(&b, 1);
    succeed_n(&b, 2);
    assert_eq!(b.state(), State::Closed, "1 of 3 calls is below min_calls");
    fail_n(&b, 1);
    assert_eq!(b.state(), State::Open, "2 of 4 failed");
}

// Rule 3: no judgement before min calls; the rate is over completed calls.

#[test]
fn no_judgement_before_min_calls() {
    let (b, _) = manual("libraryd", count(20, 10, 3));
    fail_n(&b, 9);
    assert_eq!(b.state(), State::Closed);
    assert_eq!(b.snapshot().failure_rate, None);
    fail_n(&b, 1);
    assert_eq!(b.state(), State::Open);
}

#[test]
fn failure_rate_is_failures_over_completed_calls_not_window_size() {
    let (b, _) = manual("libraryd", count(20, 4, 3));
    succeed_n(&b, 2);
    fail_n(&b, 1);
    let s = b.snapshot();
    assert_eq!(s.failure_rate, None);
    fail_n(&b, 1);
    // 2 of 4 completed, not 2 of 20.
    assert_eq!(b.state(), State::Open);
    assert_eq!(b.snapshot().failure_rate, Some(0.5));
}

#[test]
fn a_success_that_completes_min_calls_opens_a_failing_window() {
    let (b, _) = manual("libraryd", count(20, 4, 3));
    fail_n(&b, 3);
    assert_eq!(b.state(), State::Closed, "3 calls, below the minimum of 4");
    succeed_n(&b, 1);
    assert_eq!(b.state(), State::Open, "3 of 4 completed calls failed");
}

// Rule 4: opening is judged with >=, on failures and on slow calls.

#[test]
fn threshold_is_reached_at_equality() {
    let (b, _) = manual("libraryd", count(20, 10, 3));
    for _ in 0..5 {
        b.try_acquire().unwrap().success();
        b.try_acquire().unwrap().failure();
    }
    assert_eq!(b.state(), State::Open, "5 of 10 at 0.5 opens");
}

#[test]
fn below_threshold_stays_closed() {
    let (b, _) = manual("libraryd", count(10, 10, 3));
    succeed_n(&b, 6);
    fail_n(&b, 4);
    assert_eq!(b.state(), State::Closed);
    assert_eq!(b.snapshot().failure_rate, Some(0.4));
}

#[test]
fn slow_calls_open_the_breaker_at_their_rate() {
    let config = Config::builder()
        .count_window(4)
        .min_calls(4)
        .slow_calls(Duration::from_millis(800), 0.5)
        .build()
        .unwrap();
    let (b, clock) = manual("libraryd", config);
    let slow = |clock: &ManualClock| {
        let p = b.try_acquire().unwrap();
        clock.advance(Duration::from_millis(801));
        p.success();
    };
    let exactly_at_threshold = b.try_acquire().unwrap();
    clock.advance(Duration::from_millis(800));
    exactly_at_threshold.success(); // not slow: slow means > threshold
    succeed_n(&b, 1);
    slow(&clock);
    assert_eq!(b.snapshot().slow_calls, 1);
    assert_eq!(b.state(), State::Closed);
    slow(&clock);
    let s = b.snapshot();
    assert_eq!((s.state, s.slow_calls, s.failures), (State::Open, 2, 0));
}

// Rule 5: OPEN rejects with the time left and expires lazily.

#[test]
fn open_rejects_with_name_reason_and_time_left() {
    let (b, clock) = manual("libraryd", count(4, 4, 1));
    fail_n(&b, 4);
    clock.advance(Duration::from_millis(1_800));
    let rejected = b.try_acquire().unwrap_err();
    assert_eq!(rejected.name(), "libraryd");
    assert_eq!(rejected.reason(), RejectReason::Open);
    assert_eq!(rejected.retry_after(), Some(Duration::from_millis(3_200)));
    assert_eq!(
        rejected.to_string(),
        "circuit 'libraryd' is open; retry in 3.2s"
    );
}

#[test]
fn open_expires_lazily_on_the_next_call() {
    let (b, clock) = manual("libraryd", count(4, 4, 1));
    fail_n(&b, 4);
    clock.advance(Duration::from_millis(4_999));
    assert!(b.try_acquire().is_err());
    clock.advance(Duration::from_millis(1));
    assert_eq!(b.state(), State::Open, "no timer moves it");
    let probe = b
        .try_acquire()
        .expect("the first call at the deadline is a probe");
    assert_eq!(b.state(), State::HalfOpen);
    probe.success();
    assert_eq!(b.state(), State::Closed);
}

// Rule 6: HALF_OPEN is a concurrency limit; any probe failure reopens at once.

#[test]
fn half_open_admits_at_most_probes_at_once() {
    let (b, clock) = manual("libraryd", count(4, 4, 3));
    open_then_expire(&b, &clock);
    let p1 = b.try_acquire().unwrap();
    let p2 = b.try_acquire().unwrap();
    let p3 = b.try_acquire().unwrap();
    let full = b.try_acquire().unwrap_err();
    assert_eq!(full.reason(), RejectReason::HalfOpenFull);
    assert_eq!(full.retry_after(), None);
    p1.success();
    // A concurrency limit, not a total: the freed slot admits another probe.
    let p4 = b.try_acquire().unwrap();
    assert_eq!(b.probes_in_flight(), 3);
    p2.success();
    assert_eq!(b.state(), State::HalfOpen);
    p3.success();
    assert_eq!(b.state(), State::Closed, "3 probes succeeded");
    p4.success(); // its generation is over: nothing happens
    let s = b.snapshot();
    assert_eq!((s.state, s.calls, s.failures), (State::Closed, 0, 0));
}

#[test]
fn any_probe_failure_reopens_at_once() {
    let (b, clock) = manual("libraryd", count(4, 4, 3));
    open_then_expire(&b, &clock);
    let p1 = b.try_acquire().unwrap();
    let p2 = b.try_acquire().unwrap();
    p1.failure();
    assert_eq!(
        b.state(),
        State::Open,
        "without waiting for the other probe"
    );
    p2.success();
    assert_eq!(b.state(), State::Open);
    assert_eq!(
        b.try_acquire().unwrap_err().retry_after(),
        Some(Duration::from_secs(5))
    );
}

#[test]
fn slow_probe_reopens() {
    let config = Config::builder()
        .count_window(4)
        .min_calls(4)
        .probes(2)
        .slow_calls(Duration::from_millis(100), 1.0)
        .build()
        .unwrap();
    let (b, clock) = manual("libraryd", config);
    open_then_expire(&b, &clock);
    let probe = b.try_acquire().unwrap();
    clock.advance(Duration::from_millis(101));
    probe.success();
    assert_eq!(b.state(), State::Open);
}

/// Window and minimum of 4, `probes` at once, closing after `successes` of them succeed.
fn trial(probes: u32, successes: u32) -> Config {
    Config::builder()
        .count_window(4)
        .min_calls(4)
        .probes(probes)
        .successes(successes)
        .build()
        .unwrap()
}

#[test]
fn half_open_closes_after_successes_probe_successes_and_late_probes_are_stale() {
    let (b, clock) = manual("libraryd", trial(3, 1));
    open_then_expire(&b, &clock);
    let p1 = b.try_acquire().unwrap();
    let p2 = b.try_acquire().unwrap();
    let p3 = b.try_acquire().unwrap();
    assert_eq!(b.probes_in_flight(), 3);
    p1.success();
    assert_eq!(
        (b.state(), b.probes_in_flight()),
        (State::Closed, 0),
        "one success of three probes in flight closes"
    );
    // The other two were admitted by the half-open generation: their results are discarded,
    // whatever they are.
    p2.failure();
    p3.success();
    let s = b.snapshot();
    assert_eq!((s.state, s.calls, s.failures), (State::Closed, 0, 0));
    // The lifetime totals count every call that ended, stale or not.
    assert_eq!((s.totals.success, s.totals.failure), (2, 5));
}

#[test]
fn half_open_counts_successes_not_probes_admitted() {
    let (b, clock) = manual("libraryd", trial(3, 2));
    open_then_expire(&b, &clock);
    let p1 = b.try_acquire().unwrap();
    p1.success();
    // A freed slot admits another probe; the two successes may come from any probes.
    let p2 = b.try_acquire().unwrap();
    let p3 = b.try_acquire().unwrap();
    let p4 = b.try_acquire().unwrap();
    assert_eq!(b.probes_in_flight(), 3);
    p2.ignore();
    assert_eq!(b.state(), State::HalfOpen, "an ignored probe is no success");
    p3.success();
    assert_eq!((b.state(), b.probes_in_flight()), (State::Closed, 0));
    p4.failure();
    assert_eq!(b.snapshot().failures, 0, "the last probe is stale");
}

#[test]
fn a_probe_failure_reopens_even_after_some_successes() {
    let (b, clock) = manual("libraryd", trial(3, 2));
    open_then_expire(&b, &clock);
    let p1 = b.try_acquire().unwrap();
    let p2 = b.try_acquire().unwrap();
    p1.success();
    p2.failure();
    assert_eq!(b.state(), State::Open);
    assert_eq!(
        b.try_acquire().unwrap_err().retry_after(),
        Some(Duration::from_secs(5))
    );
}

#[test]
fn closing_starts_from_an_empty_window() {
    let (b, clock) = manual("libraryd", count(4, 4, 1));
    open_then_expire(&b, &clock);
    b.try_acquire().unwrap().success();
    let s = b.snapshot();
    assert_eq!(
        (s.state, s.calls, s.failures, s.failure_rate),
        (State::Closed, 0, 0, None)
    );
    fail_n(&b, 3);
    assert_eq!(b.state(), State::Closed, "old failures do not count again");
}

// Rule 7: generations discard stale results.

#[test]
fn stale_success_cannot_close_open_breaker() {
    let (b, clock) = manual("libraryd", count(4, 4, 2));
    open_then_expire(&b, &clock);
    let late = b.try_acquire().unwrap();
    b.try_acquire().unwrap().failure();
    assert_eq!(b.state(), State::Open);
    late.success();
    assert_eq!(b.state(), State::Open);

    // Nor can it count towards the probes of the next half-open.
    let late = b.try_acquire().unwrap_err();
    assert_eq!(late.reason(), RejectReason::Open);
    let (b, clock) = manual("libraryd", count(4, 4, 2));
    open_then_expire(&b, &clock);
    let stale = b.try_acquire().unwrap();
    b.try_acquire().unwrap().failure();
    clock.advance(Duration::from_secs(5));
    let fresh = b.try_acquire().unwrap();
    stale.success();
    assert_eq!((b.state(), b.probes_in_flight()), (State::HalfOpen, 1));
    fresh.success();
    assert_eq!(b.state(), State::HalfOpen, "one of two probes succeeded");
    b.try_acquire().unwrap().success();
    assert_eq!(b.state(), State::Closed);
}

#[test]
fn stale_closed_success_cannot_count_after_opening() {
    let (b, _) = manual("libraryd", count(4, 4, 1));
    let late = b.try_acquire().unwrap(); // admitted while CLOSED
    fail_n(&b, 4);
    assert_eq!(b.state(), State::Open);
    late.success();
    let s = b.snapshot();
    assert_eq!((s.state, s.calls, s.failures), (State::Open, 4, 4));
}

#[test]
fn stale_failure_cannot_reopen_recovered_breaker() {
    let (b, clock) = manual("libraryd", count(4, 4, 1));
    let late = b.try_acquire().unwrap();
    open_then_expire(&b, &clock);
    b.try_acquire().unwrap().success();
    assert_eq!(b.state(), State::Closed);
    late.failure();
    let s = b.snapshot();
    assert_eq!((s.state, s.calls, s.failures), (State::Closed, 0, 0));
}

#[test]
fn stale_permit_never_frees_a_newer_half_open_slot() {
    let (b, clock) = manual("libraryd", count(4, 4, 1));
    open_then_expire(&b, &clock);
    let old_probe = b.try_acquire().unwrap();
    let p = b.try_acquire().unwrap_err();
    assert_eq!(p.reason(), RejectReason::HalfOpenFull);
    // Reopen through another generation, then half-open again.
    b.force_open();
    b.reset();
    open_then_expire(&b, &clock);
    let new_probe = b.try_acquire().unwrap();
    drop(old_probe);
    assert_eq!(b.probes_in_flight(), 1, "the old probe freed nothing");
    assert_eq!(
        b.try_acquire().unwrap_err().reason(),
        RejectReason::HalfOpenFull
    );
    new_probe.success();
    assert_eq!(b.state(), State::Closed);
}

// Rule 8: dropped permits free their slot; panics record failures.

#[test]
fn dropped_probe_frees_its_slot_and_records_nothing() {
    let (b, clock) = manual("libraryd", count(4, 4, 1));
    open_then_expire(&b, &clock);
    let probe = b.try_acquire().unwrap();
    assert!(b.try_acquire().is_err());
    drop(probe);
    assert_eq!(b.state(), State::HalfOpen);
    assert_eq!(b.probes_in_flight(), 0);
    b.try_acquire().unwrap().success();
    assert_eq!(b.state(), State::Closed);
}

#[test]
fn ignored_probe_frees_its_slot() {
    let (b, clock) = manual("libraryd", count(4, 4, 1));
    open_then_expire(&b, &clock);
    b.try_acquire().unwrap().ignore();
    assert_eq!((b.state(), b.probes_in_flight()), (State::HalfOpen, 0));
    b.try_acquire().unwrap().success();
    assert_eq!(b.state(), State::Closed);
}

#[test]
fn permit_dropped_by_a_panic_records_a_failure() {
    let (b, _) = manual("libraryd", count(1, 1, 1));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _permit = b.try_acquire().unwrap();
        panic!("the call panicked");
    }));
    assert!(result.is_err());
    let s = b.snapshot();
    assert_eq!((s.state, s.calls, s.failures), (State::Open, 1, 1));
}

#[test]
fn cancelled_call_frees_its_probe_slot() {
    let (b, clock) = manual("libraryd", count(4, 4, 1));
    open_then_expire(&b, &clock);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        let never = b.call(std::future::pending::<Outcome>());
        let timed_out = tokio::time::timeout(Duration::from_millis(1), never).await;
        assert!(timed_out.is_err());
    });
    assert_eq!((b.state(), b.probes_in_flight()), (State::HalfOpen, 0));
}

// Rule 9: operator actions.

#[test]
fn force_open_rejects_everything_until_reset() {
    let (b, clock) = manual("libraryd", count(4, 4, 1));
    b.force_open();
    clock.advance(Duration::from_secs(3_600));
    let rejected = b.try_acquire().unwrap_err();
    assert_eq!(rejected.reason(), RejectReason::ForcedOpen);
    assert_eq!(b.state(), State::ForcedOpen, "never half-opens");
    b.reset();
    b.try_acquire().unwrap().success();
    assert_eq!(b.state(), State::Closed);
}

#[test]
fn disable_admits_everything_and_records_nothing() {
    let (b, _) = manual("libraryd", count(4, 4, 1));
    b.disable();
    fail_n(&b, 100);
    let s = b.snapshot();
    assert_eq!(
        (s.state, s.calls, s.failures, s.rejected),
        (State::Disabled, 0, 0, 0)
    );
    b.reset();
    assert_eq!(b.state(), State::Closed);
}

#[test]
fn reset_gives_closed_with_an_empty_window() {
    let (b, _) = manual("libraryd", count(4, 4, 1));
    let before = b.try_acquire().unwrap();
    fail_n(&b, 3);
    b.reset();
    before.failure(); // admitted before the reset: discarded
    let s = b.snapshot();
    assert_eq!((s.state, s.calls, s.failures), (State::Closed, 0, 0));
}

// Rule 10: events.

#[test]
fn one_event_per_real_transition() {
    let (b, clock) = manual("libraryd", count(4, 4, 1));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    b.on_event(move |e| {
        if let Event::StateTransition { from, to, .. } = e {
            log.lock().unwrap().push((*from, *to));
        }
    });
    open_then_expire(&b, &clock);
    b.try_acquire().unwrap().success();
    b.reset(); // CLOSED to CLOSED is not a transition
    b.force_open();
    b.force_open();
    b.disable();
    b.reset();
    use State::*;
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (Closed, Open),
            (Open, HalfOpen),
            (HalfOpen, Closed),
            (Closed, ForcedOpen),
            (ForcedOpen, Disabled),
            (Disabled, Closed),
        ]
    );
}

#[test]
fn listener_may_call_back_into_the_breaker() {
    let (b, _) = manual("libraryd", count(4, 4, 1));
    let b = Arc::new(b);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (inner, log) = (Arc::downgrade(&b), seen.clone());
    b.on_event(move |_| {
        let b = inner.upgrade().unwrap();
        log.lock().unwrap().push((b.state(), b.snapshot().calls));
        if b.state() == State::Open {
            b.force_open();
        }
    });
    fail_n(&b, 4);
    assert_eq!(b.state(), State::ForcedOpen);
    assert_eq!(
        *seen.lock().unwrap(),
        [(State::Open, 4), (State::ForcedOpen, 4)]
    );
}

#[test]
fn panicking_listener_does_not_break_the_breaker() {
    let (b, clock) = manual("libraryd", count(4, 4, 1));
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    b.on_event(|_| panic!("listener bug"));
    b.on_event(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    open_then_expire(&b, &clock);
    b.try_acquire().unwrap().success();
    assert_eq!(b.state(), State::Closed);
    assert_eq!(
        calls.load(Ordering::SeqCst),
        3,
        "the next listener still runs"
    );
}

// Rule 11: shareable and bounded.

#[test]
fn breaker_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Breaker>();
    assert_send_sync::<breakerbox::Rejected>();
    fn assert_send<T: Send>() {}
    assert_send::<breakerbox::Permit<'static>>();
}

#[test]
fn owned_permit_reports_and_drops_as_a_permit_does() {
    let (b, clock) = manual("libraryd", count(4, 4, 1));
    let b = Arc::new(b);
    open_then_expire(&b, &clock);
    let probe = b.try_acquire_owned().unwrap();
    assert_eq!(b.probes_in_flight(), 1);
    drop(probe);
    assert_eq!((b.state(), b.probes_in_flight()), (State::HalfOpen, 0));
    let probe = b.try_acquire_owned().unwrap();
    std::thread::spawn(move || probe.success()).join().unwrap();
    assert_eq!(b.state(), State::Closed);
    assert_eq!(
        Arc::strong_count(&b),
        1,
        "a settled permit releases its share"
    );
}
