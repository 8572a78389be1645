//! The replay tuner on synthetic traces with a known answer: an outage, none, a slowdown
//! without errors, an outage moved by 1.5 s, a trace recorded behind an enforcing breaker,
//! and the shipped trace.

use std::ops::Range;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use breakerbox::overrides::Overrides;
use breakerbox::recording::{CallOutcome, RecordedCall, Recording};
use breakerbox::{registry::Registry, Breaker, Config, Outcome, RejectReason};
use breakerbox_tune::report::report;
use breakerbox_tune::search::{Spec, WindowSpec};
use breakerbox_tune::{tune, Tuning};

const RATE: u64 = 50;

/// A xorshift generator, so traces are the same on every run.
fn generator() -> impl FnMut(u64) -> u64 {
    let mut random = 0x9e37_79b9_7f4a_7c15_u64;
    move |n: u64| {
        random ^= random << 13;
        random ^= random >> 7;
        random ^= random << 17;
        random % n
    }
}

/// Every call of `seconds` at `RATE` a second, recorded without a breaker in front: 10 to
/// 20 ms, 1% failing; from `outage.start` to `outage.end` (in milliseconds), every call fails
/// in 20 ms.
fn trace_ms(seconds: u64, outage: Option<Range<u64>>) -> Recording {
    let mut next = generator();
    (0..seconds * RATE)
        .map(|i| {
            let start = Duration::from_micros(i * 1_000_000 / RATE + next(1_000));
            let sick = outage
                .as_ref()
                .is_some_and(|o| o.contains(&(start.as_millis() as u64)));
            let (latency, failed) = if sick {
                (Duration::from_millis(20), true)
            } else {
                (Duration::from_micros(10_000 + next(10_000)), next(100) == 0)
            };
            RecordedCall::new(
                start,
                latency,
                CallOutcome::Completed(if failed {
                    Outcome::Failure
                } else {
                    Outcome::Success
                }),
            )
        })
        .collect()
}

fn trace(seconds: u64, outage: Option<Range<u64>>) -> Recording {
    trace_ms(seconds, outage.map(|o| o.start * 1000..o.end * 1000))
}

/// Completed calls a window of `spec` holds at most, at `RATE` calls a second.
fn window_calls(spec: &Spec) -> u64 {
    match spec.window {
        WindowSpec::Count(n) => u64::from(n),
        WindowSpec::Time(secs) => secs * RATE,
    }
}

fn tuned(recording: &Recording) -> Tuning {
    tune(recording, &Config::default())
}

/// The tuning of 60 s with an outage from 20 s to 35 s, shared by the tests that read it.
fn known_outage() -> &'static Tuning {
    static TUNING: OnceLock<Tuning> = OnceLock::new();
    TUNING.get_or_init(|| tuned(&trace(60, Some(20..35))))
}

#[test]
fn the_recommendation_detects_a_known_outage_within_a_window_and_never_opens_while_healthy() {
    let tuning = known_outage();
    assert_eq!(
        tuning.health.outages,
        [Duration::from_secs(20)..Duration::from_secs(35)]
    );
    assert_eq!(tuning.rejected, 0);
    let spec = tuning.recommended_spec().unwrap();
    let scores = tuning.recommended_scores();
    assert!(tuning.recommended.is_some(), "{:?}", tuning.current_scores);
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
    // The pick costs less than the defaults on average over the trace and its perturbed
    // copies (on the recorded trace alone the defaults' 5 s open may happen to fit).
    let k = tuning.recommended_row().unwrap();
    let r = &tuning.robustness;
    let mean = |s: &[breakerbox_tune::score::Scores]| breakerbox_tune::robust::Spread::of(s).mean;
    assert!(mean(&r.scores[k]) < mean(&r.current), "{spec}");
    // The front is sorted by cost.
    let costs: Vec<_> = tuning
        .front
        .iter()
        .map(|&i| tuning.scores[i].cost())
        .collect();
    assert!(costs.windows(2).all(|w| w[0] <= w[1]), "{costs:?}");
}

#[test]
fn a_trace_without_an_outage_keeps_the_current_configuration() {
    let tuning = tuned(&trace(30, None));
    assert_eq!(tuning.health.outages, []);
    assert_eq!(tuning.recommended, None);
    assert_eq!(tuning.recommended_spec(), None);
    assert_eq!(tuning.recommendation(), Ok(Config::default()));
    assert_eq!(tuning.current_scores.false_opens, 0);
    assert!(report(&tuning, "t.csv", "a").contains("no outage in the trace"));
}

#[test]
fn the_override_block_configures_the_recommended_breaker() {
    let tuning = known_outage();
    let spec = tuning.recommended_spec().unwrap();
    let registry = Registry::default();
    let b = registry.register(Arc::new(Breaker::new("app::get_book", Config::default())));
    let overrides = Overrides::from_toml("tune.toml", &spec.toml("app::get_book")).unwrap();
    registry.apply(&overrides).unwrap();
    assert_eq!(b.config(), spec.config());
}

/// 60 s at `RATE` calls a second, none failing: `healthy` latencies (in microseconds, plus
/// up to 20% noise), but `slow` from 20 s to 30 s.
fn slowdown(healthy_us: u64, slow_us: u64) -> Recording {
    let mut next = generator();
    (0..60 * RATE)
        .map(|i| {
            let start = Duration::from_micros(i * 1_000_000 / RATE);
            let base = if (20..30).contains(&start.as_secs()) {
                slow_us
            } else {
                healthy_us
            };
            RecordedCall::new(
                start,
                Duration::from_micros(base + next(base / 5 + 1)),
                CallOutcome::Completed(Outcome::Success),
            )
        })
        .collect()
}

#[test]
fn a_slowdown_without_errors_is_found_and_caught_by_the_slow_call_keys() {
    // 5 ms, then 150 to 180 ms for 10 s of 60, with no error.
    let tuning = tuned(&slowdown(5_000, 150_000));
    let secs = Duration::from_secs;
    assert_eq!(tuning.health.outages, [secs(20)..secs(30)]);
    assert_eq!(tuning.health.slow, [secs(20)..secs(30)]);
    // The baseline is the healthy stretches' speed, not lifted by the slow one.
    assert!(
        tuning.health.healthy_p99 < Duration::from_millis(7),
        "{:?}",
        tuning.health
    );
    // The defaults count no slow call, so they never open.
    assert_eq!(tuning.current_scores.missed, 1);
    let spec = tuning.recommended_spec().unwrap();
    let slow = spec.slow.expect("the recommendation counts slow calls");
    assert!(slow.threshold < Duration::from_millis(150), "{spec}");
    let scores = tuning.recommended_scores();
    assert_eq!((scores.missed, scores.false_opens), (0, 0), "{spec}");
    assert!(scores.detection <= secs(2), "{spec}: {scores:?}");
    let text = report(&tuning, "slow.csv", "app::get_book");
    assert!(text.contains("outage: 20.0s..30.0s (slow)"), "{text}");
    assert!(
        text.contains("slow without errors from 20.0s to 30.0s"),
        "{text}"
    );
    assert!(text.contains("slow_rate = "), "{text}");
}

#[test]
fn a_healthy_p99_under_a_millisecond_still_gives_slow_call_candidates() {
    // 400 us, then 20 ms.
    let tuning = tuned(&slowdown(400, 20_000));
    assert!(tuning.health.healthy_p99 < Duration::from_millis(1));
    let slow: Vec<_> = tuning.specs.iter().filter_map(|s| s.slow).collect();
    assert!(!slow.is_empty());
    assert!(
        slow.iter().all(|s| s.threshold < Duration::from_millis(2)),
        "{slow:?}"
    );
    let spec = tuning.recommended_spec().unwrap();
    assert!(spec.slow.is_some(), "{spec}");
    assert!(spec.attribute().contains("us\""), "{}", spec.attribute());
    // The override file reads the microseconds back.
    let overrides = Overrides::from_toml("tune.toml", &spec.toml("a")).unwrap();
    let registry = Registry::default();
    let b = registry.register(Arc::new(Breaker::new("a", Config::default())));
    registry.apply(&overrides).unwrap();
    assert_eq!(b.config(), spec.config());
}

#[test]
fn an_outage_moved_by_a_second_and_a_half_keeps_its_pick() {
    let ten = tuned(&trace_ms(60, Some(20_000..30_000)));
    let longer = tuned(&trace_ms(60, Some(20_000..31_500)));
    let (ten_pick, longer_pick) = (ten.recommended_spec(), longer.recommended_spec());
    assert!(ten_pick.is_some());
    assert_eq!(ten_pick, longer_pick);
    let k = ten.recommended_row().unwrap();
    let r = &ten.robustness;
    assert_eq!(r.perturbations, 8);
    assert_eq!(r.scores[k].len(), 9, "the recorded trace and 8 copies");
    assert!(r.on_front[k] <= 8);
    let text = report(&ten, "ten.csv", "a");
    assert!(text.contains("stability: on the front in"), "{text}");
}

#[test]
fn a_trace_recorded_behind_an_enforcing_breaker_is_flagged_censored() {
    // The outage of 20 s to 35 s, but a breaker rejected every call from 22 s to 30 s.
    let recording: Recording = trace(60, Some(20..35))
        .calls()
        .iter()
        .map(|c| {
            let mut c = *c;
            if (22..30).contains(&c.start.as_secs()) {
                c.latency = Duration::ZERO;
                c.outcome = CallOutcome::Rejected(RejectReason::Open);
            }
            c
        })
        .collect();
    let tuning = tuned(&recording);
    assert_eq!(tuning.rejected, 8 * RATE as usize);
    assert_eq!(tuning.health.censored, [true]);
    let text = report(&tuning, "enforced.csv", "a");
    assert!(text.contains("20.0s..35.0s (censored)"), "{text}");
    assert!(text.contains("rejected 400 calls (13.3%)"), "{text}");
    assert!(
        text.contains("Record in shadow mode (`shadow = true`)"),
        "{text}"
    );
    // A trace recorded in shadow mode has no rejection and is not flagged.
    let shadow = known_outage();
    assert_eq!(shadow.health.censored, [false]);
    assert!(!report(shadow, "s.csv", "a").contains("shadow mode"));
}

/// 40 s of a call every 20 ms taking 5 ms, failing from 10 s to 20 s and never outside.
fn noise_free() -> Recording {
    (0..2000u64)
        .map(|i| {
            RecordedCall::new(
                Duration::from_millis(i * 20),
                Duration::from_millis(5),
                CallOutcome::Completed(if (500..1000).contains(&i) {
                    Outcome::Failure
                } else {
                    Outcome::Success
                }),
            )
        })
        .collect()
}

/// Whether a breaker of `config`, after 100 healthy calls, opens on ten calls of which two
/// fail, one call at a time.
fn two_failures_in_ten_open(config: Config) -> bool {
    let mut replay = breakerbox::replay::Replay::new(config);
    for i in 0..200u64 {
        let at = Duration::from_millis(i * 20);
        let Ok(permit) = replay.try_acquire(at) else {
            return true;
        };
        let outcome = if i == 103 || i == 107 {
            Outcome::Failure
        } else {
            Outcome::Success
        };
        replay.record(permit, outcome, at + Duration::from_millis(5));
    }
    !replay.transitions().is_empty()
}

#[test]
fn a_noise_free_trace_picks_a_breaker_that_two_failures_in_ten_do_not_trip() {
    let tuning = tuned(&noise_free());
    // 1500 healthy calls, none failing: they still allow 0.2% at 95%.
    assert_eq!(
        (tuning.noise.healthy_calls, tuning.noise.healthy_failures),
        (1500, 0)
    );
    assert_eq!(
        tuning.noise.bound,
        breakerbox_tune::noise::upper_bound(0, 1500, 0.95)
    );
    assert!((tuning.noise.bound - 0.001_995).abs() < 1e-6);
    // The cheapest on the clean trace alone opens on two failures in ten.
    let cheapest = tuning.specs[tuning.front[0]];
    assert_eq!(
        cheapest.to_string(),
        "window=10 min=5 rate=0.2 open=\"5s\" probes=1"
    );
    assert!(two_failures_in_ten_open(cheapest.config()));
    assert!(!tuning.noise.quiet(&cheapest));
    // The pick does not, and the bound's background failures would not open it.
    let pick = tuning.recommendation().unwrap();
    assert!(!two_failures_in_ten_open(pick.clone()), "{pick:?}");
    let k = tuning.recommended_row().unwrap();
    assert!(tuning.robustness.quiet(k));
    let scores = tuning.recommended_scores();
    assert_eq!((scores.missed, scores.false_opens), (0, 0));
    let text = report(&tuning, "clean.csv", "a");
    assert!(
        text.contains(
            "no failure outside the outages, in 1500 healthy calls: a trace this clean cannot \
             show a false open, so the perturbed copies fail healthy calls at 0.200%, the 95% \
             upper bound of zero in 1500\n"
        ),
        "{text}"
    );
}
