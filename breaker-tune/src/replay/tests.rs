use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use breakerbox::clock::Clock;
use breakerbox::{events::Event, Breaker, Permit, RejectReason};

use super::*;
use crate::robust::perturb;
use crate::search::grid;
use crate::tests::call;

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
        pushback: None,
    }
}

#[test]
fn the_schedule_ends_calls_in_the_order_of_their_end_and_reuses_their_slots() {
    let answers = [
        answer(0, 100, Outcome::Success),
        answer(10, 10, Outcome::Failure),
        answer(20, 0, Outcome::Ignored), // ends as it starts, after 1 ended
        answer(20, 5, Outcome::Success),
    ];
    let s = Schedule::new(&answers);
    let steps: Vec<_> = s
        .steps
        .iter()
        .map(|s| (s.call, s.slot(), s.at().as_millis()))
        .collect();
    assert_eq!(
        steps,
        [
            (0, 0, 0),
            (1, 1, 10),
            (1 | END, 1, 20),
            (2, 1, 20),
            (2 | END, 1, 20),
            (3, 1, 20),
            (3 | END, 1, 25),
            (END, 0, 100)
        ]
    );
    let ends: Vec<_> = s.steps.iter().filter(|s| s.call & END != 0).collect();
    let outcomes: Vec<_> = ends.iter().map(|s| s.outcome()).collect();
    assert_eq!(
        outcomes,
        [
            Outcome::Failure,
            Outcome::Ignored,
            Outcome::Success,
            Outcome::Success
        ]
    );
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

/// The clock of a replay through a real `Breaker`: it reads the instant of the event the
/// replay is at.
#[derive(Clone, Debug)]
struct EventClock {
    instants: Arc<[Instant]>,
    at: Arc<AtomicUsize>,
}

impl Clock for EventClock {
    fn now(&self) -> Instant {
        self.instants[self.at.load(Ordering::Relaxed)]
    }
}

/// [`replay`] through a real `Breaker` on a clock of its own, every call asked: what the
/// tuner's replays must equal.
fn through_a_breaker(answers: &[Answer], schedule: &Schedule, config: Config) -> Run {
    let origin = Instant::now();
    // Each step's time, from the answers rather than the step.
    let time = |step: &Step| {
        let answer = &answers[(step.call & !END) as usize];
        if step.call & END != 0 {
            answer.end()
        } else {
            answer.start
        }
    };
    let instants: Arc<[Instant]> = std::iter::once(origin)
        .chain(schedule.steps.iter().map(|s| origin + time(s)))
        .collect();
    let clock = EventClock {
        instants,
        at: Arc::new(AtomicUsize::new(0)),
    };
    let at = clock.at.clone();
    let breaker = Breaker::with_clock("replay", config, clock.clone());
    let transitions = Arc::new(Mutex::new(Vec::new()));
    let seen = transitions.clone();
    breaker.on_event(move |e| {
        if let Event::StateTransition { to, .. } = e {
            seen.lock().unwrap().push((clock.now() - origin, *to));
        }
    });
    let mut admitted = vec![0u64; answers.len().div_ceil(64)];
    let mut in_flight: Vec<Option<Permit<'_>>> = (0..schedule.width).map(|_| None).collect();
    let mut shed = 0;
    for (k, step) in schedule.steps.iter().enumerate() {
        let i = (step.call & !END) as usize;
        at.store(k + 1, Ordering::Relaxed);
        if step.call & END != 0 {
            if let Some(permit) = in_flight[step.slot()].take() {
                permit.record(answers[i].outcome);
            }
        } else {
            match breaker.try_acquire() {
                Ok(permit) => {
                    admitted[i / 64] |= 1 << (i % 64);
                    in_flight[step.slot()] = Some(permit);
                }
                Err(rejected) => shed += u64::from(rejected.reason() == RejectReason::Shed),
            }
        }
    }
    drop(in_flight);
    drop(breaker);
    let transitions = std::mem::take(&mut *transitions.lock().unwrap());
    Run {
        admitted,
        transitions,
        shed,
    }
}

/// Four minutes of calls every 40 ms or so, 1 to 30 ms long, 2% ignored and 1% failing,
/// through each kind of trouble: failures in 20 ms (30 s to 45 s), timeouts of 1 s (90 s to
/// 110 s), slow successes of 150 to 400 ms (140 s to 160 s), and blips of 2 s of failures
/// every 20 s from 180 s.
fn troubled() -> Vec<RecordedCall> {
    let mut rng = fastrand::Rng::with_seed(3);
    let mut start = Duration::ZERO;
    let mut calls = Vec::new();
    while start < Duration::from_secs(240) {
        let s = start.as_secs();
        let (latency_us, outcome) = match s {
            30..45 => (20_000, Outcome::Failure),
            90..110 => (1_000_000, Outcome::Failure),
            140..160 => (rng.u64(150_000..400_000), Outcome::Success),
            180.. if s % 20 < 2 => (rng.u64(1_000..5_000), Outcome::Failure),
            _ => match rng.u32(0..100) {
                0 => (rng.u64(1_000..30_000), Outcome::Failure),
                1 | 2 => (rng.u64(1_000..30_000), Outcome::Ignored),
                _ => (rng.u64(1_000..30_000), Outcome::Success),
            },
        };
        calls.push(RecordedCall::new(
            start,
            Duration::from_micros(latency_us),
            CallOutcome::Completed(outcome),
        ));
        start += Duration::from_micros(rng.u64(20_000..60_000));
    }
    calls
}

#[test]
fn every_candidate_replays_as_a_real_breaker_decides() {
    let calls = troubled();
    let health = Health::estimate(&calls, Duration::from_secs(1));
    let recorded = answers(&calls, &health);
    let (copy, _) = perturb(
        &recorded,
        &health,
        &mut fastrand::Rng::with_seed(5),
        (0.0, &mut fastrand::Rng::with_seed(6)),
    );
    let specs = grid(&health);
    assert_eq!(specs.len(), 6750, "slow-call and throttled candidates too");
    for answers in [recorded, copy] {
        let schedule = Schedule::new(&answers);
        let (mut opened, mut admitted, mut shed) = (0, 0, 0);
        for spec in &specs {
            let run = replay(&answers, &schedule, spec.config());
            let real = through_a_breaker(&answers, &schedule, spec.config());
            assert_eq!(run, real, "{spec}");
            opened += run.transitions.len();
            admitted += run.admitted.iter().map(|w| w.count_ones()).sum::<u32>();
            shed += run.shed;
        }
        // Not a replay that does nothing: the candidates open, probe and close.
        assert!(opened > specs.len() * 10, "{opened} state changes");
        assert!(admitted > 0);
        assert!(shed > 0, "the throttled candidates refuse calls");
    }
}

#[test]
fn a_failure_with_pushback_replays_open_for_its_retry_after() {
    // A call every 100 ms, all successes but one failure at 1 s that carried
    // `Retry-After: 4`: one failure of ten is far from the rate, but the breaker obeys the
    // pushback, open for 4 s from the failure's end, then one probe closes it.
    let answers: Vec<Answer> = (0..100u64)
        .map(|i| match i {
            10 => Answer {
                pushback: Some(Duration::from_secs(4)),
                ..answer(i * 100, 5, Outcome::Failure)
            },
            _ => answer(i * 100, 5, Outcome::Success),
        })
        .collect();
    let config = Config::builder().probes(1).build().unwrap();
    let run = replay(&answers, &Schedule::new(&answers), config.clone());
    let ms = Duration::from_millis;
    assert_eq!(
        run.transitions,
        [
            (ms(1005), State::Open),
            (ms(5100), State::HalfOpen),
            (ms(5105), State::Closed)
        ]
    );
    // Rejected: the calls from 1.1 s to 5 s.
    let rejected: Vec<usize> = (0..100).filter(|&i| !run.admitted(i)).collect();
    assert_eq!(rejected, (11..=50).collect::<Vec<_>>());

    // Without the pushback, the same failure is one of ten: no open at all.
    let plain: Vec<Answer> = answers
        .iter()
        .map(|a| Answer {
            pushback: None,
            ..*a
        })
        .collect();
    let run = replay(&plain, &Schedule::new(&plain), config);
    assert_eq!(run.transitions, []);
}
