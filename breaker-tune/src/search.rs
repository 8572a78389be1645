//! The grid of candidate configurations, searched on all cores.

use std::fmt::{self, Write as _};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

use breaker::Config;

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
/// 5,400 candidates.
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
                            });
                        }
                    }
                }
            }
        }
    }
    specs
}

/// What every replay of one trace needs.
#[derive(Clone, Copy, Debug)]
pub struct Trace<'a> {
    pub health: &'a Health,
    pub answers: &'a [Answer],
    pub schedule: &'a Schedule,
    pub truth: &'a Truth,
}

impl Trace<'_> {
    /// Replays and scores one candidate.
    pub fn score(&self, spec: &Spec) -> Scores {
        let run = replay(self.answers, self.schedule, spec.config());
        score(self.health, self.truth, self.answers, &run, spec.window)
    }
}

/// Replays and scores every candidate, on `threads` threads taking candidates one at a time.
///
/// A slow-call rule whose threshold no call of the trace reaches never counts a call, so
/// its candidate replays as the same one without it: it is scored once for both.
pub fn evaluate(trace: Trace<'_>, specs: &[Spec], threads: usize) -> Vec<Scores> {
    let slowest = trace
        .answers
        .iter()
        .map(|a| a.latency)
        .max()
        .unwrap_or_default();
    let inert = |spec: &Spec| spec.slow.is_some_and(|s| s.threshold > slowest);
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
    // The candidate each one is scored as: itself, or the same without its inert rule.
    let same_as: Vec<usize> = specs
        .iter()
        .enumerate()
        .map(|(i, spec)| match inert(spec) {
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
                        done.push((i, trace.score(&specs[i])));
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
        };
        assert_eq!(
            spec.attribute(),
            "#[circuit_breaker(window = \"10s\", min = 10, rate = 0.35, open = \"15s\", \
             probes = 1, slow = \"1500us\", slow_rate = 0.5, backoff = 2.0, open_max = \"60s\", \
             ramp = [25, 50, 100], ramp_step = \"15s\")]"
        );
        assert_eq!(
            spec.toml("app::get_book"),
            "[\"app::get_book\"]\nwindow = \"10s\"\nmin = 10\nrate = 0.35\nopen = \"15s\"\n\
             probes = 1\nslow = \"1500us\"\nslow_rate = 0.5\nbackoff = 2.0\nopen_max = \"60s\"\n\
             ramp = [25, 50, 100]\nramp_step = \"15s\"\n"
        );
    }
}
