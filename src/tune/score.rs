//! How well one configuration did on a recording: the scores the tuner compares.

use std::time::Duration;

use breaker::State;

use super::health::Health;
use super::replay::{Answer, Run};

/// The scores of one replay. Lower is better in every field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Scores {
    /// From each outage's start to the breaker opening, summed; an outage it never opened
    /// for counts whole.
    pub detection: Duration,
    /// Outages the breaker never opened for.
    pub missed: u32,
    /// Calls of each outage that completed before the breaker opened for it, summed (a
    /// missed outage counts all its calls): the window judges completed calls, so a breaker
    /// that detects within its window opens within that many.
    pub detection_calls: u64,
    /// Calls let through while the downstream was sick.
    pub sent_into_outage: u64,
    /// Calls rejected while the downstream was healthy: after outages (recovery) and in
    /// false opens.
    pub healthy_rejected: u64,
    /// Times the breaker opened outside every outage and its recovery.
    pub false_opens: u32,
    /// From each outage's end to the breaker closing fully, summed.
    pub recovery: Duration,
    /// Times the breaker opened again within one outage and its recovery.
    pub flaps: u32,
}

impl Scores {
    /// Wrong decisions, in calls: calls let into a sick downstream plus calls refused from
    /// a healthy one. What the tuner minimises.
    pub fn cost(&self) -> u64 {
        self.sent_into_outage + self.healthy_rejected
    }

    /// Whether `self` is at least as good as `other` in every score and better in one.
    pub fn dominates(&self, other: &Scores) -> bool {
        let a = self.ranked();
        let b = other.ranked();
        a.iter().zip(&b).all(|(x, y)| x <= y) && a != b
    }

    /// The scores the Pareto front compares, in the order of the table.
    pub(crate) fn ranked(&self) -> [u128; 5] {
        [
            self.detection.as_nanos(),
            u128::from(self.sent_into_outage),
            u128::from(self.healthy_rejected),
            self.recovery.as_nanos(),
            u128::from(self.flaps),
        ]
    }
}

/// Scores a replay of `answers` against the estimated health.
pub fn score(health: &Health, answers: &[Answer], run: &Run) -> Scores {
    let mut scores = Scores::default();
    // The state at any time, from the transitions.
    let state_at = |t: Duration| {
        let i = run.transitions.partition_point(|&(at, _)| at <= t);
        i.checked_sub(1)
            .map_or(State::Closed, |i| run.transitions[i].1)
    };
    let last = health.end;
    // Each outage with its recovery: until the breaker is closed after the outage.
    let mut spans = Vec::with_capacity(health.outages.len());
    for outage in &health.outages {
        let opened = run
            .transitions
            .iter()
            .find(|&&(at, s)| s == State::Open && outage.contains(&at))
            .map(|&(at, _)| at);
        let calls_before = |until: Duration| {
            answers
                .iter()
                .filter(|a| outage.contains(&a.start) && a.start + a.latency <= until)
                .count() as u64
        };
        match opened {
            Some(at) => {
                scores.detection += at - outage.start;
                scores.detection_calls += calls_before(at);
            }
            None => {
                scores.missed += 1;
                scores.detection += outage.end - outage.start;
                scores.detection_calls += calls_before(outage.end);
            }
        }
        let closed = if state_at(outage.end) == State::Closed {
            outage.end
        } else {
            run.transitions
                .iter()
                .find(|&&(at, s)| s == State::Closed && at > outage.end)
                .map_or(last.max(outage.end), |&(at, _)| at)
        };
        scores.recovery += closed - outage.end;
        spans.push(outage.start..closed);
        let opens = run
            .transitions
            .iter()
            .filter(|&&(at, s)| s == State::Open && outage.start <= at && at < closed)
            .count() as u32;
        scores.flaps += opens.saturating_sub(1);
    }
    let in_span = |t: Duration| spans.iter().any(|s| s.contains(&t));
    scores.false_opens = run
        .transitions
        .iter()
        .filter(|&&(at, s)| s == State::Open && !in_span(at))
        .count() as u32;
    for (answer, &admitted) in answers.iter().zip(&run.admitted) {
        let sick = health.outage_at(answer.start).is_some();
        match (sick, admitted) {
            (true, true) => scores.sent_into_outage += 1,
            (false, false) => scores.healthy_rejected += 1,
            _ => {}
        }
    }
    scores
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::health::Bucket;
    use breaker::Outcome;

    fn health(outages: &[(u64, u64)], end: u64) -> Health {
        Health {
            bucket: Duration::from_secs(1),
            buckets: vec![Bucket::default(); end as usize + 1],
            healthy_p99: Duration::from_millis(10),
            outages: outages
                .iter()
                .map(|&(s, e)| Duration::from_secs(s)..Duration::from_secs(e))
                .collect(),
            end: Duration::from_secs(end),
        }
    }

    #[test]
    fn an_outage_is_scored_from_its_start_to_the_breaker_closing_after_it() {
        // A call every second from 0 to 19; the downstream is sick from 5 s to 10 s.
        let answers: Vec<_> = (0..20)
            .map(|s| Answer {
                start: Duration::from_secs(s),
                latency: Duration::ZERO,
                outcome: Outcome::Success,
            })
            .collect();
        let secs = Duration::from_secs;
        let run = Run {
            // let through 0..=6, rejected 7..=12, 13 probe, 14 rejected (reopened), from 15 on.
            admitted: (0..20).map(|s| s <= 6 || s == 13 || s >= 15).collect(),
            transitions: vec![
                (secs(2), State::Open), // a false open, closed at 3
                (secs(3), State::Closed),
                (secs(7), State::Open),
                (secs(13), State::HalfOpen),
                (secs(13), State::Open),
                (secs(15), State::HalfOpen),
                (secs(16), State::Closed),
            ],
        };
        let scores = score(&health(&[(5, 10)], 19), &answers, &run);
        assert_eq!(
            scores,
            Scores {
                detection: secs(2),
                missed: 0,
                detection_calls: 3,  // 5, 6, and 7 that tripped it
                sent_into_outage: 2, // 5 and 6
                healthy_rejected: 4, // 10, 11, 12 and 14 (2 was let through)
                false_opens: 1,
                recovery: secs(6),
                flaps: 1,
            }
        );
        assert_eq!(scores.cost(), 6);
    }

    #[test]
    fn a_missed_outage_counts_whole() {
        let answers: Vec<_> = (0..10)
            .map(|s| Answer {
                start: Duration::from_secs(s),
                latency: Duration::ZERO,
                outcome: Outcome::Failure,
            })
            .collect();
        let run = Run {
            admitted: vec![true; 10],
            transitions: Vec::new(),
        };
        let scores = score(&health(&[(2, 6)], 9), &answers, &run);
        assert_eq!(
            (scores.missed, scores.detection, scores.detection_calls),
            (1, Duration::from_secs(4), 4)
        );
        assert_eq!(
            (scores.sent_into_outage, scores.recovery),
            (4, Duration::ZERO)
        );
    }

    #[test]
    fn dominance_needs_one_score_strictly_better() {
        let a = Scores {
            sent_into_outage: 3,
            ..Scores::default()
        };
        let b = Scores {
            sent_into_outage: 4,
            ..Scores::default()
        };
        assert!(a.dominates(&b));
        assert!(!b.dominates(&a));
        assert!(!a.dominates(&a));
    }
}
