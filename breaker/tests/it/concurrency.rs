//! Concurrency: one breaker shared by several threads.
//!
//! Every test here asserts invariants, never timings: no sleeps, a fixed amount of work per
//! thread, seeded random choices, and barriers or channels wherever an order matters.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::Duration;

use breakerbox::clock::ManualClock;
use breakerbox::testing::trip;
use breakerbox::{events::Event, Breaker, Config, Permit, RejectReason, State};

/// `Breaker` can be shared between threads (rule 11), checked at compile time.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Breaker>();
};

/// A tiny xorshift generator: reproducible choices without a dependency.
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> Self {
        // Never zero, and distinct seeds give unrelated streams.
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A number in `0..n`.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const OPEN_FOR: Duration = Duration::from_secs(1);

fn config(probes: u32) -> Config {
    Config::builder()
        .count_window(4)
        .min_calls(2)
        .failure_rate(0.5)
        .open_for(OPEN_FOR)
        .probes(probes)
        .build()
        .unwrap()
}

/// How a worker settles a permit.
fn settle(permit: Permit<'_>, rng: &mut XorShift, failure_percent: u64) {
    let roll = rng.below(100);
    if roll < failure_percent {
        permit.failure();
    } else if roll < failure_percent + 10 {
        drop(permit);
    } else if roll < failure_percent + 15 {
        permit.ignore();
    } else {
        permit.success();
    }
}

/// Settles a permit without a verdict, as a cancelled or ignored call does.
fn cancel(permit: Permit<'_>, rng: &mut XorShift) {
    if rng.below(2) == 0 {
        drop(permit);
    } else {
        permit.ignore();
    }
}

/// What is wrong with a rejection, if anything, whatever the interleaving.
fn bad_rejection(reason: RejectReason, retry_after: Option<Duration>) -> Option<String> {
    let fine = match reason {
        RejectReason::Open => {
            retry_after.is_some_and(|left| left > Duration::ZERO && left <= OPEN_FOR)
        }
        RejectReason::HalfOpenFull => retry_after.is_none(),
        _ => false,
    };
    (!fine).then(|| format!("rejected with {reason:?}, retry after {retry_after:?}"))
}

/// Why a settled breaker is stuck, if it is. In HALF_OPEN with every permit settled, no
/// slot may be taken, `probes` calls in a row must be admitted, and the next one rejected.
fn stuck(b: &Breaker, probes: u32) -> Option<String> {
    if b.state() != State::HalfOpen {
        return None;
    }
    if b.probes_in_flight() != 0 {
        return Some(format!(
            "every permit is settled, yet {} probe slots are taken",
            b.probes_in_flight()
        ));
    }
    let mut held = Vec::new();
    for k in 0..probes {
        match b.try_acquire() {
            Ok(permit) => held.push(permit),
            Err(r) => return Some(format!("HALF_OPEN with {k} probes in flight rejected: {r}")),
        }
    }
    if b.probes_in_flight() != probes {
        return Some(format!("{} in flight, {probes} held", b.probes_in_flight()));
    }
    match b.try_acquire() {
        Err(r) if r.reason() == RejectReason::HalfOpenFull => {}
        other => return Some(format!("with every slot taken: {:?}", other.map(drop))),
    }
    drop(held);
    if (b.state(), b.probes_in_flight()) != (State::HalfOpen, 0) {
        return Some("dropped probes did not free their slots".to_owned());
    }
    None
}

fn assert_not_stuck(b: &Breaker, probes: u32) {
    if let Some(why) = stuck(b, probes) {
        panic!("{why}");
    }
}

/// Counts the transitions into HALF_OPEN and out of it to CLOSED.
fn count_transitions(b: &Breaker) -> (Arc<AtomicU64>, Arc<AtomicU64>) {
    let half_opened = Arc::new(AtomicU64::new(0));
    let recovered = Arc::new(AtomicU64::new(0));
    let (h, r) = (half_opened.clone(), recovered.clone());
    b.on_event(move |e: &Event| match e {
        Event::StateTransition {
            to: State::HalfOpen,
            ..
        } => {
            h.fetch_add(1, Ordering::Relaxed);
        }
        Event::StateTransition {
            from: State::HalfOpen,
            to: State::Closed,
            ..
        } => {
            r.fetch_add(1, Ordering::Relaxed);
        }
        _ => {}
    });
    (half_opened, recovered)
}

/// The half-open limit holds under contention.
///
/// The hammering runs in rounds separated by a barrier. Between rounds, with every permit
/// settled, one thread (the clock's owner) checks the breaker is not stuck, opens it if it
/// is closed, and moves the clock past `open_for`; so every round starts with an expired
/// OPEN (or a HALF_OPEN left from the round before) and the workers race into HALF_OPEN.
///
/// The invariant, and why the measurement is sound: during a round the clock stands still.
/// Leaving HALF_OPEN goes to OPEN (which, opened at the current time, cannot expire before
/// the clock moves) or to CLOSED (which can only go on to OPEN). So a round sees at most one
/// HALF_OPEN generation, and HALF_OPEN is never re-entered within it. A worker that reads
/// `state() == HalfOpen` right after its `try_acquire` succeeded therefore holds a probe of
/// that one generation: before it, the breaker was either HALF_OPEN or an expired OPEN, whose
/// first admission is a probe. Each such permit bumps `live_probes` after being acquired and
/// drops it *before* being settled, so at any instant `live_probes` counts permits that
/// were admitted as probes of the same generation and are all still unsettled: when the last
/// of them was admitted, the others were in flight too. Hence `live_probes <= probes` must
/// hold at every observation; some probes go uncounted (the state moved on before the read),
/// which only makes the count a lower bound. `probes_in_flight()`, read under the breaker's
/// lock, must also never exceed `probes`.
///
/// Nothing panics while the barrier is in use (a panicking thread would leave the others
/// waiting forever): every broken invariant is written down and asserted at the end.
#[test]
fn half_open_never_admits_more_than_probes_at_once() {
    const WORKERS: usize = 6;
    const ROUNDS: u64 = 300;
    const STEPS: u64 = 40;
    const HELD: usize = 4;
    let probes = 3;

    let clock = ManualClock::new();
    let b = Breaker::with_clock("hammered", config(probes), clock.clone());
    let (half_opened, recovered) = count_transitions(&b);
    let live_probes = AtomicU32::new(0);
    let most_probes_seen = AtomicU32::new(0);
    let full_rejections = AtomicU64::new(0);
    let violations = Mutex::new(Vec::<String>::new());
    let barrier = Barrier::new(WORKERS + 1);
    let mut rounds_started_half_open = 0;

    thread::scope(|s| {
        for worker in 0..WORKERS {
            let (b, barrier, violations) = (&b, &barrier, &violations);
            let (live_probes, most_probes_seen, full_rejections) =
                (&live_probes, &most_probes_seen, &full_rejections);
            s.spawn(move || {
                let violation = |why: String| violations.lock().unwrap().push(why);
                let mut rng = XorShift::new(worker as u64 + 1);
                let mut held: Vec<(Permit<'_>, bool)> = Vec::new();
                for round in 0..ROUNDS {
                    // Rounds fail often, recover, or only cancel their calls; a round that
                    // only cancels ends HALF_OPEN with every slot free again.
                    let failure_percent = match round % 4 {
                        0 => Some(50),
                        2 => None,
                        _ => Some(10),
                    };
                    let settle = |permit, rng: &mut XorShift| match failure_percent {
                        Some(percent) => settle(permit, rng, percent),
                        None => cancel(permit, rng),
                    };
                    barrier.wait();
                    for _ in 0..STEPS {
                        if !held.is_empty() && (held.len() == HELD || rng.below(10) < 4) {
                            let i = rng.below(held.len() as u64) as usize;
                            let (permit, probe) = held.swap_remove(i);
                            if probe {
                                live_probes.fetch_sub(1, Ordering::SeqCst);
                            }
                            settle(permit, &mut rng);
                            continue;
                        }
                        match b.try_acquire() {
                            Ok(permit) => {
                                let probe = b.state() == State::HalfOpen;
                                if probe {
                                    let live = live_probes.fetch_add(1, Ordering::SeqCst) + 1;
                                    most_probes_seen.fetch_max(live, Ordering::Relaxed);
                                    if live > probes {
                                        violation(format!(
                                            "round {round}: {live} probes of one half-open \
                                             generation in flight at once"
                                        ));
                                    }
                                }
                                held.push((permit, probe));
                            }
                            Err(rejected) => {
                                if rejected.reason() == RejectReason::HalfOpenFull {
                                    full_rejections.fetch_add(1, Ordering::Relaxed);
                                }
                                if let Some(why) =
                                    bad_rejection(rejected.reason(), rejected.retry_after())
                                {
                                    violation(format!("round {round}: {why}"));
                                }
                            }
                        }
                        let in_flight = b.probes_in_flight();
                        if in_flight > probes {
                            violation(format!("round {round}: probes_in_flight() = {in_flight}"));
                        }
                    }
                    for (permit, probe) in held.drain(..) {
                        if probe {
                            live_probes.fetch_sub(1, Ordering::SeqCst);
                        }
                        settle(permit, &mut rng);
                    }
                    barrier.wait();
                }
            });
        }

        // The clock's owner; between the two waits of a round, the workers run.
        for round in 0..ROUNDS {
            // Every permit is settled here: nothing may be stuck.
            let mut problems = Vec::new();
            if live_probes.load(Ordering::SeqCst) != 0 {
                problems.push("probe count not back to zero".to_owned());
            }
            problems.extend(stuck(&b, probes));
            // Bounded: four failures fill the window of four.
            for _ in 0..4 {
                if b.state() != State::Closed {
                    break;
                }
                b.try_acquire().map(Permit::failure).ok();
            }
            match b.state() {
                State::HalfOpen => rounds_started_half_open += 1,
                State::Open => clock.advance(OPEN_FOR),
                other => problems.push(format!("{other} after tripping")),
            }
            let mut v = violations.lock().unwrap();
            v.extend(
                problems
                    .into_iter()
                    .map(|p| format!("before round {round}: {p}")),
            );
            drop(v);
            barrier.wait();
            barrier.wait();
        }
    });

    let violations = violations.into_inner().unwrap();
    assert!(violations.is_empty(), "{violations:#?}");
    assert_eq!(live_probes.load(Ordering::SeqCst), 0);
    assert_not_stuck(&b, probes);
    // Every round raced into HALF_OPEN: one transition each, unless it started there.
    assert_eq!(
        half_opened.load(Ordering::Relaxed) + rounds_started_half_open,
        ROUNDS
    );
    assert!(recovered.load(Ordering::Relaxed) > 0, "some rounds recover");
    // Each cancelling round but the last left the next one to start HALF_OPEN.
    assert!(rounds_started_half_open >= (ROUNDS - 1) / 4);
    eprintln!(
        "half-open generations: {}, rounds started half-open: {}, recoveries: {}, \
         most probes seen at once: {}, rejected as full: {}",
        half_opened.load(Ordering::Relaxed),
        rounds_started_half_open,
        recovered.load(Ordering::Relaxed),
        most_probes_seen.load(Ordering::Relaxed),
        full_rejections.load(Ordering::Relaxed),
    );
}

/// With the clock moving under the workers' feet (one thread advancing it concurrently),
/// the breaker's own count of probes never exceeds the limit, and once the hammering is
/// over and every permit settled, the breaker is never left rejecting in HALF_OPEN with no
/// probe in flight: the next call is admitted.
#[test]
fn settled_breaker_is_never_stuck_half_open() {
    const WORKERS: usize = 6;
    const STEPS: u64 = 4_000;
    /// The clock ticks once per this many worker steps, whichever threads take them.
    const STEPS_PER_TICK: u64 = 16;

    for (seed, probes) in [(11, 1), (12, 2), (13, 3)] {
        let clock = ManualClock::new();
        let b = Breaker::with_clock("hammered", config(probes), clock.clone());
        let (half_opened, recovered) = count_transitions(&b);
        let start = Barrier::new(WORKERS + 1);
        let workers_done = AtomicUsize::new(0);
        let steps_taken = AtomicU64::new(0);
        let ticks = AtomicU64::new(0);

        thread::scope(|s| {
            for worker in 0..WORKERS {
                let (b, start, workers_done, steps_taken, ticks) =
                    (&b, &start, &workers_done, &steps_taken, &ticks);
                s.spawn(move || {
                    let mut rng = XorShift::new(seed * 100 + worker as u64);
                    let mut held: Vec<Permit<'_>> = Vec::new();
                    start.wait();
                    // Counts this worker done however it ends, so that a failed assertion
                    // fails the test instead of leaving the clock's owner waiting.
                    let _done = CountOnDrop(workers_done);
                    for step in 0..STEPS {
                        // Never run far ahead of the clock.
                        while steps_taken.load(Ordering::SeqCst)
                            > (ticks.load(Ordering::SeqCst) + 2) * STEPS_PER_TICK
                        {
                            thread::yield_now();
                        }
                        steps_taken.fetch_add(1, Ordering::SeqCst);
                        let failure_percent = if (step / 500) % 2 == 0 { 40 } else { 10 };
                        if !held.is_empty() && (held.len() == 4 || rng.below(10) < 4) {
                            let i = rng.below(held.len() as u64) as usize;
                            settle(held.swap_remove(i), &mut rng, failure_percent);
                        } else {
                            match b.try_acquire() {
                                Ok(permit) => held.push(permit),
                                Err(r) => {
                                    if let Some(why) = bad_rejection(r.reason(), r.retry_after()) {
                                        panic!("{why}");
                                    }
                                }
                            }
                        }
                        assert!(b.probes_in_flight() <= probes);
                    }
                    for permit in held.drain(..) {
                        settle(permit, &mut rng, 10);
                    }
                });
            }
            // The clock's owner: a bounded number of ticks, each a fraction of `open_for`.
            // The clock's owner: it moves the clock by a fraction of `open_for` each time
            // the workers have taken a few more steps, and the workers never get more than
            // two ticks ahead, so time passes while they run however the threads are
            // scheduled. Neither side can block the other: the workers wait only when the
            // clock has a tick to make. It stops once the workers are all done.
            let (clock, start, workers_done, steps_taken, ticks) =
                (&clock, &start, &workers_done, &steps_taken, &ticks);
            s.spawn(move || {
                let mut rng = XorShift::new(seed);
                start.wait();
                while workers_done.load(Ordering::SeqCst) < WORKERS {
                    let due = (ticks.load(Ordering::SeqCst) + 1) * STEPS_PER_TICK;
                    if steps_taken.load(Ordering::SeqCst) >= due {
                        clock.advance(Duration::from_millis(rng.below(300)));
                        ticks.fetch_add(1, Ordering::SeqCst);
                    } else {
                        thread::yield_now();
                    }
                }
            });
        });

        eprintln!(
            "probes {probes}: half-open generations: {}, recoveries: {}, ended {}",
            half_opened.load(Ordering::Relaxed),
            recovered.load(Ordering::Relaxed),
            b.state(),
        );
        // All permits are settled.
        match b.state() {
            State::HalfOpen => assert_not_stuck(&b, probes),
            State::Open => {
                clock.advance(OPEN_FOR);
                let probe = b.try_acquire().expect("an expired OPEN admits a probe");
                assert_eq!((b.state(), b.probes_in_flight()), (State::HalfOpen, 1));
                drop(probe);
                assert_not_stuck(&b, probes);
            }
            State::Closed => {
                b.try_acquire().expect("CLOSED admits").success();
            }
            other => panic!("nothing forces or disables this breaker, yet it is {other}"),
        }
    }
}

/// Adds one to its counter when dropped, panicking or not.
struct CountOnDrop<'a>(&'a AtomicUsize);

impl Drop for CountOnDrop<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A success from a permit acquired in CLOSED, reported after the breaker opened, is
/// discarded: the breaker stays OPEN and the window keeps only what opened it.
#[test]
fn late_success_never_closes_a_breaker_that_opened() {
    let clock = ManualClock::new();
    let b = Breaker::with_clock("late", config(1), clock.clone());
    let (acquired_tx, acquired_rx) = mpsc::channel();
    let (opened_tx, opened_rx) = mpsc::channel();

    thread::scope(|s| {
        let b = &b;
        s.spawn(move || {
            let permit = b.try_acquire().expect("closed");
            acquired_tx.send(()).unwrap();
            opened_rx.recv().unwrap();
            permit.success();
        });
        acquired_rx.recv().unwrap();
        trip(b);
        let before = b.snapshot();
        assert_eq!((before.calls, before.failures), (2, 2));
        opened_tx.send(()).unwrap();
        // Leaving the scope joins the caller: its late success has been reported.
    });

    let s = b.snapshot();
    assert_eq!(s.state, State::Open);
    assert_eq!((s.calls, s.failures), (2, 2));
    assert_eq!(b.probes_in_flight(), 0);
    // It still needs its full open duration and probe to recover.
    assert_eq!(
        b.try_acquire().map(drop).unwrap_err().retry_after(),
        Some(OPEN_FOR)
    );
}

/// A probe of an earlier half-open that succeeds late neither closes a newer half-open nor
/// frees one of its slots; a failure from before a recovery does not reopen the breaker.
#[test]
fn stale_probe_results_never_touch_a_newer_generation() {
    let clock = ManualClock::new();
    let b = Breaker::with_clock("late", config(2), clock.clone());
    let (tx, rx) = mpsc::channel::<&str>();
    let (back_tx, back_rx) = mpsc::channel::<()>();

    thread::scope(|s| {
        let b = &b;
        let clock = &clock;
        // The slow caller: a probe of the first half-open, then a call of the recovered
        // breaker, each reported only once the breaker has moved on.
        s.spawn(move || {
            trip(b);
            clock.advance(OPEN_FOR);
            let old_probe = b.try_acquire().expect("expired OPEN admits a probe");
            tx.send("probe held").unwrap();
            back_rx.recv().unwrap();
            old_probe.success();
            tx.send("probe reported").unwrap();
            back_rx.recv().unwrap();
            let old_call = b.try_acquire().expect("closed");
            tx.send("call held").unwrap();
            back_rx.recv().unwrap();
            old_call.failure();
            tx.send("call reported").unwrap();
        });

        assert_eq!(rx.recv().unwrap(), "probe held");
        // The other probe fails: OPEN again, then a new half-open with one probe in flight.
        b.try_acquire().expect("second probe slot").failure();
        assert_eq!(b.state(), State::Open);
        clock.advance(OPEN_FOR);
        let new_probe = b.try_acquire().expect("expired OPEN admits a probe");
        assert_eq!((b.state(), b.probes_in_flight()), (State::HalfOpen, 1));
        back_tx.send(()).unwrap();

        assert_eq!(rx.recv().unwrap(), "probe reported");
        // The stale success neither counted towards closing nor freed a slot.
        assert_eq!((b.state(), b.probes_in_flight()), (State::HalfOpen, 1));
        new_probe.success();
        assert_eq!(b.state(), State::HalfOpen, "one success of two needed");
        b.try_acquire().expect("a free slot").success();
        assert_eq!(b.state(), State::Closed);
        back_tx.send(()).unwrap();

        assert_eq!(rx.recv().unwrap(), "call held");
        // The breaker recovers again after tripping, with the caller's permit in hand.
        trip(b);
        clock.advance(OPEN_FOR);
        b.try_acquire().unwrap().success();
        b.try_acquire().unwrap().success();
        assert_eq!(b.state(), State::Closed);
        back_tx.send(()).unwrap();

        assert_eq!(rx.recv().unwrap(), "call reported");
    });

    let s = b.snapshot();
    assert_eq!((s.state, s.calls, s.failures), (State::Closed, 0, 0));
}

/// A count window of 3 that opens only at 3 failures of 3, on a manual clock.
fn window_of_three() -> Breaker {
    let config = Config::builder()
        .count_window(3)
        .min_calls(3)
        .failure_rate(1.0)
        .open_for(OPEN_FOR)
        .probes(1)
        .build()
        .unwrap();
    Breaker::with_clock("libraryd", config, ManualClock::new())
}

/// Records one result on another thread, which ends before this one goes on.
fn on_another_thread(b: &Breaker, failure: bool) {
    thread::scope(|s| {
        s.spawn(|| {
            let permit = b.try_acquire().expect("closed");
            if failure {
                permit.failure()
            } else {
                permit.success()
            }
        });
    });
}

/// The thread that counts first swaps each result into the packed window from the word its
/// last swap found, without reading the window again; another thread's results in between
/// leave that word stale. Every result still moves the window, in the order they ended: a
/// failure of another thread after this thread filled the window with successes leaves it
/// with this thread's third success, not never.
#[test]
fn results_between_a_threads_own_keep_the_window_exact() {
    let b = window_of_three();
    let success = || b.try_acquire().expect("closed").success();
    let failure = || b.try_acquire().expect("closed").failure();
    let counts = || {
        let s = b.snapshot();
        (s.state, s.calls, s.failures)
    };
    // This thread counts first, and fills the window with successes.
    (0..3).for_each(|_| success());
    on_another_thread(&b, true);
    assert_eq!(counts(), (State::Closed, 3, 1));
    success();
    success();
    assert_eq!(counts(), (State::Closed, 3, 1), "the failure is still in");
    success();
    assert_eq!(counts(), (State::Closed, 3, 0), "and leaves with the third");

    // The other way: this thread's failure, then the other's successes fill the window with
    // successes again, which this thread's next success leaves as it is.
    failure();
    (0..3).for_each(|_| on_another_thread(&b, false));
    assert_eq!(counts(), (State::Closed, 3, 0));
    success();
    failure();
    failure();
    assert_eq!(counts(), (State::Closed, 3, 2));
    on_another_thread(&b, false);
    failure();
    assert_eq!(counts(), (State::Closed, 3, 2), "F S F");
    failure();
    assert_eq!(counts(), (State::Closed, 3, 2), "S F F");
    failure();
    assert_eq!(counts().0, State::Open, "3 of 3 trip");

    let t = b.snapshot().totals;
    assert_eq!((t.success, t.failure), (11, 7));
}

/// The thread that counts first reads the window while it is full of successes, and swaps
/// from its last swap's word while it holds failures, changing ways as its own swap makes or
/// leaves the full word. Another thread's results at each change still count once, in the
/// order they ended; and another thread may trip the breaker while the first is between
/// swaps: the first's rejections, its results after a reset, and every total stay exact.
#[test]
fn results_of_another_thread_at_each_change_of_the_owners_way_keep_the_window_exact() {
    let b = window_of_three();
    let success = || b.try_acquire().expect("closed").success();
    let failure = || b.try_acquire().expect("closed").failure();
    let counts = || {
        let s = b.snapshot();
        (s.state, s.calls, s.failures)
    };
    // Full of successes, then this thread's failure: F is the newest of S S F.
    (0..3).for_each(|_| success());
    failure();
    // Two successes push S S out: F S S, then this thread's third success would fill the
    // window with successes (the full word) but another's success comes first.
    success();
    success();
    assert_eq!(counts(), (State::Closed, 3, 1));
    on_another_thread(&b, false);
    assert_eq!(
        counts(),
        (State::Closed, 3, 0),
        "the other's success pushed F out"
    );
    success();
    assert_eq!(counts(), (State::Closed, 3, 0));
    // Full of successes by this thread's own swap now: another's failure, then this
    // thread's two successes leave it in, and the third takes it out.
    (0..3).for_each(|_| success());
    on_another_thread(&b, true);
    success();
    success();
    assert_eq!(counts(), (State::Closed, 3, 1), "S F S S: F still in");
    success();
    assert_eq!(counts(), (State::Closed, 3, 0));

    // This thread's failure, then another thread's two trip the breaker (3 of 3).
    failure();
    on_another_thread(&b, true);
    on_another_thread(&b, true);
    assert_eq!(counts().0, State::Open);
    let rejected = b.try_acquire().expect_err("open");
    assert_eq!(rejected.reason(), RejectReason::Open);
    b.reset();
    failure();
    success();
    assert_eq!(counts(), (State::Closed, 2, 1), "the new window from empty");

    let t = b.snapshot().totals;
    assert_eq!(
        (t.success, t.failure, t.rejected, t.rejected_by.open),
        (14, 6, 1, 1)
    );
}

/// The word a thread's last swap found belongs to a generation that `reset` has ended: its
/// next results count into the new window, from empty.
#[test]
fn results_after_a_reset_count_in_the_new_window_from_empty() {
    let b = window_of_three();
    (0..3).for_each(|_| b.try_acquire().expect("closed").success());
    b.try_acquire().expect("closed").failure();
    b.reset();
    assert_eq!((b.snapshot().calls, b.snapshot().failures), (0, 0));
    b.try_acquire().expect("closed").failure();
    b.try_acquire().expect("closed").success();
    let s = b.snapshot();
    assert_eq!((s.state, s.calls, s.failures), (State::Closed, 2, 1));
}
