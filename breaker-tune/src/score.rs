//! How well one configuration did on a recording: the scores the tuner compares.

use std::ops::Range;
use std::time::Duration;

use breakerbox::{config::Window, State};

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
    /// Times the breaker closed and opened again within one window (the time window's
    /// length; for a count window, the time the trace's next `window` calls take) while no
    /// new outage began in between: a close the downstream did not bear out.
    pub flaps: u32,
    /// Calls adaptive throttling refused (`throttle`): rejections like any other (in
    /// [`healthy_rejected`](Self::healthy_rejected) when the downstream was healthy), shown
    /// apart.
    pub shed: u64,
    /// What the tuner minimises: [`sent_into_outage`](Self::sent_into_outage) plus
    /// [`healthy_rejected`](Self::healthy_rejected) plus each flap at one second of the
    /// trace's traffic ([`Truth::flap_cost`]).
    pub cost: u64,
}

impl Scores {
    /// Wrong decisions, in calls, with a flap at a second of traffic.
    pub fn cost(&self) -> u64 {
        self.cost
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

/// What every replay of one trace is scored against, worked out once.
#[derive(Clone, Debug)]
pub struct Truth {
    /// Bit `i` is set when call `i` started while the downstream was sick.
    sick: Vec<u64>,
    calls: usize,
    /// For each outage, the ends of the calls that started in it, in order.
    ends: Vec<Vec<Duration>>,
    /// What a flap costs, in calls: the trace's mean calls a second, at least 1.
    pub flap_cost: u64,
}

impl Truth {
    /// The truth of `answers` (in the order of their start) under `health`.
    pub fn new(health: &Health, answers: &[Answer]) -> Truth {
        let mut sick = vec![0u64; answers.len().div_ceil(64)];
        let mut ends = vec![Vec::new(); health.outages.len()];
        for (i, a) in answers.iter().enumerate() {
            if let Some(o) = health.outage_at(a.start) {
                sick[i / 64] |= 1 << (i % 64);
                ends[o].push(a.end());
            }
        }
        for e in &mut ends {
            e.sort_unstable();
        }
        let span = answers
            .last()
            .zip(answers.first())
            .map_or(0.0, |(l, f)| (l.start - f.start).as_secs_f64());
        let flap_cost = (answers.len() as f64 / span.max(1.0)).round().max(1.0) as u64;
        Truth {
            sick,
            calls: answers.len(),
            ends,
            flap_cost,
        }
    }
}

/// Scores the replay `run` of a breaker whose window is `window`.
pub fn score(
    health: &Health,
    truth: &Truth,
    answers: &[Answer],
    run: &Run,
    window: Window,
) -> Scores {
    let mut scores = Scores::default();
    let t = &run.transitions;
    let state_at = |at: Duration| {
        let i = t.partition_point(|&(when, _)| when <= at);
        i.checked_sub(1).map_or(State::Closed, |i| t[i].1)
    };
    let mut spans: Vec<Range<Duration>> = Vec::with_capacity(health.outages.len());
    for (o, outage) in health.outages.iter().enumerate() {
        let from = t.partition_point(|&(at, _)| at < outage.start);
        let opened = t[from..]
            .iter()
            .take_while(|&&(at, _)| at < outage.end)
            .find(|&&(_, s)| s == State::Open)
            .map(|&(at, _)| at);
        let calls_before = |until: Duration| truth.ends[o].partition_point(|&e| e <= until) as u64;
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
            let after = t.partition_point(|&(at, _)| at <= outage.end);
            t[after..]
                .iter()
                .find(|&&(_, s)| s == State::Closed)
                .map_or(health.end.max(outage.end), |&(at, _)| at)
        };
        scores.recovery += closed - outage.end;
        match spans.last_mut() {
            Some(last) if last.end >= outage.start => last.end = last.end.max(closed),
            _ => spans.push(outage.start..closed),
        }
    }
    let in_span = |at: Duration| {
        let i = spans.partition_point(|s| s.start <= at);
        i > 0 && spans[i - 1].contains(&at)
    };
    scores.false_opens = t
        .iter()
        .filter(|&&(at, s)| s == State::Open && !in_span(at))
        .count() as u32;
    for pair in t.windows(2) {
        let [(closed, State::Closed), (opened, State::Open)] = *pair else {
            continue;
        };
        let span = match window {
            Window::Time { span, .. } => span,
            Window::Count(n) => {
                let next = answers.partition_point(|a| a.start <= closed);
                let last = (next + n as usize).min(answers.len()).saturating_sub(1);
                answers
                    .get(last)
                    .map_or(Duration::ZERO, |a| a.start.saturating_sub(closed))
            }
        };
        let new_outage = health
            .outages
            .iter()
            .any(|o| closed < o.start && o.start <= opened);
        if opened - closed <= span && !new_outage {
            scores.flaps += 1;
        }
    }
    for (w, (&admitted, &sick)) in run.admitted.iter().zip(&truth.sick).enumerate() {
        let valid = if (w + 1) * 64 <= truth.calls {
            u64::MAX
        } else {
            (1u64 << (truth.calls % 64)) - 1
        };
        scores.sent_into_outage += u64::from((admitted & sick).count_ones());
        scores.healthy_rejected += u64::from((!admitted & !sick & valid).count_ones());
    }
    scores.shed = run.shed;
    scores.cost = scores.sent_into_outage
        + scores.healthy_rejected
        + u64::from(scores.flaps) * truth.flap_cost;
    scores
}

#[cfg(test)]
mod tests {
    use super::*;
    use breakerbox::Outcome;

    fn health(outages: &[(u64, u64)], end: u64) -> Health {
        let outages: Vec<_> = outages
            .iter()
            .map(|&(s, e)| Duration::from_secs(s)..Duration::from_secs(e))
            .collect();
        Health {
            bucket: Duration::from_secs(1),
            buckets: Vec::new(),
            baseline_median: Duration::from_millis(5),
            healthy_p99: Duration::from_millis(10),
            censored: vec![false; outages.len()],
            outages,
            slow: Vec::new(),
            end: Duration::from_secs(end),
        }
    }

    /// A call every second from 0 to `n - 1`.
    fn every_second(n: u64, outcome: Outcome) -> Vec<Answer> {
        (0..n)
            .map(|s| Answer {
                start: Duration::from_secs(s),
                latency: Duration::ZERO,
                outcome,
                pushback: None,
            })
            .collect()
    }

    fn admitted(n: usize, let_through: impl Fn(usize) -> bool) -> Vec<u64> {
        let mut bits = vec![0u64; n.div_ceil(64)];
        for i in (0..n).filter(|&i| let_through(i)) {
            bits[i / 64] |= 1 << (i % 64);
        }
        bits
    }

    const SECS: fn(u64) -> Duration = Duration::from_secs;

    #[test]
    fn an_outage_is_scored_from_its_start_to_the_breaker_closing_after_it() {
        // The downstream is sick from 5 s to 10 s.
        let answers = every_second(20, Outcome::Success);
        let run = Run {
            // let through 0..=6, rejected 7..=12, 13 probe, 14 rejected (reopened), from 15 on.
            admitted: admitted(20, |s| s <= 6 || s == 13 || s >= 15),
            transitions: vec![
                (SECS(2), State::Open), // a false open, closed at 3
                (SECS(3), State::Closed),
                (SECS(7), State::Open), // the outage began since the close: no flap
                (SECS(13), State::HalfOpen),
                (SECS(13), State::Open),
                (SECS(15), State::HalfOpen),
                (SECS(16), State::Closed),
            ],
            shed: 1,
        };
        let health = health(&[(5, 10)], 19);
        let truth = Truth::new(&health, &answers);
        let scores = score(&health, &truth, &answers, &run, Window::Count(20));
        assert_eq!(
            scores,
            Scores {
                detection: SECS(2),
                missed: 0,
                detection_calls: 3,  // 5, 6, and 7 that tripped it
                sent_into_outage: 2, // 5 and 6
                healthy_rejected: 4, // 10, 11, 12 and 14 (2 was let through)
                false_opens: 1,
                recovery: SECS(6),
                flaps: 0,
                shed: 1,
                cost: 6,
            }
        );
    }

    #[test]
    fn a_close_and_a_reopen_within_a_window_is_a_flap_and_costs_a_second_of_traffic() {
        // Sick from 5 s to 10 s; the breaker closes at 8 s, during it, and opens again at
        // 9 s; then it closes at 12 s and opens at 30 s on a healthy downstream, a window
        // of 10 s later: a false open, no flap.
        let answers = every_second(40, Outcome::Success);
        let run = Run {
            admitted: admitted(40, |_| true),
            transitions: vec![
                (SECS(6), State::Open),
                (SECS(7), State::HalfOpen),
                (SECS(8), State::Closed),
                (SECS(9), State::Open),
                (SECS(11), State::HalfOpen),
                (SECS(12), State::Closed),
                (SECS(30), State::Open),
                (SECS(31), State::HalfOpen),
                (SECS(32), State::Closed),
            ],
            shed: 0,
        };
        let health = health(&[(5, 10)], 39);
        let truth = Truth::new(&health, &answers);
        assert_eq!(truth.flap_cost, 1);
        let scores = score(
            &health,
            &truth,
            &answers,
            &run,
            Window::Time {
                span: Duration::from_secs(10),
                buckets: 10,
            },
        );
        assert_eq!((scores.flaps, scores.false_opens), (1, 1));
        assert_eq!(scores.cost, 5 + 1); // every sick call let through, and the flap
    }

    #[test]
    fn a_missed_outage_counts_whole() {
        let answers = every_second(10, Outcome::Failure);
        let run = Run {
            admitted: admitted(10, |_| true),
            transitions: Vec::new(),
            shed: 0,
        };
        let health = health(&[(2, 6)], 9);
        let truth = Truth::new(&health, &answers);
        let scores = score(&health, &truth, &answers, &run, Window::Count(20));
        assert_eq!(
            (scores.missed, scores.detection, scores.detection_calls),
            (1, SECS(4), 4)
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
