//! The expansion against the table of keys.

use super::config::builder;
use super::*;
use crate::keys::{CONFIG_KEYS, TIME_WINDOW};

/// A valid value of each configuration key, as the attribute takes it.
fn example(key: &str) -> &'static str {
    match key {
        "window" => "\"10s\"",
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
        "retry_backoff_max" => "\"5s\"",
        "retry_budget" => "0.5",
        "retry_floor" => "3",
        "hedge" => "\"40ms\"",
        "hedges" => "2",
        "throttle" => "2.0",
        "throttle_max" => "0.5",
        "throttle_window" => "\"30s\"",
        "max_concurrent" => "64",
        "probe_timeout" => "\"30s\"",
        "shadow" => "true",
        "fleet" => "true",
        "fleet_quorum" => "3",
        "pushback_max" => "\"1m\"",
        "max_open_percent" => "50",
        _ => panic!("no example value of `{key}`: add one, so the tests cover it"),
    }
}

/// The key a key needs, written with its example value; empty if it needs none.
fn needed(key: &breakerbox_rules::ConfigKey) -> String {
    match key.needs.as_ref().map(|n| n.what) {
        Some(TIME_WINDOW) => "window = \"10s\"".to_owned(),
        Some(other) => format!("{other} = {}", example(other)),
        None => String::new(),
    }
}

fn parsed(text: &str) -> (Args, Vec<syn::Error>) {
    let mut errors = Vec::new();
    let args = args::parse(text.parse().unwrap(), &mut errors);
    (args, errors)
}

#[test]
fn every_configuration_key_is_parsed_and_reaches_the_builder() {
    let p = quote!(::breakerbox::__private);
    for key in &CONFIG_KEYS {
        let base = needed(key);
        let text = format!("{base}, {} = {}", key.name, example(key.name));
        let (with, errors) = parsed(text.trim_start_matches(", "));
        assert!(errors.is_empty(), "{text}");
        assert!(with.written(key.name).is_some(), "{text}");
        let (without, _) = parsed(&base);
        assert_ne!(
            builder(&rules::settings(&with), &p).to_string(),
            builder(&rules::settings(&without), &p).to_string(),
            "{text}"
        );
    }
}

#[test]
fn every_needs_rule_of_the_table_refuses_the_key_alone() {
    let func: ItemFn = syn::parse_quote!(
        async fn f() {}
    );
    let mut refused = 0;
    for key in CONFIG_KEYS.iter().filter(|k| k.needs.is_some()) {
        let text = format!("{} = {}", key.name, example(key.name));
        let (args, mut errors) = parsed(&text);
        validate::validate(&args, &func, &mut errors);
        let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(messages.len(), 1, "{text}: {messages:?}");
        assert!(
            messages[0].starts_with(&format!("`{}` needs ", key.name)),
            "{text}: {messages:?}"
        );
        refused += 1;
    }
    assert_eq!(refused, 14);
}

/// The errors of the rules, as `(span's first line and column, message)`.
fn broken(attr: &str) -> Vec<String> {
    let (args, mut errors) = parsed(attr);
    assert!(errors.is_empty(), "{attr}");
    rules::check(&args, &rules::settings(&args), &mut errors);
    errors.iter().map(ToString::to_string).collect()
}

#[test]
fn a_broken_rule_is_told_with_the_key_and_the_value_as_written() {
    assert_eq!(broken("rate = 1.5"), ["rate = 1.5: must be in (0, 1]"]);
    assert_eq!(broken("rate = 1"), Vec::<String>::new());
    assert_eq!(
        broken("window = -3"),
        ["window = -3: must be at least 1 call"]
    );
    assert_eq!(
        broken("window = \"0s\""),
        ["window = \"0s\": must be greater than zero"]
    );
    assert_eq!(
        broken("ramp = [10, 10, 100]"),
        ["ramp = [10, 10, 100]: percentages must rise strictly"]
    );
    assert_eq!(
        broken("slow = \"1s\", slow_rate = 0"),
        ["slow_rate = 0: must be in (0, 1]"]
    );
}

#[test]
fn a_rule_across_keys_is_told_at_the_key_that_breaks_it_naming_the_other() {
    assert_eq!(
        broken("window = 20, min = 30"),
        ["min = 30: must be at most the count window (window = 20)"]
    );
    assert_eq!(
        broken("min = 30"),
        ["min = 30: must be at most the count window (window = 20, the default)"]
    );
    assert_eq!(
        broken("successes = 4"),
        ["successes = 4: must be at most probes (probes = 3, the default)"]
    );
    assert_eq!(
        broken("open = \"2m\", backoff = 2.0, open_max = \"1m\""),
        ["open_max = \"1m\": must be at least the open duration (open = \"2m\")"]
    );
    // A default that breaks a rule is told at the key it completes.
    assert_eq!(
        broken("window = \"5ns\""),
        ["buckets = 10 (the default): must not exceed the window span in nanoseconds"]
    );
}

#[test]
fn a_rule_measured_against_a_broken_key_is_not_told_twice() {
    assert_eq!(
        broken("window = 0, min = 30"),
        ["window = 0: must be at least 1 call"]
    );
    assert_eq!(
        broken("probes = 0, successes = 2"),
        ["probes = 0: must be at least 1"]
    );
    assert_eq!(
        broken("rate = 0, probes = 0, retries = 11"),
        [
            "rate = 0: must be in (0, 1]",
            "probes = 0: must be at least 1",
            "retries = 11: must be at most 10"
        ]
    );
}

fn expansion(attr: &str, item: &str) -> String {
    circuit_breaker(attr.parse().unwrap(), item.parse().unwrap()).to_string()
}

#[test]
fn without_timeout_or_retries_a_call_asks_the_breaker_once_and_runs_nothing_else() {
    let item = "async fn get(isbn: &str) -> Result<u32, E> { Ok(1) }";
    for attr in [
        "",
        "window = 10, fallback = degraded",
        "key = isbn",
        "max_concurrent = 8, probe_timeout = \"1s\", shadow = true",
    ] {
        let out = expansion(attr, item);
        assert!(out.contains(". try_acquire ()"), "{attr}: {out}");
        for policy in [":: run", "Reuse", "CallError"] {
            assert!(!out.contains(policy), "{attr}: {policy} in {out}");
        }
    }
}

#[test]
fn timeout_runs_one_attempt_and_retries_run_a_fresh_attempt_each_time() {
    let item = "async fn get(isbn: &str, mut shelf: String) -> Result<u32, E> { Ok(1) }";
    let once = expansion("timeout = \"1s\"", item);
    assert!(
        once.contains(":: run_once (") && !once.contains("Reuse"),
        "{once}"
    );
    let retried = expansion("timeout = \"1s\", retries = 2", item);
    assert!(
        retried.contains(":: run (") && !retried.contains("run_once"),
        "{retried}"
    );
    for out in [&once, &retried] {
        assert!(out.contains("FromTimedOut > :: from_timed_out"), "{out}");
    }
    // Retried without a timeout: no timer, so nothing is made from a `TimedOut`.
    let untimed = expansion("retries = 2", item);
    assert!(untimed.contains(":: run_untimed ("), "{untimed}");
    assert!(!untimed.contains("TimedOut"), "{untimed}");
    // Each attempt gets its own copy of each argument; the argument itself is only lent.
    for out in [&retried, &untimed] {
        assert!(out.contains("let isbn = ") && out.contains("let mut shelf = "));
        assert!(
            out.contains("async fn get (isbn : & str , shelf : String)"),
            "{out}"
        );
    }
}

#[test]
fn with_timeout_and_fallback_the_body_gets_copies_and_the_fallback_the_arguments() {
    let item = "async fn get(isbn: &str) -> Result<u32, E> { Ok(1) }";
    let out = expansion("timeout = \"1s\", fallback = degraded", item);
    assert!(
        out.contains(":: run_once (") && out.contains("Reuse :: reuse (& isbn)"),
        "{out}"
    );
    assert!(
        out.contains("fallback (degraded , (isbn ,) , rejected)"),
        "{out}"
    );
}

fn errors(attr: &str, item: &str) -> Vec<String> {
    let func: ItemFn = syn::parse_str(item).unwrap();
    let (args, mut errors) = parsed(attr);
    validate::validate(&args, &func, &mut errors);
    errors.iter().map(ToString::to_string).collect()
}

#[test]
fn retried_and_timed_bodies_with_a_fallback_share_self_and_copy_the_arguments() {
    let ok = "async fn get(&self, isbn: &str, shelf: String) -> Result<u32, E> { Ok(1) }";
    for attr in [
        "retries = 1",
        "timeout = \"1s\", fallback = f",
        "retries = 1, fallback = f",
    ] {
        assert_eq!(errors(attr, ok), Vec::<String>::new(), "{attr}");
    }
    // Without a fallback, a timed body is the only one to get the arguments.
    let exclusive = "async fn put(&mut self, buffer: &mut Vec<u8>) -> Result<u32, E> { Ok(1) }";
    assert_eq!(errors("timeout = \"1s\"", exclusive), Vec::<String>::new());
    assert_eq!(
        errors("retries = 1", exclusive),
        [
            "with `retries`, each attempt runs the body anew, so the receiver must be `&self`: \
             `&mut self` cannot be lent to more than one attempt",
            "with `retries`, each attempt runs the body anew, and a `&mut` argument cannot be \
             lent to more than one attempt: pass a `&` reference or an owned `Clone` value",
        ]
    );
    assert_eq!(
        errors(
            "timeout = \"1s\", fallback = f",
            "async fn take(self) -> Result<u32, E> { Ok(1) }"
        ),
        [
            "with `timeout` and `fallback`, the body and the fallback both get `self`, so the \
             receiver must be `&self`: `self` taken by value would be moved into the body"
        ]
    );
    assert_eq!(
        errors(
            "retries = 1",
            "async fn sum((a, b): (u32, u32)) -> Result<u32, E> { Ok(a + b) }"
        ),
        ["with `retries`, every argument needs a plain name, to be passed to each attempt"]
    );
}

#[test]
fn a_plain_fn_runs_its_body_in_a_closure_and_awaits_nothing() {
    let item = "fn get(isbn: &str) -> Result<u32, E> { Ok(1) }";
    let out = expansion("fallback = degraded", item);
    assert!(
        out.contains("call_once :: < Result < u32 , E > , _ > (move || { Ok (1) })"),
        "{out}"
    );
    assert!(!out.contains(". await"), "{out}");
    let retried = expansion("retries = 2", item);
    assert!(
        retried.contains(":: run_blocking (& * breaker ,"),
        "{retried}"
    );
}

#[test]
fn timeout_on_a_plain_fn_is_refused_at_the_key() {
    let item = "fn get(isbn: &str) -> Result<u32, E> { Ok(1) }";
    let refused = errors("timeout = \"1s\"", item);
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(
        refused[0]
            .starts_with("`timeout` needs an `async fn`: a blocking call cannot be cancelled"),
        "{refused:?}"
    );
}

/// Attributes that between them take every path of the expansion, and the functions they go
/// on: each one's expansion is pinned in `pinned/<name>.rs`, as `prettyplease` writes it.
const PINNED: [(&str, &str, &str); 8] = [
    (
        "plain",
        "",
        "async fn get(isbn: &str) -> Result<u32, E> { Ok(1) }",
    ),
    (
        "keyed",
        "key = shelf, max_keys = 16, window = 20, min = 10, rate = 0.5, \
         open = \"5s\", fallback = from_cache",
        "pub(crate) async fn titles(&self, shelf: u32) -> Result<Vec<String>, E> { \
         #![allow(unused)] Ok(vec![]) }",
    ),
    (
        "failure_fallback",
        "fallback = from_cache, fallback_on = \"failure\", classify = judge, \
         window = \"30s\", buckets = 10",
        "async fn get<T: Clone>(isbn: &str, mut shelf: T) -> Result<u32, E> where T: Send { \
         Ok(1) }",
    ),
    (
        "timed_retried_failure_fallback",
        "name = \"libraryd\", timeout = \"800ms\", retries = 2, retry_backoff = \"20ms\", \
         fallback = from_cache, fallback_on = \"failure\", slow = \"2s\", slow_rate = 0.5, \
         backoff = 2.0, open_max = \"1m\", ramp = [25, 50, 100], ramp_step = \"5s\"",
        "async fn get(&self, isbn: &str, mut shelf: String) -> Result<u32, E> { Ok(1) }",
    ),
    (
        "timed_once",
        "timeout = \"1s\", fallback = degraded, classify = judge, shadow = true",
        "async fn get(isbn: &str) -> impl Into<u32> { 1 }",
    ),
    (
        "timed_bare",
        "timeout = \"1s\"",
        "async fn ping() { ping_it().await }",
    ),
    (
        "retried_untimed",
        "retries = 3, retry_budget = 0.2, retry_floor = 1, max_concurrent = 8, \
         probe_timeout = \"3s\", fallback = degraded, fallback_on = \"failure\"",
        "async fn get(r#type: &str) -> Result<u32, E> { Ok(1) }",
    ),
    (
        "blocking_retried",
        "retries = 2, fallback = cached, pushback_max = \"30s\"",
        "/// Reads it.\nfn read(path: &str) -> Result<String, E> { Ok(String::new()) }",
    ),
];

fn pretty(attr: &str, item: &str) -> String {
    let out = circuit_breaker(attr.parse().unwrap(), item.parse().unwrap());
    prettyplease::unparse(&syn::parse2(out).expect("the expansion is a file's items"))
}

#[test]
fn every_path_of_the_expansion_writes_the_pinned_code() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/expand/pinned");
    for (name, attr, item) in PINNED {
        let path = dir.join(format!("{name}.rs"));
        let got = pretty(attr, item);
        assert!(
            !got.contains("compile_error"),
            "`{name}` is refused:\n{got}"
        );
        if std::env::var_os("BREAKERBOX_PIN_EXPANSIONS").is_some() {
            std::fs::write(&path, &got).unwrap();
        }
        let pinned = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            got == pinned,
            "`{name}` expands otherwise than {}; if that is meant, rerun with \
             BREAKERBOX_PIN_EXPANSIONS=1 and read the diff:\n{got}",
            path.display()
        );
    }
}
