//! State transitions as `tracing` events: a warning when a breaker opens, info otherwise.

use crate::{Breaker, State};

pub(crate) fn transition(breaker: &Breaker, from: State, to: State) {
    let s = breaker.snapshot();
    let name = breaker.name();
    let key = breaker.key().unwrap_or("");
    match to {
        State::Open | State::ForcedOpen => tracing::warn!(
            breaker = name,
            key,
            %from,
            %to,
            failure_rate = s.failure_rate,
            slow_call_rate = s.slow_call_rate,
            calls = s.calls,
            "circuit breaker opened"
        ),
        State::Closed => tracing::info!(breaker = name, key, %from, %to, "circuit breaker closed"),
        State::HalfOpen | State::Disabled => {
            tracing::info!(breaker = name, key, %from, %to, "circuit breaker state changed")
        }
    }
}
