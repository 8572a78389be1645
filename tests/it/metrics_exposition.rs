//! `breakerbox::metrics` (feature `prometheus`): the exposition text, line by line.

use std::sync::Arc;
use std::time::Duration;

use breakerbox::clock::ManualClock;
use breakerbox::{circuit_breaker, registry, Breaker, Classify, Config, Outcome, Rejected};

fn scrape(prometheus: &prometheus_client::registry::Registry) -> String {
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, prometheus).unwrap();
    text
}

/// The sample lines of the breaker `name` (and `key`), in exposition order.
fn samples(text: &str, labels: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with('#') && l.contains(labels))
        .map(str::to_owned)
        .collect()
}

fn registered(name: &str, clock: &ManualClock) -> Arc<Breaker> {
    let config = Config::builder()
        .count_window(4)
        .min_calls(4)
        .open_for(Duration::from_secs(5))
        .probes(1)
        .build()
        .unwrap();
    registry().register(Arc::new(Breaker::with_clock(name, config, clock.clone())))
}

#[test]
fn one_state_series_per_breaker_reads_the_current_state_after_a_full_cycle() {
    let mut prometheus = prometheus_client::registry::Registry::default();
    breakerbox::metrics::register(&mut prometheus);
    let clock = ManualClock::new();
    let b = registered("metrics::cycle", &clock);

    b.try_acquire().unwrap().ignore();
    drop(b.try_acquire().unwrap()); // cancelled
    for _ in 0..3 {
        b.try_acquire().unwrap().failure();
    }
    b.try_acquire().unwrap().success();
    let _ = b.try_acquire().unwrap_err();
    let _ = b.try_acquire().unwrap_err();
    let open = scrape(&prometheus);
    assert_eq!(
        samples(&open, "name=\"metrics::cycle\""),
        [
            "circuitbreaker_state{name=\"metrics::cycle\"} 1",
            "circuitbreaker_calls_total{name=\"metrics::cycle\",result=\"success\"} 1",
            "circuitbreaker_calls_total{name=\"metrics::cycle\",result=\"failure\"} 3",
            "circuitbreaker_calls_total{name=\"metrics::cycle\",result=\"ignored\"} 1",
            "circuitbreaker_calls_total{name=\"metrics::cycle\",result=\"cancelled\"} 1",
            "circuitbreaker_calls_total{name=\"metrics::cycle\",result=\"rejected\",reason=\"open\"} 2",
            "circuitbreaker_calls_total{name=\"metrics::cycle\",result=\"rejected\",reason=\"half_open_full\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::cycle\",result=\"rejected\",reason=\"forced_open\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::cycle\",result=\"rejected\",reason=\"throttled\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::cycle\",result=\"rejected\",reason=\"bulkhead\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::cycle\",result=\"rejected\",reason=\"fleet_open\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::cycle\",result=\"rejected\",reason=\"shed\"} 0",
            "circuitbreaker_failure_rate{name=\"metrics::cycle\"} 0.75",
            "circuitbreaker_failure_rate_threshold{name=\"metrics::cycle\"} 0.5",
            "circuitbreaker_state_transitions_total{name=\"metrics::cycle\",from_state=\"closed\",to_state=\"open\",reason=\"failure_rate\"} 1",
        ]
    );

    clock.advance(Duration::from_secs(5));
    b.try_acquire().unwrap().success(); // the probe closes it
    let closed = scrape(&prometheus);
    assert_eq!(
        samples(&closed, "name=\"metrics::cycle\""),
        [
            "circuitbreaker_state{name=\"metrics::cycle\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::cycle\",result=\"success\"} 2",
            "circuitbreaker_calls_total{name=\"metrics::cycle\",result=\"failure\"} 3",
            "circuitbreaker_calls_total{name=\"metrics::cycle\",result=\"ignored\"} 1",
            "circuitbreaker_calls_total{name=\"metrics::cycle\",result=\"cancelled\"} 1",
            "circuitbreaker_calls_total{name=\"metrics::cycle\",result=\"rejected\",reason=\"open\"} 2",
            "circuitbreaker_calls_total{name=\"metrics::cycle\",result=\"rejected\",reason=\"half_open_full\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::cycle\",result=\"rejected\",reason=\"forced_open\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::cycle\",result=\"rejected\",reason=\"throttled\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::cycle\",result=\"rejected\",reason=\"bulkhead\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::cycle\",result=\"rejected\",reason=\"fleet_open\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::cycle\",result=\"rejected\",reason=\"shed\"} 0",
            "circuitbreaker_failure_rate{name=\"metrics::cycle\"} 0.0",
            "circuitbreaker_failure_rate_threshold{name=\"metrics::cycle\"} 0.5",
            "circuitbreaker_state_transitions_total{name=\"metrics::cycle\",from_state=\"closed\",to_state=\"open\",reason=\"failure_rate\"} 1",
            "circuitbreaker_state_transitions_total{name=\"metrics::cycle\",from_state=\"open\",to_state=\"half_open\",reason=\"open_elapsed\"} 1",
            "circuitbreaker_state_transitions_total{name=\"metrics::cycle\",from_state=\"half_open\",to_state=\"closed\",reason=\"trial_passed\"} 1",
        ]
    );
}

#[test]
fn slow_call_rate_is_exported_once_the_window_is_judged() {
    let mut prometheus = prometheus_client::registry::Registry::default();
    breakerbox::metrics::register(&mut prometheus);
    let clock = ManualClock::new();
    let config = Config::builder()
        .count_window(4)
        .min_calls(4)
        .slow_calls(Duration::from_secs(1), 1.0)
        .build()
        .unwrap();
    let b = registry().register(Arc::new(Breaker::with_clock(
        "metrics::slow",
        config,
        clock.clone(),
    )));
    let slow = b.try_acquire().unwrap();
    clock.advance(Duration::from_secs(2));
    slow.success();
    for _ in 0..3 {
        b.try_acquire().unwrap().success();
    }
    let text = scrape(&prometheus);
    // Its calls are timed: their durations are exported too (`tests/metrics_durations.rs`).
    assert!(text.contains(
        "circuitbreaker_call_duration_seconds_count{name=\"metrics::slow\",result=\"success\"} 4\n"
    ));
    let mut samples = samples(&text, "name=\"metrics::slow\"");
    samples.retain(|l| !l.starts_with("circuitbreaker_call_duration_seconds"));
    assert_eq!(
        samples,
        [
            "circuitbreaker_state{name=\"metrics::slow\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::slow\",result=\"success\"} 4",
            "circuitbreaker_calls_total{name=\"metrics::slow\",result=\"failure\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::slow\",result=\"ignored\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::slow\",result=\"cancelled\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::slow\",result=\"rejected\",reason=\"open\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::slow\",result=\"rejected\",reason=\"half_open_full\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::slow\",result=\"rejected\",reason=\"forced_open\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::slow\",result=\"rejected\",reason=\"throttled\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::slow\",result=\"rejected\",reason=\"bulkhead\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::slow\",result=\"rejected\",reason=\"fleet_open\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::slow\",result=\"rejected\",reason=\"shed\"} 0",
            "circuitbreaker_failure_rate{name=\"metrics::slow\"} 0.0",
            "circuitbreaker_slow_call_rate{name=\"metrics::slow\"} 0.25",
            "circuitbreaker_failure_rate_threshold{name=\"metrics::slow\"} 0.5",
            "circuitbreaker_slow_call_rate_threshold{name=\"metrics::slow\"} 1.0",
        ]
    );
}

#[test]
fn forced_open_and_disabled_have_their_codes() {
    let mut prometheus = prometheus_client::registry::Registry::default();
    breakerbox::metrics::register(&mut prometheus);
    let clock = ManualClock::new();
    let b = registered("metrics::operator", &clock);
    b.force_open();
    let state_line = |text: &str| {
        samples(text, "name=\"metrics::operator\"")
            .into_iter()
            .find(|l| l.starts_with("circuitbreaker_state{"))
            .unwrap()
    };
    assert_eq!(
        state_line(&scrape(&prometheus)),
        "circuitbreaker_state{name=\"metrics::operator\"} 3"
    );
    b.disable();
    assert_eq!(
        state_line(&scrape(&prometheus)),
        "circuitbreaker_state{name=\"metrics::operator\"} 4"
    );
}

#[test]
fn descriptors_have_the_documented_names_and_types() {
    let text = breakerbox::metrics::text();
    for line in [
        "# TYPE circuitbreaker_state gauge",
        "# TYPE circuitbreaker_calls counter",
        "# TYPE circuitbreaker_failure_rate gauge",
        "# TYPE circuitbreaker_slow_call_rate gauge",
        "# TYPE circuitbreaker_failure_rate_threshold gauge",
        "# TYPE circuitbreaker_slow_call_rate_threshold gauge",
        "# TYPE circuitbreaker_shed_probability gauge",
        "# TYPE circuitbreaker_state_transitions counter",
        "# TYPE circuitbreaker_keys_evicted counter",
    ] {
        assert_eq!(text.lines().filter(|l| *l == line).count(), 1, "{line}");
    }
    assert!(text.ends_with("# EOF\n"));
}

#[derive(Debug)]
struct Down;

impl Classify for Down {
    fn classify(&self) -> Outcome {
        Outcome::Failure
    }
}

impl From<Rejected> for Down {
    fn from(_: Rejected) -> Self {
        Down
    }
}

#[circuit_breaker(name = "metrics::replica", key = host, window = 2, min = 2, open = "5s")]
async fn ping(host: &str, up: bool) -> Result<(), Down> {
    if up {
        Ok(())
    } else {
        Err(Down)
    }
}

#[tokio::test(start_paused = true)]
async fn keyed_breakers_created_after_registering_get_a_key_label_and_their_transitions() {
    let mut prometheus = prometheus_client::registry::Registry::default();
    breakerbox::metrics::register(&mut prometheus);
    for _ in 0..2 {
        assert!(ping("10.1.0.1:80", false).await.is_err());
    }
    ping("10.1.0.2:80", true).await.unwrap();
    let text = scrape(&prometheus);
    assert_eq!(
        samples(&text, "key=\"10.1.0.1:80\""),
        [
            "circuitbreaker_state{name=\"metrics::replica\",key=\"10.1.0.1:80\"} 1",
            "circuitbreaker_calls_total{name=\"metrics::replica\",key=\"10.1.0.1:80\",result=\"success\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::replica\",key=\"10.1.0.1:80\",result=\"failure\"} 2",
            "circuitbreaker_calls_total{name=\"metrics::replica\",key=\"10.1.0.1:80\",result=\"ignored\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::replica\",key=\"10.1.0.1:80\",result=\"cancelled\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::replica\",key=\"10.1.0.1:80\",result=\"rejected\",reason=\"open\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::replica\",key=\"10.1.0.1:80\",result=\"rejected\",reason=\"half_open_full\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::replica\",key=\"10.1.0.1:80\",result=\"rejected\",reason=\"forced_open\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::replica\",key=\"10.1.0.1:80\",result=\"rejected\",reason=\"throttled\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::replica\",key=\"10.1.0.1:80\",result=\"rejected\",reason=\"bulkhead\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::replica\",key=\"10.1.0.1:80\",result=\"rejected\",reason=\"fleet_open\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::replica\",key=\"10.1.0.1:80\",result=\"rejected\",reason=\"shed\"} 0",
            "circuitbreaker_failure_rate{name=\"metrics::replica\",key=\"10.1.0.1:80\"} 1.0",
            "circuitbreaker_failure_rate_threshold{name=\"metrics::replica\",key=\"10.1.0.1:80\"} 0.5",
            "circuitbreaker_state_transitions_total{name=\"metrics::replica\",key=\"10.1.0.1:80\",from_state=\"closed\",to_state=\"open\",reason=\"failure_rate\"} 1",
        ]
    );
    assert_eq!(
        samples(&text, "key=\"10.1.0.2:80\""),
        [
            "circuitbreaker_state{name=\"metrics::replica\",key=\"10.1.0.2:80\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::replica\",key=\"10.1.0.2:80\",result=\"success\"} 1",
            "circuitbreaker_calls_total{name=\"metrics::replica\",key=\"10.1.0.2:80\",result=\"failure\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::replica\",key=\"10.1.0.2:80\",result=\"ignored\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::replica\",key=\"10.1.0.2:80\",result=\"cancelled\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::replica\",key=\"10.1.0.2:80\",result=\"rejected\",reason=\"open\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::replica\",key=\"10.1.0.2:80\",result=\"rejected\",reason=\"half_open_full\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::replica\",key=\"10.1.0.2:80\",result=\"rejected\",reason=\"forced_open\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::replica\",key=\"10.1.0.2:80\",result=\"rejected\",reason=\"throttled\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::replica\",key=\"10.1.0.2:80\",result=\"rejected\",reason=\"bulkhead\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::replica\",key=\"10.1.0.2:80\",result=\"rejected\",reason=\"fleet_open\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::replica\",key=\"10.1.0.2:80\",result=\"rejected\",reason=\"shed\"} 0",
            "circuitbreaker_failure_rate{name=\"metrics::replica\",key=\"10.1.0.2:80\"} 0.0",
            "circuitbreaker_failure_rate_threshold{name=\"metrics::replica\",key=\"10.1.0.2:80\"} 0.5",
        ]
    );
}

#[test]
fn a_registry_of_its_own_is_exported_and_counted_apart_from_the_global_one() {
    static OWN: std::sync::OnceLock<breakerbox::registry::Registry> = std::sync::OnceLock::new();
    let own = OWN.get_or_init(breakerbox::registry::Registry::default);
    let mut own_prometheus = prometheus_client::registry::Registry::default();
    own_prometheus.register_collector(Box::new(breakerbox::metrics::BreakerCollector::of(own)));
    let mut global_prometheus = prometheus_client::registry::Registry::default();
    breakerbox::metrics::register(&mut global_prometheus);

    // Joins after both collectors exist: only its registry's hook may count its transitions.
    let config = Config::builder().count_window(1).build().unwrap();
    let b = own.register(Arc::new(Breaker::new("metrics::own", config)));
    b.try_acquire().unwrap().failure();

    let labels = "name=\"metrics::own\"";
    assert_eq!(
        samples(&scrape(&own_prometheus), labels),
        [
            "circuitbreaker_state{name=\"metrics::own\"} 1",
            "circuitbreaker_calls_total{name=\"metrics::own\",result=\"success\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::own\",result=\"failure\"} 1",
            "circuitbreaker_calls_total{name=\"metrics::own\",result=\"ignored\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::own\",result=\"cancelled\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::own\",result=\"rejected\",reason=\"open\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::own\",result=\"rejected\",reason=\"half_open_full\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::own\",result=\"rejected\",reason=\"forced_open\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::own\",result=\"rejected\",reason=\"throttled\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::own\",result=\"rejected\",reason=\"bulkhead\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::own\",result=\"rejected\",reason=\"fleet_open\"} 0",
            "circuitbreaker_calls_total{name=\"metrics::own\",result=\"rejected\",reason=\"shed\"} 0",
            "circuitbreaker_failure_rate{name=\"metrics::own\"} 1.0",
            "circuitbreaker_failure_rate_threshold{name=\"metrics::own\"} 0.5",
            "circuitbreaker_state_transitions_total{name=\"metrics::own\",from_state=\"closed\",to_state=\"open\",reason=\"failure_rate\"} 1",
        ]
    );
    assert_eq!(
        samples(&scrape(&global_prometheus), labels),
        Vec::<String>::new()
    );
    assert!(registry().get("metrics::own").is_none());
}

#[tokio::test(start_paused = true)]
async fn the_call_policy_the_bulkhead_and_a_shadow_have_their_series() {
    // A registry of its own: whether any breaker is a shadow is the registry's, and other
    // tests' shadows are in the global one.
    let own: &'static breakerbox::registry::Registry = Box::leak(Box::default());
    let mut prometheus = prometheus_client::registry::Registry::default();
    prometheus.register_collector(Box::new(breakerbox::metrics::BreakerCollector::of(own)));
    let config = Config::builder()
        .count_window(20)
        .retries(1)
        .retry_backoff(Duration::ZERO)
        .retry_budget(0.0)
        .retry_floor(0)
        .max_concurrent(1)
        .build()
        .unwrap();
    let b = own.register(Arc::new(Breaker::new("metrics::policy", config)));
    let down = || async { Err::<(), _>(std::io::Error::from(std::io::ErrorKind::TimedOut)) };
    // The budget allows no retry: the failure comes back at once.
    assert!(matches!(b.run(down).await, Ok(Err(_))));
    let held = b.try_acquire().unwrap();
    let full = b.try_acquire().unwrap_err();
    assert_eq!(full.reason(), breakerbox::RejectReason::Bulkhead);
    let text = scrape(&prometheus);
    let lines = samples(&text, "name=\"metrics::policy\"");
    for expected in [
        "circuitbreaker_calls_total{name=\"metrics::policy\",result=\"rejected\",reason=\"bulkhead\"} 1",
        "circuitbreaker_calls_total{name=\"metrics::policy\",result=\"rejected\",reason=\"open\"} 0",
        "circuitbreaker_retries_total{name=\"metrics::policy\"} 0",
        "circuitbreaker_retry_budget_exhausted_total{name=\"metrics::policy\"} 1",
        "circuitbreaker_in_flight{name=\"metrics::policy\"} 1",
    ] {
        assert!(lines.iter().any(|l| l == expected), "{expected} in {lines:#?}");
    }
    assert!(!text.contains("shadow_rejected"), "no shadow, no series");
    held.success();

    let shadow = Config::builder()
        .count_window(1)
        .shadow(true)
        .build()
        .unwrap();
    let s = own.register(Arc::new(Breaker::new("metrics::shadow", shadow)));
    s.try_acquire().unwrap().failure();
    s.try_acquire().unwrap().success();
    let text = scrape(&prometheus);
    let lines = samples(&text, "name=\"metrics::shadow\"");
    let expected =
        "circuitbreaker_calls_total{name=\"metrics::shadow\",result=\"shadow_rejected\"} 1";
    assert!(lines.iter().any(|l| l == expected), "{lines:#?}");
    assert!(!text.contains("circuitbreaker_in_flight{name=\"metrics::shadow\""));
    assert!(!text.contains("circuitbreaker_retries_total{name=\"metrics::shadow\""));
}

#[test]
fn transitions_are_counted_by_reason_a_manual_open_period_among_them() {
    let mut prometheus = prometheus_client::registry::Registry::default();
    breakerbox::metrics::register(&mut prometheus);
    let clock = ManualClock::new();
    let b = registered("metrics::reasons", &clock);
    b.open_for(Duration::from_secs(30));
    clock.advance(Duration::from_secs(30));
    b.try_acquire().unwrap().failure(); // the probe fails
    b.force_open();
    b.reset();
    let text = scrape(&prometheus);
    let transitions: Vec<String> = samples(&text, "name=\"metrics::reasons\"")
        .into_iter()
        .filter(|l| l.starts_with("circuitbreaker_state_transitions_total"))
        .collect();
    let labels = "circuitbreaker_state_transitions_total{name=\"metrics::reasons\"";
    assert_eq!(
        transitions,
        [
            format!("{labels},from_state=\"closed\",to_state=\"open\",reason=\"manual_open\"}} 1"),
            format!(
                "{labels},from_state=\"open\",to_state=\"half_open\",reason=\"open_elapsed\"}} 1"
            ),
            format!("{labels},from_state=\"open\",to_state=\"forced_open\",reason=\"forced\"}} 1"),
            format!(
                "{labels},from_state=\"half_open\",to_state=\"open\",reason=\"probe_failed\"}} 1"
            ),
            format!("{labels},from_state=\"forced_open\",to_state=\"closed\",reason=\"reset\"}} 1"),
        ]
    );
}

#[test]
fn transitions_before_the_first_scrape_are_counted_from_the_registry_s_creation() {
    // A registry of its own, so that no other test's collector made it count already.
    let own: &'static breakerbox::registry::Registry = Box::leak(Box::default());
    let clock = ManualClock::new();
    let config = Config::builder()
        .count_window(2)
        .min_calls(2)
        .probes(1)
        .build()
        .unwrap();
    let b = own.register(Arc::new(Breaker::with_clock(
        "metrics::early",
        config,
        clock.clone(),
    )));
    // Opens, half-opens, reopens on the failed probe, half-opens again: four transitions,
    // all before any collector exists.
    b.try_acquire().unwrap().failure();
    b.try_acquire().unwrap().failure();
    for _ in 0..2 {
        clock.advance(Duration::from_secs(5));
        let probe = b.try_acquire().unwrap();
        if b.snapshot().totals.failure == 2 {
            probe.failure();
        } else {
            probe.success();
        }
    }
    assert_eq!(b.state(), breakerbox::State::Closed);

    let text = breakerbox::metrics::text_of(breakerbox::metrics::BreakerCollector::of(own));
    let transitions: Vec<String> = samples(&text, "circuitbreaker_state_transitions_total")
        .into_iter()
        .filter(|l| l.contains("metrics::early"))
        .collect();
    let line = |from: &str, to: &str, reason: &str, n: u32| {
        format!(
            "circuitbreaker_state_transitions_total{{name=\"metrics::early\",from_state=\"{from}\",to_state=\"{to}\",reason=\"{reason}\"}} {n}"
        )
    };
    assert_eq!(
        transitions,
        [
            line("closed", "open", "failure_rate", 1),
            line("open", "half_open", "open_elapsed", 2),
            line("half_open", "closed", "trial_passed", 1),
            line("half_open", "open", "probe_failed", 1),
        ]
    );
}

#[test]
fn text_of_a_collector_that_times_every_call_has_the_durations() {
    let own: &'static breakerbox::registry::Registry = Box::leak(Box::default());
    let b = own.register(Arc::new(Breaker::new(
        "metrics::text_timed",
        Config::default(),
    )));
    let collector = breakerbox::metrics::BreakerCollector::of(own).time_every_call();
    b.try_acquire().unwrap().success();
    let text = breakerbox::metrics::text_of(collector);
    assert!(
        text.contains(
            "circuitbreaker_call_duration_seconds_count{name=\"metrics::text_timed\",result=\"success\"} 1\n"
        ),
        "{text}"
    );
}

#[test]
fn the_rates_thresholds_are_exported_beside_the_rates() {
    let own: &'static breakerbox::registry::Registry = Box::leak(Box::default());
    let slow = Config::builder()
        .failure_rate(0.25)
        .slow_calls(Duration::from_millis(800), 0.75)
        .build()
        .unwrap();
    own.register(Arc::new(Breaker::new("metrics::slow", slow)));
    own.register(Arc::new(Breaker::new("metrics::plain", Config::default())));
    let text = breakerbox::metrics::text_of(breakerbox::metrics::BreakerCollector::of(own));
    assert_eq!(
        samples(&text, "_threshold{"),
        [
            "circuitbreaker_failure_rate_threshold{name=\"metrics::plain\"} 0.5",
            "circuitbreaker_failure_rate_threshold{name=\"metrics::slow\"} 0.25",
            "circuitbreaker_slow_call_rate_threshold{name=\"metrics::slow\"} 0.75",
        ]
    );
}

#[test]
fn a_throttled_breaker_exports_its_shed_probability() {
    let own: &'static breakerbox::registry::Registry = Box::leak(Box::default());
    let clock = ManualClock::new();
    let throttled = Config::builder()
        .throttle(2.0)
        .min_calls(10)
        .build()
        .unwrap();
    let b = own.register(Arc::new(Breaker::with_clock(
        "metrics::throttled",
        throttled,
        clock.clone(),
    )));
    own.register(Arc::new(Breaker::new(
        "metrics::unthrottled",
        Config::default(),
    )));
    let probability = || {
        let text = breakerbox::metrics::text_of(breakerbox::metrics::BreakerCollector::of(own));
        samples(&text, "circuitbreaker_shed_probability{")
    };
    assert_eq!(
        probability(),
        ["circuitbreaker_shed_probability{name=\"metrics::throttled\"} 0.0"]
    );
    // Seven calls asked, one answered well: (7 - 2 * 1) / (7 + 1).
    let mut calls: Vec<_> = (0..7).map(|_| b.try_acquire().unwrap()).collect();
    calls.pop().unwrap().success();
    calls.into_iter().for_each(|call| call.failure());
    assert_eq!(
        probability(),
        ["circuitbreaker_shed_probability{name=\"metrics::throttled\"} 0.625"]
    );
    // OPEN sheds nothing: it rejects.
    b.force_open();
    assert_eq!(
        probability(),
        ["circuitbreaker_shed_probability{name=\"metrics::throttled\"} 0.0"]
    );
}
