//! The TOML form of overrides, and how one override changes a configuration.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::Action;
use crate::config::{ConfigKey, Field, DEFAULT_BUCKETS, DEFAULT_RAMP_STEP, DEFAULT_SLOW_RATE};
use crate::{config::ConfigError, config::Window, Config};

/// A problem and the line it is on; `None` when the text gave no position.
pub(super) type Located = (Option<usize>, String);

/// One table of the file, its values parsed and each with its line.
#[derive(Clone, Debug, Default)]
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
    throttle: Option<(usize, f64)>,
    throttle_max: Option<(usize, f64)>,
    throttle_window: Option<(usize, Duration)>,
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
    retry_backoff_max: Option<(usize, Duration)>,
    retry_budget: Option<(usize, f64)>,
    retry_floor: Option<(usize, u32)>,
    hedge: Option<(usize, Duration)>,
    hedges: Option<(usize, u32)>,
    max_concurrent: Option<(usize, u32)>,
    probe_timeout: Option<(usize, Duration)>,
    shadow: Option<(usize, bool)>,
    fleet: Option<(usize, bool)>,
    fleet_quorum: Option<(usize, u32)>,
    pushback_max: Option<(usize, Duration)>,
    max_open_percent: Option<(usize, u32)>,
    /// A manual action (`action`, or `open_for`: a period to start now), not a
    /// configuration key.
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
    throttle: Option<Spanned<f64>>,
    throttle_max: Option<Spanned<f64>>,
    throttle_window: Option<Spanned<String>>,
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
    retry_backoff_max: Option<Spanned<String>>,
    retry_budget: Option<Spanned<f64>>,
    retry_floor: Option<Spanned<u32>>,
    hedge: Option<Spanned<String>>,
    hedges: Option<Spanned<u32>>,
    max_concurrent: Option<Spanned<u32>>,
    probe_timeout: Option<Spanned<String>>,
    shadow: Option<Spanned<bool>>,
    fleet: Option<Spanned<bool>>,
    fleet_quorum: Option<Spanned<u32>>,
    pushback_max: Option<Spanned<String>>,
    max_open_percent: Option<Spanned<u32>>,
    action: Option<Spanned<RawAction>>,
    open_for: Option<Spanned<String>>,
}

/// `action = "force_open" | "disable" | "reset"`.
#[derive(Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum RawAction {
    ForceOpen,
    Disable,
    Reset,
}

impl RawAction {
    fn action(self) -> Action {
        match self {
            RawAction::ForceOpen => Action::ForceOpen,
            RawAction::Disable => Action::Disable,
            RawAction::Reset => Action::Reset,
        }
    }
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

/// Every table of `text`, in file order; or every value that could not be read, in line
/// order. TOML that does not parse, or a key or type the tables do not have, is one problem:
/// the parser stops at the first.
pub(super) fn entries(text: &str) -> Result<Vec<Override>, Vec<Located>> {
    let tables: BTreeMap<Spanned<String>, Spanned<Raw>> = toml::from_str(text).map_err(|e| {
        vec![(
            e.span().map(|s| line_of(text, s.start)),
            first_line(e.message()),
        )]
    })?;
    let mut tables: Vec<_> = tables.into_iter().collect();
    tables.sort_by_key(|(name, _)| name.span().start);
    let mut entries = Vec::with_capacity(tables.len());
    let mut problems = Vec::new();
    for (name, raw) in tables {
        match Override::new(text, name, raw.into_inner()) {
            Ok(entry) => entries.push(entry),
            Err(found) => problems.extend(found),
        }
    }
    if problems.is_empty() {
        Ok(entries)
    } else {
        problems.sort_by_key(|(line, _)| *line);
        Err(problems)
    }
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
    /// The table `name`, or every value of it that could not be read.
    fn new(text: &str, name: Spanned<String>, raw: Raw) -> Result<Self, Vec<Located>> {
        let line = line_of(text, name.span().start);
        let name = name.into_inner();
        let at = |s: std::ops::Range<usize>| line_of(text, s.start);
        let plain = |v: Option<Spanned<u32>>| v.map(|v| (at(v.span()), v.into_inner()));
        let number = |v: Option<Spanned<f64>>| v.map(|v| (at(v.span()), v.into_inner()));
        let mut problems = Vec::new();
        let window = match raw.window {
            None => None,
            Some(w) => {
                let line = at(w.span());
                match w.into_inner() {
                    RawWindow::Calls(n) => Some((line, WindowValue::Calls(n))),
                    RawWindow::Span(s) => match humantime::parse_duration(&s) {
                        Ok(d) => Some((line, WindowValue::Span(d))),
                        Err(e) => {
                            let message = format!(
                                "breaker {name:?}: window is neither a number of calls nor a \
                                 duration ({e}), got {s:?}"
                            );
                            problems.push((Some(line), message));
                            None
                        }
                    },
                }
            }
        };
        let open_for = match raw.open_for {
            None => None,
            Some(v) => {
                let line = at(v.span());
                if raw.action.is_some() {
                    let message = format!(
                        "breaker {name:?}: open_for and action cannot be used together: \
                         open_for opens the breaker for a period, action sets its state"
                    );
                    problems.push((Some(line), message));
                    None
                } else {
                    match humantime::parse_duration(v.get_ref()) {
                        Ok(d) => Some(Action::OpenFor(d)),
                        Err(e) => {
                            let message = format!(
                                "breaker {name:?}: open_for is not a duration ({e}), got {:?}",
                                v.get_ref()
                            );
                            problems.push((Some(line), message));
                            None
                        }
                    }
                }
            }
        };
        let mut duration = |field: Field, v: Option<Spanned<String>>| {
            let v = v?;
            let key = ConfigKey::of(field).name;
            let line = at(v.span());
            match humantime::parse_duration(v.get_ref()) {
                Ok(d) => Some((line, d)),
                Err(e) => {
                    let message = format!(
                        "breaker {name:?}: {key} is not a duration ({e}), got {:?}",
                        v.get_ref()
                    );
                    problems.push((Some(line), message));
                    None
                }
            }
        };
        let action = open_for.or(raw.action.map(|a| a.into_inner().action()));
        let entry = Self {
            line,
            window,
            buckets: plain(raw.buckets),
            min: plain(raw.min),
            rate: number(raw.rate),
            slow: duration(Field::SlowThreshold, raw.slow),
            slow_rate: number(raw.slow_rate),
            throttle: number(raw.throttle),
            throttle_max: number(raw.throttle_max),
            throttle_window: duration(Field::ThrottleWindow, raw.throttle_window),
            open: duration(Field::OpenFor, raw.open),
            probes: plain(raw.probes),
            successes: plain(raw.successes),
            backoff: number(raw.backoff),
            open_max: duration(Field::BackoffMax, raw.open_max),
            ramp: raw.ramp.map(|v| (at(v.span()), v.into_inner())),
            ramp_step: duration(Field::RampStep, raw.ramp_step),
            ramp_guard: number(raw.ramp_guard),
            timeout: duration(Field::Timeout, raw.timeout),
            retries: plain(raw.retries),
            retry_backoff: duration(Field::RetryBackoff, raw.retry_backoff),
            retry_backoff_max: duration(Field::RetryBackoffMax, raw.retry_backoff_max),
            retry_budget: number(raw.retry_budget),
            retry_floor: plain(raw.retry_floor),
            hedge: duration(Field::Hedge, raw.hedge),
            hedges: plain(raw.hedges),
            max_concurrent: plain(raw.max_concurrent),
            probe_timeout: duration(Field::ProbeTimeout, raw.probe_timeout),
            shadow: raw.shadow.map(|v| (at(v.span()), v.into_inner())),
            fleet: raw.fleet.map(|v| (at(v.span()), v.into_inner())),
            fleet_quorum: plain(raw.fleet_quorum),
            pushback_max: duration(Field::PushbackMax, raw.pushback_max),
            max_open_percent: plain(raw.max_open_percent),
            action,
            name,
        };
        if problems.is_empty() {
            Ok(entry)
        } else {
            Err(problems)
        }
    }

    /// The line of the value of the key that sets `field`, if the override sets it. Every
    /// field has its arm: a field added to the configuration fails to compile here until the
    /// overrides read its key.
    /// A table with only an action (or an open period), written by no file.
    pub(super) fn manual(name: &str, action: Action) -> Self {
        Self {
            name: name.to_owned(),
            line: 1,
            action: Some(action),
            ..Self::default()
        }
    }

    /// The configuration keys the table writes.
    pub(super) fn keys_set(&self) -> Vec<Field> {
        Field::ALL
            .into_iter()
            .filter(|&f| self.line_of_key(f).is_some())
            .collect()
    }

    pub(super) fn line_of_key(&self, field: Field) -> Option<usize> {
        match field {
            Field::Window => self.window.as_ref().map(|v| v.0),
            Field::Buckets => self.buckets.map(|v| v.0),
            Field::MinCalls => self.min.map(|v| v.0),
            Field::FailureRate => self.rate.map(|v| v.0),
            Field::SlowThreshold => self.slow.map(|v| v.0),
            Field::SlowRate => self.slow_rate.map(|v| v.0),
            Field::Throttle => self.throttle.map(|v| v.0),
            Field::ThrottleMax => self.throttle_max.map(|v| v.0),
            Field::ThrottleWindow => self.throttle_window.map(|v| v.0),
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
            Field::RetryBackoffMax => self.retry_backoff_max.map(|v| v.0),
            Field::RetryBudget => self.retry_budget.map(|v| v.0),
            Field::RetryFloor => self.retry_floor.map(|v| v.0),
            Field::Hedge => self.hedge.map(|v| v.0),
            Field::Hedges => self.hedges.map(|v| v.0),
            Field::MaxConcurrent => self.max_concurrent.map(|v| v.0),
            Field::ProbeTimeout => self.probe_timeout.map(|v| v.0),
            Field::Shadow => self.shadow.map(|v| v.0),
            Field::Fleet => self.fleet.map(|v| v.0),
            Field::FleetQuorum => self.fleet_quorum.map(|v| v.0),
            Field::PushbackMax => self.pushback_max.map(|v| v.0),
            Field::MaxOpenPercent => self.max_open_percent.map(|v| v.0),
        }
    }

    fn sets_config(&self) -> bool {
        Field::ALL
            .iter()
            .any(|&field| self.line_of_key(field).is_some())
    }

    /// `current` with this override's values, checked by the rules of
    /// `ConfigBuilder::build`; `None` if the override changes no value. Errors are every
    /// problem of the table, in line order, each at the line of the key at fault.
    pub(super) fn config(&self, current: &Config) -> Result<Option<Config>, Vec<(usize, String)>> {
        if !self.sets_config() {
            return Ok(None);
        }
        let mut problems = Vec::new();
        let mut needs = |field: Field| {
            let line = self.line_of_key(field).unwrap_or(self.line);
            let key = ConfigKey::of(field);
            let other = key.needs.map_or("another key", |n| n.what);
            problems.push((
                line,
                format!(
                    "{} needs {other}, which the breaker does not have",
                    key.name
                ),
            ));
        };
        let mut b = current.to_builder();

        let current_buckets = match current.window() {
            Window::Time { span, buckets } => Some((span, buckets)),
            Window::Count(_) => None,
        };
        match (&self.window, self.buckets) {
            (Some((_, WindowValue::Calls(n))), Some(_)) => {
                needs(Field::Buckets);
                b = b.count_window(*n);
            }
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
                None => needs(Field::Buckets),
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
                None => needs(Field::SlowRate),
            },
            (None, None) => {}
        }
        // `throttle_max` and `throttle_window` complete throttling: the breaker's, or this.
        let throttled = self.throttle.is_some() || current.throttling().is_some();
        if let Some((_, k)) = self.throttle {
            b = b.throttle(k);
        }
        if let Some((_, max)) = self.throttle_max {
            if throttled {
                b = b.throttle_max(max);
            } else {
                needs(Field::ThrottleMax);
            }
        }
        if let Some((_, span)) = self.throttle_window {
            if throttled {
                b = b.throttle_window(span);
            } else {
                needs(Field::ThrottleWindow);
            }
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
                None => needs(Field::BackoffFactor),
            },
            (None, Some((_, max))) => match backoff {
                Some(old) => b = b.open_backoff(old.factor, max),
                None => needs(Field::BackoffMax),
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
                None => needs(Field::RampStep),
            },
            (None, None) => {}
        }
        if let Some((_, factor)) = self.ramp_guard {
            if ramp.is_none() && self.ramp.is_none() {
                needs(Field::RampGuard);
            } else {
                b = b.ramp_latency_guard(factor);
            }
        }
        if let Some((_, limit)) = self.timeout {
            b = b.timeout(limit);
        }
        // The retries' backoff, budget and floor complete retries: the breaker's, or those
        // written here.
        let retries = self.retries.map_or(current.policy().retries(), |(_, n)| n);
        if let Some((_, n)) = self.retries {
            b = b.retries(n);
        }
        if let Some((_, base)) = self.retry_backoff {
            if retries == 0 {
                needs(Field::RetryBackoff);
            } else {
                b = b.retry_backoff(base);
            }
        }
        if let Some((_, ratio)) = self.retry_budget {
            if retries == 0 {
                needs(Field::RetryBudget);
            } else {
                b = b.retry_budget(ratio);
            }
        }
        if let Some((_, max)) = self.retry_backoff_max {
            if retries == 0 {
                needs(Field::RetryBackoffMax);
            } else {
                b = b.retry_backoff_max(max);
            }
        }
        if let Some((_, per_second)) = self.retry_floor {
            if retries == 0 {
                needs(Field::RetryFloor);
            } else {
                b = b.retry_floor(per_second);
            }
        }
        // `hedges` completes a hedge: the breaker's, or the one written here.
        if let Some((_, delay)) = self.hedge {
            b = b.hedge(delay);
        }
        if let Some((_, extra)) = self.hedges {
            if self.hedge.is_none() && current.policy().hedge().is_none() {
                needs(Field::Hedges);
            } else {
                b = b.hedges(extra);
            }
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
        // The quorum completes the fleet: the breaker's, or the one written here.
        let fleet = self.fleet.map_or(current.fleet(), |(_, on)| on);
        if let Some((_, on)) = self.fleet {
            b = b.fleet(on);
        }
        if let Some((_, quorum)) = self.fleet_quorum {
            if !fleet {
                needs(Field::FleetQuorum);
            } else {
                b = b.fleet_quorum(quorum);
            }
        }
        if let Some((_, max)) = self.pushback_max {
            b = b.pushback_max(max);
        }
        if let Some((_, percent)) = self.max_open_percent {
            b = b.max_open_percent(percent);
        }
        problems.extend(b.errors().iter().map(|e| {
            let field = e.field_id();
            // `successes` kept from the breaker is broken by the `probes` written here, and
            // `retry_backoff_max` by the `retry_backoff`.
            let by = match field {
                Field::Successes => Some(Field::Probes),
                Field::RetryBackoffMax => Some(Field::RetryBackoff),
                _ => None,
            };
            let line = self
                .line_of_key(field)
                .or_else(|| by.and_then(|by| self.line_of_key(by)))
                .unwrap_or(self.line);
            (line, message(e))
        }));
        if problems.is_empty() {
            b.build()
                .map(Some)
                .map_err(|e| vec![(self.line, message(&e))])
        } else {
            problems.sort_by_key(|(line, _)| *line);
            Err(problems)
        }
    }
}

/// The error as the operator wrote the key: `min must be at least 2, got 1`.
fn message(e: &ConfigError) -> String {
    e.by_key()
}

#[cfg(test)]
mod tests;
