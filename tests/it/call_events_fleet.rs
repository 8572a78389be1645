//! `Breaker::on_call` in the fleet's OPEN: a rejection by the peers' quorum is told with its
//! own reason, against a real `redis-server` on loopback.
//!
//! Needs `redis-server` on the PATH (CI installs it); without it the test says loudly that it
//! skipped, unless `CI=true`, where it fails.

use crate::support::fleet as support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_workspace::redis_server::RedisServer;
use breakerbox::fleet::Fleet;
use breakerbox::{events::CallEnding, events::CallEvent, RejectReason, State};
use support::{breaker, eventually, instance, trip};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejection_in_the_fleets_open_is_told_as_fleet_open() {
    let Some(server) = RedisServer::start_or_skip("call_events_fleet::fleet_open") else {
        return;
    };
    let fleets: Vec<Fleet> = ["a", "b", "c"]
        .iter()
        .map(|id| instance(&server, id, Duration::from_millis(400)))
        .collect();
    let members = [
        breaker("db", Duration::from_secs(30)),
        breaker("db", Duration::from_secs(30)),
        breaker("db", Duration::from_secs(30)),
    ];
    for (fleet, member) in fleets.iter().zip(&members) {
        fleet.join(member, 2);
        fleet.flush().await;
    }
    let c = &members[2];
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    c.on_call(move |e: &CallEvent| log.lock().unwrap().push((e.ending, e.duration, e.stale)));

    trip(&members[0]);
    trip(&members[1]);
    eventually("c opens for its peers", || c.state() == State::Open).await;
    assert_eq!(
        c.try_acquire().unwrap_err().reason(),
        RejectReason::FleetOpen
    );
    assert_eq!(
        *seen.lock().unwrap(),
        [(CallEnding::Rejected(RejectReason::FleetOpen), None, false)]
    );
}
