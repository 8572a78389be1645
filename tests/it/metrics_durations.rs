//! `circuitbreaker_call_duration_seconds`: the histogram of call durations in the text
//! exposition after scripted calls on a manual clock, bucket by bucket.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use breakerbox::clock::ManualClock;
use breakerbox::metrics::BreakerCollector;
use breakerbox::{registry::Registry, Breaker, Config};

/// The text exposition of `collector`'s registry.
fn scrape(collector: BreakerCollector) -> String {
    let mut prometheus = prometheus_client::registry::Registry::default();
    prometheus.register_collector(Box::new(collector));
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &prometheus).unwrap();
    text
}

/// The histogram of the breaker `name` for `result` in `text`: its sum as written, its
/// count, and the count of each bucket (cumulative, as exposed), `+Inf` last; `None` when the
/// breaker has no such series.
fn histogram(text: &str, name: &str, result: &str) -> Option<(String, u64, Vec<u64>)> {
    let labels = format!("name=\"{name}\",result=\"{result}\"}}");
    let value = |prefix: &str| {
        let line = text
            .lines()
            .find(|l| l.starts_with(prefix) && l.contains(&format!("{labels} ")))?;
        Some(line.rsplit(' ').next()?.to_owned())
    };
    let sum = value("circuitbreaker_call_duration_seconds_sum{")?;
    let count = value("circuitbreaker_call_duration_seconds_count{")?
        .parse()
        .unwrap();
    let buckets = text
        .lines()
        .filter(|l| l.starts_with("circuitbreaker_call_duration_seconds_bucket{"))
        .filter(|l| l.contains(&labels))
        .map(|l| l.rsplit(' ').next().unwrap().parse().unwrap())
        .collect();
    Some((sum, count, buckets))
}

/// Runs one call that takes `micros` on `clock` and ends as `end` says (`cancelled`: its
/// permit is dropped).
fn call(b: &Breaker, clock: &ManualClock, micros: u64, end: &str) {
    let permit = b.try_acquire().unwrap();
    clock.advance(Duration::from_micros(micros));
    match end {
        "success" => permit.success(),
        "failure" => permit.failure(),
        "ignored" => permit.ignore(),
        _ => drop(permit),
    }
}

#[test]
fn a_breaker_that_times_its_calls_exports_their_durations_by_result() {
    static OWN: OnceLock<Registry> = OnceLock::new();
    let own = OWN.get_or_init(Registry::default);
    let clock = ManualClock::new();
    // Slow calls are judged: the breaker times its calls by itself.
    let config = Config::builder()
        .slow_calls(Duration::from_secs(2), 1.0)
        .count_window(100)
        .min_calls(100)
        .build()
        .unwrap();
    let b = own.register(Arc::new(Breaker::with_clock(
        "metrics::timed",
        config,
        clock.clone(),
    )));
    let collector = BreakerCollector::of(own);
    call(&b, &clock, 781, "success"); // 0.78125 ms: the first bucket
    call(&b, &clock, 31_250, "success"); // 31.25 ms: (0.025, 0.05]
    call(&b, &clock, 1_500_000, "failure"); // 1.5 s: (1, 2.5]
    call(&b, &clock, 12_000_000, "cancelled"); // 12 s: above the last bucket
    b.force_open();
    let _ = b.try_acquire(); // rejected: no duration
    let text = scrape(collector);
    assert!(text.contains("# TYPE circuitbreaker_call_duration_seconds histogram\n"));
    assert!(text.contains("# UNIT circuitbreaker_call_duration_seconds seconds\n"));
    let le: Vec<String> = text
        .lines()
        .filter(|l| l.contains("name=\"metrics::timed\",result=\"success\""))
        .filter_map(|l| l.strip_prefix("circuitbreaker_call_duration_seconds_bucket{le=\""))
        .map(|l| l.split('"').next().unwrap().to_owned())
        .collect();
    assert_eq!(
        le,
        [
            "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1.0",
            "2.5", "5.0", "10.0", "+Inf"
        ]
    );
    let h = |result| histogram(&text, "metrics::timed", result).unwrap();
    assert_eq!(
        h("success"),
        (
            "0.032031".into(),
            2,
            vec![1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2]
        )
    );
    assert_eq!(
        h("failure"),
        (
            "1.5".into(),
            1,
            vec![0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1]
        )
    );
    assert_eq!(h("ignored"), ("0.0".into(), 0, vec![0; 14]));
    assert_eq!(
        h("cancelled"),
        (
            "12.0".into(),
            1,
            vec![0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
        )
    );
}

#[test]
fn an_untimed_breaker_has_no_histogram_until_a_collector_times_every_call() {
    static OWN: OnceLock<Registry> = OnceLock::new();
    let own = OWN.get_or_init(Registry::default);
    let clock = ManualClock::new();
    let b = own.register(Arc::new(Breaker::with_clock(
        "metrics::untimed",
        Config::default(),
        clock.clone(),
    )));
    call(&b, &clock, 4_000, "success");
    assert_eq!(
        histogram(
            &scrape(BreakerCollector::of(own)),
            "metrics::untimed",
            "success"
        ),
        None
    );

    let timing = BreakerCollector::of(own).time_every_call();
    call(&b, &clock, 3_000, "ignored"); // 3 ms: (0.0025, 0.005]
    call(&b, &clock, 600_000, "success"); // 600 ms: (0.5, 1]
    let text = scrape(timing);
    assert_eq!(
        histogram(&text, "metrics::untimed", "success"),
        Some((
            "0.6".into(),
            1,
            vec![0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1]
        ))
    );
    assert_eq!(
        histogram(&text, "metrics::untimed", "ignored"),
        Some((
            "0.003".into(),
            1,
            vec![0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
        ))
    );
    // A breaker that joins later is timed from its first call.
    let late = own.register(Arc::new(Breaker::with_clock(
        "metrics::late",
        Config::default(),
        clock.clone(),
    )));
    call(&late, &clock, 2_000, "failure");
    assert_eq!(
        histogram(
            &scrape(BreakerCollector::of(own)),
            "metrics::late",
            "failure"
        ),
        Some((
            "0.002".into(),
            1,
            vec![0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
        ))
    );
}
