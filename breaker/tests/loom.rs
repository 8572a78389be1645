#![cfg(loom)]
//! Model checking of the breaker's concurrent paths with loom: every interleaving of a few
//! threads, and every value a relaxed or acquire load may return, within a preemption bound.
//!
//! Checked: the result racing a trip, a result racing the guess of the window word its
//! owner swaps from, the half-open probe limit, stale results finishing
//! during a transition, `reset` racing a tripping failure, cancelled probes freeing their
//! slot, a result racing a `reconfigure` of the failure rate or of where the window is kept,
//! the lifetime totals, keyed
//! families, the bulkhead's slots racing completion and cancellation, and a hung probe's
//! late result racing the call that finds it hung. Each model asserts exact outcomes after
//! joining its threads; where the race leaves a choice, the assertion names every outcome
//! allowed.
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p breaker --test loom --release
//! ```
//!
//! Each model explores every interleaving with up to 3 preemptions, or 2 for the models where
//! three threads race, whose space grows fastest; `LOOM_MAX_PREEMPTIONS` sets one bound for
//! all of them.

use std::time::Duration;

use breakerbox::clock::ManualClock;
use breakerbox::{
    events::Event, snapshot::CallTotals, Breaker, Config, Outcome, Permit, RejectReason, State,
};
use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use loom::sync::{Arc, Mutex};
use loom::thread;

const OPEN_FOR: Duration = Duration::from_secs(5);

/// Preemptions per execution where two threads race.
const PREEMPTIONS: usize = 3;

/// Preemptions per execution where three threads race: a third preemption takes such a
/// model from under a minute to many.
const PREEMPTIONS_OF_THREE: usize = 2;

/// Runs `model` in every interleaving with up to `preemptions` preemptions (unless
/// `LOOM_MAX_PREEMPTIONS` says otherwise): enough for each race below, few enough that the
/// suite runs in a few minutes.
fn check_with(preemptions: usize, model: impl Fn() + Send + Sync + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(preemptions);
    builder.check(model);
}

fn check(model: impl Fn() + Send + Sync + 'static) {
    check_with(PREEMPTIONS, model);
}

/// A count window of `window` calls judged from `min` calls at `rate`, with `probes`.
fn breaker(window: u32, min: u32, rate: f64, probes: u32) -> (Arc<Breaker>, ManualClock) {
    let config = Config::builder()
        .count_window(window)
        .min_calls(min)
        .failure_rate(rate)
        .open_for(OPEN_FOR)
        .probes(probes)
        .build()
        .unwrap();
    let clock = ManualClock::new();
    let b = Breaker::with_clock("libraryd", config, clock.clone());
    (Arc::new(b), clock)
}

/// Opens `b` (a window of 2 judged from 2 calls) and lets the open period pass.
fn open_then_expire(b: &Breaker, clock: &ManualClock) {
    b.try_acquire().unwrap().failure();
    b.try_acquire().unwrap().failure();
    assert_eq!(b.state(), State::Open);
    clock.advance(OPEN_FOR);
}

/// The transitions `b` reports, in the order its listener saw them.
fn transitions(b: &Breaker) -> Arc<Mutex<Vec<(State, State)>>> {
    let log = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&log);
    b.on_event(move |e: &Event| {
        if let Event::StateTransition { from, to, .. } = e {
            sink.lock().unwrap().push((*from, *to));
        }
    });
    log
}

fn seen(log: &Mutex<Vec<(State, State)>>) -> Vec<(State, State)> {
    log.lock().unwrap().clone()
}

/// The generation a permit was admitted in, which only its `Debug` output shows.
fn generation_of(permit: &Permit<'_>) -> u64 {
    let debug = format!("{permit:?}");
    let (_, rest) = debug
        .split_once("generation: ")
        .expect("a permit's Debug shows its generation");
    let digits = rest.split(|c: char| !c.is_ascii_digit()).next().unwrap();
    digits.parse().unwrap()
}

/// Ends a permit: reports its result, or drops it without one.
type End = fn(Permit<'_>);

/// Every way a permit ends, named.
const ENDINGS: [(&str, End); 3] = [
    ("success", |permit| permit.success()),
    ("failure", |permit| permit.failure()),
    ("cancel", |permit| drop(permit)),
];

// 1. A result racing the trip.

/// One failure is in a window of 2 that opens at 2 of 2: a second failure trips it, while
/// another caller's success, counted first, keeps it closed. The success is either counted
/// before the trip or discarded; it never undoes an OPEN.
#[test]
fn result_racing_the_trip_counts_before_it_or_not_at_all() {
    check(|| {
        let (b, _clock) = breaker(2, 2, 1.0, 1);
        b.try_acquire().unwrap().failure();
        let log = transitions(&b);

        let tripper = {
            let b = Arc::clone(&b);
            thread::spawn(move || {
                // A success cannot trip this window, so the breaker is closed until this
                // failure is recorded.
                b.try_acquire().expect("closed").failure();
            })
        };
        let caller = {
            let b = Arc::clone(&b);
            thread::spawn(move || match b.try_acquire() {
                Ok(permit) => {
                    let before = b.state();
                    permit.success();
                    if before == State::Open {
                        assert_eq!(b.state(), State::Open, "a late success closed the breaker");
                    }
                    true
                }
                Err(rejected) => {
                    assert_eq!(rejected.reason(), RejectReason::Open);
                    false
                }
            })
        };
        tripper.join().unwrap();
        let admitted = caller.join().unwrap();

        let s = b.snapshot();
        let end = (s.state, s.calls, s.failures, seen(&log));
        let tripped = (State::Open, 2, 2, vec![(State::Closed, State::Open)]);
        if admitted {
            // Counted first, the success leaves one failure of 2 after the second failure.
            let counted_first = (State::Closed, 2, 1, vec![]);
            assert!(end == counted_first || end == tripped, "{end:?}");
        } else {
            assert_eq!(end, tripped);
        }
        let t = s.totals;
        assert_eq!(
            (t.success, t.failure, t.rejected),
            (u64::from(admitted), 2, u64::from(!admitted))
        );
    });
}

/// The thread that counts first (the totals' owner) swaps its results into the packed
/// window from the word its last swap found. Another caller's failure races the owner's
/// success and failure, so the owner's guess may be stale at either: each result is counted
/// once, in the order the results landed, and the window after the owner's next results is
/// the same whatever that order was.
#[test]
fn a_result_racing_the_owners_guess_of_the_window_is_counted_once() {
    check(|| {
        let (b, _clock) = breaker(3, 3, 1.0, 1);
        // The main thread counts first, and fills the window with successes.
        for _ in 0..3 {
            b.try_acquire().unwrap().success();
        }
        let other = {
            let b = Arc::clone(&b);
            thread::spawn(move || b.try_acquire().expect("closed").failure())
        };
        b.try_acquire().expect("closed").success();
        b.try_acquire().expect("closed").failure();
        other.join().unwrap();

        // The last 3 are the three racing results in one of their orders: 2 failures.
        let counts = |b: &Breaker| {
            let s = b.snapshot();
            (s.state, s.calls, s.failures)
        };
        assert_eq!(counts(&b), (State::Closed, 3, 2));
        // Whatever the order, the owner's failure is among the last 3 after one success
        // more, and the other's failure is not after two.
        b.try_acquire().unwrap().success();
        b.try_acquire().unwrap().success();
        assert_eq!(counts(&b), (State::Closed, 3, 1));
        b.try_acquire().unwrap().success();
        assert_eq!(counts(&b), (State::Closed, 3, 0));
        let t = b.snapshot().totals;
        assert_eq!((t.success, t.failure), (7, 2));
    });
}

/// The owner reads the window while it is full of successes and guesses while it holds
/// failures, changing ways as its own swap makes or leaves the full word. Another caller's
/// failure races the owner's success that fills the window with successes (the owner then
/// reads the window again) and the success after it: each result is counted once, in the
/// order the results landed.
#[test]
fn a_result_racing_the_owner_filling_the_window_with_successes_is_counted_once() {
    check(|| {
        let (b, _clock) = breaker(3, 3, 1.0, 1);
        // The main thread counts first: S S S, then F S S, guessing from its last swap.
        for failure in [false, false, false, true, false, false] {
            let permit = b.try_acquire().unwrap();
            if failure {
                permit.failure()
            } else {
                permit.success()
            }
        }
        let other = {
            let b = Arc::clone(&b);
            thread::spawn(move || b.try_acquire().expect("closed").failure())
        };
        b.try_acquire().expect("closed").success();
        b.try_acquire().expect("closed").success();
        other.join().unwrap();

        // The last 3 hold the other's failure, wherever it landed among the owner's two
        // successes, and nothing else.
        let counts = |b: &Breaker| {
            let s = b.snapshot();
            (s.state, s.calls, s.failures)
        };
        assert_eq!(counts(&b), (State::Closed, 3, 1));
        for _ in 0..3 {
            b.try_acquire().unwrap().success();
        }
        assert_eq!(counts(&b), (State::Closed, 3, 0), "out after three more");
        let t = b.snapshot().totals;
        assert_eq!((t.success, t.failure), (10, 2));
    });
}

// 2. HALF_OPEN: at most `probes` at once; closed only by `probes` successes.

/// Three callers race for two probe slots and report success. At most 2 permits are held at
/// once (counted inside the permits' lifetimes, so the count never exceeds the breaker's),
/// and the breaker closes only once 2 successes were reported.
#[test]
fn half_open_admits_at_most_probes_at_once_and_closes_on_their_successes() {
    check_with(PREEMPTIONS_OF_THREE, || {
        let (b, clock) = breaker(2, 2, 0.5, 2);
        open_then_expire(&b, &clock);
        let held = Arc::new(AtomicUsize::new(0));
        let reported = Arc::new(AtomicUsize::new(0));
        // Successes reported when the breaker closed; a listener's panic would be contained,
        // so it notes the count and the test asserts after the join.
        let reported_at_close = Arc::new(AtomicUsize::new(usize::MAX));
        {
            let (reported, at_close) = (Arc::clone(&reported), Arc::clone(&reported_at_close));
            b.on_event(move |e: &Event| {
                if let Event::StateTransition {
                    to: State::Closed, ..
                } = e
                {
                    at_close.store(reported.load(SeqCst), SeqCst);
                }
            });
        }

        let callers: Vec<_> = (0..3)
            .map(|_| {
                let (b, held, reported) =
                    (Arc::clone(&b), Arc::clone(&held), Arc::clone(&reported));
                thread::spawn(move || match b.try_acquire() {
                    Ok(permit) => {
                        let now_held = held.fetch_add(1, SeqCst) + 1;
                        assert!(now_held <= 2, "{now_held} permits held in HALF_OPEN");
                        held.fetch_sub(1, SeqCst);
                        reported.fetch_add(1, SeqCst);
                        permit.success();
                        true
                    }
                    Err(rejected) => {
                        assert_eq!(rejected.reason(), RejectReason::HalfOpenFull);
                        false
                    }
                })
            })
            .collect();
        let admitted = callers
            .into_iter()
            .map(|c| u64::from(c.join().unwrap()))
            .sum::<u64>();

        // The first two callers always get the two slots; the third only once one is free.
        assert!(admitted == 2 || admitted == 3, "{admitted} admitted");
        assert_eq!((b.state(), b.probes_in_flight()), (State::Closed, 0));
        let at_close = reported_at_close.load(SeqCst) as u64;
        assert!(
            (2..=admitted).contains(&at_close),
            "closed after {at_close} successes"
        );
        let t = b.snapshot().totals;
        assert_eq!(
            (t.success, t.failure, t.rejected),
            (admitted, 2, 3 - admitted)
        );
    });
}

/// Of two probes, one fails while the other succeeds: the breaker reopens whichever result
/// comes first, and a success after the failure is stale.
#[test]
fn probe_failure_reopens_and_a_late_probe_success_cannot_close() {
    check(|| {
        let (b, clock) = breaker(2, 2, 0.5, 2);
        open_then_expire(&b, &clock);
        let log = transitions(&b);
        let probe = b.try_acquire().unwrap();

        let failing = {
            let b = Arc::clone(&b);
            // One slot is always free for it: the held probe is the only other one.
            thread::spawn(move || b.try_acquire().expect("a free slot").failure())
        };
        probe.success();
        failing.join().unwrap();

        assert_eq!((b.state(), b.probes_in_flight()), (State::Open, 0));
        assert_eq!(
            seen(&log),
            [
                (State::Open, State::HalfOpen),
                (State::HalfOpen, State::Open)
            ]
        );
    });
}

// 3. Stale results finishing during a transition.

/// A permit of the first CLOSED ends while a probe takes the breaker from OPEN through
/// HALF_OPEN to CLOSED: whatever its result, the state and the new window are exactly as if
/// it never came.
#[test]
fn stale_closed_result_during_recovery_changes_nothing() {
    for (ending, end) in ENDINGS {
        check(move || {
            let (b, clock) = breaker(2, 2, 0.5, 1);
            let stale = b.try_acquire().unwrap();
            open_then_expire(&b, &clock);
            let log = transitions(&b);

            let prober = {
                let b = Arc::clone(&b);
                thread::spawn(move || b.try_acquire().expect("the probe").success())
            };
            end(stale);
            prober.join().unwrap();

            let s = b.snapshot();
            assert_eq!(
                (s.state, s.calls, s.failures, b.probes_in_flight()),
                (State::Closed, 0, 0, 0),
                "stale {ending}"
            );
            assert_eq!(
                seen(&log),
                [
                    (State::Open, State::HalfOpen),
                    (State::HalfOpen, State::Closed)
                ],
                "stale {ending}"
            );
        });
    }
}

/// A probe of an earlier HALF_OPEN ends while a probe of the current one is in flight: it
/// neither closes nor reopens the breaker, nor frees the current probe's slot.
#[test]
fn stale_probe_never_touches_a_newer_half_open() {
    for (ending, end) in ENDINGS {
        check(move || {
            let (b, clock) = breaker(2, 2, 0.5, 1);
            open_then_expire(&b, &clock);
            let stale = b.try_acquire().unwrap();
            b.force_open();
            b.reset();
            open_then_expire(&b, &clock);

            let prober = {
                let b = Arc::clone(&b);
                thread::spawn(move || {
                    let probe = b.try_acquire().expect("the first probe after the period");
                    assert_eq!(b.probes_in_flight(), 1, "stale {ending}");
                    assert_eq!(
                        b.try_acquire().unwrap_err().reason(),
                        RejectReason::HalfOpenFull,
                        "stale {ending}"
                    );
                    drop(probe);
                })
            };
            end(stale);
            prober.join().unwrap();

            assert_eq!(
                (b.state(), b.probes_in_flight()),
                (State::HalfOpen, 0),
                "stale {ending}"
            );
        });
    }
}

/// A probe's result races a reopening and the next HALF_OPEN: whether it finds the breaker
/// of its own generation at its first look or not, it never counts in the next HALF_OPEN,
/// where the one probe in flight is the only one, and one success of 2 leaves it half-open.
#[test]
fn probe_result_overtaken_by_a_reopening_never_counts_in_the_next_half_open() {
    for (ending, end) in ENDINGS {
        check(move || {
            let (b, clock) = breaker(2, 2, 0.5, 2);
            open_then_expire(&b, &clock);
            let overtaken = b.try_acquire().unwrap();

            let prober = {
                let b = Arc::clone(&b);
                thread::spawn(move || {
                    match b.try_acquire() {
                        Ok(probe) => probe.failure(),
                        // Reopened by the overtaken probe's own failure.
                        Err(rejected) => assert_eq!(rejected.reason(), RejectReason::Open),
                    }
                    clock.advance(OPEN_FOR);
                    let next = b.try_acquire().expect("the next HALF_OPEN's first probe");
                    assert_eq!(b.probes_in_flight(), 1, "overtaken {ending}");
                    next.success();
                })
            };
            end(overtaken);
            prober.join().unwrap();

            assert_eq!(
                (b.state(), b.probes_in_flight()),
                (State::HalfOpen, 0),
                "overtaken {ending}"
            );
        });
    }
}

/// A failure that trips a window of 1 races `force_open`: it is counted before the breaker
/// is forced open or not at all, and the breaker ends FORCED_OPEN either way.
#[test]
fn failure_racing_force_open_counts_before_it_or_not_at_all() {
    check(|| {
        let (b, _clock) = breaker(1, 1, 1.0, 1);
        let log = transitions(&b);
        let permit = b.try_acquire().unwrap();

        let operator = {
            let b = Arc::clone(&b);
            thread::spawn(move || b.force_open())
        };
        permit.failure();
        operator.join().unwrap();

        let s = b.snapshot();
        // Listeners run once the lock is released: two transitions made by two threads may
        // reach them in either order.
        let mut events = seen(&log);
        events.sort_by_key(|&(from, to)| (from as u8, to as u8));
        let end = (s.state, s.calls, s.failures, events);
        let forced = vec![(State::Closed, State::ForcedOpen)];
        let tripped_then_forced = vec![
            (State::Closed, State::Open),
            (State::Open, State::ForcedOpen),
        ];
        let allowed = [
            // Forced open first: the failure is stale.
            (State::ForcedOpen, 0, 0, forced.clone()),
            // Counted, and forced open before the failure's thread could open the breaker.
            (State::ForcedOpen, 1, 1, forced),
            (State::ForcedOpen, 1, 1, tripped_then_forced),
        ];
        assert!(allowed.contains(&end), "{end:?}");
    });
}

// 4. `reset` racing a tripping failure.

/// A permit admitted before a `reset` reports the failure that would trip the window: the
/// breaker ends CLOSED with an empty window, whichever comes first.
#[test]
fn reset_racing_a_tripping_failure_never_leaves_the_breaker_open() {
    check(|| {
        let (b, _clock) = breaker(2, 2, 0.5, 1);
        b.try_acquire().unwrap().failure();
        let permit = b.try_acquire().unwrap();

        let resetter = {
            let b = Arc::clone(&b);
            thread::spawn(move || b.reset())
        };
        permit.failure();
        resetter.join().unwrap();

        let s = b.snapshot();
        assert_eq!((s.state, s.calls, s.failures), (State::Closed, 0, 0));
    });
}

/// A caller acquires and fails while another thread resets. The permit's generation decides:
/// admitted before the reset, its failure is discarded; after it, the failure is the new
/// window's only call.
#[test]
fn reset_racing_acquire_counts_the_result_in_its_generation_only() {
    check(|| {
        let (b, _clock) = breaker(2, 2, 0.5, 1);
        b.try_acquire().unwrap().failure();

        let resetter = {
            let b = Arc::clone(&b);
            thread::spawn(move || b.reset())
        };
        let caller = {
            let b = Arc::clone(&b);
            thread::spawn(move || {
                // CLOSED before the reset (one failure cannot trip) and after it.
                let permit = b.try_acquire().expect("closed");
                let generation = generation_of(&permit);
                permit.failure();
                generation
            })
        };
        resetter.join().unwrap();
        let generation = caller.join().unwrap();

        let s = b.snapshot();
        let end = (s.state, s.calls, s.failures);
        match generation {
            0 => assert_eq!(end, (State::Closed, 0, 0), "admitted before the reset"),
            1 => assert_eq!(end, (State::Closed, 1, 1), "admitted after the reset"),
            _ => panic!("admitted in generation {generation}"),
        }
    });
}

// 5. A cancelled probe frees its slot.

/// The only probe is dropped while another caller asks: either that caller gets the slot,
/// or a later one does. HALF_OPEN never rejects with no probe in flight.
#[test]
fn cancelled_probe_frees_its_slot() {
    check(|| {
        let (b, clock) = breaker(2, 2, 0.5, 1);
        open_then_expire(&b, &clock);
        let probe = b.try_acquire().unwrap();

        let caller = {
            let b = Arc::clone(&b);
            thread::spawn(move || match b.try_acquire() {
                Ok(permit) => drop(permit),
                Err(rejected) => assert_eq!(rejected.reason(), RejectReason::HalfOpenFull),
            })
        };
        drop(probe);
        caller.join().unwrap();

        assert_eq!((b.state(), b.probes_in_flight()), (State::HalfOpen, 0));
        b.try_acquire().expect("a free slot").success();
        assert_eq!(b.state(), State::Closed);
    });
}

/// A probe is dropped while the other probe's failure reopens the breaker: the drop frees
/// nothing, so the next HALF_OPEN admits exactly `probes` probes.
#[test]
fn probe_cancelled_as_the_breaker_reopens_frees_nothing_later() {
    check(|| {
        let (b, clock) = breaker(2, 2, 0.5, 2);
        open_then_expire(&b, &clock);
        let probe = b.try_acquire().unwrap();

        let failing = {
            let b = Arc::clone(&b);
            thread::spawn(move || b.try_acquire().expect("a free slot").failure())
        };
        drop(probe);
        failing.join().unwrap();

        assert_eq!((b.state(), b.probes_in_flight()), (State::Open, 0));
        clock.advance(OPEN_FOR);
        let first = b.try_acquire().expect("first probe");
        let second = b.try_acquire().expect("second probe");
        assert_eq!(
            b.try_acquire().unwrap_err().reason(),
            RejectReason::HalfOpenFull
        );
        assert_eq!(b.probes_in_flight(), 2);
        first.success();
        second.success();
        assert_eq!(b.state(), State::Closed);
    });
}

// 6. A result racing a `reconfigure` of the failure rate, or of where the window is kept.

/// A count window of 4 calls judged from 2 calls at `rate`: at 0.5, one failure in 2 calls
/// trips it; at 0.6, one failure in 2 or 3 calls never does.
fn at_rate(rate: f64) -> Config {
    Config::builder()
        .count_window(4)
        .min_calls(2)
        .failure_rate(rate)
        .open_for(OPEN_FOR)
        .probes(1)
        .build()
        .unwrap()
}

/// One success is in the window at 0.5, so a failure trips it, while an operator raises the
/// rate to 0.6, the window kept. A failure judged without the lock under 0.5 may seal the
/// window after the new rate is in force, and a success admitted before the reconfigure and
/// reported after it may then find the window sealed. The breaker opens only if the trip
/// took its lock before the reconfigure: once the reconfigure has returned with the breaker
/// closed, nothing judged under the old rate opens it, and every result counts.
#[test]
fn a_trip_judged_under_a_rate_raised_since_never_opens_the_breaker() {
    check(|| {
        let b = Arc::new(Breaker::with_clock(
            "libraryd",
            at_rate(0.5),
            ManualClock::new(),
        ));
        b.try_acquire().unwrap().success();
        let late = b.try_acquire().unwrap();
        let log = transitions(&b);

        let tripper = {
            let b = Arc::clone(&b);
            // Nothing else can open the breaker before this failure: admitted in CLOSED.
            thread::spawn(move || b.try_acquire().expect("closed").failure())
        };
        b.reconfigure(at_rate(0.6));
        let after = b.state();
        late.success();
        tripper.join().unwrap();

        let s = b.snapshot();
        let end = (s.state, s.calls, s.failures, seen(&log));
        match after {
            // Tripped under 0.5 and opened first; the late success is stale.
            State::Open => assert_eq!(end, (State::Open, 2, 1, vec![(State::Closed, State::Open)])),
            // Judged under 0.6, whenever the failure sealed the window: every call counts.
            State::Closed => assert_eq!(end, (State::Closed, 3, 1, vec![])),
            other => panic!("{other:?} after the reconfigure"),
        }
    });
}

/// One success is in the window at 0.6, so a failure does not trip it, while an operator
/// lowers the rate to 0.5, under which it does. A failure judged without the lock under 0.6
/// may land after the new rate is in force: it is judged again under 0.5, so the breaker
/// opens whichever comes first, at once.
#[test]
fn a_failure_judged_under_a_rate_lowered_since_still_opens_the_breaker() {
    check(|| {
        let b = Arc::new(Breaker::with_clock(
            "libraryd",
            at_rate(0.6),
            ManualClock::new(),
        ));
        b.try_acquire().unwrap().success();
        let log = transitions(&b);

        let failing = {
            let b = Arc::clone(&b);
            // One failure in 1 call trips at neither rate: admitted in CLOSED.
            thread::spawn(move || b.try_acquire().expect("closed").failure())
        };
        b.reconfigure(at_rate(0.5));
        failing.join().unwrap();

        let s = b.snapshot();
        let end = (s.state, s.calls, s.failures, seen(&log));
        assert_eq!(end, (State::Open, 2, 1, vec![(State::Closed, State::Open)]));
    });
}

/// One success is in the packed window while an operator turns slow calls on, which moves
/// the window under the lock (the owner seals the word and hands its calls to the machine).
/// A failure recorded without the lock lands in the word before the seal and moves with the
/// window, or finds the word sealed and is recorded under the lock into the moved window:
/// counted once either way, and nothing is lost of the window.
#[test]
fn a_result_racing_the_window_moving_under_the_lock_is_counted_once() {
    check(|| {
        let b = Arc::new(Breaker::with_clock(
            "libraryd",
            at_rate(0.9),
            ManualClock::new(),
        ));
        b.try_acquire().unwrap().success();

        let failing = {
            let b = Arc::clone(&b);
            // One failure in 2 calls never trips at 0.9: admitted in CLOSED.
            thread::spawn(move || b.try_acquire().expect("closed").failure())
        };
        let timed = at_rate(0.9)
            .to_builder()
            .slow_calls(Duration::from_secs(1), 1.0)
            .build()
            .unwrap();
        b.reconfigure(timed);
        failing.join().unwrap();

        let s = b.snapshot();
        assert_eq!(
            (s.state, s.calls, s.failures, s.slow_calls),
            (State::Closed, 2, 1, 0)
        );
    });
}

// 7. Totals.

/// Makes one call ending with `outcome` (`None`: dropped without a result), and counts how
/// it ended in `seen`.
fn call(b: &Breaker, outcome: Option<Outcome>, seen: &mut CallTotals) {
    match b.try_acquire() {
        Ok(permit) => {
            let count = match outcome {
                Some(Outcome::Success) => &mut seen.success,
                Some(Outcome::Failure) => &mut seen.failure,
                Some(Outcome::Ignored) => &mut seen.ignored,
                None => &mut seen.cancelled,
            };
            *count += 1;
            match outcome {
                Some(outcome) => permit.record(outcome),
                None => drop(permit),
            }
        }
        Err(rejected) => {
            seen.rejected += 1;
            let by = &mut seen.rejected_by;
            *match rejected.reason() {
                RejectReason::Open => &mut by.open,
                RejectReason::HalfOpenFull => &mut by.half_open_full,
                RejectReason::ForcedOpen => &mut by.forced_open,
                RejectReason::Throttled => &mut by.throttled,
                RejectReason::Bulkhead => &mut by.bulkhead,
                other => panic!("rejected by {other:?}"),
            } += 1;
        }
    }
}

/// Two callers each fail, then end their other calls every other way, while the breaker
/// trips under them (any 2 results that include a failure open it): the totals hold every
/// ending exactly once, and a reading taken during the race never exceeds the final one.
/// The main thread counts first, so both callers count beside it, on the stripes.
#[test]
fn totals_count_every_ending_exactly_once() {
    // The two callers race with the reading of the main thread.
    check_with(PREEMPTIONS_OF_THREE, || {
        let (b, _clock) = breaker(2, 2, 0.5, 1);
        drop(b.try_acquire().unwrap());
        let callers: Vec<_> = [
            vec![Some(Outcome::Failure), Some(Outcome::Success)],
            vec![Some(Outcome::Failure), Some(Outcome::Ignored), None],
        ]
        .into_iter()
        .map(|outcomes| {
            let b = Arc::clone(&b);
            thread::spawn(move || {
                let mut seen = CallTotals::default();
                for outcome in outcomes {
                    call(&b, outcome, &mut seen);
                }
                seen
            })
        })
        .collect();
        let during = b.snapshot().totals;
        // The main thread's call, dropped.
        let mut expected = CallTotals::default();
        expected.cancelled = 1;
        for caller in callers {
            let seen = caller.join().unwrap();
            expected.success += seen.success;
            expected.failure += seen.failure;
            expected.ignored += seen.ignored;
            expected.cancelled += seen.cancelled;
            expected.rejected += seen.rejected;
            let (by, seen_by) = (&mut expected.rejected_by, seen.rejected_by);
            by.open += seen_by.open;
            by.half_open_full += seen_by.half_open_full;
            by.forced_open += seen_by.forced_open;
            by.throttled += seen_by.throttled;
            by.bulkhead += seen_by.bulkhead;
        }

        let s = b.snapshot();
        let totals = s.totals;
        assert_eq!(totals, expected);
        assert_eq!(s.state, State::Open);
        assert_eq!(totals.admitted() + totals.rejected, 6);
        let each = |t: CallTotals| {
            let by = t.rejected_by;
            [
                t.success,
                t.failure,
                t.ignored,
                t.cancelled,
                t.rejected,
                by.open,
            ]
        };
        for (now, then) in each(totals).into_iter().zip(each(during)) {
            assert!(
                then <= now,
                "{during:?} read during the race, {totals:?} after"
            );
        }
    });
}

// 8. Keyed families: a member is born in its family's state.

use breakerbox::__private::{Action, Keyed};

const REPLICA: &str = "10.0.0.1:7000";

/// A family of at most 4 keys with the default configuration.
fn family() -> Arc<Keyed> {
    Arc::new(Keyed::new(
        std::sync::Arc::from("replicas"),
        Config::default(),
        4,
    ))
}

/// The default configuration with failure rate `rate`.
fn with_rate(rate: f64) -> Config {
    Config::builder().failure_rate(rate).build().unwrap()
}

/// An override of a family races the birth of a member: once `apply` returns, the member
/// has the applied configuration and action, whether it was born before (and changed by
/// `apply`) or after (born with them); it never keeps the state from before.
#[test]
fn keyed_override_racing_a_new_member_leaves_it_with_the_override() {
    check(|| {
        let f = family();
        let creator = {
            let f = Arc::clone(&f);
            thread::spawn(move || f.breaker(REPLICA))
        };
        f.apply(Some(with_rate(0.25)), Some(Action::ForceOpen));
        let member = creator.join().unwrap();

        let end = (member.config().failure_rate(), member.state());
        assert_eq!(end, (0.25, State::ForcedOpen));
        assert!(member.try_acquire().is_err());
        assert!(std::sync::Arc::ptr_eq(&f.breaker(REPLICA), &member));
    });
}

/// Two overrides of a family race each other and the birth of a member: the members and the
/// family end with the same one, the configuration and action of one apply together.
#[test]
fn keyed_overrides_racing_each_other_leave_every_member_with_the_last() {
    check_with(PREEMPTIONS_OF_THREE, || {
        let f = family();
        let old = f.breaker("10.0.0.2:7000");
        let first = {
            let f = Arc::clone(&f);
            thread::spawn(move || f.apply(Some(with_rate(0.25)), Some(Action::ForceOpen)))
        };
        let creator = {
            let f = Arc::clone(&f);
            thread::spawn(move || f.breaker(REPLICA))
        };
        f.apply(Some(with_rate(0.75)), Some(Action::Disable));
        first.join().unwrap();
        let new = creator.join().unwrap();

        let family_rate = f.config().failure_rate();
        let last = match family_rate {
            0.25 => (0.25, State::ForcedOpen),
            0.75 => (0.75, State::Disabled),
            other => panic!("the family's rate is {other}"),
        };
        for member in [&old, &new] {
            assert_eq!((member.config().failure_rate(), member.state()), last);
        }
        let later = f.breaker("10.0.0.3:7000");
        assert_eq!((later.config().failure_rate(), later.state()), last);
    });
}

/// Two callers ask a forced-open family for the same new key at once: whichever creates
/// the member and whichever finds it, neither is admitted.
#[test]
fn keyed_forced_family_new_member_never_admits() {
    check(|| {
        let f = family();
        f.apply(None, Some(Action::ForceOpen));
        let other = {
            let f = Arc::clone(&f);
            thread::spawn(move || f.breaker(REPLICA).try_acquire().is_ok())
        };
        let here = f.breaker(REPLICA).try_acquire().is_ok();
        assert_eq!((here, other.join().unwrap()), (false, false));
        let member = f.breaker(REPLICA);
        assert_eq!(
            (member.state(), member.snapshot().totals.rejected),
            (State::ForcedOpen, 2)
        );
    });
}

/// A key is removed while a call on it is in flight: the call ends in the removed breaker,
/// and the key's next call gets a new, empty one.
#[test]
fn keyed_removal_racing_a_call_in_flight_leaves_the_result_in_the_removed_breaker() {
    check(|| {
        let f = family();
        let member = f.breaker(REPLICA);
        let caller = {
            let member = std::sync::Arc::clone(&member);
            thread::spawn(move || member.try_acquire().unwrap().failure())
        };
        let removed = f.remove(REPLICA).unwrap();
        caller.join().unwrap();

        assert!(std::sync::Arc::ptr_eq(&removed, &member));
        assert_eq!(member.snapshot().failures, 1);
        let fresh = f.breaker(REPLICA);
        assert!(!std::sync::Arc::ptr_eq(&fresh, &member));
        assert_eq!((fresh.state(), fresh.snapshot().calls), (State::Closed, 0));
        assert_eq!(f.members().len(), 1);
    });
}

// 9. The bulkhead: slots racing completion and cancellation.

/// A breaker with a bulkhead of `limit` calls, which two failures in a window of 2 open.
fn limited(limit: u32) -> Arc<Breaker> {
    let config = Config::builder()
        .count_window(2)
        .min_calls(2)
        .failure_rate(1.0)
        .open_for(OPEN_FOR)
        .max_concurrent(limit)
        .build()
        .unwrap();
    Arc::new(Breaker::with_clock("libraryd", config, ManualClock::new()))
}

/// Three callers race for one slot, one ending with a success, one with a failure and one
/// cancelled: at most one permit is held at once, every rejection is the bulkhead's, and
/// once they are done no slot is held, whatever the order.
#[test]
fn bulkhead_slots_racing_completion_and_cancellation_never_exceed_the_limit() {
    check_with(PREEMPTIONS_OF_THREE, || {
        let b = limited(1);
        let held = Arc::new(AtomicUsize::new(0));
        let callers: Vec<_> = ENDINGS
            .into_iter()
            .map(|(ending, end)| {
                let (b, held) = (Arc::clone(&b), Arc::clone(&held));
                thread::spawn(move || match b.try_acquire() {
                    Ok(permit) => {
                        let now_held = held.fetch_add(1, SeqCst) + 1;
                        assert!(now_held <= 1, "{now_held} permits held ({ending})");
                        assert!(b.in_flight() <= 1, "{} slots held", b.in_flight());
                        held.fetch_sub(1, SeqCst);
                        end(permit);
                        true
                    }
                    Err(rejected) => {
                        assert_eq!(rejected.reason(), RejectReason::Bulkhead, "{ending}");
                        false
                    }
                })
            })
            .collect();
        let admitted = callers
            .into_iter()
            .map(|c| u64::from(c.join().unwrap()))
            .sum::<u64>();

        assert!((1..=3).contains(&admitted), "{admitted} admitted");
        assert_eq!(b.in_flight(), 0);
        let s = b.snapshot();
        let t = s.totals;
        assert_eq!(t.admitted(), admitted);
        assert_eq!(
            (t.rejected, t.rejected_by.bulkhead),
            (3 - admitted, 3 - admitted)
        );
        // One failure never opens this window, and rejections never enter it.
        assert_eq!(s.state, State::Closed);
        assert_eq!(u64::from(s.calls), t.success + t.failure);
        b.try_acquire().expect("a free slot").success();
    });
}

/// A call holding the one slot reports the failure that trips the breaker while another
/// caller asks: the caller is rejected by the bulkhead (the slot still held) or by OPEN, or
/// admitted once the slot is free, its success then counted before the failure or
/// discarded after it. No slot is left held.
#[test]
fn bulkhead_slot_racing_a_trip_is_freed_whichever_rejects() {
    check(|| {
        let b = limited(1);
        b.try_acquire().unwrap().failure();
        let tripping = b.try_acquire().unwrap();

        let caller = {
            let b = Arc::clone(&b);
            thread::spawn(move || match b.try_acquire() {
                Ok(permit) => {
                    assert_eq!(b.in_flight(), 1);
                    permit.success();
                    None
                }
                Err(rejected) => Some(rejected.reason()),
            })
        };
        tripping.failure();
        let rejected = caller.join().unwrap();

        assert_eq!(b.in_flight(), 0);
        let s = b.snapshot();
        let by = s.totals.rejected_by;
        let end = (s.state, s.calls, s.failures, by.bulkhead, by.open);
        let tripped = (State::Open, 2, 2);
        match rejected {
            Some(RejectReason::Bulkhead) => assert_eq!(end, (State::Open, 2, 2, 1, 0)),
            Some(RejectReason::Open) => assert_eq!(end, (State::Open, 2, 2, 0, 1)),
            None => {
                // The slot is freed before the failure is recorded.
                let counted_first = (State::Closed, 2, 1, 0, 0);
                let discarded = (tripped.0, tripped.1, tripped.2, 0, 0);
                assert!(end == counted_first || end == discarded, "{end:?}");
            }
            Some(other) => panic!("rejected by {other:?}"),
        }
    });
}

/// The limit is removed while a caller takes a slot, and a success after the removal opens
/// the window full of successes again (a reconfiguration leaves a CLOSED window sealed
/// until a result judges it): the caller holds a slot the breaker sees, or gives it back on
/// seeing the limit gone. Its success lands in the full window either way, and frees any
/// slot it holds.
#[test]
fn bulkhead_limit_removed_racing_a_call_leaves_no_slot_held() {
    check(|| {
        let config = |limit: Option<u32>| {
            let builder = Config::builder()
                .count_window(2)
                .min_calls(2)
                .open_for(OPEN_FOR);
            match limit {
                Some(calls) => builder.max_concurrent(calls),
                None => builder,
            }
            .build()
            .unwrap()
        };
        let b = Arc::new(Breaker::with_clock(
            "libraryd",
            config(Some(1)),
            ManualClock::new(),
        ));
        b.try_acquire().unwrap().success();
        b.try_acquire().unwrap().success();

        let caller = {
            let b = Arc::clone(&b);
            thread::spawn(move || b.try_acquire().expect("no other call").success())
        };
        b.reconfigure(config(None));
        b.try_acquire().unwrap().success();
        caller.join().unwrap();

        assert_eq!(b.in_flight(), 0);
        let s = b.snapshot();
        assert_eq!((s.state, s.calls, s.totals.success), (State::Closed, 2, 4));
    });
}

// 10. A hung probe's late result.

/// One probe, out for `probe_timeout` when its late success races another call: whichever
/// the lock sees first reopens the breaker, the other finds it open. The breaker reopens
/// once, the call is rejected as OPEN with the whole new period, and the late success is
/// discarded.
#[test]
fn hung_probe_late_result_racing_a_call_reopens_once_and_is_discarded() {
    check(|| {
        let config = Config::builder()
            .count_window(2)
            .min_calls(2)
            .open_for(OPEN_FOR)
            .probes(1)
            .probe_timeout(Duration::from_secs(30))
            .build()
            .unwrap();
        let clock = ManualClock::new();
        let b = Arc::new(Breaker::with_clock("libraryd", config, clock.clone()));
        open_then_expire(&b, &clock);
        let hung = b.try_acquire().expect("the probe");
        clock.advance(Duration::from_secs(30));
        let log = transitions(&b);

        let caller = {
            let b = Arc::clone(&b);
            thread::spawn(move || b.try_acquire().map(drop).unwrap_err())
        };
        hung.success();
        let rejected = caller.join().unwrap();

        assert_eq!(
            (rejected.reason(), rejected.retry_after()),
            (RejectReason::Open, Some(OPEN_FOR))
        );
        assert_eq!((b.state(), b.probes_in_flight()), (State::Open, 0));
        assert_eq!(seen(&log), [(State::HalfOpen, State::Open)]);
        let s = b.snapshot();
        assert_eq!((s.calls, s.totals.success, s.totals.rejected), (2, 1, 1));
    });
}

/// A probe's success races the clock reaching its limit: it closes the breaker if the lock
/// takes it before the limit, and reopens it (the success discarded) after; never both, and
/// nothing of the probe is left in flight.
#[test]
fn probe_result_racing_its_limit_closes_or_reopens_never_both() {
    check(|| {
        let config = Config::builder()
            .count_window(2)
            .min_calls(2)
            .open_for(OPEN_FOR)
            .probes(1)
            .probe_timeout(Duration::from_secs(30))
            .build()
            .unwrap();
        let clock = ManualClock::new();
        let b = Arc::new(Breaker::with_clock("libraryd", config, clock.clone()));
        open_then_expire(&b, &clock);
        let probe = b.try_acquire().expect("the probe");
        clock.advance(Duration::from_secs(29));
        let log = transitions(&b);

        let ticker = thread::spawn(move || clock.advance(Duration::from_secs(1)));
        probe.success();
        ticker.join().unwrap();

        let end = (b.state(), seen(&log));
        let closed = (State::Closed, vec![(State::HalfOpen, State::Closed)]);
        let reopened = (State::Open, vec![(State::HalfOpen, State::Open)]);
        assert!(end == closed || end == reopened, "{end:?}");
        assert_eq!(b.probes_in_flight(), 0);
    });
}
