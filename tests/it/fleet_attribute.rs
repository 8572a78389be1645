//! The fleet from the attribute: `fleet = true` breakers of the registry join the process's
//! fleet started with `FleetBuilder::join(registry())`, a keyed family's members each under their
//! own name (`family[key]`), and peers' OPEN opinions reject their calls with `FleetOpen`.
//! In a binary of its own: the process's fleet is started once.

use crate::support::fleet as support;
use crate::support::process;

use std::time::Duration;

use breaker_workspace::redis_server::RedisServer;
use breakerbox::fleet::{Fleet, FleetError};
use breakerbox::{circuit_breaker, registry, Classify, Outcome, RejectReason, Rejected};
use support::{breaker, eventually, instance, trip, TTL};

#[derive(Debug)]
enum Error {
    Down,
    Rejected(RejectReason),
}

impl Classify for Error {
    fn classify(&self) -> Outcome {
        Outcome::Failure
    }
}

impl From<Rejected> for Error {
    fn from(rejected: Rejected) -> Self {
        Error::Rejected(rejected.reason())
    }
}

#[circuit_breaker(
    name = "fleet::inventory",
    window = 2,
    min = 2,
    open = "30s",
    fleet = true,
    fleet_quorum = 2
)]
async fn inventory() -> Result<(), Error> {
    Ok(())
}

#[circuit_breaker(name = "fleet::shard", key = shard, window = 2, min = 2, open = "30s", fleet = true)]
async fn shard(shard: u32) -> Result<u32, Error> {
    if shard == 0 {
        return Err(Error::Down);
    }
    Ok(shard)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attribute_breakers_join_the_process_fleet_keyed_members_by_key() {
    // It starts the process's fleet, of which a process has one.
    if !process::alone(concat!(
        module_path!(),
        "::attribute_breakers_join_the_process_fleet_keyed_members_by_key"
    )) {
        return;
    }
    let Some(server) = RedisServer::start_or_skip("fleet_attribute::attribute_breakers_join")
    else {
        return;
    };
    // Registered before the fleet starts: joined when it does; a keyed member made after:
    // joined as it is made.
    inventory().await.unwrap();
    let me = Fleet::builder(server.url())
        .instance("me")
        .ttl(TTL)
        .timeout(Duration::from_millis(300))
        .snapshot_every(Duration::from_millis(400))
        .join(breakerbox::registry())
        .start()
        .unwrap();
    assert!(matches!(
        Fleet::builder(server.url())
            .join(breakerbox::registry())
            .start(),
        Err(FleetError::AlreadyConnected)
    ));
    assert_eq!(Fleet::of(breakerbox::registry()).unwrap().instance(), "me");
    assert_eq!(shard(7).await.unwrap(), 7);
    assert_eq!(shard(8).await.unwrap(), 8);
    me.flush().await;

    let peers: Vec<Fleet> = ["a", "b"]
        .iter()
        .map(|id| instance(&server, id, Duration::from_millis(400)))
        .collect();
    let mut kept = Vec::new();
    for (i, peer) in peers.iter().enumerate() {
        let (whole, member) = (
            breaker("fleet::inventory", Duration::from_secs(30)),
            breaker("fleet::shard[7]", Duration::from_secs(30)),
        );
        peer.join(&whole, 2);
        peer.join(&member, 2);
        peer.flush().await;
        trip(&whole);
        trip(&member);
        kept.extend([whole, member]);
        eventually("the process sees the peer", || {
            me.peers_open("fleet::inventory") == i + 1
        })
        .await;
    }

    eventually("the family's member 7 opens for the fleet", || {
        shard_state(7) == breakerbox::State::Open
    })
    .await;
    eventually("inventory opens for the fleet", || {
        registry().get("fleet::inventory").unwrap().state() == breakerbox::State::Open
    })
    .await;
    assert!(matches!(
        inventory().await,
        Err(Error::Rejected(RejectReason::FleetOpen))
    ));
    assert!(matches!(
        shard(7).await,
        Err(Error::Rejected(RejectReason::FleetOpen))
    ));
    assert_eq!(
        shard(8).await.unwrap(),
        8,
        "another key of the family: no peer holds it"
    );
    let totals = registry()
        .get("fleet::inventory")
        .unwrap()
        .snapshot()
        .totals;
    assert_eq!((totals.rejected_by.fleet_open, totals.rejected), (1, 1));
}

fn shard_state(key: u32) -> breakerbox::State {
    registry()
        .get_keyed("fleet::shard", &key.to_string())
        .map_or(breakerbox::State::Closed, |b| b.state())
}
