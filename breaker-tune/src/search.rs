//! The grid of candidate configurations, searched on all cores.

use std::fmt::{self, Write as _};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

use breakerbox::{Config, Outcome};

use super::health::Health;
use super::replay::{replay, Answer, Schedule};
use super::score::{score, Scores, Truth};

/// The window of a candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowSpec {
    /// The last `n` completed calls.
    Count(u32),
    /// The calls completed in the last `secs` seconds, in 10 buckets.
    Time(u64),
}

/// A candidate configuration, in the attribute's terms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spec {
    pub window: WindowSpec,
    pub min: u32,
    pub rate: f64,
    pub open_secs: u64,
    pub probes: u32,
    /// The slow-call rule, if slow calls count.
    pub slow: Option<Slow>,
    /// Backoff 2.0 up to 60 s.
    pub backoff: bool,
    /// Ramp 25, 50, 100 in steps as long as the open duration.
    pub ramp: bool,
    /// Adaptive throttling's K, if the candidate throttles (at the default `throttle_max`
    /// and `throttle_window`).
    pub throttle: Option<f64>,
}

/// Slow calls count: a call slower than `threshold` is slow, and the breaker opens when
/// `rate` of the window's calls are slow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slow {
    pub threshold: Duration,
    pub rate: f64,
}

/// The longest OPEN when backoff is on.
const OPEN_MAX_SECS: u64 = 60;

impl Spec {
    /// The defaults of `Config::default()`.
    pub const DEFAULT: Spec = Spec {
        window: WindowSpec::Count(20),
        min: 10,
        rate: 0.5,
        open_secs: 5,
        probes: 3,
        slow: None,
        backoff: false,
        ramp: false,
        throttle: None,
    };

    /// The runtime configuration.
    pub fn config(&self) -> Config {
        let mut b = Config::builder()
            .min_calls(self.min)
            .failure_rate(self.rate)
            .open_for(Duration::from_secs(self.open_secs))
            .probes(self.probes);
        b = match self.window {
            WindowSpec::Count(n) => b.count_window(n),
            WindowSpec::Time(secs) => b.time_window(Duration::from_secs(secs), 10),
        };
        if let Some(slow) = self.slow {
            b = b.slow_calls(slow.threshold, slow.rate);
        }
        if self.backoff {
            b = b.open_backoff(2.0, Duration::from_secs(OPEN_MAX_SECS.max(self.open_secs)));
        }
        if self.ramp {
            b = b.ramp_up(&[25, 50, 100], Duration::from_secs(self.open_secs));
        }
        if let Some(k) = self.throttle {
            b = b.throttle(k);
        }
        b.build()
            .expect("every candidate of the grid is a valid configuration")
    }

    /// The attribute's keys, as `window = 20, min = 10, ...`.
    pub fn keys(&self) -> Vec<(&'static str, String)> {
        let mut keys = vec![
            (
                "window",
                match self.window {
                    WindowSpec::Count(n) => n.to_string(),
                    WindowSpec::Time(secs) => format!("\"{secs}s\""),
                },
            ),
            ("min", self.min.to_string()),
            ("rate", format!("{:?}", self.rate)),
            ("open", format!("\"{}s\"", self.open_secs)),
            ("probes", self.probes.to_string()),
        ];
        if let Some(slow) = self.slow {
            keys.push(("slow", format!("\"{}\"", duration(slow.threshold))));
            keys.push(("slow_rate", format!("{:?}", slow.rate)));
        }
        if self.backoff {
            keys.push(("backoff", "2.0".into()));
            keys.push((
                "open_max",
                format!("\"{}s\"", OPEN_MAX_SECS.max(self.open_secs)),
            ));
        }
        if self.ramp {
            keys.push(("ramp", "[25, 50, 100]".into()));
            keys.push(("ramp_step", format!("\"{}s\"", self.open_secs)));
        }
        if let Some(k) = self.throttle {
            keys.push(("throttle", format!("{k:?}")));
        }
        keys
    }

    /// The attribute line, ready to paste.
    pub fn attribute(&self) -> String {
        let keys: Vec<_> = self
            .keys()
            .iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect();
        format!("#[circuit_breaker({})]", keys.join(", "))
    }

    /// The override block for `name`, ready to paste into the overrides file.
    pub fn toml(&self, name: &str) -> String {
        let mut out = format!("[{name:?}]\n");
        for (k, v) in self.keys() {
            let _ = writeln!(out, "{k} = {v}");
        }
        out
    }
}

/// A duration as the attribute writes it: whole milliseconds as `ms`, finer as `us`.
fn duration(d: Duration) -> String {
    let micros = d.as_micros();
    if micros.is_multiple_of(1000) {
        format!("{}ms", micros / 1000)
    } else {
        format!("{micros}us")
    }
}

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keys: Vec<_> = self
            .keys()
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        f.write_str(&keys.join(" "))
    }
}

/// The grid: count windows of 10 to 200 calls and time windows of 5 to 60 s, rates 0.2 to
/// 0.8, open 1 to 60 s, 1 or 3 probes, slow calls off, at 1.5 times the healthy p99 with a
/// slow rate of 0.5, or at 3 times with 0.8 (to the microsecond), backoff and ramp on or off:
/// 5,400 candidates; then each of those without slow calls, backoff or ramp throttled with K
/// of 1.5, 2 or 3 (`throttle`): 1,350 more.
pub fn grid(health: &Health) -> Vec<Spec> {
    let windows = [
        WindowSpec::Count(10),
        WindowSpec::Count(20),
        WindowSpec::Count(50),
        WindowSpec::Count(100),
        WindowSpec::Count(200),
        WindowSpec::Time(5),
        WindowSpec::Time(10),
        WindowSpec::Time(30),
        WindowSpec::Time(60),
    ];
    let p99_us = health.healthy_p99.as_micros() as u64;
    let mut slow = vec![None];
    if p99_us > 0 {
        slow.extend([
            Some(Slow {
                threshold: Duration::from_micros(p99_us * 3 / 2),
                rate: 0.5,
            }),
            Some(Slow {
                threshold: Duration::from_micros(p99_us * 3),
                rate: 0.8,
            }),
        ]);
    }
    let mut specs = Vec::new();
    for window in windows {
        let min = match window {
            WindowSpec::Count(n) => n / 2,
            WindowSpec::Time(_) => 10,
        };
        for rate in [0.2, 0.35, 0.5, 0.65, 0.8] {
            for open_secs in [1, 5, 15, 30, 60] {
                for probes in [1, 3] {
                    for &slow in &slow {
                        for (backoff, ramp) in
                            [(false, false), (true, false), (false, true), (true, true)]
                        {
                            specs.push(Spec {
                                window,
                                min,
                                rate,
                                open_secs,
                                probes,
                                slow,
                                backoff,
                                ramp,
                                throttle: None,
                            });
                        }
                    }
                }
            }
        }
    }
    let plain: Vec<Spec> = specs
        .iter()
        .filter(|s| s.slow.is_none() && !s.backoff && !s.ramp)
        .copied()
        .collect();
    for k in THROTTLE_FACTORS {
        specs.extend(plain.iter().map(|s| Spec {
            throttle: Some(k),
            ..*s
        }));
    }
    specs
}

/// The K of the grid's throttled candidates.
pub const THROTTLE_FACTORS: [f64; 3] = [1.5, 2.0, 3.0];

/// What every replay of one trace needs.
#[derive(Clone, Copy, Debug)]
pub struct Trace<'a> {
    pub health: &'a Health,
    pub answers: &'a [Answer],
    pub schedule: &'a Schedule,
    pub truth: &'a Truth,
}

impl Trace<'_> {
    /// Replays and scores one configuration.
    pub fn score(&self, config: &Config) -> Scores {
        let run = replay(self.answers, self.schedule, config.clone());
        score(self.health, self.truth, self.answers, &run, config.window())
    }
}

/// Replays and scores every candidate, on `threads` threads taking candidates one at a time.
///
/// A candidate whose slow-call rule never decides anything is scored as the same one
/// without the rule, once for both (see [`redundant`]).
pub fn evaluate(trace: Trace<'_>, specs: &[Spec], threads: usize) -> Vec<Scores> {
    let redundant = redundant(trace.answers);
    let plain = |spec: &Spec| {
        Spec {
            slow: None,
            ..*spec
        }
        .to_string()
    };
    let mut index = std::collections::HashMap::new();
    for (i, spec) in specs.iter().enumerate().filter(|(_, s)| s.slow.is_none()) {
        index.entry(spec.to_string()).or_insert(i);
    }
    // The candidate each one is scored as: itself, or the same without its redundant rule.
    let same_as: Vec<usize> = specs
        .iter()
        .enumerate()
        .map(|(i, spec)| match redundant(spec) {
            true => index.get(&plain(spec)).copied().unwrap_or(i),
            false => i,
        })
        .collect();
    let distinct: Vec<usize> = (0..specs.len()).filter(|&i| same_as[i] == i).collect();

    let threads = threads.clamp(1, distinct.len().max(1));
    let next = AtomicUsize::new(0);
    let mut scores = vec![Scores::default(); specs.len()];
    thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&i) = distinct.get(k) else {
                            return done;
                        };
                        done.push((i, trace.score(&specs[i].config())));
                    }
                })
            })
            .collect();
        for worker in workers {
            for (i, s) in worker.join().expect("a replay never panics") {
                scores[i] = s;
            }
        }
    });
    for (i, &j) in same_as.iter().enumerate() {
        scores[i] = scores[j];
    }
    scores
}

/// Whether a candidate's slow-call rule is redundant on `answers`: a breaker with it decides
/// every call as the same breaker without it.
///
/// A rule counts a call slow when it takes longer than its threshold, and only a success or
/// a failure is counted (an ignored call never is). If no such call is slow, the rule never
/// counts one. If only failures are, every slow call is a failure too: a probe or a ramp
/// call that is slow has failed already, and a window's slow calls are never more than its
/// failures, so with a slow rate at or above the failure rate the slow calls reach their
/// rate only when the failures have reached theirs (`slow / calls >= slow_rate` gives
/// `failures / calls >= slow / calls >= slow_rate >= rate`).
pub fn redundant(answers: &[Answer]) -> impl Fn(&Spec) -> bool {
    let slowest = |outcome: Outcome| {
        answers
            .iter()
            .filter(|a| a.outcome == outcome)
            .map(|a| a.latency)
            .max()
    };
    let (success, failure) = (slowest(Outcome::Success), slowest(Outcome::Failure));
    move |spec: &Spec| {
        let Some(slow) = spec.slow else {
            return false;
        };
        let slow_calls = |slowest: Option<Duration>| slowest.is_some_and(|l| l > slow.threshold);
        !slow_calls(success) && (!slow_calls(failure) || slow.rate >= spec.rate)
    }
}

/// The candidates no other candidate dominates, by cost; of candidates that score alike,
/// the first of the grid (the one with the fewest keys).
pub fn pareto(scores: &[Scores]) -> Vec<usize> {
    let mut front: Vec<usize> = (0..scores.len())
        .filter(|&i| !scores.iter().any(|other| other.dominates(&scores[i])))
        .collect();
    front.sort_by_key(|&i| (scores[i].cost(), scores[i].ranked(), i));
    front.dedup_by_key(|&mut i| scores[i]);
    front
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{answers, replay};
    use breakerbox::recording::{CallOutcome, RecordedCall};

    /// A minute of calls every 20 ms, 5 to 15 ms long, 1% failing, except from 20 s to 40 s:
    /// every call fails, in `sick` (slower than every slow-call threshold).
    fn failing_slowly(sick: Duration) -> Vec<Answer> {
        let mut rng = fastrand::Rng::with_seed(11);
        let calls: Vec<_> = (0..3000u64)
            .map(|i| {
                let start = Duration::from_millis(i * 20);
                let (latency, failed) = match start.as_secs() {
                    20..40 => (sick, true),
                    _ => (
                        Duration::from_micros(rng.u64(5_000..15_000)),
                        rng.u32(0..100) == 0,
                    ),
                };
                RecordedCall::new(
                    start,
                    latency,
                    CallOutcome::Completed(if failed {
                        Outcome::Failure
                    } else {
                        Outcome::Success
                    }),
                )
            })
            .collect();
        answers(&calls, &Health::estimate(&calls, Duration::from_secs(1)))
    }

    #[test]
    fn a_slow_rule_only_failures_reach_decides_as_the_failure_rate_when_its_rate_is_higher() {
        let answers = failing_slowly(Duration::from_secs(1));
        let calls: Vec<_> = answers
            .iter()
            .map(|a| RecordedCall::new(a.start, a.latency, CallOutcome::Completed(a.outcome)))
            .collect();
        let specs = grid(&Health::estimate(&calls, Duration::from_secs(1)));
        let schedule = Schedule::new(&answers);
        let redundant = redundant(&answers);
        let plain = |spec: &Spec| Spec {
            slow: None,
            ..*spec
        };
        let (mut alike, mut apart) = (0, 0);
        for spec in specs.iter().filter(|s| s.slow.is_some()) {
            let with = replay(&answers, &schedule, spec.config());
            let without = replay(&answers, &schedule, plain(spec).config());
            if redundant(spec) {
                assert_eq!(with, without, "{spec}");
                alike += 1;
            } else if with != without {
                apart += 1;
            }
        }
        // Slow rate 0.5 at failure rates 0.2, 0.35 and 0.5, and 0.8 at every failure rate,
        // for each of the 360 other choices.
        assert_eq!(alike, 360 * (3 + 5));
        // Where the slow rate is below the failure rate, the slow calls open the breaker
        // sooner; but for a window of 60 s, of which the 20 s outage never fills half.
        assert_eq!(apart, 360 * 2 - 40 * 2);
    }

    #[test]
    fn a_slow_rule_a_success_reaches_is_never_redundant() {
        let mut answers = failing_slowly(Duration::from_secs(1));
        let spec = |rate: f64, threshold_ms: u64| Spec {
            rate,
            slow: Some(Slow {
                threshold: Duration::from_millis(threshold_ms),
                rate: 0.8,
            }),
            ..Spec::DEFAULT
        };
        let before = redundant(&answers);
        // A second's failures: slow at 500 ms, or never at 2 s; successes never are.
        assert!(before(&spec(0.5, 500)) && before(&spec(0.5, 2000)));
        assert!(!before(&spec(0.9, 500)) && before(&spec(0.9, 2000)));
        assert!(!before(&Spec::DEFAULT));
        answers[10].latency = Duration::from_millis(600);
        let after = redundant(&answers);
        assert!(!after(&spec(0.5, 500)) && after(&spec(0.5, 2000)));
    }

    #[test]
    fn the_default_spec_is_the_default_config() {
        assert_eq!(Spec::DEFAULT.config(), Config::default());
        assert_eq!(
            Spec::DEFAULT.attribute(),
            "#[circuit_breaker(window = 20, min = 10, rate = 0.5, open = \"5s\", probes = 3)]"
        );
    }

    #[test]
    fn a_spec_reads_as_an_attribute_and_as_an_override() {
        let spec = Spec {
            window: WindowSpec::Time(10),
            min: 10,
            rate: 0.35,
            open_secs: 15,
            probes: 1,
            slow: Some(Slow {
                threshold: Duration::from_micros(1500),
                rate: 0.5,
            }),
            backoff: true,
            ramp: true,
            throttle: Some(2.0),
        };
        assert_eq!(
            spec.attribute(),
            "#[circuit_breaker(window = \"10s\", min = 10, rate = 0.35, open = \"15s\", \
             probes = 1, slow = \"1500us\", slow_rate = 0.5, backoff = 2.0, open_max = \"60s\", \
             ramp = [25, 50, 100], ramp_step = \"15s\", throttle = 2.0)]"
        );
        assert_eq!(
            spec.toml("app::get_book"),
            "[\"app::get_book\"]\nwindow = \"10s\"\nmin = 10\nrate = 0.35\nopen = \"15s\"\n\
             probes = 1\nslow = \"1500us\"\nslow_rate = 0.5\nbackoff = 2.0\nopen_max = \"60s\"\n\
             ramp = [25, 50, 100]\nramp_step = \"15s\"\nthrottle = 2.0\n"
        );
    }
}
