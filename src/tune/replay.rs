//! Replays a recording's arrivals through a real `Breaker` on a manual clock.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker::clock::ManualClock;
use breaker::recording::{CallOutcome, Recording};
use breaker::{Breaker, Config, Event, Outcome, State};

use super::health::Health;

/// What the downstream answers a call that starts at `start`, if the breaker lets it through.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Answer {
    pub start: Duration,
    pub latency: Duration,
    pub outcome: Outcome,
}

/// The downstream's answer to every call of a recording: a call that ran gets what it got; a
/// call the recorded breaker rejected gets the answer of the nearest call that ran, in its
/// own bucket if one ran there, else the last one before (the health estimate's rule).
pub fn answers(recording: &Recording, health: &Health) -> Vec<Answer> {
    let calls = recording.calls();
    let ran: Vec<usize> = (0..calls.len())
        .filter(|&i| matches!(calls[i].outcome, CallOutcome::Completed(_)))
        .collect();
    let bucket_of = |t: Duration| (t.as_nanos() / health.bucket.as_nanos()) as usize;
    calls
        .iter()
        .map(|call| {
            let source = match call.outcome {
                CallOutcome::Completed(_) => Some(call),
                CallOutcome::Rejected(_) => {
                    let at = ran.partition_point(|&i| calls[i].start <= call.start);
                    let before = at.checked_sub(1).map(|k| &calls[ran[k]]);
                    let after = ran.get(at).map(|&i| &calls[i]);
                    let same_bucket = |c: &&breaker::recording::RecordedCall| {
                        bucket_of(c.start) == bucket_of(call.start)
                    };
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
            match source.map(|c| c.outcome) {
                Some(CallOutcome::Completed(outcome)) => Answer {
                    start: call.start,
                    latency: source.map_or(Duration::ZERO, |c| c.latency),
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

/// What one configuration did with the calls.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Run {
    /// Whether each call was let through, in the order of the answers.
    pub admitted: Vec<bool>,
    /// Every state change, with when it happened.
    pub transitions: Vec<(Duration, State)>,
}

/// Replays the calls through a breaker configured with `config`: calls start at their
/// recorded time and end `latency` later, so calls overlap as they did.
pub fn replay(answers: &[Answer], config: Config) -> Run {
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock("replay", config, clock.clone());
    let transitions = Arc::new(Mutex::new(Vec::new()));
    let (seen, watch) = (transitions.clone(), clock.clone());
    breaker.on_event(move |e| {
        if let Event::StateTransition { to, .. } = e {
            seen.lock().unwrap().push((watch.elapsed(), *to));
        }
    });

    let mut now = Duration::ZERO;
    let mut advance_to = |t: Duration| {
        if t > now {
            clock.advance(t - now);
            now = t;
        }
    };
    let mut admitted = vec![false; answers.len()];
    let mut in_flight: Vec<Option<breaker::Permit<'_>>> = Vec::with_capacity(answers.len());
    in_flight.resize_with(answers.len(), || None);
    let mut ends: BinaryHeap<Reverse<(Duration, usize)>> = BinaryHeap::new();
    for (i, answer) in answers.iter().enumerate() {
        while let Some(&Reverse((end, k))) = ends.peek() {
            if end > answer.start {
                break;
            }
            ends.pop();
            advance_to(end);
            if let Some(permit) = in_flight[k].take() {
                permit.record(answers[k].outcome);
            }
        }
        advance_to(answer.start);
        if let Ok(permit) = breaker.try_acquire() {
            admitted[i] = true;
            in_flight[i] = Some(permit);
            ends.push(Reverse((answer.start + answer.latency, i)));
        }
    }
    while let Some(Reverse((end, k))) = ends.pop() {
        advance_to(end);
        if let Some(permit) = in_flight[k].take() {
            permit.record(answers[k].outcome);
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
    use crate::tune::tests::call;
    use breaker::RejectReason;

    #[test]
    fn a_rejected_call_gets_the_answer_of_the_nearest_call_that_ran_in_its_bucket() {
        let ok = CallOutcome::Completed(Outcome::Success);
        let fail = CallOutcome::Completed(Outcome::Failure);
        let rejected = CallOutcome::Rejected(RejectReason::Open);
        let recording: Recording = [
            call(100, 5, fail),
            call(200, 0, rejected), // nearer the failure
            call(400, 7, ok),
            call(1500, 0, rejected), // a bucket where nothing ran: the last call before
            call(2100, 9, ok),
        ]
        .into_iter()
        .collect();
        let health = Health::estimate(&recording, Duration::from_secs(1));
        let got: Vec<_> = answers(&recording, &health)
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
        let answer = |ms, latency_ms, outcome| Answer {
            start: Duration::from_millis(ms),
            latency: Duration::from_millis(latency_ms),
            outcome,
        };
        let run = replay(
            &[
                answer(0, 1000, Outcome::Failure),
                answer(10, 10, Outcome::Success),
                answer(30, 10, Outcome::Failure),
                answer(1500, 10, Outcome::Success),
            ],
            config,
        );
        assert_eq!(run.admitted, [true, true, true, false]);
        assert_eq!(
            run.transitions,
            [(Duration::from_millis(1000), State::Open)]
        );
    }
}
