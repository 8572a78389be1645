//! Replays a recording's arrivals through a breaker's rules, at their recorded times.
//!
//! The order in which calls start and end is the same for every configuration, so it is
//! worked out once ([`Schedule`]); a replay then walks it in one pass, with a slot per call
//! in flight rather than per call, and keeps which calls it let through in a bit set.

use std::time::Duration;

use breakerbox::recording::{CallOutcome, RecordedCall};
use breakerbox::replay::{Replay, ReplayPermit};
use breakerbox::{Config, Outcome, RejectReason, State};

use super::health::Health;

/// What the downstream answers a call that starts at `start`, if the breaker lets it through.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Answer {
    pub start: Duration,
    pub latency: Duration,
    pub outcome: Outcome,
    /// The pushback a failure carried (`Retry-After`), which a replayed breaker obeys.
    pub pushback: Option<Duration>,
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
            match source.map(|c| (c.latency, c.outcome, c.pushback)) {
                Some((latency, CallOutcome::Completed(outcome), pushback)) => Answer {
                    start: call.start,
                    latency,
                    outcome,
                    pushback: pushback.filter(|_| outcome == Outcome::Failure),
                },
                _ => Answer {
                    start: call.start,
                    latency: Duration::ZERO,
                    outcome: Outcome::Success,
                    pushback: None,
                },
            }
        })
        .collect()
}

/// Marks a [`Step`] as a call's end.
const END: u32 = 1 << 31;
/// Where a [`Step`] of an end keeps the call's outcome, above its slot.
const OUTCOME_SHIFT: u32 = 30;
const SLOT_MASK: u32 = (1 << OUTCOME_SHIFT) - 1;

/// A call's start or end, with all a replay reads of it, so that a replay reads the steps
/// in order and nothing else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Step {
    /// When, in nanoseconds from the trace's start.
    at: u64,
    /// The call's index, with [`END`] set for its end.
    call: u32,
    /// The slot the call holds while in flight; for an end, its outcome above
    /// ([`OUTCOME_SHIFT`]).
    slot: u32,
}

impl Step {
    fn at(&self) -> Duration {
        Duration::from_nanos(self.at)
    }

    fn slot(&self) -> usize {
        (self.slot & SLOT_MASK) as usize
    }

    fn outcome(&self) -> Outcome {
        match self.slot >> OUTCOME_SHIFT {
            0 => Outcome::Success,
            1 => Outcome::Failure,
            _ => Outcome::Ignored,
        }
    }
}

/// The order of the calls' starts and ends, shared by every replay: at equal times, ends go
/// first (a call that ended frees its slot for one that starts then), and ends in the order
/// of their calls.
#[derive(Clone, Debug)]
pub struct Schedule {
    steps: Vec<Step>,
    /// The most calls in flight at once.
    width: usize,
}

/// A time in nanoseconds, saturating after 584 years.
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Schedule {
    /// The schedule of `answers`, in the order of their start.
    ///
    /// # Panics
    ///
    /// With 2^31 calls or more, or 2^30 in flight at once (the tuner refuses such a trace
    /// before).
    pub fn new(answers: &[Answer]) -> Schedule {
        assert!(answers.len() < END as usize, "at most 2^31 - 1 calls");
        let mut ends: Vec<u32> = (0..answers.len() as u32).collect();
        ends.sort_by_key(|&i| (answers[i as usize].end(), i));
        let mut steps = Vec::with_capacity(answers.len() * 2);
        let mut slots = vec![0; answers.len()];
        let (mut free, mut width) = (Vec::new(), 0u32);
        let end = |k: u32, slot: u32| {
            let answer = &answers[k as usize];
            let outcome = match answer.outcome {
                Outcome::Success => 0,
                Outcome::Failure => 1,
                Outcome::Ignored => 2,
            };
            Step {
                at: nanos(answer.end()),
                call: k | END,
                slot: slot | outcome << OUTCOME_SHIFT,
            }
        };
        let mut next_end = ends.iter().peekable();
        for (i, answer) in answers.iter().enumerate() {
            // A call of no time ends only once it has started.
            let ended = |&&k: &&u32| k < i as u32 && answers[k as usize].end() <= answer.start;
            while let Some(&k) = next_end.next_if(ended) {
                steps.push(end(k, slots[k as usize]));
                free.push(slots[k as usize]);
            }
            slots[i] = free.pop().unwrap_or_else(|| {
                width += 1;
                width - 1
            });
            assert!(slots[i] <= SLOT_MASK, "at most 2^30 calls in flight");
            steps.push(Step {
                at: nanos(answer.start),
                call: i as u32,
                slot: slots[i],
            });
        }
        steps.extend(next_end.map(|&k| end(k, slots[k as usize])));
        Schedule {
            steps,
            width: width as usize,
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
    /// Calls adaptive throttling refused in CLOSED (`throttle`).
    pub shed: u64,
}

impl Run {
    /// Whether call `i` was let through.
    pub fn admitted(&self, i: usize) -> bool {
        self.admitted[i / 64] & (1 << (i % 64)) != 0
    }
}

/// Replays the calls through the rules of a breaker configured with `config`
/// ([`breakerbox::replay`], which decides as the `Breaker` does): calls start at their
/// recorded time and end `latency` later, so calls overlap as they did.
pub fn replay(answers: &[Answer], schedule: &Schedule, config: Config) -> Run {
    let mut breaker = Replay::new(config);
    let mut admitted = vec![0u64; answers.len().div_ceil(64)];
    let mut in_flight: Vec<Option<ReplayPermit>> = vec![None; schedule.width];
    // An open breaker rejects every call until its period ends, and nothing but a call can
    // end it (a result from before it opened is stale): calls that start before then are
    // rejected without asking it.
    let mut open_until = 0;
    let mut shed = 0;
    for step in &schedule.steps {
        if step.call & END != 0 {
            if let Some(permit) = in_flight[step.slot()].take() {
                // A failure that carried a pushback opens the breaker for it, as a breaker
                // obeys it (capped by `pushback_max`).
                match answers[(step.call & !END) as usize].pushback {
                    Some(asked) if step.outcome() == Outcome::Failure => {
                        breaker.record_pushback(permit, asked, step.at())
                    }
                    _ => breaker.record(permit, step.outcome(), step.at()),
                }
            }
            continue;
        }
        if step.at < open_until {
            continue;
        }
        match breaker.try_acquire(step.at()) {
            Ok(permit) => {
                let i = step.call as usize;
                admitted[i / 64] |= 1 << (i % 64);
                in_flight[step.slot()] = Some(permit);
            }
            Err(refused) => {
                if let Some(left) = refused.retry_after {
                    open_until = step.at.saturating_add(nanos(left));
                }
                shed += u64::from(refused.reason == RejectReason::Shed);
            }
        }
    }
    Run {
        admitted,
        transitions: breaker.into_transitions(),
        shed,
    }
}

#[cfg(test)]
mod tests;
