//! The attribute's configuration as the runtime will build it, judged at expansion by the
//! runtime's own rules (`breakerbox-rules`): each broken rule is one error at the value that
//! breaks it, in the attribute's words (`rate = 1.5: must be in (0, 1]`).

use std::time::Duration;

use breakerbox_rules::{
    Backoff, ConfigKey, Field, RampUp, Settings, SlowCalls, Value, Violation, DEFAULT_BUCKETS,
    DEFAULT_HEDGES, DEFAULT_RAMP_STEP, DEFAULT_RETRY_BACKOFF, DEFAULT_RETRY_BUDGET,
    DEFAULT_RETRY_FLOOR, DEFAULT_SLOW_RATE, TIME_WINDOW,
};
use proc_macro2::Span;
use syn::Error;

use crate::args::{Args, Window};

/// The values the runtime's builder gets: the keys written, completed by the defaults of the
/// keys they need.
pub(crate) fn settings(args: &Args) -> Settings {
    let mut s = Settings::DEFAULT;
    if let Some(window) = &args.window {
        s.window = match window.value {
            Window::Count(calls) => breakerbox_rules::Window::Count(calls),
            Window::Time(span) => breakerbox_rules::Window::Time {
                span,
                buckets: args.buckets.as_ref().map_or(DEFAULT_BUCKETS, |b| b.value),
            },
        };
    }
    s.min_calls = args.min.as_ref().map(|m| m.value);
    if let Some(rate) = &args.rate {
        s.failure_rate = rate.value;
    }
    s.slow_calls = args.slow.as_ref().map(|slow| SlowCalls {
        threshold: slow.value,
        rate: args
            .slow_rate
            .as_ref()
            .map_or(DEFAULT_SLOW_RATE, |r| r.value),
    });
    if let Some(k) = &args.throttle {
        s.throttle = Some(k.value);
        s.throttle_max = args
            .throttle_max
            .as_ref()
            .map_or(s.throttle_max, |m| m.value);
        s.throttle_window = args
            .throttle_window
            .as_ref()
            .map_or(s.throttle_window, |w| w.value);
    }
    if let Some(open) = &args.open {
        s.open_for = open.value;
    }
    if let Some(probes) = &args.probes {
        s.probes = probes.value;
    }
    s.successes = args.successes.as_ref().map(|n| n.value);
    if let (Some(factor), Some(max)) = (&args.backoff, &args.open_max) {
        s.backoff = Some(Backoff {
            factor: factor.value,
            max: max.value,
        });
    }
    s.ramp_up = args.ramp.as_ref().map(|ramp| {
        let step = args
            .ramp_step
            .as_ref()
            .map_or(DEFAULT_RAMP_STEP, |s| s.value);
        RampUp::new(&ramp.value, step)
    });
    s.ramp_guard = args.ramp_guard.as_ref().map(|g| g.value);
    s.timeout = args.timeout.as_ref().map(|t| t.value);
    if let Some(retries) = &args.retries {
        s.retries = retries.value;
        s.retry_backoff = args
            .retry_backoff
            .as_ref()
            .map_or(DEFAULT_RETRY_BACKOFF, |d| d.value);
        s.retry_backoff_max = args.retry_backoff_max.as_ref().map(|d| d.value);
        s.retry_budget = args
            .retry_budget
            .as_ref()
            .map_or(DEFAULT_RETRY_BUDGET, |r| r.value);
        s.retry_floor = args
            .retry_floor
            .as_ref()
            .map_or(DEFAULT_RETRY_FLOOR, |f| f.value);
    }
    if let Some(hedge) = &args.hedge {
        s.hedge = Some(hedge.value);
        s.hedges = args.hedges.as_ref().map_or(DEFAULT_HEDGES, |n| n.value);
    }
    s.max_concurrent = args.max_concurrent.as_ref().map(|n| n.value);
    s.probe_timeout = args.probe_timeout.as_ref().map(|t| t.value);
    s.shadow = args.shadow.as_ref().is_some_and(|s| s.value);
    s.fleet = args.fleet.as_ref().is_some_and(|f| f.value);
    s.fleet_quorum = args.fleet_quorum.as_ref().map(|q| q.value);
    if let Some(max) = &args.pushback_max {
        s.pushback_max = max.value;
    }
    s.max_open_percent = args.max_open_percent.as_ref().map(|p| p.value);
    s
}

/// Checks every field's rules, reporting each broken one at its key. A key refused for the
/// key it needs (`ramp_guard` without `ramp`) is reported once, by that rule; a field measured
/// against a broken one (`min` against `window = 0`) is not reported again.
pub(crate) fn check(args: &Args, settings: &Settings, errors: &mut Vec<Error>) {
    for field in Field::ALL {
        if !needs_met(args, ConfigKey::of(field)) {
            continue;
        }
        if let Some(measure) = field.measured_against() {
            if settings.check(measure).is_err() {
                continue;
            }
        }
        if let Err(violation) = settings.check(field) {
            errors.push(error(args, &violation));
        }
    }
}

/// Whether `key`, if written, has what it needs: the key it completes, or a time window.
pub(crate) fn needs_met(args: &Args, key: &ConfigKey) -> bool {
    match key.needs {
        Some(_) if args.written(key.name).is_none() => true,
        Some(needs) if needs.what == TIME_WINDOW => {
            matches!(&args.window, Some(w) if matches!(w.value, Window::Time(_)))
        }
        Some(needs) => args.written(needs.what).is_some(),
        None => true,
    }
}

/// `key = value: rule`, at the value; a value measured against another key names it too
/// (`min = 30: must be at most the count window (window = 20)`).
fn error(args: &Args, violation: &Violation) -> Error {
    let key = ConfigKey::of(violation.field);
    let (span, said) = match args.written(key.name) {
        Some(written) => (written.span, format!("{} = {}", key.name, written.text)),
        // A default broke the rule: told at the key it completes (`buckets` at `window`).
        None => {
            let completed = key.needs.map(|n| match n.what {
                TIME_WINDOW => "window",
                other => other,
            });
            let span = completed
                .and_then(|k| args.written(k))
                .map_or_else(Span::call_site, |w| w.span);
            let value = text(&violation.value);
            (span, format!("{} = {value} (the default)", key.name))
        }
    };
    let mut message = format!("{said}: {}", violation.rule);
    if let Some((other, value)) = violation.against() {
        let other = ConfigKey::of(other).name;
        match args.written(other) {
            Some(written) => message += &format!(" ({other} = {})", written.text),
            None => message += &format!(" ({other} = {}, the default)", text(&value)),
        }
    }
    Error::new(span, message)
}

/// A value as the attribute writes it.
fn text(value: &Value) -> String {
    let duration = |d: &Duration| format!("\"{}\"", humantime::format_duration(*d));
    match value {
        Value::U32(n) => n.to_string(),
        Value::F64(v) => v.to_string(),
        Value::Duration(d) => duration(d),
        Value::MinOverWindow { min, .. } => min.to_string(),
        Value::MaxUnderOpen { max, .. } | Value::MaxUnderBase { max, .. } => duration(max),
        Value::SuccessesOverProbes { successes, .. } => successes.to_string(),
        Value::Ramp(percents) => format!("{:?}", percents.as_slice()),
    }
}
