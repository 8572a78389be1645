//! The `breakerbox-tune` binary: its help, its errors as sentences, and the name it takes from
//! the trace.

use std::path::Path;
use std::process::Command;

fn tool() -> Command {
    Command::new(env!("CARGO_BIN_EXE_breakerbox-tune"))
}

fn dir() -> &'static Path {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(dir).unwrap();
    dir
}

#[test]
fn help_names_the_trace_and_every_option() {
    let out = tool().arg("--help").output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for word in [
        "Usage: breakerbox-tune [OPTIONS] <TRACE>",
        "--name",
        "--current",
        "--outages",
        "--svg",
        "--perturbations",
        "--seed",
        "--threads",
    ] {
        assert!(help.contains(word), "{word} missing from\n{help}");
    }
}

#[test]
fn a_trace_without_a_name_needs_one_and_the_error_is_a_sentence() {
    let trace = dir().join("unnamed.csv");
    std::fs::write(&trace, "t_ms,latency_ms,outcome\n0,1,success\n").unwrap();
    let out = tool().arg(&trace).output().unwrap();
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!(
            "error: the trace {} does not name its breaker (no `# breaker: NAME` line): pass \
             --name with the name the breaker is registered under\n",
            trace.display()
        )
    );
}

#[test]
fn a_bad_line_is_named_in_a_sentence() {
    let trace = dir().join("bad.csv");
    std::fs::write(
        &trace,
        "t_ms,latency_ms,outcome\n0,1,success\n5,1,crashed\n",
    )
    .unwrap();
    let out = tool()
        .args(["--name", "a", "--current", ""])
        .arg(&trace)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with(&format!(
            "error: cannot read the trace {}:3: outcome must be one of",
            trace.display()
        )),
        "{err}"
    );
}

#[test]
fn the_name_in_the_trace_names_the_override_block() {
    let trace = dir().join("named.csv");
    let mut text = String::from(
        "# breaker: app::get_book\n\
         # config: window = 20, min = 10, rate = 0.4, open = \"3s\", probes = 2, \
         timeout = \"150ms\", retries = 1\n\
         t_ms,latency_ms,outcome\n",
    );
    for i in 0..2000u64 {
        let failed = (500..1000).contains(&i);
        text += &format!(
            "{},5,{}\n",
            i * 20,
            if failed { "failure" } else { "success" }
        );
    }
    std::fs::write(&trace, text).unwrap();
    let svg = dir().join("named.svg");
    let out = tool().arg(&trace).arg("--svg").arg(&svg).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = String::from_utf8(out.stdout).unwrap();
    assert!(
        report.contains("[\"app::get_book\"]\nwindow = "),
        "{report}"
    );
    let drawn = std::fs::read_to_string(&svg).unwrap();
    for label in ["closed", "half-open", "open", "slow stretch"] {
        assert!(
            drawn.contains(&format!("\n{label}\n</text>")),
            "the legend names {label}"
        );
    }
}

/// A trace of 40 s, a call every 20 ms, failing from 10 s to 20 s, after `comments`.
fn outage_trace(file: &str, comments: &str) -> std::path::PathBuf {
    let trace = dir().join(file);
    let mut text = format!("{comments}t_ms,latency_ms,outcome\n");
    for i in 0..2000u64 {
        let failed = (500..1000).contains(&i);
        text += &format!(
            "{},5,{}\n",
            i * 20,
            if failed { "failure" } else { "success" }
        );
    }
    std::fs::write(&trace, text).unwrap();
    trace
}

/// The report of the tool on `trace` with `args`, which must succeed.
fn report(trace: &Path, args: &[&str]) -> String {
    let svg = trace.with_extension("svg");
    let out = tool()
        .arg(trace)
        .arg("--svg")
        .arg(&svg)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The line after `heading` in `report`.
fn row_after<'a>(report: &'a str, heading: &str) -> &'a str {
    let at = report.find(heading).unwrap_or_else(|| panic!("{report}"));
    report[at + heading.len()..].lines().next().unwrap()
}

#[test]
fn the_configuration_in_the_trace_is_the_current_row_and_the_changes_are_against_it() {
    let trace = outage_trace(
        "configured.csv",
        "# breaker: app::get_book\n# config: rate = 0.4, open = \"3s\", probes = 2, \
         timeout = \"150ms\", retries = 1\n",
    );
    let text = report(&trace, &[]);
    // The current configuration, replayed on the trace: 11 calls let into the outage, 111
    // rejected after it while it opened for 3 s at a time.
    assert_eq!(
        row_after(&text, "\ncurrent:\n"),
        "   122     0.1s     11       111      2.2s      0      0      0  window = 20, min = 10, \
         rate = 0.4, open = \"3s\", probes = 2, timeout = \"150ms\", retries = 1"
    );
    let pick = row_after(&text, "no outage missed):\n");
    assert!(
        pick.ends_with(", timeout = \"150ms\", retries = 1"),
        "the pick keeps the keys the grid does not tune: {pick}"
    );
    let changes = &text[text
        .find("changes against the current configuration:\n")
        .unwrap()..];
    let changes: Vec<&str> = changes
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert!(!changes.is_empty());
    for change in &changes {
        let (key, values) = change.trim().split_once(": ").unwrap();
        assert!(!["timeout", "retries"].contains(&key), "{change}");
        let current = [
            "window: 20 ",
            "min: 10 ",
            "rate: 0.4 ",
            "open: \"3s\" ",
            "probes: 2 ",
        ]
        .iter()
        .find(|c| c.starts_with(&format!("{key}: ")));
        match current {
            Some(c) => assert!(change.trim().starts_with(&format!("{c}-> ")), "{change}"),
            None => assert!(values.starts_with("added, "), "{change}"),
        }
    }
    // The override block sets exactly the keys that change.
    let block = &text[text.find("[\"app::get_book\"]\n").unwrap()..];
    let keys: Vec<&str> = block
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split(" = ").next().unwrap())
        .collect();
    let changed: Vec<&str> = changes
        .iter()
        .map(|c| c.trim().split(": ").next().unwrap())
        .collect();
    assert_eq!(keys, changed);
}

#[test]
fn current_overrides_the_trace_configuration() {
    let trace = outage_trace(
        "overridden.csv",
        "# breaker: a\n# config: rate = 0.4, open = \"3s\"\n",
    );
    let text = report(
        &trace,
        &["--current", "window = 50, min = 25, open = \"15s\""],
    );
    assert!(
        row_after(&text, "\ncurrent:\n")
            .ends_with("  window = 50, min = 25, rate = 0.5, open = \"15s\", probes = 3"),
        "{text}"
    );
}

#[test]
fn a_trace_without_a_configuration_needs_current_and_the_error_is_a_sentence() {
    let trace = outage_trace("unconfigured.csv", "# breaker: a\n");
    let out = tool().arg(&trace).output().unwrap();
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!(
            "error: the trace {} does not give its breaker's configuration (no `# config: \
             KEYS` line): pass --current with the attribute keys the breaker runs, like \
             --current 'rate = 0.5, open = \"5s\"'\n",
            trace.display()
        )
    );
}

#[test]
fn a_broken_current_configuration_names_its_key_and_rule() {
    let trace = outage_trace("broken_current.csv", "# breaker: a\n");
    let out = tool()
        .arg(&trace)
        .args(["--current", "window = 20, min = 30"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "error: --current is not a configuration: min = 30: must be at most the count window\n"
    );
    let trace = dir().join("broken_line.csv");
    std::fs::write(
        &trace,
        "# breaker: a\n# config: rate = 1.5\nt_ms,latency_ms,outcome\n0,1,success\n",
    )
    .unwrap();
    let out = tool().arg(&trace).output().unwrap();
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!(
            "error: cannot read the trace {}:2: the configuration line: rate = 1.5: must be \
             in (0, 1]\n",
            trace.display()
        )
    );
}

#[test]
fn a_long_list_of_outages_is_summarized_and_printed_whole_with_outages() {
    // 300 s of a call every 20 ms, sick 5 s in every 10: 30 outages.
    let trace = dir().join("periodic.csv");
    let mut text = String::from("# breaker: a\n# config: window = 20\nt_ms,latency_ms,outcome\n");
    for i in 0..15_000u64 {
        let sick = (i * 20 / 1000) % 10 >= 5;
        text += &format!(
            "{},5,{}\n",
            i * 20,
            if sick { "failure" } else { "success" }
        );
    }
    std::fs::write(&trace, text).unwrap();
    let summary = report(&trace, &["--perturbations", "1"]);
    let first = summary.lines().next().unwrap();
    assert_eq!(
        first,
        format!(
            "{}: 15000 calls over 300.0s; usual median 5.0 ms, healthy p99 5.0 ms; 30 outages, \
             5.0s to 5.0s long (median 5.0s), starting every 10.0s (median); the first 3: \
             5.0s..10.0s, 15.0s..20.0s, 25.0s..30.0s; the last 3: 275.0s..280.0s, \
             285.0s..290.0s, 295.0s..300.0s (every one with --outages, and drawn in the SVG)",
            trace.display()
        )
    );
    assert!(!summary.contains("\n30 outages:\n"));
    let whole = report(&trace, &["--perturbations", "1", "--outages"]);
    let list = &whole[whole.find("\n30 outages:\n").expect("the whole list") + 1..];
    let lines: Vec<&str> = list.lines().take(31).collect();
    assert_eq!(lines[1], "     1  5.0s..10.0s");
    assert_eq!(lines[30], "    30  295.0s..300.0s");
}
