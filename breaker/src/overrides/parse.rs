//! The TOML form of overrides, and how one override changes a configuration.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::Action;
use crate::config::{ConfigKey, Field, DEFAULT_BUCKETS, DEFAULT_RAMP_STEP, DEFAULT_SLOW_RATE};
use crate::{Config, ConfigError, Window};

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
    timeout: Option<(usize, Duration)>,
    retries: Option<(usize, u32)>,
    retry_backoff: Option<(usize, Duration)>,
    retry_budget: Option<(usize, f64)>,
    max_concurrent: Option<(usize, u32)>,
    probe_timeout: Option<(usize, Duration)>,
    shadow: Option<(usize, bool)>,
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
    timeout: Option<Spanned<String>>,
    retries: Option<Spanned<u32>>,
    retry_backoff: Option<Spanned<String>>,
    retry_budget: Option<Spanned<f64>>,
    max_concurrent: Option<Spanned<u32>>,
    probe_timeout: Option<Spanned<String>>,
    shadow: Option<Spanned<bool>>,
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
        let duration = |field: Field, v: Option<Spanned<String>>| -> Result<_, Located> {
            let Some(v) = v else { return Ok(None) };
            let key = ConfigKey::of(field).name;
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
            slow: duration(Field::SlowThreshold, raw.slow)?,
            slow_rate: number(raw.slow_rate),
            open: duration(Field::OpenFor, raw.open)?,
            probes: plain(raw.probes),
            successes: plain(raw.successes),
            backoff: number(raw.backoff),
            open_max: duration(Field::BackoffMax, raw.open_max)?,
            ramp: raw.ramp.map(|v| (at(v.span()), v.into_inner())),
            ramp_step: duration(Field::RampStep, raw.ramp_step)?,
            ramp_guard: number(raw.ramp_guard),
            timeout: duration(Field::Timeout, raw.timeout)?,
            retries: plain(raw.retries),
            retry_backoff: duration(Field::RetryBackoff, raw.retry_backoff)?,
            retry_budget: number(raw.retry_budget),
            max_concurrent: plain(raw.max_concurrent),
            probe_timeout: duration(Field::ProbeTimeout, raw.probe_timeout)?,
            shadow: raw.shadow.map(|v| (at(v.span()), v.into_inner())),
            action: raw.action.map(Spanned::into_inner),
            name,
        })
    }

    /// The line of the value of the key that sets `field`, if the override sets it. Every
    /// field has its arm: a field added to the configuration fails to compile here until the
    /// overrides read its key.
    pub(super) fn line_of_key(&self, field: Field) -> Option<usize> {
        match field {
            Field::Window => self.window.as_ref().map(|v| v.0),
            Field::Buckets => self.buckets.map(|v| v.0),
            Field::MinCalls => self.min.map(|v| v.0),
            Field::FailureRate => self.rate.map(|v| v.0),
            Field::SlowThreshold => self.slow.map(|v| v.0),
            Field::SlowRate => self.slow_rate.map(|v| v.0),
            Field::OpenFor => self.open.map(|v| v.0),
            Field::Probes => self.probes.map(|v| v.0),
            Field::Successes => self.successes.map(|v| v.0),
            Field::BackoffFactor => self.backoff.map(|v| v.0),
            Field::BackoffMax => self.open_max.map(|v| v.0),
            Field::Ramp => self.ramp.as_ref().map(|v| v.0),
            Field::RampStep => self.ramp_step.map(|v| v.0),
            Field::RampGuard => self.ramp_guard.map(|v| v.0),
            Field::Timeout => self.timeout.map(|v| v.0),
            Field::Retries => self.retries.map(|v| v.0),
            Field::RetryBackoff => self.retry_backoff.map(|v| v.0),
            Field::RetryBudget => self.retry_budget.map(|v| v.0),
            Field::MaxConcurrent => self.max_concurrent.map(|v| v.0),
            Field::ProbeTimeout => self.probe_timeout.map(|v| v.0),
            Field::Shadow => self.shadow.map(|v| v.0),
        }
    }

    fn sets_config(&self) -> bool {
        Field::ALL
            .iter()
            .any(|&field| self.line_of_key(field).is_some())
    }

    /// `current` with this override's values, checked by `ConfigBuilder::build`; `None` if
    /// the override changes no value. Errors carry the line of the key at fault.
    pub(super) fn config(&self, current: &Config) -> Result<Option<Config>, (usize, String)> {
        if !self.sets_config() {
            return Ok(None);
        }
        let needs = |field: Field| {
            let line = self.line_of_key(field).unwrap_or(self.line);
            let key = ConfigKey::of(field);
            let other = key.needs.unwrap_or("another key");
            Err((
                line,
                format!(
                    "{} needs {other}, which the breaker does not have",
                    key.name
                ),
            ))
        };
        let mut b = current.to_builder();

        let current_buckets = match current.window() {
            Window::Time { span, buckets } => Some((span, buckets)),
            Window::Count(_) => None,
        };
        match (&self.window, self.buckets) {
            (Some((_, WindowValue::Calls(_))), Some(_)) => return needs(Field::Buckets),
            (Some((_, WindowValue::Calls(n))), None) => b = b.count_window(*n),
            (Some((_, WindowValue::Span(span))), buckets) => {
                let buckets = buckets
                    .map(|(_, n)| n)
                    .or(current_buckets.map(|(_, n)| n))
                    .unwrap_or(DEFAULT_BUCKETS);
                b = b.time_window(*span, buckets);
            }
            (None, Some((_, buckets))) => match current_buckets {
                Some((span, _)) => b = b.time_window(span, buckets),
                None => return needs(Field::Buckets),
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
                let rate = rate.map(|(_, r)| r).or(slow.map(|s| s.rate));
                let rate = rate.unwrap_or(DEFAULT_SLOW_RATE);
                b = b.slow_calls(threshold, rate);
            }
            (None, Some((_, rate))) => match slow {
                Some(s) => b = b.slow_calls(s.threshold, rate),
                None => return needs(Field::SlowRate),
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
                None => return needs(Field::BackoffFactor),
            },
            (None, Some((_, max))) => match backoff {
                Some(old) => b = b.open_backoff(old.factor, max),
                None => return needs(Field::BackoffMax),
            },
            (None, None) => {}
        }
        let ramp = current.ramp_up();
        match (&self.ramp, self.ramp_step) {
            (Some((_, percents)), step) => {
                let step = step
                    .map(|(_, s)| s)
                    .or(ramp.map(|r| r.step()))
                    .unwrap_or(DEFAULT_RAMP_STEP);
                b = b.ramp_up(percents, step);
            }
            (None, Some((_, step))) => match ramp {
                Some(old) => b = b.ramp_up(old.percents(), step),
                None => return needs(Field::RampStep),
            },
            (None, None) => {}
        }
        if let Some((_, factor)) = self.ramp_guard {
            b = b.ramp_latency_guard(factor);
        }
        if let Some((_, limit)) = self.timeout {
            b = b.timeout(limit);
        }
        // The retries' backoff and budget complete retries: the breaker's, or those written here.
        let retries = self.retries.map_or(current.policy().retries(), |(_, n)| n);
        if let Some((_, n)) = self.retries {
            b = b.retries(n);
        }
        if let Some((_, base)) = self.retry_backoff {
            if retries == 0 {
                return needs(Field::RetryBackoff);
            }
            b = b.retry_backoff(base);
        }
        if let Some((_, ratio)) = self.retry_budget {
            if retries == 0 {
                return needs(Field::RetryBudget);
            }
            b = b.retry_budget(ratio);
        }
        if let Some((_, calls)) = self.max_concurrent {
            b = b.max_concurrent(calls);
        }
        if let Some((_, limit)) = self.probe_timeout {
            b = b.probe_timeout(limit);
        }
        if let Some((_, shadow)) = self.shadow {
            b = b.shadow(shadow);
        }
        b.build().map(Some).map_err(|e| {
            let field = e.field_id();
            // `successes` kept from the breaker is broken by the `probes` written here.
            let line = self
                .line_of_key(field)
                .or_else(|| {
                    (field == Field::Successes)
                        .then(|| self.line_of_key(Field::Probes))
                        .flatten()
                })
                .unwrap_or(self.line);
            (line, message(&e))
        })
    }
}

/// The error as the operator wrote the key: a rule that opens with the builder's name of the
/// field (`min_calls must be at least 2`) is told with the key's (`min must be ...`); any
/// other is prefixed by the key.
fn message(e: &ConfigError) -> String {
    let key = ConfigKey::of(e.field_id()).name;
    let text = e.to_string();
    match text.strip_prefix(e.field()) {
        Some(rest) if rest.starts_with(' ') => format!("{key}{rest}"),
        _ => format!("{key}: {text}"),
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

    /// Each text, applied to the defaults, is refused with its line and message.
    fn assert_refused(cases: impl IntoIterator<Item = (&'static str, (usize, &'static str))>) {
        for (text, (line, message)) in cases {
            assert_eq!(
                applied(&Config::default(), text),
                Err((line, message.to_owned())),
                "{text}"
            );
        }
    }

    /// A valid TOML value of each key, for a breaker that has every key it needs.
    fn example(key: &str) -> &'static str {
        match key {
            "window" => "\"20s\"",
            "buckets" => "20",
            "min" => "4",
            "rate" => "0.25",
            "slow" => "\"2s\"",
            "slow_rate" => "0.75",
            "open" => "\"20s\"",
            "probes" => "4",
            "successes" => "2",
            "backoff" => "3.0",
            "open_max" => "\"2m\"",
            "ramp" => "[50, 100]",
            "ramp_step" => "\"7s\"",
            "ramp_guard" => "4.0",
            "timeout" => "\"800ms\"",
            "retries" => "2",
            "retry_backoff" => "\"50ms\"",
            "retry_budget" => "0.1",
            "max_concurrent" => "64",
            "probe_timeout" => "\"30s\"",
            "shadow" => "true",
            _ => panic!("no example value of `{key}`: add one, so the test below covers it"),
        }
    }

    #[test]
    fn every_key_of_the_table_is_read_and_changes_the_configuration() {
        let full = Config::builder()
            .time_window(Duration::from_secs(10), 10)
            .slow_calls(Duration::from_secs(1), 0.5)
            .open_backoff(2.0, Duration::from_secs(60))
            .ramp_up(&[10, 100], Duration::from_secs(5))
            .ramp_latency_guard(3.0)
            .retries(1)
            .build()
            .unwrap();
        for key in crate::config::KEYS {
            let text = format!("[\"a\"]\n{} = {}\n", key.name, example(key.name));
            let entry = &entries(&text).expect("every key of the table parses")[0];
            assert_eq!(entry.line_of_key(key.field), Some(2), "{text}");
            let changed = entry.config(&full).unwrap().expect("a value changes");
            assert_ne!(changed, full, "{text}");
        }
    }

    #[test]
    fn every_needs_rule_of_the_table_refuses_the_key_alone() {
        let mut rules = 0;
        for key in crate::config::KEYS {
            let Some(needs) = key.needs else { continue };
            let text = format!("[\"a\"]\n{} = {}\n", key.name, example(key.name));
            let message = format!(
                "{} needs {needs}, which the breaker does not have",
                key.name
            );
            assert_eq!(applied(&Config::default(), &text), Err((2, message)));
            rules += 1;
        }
        assert_eq!(rules, 7);
    }

    #[test]
    fn keys_left_out_take_the_defaults_of_the_table() {
        use crate::config::KeyDefault;
        fn buckets(c: &Config) -> KeyDefault {
            match c.window() {
                Window::Time { buckets, .. } => KeyDefault::Count(buckets),
                Window::Count(_) => panic!("a time window was written"),
            }
        }
        fn slow_rate(c: &Config) -> KeyDefault {
            KeyDefault::Rate(c.slow_calls().expect("slow was written").rate)
        }
        fn ramp_step(c: &Config) -> KeyDefault {
            KeyDefault::Span(c.ramp_up().expect("ramp was written").step())
        }
        fn retry_backoff(c: &Config) -> KeyDefault {
            KeyDefault::Span(c.policy().retry_backoff())
        }
        fn retry_budget(c: &Config) -> KeyDefault {
            KeyDefault::Rate(c.policy().retry_budget())
        }
        let mut defaults = 0;
        for key in crate::config::KEYS {
            let Some(default) = key.default else { continue };
            let (written, taken): (&str, fn(&Config) -> KeyDefault) = match key.name {
                "buckets" => ("window = \"20s\"", buckets),
                "slow_rate" => ("slow = \"2s\"", slow_rate),
                "ramp_step" => ("ramp = [50, 100]", ramp_step),
                "retry_backoff" => ("retries = 2", retry_backoff),
                "retry_budget" => ("retries = 2", retry_budget),
                _ => panic!("no case for the default of `{}`: add one", key.name),
            };
            let text = format!("[\"a\"]\n{written}\n");
            let c = applied(&Config::default(), &text).unwrap().unwrap();
            assert_eq!(taken(&c), default, "{text}");
            defaults += 1;
        }
        assert_eq!(defaults, 5);
    }

    #[test]
    fn call_policy_overrides_follow_the_builder_rules_at_their_line() {
        let cases = [
            (
                "[\"a\"]\nretries = 11\n",
                (2, "retries must be at most 10, got 11"),
            ),
            (
                "[\"a\"]\nretries = 1\nretry_budget = 1.5\n",
                (3, "retry_budget must be in [0, 1], got 1.5"),
            ),
            (
                "[\"a\"]\nretries = 1\nretry_backoff = \"61s\"\n",
                (3, "retry_backoff must be at most 60s, got 61s"),
            ),
            (
                "[\"a\"]\ntimeout = \"0s\"\n",
                (2, "timeout must be greater than zero, got 0ns"),
            ),
            (
                "[\"a\"]\nprobe_timeout = \"0s\"\n",
                (2, "probe_timeout must be greater than zero, got 0ns"),
            ),
            (
                "[\"a\"]\nmax_concurrent = 0\n",
                (2, "max_concurrent must be at least 1, got 0"),
            ),
        ];
        assert_refused(cases);
    }

    #[test]
    fn retry_backoff_and_budget_complete_the_retries_the_breaker_has() {
        let retried = Config::builder().retries(2).build().unwrap();
        let c = applied(
            &retried,
            "[\"a\"]\nretry_budget = 0.5\nretry_backoff = \"1s\"\n",
        )
        .unwrap()
        .unwrap();
        let policy = c.policy();
        assert_eq!(
            (
                policy.retries(),
                policy.retry_budget(),
                policy.retry_backoff()
            ),
            (2, 0.5, Duration::from_secs(1))
        );
        let c = applied(
            &Config::default(),
            "[\"a\"]\nshadow = true\nmax_concurrent = 8\n",
        )
        .unwrap()
        .unwrap();
        assert_eq!((c.shadow(), c.max_concurrent()), (true, Some(8)));
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
        assert_refused(cases);
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
