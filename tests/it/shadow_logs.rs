//! A shadow breaker logs what it would do, at info level: it changes nothing for the calls,
//! so it raises no warning.

use crate::support::logs;

use std::time::Duration;

use breakerbox::clock::ManualClock;
use breakerbox::{Breaker, Config};

#[test]
fn a_shadow_breaker_logs_that_it_would_open_and_close() {
    let Some((captured, _guard)) = logs::capture(concat!(
        module_path!(),
        "::a_shadow_breaker_logs_that_it_would_open_and_close"
    )) else {
        return;
    };
    let config = Config::builder()
        .count_window(4)
        .min_calls(4)
        .probes(1)
        .shadow(true)
        .build()
        .unwrap();
    let clock = ManualClock::new();
    let b = Breaker::with_clock("shadow::logged", config, clock.clone());
    b.try_acquire().unwrap().success();
    for _ in 0..3 {
        b.try_acquire().unwrap().failure();
    }
    clock.advance(Duration::from_secs(5));
    b.try_acquire().unwrap().success();

    let who = r#"breaker="shadow::logged""#;
    assert_eq!(
        captured.lines(),
        [
            format!(" INFO breakerbox::trace: circuit breaker would open (shadow: calls still admitted) {who} from=closed to=open reason=failure_rate shadow=true failure_rate=0.75 calls=4"),
            format!(" INFO breakerbox::trace: circuit breaker would change state (shadow) {who} from=open to=half_open reason=open_elapsed shadow=true"),
            format!(" INFO breakerbox::trace: circuit breaker would close (shadow) {who} from=half_open to=closed reason=trial_passed shadow=true"),
        ]
    );
}
