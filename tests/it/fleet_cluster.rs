//! The fleet on a Redis Cluster, against real servers: three masters on loopback. Quorums on
//! names whose keys live on three different nodes, each name's opinions on its own sharded
//! channel on its own node; a master killed degrades the fleet, and back, the fleet heals.
//!
//! Needs `redis-server` and `redis-cli` on the PATH (CI installs them); without them the test
//! says loudly that it skipped, unless `CI=true`, where it fails.

use crate::support::cluster::Cluster;
use crate::support::fleet as support;

use std::time::Duration;

use breakerbox::fleet::{Fleet, FleetEvent};
use breakerbox::{RejectReason, State};
use support::{breaker, events, eventually, trip, TTL};

fn instance(cluster: &Cluster, id: &str) -> Fleet {
    Fleet::builder(cluster.url())
        .instance(id)
        .ttl(TTL)
        .timeout(Duration::from_millis(300))
        .snapshot_every(Duration::from_millis(400))
        .start()
        .expect("a valid fleet")
}

/// The sharded channels master `i` has subscribers on.
fn shard_channels(cluster: &Cluster, i: usize) -> Vec<String> {
    let mut channels: Vec<String> = redis::cmd("PUBSUB")
        .arg("SHARDCHANNELS")
        .query(&mut cluster.node(i))
        .unwrap();
    channels.sort();
    channels
}

/// The instances whose opinions of `name` master `i` holds, sorted; none if it is down.
fn stored(cluster: &Cluster, i: usize, name: &str) -> Vec<String> {
    let Ok(mut conn) =
        redis::Client::open(cluster.masters[i].url()).and_then(|c| c.get_connection())
    else {
        return Vec::new();
    };
    let mut ids: Vec<String> = redis::cmd("ZRANGE")
        .arg(format!("breaker:fleet:{{{name}}}:live"))
        .arg(0)
        .arg(-1)
        .query(&mut conn)
        .unwrap_or_default();
    ids.sort();
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quorums_form_across_nodes_and_the_fleet_heals_after_a_master_dies() {
    let Some(mut cluster) = Cluster::start_or_skip("fleet_cluster::quorums_form_across_nodes")
    else {
        return;
    };
    // One name on each master.
    let mut names = vec![String::new(); 3];
    for n in 0.. {
        let name = format!("db{n}");
        let i = cluster.master_of(&format!("breaker:fleet:{{{name}}}:live"));
        if names[i].is_empty() {
            names[i] = name;
        }
        if names.iter().all(|name| !name.is_empty()) {
            break;
        }
    }
    let (fa, fb, fc) = (
        instance(&cluster, "a"),
        instance(&cluster, "b"),
        instance(&cluster, "c"),
    );
    let seen = events(&fc);
    let mut breakers = Vec::new();
    for name in &names {
        let each = [fa.clone(), fb.clone(), fc.clone()].map(|fleet| {
            let b = breaker(name, Duration::from_secs(60));
            fleet.join(&b, 2);
            b
        });
        breakers.push(each);
    }
    for fleet in [&fa, &fb, &fc] {
        fleet.flush().await;
    }

    // a and b open every name: c adopts the three quorums, each heard from its own node.
    for [a, b, _] in &breakers {
        trip(a);
        trip(b);
    }
    for (name, [_, _, c]) in names.iter().zip(&breakers) {
        eventually(&format!("c adopts the quorum on {name}"), || {
            c.state() == State::Open
        })
        .await;
        assert_eq!(
            c.try_acquire().err().map(|r| r.reason()),
            Some(RejectReason::FleetOpen)
        );
        assert_eq!(fc.peers_open(name), 2);
    }
    // Each master holds its name's opinions and publishes on its name's channel alone.
    for (i, name) in names.iter().enumerate() {
        assert_eq!(stored(&cluster, i, name), ["a", "b"]);
        assert_eq!(
            shard_channels(&cluster, i),
            [format!("breaker:fleet:{{{name}}}:opinions")]
        );
    }

    // A resharding: the first name's slot, with its keys, moves to the second master. The
    // instances follow it there, and its messages flow from there.
    let key = format!("breaker:fleet:{{{}}}:live", names[0]);
    tokio::task::block_in_place(|| cluster.move_slot(cluster.slot(&key), 0, 1));
    assert_eq!(cluster.master_of(&key), 1);
    assert_eq!(stored(&cluster, 1, &names[0]), ["a", "b"]);
    let channel = |name: &str| format!("breaker:fleet:{{{name}}}:opinions");
    eventually("the instances subscribe on the new owner", || {
        let mut expected = vec![channel(&names[0]), channel(&names[1])];
        expected.sort();
        tokio::task::block_in_place(|| shard_channels(&cluster, 1)) == expected
    })
    .await;
    assert_eq!(shard_channels(&cluster, 0), Vec::<String>::new());
    breakers[0][0].reset();
    eventually("c hears a close from the new owner", || {
        fc.peers_open(&names[0]) == 1
    })
    .await;
    assert_eq!(stored(&cluster, 1, &names[0]), ["b"]);

    // The master of the third name dies: the fleet degrades, every call still local.
    tokio::task::block_in_place(|| cluster.masters[2].kill());
    eventually("c finds the store failing", || fc.is_degraded()).await;
    assert_eq!(
        breakers[0][2].try_acquire().err().map(|r| r.reason()),
        Some(RejectReason::FleetOpen)
    );

    // Back with its slots, empty: the instances write their opinions again and c recovers.
    tokio::task::block_in_place(|| {
        cluster.masters[2].restart();
        cluster.wait_ok();
    });
    eventually("c recovers", || !fc.is_degraded()).await;
    eventually(
        "the restarted master holds a's and b's opinions again",
        || tokio::task::block_in_place(|| stored(&cluster, 2, &names[2])) == ["a", "b"],
    )
    .await;
    eventually("c hears them there", || fc.peers_open(&names[2]) == 2).await;
    let events = seen.lock().unwrap().clone();
    assert!(
        matches!(
            &events[..],
            [.., FleetEvent::Degraded { .. }, FleetEvent::Recovered]
        ),
        "{events:?}"
    );
    // Messages flow again on the restarted node: b's withdrawal reaches c.
    breakers[2][1].reset();
    eventually("c hears b close on the restarted node", || {
        fc.peers_open(&names[2]) == 1
    })
    .await;
}
