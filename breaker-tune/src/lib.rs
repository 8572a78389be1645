//! The replay tuner of [`breakerbox`]: recommends a circuit breaker configuration from a
//! recording of real calls.
//!
//! It estimates the downstream's health over time from the recorded outcomes and latencies
//! ([`health`]), gives every call the downstream's answer at its time
//! ([`replay::answers`]), replays the calls through the rules of each candidate
//! configuration ([`replay`], on [`breakerbox::replay`], which decides every call as the
//! `Breaker` does), scores each replay ([`score`]), searches a grid of candidates on all
//! cores ([`search`]), and picks among the leading ones by their scores on perturbed copies
//! of the trace ([`robust`]). [`report`] writes what it found, [`plot`] draws it; the
//! `breakerbox-tune` binary does both:
//!
//! ```text
//! cargo install --path breaker-tune
//! breakerbox-tune trace.csv
//! ```
//!
//! Every candidate is compared with the configuration the recorded breaker runs
//! ([`current`]): the one its recording gives ([`Recording::config`]), or the one its
//! caller names.
//!
//! A library user tunes a recording in code:
//!
//! ```
//! use std::time::Duration;
//! use breakerbox::recording::{CallOutcome, RecordedCall, Recording};
//! use breakerbox::{Config, Outcome};
//!
//! // 40 s of a call every 20 ms, failing from 10 s to 20 s.
//! let recording: Recording = (0..2000u64)
//!     .map(|i| {
//!         let outcome = match i {
//!             500..1000 => Outcome::Failure,
//!             _ => Outcome::Success,
//!         };
//!         let start = Duration::from_millis(i * 20);
//!         RecordedCall::new(start, Duration::from_millis(5), CallOutcome::Completed(outcome))
//!     })
//!     .collect();
//! let tuning = breakerbox_tune::tune(&recording, &Config::default());
//! assert_eq!(tuning.health.outages, [Duration::from_secs(10)..Duration::from_secs(20)]);
//! let pick = tuning.recommended_scores();
//! // It stops calling the sick downstream sooner, and costs less than the running one over
//! // the trace and its perturbed copies.
//! assert!(pick.detection < tuning.current_scores.detection);
//! let k = tuning.recommended_row().unwrap();
//! let mean = |scores| breakerbox_tune::robust::Spread::of(scores).mean;
//! assert!(mean(&tuning.robustness.scores[k]) < mean(&tuning.robustness.current));
//! for change in tuning.changes()? {
//!     println!("{change}");
//! }
//! # Ok::<(), breakerbox::config::ConfigError>(())
//! ```
//!
//! Memory grows with the calls, never with the span of the trace: times are taken from the
//! first call, and the health estimate keeps only the seconds that have a call.

pub mod current;
pub mod health;
pub mod noise;
pub mod outages;
pub mod plot;
pub mod replay;
pub mod report;
pub mod robust;
pub mod score;
pub mod search;

use std::thread;
use std::time::{Duration, Instant};

use breakerbox::recording::{CallOutcome, RecordedCall, Recording};
use breakerbox::{config::ConfigError, Config, Outcome};

use self::current::Change;
use self::health::Health;
use self::noise::Noise;
use self::replay::{Answer, Run, Schedule};
use self::robust::Robustness;
use self::score::{Scores, Truth};
use self::search::{Spec, Trace};

/// How the tuner runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Threads replaying candidates; all cores by default.
    pub threads: usize,
    /// Perturbed copies of the trace the leading candidates are replayed on.
    pub perturbations: usize,
    /// The seed of the perturbations.
    pub seed: u64,
    /// The leading candidates replayed on the copies.
    pub candidates: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            threads: thread::available_parallelism().map_or(1, |n| n.get()),
            perturbations: 8,
            seed: 1,
            candidates: 24,
        }
    }
}

/// A trace's calls and attempts told apart: every line is an attempt, and a call is its first
/// attempt with the retries after it. Each attempt asked the breaker and, let through, loaded
/// the downstream: the replays offer every attempt to each candidate, and score them as the
/// load they are ([`Scores::sent_into_outage`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Attempts {
    /// Calls: the first attempts.
    pub calls: u64,
    /// Every line of the trace.
    pub attempts: u64,
    /// Attempts after a call's first.
    pub retries: u64,
    /// Calls whose last attempt failed: failed after every retry. Only a failure is
    /// retried, so every retry follows one failed attempt of its call.
    pub failed_calls: u64,
}

impl Attempts {
    /// Counts the attempts of `calls`.
    pub fn of(calls: &[RecordedCall]) -> Attempts {
        let retries = calls.iter().filter(|c| c.attempt > 1).count() as u64;
        let failures = calls
            .iter()
            .filter(|c| c.outcome == CallOutcome::Completed(Outcome::Failure))
            .count() as u64;
        Attempts {
            calls: calls.len() as u64 - retries,
            attempts: calls.len() as u64,
            retries,
            failed_calls: failures.saturating_sub(retries),
        }
    }
}

/// What the tuner found on one recording.
#[derive(Clone, Debug)]
pub struct Tuning {
    /// The first call's start in the recording: every time here is from it.
    pub offset: Duration,
    /// Calls the recorded breaker rejected. A trace recorded behind an enforcing breaker
    /// hides how the downstream answered them, so the outages' ends are guesses
    /// ([`Health::censored`]); record in shadow mode instead.
    pub rejected: usize,
    /// The trace's calls and their attempts told apart (a retried call is one call).
    pub attempts: Attempts,
    pub health: Health,
    /// The healthy failure rate and its bound, up to which the perturbed copies fail
    /// healthy calls.
    pub noise: Noise,
    pub answers: Vec<Answer>,
    pub specs: Vec<Spec>,
    pub scores: Vec<Scores>,
    /// The configuration compared against: the one the recorded breaker runs.
    pub current: Config,
    pub current_scores: Scores,
    /// The Pareto front, by cost.
    pub front: Vec<usize>,
    /// The leading candidates and the current configuration on perturbed copies of the
    /// trace.
    pub robustness: Robustness,
    /// The recommended candidate; `None` to keep the current configuration.
    pub recommended: Option<usize>,
    /// What a flap costs, in calls: a second of the trace's traffic.
    pub flap_cost: u64,
    /// How long replaying and scoring every candidate of the grid took.
    pub elapsed: Duration,
    pub threads: usize,
}

impl Tuning {
    /// The recommended configuration: the recommended candidate's keys with the current
    /// configuration's other keys ([`current::apply`]), or the current configuration when
    /// no candidate beats it.
    ///
    /// # Errors
    ///
    /// The rule that a tuned key and a kept one break together.
    pub fn recommendation(&self) -> Result<Config, ConfigError> {
        match self.recommended {
            Some(i) => current::apply(&self.specs[i], &self.current),
            None => Ok(self.current.clone()),
        }
    }

    /// The recommended candidate of the grid, if one beats the current configuration.
    pub fn recommended_spec(&self) -> Option<Spec> {
        self.recommended.map(|i| self.specs[i])
    }

    /// What the recommendation changes in the current configuration, key by key.
    ///
    /// # Errors
    ///
    /// As [`recommendation`](Self::recommendation).
    pub fn changes(&self) -> Result<Vec<Change>, ConfigError> {
        Ok(current::changes(&self.current, &self.recommendation()?))
    }

    /// The scores of [`recommendation`](Self::recommendation) on the recorded trace.
    pub fn recommended_scores(&self) -> Scores {
        self.recommended
            .map_or(self.current_scores, |i| self.scores[i])
    }

    /// The recommended candidate's row in [`Tuning::robustness`].
    pub fn recommended_row(&self) -> Option<usize> {
        let i = self.recommended?;
        self.robustness.candidates.iter().position(|&c| c == i)
    }

    /// A replay of `config`, to draw its states.
    pub fn replay(&self, config: &Config) -> Run {
        replay::replay(&self.answers, &Schedule::new(&self.answers), config.clone())
    }
}

/// Tunes against `current`, the configuration the recorded breaker runs, on the grid of
/// [`search::grid`], with the default [`Options`].
pub fn tune(recording: &Recording, current: &Config) -> Tuning {
    tune_with(recording, current, Options::default())
}

/// Tunes against `current`, the configuration the recorded breaker runs, on the grid of
/// [`search::grid`], in buckets of one second.
pub fn tune_with(recording: &Recording, current: &Config, options: Options) -> Tuning {
    let (offset, calls) = rebase(recording.calls());
    let rejected = calls
        .iter()
        .filter(|c| matches!(c.outcome, CallOutcome::Rejected(_)))
        .count();
    let attempts = Attempts::of(&calls);
    let health = Health::estimate(&calls, Duration::from_secs(1));
    let answers = replay::answers(&calls, &health);
    drop(calls);
    let noise = Noise::estimate(&health, &answers);
    let specs = search::grid(&health);
    let schedule = Schedule::new(&answers);
    let truth = Truth::new(&health, &answers);
    let trace = Trace {
        health: &health,
        answers: &answers,
        schedule: &schedule,
        truth: &truth,
    };
    let started = Instant::now();
    let scores = search::evaluate(trace, &specs, options.threads);
    let elapsed = started.elapsed();
    let current_scores = trace.score(current);
    let front = search::pareto(&scores);

    let robustness = if health.outages.is_empty() {
        Robustness::default()
    } else {
        let candidates = candidates(&specs, &scores, &front, &noise, options.candidates);
        Robustness::measure(
            trace,
            &specs,
            &scores,
            candidates,
            (current, current_scores),
            &noise,
            &options,
        )
    };
    let recommended = robustness.pick().map(|k| robustness.candidates[k]);
    drop(schedule);
    Tuning {
        offset,
        rejected,
        attempts,
        health,
        noise,
        answers,
        specs,
        scores,
        current: current.clone(),
        current_scores,
        front,
        robustness,
        recommended,
        flap_cost: truth.flap_cost,
        elapsed,
        threads: options.threads,
    }
}

/// The candidates replayed on perturbed copies: of the candidates that never opened on a
/// healthy downstream and missed no outage, keeping the first in the grid of those that
/// scored alike, the `n` of least cost, the `n / 4` of least cost of each open duration
/// (a pick fitted to one outage's length wins the recorded trace by a duration that its
/// copies do not share), the `n / 4` of least cost that the bound's background failures
/// would not open ([`Noise::quiet`]: the cheapest on a clean trace may all open on them),
/// then the first `n / 3` of the front; and apart from those, the `n / 4` throttled
/// candidates of least cost.
fn candidates(
    specs: &[Spec],
    scores: &[Scores],
    front: &[usize],
    noise: &Noise,
    n: usize,
) -> Vec<usize> {
    let sorted = |throttled: bool| {
        let mut eligible: Vec<usize> = (0..scores.len())
            .filter(|&i| specs[i].throttle.is_some() == throttled)
            .filter(|&i| scores[i].false_opens == 0 && scores[i].missed == 0)
            .collect();
        eligible.sort_by_key(|&i| (scores[i].cost(), scores[i].flaps, i));
        eligible.dedup_by_key(|&mut i| scores[i]);
        eligible
    };
    // The throttled candidates are chosen apart, `n / 4` of least cost, so that the twins of
    // the plain ones (alike but for the calls they shed) crowd none of those out.
    let eligible = sorted(false);
    let mut picked: Vec<usize> = eligible.iter().copied().take(n).collect();
    let mut opens: Vec<u64> = specs.iter().map(|s| s.open_secs).collect();
    opens.sort_unstable();
    opens.dedup();
    for open in opens {
        let best = eligible.iter().filter(|&&i| specs[i].open_secs == open);
        picked.extend(best.take(n / 4));
    }
    let quiet = eligible.iter().filter(|&&i| noise.quiet(&specs[i]));
    picked.extend(quiet.take(n / 4));
    picked.extend(
        front
            .iter()
            .filter(|&&i| specs[i].throttle.is_none())
            .take(n / 3),
    );
    picked.extend(sorted(true).into_iter().take(n / 4));
    let mut seen = std::collections::HashSet::new();
    picked.retain(|i| seen.insert(*i));
    picked
}

/// The calls with times from the first one's start, and that start.
fn rebase(calls: &[RecordedCall]) -> (Duration, Vec<RecordedCall>) {
    let offset = calls.first().map_or(Duration::ZERO, |c| c.start);
    let calls = calls
        .iter()
        .map(|c| RecordedCall {
            start: c.start - offset,
            ..*c
        })
        .collect();
    (offset, calls)
}

#[cfg(test)]
pub(crate) mod tests {
    use std::time::Duration;

    use breakerbox::recording::{CallOutcome, RecordedCall};

    /// A call that starts at `ms` and takes `latency_ms`.
    pub(crate) fn call(ms: u64, latency_ms: u64, outcome: CallOutcome) -> RecordedCall {
        RecordedCall::new(
            Duration::from_millis(ms),
            Duration::from_millis(latency_ms),
            outcome,
        )
    }

    #[test]
    fn retried_calls_are_counted_once_and_their_attempts_as_load() {
        use breakerbox::Outcome;
        let (ok, fail) = (
            CallOutcome::Completed(Outcome::Success),
            CallOutcome::Completed(Outcome::Failure),
        );
        // A: failed, failed, then answered; B: failed after both its retries; C: answered.
        let calls = [
            call(0, 5, fail),
            call(10, 5, fail).attempt(2),
            call(30, 5, ok).attempt(3),
            call(100, 5, fail),
            call(110, 5, fail).attempt(2),
            call(130, 5, fail).attempt(3),
            call(200, 5, ok),
        ];
        assert_eq!(
            super::Attempts::of(&calls),
            super::Attempts {
                calls: 3,
                attempts: 7,
                retries: 4,
                failed_calls: 1,
            }
        );
    }
}
