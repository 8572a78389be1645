//! Reconfiguring a breaker that is not closed: the window it shows is the one its new
//! configuration keeps.

use std::time::Duration;

use breaker::clock::ManualClock;
use breaker::{Breaker, Config, State};

fn opened(config: Config) -> Breaker {
    let b = Breaker::with_clock("libraryd", config, ManualClock::new());
    for _ in 0..4 {
        b.try_acquire().unwrap().failure();
    }
    assert_eq!(b.state(), State::Open);
    b
}

/// A count window of `n` calls judged from 4 on.
fn count_window(n: u32) -> Config {
    Config::builder()
        .count_window(n)
        .min_calls(4)
        .build()
        .unwrap()
}

#[test]
fn a_new_window_shape_while_open_starts_empty() {
    // A locked window of 30 calls, then a packed one of 10.
    let b = opened(count_window(30));
    b.reconfigure(count_window(10));
    let s = b.snapshot();
    assert_eq!((s.state, s.calls, s.failures), (State::Open, 0, 0));

    // A packed window of 10, then one of 5.
    let b = opened(count_window(10));
    b.reconfigure(count_window(5));
    let s = b.snapshot();
    assert_eq!((s.state, s.calls, s.failures), (State::Open, 0, 0));
}

#[test]
fn turning_slow_calls_off_while_open_keeps_the_calls_that_opened_it() {
    let slow = Duration::from_secs(1);
    let timed = Config::builder()
        .count_window(10)
        .min_calls(4)
        .slow_calls(slow, 1.0)
        .build()
        .unwrap();
    let b = opened(timed);
    assert_eq!((b.snapshot().calls, b.snapshot().failures), (4, 4));
    // Same window, kept packed from now on.
    b.reconfigure(count_window(10));
    let s = b.snapshot();
    assert_eq!((s.state, s.calls, s.failures), (State::Open, 4, 4));
}
