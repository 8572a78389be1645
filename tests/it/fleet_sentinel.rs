//! The fleet behind Sentinel, against real servers: a master, its replica and one
//! `redis-sentinel`, on loopback. After a forced failover the instances find the new master,
//! subscribe there and snapshot, and opinions flow again within the sentinel's timeout.
//!
//! Needs `redis-server` and `redis-sentinel` on the PATH (CI installs both); without them the
//! test says loudly that it skipped, unless `CI=true`, where it fails.

use crate::support::fleet as support;
use crate::support::sentinel::{port, SentinelSet, FAILOVER_TIMEOUT};

use std::time::Duration;

use breakerbox::fleet::{Fleet, FleetEvent};
use breakerbox::{RejectReason, State};
use support::{breaker, events, eventually, eventually_async, trip, TTL};

fn instance(set: &SentinelSet, id: &str) -> Fleet {
    Fleet::builder(set.url())
        .instance(id)
        .ttl(TTL)
        .timeout(Duration::from_millis(300))
        .snapshot_every(Duration::from_millis(400))
        .start()
        .expect("a valid fleet")
}

/// The instances whose opinions of `name` the node on `port` holds, sorted.
async fn stored(port: u16, name: &str) -> Vec<String> {
    let url = format!("redis://127.0.0.1:{port}");
    let client = redis::Client::open(url).unwrap();
    let Ok(mut conn) = client.get_multiplexed_async_connection().await else {
        return Vec::new();
    };
    redis::cmd("ZRANGE")
        .arg(format!("breaker:fleet:{{{name}}}:live"))
        .arg(0)
        .arg(-1)
        .query_async::<Vec<String>>(&mut conn)
        .await
        .map(|mut ids| {
            ids.sort();
            ids
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_failover_the_fleet_finds_the_new_master_and_opinions_flow_again() {
    let Some(set) = SentinelSet::start_or_skip("fleet_sentinel::after_a_failover") else {
        return;
    };
    let (old, new) = (port(&set.master), port(&set.replica));
    assert_eq!(set.master_port(), Some(old));
    let (fa, fb, fc) = (
        instance(&set, "a"),
        instance(&set, "b"),
        instance(&set, "c"),
    );
    let seen = events(&fc);
    let (a, b, c) = (
        breaker("db", Duration::from_secs(60)),
        breaker("db", Duration::from_secs(60)),
        breaker("db", Duration::from_secs(60)),
    );
    fa.join(&a, 2);
    fb.join(&b, 2);
    fc.join(&c, 2);
    for fleet in [&fa, &fb, &fc] {
        fleet.flush().await;
    }

    // Before: a's opinion reaches c through the master the sentinel names.
    trip(&a);
    eventually("c hears a's OPEN", || fc.peers_open("db") == 1).await;
    assert_eq!(stored(old, "db").await, ["a"]);

    tokio::task::block_in_place(|| {
        set.wait_ready();
        set.force_failover();
    });
    eventually_async("the sentinel names the replica master", || async {
        tokio::task::block_in_place(|| set.master_port()) == Some(new)
    })
    .await;

    // After: the instances left the old master, found the new one, and b's opinion with a's
    // (written again there) makes a quorum at c, within the sentinel's timeout.
    let flowing = tokio::time::Instant::now();
    trip(&b);
    eventually_async("the new master holds a's and b's opinions", || async {
        let got = stored(new, "db").await;
        got == ["a", "b"]
    })
    .await;
    eventually("c adopts their quorum", || c.state() == State::Open).await;
    assert!(
        flowing.elapsed() < FAILOVER_TIMEOUT,
        "opinions flowed again after {:?}",
        flowing.elapsed()
    );
    assert_eq!(
        c.try_acquire().err().map(|r| r.reason()),
        Some(RejectReason::FleetOpen)
    );
    assert_eq!(fc.peers_open("db"), 2);
    // c lost the old master on the way, and said so; it answers again now.
    let events = seen.lock().unwrap().clone();
    assert!(
        matches!(
            &events[..],
            [.., FleetEvent::Degraded { .. }, FleetEvent::Recovered]
        ),
        "{events:?}"
    );
    assert!(!fc.is_degraded());
}
