//! The probe lease against a real `redis-server`: a holder keeps it only while it uses it.
//! One that starts no probe in time gives it back, so that a waiter with calls probes; one
//! that stops gives it back at once; and one whose renewal the store refuses lets it go.
//!
//! Needs `redis-server` on the PATH (CI installs it); without it each test says loudly that
//! it skipped, unless `CI=true`, where it fails.

use crate::support::fleet as support;

use std::sync::Arc;
use std::time::Duration;

use breaker_workspace::redis_server::RedisServer;
use breakerbox::fleet::Fleet;
use breakerbox::{Breaker, State};
use futures_util::StreamExt;
use support::{breaker, eventually, eventually_async, instance, store, trip, TTL};

const SNAPSHOT: Duration = Duration::from_millis(400);
const OPEN: Duration = Duration::from_millis(1500);

/// Who holds the probe lease of `name`, as the store says.
async fn holders(server: &RedisServer, name: &str) -> Vec<String> {
    let mut conn = store(server).await;
    redis::cmd("ZRANGE")
        .arg(format!("breaker:fleet:{{{name}}}:lease"))
        .arg(0)
        .arg(-1)
        .query_async(&mut conn)
        .await
        .unwrap()
}

/// Two peers that open `name` by their own judgement, and two instances that adopt their
/// quorum; once one of those two holds the lease, `(holder, waiter)` with their breakers.
/// Neither had a call.
struct Adopted {
    _peers: Vec<(Fleet, Arc<Breaker>)>,
    holder: (Fleet, Arc<Breaker>),
    waiter: (Fleet, Arc<Breaker>),
}

async fn adopted(server: &RedisServer, name: &str) -> Adopted {
    let adopters: Vec<_> = ["c", "d"]
        .iter()
        .map(|id| (instance(server, id, SNAPSHOT), breaker(name, OPEN)))
        .collect();
    for (fleet, b) in &adopters {
        fleet.join(b, 2);
        fleet.flush().await;
    }
    // The peers' own OPENs last a minute: their claim counts only as long as the adopters'
    // own longest OPEN, and they ask for the lease only near their end.
    let mut peers = Vec::new();
    for id in ["a", "b"] {
        let fleet = instance(server, id, SNAPSHOT);
        let b = breaker(name, Duration::from_secs(60));
        fleet.join(&b, 9);
        fleet.flush().await;
        trip(&b);
        peers.push((fleet, b));
    }
    eventually("both adopt the quorum", || {
        adopters.iter().all(|(_, b)| b.try_acquire().is_err())
    })
    .await;
    eventually_async("one of them takes the lease", || async {
        holders(server, name).await.len() == 1
    })
    .await;
    let holder = holders(server, name).await;
    let mut adopters = adopters.into_iter();
    let (c, d) = (adopters.next().unwrap(), adopters.next().unwrap());
    let (holder, waiter) = match holder[0].as_str() {
        "c" => (c, d),
        _ => (d, c),
    };
    Adopted {
        _peers: peers,
        holder,
        waiter,
    }
}

/// Calls `b` until it admits a probe, which succeeds.
async fn probes(b: &Breaker, what: &str) {
    eventually(what, || match b.try_acquire() {
        Ok(permit) => {
            permit.success();
            true
        }
        Err(_) => false,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_holder_that_starts_no_probe_gives_the_lease_back_to_a_waiter_with_calls() {
    let Some(server) = RedisServer::start_or_skip("fleet_lease::an_idle_holder") else {
        return;
    };
    let fleet = adopted(&server, "db").await;
    // The holder has no calls; the waiter does, and probes once the lease is its own.
    probes(&fleet.waiter.1, "the waiter probes").await;
    assert_eq!(fleet.waiter.1.state(), State::Closed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_holder_whose_fleet_stops_gives_the_lease_back_at_once() {
    let Some(server) = RedisServer::start_or_skip("fleet_lease::a_holder_whose_fleet_stops") else {
        return;
    };
    let client = redis::Client::open(server.url()).unwrap();
    let mut pubsub = client.get_async_pubsub().await.unwrap();
    pubsub.subscribe("breaker:fleet:opinions").await.unwrap();
    let fleet = adopted(&server, "db").await;
    let gone = fleet.holder.0.instance().to_string();
    drop(fleet.holder);
    let mut messages = pubsub.on_message();
    let free = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(message) = messages.next().await {
            let text: String = message.get_payload().unwrap();
            if text.starts_with(&format!("1|free|{gone}|")) {
                return text;
            }
        }
        panic!("the subscription ended");
    })
    .await
    .expect("the lease given back as the fleet stops");
    assert!(free.ends_with("|db"), "{free}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renewal_the_store_refuses_means_the_lease_is_lost() {
    let Some(server) = RedisServer::start_or_skip("fleet_lease::a_renewal_the_store_refuses")
    else {
        return;
    };
    let fleet = adopted(&server, "db").await;
    // The holder's probe in flight: its lease is renewed while it lasts.
    let probe = {
        let b = &fleet.holder.1;
        let mut permit = None;
        eventually("the holder admits a probe", || {
            permit = b.try_acquire().ok();
            permit.is_some()
        })
        .await;
        permit.unwrap()
    };
    let mut conn = store(&server).await;
    let _: () = redis::cmd("FLUSHALL").query_async(&mut conn).await.unwrap();
    // The store lost the lease: the holder's next renewals (every 400 ms) are refused, and
    // it never holds the lease again while its probe lasts.
    let holder = fleet.holder.0.instance().to_string();
    let watched = tokio::time::Instant::now();
    while watched.elapsed() < TTL * 2 {
        let now = holders(&server, "db").await;
        assert!(!now.contains(&holder), "the lost lease came back: {now:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // And the waiter takes it.
    probes(
        &fleet.waiter.1,
        "the waiter probes while the holder's probe lasts",
    )
    .await;
    assert_eq!(fleet.waiter.1.state(), State::Closed);
    probe.success();
}
