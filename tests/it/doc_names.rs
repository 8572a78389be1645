//! Every list of an enum's names in the docs (the README, the pages of `docs/`, the rustdoc
//! of the crates) names every variant of the enum, as the enum itself names them: a variant
//! added to the code and missing from a list fails here.
//!
//! A list is a run of code spans joined by commas, `and`, `or` or `+`; it is taken for a
//! list of an enum's names when three or more of its spans are names of that enum, in
//! snake case (`as_str`, the labels of logs and metrics, with or without the `rejected_` of
//! the recording format) or as the variants are spelled (`TransitionReason::FleetOpen`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use breakerbox::{events::TransitionReason, snapshot::RejectedBy, RejectReason};

/// An enum's names: each variant's `as_str` and its spelling in code.
struct Names {
    enum_name: &'static str,
    snake: Vec<&'static str>,
    variants: Vec<String>,
}

impl Names {
    fn of<T: std::fmt::Debug + Copy>(
        enum_name: &'static str,
        all: &[T],
        as_str: fn(T) -> &'static str,
    ) -> Self {
        Names {
            enum_name,
            snake: all.iter().map(|&v| as_str(v)).collect(),
            variants: all.iter().map(|v| format!("{v:?}")).collect(),
        }
    }

    /// The variant a code span names, if it names one.
    fn position(&self, span: &str) -> Option<usize> {
        let span = span.trim_matches('"');
        let span = span.rsplit("::").next().unwrap_or(span);
        let snake = span.strip_prefix("rejected_").unwrap_or(span);
        self.snake
            .iter()
            .position(|&name| name == snake)
            .or_else(|| self.variants.iter().position(|name| name == span))
    }
}

fn every_enum() -> Vec<Names> {
    vec![
        Names::of(
            "TransitionReason",
            TransitionReason::ALL,
            TransitionReason::as_str,
        ),
        Names::of("RejectReason", RejectReason::ALL, RejectReason::as_str),
    ]
}

/// The workspace's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The files whose docs are read, by their path from the root: the README, the pages of
/// `docs/` and `examples/README.md`, and the Rust sources of the published crates.
fn documents() -> Vec<String> {
    let mut files = vec!["README.md".to_owned(), "examples/README.md".to_owned()];
    let mut dirs = vec![
        "docs".to_owned(),
        "breaker/src".to_owned(),
        "breaker-macros/src".to_owned(),
        "breaker-rules/src".to_owned(),
        "breaker-tune/src".to_owned(),
    ];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(root().join(&dir)).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            let path = format!("{dir}/{name}");
            if root().join(&path).is_dir() {
                dirs.push(path);
            } else if name.ends_with(".md") || name.ends_with(".rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The prose of a document, line by line with the line's number: a Rust file's doc
/// comments, a Markdown file's lines, without the fenced code blocks of either.
fn prose(path: &str, text: &str) -> Vec<(usize, String)> {
    let mut lines = Vec::new();
    let mut fenced = false;
    for (i, line) in text.lines().enumerate() {
        let line = if path.ends_with(".rs") {
            let trimmed = line.trim_start();
            match ["//! ", "/// ", "//!", "///"]
                .iter()
                .find_map(|p| trimmed.strip_prefix(p))
            {
                Some(doc) => doc,
                None => continue,
            }
        } else {
            line
        };
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            lines.push((i + 1, line.to_owned()));
        }
    }
    lines
}

/// One list found: where, and its code spans.
struct List {
    line: usize,
    spans: Vec<String>,
}

/// Every run of code spans joined by a comma, `and`, `or` or `+` in `prose`.
fn lists(prose: &[(usize, String)]) -> Vec<List> {
    let joined: String = prose.iter().map(|(_, l)| format!("{l}\n")).collect();
    let line_at = |offset: usize| {
        let newlines = joined[..offset].matches('\n').count();
        prose[newlines.min(prose.len() - 1)].0
    };
    let ticks: Vec<usize> = joined.match_indices('`').map(|(i, _)| i).collect();
    let mut found: Vec<List> = Vec::new();
    let mut last_end = None;
    for pair in ticks.chunks_exact(2) {
        let (open, close) = (pair[0], pair[1]);
        let span = joined[open + 1..close].to_owned();
        let joins = last_end.is_some_and(|end: usize| {
            let gap: Vec<&str> = joined[end + 1..open].split_whitespace().collect();
            matches!(
                gap.join(" ").as_str(),
                "," | "and" | ", and" | "or" | ", or" | "+"
            )
        });
        match found.last_mut() {
            Some(list) if joins => list.spans.push(span),
            _ => found.push(List {
                line: line_at(open),
                spans: vec![span],
            }),
        }
        last_end = Some(close);
    }
    found
}

#[test]
fn every_list_of_an_enums_names_in_the_docs_names_every_variant() {
    let enums = every_enum();
    let mut wrong = Vec::new();
    let mut complete = BTreeSet::new();
    for path in documents() {
        let text = std::fs::read_to_string(root().join(&path)).unwrap();
        for list in lists(&prose(&path, &text)) {
            for names in &enums {
                let named: Vec<usize> = list
                    .spans
                    .iter()
                    .filter_map(|s| names.position(s))
                    .collect();
                if named.len() < 3 {
                    continue;
                }
                let missing: Vec<&str> = (0..names.snake.len())
                    .filter(|i| !named.contains(i))
                    .map(|i| names.snake[i])
                    .collect();
                if missing.is_empty() && named.len() == names.snake.len() {
                    complete.insert(names.enum_name);
                } else {
                    wrong.push(format!(
                        "{path}:{}: a list of {} names, {:?}, leaves out {missing:?} (or names one twice)",
                        list.line, names.enum_name, list.spans
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
    // The docs list each enum in full somewhere (the metrics' docs do), so this test checks
    // lists that exist.
    let expected: BTreeSet<&str> = enums.iter().map(|n| n.enum_name).collect();
    assert_eq!(complete, expected);
}

#[test]
fn the_rejections_by_reason_have_a_field_per_reason_named_as_the_reason() {
    let debug = format!("{:?}", RejectedBy::default());
    let fields: Vec<&str> = debug
        .trim_start_matches("RejectedBy {")
        .trim_end_matches('}')
        .split(',')
        .map(|field| field.split(':').next().unwrap().trim())
        .collect();
    let reasons: Vec<&str> = RejectReason::ALL.iter().map(|r| r.as_str()).collect();
    assert_eq!(fields, reasons);
}

#[test]
fn a_list_leaving_out_a_variant_is_found() {
    let names = Names::of(
        "TransitionReason",
        TransitionReason::ALL,
        TransitionReason::as_str,
    );
    let prose = vec![
        (7, "one of `failure_rate`, `slow_call_rate`,".to_owned()),
        (8, "or `pushback` (and `reset`)".to_owned()),
    ];
    let found = lists(&prose);
    assert_eq!(found.len(), 2);
    assert_eq!(
        (found[0].line, &found[0].spans[..]),
        (
            7,
            &[
                "failure_rate".to_owned(),
                "slow_call_rate".to_owned(),
                "pushback".to_owned()
            ][..]
        )
    );
    let named: Vec<usize> = found[0]
        .spans
        .iter()
        .filter_map(|s| names.position(s))
        .collect();
    assert_eq!(named, [0, 1, 7]);
    assert_eq!(names.position("TransitionReason::FleetOpen"), Some(9));
    assert_eq!(names.position("\"probe_timed_out\""), Some(4));
}
