//! The replay tuner on traces with a known outage, on one without, and on the shipped trace.

use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use breaker::overrides::Overrides;
use breaker::recording::{CallOutcome, RecordedCall, Recording};
use breaker::{Breaker, Config, Outcome, Registry};
use breaker_workspace::simulation::{classic, record, Scenario};
use breaker_workspace::tune::search::{Spec, WindowSpec};
use breaker_workspace::tune::{tune, Tuning};

const RATE: u64 = 50;

/// Every call of `seconds` at `RATE` a second, recorded without a breaker in front: 10 to
/// 20 ms, 1% failing; from `outage.start` to `outage.end` seconds, every call fails in 20 ms.
fn trace(seconds: u64, outage: Option<Range<u64>>) -> Recording {
    let mut random = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move |n: u64| {
        random ^= random << 13;
        random ^= random >> 7;
        random ^= random << 17;
        random % n
    };
    (0..seconds * RATE)
        .map(|i| {
            let start = Duration::from_micros(i * 1_000_000 / RATE + next(1_000));
            let sick = outage
                .as_ref()
                .is_some_and(|o| o.contains(&start.as_secs()));
            let (latency, failed) = if sick {
                (Duration::from_millis(20), true)
            } else {
                (Duration::from_micros(10_000 + next(10_000)), next(100) == 0)
            };
            RecordedCall {
                start,
                latency,
                outcome: CallOutcome::Completed(if failed {
                    Outcome::Failure
                } else {
                    Outcome::Success
                }),
            }
        })
        .collect()
}

/// Completed calls a window of `spec` holds at most, at `RATE` calls a second.
fn window_calls(spec: &Spec) -> u64 {
    match spec.window {
        WindowSpec::Count(n) => u64::from(n),
        WindowSpec::Time(secs) => secs * RATE,
    }
}

fn tuned(recording: &Recording) -> Tuning {
    tune(recording, Spec::DEFAULT)
}

#[test]
fn the_recommendation_detects_a_known_outage_within_a_window_and_never_opens_while_healthy() {
    let tuning = tuned(&trace(60, Some(20..35)));
    assert_eq!(
        tuning.health.outages,
        [Duration::from_secs(20)..Duration::from_secs(35)]
    );
    let spec = tuning.recommendation();
    let scores = tuning.recommended_scores();
    assert!(tuning.recommended.is_some(), "{:?}", tuning.baseline_scores);
    assert_eq!(
        (scores.missed, scores.false_opens),
        (0, 0),
        "{spec}: {scores:?}"
    );
    assert!(
        scores.detection_calls <= window_calls(&spec),
        "{spec}: {} calls of the outage judged before it opened",
        scores.detection_calls
    );
    let defaults = tuning.baseline_scores;
    assert!(
        scores.cost() < defaults.cost(),
        "{spec}: {scores:?} against the defaults' {defaults:?}"
    );
    assert!(
        scores.sent_into_outage <= defaults.sent_into_outage,
        "{scores:?} vs {defaults:?}"
    );
    assert!(
        scores.recovery <= defaults.recovery,
        "{scores:?} vs {defaults:?}"
    );
    // The recommendation is on the Pareto front, and the front is sorted by cost.
    assert!(tuning.front.contains(&tuning.recommended.unwrap()));
    let costs: Vec<_> = tuning
        .front
        .iter()
        .map(|&i| tuning.scores[i].cost())
        .collect();
    assert!(costs.windows(2).all(|w| w[0] <= w[1]), "{costs:?}");
}

#[test]
fn a_trace_without_an_outage_keeps_the_defaults() {
    let tuning = tuned(&trace(30, None));
    assert_eq!(tuning.health.outages, []);
    assert_eq!(tuning.recommended, None);
    assert_eq!(tuning.recommendation(), Spec::DEFAULT);
    assert_eq!(tuning.baseline_scores.false_opens, 0);
}

#[test]
fn the_override_block_configures_the_recommended_breaker() {
    let tuning = tuned(&trace(60, Some(20..35)));
    let spec = tuning.recommendation();
    let registry = Registry::default();
    let b = registry.register(Arc::new(Breaker::new("app::get_book", Config::default())));
    let overrides = Overrides::from_toml("tune.toml", &spec.toml("app::get_book")).unwrap();
    registry.apply(&overrides).unwrap();
    assert_eq!(b.config(), spec.config());
}

#[test]
fn a_recording_round_trips_through_its_csv_file() {
    let recording = record(classic(), &Scenario::outage());
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("round_trip.csv");
    recording.write_csv(&path).unwrap();
    let read = Recording::read_csv(&path).unwrap();
    // Times are written to the microsecond, as the simulation records them.
    assert_eq!(read, recording);
    assert_eq!(read.calls().len(), 8991);
}

#[test]
fn the_shipped_trace_is_the_recovery_simulations_and_the_tuner_beats_the_defaults_on_it() {
    let shipped =
        Recording::read_csv(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/trace.csv")).unwrap();
    assert_eq!(shipped, record(classic(), &Scenario::outage()));
    let tuning = tuned(&shipped);
    assert_eq!(
        tuning.health.outages,
        [Duration::from_secs(20)..Duration::from_secs(40)]
    );
    let scores = tuning.recommended_scores();
    assert_eq!((scores.missed, scores.false_opens), (0, 0));
    assert!(scores.cost() < tuning.baseline_scores.cost());
}
