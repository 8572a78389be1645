//! The names the fleet's view tracks, against a real `redis-server`: a name goes from the
//! view when its last breaker leaves the fleet or is dropped, so that a bounded view takes
//! the next name, and a family over changing hosts never fills it.
//!
//! Needs `redis-server` on the PATH (CI installs it); without it each test says loudly that
//! it skipped, unless `CI=true`, where it fails.

use crate::support::fleet as support;

use std::time::Duration;

use breaker_workspace::redis_server::RedisServer;
use breakerbox::fleet::Fleet;
use support::{breaker, eventually, instance, trip, TTL};

const SNAPSHOT: Duration = Duration::from_millis(400);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_whose_breaker_left_or_was_dropped_makes_room_for_the_next() {
    let Some(server) = RedisServer::start_or_skip("fleet_names::a_name_whose_breaker_left") else {
        return;
    };
    let peer = instance(&server, "peer", SNAPSHOT);
    // One name at most in this instance's view.
    let me = Fleet::builder(server.url())
        .instance("me")
        .ttl(TTL)
        .timeout(Duration::from_millis(300))
        .snapshot_every(SNAPSHOT)
        .bounds(1, 10)
        .start()
        .unwrap();
    // The peer holds every host OPEN.
    let hosts: Vec<_> = (1..=3)
        .map(|i| breaker(&format!("host-{i}"), Duration::from_secs(30)))
        .collect();
    for host in &hosts {
        peer.join(host, 2);
        trip(host);
    }
    peer.flush().await;

    let first = breaker("host-1", Duration::from_secs(30));
    me.join(&first, 2);
    eventually("host-1 tracked", || me.peers_open("host-1") == 1).await;
    me.leave(&first);
    me.flush().await;
    assert_eq!(
        me.peers_open("host-1"),
        0,
        "a name that left is not tracked"
    );

    let second = breaker("host-2", Duration::from_secs(30));
    me.join(&second, 2);
    eventually("host-2 tracked after host-1 left", || {
        me.peers_open("host-2") == 1
    })
    .await;
    drop(second);
    let third = breaker("host-3", Duration::from_secs(30));
    me.join(&third, 2);
    eventually("host-3 tracked after host-2's breaker was dropped", || {
        me.peers_open("host-3") == 1
    })
    .await;
    assert_eq!(me.peers_open("host-2"), 0);

    // The first comes back: the bound is full with host-3, so it judges alone.
    me.join(&first, 2);
    me.flush().await;
    assert_eq!(me.peers_open("host-1"), 0, "the view holds one name");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_breakers_own_open_is_withdrawn() {
    let Some(server) = RedisServer::start_or_skip("fleet_names::a_dropped_breakers_own_open")
    else {
        return;
    };
    let (me, peer) = (
        instance(&server, "me", SNAPSHOT),
        instance(&server, "peer", SNAPSHOT),
    );
    let (mine, theirs) = (
        breaker("db", Duration::from_secs(30)),
        breaker("db", Duration::from_secs(30)),
    );
    me.join(&mine, 2);
    peer.join(&theirs, 2);
    me.flush().await;
    peer.flush().await;
    trip(&mine);
    eventually("the peer hears my OPEN", || peer.peers_open("db") == 1).await;
    drop(mine);
    // Withdrawn at the next snapshot, not held for the OPEN's 30 s.
    eventually("my OPEN withdrawn once its breaker is gone", || {
        peer.peers_open("db") == 0
    })
    .await;
}
