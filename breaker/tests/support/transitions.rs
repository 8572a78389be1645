//! A breaker on a manual clock whose state transitions are kept, with their reasons, for a
//! test to compare with what it expects.

use std::sync::{Arc, Mutex};

use breakerbox::clock::ManualClock;
use breakerbox::{events::Event, events::TransitionReason, Breaker, Config, State};

/// Every transition the breaker made, in order: from, to, why.
pub type Seen = Arc<Mutex<Vec<(State, State, TransitionReason)>>>;

/// A breaker named `name` on a new manual clock, and the transitions it makes from now on.
pub fn watched(name: &str, config: Config) -> (Breaker, ManualClock, Seen) {
    let (b, clock) = breakerbox::testing::manual(name, config);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    b.on_event(move |e: &Event| {
        if let Event::StateTransition {
            from, to, reason, ..
        } = e
        {
            log.lock().unwrap().push((*from, *to, *reason));
        }
    });
    (b, clock, seen)
}
