//! State transitions and the ramp-up as `tracing` events: a warning when a breaker opens or
//! the latency guard holds a ramp step, info otherwise. A breaker of a keyed family logs its
//! `key`; a breaker without one logs no `key` field at all. Every field is read only when its
//! line is wanted (tracing evaluates an event's fields after its filter): most transitions
//! are logged to no one, and reading the name checks its bytes.

use std::time::Duration;

use crate::{events::TransitionReason, Breaker, State};

pub(crate) fn transition(
    breaker: &Breaker,
    from: State,
    to: State,
    reason: TransitionReason,
    shadow: bool,
) {
    // The rates an opening logs, read only when its line is wanted: a snapshot costs more than
    // the rest of a transition, and most transitions are logged to no one.
    let snapshot = |enabled: bool| enabled.then(|| breaker.snapshot());
    if shadow {
        // A breaker that only watches tells what it would do, and changes nothing for the
        // calls: no warning.
        return match to {
            State::Open | State::ForcedOpen => {
                let Some(s) = snapshot(tracing::enabled!(tracing::Level::INFO)) else {
                    return;
                };
                tracing::info!(
                    breaker = breaker.name(),
                    key = breaker.key(),
                    %from,
                    %to,
                    %reason,
                    shadow,
                    failure_rate = s.failure_rate,
                    slow_call_rate = s.slow_call_rate,
                    calls = s.calls,
                    "circuit breaker would open (shadow: calls still admitted)"
                )
            }
            State::Closed => tracing::info!(
                breaker = breaker.name(),
                key = breaker.key(),
                %from,
                %to,
                %reason,
                shadow,
                "circuit breaker would close (shadow)"
            ),
            State::HalfOpen | State::Disabled => tracing::info!(
                breaker = breaker.name(),
                key = breaker.key(),
                %from,
                %to,
                %reason,
                shadow,
                "circuit breaker would change state (shadow)"
            ),
        };
    }
    match to {
        // Adopted from the fleet: its own window did not open it, so its rates say nothing.
        State::Open if reason == TransitionReason::FleetOpen => tracing::warn!(
            breaker = breaker.name(),
            key = breaker.key(),
            %from,
            %to,
            %reason,
            quorum = breaker.config().fleet_quorum(),
            "circuit breaker opened for its peers: a quorum of the fleet holds it open"
        ),
        State::Open | State::ForcedOpen => {
            let Some(s) = snapshot(tracing::enabled!(tracing::Level::WARN)) else {
                return;
            };
            tracing::warn!(
                breaker = breaker.name(),
                key = breaker.key(),
                %from,
                %to,
                %reason,
                failure_rate = s.failure_rate,
                slow_call_rate = s.slow_call_rate,
                calls = s.calls,
                "circuit breaker opened"
            )
        }
        State::Closed => {
            tracing::info!(
                breaker = breaker.name(),
                key = breaker.key(),
                %from,
                %to,
                %reason,
                "circuit breaker closed"
            )
        }
        State::HalfOpen | State::Disabled => tracing::info!(
            breaker = breaker.name(),
            key = breaker.key(),
            %from,
            %to,
            %reason,
            "circuit breaker state changed"
        ),
    }
}

/// The ramp entered a step: the first when the probes succeeded, then each it climbs.
pub(crate) fn ramp_step(breaker: &Breaker, step: u32, percent: u32) {
    tracing::info!(
        breaker = breaker.name(),
        key = breaker.key(),
        step,
        percent,
        "circuit breaker ramp step"
    );
}

/// The latency guard held a step whose time was up: at most once a step's length.
pub(crate) fn ramp_held(
    breaker: &Breaker,
    step: u32,
    percent: u32,
    p99: Duration,
    baseline: Duration,
) {
    tracing::warn!(
        breaker = breaker.name(),
        key = breaker.key(),
        step,
        percent,
        ?p99,
        ?baseline,
        "circuit breaker ramp step held by the latency guard"
    );
}

/// A keyed member's trip its family's cap refused: a warning, as an opening is (info for a
/// breaker that only watches).
pub(crate) fn trip_refused(
    breaker: &Breaker,
    reason: TransitionReason,
    open: u32,
    limit: u32,
    shadow: bool,
) {
    if shadow {
        return tracing::info!(
            breaker = breaker.name(),
            key = breaker.key(),
            %reason,
            open,
            limit,
            shadow,
            "circuit breaker would have opened, but its family's max_open_percent holds it closed (shadow)"
        );
    }
    tracing::warn!(
        breaker = breaker.name(),
        key = breaker.key(),
        %reason,
        open,
        limit,
        "circuit breaker stays closed: its family's max_open_percent is reached"
    );
}
