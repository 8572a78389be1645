//! The recovery simulation: on the same scenario and seed, the progressive breaker re-opens
//! fewer times and overloads the restarting downstream less than the classic one.

use breaker_workspace::simulation::{classic, progressive, run, Scenario};
use breakerbox::State;

#[test]
fn progressive_recovery_spares_a_cold_downstream() {
    let scenario = Scenario::default();
    let classic = run("classic", classic(), &scenario);
    let progressive = run("progressive", progressive(), &scenario);
    assert_eq!(classic.requests, progressive.requests, "same traffic");

    // The classic breaker closes on a cold downstream, knocks it over, and flaps.
    assert_eq!((classic.reopened, classic.overloaded), (11, 110));
    assert_eq!(classic.recovery, None);
    // The progressive one backs off, then ramps up as the downstream warms.
    assert_eq!((progressive.reopened, progressive.overloaded), (0, 0));
    let recovery = progressive.recovery.expect("recovers");
    assert_eq!(recovery.as_millis(), 23_918);
    assert!(progressive.served > classic.served * 3);
}

#[test]
fn progressive_beats_classic_on_every_seed() {
    for seed in 1..=8 {
        let scenario = Scenario {
            seed,
            ..Scenario::default()
        };
        let c = run("classic", classic(), &scenario);
        let p = run("progressive", progressive(), &scenario);
        assert!(p.reopened < c.reopened, "seed {seed}: {p:?} vs {c:?}");
        assert!(p.overloaded < c.overloaded, "seed {seed}");
        assert!(p.served > c.served, "seed {seed}");
    }
}

#[test]
fn the_ramp_admits_its_steps_share() {
    let p = run("progressive", progressive(), &Scenario::default());
    // Whole seconds of each step (the ramp starts at 33.9s): admitted / sent.
    let share = |from: u32, to: u32| {
        let (sent, admitted) = p.timeline[from as usize..to as usize]
            .iter()
            .fold((0, 0), |(s, a), sec| (s + sec.sent, a + sec.admitted));
        f64::from(admitted) / f64::from(sent)
    };
    assert!((share(34, 38) - 0.10).abs() < 0.01, "{}", share(34, 38));
    assert!((share(39, 43) - 0.30).abs() < 0.01, "{}", share(39, 43));
    assert!((share(44, 48) - 0.60).abs() < 0.01, "{}", share(44, 48));
    assert_eq!(p.timeline[33].state, State::HalfOpen);
    assert_eq!(p.timeline[54].state, State::Closed);
    assert_eq!(p.timeline.len(), 90);
}
