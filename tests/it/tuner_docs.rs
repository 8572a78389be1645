//! The tuner on what the workspace ships beside it: the `awk` recipe of
//! `breakerbox::recording`'s docs, run on a sample nginx access log
//! (`$msec $request_time $status`), writes a trace the tuner reads (every start at 0 or later
//! although nginx logs a request when it ends, and the log's outage found), and the trace
//! `docs/trace.csv` is tuned, against the configuration it gives, to a pick that beats it. Here, not in the tuner's
//! package, because both read files of the workspace that the published tuner does not ship.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use breakerbox::recording::{CallOutcome, Recording};
use breakerbox::Outcome;

/// The recipe, as the docs of `breakerbox::recording` print it.
fn recipe() -> String {
    let docs = include_str!("../../breaker/src/recording.rs");
    let start = docs.find("//! awk '").expect("the docs hold the recipe");
    let end = start
        + docs[start..]
            .find("//! ```")
            .expect("the recipe's block ends");
    docs[start..end]
        .lines()
        .map(|line| line.trim_start_matches("//!").trim_start())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_docs_awk_recipe_turns_an_nginx_log_into_a_trace_the_tuner_reads() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("access_log");
    std::fs::create_dir_all(&dir).unwrap();
    let log = concat!(env!("CARGO_MANIFEST_DIR"), "/data/access.log");
    std::fs::copy(log, dir.join("access.log")).unwrap();
    let status = Command::new("sh")
        .arg("-c")
        .arg(recipe())
        .current_dir(&dir)
        .status()
        .expect("sh runs");
    assert!(status.success());

    let text = std::fs::read_to_string(dir.join("trace.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("t_ms,latency_ms,outcome"));
    // The log's first line is the second request: the first one took 500 ms and was logged
    // after it, yet starts first, at 0.
    assert_eq!(lines.next(), Some("206.000,13.000,success"));
    let recording = Recording::read_csv_from(text.as_bytes()).unwrap();
    let calls = recording.calls();
    assert_eq!(calls.len(), 30);
    assert_eq!(calls[0].start, Duration::ZERO);
    assert_eq!(calls[0].latency, Duration::from_millis(500));
    let failures = calls
        .iter()
        .filter(|c| c.outcome == CallOutcome::Completed(Outcome::Failure))
        .count();
    assert_eq!(failures, 10);

    let tuning = breakerbox_tune::tune(&recording, &breakerbox::Config::default());
    assert_eq!(tuning.offset, Duration::ZERO);
    assert_eq!(
        tuning.health.outages,
        [Duration::from_secs(2)..Duration::from_secs(4)]
    );
}

#[test]
fn the_tuner_beats_the_configuration_the_shipped_trace_gives() {
    let shipped =
        Recording::read_csv(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/trace.csv")).unwrap();
    assert_eq!(shipped.name(), Some("app::get_book"));
    // The trace gives the configuration that recorded it: the defaults.
    let current = shipped.config().expect("the trace gives its configuration");
    assert_eq!(current, &breakerbox::Config::default());
    let tuning = breakerbox_tune::tune(&shipped, current);
    assert_eq!(
        tuning.health.outages,
        [Duration::from_secs(20)..Duration::from_secs(40)]
    );
    // Recorded through the defaults: the breaker's rejections censor the outage.
    assert_eq!(tuning.health.censored, [true]);
    let scores = tuning.recommended_scores();
    assert_eq!((scores.missed, scores.false_opens), (0, 0));
    let k = tuning.recommended_row().unwrap();
    let r = &tuning.robustness;
    let mean = |s: &[breakerbox_tune::score::Scores]| breakerbox_tune::robust::Spread::of(s).mean;
    assert!(mean(&r.scores[k]) < mean(&r.current));
    assert!(scores.flaps <= tuning.current_scores.flaps, "{scores:?}");
    let report = breakerbox_tune::report::report(&tuning, "docs/trace.csv", "app::get_book");
    let current = report
        .find("\ncurrent:\n")
        .expect("the report has a current row");
    let row = report[current..].lines().nth(2).unwrap();
    assert!(
        row.ends_with("  window = 20, min = 10, rate = 0.5, open = \"5s\", probes = 3"),
        "{row}"
    );
}
