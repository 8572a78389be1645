//! Robust picks: the leading candidates replayed on perturbed copies of the trace.
//!
//! A configuration that fits one outage's exact length (an outage of 10 s and `open = "5s"`)
//! wins on the recorded trace and loses when the next outage is 1.5 s longer. Each perturbed
//! copy moves every outage's start by up to 30% of its length and scales its length by 0.7
//! to 1.3, and jitters every latency by up to 20%, with a seeded generator, so a run is
//! reproducible. Each copy also fails healthy calls at random, up to the upper bound of the
//! healthy failure rate ([`Noise`]), so that a trace too clean to show a false open still
//! tests for one. The recommendation is the candidate of least mean cost over the recorded
//! trace and its copies, of those that never opened on the copies' background failures if
//! any did not.

use std::ops::Range;
use std::time::Duration;

use breakerbox::{Config, Outcome};

use super::health::Health;
use super::noise::Noise;
use super::replay::{Answer, Schedule};
use super::score::{Scores, Truth};
use super::search::{Spec, Trace};
use super::Options;

/// How far an outage's start moves and its length scales, as a share of its length.
pub const OUTAGE_SPREAD: f64 = 0.3;
/// Mean costs within this share of the least are as good as the trace can tell.
pub const NEAR: f64 = 0.1;
/// Added to the seed of the perturbations for the background failures' own generator.
const NOISE_SEED: u64 = 0x9e37_79b9_7f4a_7c15;
/// How far a latency moves, as a share of it.
pub const LATENCY_JITTER: f64 = 0.2;

/// A perturbed copy of the trace: its answers and the health that holds by construction.
/// Each healthy call of the copy that succeeds fails instead with a chance of `added`
/// ([`Noise::added`]), drawn from `noise`, so that the moves and jitters drawn from `rng`
/// are those of a copy without background failures.
pub fn perturb(
    answers: &[Answer],
    health: &Health,
    rng: &mut fastrand::Rng,
    (added, noise): (f64, &mut fastrand::Rng),
) -> (Vec<Answer>, Health) {
    let mut moved: Vec<Range<Duration>> = Vec::with_capacity(health.outages.len());
    for (i, o) in health.outages.iter().enumerate() {
        let length = (o.end - o.start).as_secs_f64();
        let shift = (rng.f64() * 2.0 - 1.0) * OUTAGE_SPREAD * length;
        let scale = 1.0 + (rng.f64() * 2.0 - 1.0) * OUTAGE_SPREAD;
        let start = (o.start.as_secs_f64() + shift).max(0.0);
        let end = (start + length * scale).min(health.end.as_secs_f64());
        let floor = moved.last().map_or(0.0, |m| m.end.as_secs_f64());
        let ceiling = health
            .outages
            .get(i + 1)
            .map_or(f64::INFINITY, |next| next.start.as_secs_f64());
        // Outages keep their order and never touch: one that cannot move stays.
        let fits = start > floor && end > start && end < ceiling;
        moved.push(if fits {
            Duration::from_secs_f64(start)..Duration::from_secs_f64(end)
        } else {
            o.clone()
        });
    }
    // The timeline's knots, recorded and moved: 0, each outage's start and end, the end.
    let knots = |outages: &[Range<Duration>]| {
        let mut k = vec![Duration::ZERO];
        k.extend(outages.iter().flat_map(|o| [o.start, o.end]));
        k.push(health.end.max(k[k.len() - 1]));
        k
    };
    let (from, to) = (knots(&health.outages), knots(&moved));
    let source = |t: Duration| {
        let k = to.partition_point(|&x| x <= t).clamp(1, to.len() - 1);
        let (a, b) = (to[k - 1], to[k]);
        let (x, y) = (from[k - 1], from[k]);
        let share = if b > a {
            (t.saturating_sub(a)).as_secs_f64() / (b - a).as_secs_f64()
        } else {
            0.0
        };
        (x + (y - x).mul_f64(share.clamp(0.0, 1.0)), x..y)
    };
    let sick = |t: Duration| {
        let i = moved.partition_point(|o| o.start <= t);
        i > 0 && moved[i - 1].contains(&t)
    };
    let perturbed = answers
        .iter()
        .map(|a| {
            let (t, segment) = source(a.start);
            let near = nearest(answers, t, &segment);
            let jitter = 1.0 + (rng.f64() * 2.0 - 1.0) * LATENCY_JITTER;
            let fails = added > 0.0 && noise.f64() < added;
            let outcome = match near.outcome {
                Outcome::Success if fails && !sick(a.start) => Outcome::Failure,
                outcome => outcome,
            };
            Answer {
                start: a.start,
                latency: near.latency.mul_f64(jitter),
                outcome,
                // A pushback stays with the failure that carried it.
                pushback: near.pushback.filter(|_| outcome == near.outcome),
            }
        })
        .collect();
    let health = Health {
        buckets: Vec::new(),
        slow: Vec::new(),
        censored: vec![false; moved.len()],
        outages: moved,
        ..health.clone()
    };
    (perturbed, health)
}

/// The answer that started nearest `t`, within `segment` if one did.
fn nearest<'a>(answers: &'a [Answer], t: Duration, segment: &Range<Duration>) -> &'a Answer {
    let at = answers.partition_point(|a| a.start < t);
    let candidates = [at.checked_sub(1), (at < answers.len()).then_some(at)];
    let distance = |i: usize| answers[i].start.abs_diff(t);
    let inside = candidates
        .iter()
        .flatten()
        .filter(|&&i| segment.contains(&answers[i].start) || segment.is_empty())
        .min_by_key(|&&i| distance(i));
    let any = candidates.iter().flatten().min_by_key(|&&i| distance(i));
    &answers[*inside.or(any).expect("a trace has a call")]
}

/// How the leading candidates and the current configuration fared on the recorded trace and its copies.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Robustness {
    /// Perturbed copies replayed.
    pub perturbations: usize,
    /// The candidates replayed on them, as indices into the grid.
    pub candidates: Vec<usize>,
    /// For each candidate, its scores on the recorded trace, then on each copy.
    pub scores: Vec<Vec<Scores>>,
    /// The current configuration's scores, likewise.
    pub current: Vec<Scores>,
    /// For each candidate, on how many copies it was on the Pareto front of the candidates
    /// and the current configuration.
    pub on_front: Vec<usize>,
    /// For each candidate, whether the bound's background failures would open it less than
    /// once in 20 traces like this one ([`Noise::quiet`]).
    pub calm: Vec<bool>,
}

/// Cost statistics over the recorded trace and its copies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    pub mean: f64,
    pub min: u64,
    pub max: u64,
}

impl Spread {
    /// The spread of `scores`' costs.
    pub fn of(scores: &[Scores]) -> Spread {
        let costs = scores.iter().map(Scores::cost);
        Spread {
            mean: costs.clone().sum::<u64>() as f64 / scores.len().max(1) as f64,
            min: costs.clone().min().unwrap_or(0),
            max: costs.max().unwrap_or(0),
        }
    }

    /// How far the cost swings: its range over its mean (0 when the mean is 0).
    pub fn swing(&self) -> f64 {
        if self.mean == 0.0 {
            0.0
        } else {
            (self.max - self.min) as f64 / self.mean
        }
    }
}

impl Robustness {
    /// Replays `candidates` and `current` on the perturbed copies of `options`, drawn with
    /// its seed, on its threads.
    pub fn measure(
        trace: Trace<'_>,
        specs: &[Spec],
        scores: &[Scores],
        candidates: Vec<usize>,
        current: (&Config, Scores),
        noise: &Noise,
        options: &Options,
    ) -> Robustness {
        let (perturbations, threads) = (options.perturbations, options.threads);
        let mut rng = fastrand::Rng::with_seed(options.seed);
        let mut background = fastrand::Rng::with_seed(options.seed.wrapping_add(NOISE_SEED));
        let evaluated: Vec<Spec> = candidates.iter().map(|&i| specs[i]).collect();
        let mut table: Vec<Vec<Scores>> = candidates.iter().map(|&i| vec![scores[i]]).collect();
        table.push(vec![current.1]);
        let mut on_front = vec![0; candidates.len()];
        for _ in 0..perturbations {
            let added = (noise.added(), &mut background);
            let (answers, health) = perturb(trace.answers, trace.health, &mut rng, added);
            let schedule = Schedule::new(&answers);
            let truth = Truth::new(&health, &answers);
            let copy = Trace {
                health: &health,
                answers: &answers,
                schedule: &schedule,
                truth: &truth,
            };
            let mut got = super::search::evaluate(copy, &evaluated, threads);
            got.push(copy.score(current.0));
            for (i, front) in on_front.iter_mut().enumerate() {
                if !got.iter().any(|other| other.dominates(&got[i])) {
                    *front += 1;
                }
            }
            for (row, s) in table.iter_mut().zip(got) {
                row.push(s);
            }
        }
        let current = table.pop().unwrap_or_default();
        let calm = candidates.iter().map(|&i| noise.quiet(&specs[i])).collect();
        Robustness {
            perturbations,
            calm,
            candidates,
            scores: table,
            current,
            on_front,
        }
    }

    /// Whether candidate `k` (a row of [`candidates`](Self::candidates)) would not open on
    /// the background failures of the bound of [`Noise`], by their expected count: the
    /// copies' sampled ones are too few to tell on a short trace, and too random to decide
    /// the pick (their false opens count in the copies' costs).
    pub fn quiet(&self, k: usize) -> bool {
        self.calm[k]
    }

    /// The pick: among the candidates that never opened on a healthy downstream and missed
    /// no outage of the recorded trace, and whose mean cost is below the current one's, the
    /// [`quiet`](Self::quiet) ones if any is (a candidate that opens on the bound's
    /// background failures loses to one that does not); of those, the ones within [`NEAR`]
    /// of the least mean cost are as good as the trace can tell; of them, the one with the
    /// fewest flaps, then the first in the grid (fewer keys, smaller windows and rates), so
    /// that a small change of the trace keeps the pick.
    pub fn pick(&self) -> Option<usize> {
        let current = Spread::of(&self.current).mean;
        let mut eligible: Vec<(f64, u64, usize, usize)> = (0..self.candidates.len())
            .filter(|&k| {
                let recorded = &self.scores[k][0];
                recorded.false_opens == 0 && recorded.missed == 0
            })
            .map(|k| {
                let flaps: u64 = self.scores[k].iter().map(|s| u64::from(s.flaps)).sum();
                (
                    Spread::of(&self.scores[k]).mean,
                    flaps,
                    self.candidates[k],
                    k,
                )
            })
            .filter(|&(mean, ..)| mean < current)
            .collect();
        if eligible.iter().any(|&(.., k)| self.quiet(k)) {
            eligible.retain(|&(.., k)| self.quiet(k));
        }
        let best = eligible.iter().map(|e| e.0).min_by(f64::total_cmp)?;
        eligible
            .into_iter()
            .filter(|&(mean, ..)| mean <= best * (1.0 + NEAR))
            .min_by_key(|&(_, flaps, i, _)| (flaps, i))
            .map(|(.., k)| k)
    }
}
