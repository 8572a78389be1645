//! What a writer to the store who is no peer can do, against a real `redis-server`: with the
//! fleet's secret, nothing (forged messages and rows are ignored and counted); without it,
//! no more than hold a breaker open for as long as its own longest OPEN.
//!
//! Needs `redis-server` on the PATH (CI installs it); without it each test says loudly that
//! it skipped, unless `CI=true`, where it fails.

use crate::support::fleet as support;

use std::time::Duration;

use breaker_workspace::redis_server::RedisServer;
use breakerbox::fleet::Fleet;
use breakerbox::{RejectReason, State};
use support::{breaker, eventually, instance, plant, store, trip, TTL};

const SNAPSHOT: Duration = Duration::from_millis(400);

/// An instance of the fleet on `server` whose messages are signed with `secret`.
fn signed(server: &RedisServer, id: &str, secret: &str, snapshot_every: Duration) -> Fleet {
    Fleet::builder(server.url())
        .instance(id)
        .ttl(TTL)
        .timeout(Duration::from_millis(300))
        .snapshot_every(snapshot_every)
        .secret(secret)
        .start()
        .unwrap()
}

async fn publish(conn: &mut redis::aio::MultiplexedConnection, text: &str) {
    let _: i64 = redis::cmd("PUBLISH")
        .arg("breaker:fleet:opinions")
        .arg(text)
        .query_async(conn)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_longer_than_the_breakers_own_longest_open_counts_only_that_long() {
    let Some(server) = RedisServer::start_or_skip("fleet_trust::a_claim_longer") else {
        return;
    };
    let me = instance(&server, "me", SNAPSHOT);
    let mine = breaker("db", Duration::from_secs(2));
    me.join(&mine, 2);
    me.flush().await;
    // Two "peers" that claim an OPEN of an hour.
    let mut conn = store(&server).await;
    publish(&mut conn, "1|open|x|1|3600000|3600000|db").await;
    publish(&mut conn, "1|open|y|1|3600000|3600000|db").await;
    eventually("the claims open it", || mine.state() == State::Open).await;
    let rejected = mine.try_acquire().unwrap_err();
    assert_eq!(rejected.reason(), RejectReason::FleetOpen);
    let left = rejected.retry_after().unwrap();
    assert!(
        left <= Duration::from_secs(2) + TTL / 10,
        "held open for {left:?}, not its own 2 s"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_secret_forged_messages_and_rows_are_ignored_and_counted() {
    let Some(server) = RedisServer::start_or_skip("fleet_trust::with_a_secret") else {
        return;
    };
    let mut conn = store(&server).await;
    // Rows as an unsigned instance writes them, and one with a tag that is not the key's.
    let forged = format!("{{far}} 1 600000 {}", "ab".repeat(32));
    plant(&mut conn, "db", &[("ghost", "{far} 1"), ("spook", &forged)]).await;
    // One snapshot only, as it joins.
    let me = signed(&server, "me", "the service's key", Duration::from_secs(600));
    let mine = breaker("db", Duration::from_secs(30));
    me.join(&mine, 2);
    me.flush().await;
    assert_eq!((me.peers_open("db"), me.health().rows_forged), (0, 2));

    // Messages of a writer without the key, and of an instance with another key.
    publish(&mut conn, "1|open|x|1|60000|60000|db").await;
    let stranger = signed(&server, "stranger", "another key", SNAPSHOT);
    let theirs = breaker("db", Duration::from_secs(30));
    stranger.join(&theirs, 9);
    stranger.flush().await;
    trip(&theirs);
    eventually("both forged messages counted", || {
        me.health().messages_forged == 2
    })
    .await;
    assert_eq!(me.peers_open("db"), 0);
    assert_eq!(mine.state(), State::Closed);

    // Peers with the key are heard, and their quorum opens it.
    let mut kept = Vec::new();
    for id in ["a", "b"] {
        let peer = signed(&server, id, "the service's key", SNAPSHOT);
        let b = breaker("db", Duration::from_secs(30));
        peer.join(&b, 9);
        peer.flush().await;
        trip(&b);
        kept.push((peer, b));
    }
    eventually("the signed quorum opens it", || mine.state() == State::Open).await;
    assert_eq!(
        mine.try_acquire().unwrap_err().reason(),
        RejectReason::FleetOpen
    );
    assert_eq!(me.peers_open("db"), 2);
}
