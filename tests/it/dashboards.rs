//! `dashboards/`: the Grafana dashboard imports (its variables are there), and every metric
//! name it or the alert rules use is one the crate exports. `promtool check rules` and
//! `promtool test rules` check the rules themselves.

use std::collections::BTreeSet;
use std::path::Path;

fn dashboards() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../dashboards"))
}

/// Every series name the crate exports, as Prometheus stores it: counters with `_total`,
/// histograms as their `_bucket`, `_sum` and `_count`.
fn exported() -> BTreeSet<String> {
    let text = breakerbox::metrics::text();
    let mut names = BTreeSet::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("# TYPE ") else {
            continue;
        };
        let (name, kind) = rest.split_once(' ').unwrap();
        match kind {
            "counter" => {
                names.insert(format!("{name}_total"));
            }
            "histogram" => {
                for suffix in ["_bucket", "_sum", "_count"] {
                    names.insert(format!("{name}{suffix}"));
                }
            }
            _ => {
                names.insert(name.to_owned());
            }
        }
    }
    names
}

/// Every `circuitbreaker_...` word of `text`.
fn used(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("circuitbreaker_") {
        let word: String = rest[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        rest = &rest[at + word.len()..];
        names.insert(word);
    }
    names
}

#[test]
fn every_metric_the_dashboard_and_the_alerts_use_is_exported() {
    let exported = exported();
    assert!(
        exported.contains("circuitbreaker_fleet_degraded"),
        "{exported:?}"
    );
    for file in ["grafana.json", "alerts.yml", "alerts.test.yml"] {
        let text = std::fs::read_to_string(dashboards().join(file)).unwrap();
        let used = used(&text);
        assert!(used.len() >= 3, "{file} uses {used:?}");
        let unknown: Vec<_> = used.difference(&exported).collect();
        assert!(
            unknown.is_empty(),
            "{file} uses metrics the crate does not export: {unknown:?}"
        );
    }
}

#[test]
fn the_dashboard_shows_what_it_promises_with_its_variables() {
    let text = std::fs::read_to_string(dashboards().join("grafana.json")).unwrap();
    let dashboard: serde_json::Value = serde_json::from_str(&text).unwrap();
    let variables: Vec<&str> = dashboard["templating"]["list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(variables, ["datasource", "instance", "name"]);
    let titles: Vec<&str> = dashboard["panels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        [
            "State over time",
            "Failure rate against its threshold",
            "Slow-call rate against its threshold",
            "Rejections by reason",
            "Calls by result",
            "Call durations (p50, p99)",
            "Transitions by reason",
            "Fleet: store reached per instance",
            "Retries and retry budget exhausted",
            "Adaptive throttling: shed probability",
            "Keyed families: members out of the pool, trips the cap refused",
        ]
    );
    // Every breaker panel follows both variables.
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            let expr = target["expr"].as_str().unwrap();
            assert!(expr.contains("instance=~\"$instance\""), "{expr}");
            if !expr.contains("fleet_degraded") {
                assert!(expr.contains("name=~\"$name\""), "{expr}");
            }
        }
    }
}
