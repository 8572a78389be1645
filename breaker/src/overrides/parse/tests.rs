use super::*;

/// The configuration the single table of `text` makes of `current`, or its error.
fn applied(current: &Config, text: &str) -> Result<Option<Config>, Vec<(usize, String)>> {
    let entries = entries(text).expect("the text parses");
    entries[0].config(current)
}

/// Each text, applied to the defaults, is refused with its line and message.
fn assert_refused(cases: impl IntoIterator<Item = (&'static str, (usize, &'static str))>) {
    for (text, (line, message)) in cases {
        assert_eq!(
            applied(&Config::default(), text),
            Err(vec![(line, message.to_owned())]),
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
        "throttle" => "3.0",
        "throttle_max" => "0.5",
        "throttle_window" => "\"30s\"",
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
        "retry_budget" => "0.1",
        "retry_floor" => "3",
        "hedge" => "\"40ms\"",
        "hedges" => "2",
        "max_concurrent" => "64",
        "probe_timeout" => "\"30s\"",
        "shadow" => "true",
        "fleet" => "false",
        "fleet_quorum" => "3",
        "pushback_max" => "\"1m\"",
        "max_open_percent" => "30",
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
        .hedge(Duration::from_millis(20))
        .throttle(2.0)
        .fleet(true)
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
            "{} needs {}, which the breaker does not have",
            key.name, needs.what
        );
        assert_eq!(applied(&Config::default(), &text), Err(vec![(2, message)]));
        rules += 1;
    }
    assert_eq!(rules, 14);
}

#[test]
fn keys_left_out_take_the_defaults_of_the_table() {
    use breakerbox_rules::KeyDefault;
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
    fn retry_backoff_max(c: &Config) -> KeyDefault {
        KeyDefault::Span(c.policy().retry_backoff_max())
    }
    fn retry_budget(c: &Config) -> KeyDefault {
        KeyDefault::Rate(c.policy().retry_budget())
    }
    fn fleet_quorum(c: &Config) -> KeyDefault {
        KeyDefault::Count(c.fleet_quorum())
    }
    fn retry_floor(c: &Config) -> KeyDefault {
        KeyDefault::Count(c.policy().retry_floor())
    }
    fn hedges(c: &Config) -> KeyDefault {
        KeyDefault::Count(c.policy().hedges())
    }
    fn throttle_max(c: &Config) -> KeyDefault {
        KeyDefault::Rate(c.throttling().expect("throttle was written").max())
    }
    fn throttle_window(c: &Config) -> KeyDefault {
        KeyDefault::Span(c.throttling().expect("throttle was written").window())
    }
    let mut defaults = 0;
    for key in crate::config::KEYS {
        let Some(default) = key.default else { continue };
        let (written, taken): (&str, fn(&Config) -> KeyDefault) = match key.name {
            "buckets" => ("window = \"20s\"", buckets),
            "slow_rate" => ("slow = \"2s\"", slow_rate),
            "ramp_step" => ("ramp = [50, 100]", ramp_step),
            "retry_backoff" => ("retries = 2", retry_backoff),
            "retry_backoff_max" => ("retries = 2", retry_backoff_max),
            "retry_budget" => ("retries = 2", retry_budget),
            "retry_floor" => ("retries = 2", retry_floor),
            "hedges" => ("hedge = \"40ms\"", hedges),
            "throttle_max" => ("throttle = 2.0", throttle_max),
            "throttle_window" => ("throttle = 2.0", throttle_window),
            "fleet_quorum" => ("fleet = true", fleet_quorum),
            _ => panic!("no case for the default of `{}`: add one", key.name),
        };
        let text = format!("[\"a\"]\n{written}\n");
        let c = applied(&Config::default(), &text).unwrap().unwrap();
        assert_eq!(taken(&c), default, "{text}");
        defaults += 1;
    }
    assert_eq!(defaults, 11);
}

#[test]
fn fleet_overrides_follow_the_builder_rules_at_their_line() {
    assert_refused([(
        "[\"a\"]\nfleet = true\nfleet_quorum = 1\n",
        (
            3,
            "fleet_quorum must be at least 2, so that one instance never opens the fleet, got 1",
        ),
    )]);
    let c = applied(
        &Config::default(),
        "[\"a\"]\nfleet = true\nfleet_quorum = 4\n",
    )
    .unwrap()
    .unwrap();
    assert_eq!((c.fleet(), c.fleet_quorum()), (true, 4));
    let fleet = Config::builder().fleet(true).build().unwrap();
    let quorum_only = applied(&fleet, "[\"a\"]\nfleet_quorum = 3\n")
        .unwrap()
        .unwrap();
    assert_eq!((quorum_only.fleet(), quorum_only.fleet_quorum()), (true, 3));
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
            "[\"a\"]\nretries = 1\nretry_backoff_max = \"10ms\"\n",
            (
                3,
                "retry_backoff_max must be at least retry_backoff, got 10ms with retry_backoff 20ms",
            ),
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
fn a_negative_retry_floor_is_refused_at_its_line() {
    let problems = entries("[\"a\"]\nretries = 1\nretry_floor = -1\n").unwrap_err();
    let [(line, message)] = problems.as_slice() else {
        panic!("one problem: {problems:?}")
    };
    assert_eq!(*line, Some(3));
    assert!(message.contains("-1"), "{message}");
}

#[test]
fn a_retry_backoff_above_the_breakers_max_is_refused_at_its_line() {
    let capped = Config::builder()
        .retries(2)
        .retry_backoff_max(Duration::from_secs(1))
        .build()
        .unwrap();
    assert_eq!(
        applied(&capped, "[\"a\"]\nmin = 4\nretry_backoff = \"2s\"\n"),
        Err(vec![(
            3,
            "retry_backoff_max must be at least retry_backoff, got 1s with retry_backoff 2s"
                .to_owned()
        )])
    );
    let c = applied(
        &capped,
        "[\"a\"]\nretry_backoff_max = \"3s\"\nretry_floor = 0\n",
    )
    .unwrap()
    .unwrap();
    let policy = c.policy();
    assert_eq!(
        (policy.retry_backoff_max(), policy.retry_floor()),
        (Duration::from_secs(3), 0)
    );
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
        Err(vec![(
            3,
            "successes must be at most probes, got 3 with 2 probes".to_owned()
        )])
    );
}

#[test]
fn min_override_below_two_is_refused() {
    assert_eq!(
        applied(&Config::default(), "[\"a\"]\nmin = 1\n"),
        Err(vec![(2, "min must be at least 2, got 1".to_owned())])
    );
    let c = applied(&Config::default(), "[\"a\"]\nwindow = 1\nmin = 1\n")
        .unwrap()
        .unwrap();
    assert_eq!((c.window(), c.min_calls()), (Window::Count(1), 1));
}

#[test]
fn every_broken_rule_and_missing_need_of_a_table_is_reported_in_line_order() {
    let text = "[\"a\"]\nprobes = 0\nrate = 1.5\nmin = 30\nbuckets = 4\nretry_budget = 0.2\n";
    assert_eq!(
        applied(&Config::default(), text),
        Err(vec![
            (2, "probes must be at least 1, got 0".to_owned()),
            (3, "rate must be in (0, 1], got 1.5".to_owned()),
            (
                4,
                "min must be at most the count window, got 30 with a window of 20".to_owned()
            ),
            (
                5,
                "buckets needs a time window, which the breaker does not have".to_owned()
            ),
            (
                6,
                "retry_budget needs retries, which the breaker does not have".to_owned()
            ),
        ])
    );
}

#[test]
fn a_rule_measured_against_a_broken_one_is_not_reported_again() {
    assert_eq!(
        applied(&Config::default(), "[\"a\"]\nwindow = 0\nmin = 30\n"),
        Err(vec![(
            2,
            "window must be at least 1 call, got 0".to_owned()
        )])
    );
}

#[test]
fn throttle_overrides_follow_the_builder_rules_at_their_line() {
    assert_refused([
        (
            "[\"a\"]\nthrottle = 0.5\n",
            (2, "throttle must be finite and at least 1, got 0.5"),
        ),
        (
            "[\"a\"]\nthrottle = 2.0\nthrottle_max = 0.0\n",
            (3, "throttle_max must be in (0, 1], got 0"),
        ),
    ]);
    let throttled = Config::builder().throttle(2.0).build().unwrap();
    let c = applied(
        &throttled,
        "[\"a\"]\nthrottle_max = 0.5\nthrottle_window = \"30s\"\n",
    )
    .unwrap()
    .unwrap();
    let t = c.throttling().unwrap();
    assert_eq!(
        (t.factor(), t.max(), t.window()),
        (2.0, 0.5, Duration::from_secs(30))
    );
}
