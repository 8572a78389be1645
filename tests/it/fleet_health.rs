//! The fleet's health as a state: a listener that subscribes after the store failed hears
//! it first, and the counts of what an instance refused add up exactly.
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
