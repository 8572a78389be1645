//! The fleet's health as a state: a listener that subscribes after the store failed hears
//! it first, the counts of what an instance refused add up exactly, and a backlog of
//! messages past its bound degrades the view until it is read anew, exact.
//!
//! The tests with a store need `redis-server` on the PATH (CI installs it); without it each
//! says loudly that it skipped, unless `CI=true`, where it fails.

use crate::support::fleet as support;

use std::time::Duration;

use breaker_workspace::redis_server::RedisServer;
use breakerbox::fleet::{Fleet, FleetEvent};
use support::{breaker, events, eventually, instance, plant, store, TTL};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_that_subscribes_after_the_store_failed_hears_it_first() {
    // Nothing listens on port 1.
    let fleet = Fleet::builder("redis://127.0.0.1:1")
        .instance("alone")
        .ttl(TTL)
        .timeout(Duration::from_millis(300))
        .start()
        .unwrap();
    eventually("the fleet is degraded", || fleet.is_degraded()).await;
    let reason = fleet.health().degraded.expect("degraded, with its reason");
    let late = events(&fleet);
    let told = late.lock().unwrap().clone();
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(
        matches!(&told[0], FleetEvent::Degraded { reason: r } if !r.is_empty()),
        "{told:?} ({reason})"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_messages_and_skipped_rows_are_counted() {
    let Some(server) = RedisServer::start_or_skip("fleet_health::counted") else {
        return;
    };
    let mut conn = store(&server).await;
    plant(
        &mut conn,
        "db",
        &[
            ("liar", "garbage 1"),
            ("fibber", "{far} x"),
            ("honest", "{far} 1"),
        ],
    )
    .await;
    // One snapshot only: the one that reads the name as it joins.
    let fleet = instance(&server, "me", Duration::from_secs(600));
    let b = breaker("db", Duration::from_secs(30));
    fleet.join(&b, 2);
    fleet.flush().await;
    eventually("the honest row read", || fleet.peers_open("db") == 1).await;
    for junk in ["", "1|open", "9|open|x|1|5000|5000|db"] {
        let _: i64 = redis::cmd("PUBLISH")
            .arg("breaker:fleet:opinions")
            .arg(junk)
            .query_async(&mut conn)
            .await
            .unwrap();
    }
    eventually("three malformed messages counted", || {
        fleet.health().messages_malformed == 3
    })
    .await;
    let health = fleet.health();
    assert_eq!((health.rows_skipped, health.degraded), (2, None));
}

/// Peers' opinions written into the store and published as an instance's script would, in
/// one pipeline: every peer of `peers` holds every name of `names` OPEN for ten minutes.
async fn flood(conn: &mut redis::aio::MultiplexedConnection, peers: &[String], names: &[String]) {
    let (secs, _): (u64, u64) = redis::cmd("TIME").query_async(conn).await.unwrap();
    let far = (secs + 600) * 1000;
    let mut pipe = redis::pipe();
    for name in names {
        for peer in peers {
            pipe.cmd("ZADD")
                .arg(format!("breaker:fleet:{{{name}}}:live"))
                .arg(far)
                .arg(peer)
                .ignore();
            pipe.cmd("HSET")
                .arg(format!("breaker:fleet:{{{name}}}:until"))
                .arg(peer)
                .arg(format!("{far} 1"))
                .ignore();
            pipe.cmd("PUBLISH")
                .arg("breaker:fleet:opinions")
                .arg(format!("1|open|{peer}|1|600000|600000|{name}"))
                .ignore();
        }
    }
    pipe.query_async::<()>(conn).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backlog_past_its_bound_degrades_the_view_until_it_is_read_anew_exact() {
    let Some(server) = RedisServer::start_or_skip("fleet_health::backlog") else {
        return;
    };
    let mut conn = store(&server).await;
    plant(&mut conn, "n0", &[("ghost", "{far} 1")]).await;
    // No periodic snapshot within the test: only the backlog's overflow reads the view anew,
    // at most every ttl/3 (400 ms).
    let fleet = Fleet::builder(server.url())
        .instance("me")
        .ttl(TTL)
        .timeout(Duration::from_millis(300))
        .snapshot_every(Duration::from_secs(600))
        .backlog(8)
        .start()
        .unwrap();
    let seen = events(&fleet);
    let names: Vec<String> = (0..40).map(|i| format!("n{i}")).collect();
    let breakers: Vec<_> = names
        .iter()
        .map(|n| breaker(n, Duration::from_secs(30)))
        .collect();
    for b in &breakers {
        // A quorum no flood reaches: the view alone is under test.
        fleet.join(b, 1_000);
    }
    fleet.flush().await;
    eventually("the ghost's opinion read", || fleet.peers_open("n0") == 1).await;
    // Gone from the store behind the fleet's back: only a snapshot forgets it.
    let _: () = redis::pipe()
        .cmd("DEL")
        .arg("breaker:fleet:{n0}:live")
        .arg("breaker:fleet:{n0}:until")
        .ignore()
        .query_async(&mut conn)
        .await
        .unwrap();

    let peers: Vec<String> = (0..50).map(|i| format!("p{i}")).collect();
    flood(&mut conn, &peers, &names).await;
    eventually("the view degraded and recovered", || {
        let events = seen.lock().unwrap();
        let degraded = events.iter().position(|e| {
            matches!(e, FleetEvent::Degraded { reason } if reason.contains("messages came faster than they were read"))
        });
        degraded.is_some_and(|at| events[at..].contains(&FleetEvent::Recovered))
    })
    .await;
    // Exactly the store's opinions: every peer on every name, and no ghost; each overflow
    // while the flood lasts degrades the view again until it is read anew.
    eventually("the view recovered, holding the store's opinions", || {
        !fleet.is_degraded() && names.iter().all(|n| fleet.peers_open(n) == peers.len())
    })
    .await;
    assert_eq!(fleet.peers_open("n0"), 50);
    assert!(fleet.health().messages_dropped > 0);
    assert!(breakers
        .iter()
        .all(|b| b.state() == breakerbox::State::Closed));
}
