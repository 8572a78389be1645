//! Configuration defaults and every validation rule, with the exact messages users see.

use std::time::Duration;

use breakerbox::{config::ConfigBuilder, config::SlowCalls, config::Window, Config};

fn error(builder: ConfigBuilder) -> (&'static str, String) {
    let err = builder.build().unwrap_err();
    (err.field(), err.to_string())
}

#[test]
fn defaults_follow_the_seed_design() {
    let c = Config::default();
    assert_eq!(c.window(), Window::Count(20));
    assert_eq!(c.min_calls(), 10);
    assert_eq!(c.failure_rate(), 0.5);
    assert_eq!(c.slow_calls(), None);
    assert_eq!(c.open_for(), Duration::from_secs(5));
    assert_eq!(c.probes(), 3);
    assert_eq!(Config::builder().build().unwrap(), c);
}

#[test]
fn min_calls_defaults_to_half_the_count_window_at_least_two_or_ten() {
    let min = |b: ConfigBuilder| b.build().unwrap().min_calls();
    assert_eq!(min(Config::builder().count_window(20)), 10);
    assert_eq!(min(Config::builder().count_window(7)), 3);
    assert_eq!(min(Config::builder().count_window(5)), 2);
    assert_eq!(min(Config::builder().count_window(3)), 2);
    assert_eq!(min(Config::builder().count_window(2)), 2);
    assert_eq!(min(Config::builder().count_window(1)), 1);
    assert_eq!(
        min(Config::builder().time_window(Duration::from_secs(10), 10)),
        10
    );
}

#[test]
fn every_setter_is_kept() {
    let c = Config::builder()
        .time_window(Duration::from_secs(30), 6)
        .min_calls(7)
        .failure_rate(0.25)
        .slow_calls(Duration::from_millis(800), 0.8)
        .open_for(Duration::from_secs(2))
        .probes(1)
        .build()
        .unwrap();
    assert_eq!(
        c.window(),
        Window::Time {
            span: Duration::from_secs(30),
            buckets: 6
        }
    );
    assert_eq!((c.min_calls(), c.failure_rate(), c.probes()), (7, 0.25, 1));
    assert_eq!(
        c.slow_calls(),
        Some(SlowCalls {
            threshold: Duration::from_millis(800),
            rate: 0.8
        })
    );
    assert_eq!(c.open_for(), Duration::from_secs(2));
}

#[test]
fn bad_values_name_the_field_the_rule_and_the_value() {
    let b = Config::builder;
    let cases: Vec<(ConfigBuilder, &str, &str)> = vec![
        (
            b().count_window(0),
            "window",
            "count window must be at least 1 call, got 0",
        ),
        (
            b().time_window(Duration::ZERO, 10),
            "window",
            "time window span must be greater than zero, got 0ns",
        ),
        (
            b().time_window(Duration::from_secs(1), 0),
            "buckets",
            "buckets must be at least 1, got 0",
        ),
        (
            b().time_window(Duration::from_nanos(5), 10),
            "buckets",
            "buckets must not exceed the window span in nanoseconds, got 10",
        ),
        (
            b().count_window(breakerbox::config::MAX_COUNT_WINDOW + 1),
            "window",
            "count window must be at most 1048576 calls, got 1048577",
        ),
        (
            b().time_window(Duration::from_secs(10), 4097),
            "buckets",
            "buckets must be at most 4096, got 4097",
        ),
        (
            b().min_calls(0),
            "min_calls",
            "min_calls must be at least 2, got 0",
        ),
        (
            b().min_calls(1),
            "min_calls",
            "min_calls must be at least 2, got 1",
        ),
        (
            b().count_window(2).min_calls(1),
            "min_calls",
            "min_calls must be at least 2, got 1",
        ),
        (
            b().time_window(Duration::from_secs(10), 10).min_calls(1),
            "min_calls",
            "min_calls must be at least 2, got 1",
        ),
        (
            b().count_window(1).min_calls(0),
            "min_calls",
            "min_calls must be 1 with a count window of 1, got 0",
        ),
        (
            b().count_window(1).min_calls(2),
            "min_calls",
            "min_calls must be at most the count window, got 2 with a window of 1",
        ),
        (
            b().count_window(20).min_calls(21),
            "min_calls",
            "min_calls must be at most the count window, got 21 with a window of 20",
        ),
        (
            b().failure_rate(0.0),
            "failure_rate",
            "failure_rate must be in (0, 1], got 0",
        ),
        (
            b().failure_rate(1.5),
            "failure_rate",
            "failure_rate must be in (0, 1], got 1.5",
        ),
        (
            b().failure_rate(f64::NAN),
            "failure_rate",
            "failure_rate must be in (0, 1], got NaN",
        ),
        (
            b().failure_rate(-0.5),
            "failure_rate",
            "failure_rate must be in (0, 1], got -0.5",
        ),
        (
            b().slow_calls(Duration::ZERO, 0.5),
            "slow_calls.threshold",
            "slow_calls threshold must be greater than zero, got 0ns",
        ),
        (
            b().slow_calls(Duration::from_secs(1), 1.01),
            "slow_calls.rate",
            "slow_calls rate must be in (0, 1], got 1.01",
        ),
        (
            b().slow_calls(Duration::from_secs(1), f64::NAN),
            "slow_calls.rate",
            "slow_calls rate must be in (0, 1], got NaN",
        ),
        (
            b().open_for(Duration::ZERO),
            "open_for",
            "open_for must be greater than zero, got 0ns",
        ),
        (b().probes(0), "probes", "probes must be at least 1, got 0"),
        (
            b().open_backoff(0.5, Duration::from_secs(60)),
            "open_backoff.factor",
            "open_backoff factor must be finite and at least 1, got 0.5",
        ),
        (
            b().open_backoff(f64::NAN, Duration::from_secs(60)),
            "open_backoff.factor",
            "open_backoff factor must be finite and at least 1, got NaN",
        ),
        (
            b().open_backoff(f64::INFINITY, Duration::from_secs(60)),
            "open_backoff.factor",
            "open_backoff factor must be finite and at least 1, got inf",
        ),
        (
            b().open_backoff(2.0, Duration::from_secs(1)),
            "open_backoff.max",
            "open_backoff max must be at least the open duration, got 1s with open_for 5s",
        ),
        (
            b().ramp_up(&[], Duration::from_secs(5)),
            "ramp_up",
            "ramp_up must have at least one step, got []",
        ),
        (
            b().ramp_up(&[10, 10, 100], Duration::from_secs(5)),
            "ramp_up",
            "ramp_up percentages must rise strictly, got [10, 10, 100]",
        ),
        (
            b().ramp_up(&[0, 100], Duration::from_secs(5)),
            "ramp_up",
            "ramp_up percentages must be in 1..=100, got [0, 100]",
        ),
        (
            b().ramp_up(&[50, 150], Duration::from_secs(5)),
            "ramp_up",
            "ramp_up percentages must be in 1..=100, got [50, 150]",
        ),
        (
            b().ramp_up(&[10, 60], Duration::from_secs(5)),
            "ramp_up",
            "ramp_up must end at 100, got [10, 60]",
        ),
        (
            b().ramp_up(
                &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 100],
                Duration::from_secs(1),
            ),
            "ramp_up",
            "ramp_up must have at most 16 steps, got 17",
        ),
        (
            b().ramp_up(&[50, 100], Duration::ZERO),
            "ramp_up.step",
            "ramp_up step must be greater than zero, got 0ns",
        ),
        (
            b().ramp_up(&[50, 100], Duration::from_secs(1))
                .ramp_latency_guard(1.0),
            "ramp_latency_guard",
            "ramp_latency_guard factor must be finite and greater than 1, got 1",
        ),
        (
            b().ramp_up(&[50, 100], Duration::from_secs(1))
                .ramp_latency_guard(f64::INFINITY),
            "ramp_latency_guard",
            "ramp_latency_guard factor must be finite and greater than 1, got inf",
        ),
        (
            b().failure_rate(f64::INFINITY),
            "failure_rate",
            "failure_rate must be in (0, 1], got inf",
        ),
        (
            b().slow_calls(Duration::from_secs(1), f64::NEG_INFINITY),
            "slow_calls.rate",
            "slow_calls rate must be in (0, 1], got -inf",
        ),
        (
            b().successes(0),
            "successes",
            "successes must be at least 1, got 0",
        ),
        (
            b().probes(2).successes(3),
            "successes",
            "successes must be at most probes, got 3 with 2 probes",
        ),
        (
            b().successes(4),
            "successes",
            "successes must be at most probes, got 4 with 3 probes",
        ),
        (
            b().ramp_latency_guard(3.0),
            "ramp_latency_guard",
            "ramp_latency_guard needs ramp_up, got 3",
        ),
    ];
    for (builder, field, message) in cases {
        assert_eq!(error(builder), (field, message.to_string()));
    }
}

#[test]
fn one_call_decides_only_in_a_count_window_of_one() {
    let c = Config::builder()
        .count_window(1)
        .min_calls(1)
        .build()
        .unwrap();
    assert_eq!((c.window(), c.min_calls()), (Window::Count(1), 1));
    let c = Config::builder()
        .count_window(2)
        .min_calls(2)
        .build()
        .unwrap();
    assert_eq!(c.min_calls(), 2);
}

#[test]
fn successes_default_to_probes_and_follow_them_until_set() {
    let c = Config::builder().probes(5).build().unwrap();
    assert_eq!((c.probes(), c.successes()), (5, 5));
    let fewer = c.to_builder().probes(2).build().unwrap();
    assert_eq!((fewer.probes(), fewer.successes()), (2, 2));

    let set = Config::builder().probes(5).successes(2).build().unwrap();
    assert_eq!((set.probes(), set.successes()), (5, 2));
    let more = set.to_builder().probes(8).build().unwrap();
    assert_eq!((more.probes(), more.successes()), (8, 2));
    let (field, message) = error(set.to_builder().probes(1));
    assert_eq!(
        (field, message.as_str()),
        (
            "successes",
            "successes must be at most probes, got 2 with 1 probes"
        )
    );
}

#[test]
fn min_calls_may_exceed_nothing_with_a_time_window() {
    let c = Config::builder()
        .time_window(Duration::from_secs(10), 10)
        .min_calls(1_000)
        .build()
        .unwrap();
    assert_eq!(c.min_calls(), 1_000);
}

#[test]
fn extreme_values_are_accepted_without_panics() {
    let largest = Config::builder()
        .count_window(breakerbox::config::MAX_COUNT_WINDOW)
        .min_calls(2)
        .open_for(Duration::MAX)
        .build()
        .unwrap();
    let b = breakerbox::Breaker::new("extreme", largest);
    b.try_acquire().unwrap().failure();
    b.try_acquire().unwrap().failure();
    let rejected = b.try_acquire().unwrap_err();
    // An open period of `Duration::MAX` is announced as the longest a rejection tells: u64
    // nanoseconds, some 584 years.
    assert_eq!(
        rejected.retry_after(),
        Some(Duration::from_nanos(u64::MAX - 1))
    );

    let widest = Config::builder()
        .time_window(Duration::MAX, breakerbox::config::MAX_BUCKETS)
        .min_calls(2)
        .build()
        .unwrap();
    let b = breakerbox::Breaker::new("widest", widest);
    b.try_acquire().unwrap().failure();
    assert_eq!(b.snapshot().failures, 1);
}

#[test]
fn config_is_const_constructible() {
    const CONFIG: Config = match Config::builder().count_window(8).probes(2).build() {
        Ok(c) => c,
        Err(_) => panic!("invalid"),
    };
    assert_eq!((CONFIG.window(), CONFIG.min_calls()), (Window::Count(8), 4));
}
