//! The TOML form of overrides, and how one override changes a configuration.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::Action;
use crate::{Config, Window};

/// A problem and the line it is on; `None` when the text gave no position.
pub(super) type Located = (Option<usize>, String);

/// One table of the file, its values parsed and each with its line.
#[derive(Clone, Debug)]
pub(super) struct Override {
    pub(super) name: String,
    /// The line of the table's name.
    pub(super) line: usize,
    window: Option<(usize, WindowValue)>,
    buckets: Option<(usize, u32)>,
    min: Option<(usize, u32)>,
    rate: Option<(usize, f64)>,
    slow: Option<(usize, Duration)>,
    slow_rate: Option<(usize, f64)>,
    open: Option<(usize, Duration)>,
    probes: Option<(usize, u32)>,
    successes: Option<(usize, u32)>,
    backoff: Option<(usize, f64)>,
    open_max: Option<(usize, Duration)>,
    ramp: Option<(usize, Vec<u32>)>,
    ramp_step: Option<(usize, Duration)>,
    ramp_guard: Option<(usize, f64)>,
    pub(super) action: Option<Action>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    window: Option<Spanned<RawWindow>>,
    buckets: Option<Spanned<u32>>,
    min: Option<Spanned<u32>>,
    rate: Option<Spanned<f64>>,
    slow: Option<Spanned<String>>,
    slow_rate: Option<Spanned<f64>>,
    open: Option<Spanned<String>>,
    probes: Option<Spanned<u32>>,
    successes: Option<Spanned<u32>>,
    backoff: Option<Spanned<f64>>,
    open_max: Option<Spanned<String>>,
    ramp: Option<Spanned<Vec<u32>>>,
    ramp_step: Option<Spanned<String>>,
    ramp_guard: Option<Spanned<f64>>,
    action: Option<Spanned<Action>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawWindow {
    Calls(u32),
    Span(String),
}

#[derive(Clone, Debug)]
enum WindowValue {
    Calls(u32),
    Span(Duration),
}

/// Every table of `text`, in file order.
pub(super) fn entries(text: &str) -> Result<Vec<Override>, Located> {
    let tables: BTreeMap<Spanned<String>, Spanned<Raw>> = toml::from_str(text).map_err(|e| {
        (
            e.span().map(|s| line_of(text, s.start)),
            first_line(e.message()),
        )
    })?;
    let mut tables: Vec<_> = tables.into_iter().collect();
    tables.sort_by_key(|(name, _)| name.span().start);
    tables
        .into_iter()
        .map(|(name, raw)| Override::new(text, name, raw.into_inner()))
        .collect()
}

fn line_of(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    text.as_bytes()[..offset]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

fn first_line(message: &str) -> String {
    message.lines().next().unwrap_or(message).trim().to_owned()
}

impl Override {
    fn new(text: &str, name: Spanned<String>, raw: Raw) -> Result<Self, Located> {
        let line = line_of(text, name.span().start);
        let name = name.into_inner();
        let at = |s: std::ops::Range<usize>| line_of(text, s.start);
        let plain = |v: Option<Spanned<u32>>| v.map(|v| (at(v.span()), v.into_inner()));
        let number = |v: Option<Spanned<f64>>| v.map(|v| (at(v.span()), v.into_inner()));
        let duration = |key: &str, v: Option<Spanned<String>>| -> Result<_, Located> {
            let Some(v) = v else { return Ok(None) };
            let line = at(v.span());
            match humantime::parse_duration(v.get_ref()) {
                Ok(d) => Ok(Some((line, d))),
                Err(e) => Err((
                    Some(line),
                    format!(
                        "breaker {name:?}: {key} is not a duration ({e}), got {:?}",
                        v.get_ref()
                    ),
                )),
            }
        };
        let window = match raw.window {
            None => None,
            Some(w) => {
                let line = at(w.span());
                Some(match w.into_inner() {
                    RawWindow::Calls(n) => (line, WindowValue::Calls(n)),
                    RawWindow::Span(s) => match humantime::parse_duration(&s) {
                        Ok(d) => (line, WindowValue::Span(d)),
                        Err(e) => {
                            let message = format!(
                                "breaker {name:?}: window is neither a number of calls nor a \
                                 duration ({e}), got {s:?}"
                            );
                            return Err((Some(line), message));
                        }
                    },
                })
            }
        };
        Ok(Self {
            line,
            window,
            buckets: plain(raw.buckets),
            min: plain(raw.min),
            rate: number(raw.rate),
            slow: duration("slow", raw.slow)?,
            slow_rate: number(raw.slow_rate),
            open: duration("open", raw.open)?,
            probes: plain(raw.probes),
            successes: plain(raw.successes),
            backoff: number(raw.backoff),
            open_max: duration("open_max", raw.open_max)?,
            ramp: raw.ramp.map(|v| (at(v.span()), v.into_inner())),
            ramp_step: duration("ramp_step", raw.ramp_step)?,
            ramp_guard: number(raw.ramp_guard),
            action: raw.action.map(Spanned::into_inner),
            name,
        })
    }

    /// The line of `key`'s value, if the override sets it.
    fn line_of_key(&self, key: &str) -> Option<usize> {
        match key {
            "window" => self.window.as_ref().map(|v| v.0),
            "buckets" => self.buckets.map(|v| v.0),
            "min" => self.min.map(|v| v.0),
            "rate" => self.rate.map(|v| v.0),
            "slow" => self.slow.map(|v| v.0),
            "slow_rate" => self.slow_rate.map(|v| v.0),
            "open" => self.open.map(|v| v.0),
            "probes" => self.probes.map(|v| v.0),
            "successes" => self.successes.map(|v| v.0),
            "backoff" => self.backoff.map(|v| v.0),
            "open_max" => self.open_max.map(|v| v.0),
            "ramp" => self.ramp.as_ref().map(|v| v.0),
            "ramp_step" => self.ramp_step.map(|v| v.0),
            "ramp_guard" => self.ramp_guard.map(|v| v.0),
            _ => None,
        }
    }

    fn sets_config(&self) -> bool {
        super::CONFIG_KEYS
            .iter()
            .any(|key| self.line_of_key(key).is_some())
    }

    /// `current` with this override's values, checked by `ConfigBuilder::build`; `None` if
    /// the override changes no value. Errors carry the line of the key at fault.
    pub(super) fn config(&self, current: &Config) -> Result<Option<Config>, (usize, String)> {
        if !self.sets_config() {
            return Ok(None);
        }
        let needs = |key: &str, other: &str| {
            let line = self.line_of_key(key).unwrap_or(self.line);
            Err((
                line,
                format!("{key} needs {other}, which the breaker does not have"),
            ))
        };
        let mut b = current.to_builder();

        let current_buckets = match current.window() {
            Window::Time { span, buckets } => Some((span, buckets)),
            Window::Count(_) => None,
        };
        match (&self.window, self.buckets) {
            (Some((_, WindowValue::Calls(n))), Some(_)) => {
                let _ = n;
                return needs("buckets", "a time window");
            }
            (Some((_, WindowValue::Calls(n))), None) => b = b.count_window(*n),
            (Some((_, WindowValue::Span(span))), buckets) => {
                let buckets = buckets
                    .map(|(_, n)| n)
                    .or(current_buckets.map(|(_, n)| n))
                    .unwrap_or(10);
                b = b.time_window(*span, buckets);
            }
            (None, Some((_, buckets))) => match current_buckets {
                Some((span, _)) => b = b.time_window(span, buckets),
                None => return needs("buckets", "a time window"),
            },
            (None, None) => {}
        }
        if let Some((_, min)) = self.min {
            b = b.min_calls(min);
        }
        if let Some((_, rate)) = self.rate {
            b = b.failure_rate(rate);
        }
        let slow = current.slow_calls();
        match (self.slow, self.slow_rate) {
            (Some((_, threshold)), rate) => {
                let rate = rate.map(|(_, r)| r).or(slow.map(|s| s.rate)).unwrap_or(0.5);
                b = b.slow_calls(threshold, rate);
            }
            (None, Some((_, rate))) => match slow {
                Some(s) => b = b.slow_calls(s.threshold, rate),
                None => return needs("slow_rate", "slow"),
            },
            (None, None) => {}
        }
        if let Some((_, open)) = self.open {
            b = b.open_for(open);
        }
        if let Some((_, probes)) = self.probes {
            b = b.probes(probes);
        }
        if let Some((_, successes)) = self.successes {
            b = b.successes(successes);
        }
        let backoff = current.open_backoff();
        match (self.backoff, self.open_max) {
            (Some((_, factor)), Some((_, max))) => b = b.open_backoff(factor, max),
            (Some((_, factor)), None) => match backoff {
                Some(old) => b = b.open_backoff(factor, old.max),
                None => return needs("backoff", "open_max"),
            },
            (None, Some((_, max))) => match backoff {
                Some(old) => b = b.open_backoff(old.factor, max),
                None => return needs("open_max", "backoff"),
            },
            (None, None) => {}
        }
        let ramp = current.ramp_up();
        match (&self.ramp, self.ramp_step) {
            (Some((_, percents)), step) => {
                let step = step
                    .map(|(_, s)| s)
                    .or(ramp.map(|r| r.step()))
                    .unwrap_or(Duration::from_secs(5));
                b = b.ramp_up(percents, step);
            }
            (None, Some((_, step))) => match ramp {
                Some(old) => b = b.ramp_up(old.percents(), step),
                None => return needs("ramp_step", "ramp"),
            },
            (None, None) => {}
        }
        if let Some((_, factor)) = self.ramp_guard {
            b = b.ramp_latency_guard(factor);
        }
        b.build().map(Some).map_err(|e| {
            let key = key_of(e.field());
            // `successes` kept from the breaker is broken by the `probes` written here.
            let line = self
                .line_of_key(key)
                .or_else(|| {
                    (key == "successes")
                        .then(|| self.line_of_key("probes"))
                        .flatten()
                })
                .unwrap_or(self.line);
            let text = e.to_string();
            let message = match text.strip_prefix(e.field()) {
                Some(rest) if rest.starts_with(' ') => format!("{key}{rest}"),
                _ => format!("{key}: {text}"),
            };
            (line, message)
        })
    }
}

/// The attribute's key of a builder field.
fn key_of(field: &str) -> &'static str {
    match field {
        "window" => "window",
        "buckets" => "buckets",
        "min_calls" => "min",
        "failure_rate" => "rate",
        "slow_calls.threshold" => "slow",
        "slow_calls.rate" => "slow_rate",
        "open_for" => "open",
        "probes" => "probes",
        "successes" => "successes",
        "open_backoff.factor" => "backoff",
        "open_backoff.max" => "open_max",
        "ramp_up" => "ramp",
        "ramp_up.step" => "ramp_step",
        _ => "ramp_guard",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The configuration the single table of `text` makes of `current`, or its error.
    fn applied(current: &Config, text: &str) -> Result<Option<Config>, (usize, String)> {
        let entries = entries(text).expect("the text parses");
        entries[0].config(current)
    }

    #[test]
    fn successes_override_sets_the_probe_successes_that_close() {
        let c = applied(&Config::default(), "[\"a\"]\nprobes = 5\nsuccesses = 2\n")
            .unwrap()
            .unwrap();
        assert_eq!((c.probes(), c.successes()), (5, 2));
        let c = applied(&c, "[\"a\"]\nsuccesses = 4\n").unwrap().unwrap();
        assert_eq!((c.probes(), c.successes()), (5, 4));
    }

    #[test]
    fn successes_never_set_follow_overridden_probes() {
        let c = applied(&Config::default(), "[\"a\"]\nprobes = 2\n")
            .unwrap()
            .unwrap();
        assert_eq!((c.probes(), c.successes()), (2, 2));
    }

    #[test]
    fn successes_override_follows_the_builder_rules_at_its_line() {
        let cases = [
            (
                "[\"a\"]\nsuccesses = 0\n",
                (2, "successes must be at least 1, got 0"),
            ),
            (
                "[\"a\"]\nprobes = 2\nsuccesses = 3\n",
                (3, "successes must be at most probes, got 3 with 2 probes"),
            ),
            (
                "[\"a\"]\nsuccesses = 4\n",
                (2, "successes must be at most probes, got 4 with 3 probes"),
            ),
        ];
        for (text, (line, message)) in cases {
            assert_eq!(
                applied(&Config::default(), text),
                Err((line, message.to_owned())),
                "{text}"
            );
        }
    }

    #[test]
    fn probes_below_kept_successes_are_refused_at_the_probes_line() {
        let current = Config::builder().probes(4).successes(3).build().unwrap();
        assert_eq!(
            applied(&current, "[\"a\"]\nrate = 0.5\nprobes = 2\n"),
            Err((
                3,
                "successes must be at most probes, got 3 with 2 probes".to_owned()
            ))
        );
    }

    #[test]
    fn min_override_below_two_is_refused() {
        assert_eq!(
            applied(&Config::default(), "[\"a\"]\nmin = 1\n"),
            Err((2, "min must be at least 2, got 1".to_owned()))
        );
        let c = applied(&Config::default(), "[\"a\"]\nwindow = 1\nmin = 1\n")
            .unwrap()
            .unwrap();
        assert_eq!((c.window(), c.min_calls()), (Window::Count(1), 1));
    }
}
