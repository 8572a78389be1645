//! An OPEN adopted from the fleet is logged as opened for its peers, with the quorum, not as
//! an opening by its own window (whose rates say nothing then). Alone in its process, as every
//! test that reads the logs (see `support/logs.rs`); the fleet's tasks run on this test's
//! thread.

use crate::support::fleet;
use crate::support::logs;

use std::time::Duration;

use breaker_workspace::redis_server::RedisServer;
use breakerbox::State;
use fleet::{breaker, eventually, instance, trip};

#[tokio::test]
async fn an_adopted_open_is_logged_as_opened_for_its_peers_with_the_quorum() {
    let Some((captured, _guard)) = logs::capture(concat!(
        module_path!(),
        "::an_adopted_open_is_logged_as_opened_for_its_peers_with_the_quorum"
    )) else {
        return;
    };
    let Some(server) = RedisServer::start_or_skip("fleet_adoption_log::an_adopted_open") else {
        return;
    };
    let fleets: Vec<_> = ["a", "b", "c"]
        .iter()
        .map(|id| instance(&server, id, Duration::from_millis(400)))
        .collect();
    let members: Vec<_> = (0..3)
        .map(|_| breaker("db", Duration::from_secs(30)))
        .collect();
    for (fleet, member) in fleets.iter().zip(&members) {
        fleet.join(member, 2);
        fleet.flush().await;
    }
    trip(&members[0]);
    trip(&members[1]);
    eventually("c opens for its peers", || {
        members[2].state() == State::Open
    })
    .await;

    let adopted: Vec<String> = captured
        .lines()
        .into_iter()
        .filter(|l| l.contains("reason=fleet_open"))
        .collect();
    assert_eq!(
        adopted,
        [" WARN breakerbox::trace: circuit breaker opened for its peers: a quorum of the fleet holds it open breaker=\"db\" from=closed to=open reason=fleet_open quorum=2"]
    );
}
