//! The README's tables say what the code says: its key table lists every key of the
//! attribute with the default the runtime takes, and its features table every feature of
//! `breaker/Cargo.toml`.

use crate::support::markdown;

use std::time::Duration;

use breakerbox::{config::Window, Config};
use breakerbox_rules::{ConfigKey, Field, KeyDefault, KEYS};
use markdown::{code, section, table_rows, workspace_file};

/// A duration as a key takes it: `"20ms"`, `"5s"`, `"5m"`.
fn span(d: Duration) -> String {
    let ms = d.as_millis();
    match ms {
        _ if ms > 0 && ms.is_multiple_of(60_000) => format!("\"{}m\"", ms / 60_000),
        _ if ms.is_multiple_of(1000) => format!("\"{}s\"", ms / 1000),
        _ => format!("\"{ms}ms\""),
    }
}

/// A behaviour not used until its key is written.
fn off<T>(value: Option<T>) -> String {
    assert!(value.is_none(), "a default of an optional behaviour");
    "off".to_owned()
}

/// The default of a configuration key as the table shows it: the value the rules take when
/// the key it completes is written, or else the value of `Config::default()`.
fn config_default(key: &ConfigKey) -> String {
    match key.default {
        Some(KeyDefault::Count(n)) => return n.to_string(),
        Some(KeyDefault::Rate(r)) => return r.to_string(),
        Some(KeyDefault::Span(d)) => return span(d),
        None => {}
    }
    let config = Config::default();
    let policy = config.policy();
    match key.field {
        Field::Window => match config.window() {
            Window::Count(n) => n.to_string(),
            window => panic!("the default window is a count, not {window:?}"),
        },
        Field::MinCalls => config.min_calls().to_string(),
        Field::FailureRate => config.failure_rate().to_string(),
        Field::SlowThreshold => off(config.slow_calls()),
        Field::Throttle => off(config.throttling()),
        Field::OpenFor => span(config.open_for()),
        Field::Probes => config.probes().to_string(),
        Field::Successes => config.successes().to_string(),
        Field::BackoffFactor | Field::BackoffMax => off(config.open_backoff()),
        Field::Ramp => off(config.ramp_up()),
        Field::RampGuard => off(config.ramp_latency_guard()),
        Field::Timeout => off(policy.timeout()),
        Field::Retries => policy.retries().to_string(),
        Field::Hedge => off(policy.hedge()),
        Field::MaxConcurrent => off(config.max_concurrent()),
        Field::ProbeTimeout => span(config.probe_timeout()),
        Field::Shadow => config.shadow().to_string(),
        Field::Fleet => config.fleet().to_string(),
        Field::PushbackMax => span(config.pushback_max()),
        Field::MaxOpenPercent => off(config.max_open_percent()),
        Field::Buckets
        | Field::SlowRate
        | Field::ThrottleMax
        | Field::ThrottleWindow
        | Field::RampStep
        | Field::RetryBackoff
        | Field::RetryBackoffMax
        | Field::RetryBudget
        | Field::RetryFloor
        | Field::Hedges
        | Field::FleetQuorum => panic!(
            "`{}` completes another key, so KEYS gives its default",
            key.name
        ),
    }
}

/// The quoted strings of the array `const NAME: ... = &[...]` in `source`.
fn string_array(source: &str, name: &str) -> Vec<String> {
    let start = source
        .find(&format!("const {name}:"))
        .unwrap_or_else(|| panic!("no `const {name}`"));
    let body = &source[start..];
    let list = &body[body.find("= &[").unwrap() + 4..body.find("];").unwrap()];
    list.split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(|item| item.trim_matches('"').to_owned())
        .collect()
}

/// The value of `const NAME: type = value;` in `source`.
fn constant(source: &str, name: &str) -> String {
    let start = source
        .find(&format!("const {name}:"))
        .unwrap_or_else(|| panic!("no `const {name}`"));
    let body = &source[start..];
    body[body.find('=').unwrap() + 1..body.find(';').unwrap()]
        .trim()
        .to_owned()
}

/// Every key of the table, with its default as the table shows it: a value in code, as
/// `"5s"`, without its backticks; words, as the attribute-only `name` has, as they are.
fn key_table() -> Vec<(String, String)> {
    let readme = workspace_file("README.md");
    table_rows(section(&readme, "## Every key"))
        .into_iter()
        .map(|cells| {
            let default = cells[1].strip_prefix('`').and_then(|c| c.strip_suffix('`'));
            let default = default.filter(|d| !d.contains('`')).unwrap_or(&cells[1]);
            (code(&cells[0]).to_owned(), default.to_owned())
        })
        .collect()
}

#[test]
fn the_key_table_lists_every_configuration_key_with_its_default() {
    let table = key_table();
    let expected: Vec<(String, String)> = KEYS
        .iter()
        .map(|key| (key.name.to_owned(), config_default(key)))
        .collect();
    assert_eq!(table[..KEYS.len().min(table.len())], expected[..]);
}

/// The attribute's own keys are private to its proc-macro crate, which can export nothing
/// but macros: the test reads their list, and the default of `max_keys`, from its source.
#[test]
fn the_key_table_ends_with_every_key_only_the_attribute_has() {
    let source = workspace_file("breaker-macros/src/keys.rs");
    let attribute_keys = string_array(&source, "ATTRIBUTE_KEYS");
    let table = key_table();
    let names: Vec<&str> = table.iter().map(|(name, _)| name.as_str()).collect();
    let expected: Vec<&str> = KEYS
        .iter()
        .map(|key| key.name)
        .chain(attribute_keys.iter().map(String::as_str))
        .collect();
    assert_eq!(names, expected);

    let max_keys = &table[names.iter().position(|&n| n == "max_keys").unwrap()].1;
    assert_eq!(*max_keys, constant(&source, "DEFAULT_MAX_KEYS"));
}

/// The attribute's rustdoc has a table of its keys too, where docs.rs shows it: it lists
/// the same keys in the same order (a row may hold two, `backoff`, `open_max`).
#[test]
fn the_attributes_rustdoc_lists_the_keys_of_the_readme_in_its_order() {
    let source = workspace_file("breaker-macros/src/lib.rs");
    let docs: String = source
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("/// "))
        .map(|line| format!("{line}\n"))
        .collect();
    let rustdoc: Vec<String> = table_rows(section(&format!("\n{docs}"), "# Keys"))
        .iter()
        .flat_map(|cells| {
            cells[0]
                .split(", ")
                .map(|key| code(key).to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    let readme: Vec<String> = key_table().into_iter().map(|(name, _)| name).collect();
    assert_eq!(rustdoc, readme);
}

#[test]
fn the_features_table_lists_exactly_the_features_of_the_runtime() {
    let manifest: toml::Table = workspace_file("breaker/Cargo.toml").parse().unwrap();
    let features = manifest["features"].as_table().unwrap();
    let mut declared: Vec<&str> = features.keys().map(String::as_str).collect();
    declared.retain(|&name| name != "default");
    declared.sort_unstable();
    let defaults: Vec<&str> = features["default"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();

    let readme = workspace_file("README.md");
    let rows = table_rows(section(&readme, "## Features"));
    let mut listed = Vec::new();
    let mut marked_default = Vec::new();
    for cells in &rows {
        let (name, default) = match cells[0].strip_suffix(" (default)") {
            Some(name) => (code(name).to_owned(), true),
            None => (code(&cells[0]).to_owned(), false),
        };
        if default {
            marked_default.push(name.clone());
        }
        listed.push(name);
    }
    assert_eq!(marked_default, defaults, "the rows marked (default)");
    listed.sort_unstable();
    assert_eq!(listed, declared);
}

#[test]
fn the_install_section_holds_the_two_dependency_forms() {
    let readme = workspace_file("README.md");
    let install = section(&readme, "## Install");
    let blocks: Vec<&str> = install
        .split("```toml\n")
        .skip(1)
        .map(|block| &block[..block.find("```").unwrap()])
        .collect();
    let tokio = "tokio = { version = \"1\", features = [\"macros\", \"rt-multi-thread\"] }\n";
    assert_eq!(
        blocks,
        [
            format!("breakerbox = \"0.1\"\n{tokio}"),
            format!("breaker = {{ package = \"breakerbox\", version = \"0.1\" }}\n{tokio}"),
        ]
    );
}
