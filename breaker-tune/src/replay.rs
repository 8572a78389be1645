//! Replays a recording's arrivals through a real `Breaker` on a manual clock.
//!
//! The order in which calls start and end is the same for every configuration, so it is
//! worked out once ([`Schedule`]); a replay then walks it in one pass, with a slot per call
//! in flight rather than per call, and keeps which calls it let through in a bit set.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use breaker::clock::Clock;
use breaker::recording::{CallOutcome, RecordedCall};
use breaker::{Breaker, Config, Event, Outcome, Permit, State};

use super::health::Health;

/// What the downstream answers a call that starts at `start`, if the breaker lets it through.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Answer {
    pub start: Duration,
    pub latency: Duration,
    pub outcome: Outcome,
}

impl Answer {
    /// When the call ends.
    pub fn end(&self) -> Duration {
        self.start + self.latency
    }
}

/// The downstream's answer to every call (in the order of their start): a call that ran gets
/// what it got; a call the recorded breaker rejected gets the answer of the nearest call that
/// ran, in its own bucket if one ran there, else the last one before (the health estimate's
/// rule).
pub fn answers(calls: &[RecordedCall], health: &Health) -> Vec<Answer> {
    let ran: Vec<u32> = (0..calls.len() as u32)
        .filter(|&i| matches!(calls[i as usize].outcome, CallOutcome::Completed(_)))
        .collect();
    let call_at = |k: usize| &calls[ran[k] as usize];
    let bucket_of = |t: Duration| t.as_nanos() / health.bucket.as_nanos();
    calls
        .iter()
        .map(|call| {
            let source = match call.outcome {
                CallOutcome::Completed(_) => Some(call),
                CallOutcome::Rejected(_) => {
                    let at = ran.partition_point(|&i| calls[i as usize].start <= call.start);
                    let before = at.checked_sub(1).map(call_at);
                    let after = (at < ran.len()).then(|| call_at(at));
                    let same_bucket =
                        |c: &&RecordedCall| bucket_of(c.start) == bucket_of(call.start);
                    match (before.filter(same_bucket), after.filter(same_bucket)) {
                        (Some(b), Some(a)) if a.start - call.start < call.start - b.start => {
                            Some(a)
                        }
                        (Some(b), _) => Some(b),
                        (None, Some(a)) => Some(a),
                        (None, None) => before.or(after),
                    }
                }
            };
            match source.map(|c| (c.latency, c.outcome)) {
                Some((latency, CallOutcome::Completed(outcome))) => Answer {
                    start: call.start,
                    latency,
                    outcome,
                },
                _ => Answer {
                    start: call.start,
                    latency: Duration::ZERO,
                    outcome: Outcome::Success,
                },
            }
        })
        .collect()
}

/// Marks an event of [`Schedule`] as a call's end.
const END: u32 = 1 << 31;

/// The order of the calls' starts and ends, shared by every replay: at equal times, ends go
/// first (a call that ended frees its slot for one that starts then), and ends in the order
/// of their calls.
#[derive(Clone, Debug)]
pub struct Schedule {
    /// A call's index, with [`END`] set for its end.
    events: Vec<u32>,
    /// The slot each call holds while in flight.
    slots: Vec<u32>,
    /// The most calls in flight at once.
    width: usize,
    /// The instant of each event, after the instant the replay starts at.
    instants: Arc<[Instant]>,
}

/// The replay's clock: it reads the instant of the event the replay is at, worked out once
/// per schedule, so a reading costs a load.
#[derive(Clone, Debug)]
struct ReplayClock {
    instants: Arc<[Instant]>,
    at: Arc<AtomicUsize>,
}

impl Clock for ReplayClock {
    fn now(&self) -> Instant {
        self.instants[self.at.load(Ordering::Relaxed)]
    }
}

impl Schedule {
    /// The schedule of `answers`, in the order of their start.
    ///
    /// # Panics
    ///
    /// With 2^31 calls or more (the tuner refuses such a trace before).
    pub fn new(answers: &[Answer]) -> Schedule {
        assert!(answers.len() < END as usize, "at most 2^31 - 1 calls");
        let mut ends: Vec<u32> = (0..answers.len() as u32).collect();
        ends.sort_by_key(|&i| (answers[i as usize].end(), i));
        let mut events = Vec::with_capacity(answers.len() * 2);
        let mut slots = vec![0; answers.len()];
        let (mut free, mut width) = (Vec::new(), 0u32);
        let mut next_end = ends.iter().peekable();
        for (i, answer) in answers.iter().enumerate() {
            // A call of no time ends only once it has started.
            let ended = |&&k: &&u32| k < i as u32 && answers[k as usize].end() <= answer.start;
            while let Some(&k) = next_end.next_if(ended) {
                events.push(k | END);
                free.push(slots[k as usize]);
            }
            slots[i] = free.pop().unwrap_or_else(|| {
                width += 1;
                width - 1
            });
            events.push(i as u32);
        }
        events.extend(next_end.map(|&k| k | END));
        let origin = Instant::now();
        let instants = std::iter::once(origin)
            .chain(events.iter().map(|&e| {
                let answer = &answers[(e & !END) as usize];
                origin
                    + if e & END != 0 {
                        answer.end()
                    } else {
                        answer.start
                    }
            }))
            .collect();
        Schedule {
            events,
            slots,
            width: width as usize,
            instants,
        }
    }
}

/// What one configuration did with the calls.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Run {
    /// Which calls were let through: bit `i % 64` of word `i / 64` for call `i`.
    pub admitted: Vec<u64>,
    /// Every state change, with when it happened.
    pub transitions: Vec<(Duration, State)>,
}

impl Run {
    /// Whether call `i` was let through.
    pub fn admitted(&self, i: usize) -> bool {
        self.admitted[i / 64] & (1 << (i % 64)) != 0
    }
}

/// Replays the calls through a breaker configured with `config`: calls start at their
/// recorded time and end `latency` later, so calls overlap as they did.
pub fn replay(answers: &[Answer], schedule: &Schedule, config: Config) -> Run {
    let clock = ReplayClock {
        instants: schedule.instants.clone(),
        at: Arc::new(AtomicUsize::new(0)),
    };
    let at = clock.at.clone();
    let breaker = Breaker::with_clock("replay", config, clock.clone());
    let transitions = Arc::new(Mutex::new(Vec::new()));
    let (seen, origin) = (transitions.clone(), schedule.instants[0]);
    breaker.on_event(move |e| {
        if let Event::StateTransition { to, .. } = e {
            seen.lock().unwrap().push((clock.now() - origin, *to));
        }
    });

    let mut admitted = vec![0u64; answers.len().div_ceil(64)];
    let mut in_flight: Vec<Option<Permit<'_>>> = (0..schedule.width).map(|_| None).collect();
    // An open breaker rejects every call until its period ends, and nothing but a call can
    // end it (a result from before it opened is stale): calls that start before then are
    // rejected without asking it.
    let mut open_until = Duration::ZERO;
    for (k, &event) in schedule.events.iter().enumerate() {
        let i = (event & !END) as usize;
        let slot = schedule.slots[i] as usize;
        if event & END != 0 {
            if let Some(permit) = in_flight[slot].take() {
                at.store(k + 1, Ordering::Relaxed);
                permit.record(answers[i].outcome);
            }
            continue;
        }
        if answers[i].start < open_until {
            continue;
        }
        at.store(k + 1, Ordering::Relaxed);
        match breaker.try_acquire() {
            Ok(permit) => {
                admitted[i / 64] |= 1 << (i % 64);
                in_flight[slot] = Some(permit);
            }
            Err(rejected) => {
                if let Some(left) = rejected.retry_after() {
                    open_until = answers[i].start + left;
                }
            }
        }
    }
    drop(in_flight);
    drop(breaker);
    let transitions = std::mem::take(&mut *transitions.lock().unwrap());
    Run {
        admitted,
        transitions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::call;
    use breaker::RejectReason;

    #[test]
    fn a_rejected_call_gets_the_answer_of_the_nearest_call_that_ran_in_its_bucket() {
        let ok = CallOutcome::Completed(Outcome::Success);
        let fail = CallOutcome::Completed(Outcome::Failure);
        let rejected = CallOutcome::Rejected(RejectReason::Open);
        let calls = [
            call(100, 5, fail),
            call(200, 0, rejected), // nearer the failure
            call(400, 7, ok),
            call(1500, 0, rejected), // a bucket where nothing ran: the last call before
            call(2100, 9, ok),
        ];
        let health = Health::estimate(&calls, Duration::from_secs(1));
        let got: Vec<_> = answers(&calls, &health)
            .iter()
            .map(|a| (a.latency.as_millis(), a.outcome))
            .collect();
        assert_eq!(
            got,
            [
                (5, Outcome::Failure),
                (5, Outcome::Failure),
                (7, Outcome::Success),
                (7, Outcome::Success),
                (9, Outcome::Success)
            ]
        );
    }

    fn answer(ms: u64, latency_ms: u64, outcome: Outcome) -> Answer {
        Answer {
            start: Duration::from_millis(ms),
            latency: Duration::from_millis(latency_ms),
            outcome,
        }
    }

    #[test]
    fn the_schedule_ends_calls_in_the_order_of_their_end_and_reuses_their_slots() {
        let answers = [
            answer(0, 100, Outcome::Success),
            answer(10, 10, Outcome::Success),
            answer(20, 0, Outcome::Success), // ends as it starts, after 1 ended
            answer(20, 5, Outcome::Success),
        ];
        let s = Schedule::new(&answers);
        assert_eq!(s.events, [0, 1, 1 | END, 2, 2 | END, 3, 3 | END, END]);
        assert_eq!(s.slots, [0, 1, 1, 1]);
        assert_eq!(s.width, 2);
    }

    #[test]
    fn overlapping_calls_complete_in_the_order_of_their_end() {
        // Window 2, min 2, rate 1: two failures in a row open it. In the order of their
        // start the results would be failure, success, failure (never two in a row); in the
        // order of their end they are success, failure, failure: open when the slow one ends.
        let config = Config::builder()
            .count_window(2)
            .min_calls(2)
            .failure_rate(1.0)
            .build()
            .unwrap();
        let answers = [
            answer(0, 1000, Outcome::Failure),
            answer(10, 10, Outcome::Success),
            answer(30, 10, Outcome::Failure),
            answer(1500, 10, Outcome::Success),
        ];
        let run = replay(&answers, &Schedule::new(&answers), config);
        let admitted: Vec<_> = (0..4).map(|i| run.admitted(i)).collect();
        assert_eq!(admitted, [true, true, true, false]);
        assert_eq!(
            run.transitions,
            [(Duration::from_millis(1000), State::Open)]
        );
    }
}
