//! A configuration as the attribute's keys, `window = 20, min = 10, rate = 0.4, ...`: the
//! `# config:` line of a recording, which the replay tuner compares its candidates with.

use std::fmt;
use std::time::Duration;

use breakerbox_rules::{ConfigKey, Field, Settings, DEFAULT_BUCKETS, KEYS};

use crate::{config::ConfigBuilder, config::Window, Config};

/// The keys of `#[circuit_breaker(...)]` that configure a breaker as `config`: the window,
/// `min`, `rate`, `open` and `probes` always, every other key where it differs from the
/// default, in the order the docs list the keys.
///
/// ```
/// use std::time::Duration;
/// use breakerbox::recording::{config_keys, parse_config_keys};
/// use breakerbox::Config;
///
/// let config = Config::builder()
///     .failure_rate(0.4)
///     .open_for(Duration::from_secs(3))
///     .probes(2)
///     .timeout(Duration::from_millis(150))
///     .retries(1)
///     .build()?;
/// let keys = config_keys(&config);
/// assert_eq!(
///     keys,
///     r#"window = 20, min = 10, rate = 0.4, open = "3s", probes = 2, timeout = "150ms", retries = 1"#
/// );
/// assert_eq!(parse_config_keys(&keys)?, config);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn config_keys(config: &Config) -> String {
    let keys: Vec<String> = config_key_values(config)
        .iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect();
    keys.join(", ")
}

/// The keys of [`config_keys`] and their values as the attribute writes them, in order.
///
/// ```
/// use breakerbox::recording::config_key_values;
/// use breakerbox::Config;
///
/// let keys = config_key_values(&Config::default());
/// assert_eq!(keys[3], ("open", "\"5s\"".to_owned()));
/// ```
pub fn config_key_values(config: &Config) -> Vec<(&'static str, String)> {
    let d = Settings::DEFAULT;
    let policy = config.policy();
    let mut keys: Vec<(&'static str, String)> = Vec::new();
    match config.window() {
        Window::Count(n) => keys.push(("window", n.to_string())),
        Window::Time { span, buckets } => {
            keys.push(("window", quoted(span)));
            if buckets != DEFAULT_BUCKETS {
                keys.push(("buckets", buckets.to_string()));
            }
        }
    }
    keys.push(("min", config.min_calls().to_string()));
    keys.push(("rate", format!("{:?}", config.failure_rate())));
    if let Some(slow) = config.slow_calls() {
        keys.push(("slow", quoted(slow.threshold)));
        keys.push(("slow_rate", format!("{:?}", slow.rate)));
    }
    if let Some(throttling) = config.throttling() {
        keys.push(("throttle", format!("{:?}", throttling.factor())));
        keys.push(("throttle_max", format!("{:?}", throttling.max())));
        keys.push(("throttle_window", quoted(throttling.window())));
    }
    keys.push(("open", quoted(config.open_for())));
    keys.push(("probes", config.probes().to_string()));
    if config.successes() != config.probes() {
        keys.push(("successes", config.successes().to_string()));
    }
    if let Some(backoff) = config.open_backoff() {
        keys.push(("backoff", format!("{:?}", backoff.factor)));
        keys.push(("open_max", quoted(backoff.max)));
    }
    if let Some(ramp) = config.ramp_up() {
        let percents: Vec<String> = ramp.percents().iter().map(u32::to_string).collect();
        keys.push(("ramp", format!("[{}]", percents.join(", "))));
        keys.push(("ramp_step", quoted(ramp.step())));
    }
    if let Some(guard) = config.ramp_latency_guard() {
        keys.push(("ramp_guard", format!("{guard:?}")));
    }
    if let Some(timeout) = policy.timeout() {
        keys.push(("timeout", quoted(timeout)));
    }
    if policy.retries() > 0 {
        keys.push(("retries", policy.retries().to_string()));
        if policy.retry_backoff() != d.retry_backoff {
            keys.push(("retry_backoff", quoted(policy.retry_backoff())));
        }
        let default_max = ConfigBuilder::new()
            .retries(policy.retries())
            .retry_backoff(policy.retry_backoff())
            .build()
            .map(|c| c.policy().retry_backoff_max());
        if default_max != Ok(policy.retry_backoff_max()) {
            keys.push(("retry_backoff_max", quoted(policy.retry_backoff_max())));
        }
        if policy.retry_budget() != d.retry_budget {
            keys.push(("retry_budget", format!("{:?}", policy.retry_budget())));
        }
        if policy.retry_floor() != d.retry_floor {
            keys.push(("retry_floor", policy.retry_floor().to_string()));
        }
    }
    if let Some(hedge) = policy.hedge() {
        keys.push(("hedge", quoted(hedge)));
        if policy.hedges() != d.hedges {
            keys.push(("hedges", policy.hedges().to_string()));
        }
    }
    if let Some(calls) = config.max_concurrent() {
        keys.push(("max_concurrent", calls.to_string()));
    }
    // A probe times out with the call's timeout unless it has its own.
    let probe_timeout = policy
        .timeout()
        .unwrap_or(Config::default().probe_timeout());
    if config.probe_timeout() != probe_timeout {
        keys.push(("probe_timeout", quoted(config.probe_timeout())));
    }
    if config.shadow() {
        keys.push(("shadow", "true".into()));
    }
    if config.fleet() {
        keys.push(("fleet", "true".into()));
        let quorum = ConfigBuilder::new().fleet(true).build();
        if quorum.map(|c| c.fleet_quorum()) != Ok(config.fleet_quorum()) {
            keys.push(("fleet_quorum", config.fleet_quorum().to_string()));
        }
    }
    if config.pushback_max() != d.pushback_max {
        keys.push(("pushback_max", quoted(config.pushback_max())));
    }
    if let Some(percent) = config.max_open_percent() {
        keys.push(("max_open_percent", percent.to_string()));
    }
    keys
}

/// A duration as the attribute writes it, in its largest whole unit: `"3s"`, `"150ms"`.
fn quoted(d: Duration) -> String {
    let nanos = d.as_nanos();
    let (value, unit) = if nanos == 0 {
        (0, "s")
    } else if nanos.is_multiple_of(1_000_000_000) {
        (nanos / 1_000_000_000, "s")
    } else if nanos.is_multiple_of(1_000_000) {
        (nanos / 1_000_000, "ms")
    } else if nanos.is_multiple_of(1_000) {
        (nanos / 1_000, "us")
    } else {
        (nanos, "ns")
    };
    format!("\"{value}{unit}\"")
}

/// A configuration line could not be read: the key at fault, if one is, and the rule.
///
/// ```
/// use breakerbox::recording::parse_config_keys;
///
/// let err = parse_config_keys("window = 20, rate = 1.5").unwrap_err();
/// assert_eq!(err.to_string(), "rate = 1.5: must be in (0, 1]");
/// assert_eq!(err.key(), Some("rate"));
/// let err = parse_config_keys("rates = 0.5").unwrap_err();
/// assert_eq!(err.to_string(), "rates = 0.5: unknown key; did you mean `rate`?");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigLineError {
    key: Option<String>,
    written: String,
    message: String,
}

impl ConfigLineError {
    fn new(written: &str, key: Option<&str>, message: impl Into<String>) -> Self {
        Self {
            key: key.map(str::to_owned),
            written: written.trim().to_owned(),
            message: message.into(),
        }
    }

    /// The key at fault, as written; `None` when the line is broken outside a key.
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }
}

impl fmt::Display for ConfigLineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.written, self.message)
    }
}

impl std::error::Error for ConfigLineError {}

/// One `key = value` of the line, as written.
struct Entry<'a> {
    written: &'a str,
    key: &'a str,
    value: &'a str,
}

impl Entry<'_> {
    fn fail(&self, message: impl Into<String>) -> ConfigLineError {
        ConfigLineError::new(self.written, Some(self.key), message)
    }

    fn count(&self) -> Result<u32, ConfigLineError> {
        self.value
            .parse()
            .map_err(|_| self.fail("must be a whole number, like `10`"))
    }

    fn rate(&self) -> Result<f64, ConfigLineError> {
        self.value
            .parse::<f64>()
            .ok()
            .filter(|r| r.is_finite())
            .ok_or_else(|| self.fail("must be a number, like `0.5`"))
    }

    fn flag(&self) -> Result<bool, ConfigLineError> {
        match self.value {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(self.fail("must be `true` or `false`")),
        }
    }

    fn duration(&self) -> Result<Duration, ConfigLineError> {
        let text = self
            .value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .ok_or_else(|| self.fail("must be a quoted duration, like `\"5s\"`"))?;
        humantime::parse_duration(text).map_err(|e| self.fail(format!("{e}")))
    }

    fn percents(&self) -> Result<Vec<u32>, ConfigLineError> {
        let inner = self
            .value
            .strip_prefix('[')
            .and_then(|v| v.strip_suffix(']'))
            .ok_or_else(|| self.fail("must be a list of percentages, like `[25, 50, 100]`"))?;
        inner
            .split(',')
            .map(|p| p.trim().parse())
            .collect::<Result<_, _>>()
            .map_err(|_| self.fail("must be a list of percentages, like `[25, 50, 100]`"))
    }
}

/// The entries of `line`, split at the commas outside brackets and quotes.
fn entries(line: &str) -> Result<Vec<Entry<'_>>, ConfigLineError> {
    let mut pieces = Vec::new();
    let (mut depth, mut quoted, mut from) = (0i32, false, 0);
    for (i, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '[' if !quoted => depth += 1,
            ']' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                pieces.push(&line[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    pieces.push(&line[from..]);
    pieces
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .map(|written| {
            let (key, value) = written.split_once('=').ok_or_else(|| {
                ConfigLineError::new(written, None, "must be `key = value`, like `rate = 0.5`")
            })?;
            Ok(Entry {
                written,
                key: key.trim(),
                value: value.trim(),
            })
        })
        .collect()
}

/// The configuration that the attribute keys of `line` give (`window = 20, rate = 0.4,
/// open = "3s"`, the keys of `#[circuit_breaker(...)]` and of [`config_keys`]), from the
/// defaults, checked by [`ConfigBuilder::build`].
///
/// # Errors
///
/// A [`ConfigLineError`] naming the key and its rule: an unknown or repeated key, a value of
/// the wrong kind, or a rule of the configuration broken.
pub fn parse_config_keys(line: &str) -> Result<Config, ConfigLineError> {
    let entries = entries(line)?;
    let mut seen: Vec<&str> = Vec::new();
    for e in &entries {
        let Some(key) = ConfigKey::named(e.key) else {
            let near = KEYS
                .iter()
                .map(|k| k.name)
                .min_by_key(|k| strsim::levenshtein(k, e.key))
                .filter(|k| strsim::levenshtein(k, e.key) <= 2);
            return Err(e.fail(match near {
                Some(near) => format!("unknown key; did you mean `{near}`?"),
                None => format!(
                    "unknown key; the keys are {}",
                    breakerbox_rules::key_names().join(", ")
                ),
            }));
        };
        if seen.contains(&key.name) {
            return Err(e.fail(format!("duplicate key `{}`", key.name)));
        }
        seen.push(key.name);
    }
    let get = |field: Field| entries.iter().find(|e| e.key == ConfigKey::of(field).name);
    let mut b = ConfigBuilder::new();
    let buckets = get(Field::Buckets).map(Entry::count).transpose()?;
    if let Some(e) = get(Field::Window) {
        b = if e.value.starts_with('"') {
            b.time_window(e.duration()?, buckets.unwrap_or(DEFAULT_BUCKETS))
        } else {
            b.count_window(e.count()?)
        };
    } else if buckets.is_some() {
        return Err(needs(get(Field::Buckets)));
    }
    if let Some(e) = get(Field::MinCalls) {
        b = b.min_calls(e.count()?);
    }
    if let Some(e) = get(Field::FailureRate) {
        b = b.failure_rate(e.rate()?);
    }
    let slow_rate = get(Field::SlowRate).map(Entry::rate).transpose()?;
    match get(Field::SlowThreshold) {
        Some(e) => b = b.slow_calls(e.duration()?, slow_rate.unwrap_or(0.5)),
        None if slow_rate.is_some() => return Err(needs(get(Field::SlowRate))),
        None => {}
    }
    if let Some(e) = get(Field::Throttle) {
        b = b.throttle(e.rate()?);
    }
    for field in [Field::ThrottleMax, Field::ThrottleWindow] {
        match get(field) {
            Some(e) if get(Field::Throttle).is_none() => return Err(needs(Some(e))),
            Some(e) if field == Field::ThrottleMax => b = b.throttle_max(e.rate()?),
            Some(e) => b = b.throttle_window(e.duration()?),
            None => {}
        }
    }
    if let Some(e) = get(Field::OpenFor) {
        b = b.open_for(e.duration()?);
    }
    if let Some(e) = get(Field::Probes) {
        b = b.probes(e.count()?);
    }
    if let Some(e) = get(Field::Successes) {
        b = b.successes(e.count()?);
    }
    match (get(Field::BackoffFactor), get(Field::BackoffMax)) {
        (Some(f), Some(m)) => b = b.open_backoff(f.rate()?, m.duration()?),
        (Some(e), None) | (None, Some(e)) => return Err(needs(Some(e))),
        (None, None) => {}
    }
    let step = get(Field::RampStep).map(Entry::duration).transpose()?;
    match get(Field::Ramp) {
        Some(e) => {
            let step = step.unwrap_or(breakerbox_rules::DEFAULT_RAMP_STEP);
            b = b.ramp_up(&e.percents()?, step);
        }
        None if step.is_some() => return Err(needs(get(Field::RampStep))),
        None => {}
    }
    if let Some(e) = get(Field::RampGuard) {
        if get(Field::Ramp).is_none() {
            return Err(needs(Some(e)));
        }
        b = b.ramp_latency_guard(e.rate()?);
    }
    if let Some(e) = get(Field::Timeout) {
        b = b.timeout(e.duration()?);
    }
    let retries = get(Field::Retries).map(Entry::count).transpose()?;
    if let Some(n) = retries {
        b = b.retries(n);
    }
    for field in [
        Field::RetryBackoff,
        Field::RetryBackoffMax,
        Field::RetryBudget,
        Field::RetryFloor,
    ] {
        let Some(e) = get(field) else { continue };
        if retries.unwrap_or(0) == 0 {
            return Err(needs(Some(e)));
        }
        b = match field {
            Field::RetryBackoff => b.retry_backoff(e.duration()?),
            Field::RetryBackoffMax => b.retry_backoff_max(e.duration()?),
            Field::RetryBudget => b.retry_budget(e.rate()?),
            _ => b.retry_floor(e.count()?),
        };
    }
    if let Some(e) = get(Field::Hedge) {
        b = b.hedge(e.duration()?);
    }
    if let Some(e) = get(Field::Hedges) {
        if get(Field::Hedge).is_none() {
            return Err(needs(Some(e)));
        }
        b = b.hedges(e.count()?);
    }
    if let Some(e) = get(Field::MaxConcurrent) {
        b = b.max_concurrent(e.count()?);
    }
    if let Some(e) = get(Field::ProbeTimeout) {
        b = b.probe_timeout(e.duration()?);
    }
    if let Some(e) = get(Field::Shadow) {
        b = b.shadow(e.flag()?);
    }
    let fleet = get(Field::Fleet).map(Entry::flag).transpose()?;
    if let Some(on) = fleet {
        b = b.fleet(on);
    }
    if let Some(e) = get(Field::FleetQuorum) {
        if fleet != Some(true) {
            return Err(needs(Some(e)));
        }
        b = b.fleet_quorum(e.count()?);
    }
    if let Some(e) = get(Field::PushbackMax) {
        b = b.pushback_max(e.duration()?);
    }
    if let Some(e) = get(Field::MaxOpenPercent) {
        b = b.max_open_percent(e.count()?);
    }
    b.build().map_err(|err| {
        let field = Field::ALL
            .into_iter()
            .find(|f| f.name() == err.field())
            .unwrap_or(Field::Window);
        match get(field) {
            Some(e) => e.fail(err.rule()),
            None => ConfigLineError::new(
                &format!("{} (not written)", ConfigKey::of(field).name),
                Some(ConfigKey::of(field).name),
                err.to_string(),
            ),
        }
    })
}

/// The error of a key written without the key it completes.
fn needs(e: Option<&Entry<'_>>) -> ConfigLineError {
    let e = e.expect("called with the key at fault");
    let key = ConfigKey::named(e.key).expect("a known key");
    let needs = key.needs.expect("a key that completes another");
    e.fail(format!("`{}` needs {}{}", e.key, needs.what, needs.hint))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_configured_key_round_trips_through_the_line() {
        let config = Config::builder()
            .time_window(Duration::from_secs(30), 6)
            .min_calls(12)
            .failure_rate(0.35)
            .slow_calls(Duration::from_micros(1500), 0.8)
            .throttle(1.5)
            .throttle_max(0.8)
            .throttle_window(Duration::from_secs(90))
            .open_for(Duration::from_millis(2500))
            .probes(3)
            .successes(2)
            .open_backoff(2.0, Duration::from_secs(60))
            .ramp_up(&[25, 50, 100], Duration::from_secs(4))
            .ramp_latency_guard(3.0)
            .timeout(Duration::from_millis(150))
            .retries(2)
            .retry_backoff(Duration::from_millis(40))
            .retry_budget(0.1)
            .retry_floor(5)
            .hedge(Duration::from_millis(50))
            .hedges(2)
            .max_concurrent(64)
            .pushback_max(Duration::from_secs(30))
            .max_open_percent(50)
            .build()
            .unwrap();
        let line = config_keys(&config);
        assert_eq!(
            line,
            "window = \"30s\", buckets = 6, min = 12, rate = 0.35, slow = \"1500us\", \
             slow_rate = 0.8, throttle = 1.5, throttle_max = 0.8, throttle_window = \"90s\", \
             open = \"2500ms\", probes = 3, successes = 2, backoff = 2.0, \
             open_max = \"60s\", ramp = [25, 50, 100], ramp_step = \"4s\", ramp_guard = 3.0, \
             timeout = \"150ms\", retries = 2, retry_backoff = \"40ms\", retry_budget = 0.1, \
             retry_floor = 5, hedge = \"50ms\", hedges = 2, max_concurrent = 64, \
             pushback_max = \"30s\", max_open_percent = 50"
        );
        assert_eq!(parse_config_keys(&line), Ok(config));
    }

    #[test]
    fn the_defaults_are_the_five_keys_of_the_trip_rule() {
        let line = config_keys(&Config::default());
        assert_eq!(
            line,
            "window = 20, min = 10, rate = 0.5, open = \"5s\", probes = 3"
        );
        assert_eq!(parse_config_keys(&line), Ok(Config::default()));
        assert_eq!(parse_config_keys(""), Ok(Config::default()));
    }

    #[test]
    fn a_broken_line_names_the_key_and_its_rule() {
        let err = |line: &str| parse_config_keys(line).unwrap_err().to_string();
        assert_eq!(
            err("window = 20, min = 30"),
            "min = 30: must be at most the count window"
        );
        assert_eq!(
            err("rate = 0.4, rate = 0.5"),
            "rate = 0.5: duplicate key `rate`"
        );
        assert_eq!(
            err("open = 3"),
            "open = 3: must be a quoted duration, like `\"5s\"`"
        );
        assert_eq!(
            err("probes"),
            "probes: must be `key = value`, like `rate = 0.5`"
        );
        assert_eq!(
            err("slow_rate = 0.5"),
            "slow_rate = 0.5: `slow_rate` needs slow, the duration above which a call is \
             slow, like `slow = \"800ms\"`"
        );
        assert_eq!(
            err("min = \"ten\""),
            "min = \"ten\": must be a whole number, like `10`"
        );
    }
}
