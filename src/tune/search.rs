//! The grid of candidate configurations, searched on all cores.

use std::fmt::{self, Write as _};
use std::thread;
use std::time::Duration;

use breaker::Config;

use super::health::Health;
use super::replay::{replay, Answer};
use super::score::{score, Scores};

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
    /// The slow-call threshold in milliseconds (slow rate 0.5), if slow calls count.
    pub slow_ms: Option<u64>,
    /// Backoff 2.0 up to 60 s.
    pub backoff: bool,
    /// Ramp 25, 50, 100 in steps as long as the open duration.
    pub ramp: bool,
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
        slow_ms: None,
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
        if let Some(ms) = self.slow_ms {
            b = b.slow_calls(Duration::from_millis(ms), 0.5);
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
        if let Some(ms) = self.slow_ms {
            keys.push(("slow", format!("\"{ms}ms\"")));
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
/// 0.8, open 1 to 60 s, 1 or 3 probes, slow calls off or at 1.5 and 2 times the healthy p99,
/// backoff and ramp on or off.
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
    let p99_ms = health.healthy_p99.as_millis() as u64;
    let mut slow = vec![None];
    if p99_ms > 0 {
        slow.extend([Some(p99_ms * 3 / 2), Some(p99_ms * 2)]);
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
                    for &slow_ms in &slow {
                        for (backoff, ramp) in
                            [(false, false), (true, false), (false, true), (true, true)]
                        {
                            specs.push(Spec {
                                window,
                                min,
                                rate,
                                open_secs,
                                probes,
                                slow_ms,
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

/// Replays and scores every candidate, on `threads` threads.
pub fn evaluate(
    health: &Health,
    answers: &[Answer],
    specs: &[Spec],
    threads: usize,
) -> Vec<Scores> {
    let threads = threads.clamp(1, specs.len().max(1));
    let chunk = specs.len().div_ceil(threads).max(1);
    thread::scope(|s| {
        let workers: Vec<_> = specs
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(|spec| score(health, answers, &replay(answers, spec.config())))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a replay never panics"))
            .collect()
    })
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

/// The recommended candidate: the least cost among those that never open on a healthy
/// downstream and miss no outage, if the recording has an outage at all and one beats
/// `baseline`'s cost; `None` means keep the configuration you have.
pub fn recommend(health: &Health, scores: &[Scores], baseline: &Scores) -> Option<usize> {
    if health.outages.is_empty() {
        return None;
    }
    (0..scores.len())
        .filter(|&i| scores[i].false_opens == 0 && scores[i].missed == 0)
        .min_by_key(|&i| (scores[i].cost(), scores[i].flaps, i))
        .filter(|&i| scores[i].cost() < baseline.cost())
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
            slow_ms: Some(30),
            backoff: true,
            ramp: true,
        };
        assert_eq!(
            spec.attribute(),
            "#[circuit_breaker(window = \"10s\", min = 10, rate = 0.35, open = \"15s\", \
             probes = 1, slow = \"30ms\", backoff = 2.0, open_max = \"60s\", \
             ramp = [25, 50, 100], ramp_step = \"15s\")]"
        );
        assert_eq!(
            spec.toml("app::get_book"),
            "[\"app::get_book\"]\nwindow = \"10s\"\nmin = 10\nrate = 0.35\nopen = \"15s\"\n\
             probes = 1\nslow = \"30ms\"\nbackoff = 2.0\nopen_max = \"60s\"\n\
             ramp = [25, 50, 100]\nramp_step = \"15s\"\n"
        );
    }
}
