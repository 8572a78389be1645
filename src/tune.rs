//! The replay tuner: recommends a configuration from a recording of real calls.
//!
//! It estimates the downstream's health over time from the recorded outcomes
//! ([`health`]), gives every call the downstream's answer at its time ([`replay::answers`]),
//! replays the calls through the real `Breaker` of each candidate configuration on a manual
//! clock ([`replay`]), scores each replay ([`score`]) and searches a grid of candidates on
//! all cores ([`search`]). `examples/tune.rs` prints the result and draws it.

pub mod health;
pub mod replay;
pub mod score;
pub mod search;

use std::thread;
use std::time::{Duration, Instant};

use breaker::recording::Recording;

use self::health::Health;
use self::replay::{Answer, Run};
use self::score::Scores;
use self::search::Spec;

/// What the tuner found on one recording.
#[derive(Clone, Debug)]
pub struct Tuning {
    pub health: Health,
    pub answers: Vec<Answer>,
    pub specs: Vec<Spec>,
    pub scores: Vec<Scores>,
    /// The configuration compared against: the one the recording's service runs.
    pub baseline: Spec,
    pub baseline_scores: Scores,
    /// The Pareto front, by cost.
    pub front: Vec<usize>,
    /// The recommended candidate; `None` to keep the baseline.
    pub recommended: Option<usize>,
    /// How long replaying and scoring every candidate took.
    pub elapsed: Duration,
    pub threads: usize,
}

impl Tuning {
    /// The recommended configuration, or the baseline when none beats it.
    pub fn recommendation(&self) -> Spec {
        self.recommended.map_or(self.baseline, |i| self.specs[i])
    }

    /// The scores of [`recommendation`](Self::recommendation).
    pub fn recommended_scores(&self) -> Scores {
        self.recommended
            .map_or(self.baseline_scores, |i| self.scores[i])
    }

    /// A replay of `spec`, to draw its states.
    pub fn replay(&self, spec: &Spec) -> Run {
        replay::replay(&self.answers, spec.config())
    }
}

/// Tunes against `baseline` on the grid of [`search::grid`], in buckets of one second, on
/// every core.
pub fn tune(recording: &Recording, baseline: Spec) -> Tuning {
    let threads = thread::available_parallelism().map_or(1, |n| n.get());
    let health = Health::estimate(recording, Duration::from_secs(1));
    let specs = search::grid(&health);
    tune_with(recording, baseline, health, specs, threads)
}

/// Tunes against `baseline` on the candidates `specs`, on `threads` threads.
pub fn tune_with(
    recording: &Recording,
    baseline: Spec,
    health: Health,
    specs: Vec<Spec>,
    threads: usize,
) -> Tuning {
    let answers = replay::answers(recording, &health);
    let started = Instant::now();
    let scores = search::evaluate(&health, &answers, &specs, threads);
    let elapsed = started.elapsed();
    let baseline_scores = score::score(
        &health,
        &answers,
        &replay::replay(&answers, baseline.config()),
    );
    let front = search::pareto(&scores);
    let recommended = search::recommend(&health, &scores, &baseline_scores);
    Tuning {
        health,
        answers,
        specs,
        scores,
        baseline,
        baseline_scores,
        front,
        recommended,
        elapsed,
        threads,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::time::Duration;

    use breaker::recording::{CallOutcome, RecordedCall};

    /// A call that starts at `ms` and takes `latency_ms`.
    pub(crate) fn call(ms: u64, latency_ms: u64, outcome: CallOutcome) -> RecordedCall {
        RecordedCall {
            start: Duration::from_millis(ms),
            latency: Duration::from_millis(latency_ms),
            outcome,
        }
    }
}
