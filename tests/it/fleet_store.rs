//! The fleet's store side against a real `redis-server` on loopback: opinions published and
//! withdrawn, nothing sent per call, expiry of a dead instance, a lost message healed by a
//! snapshot, malformed messages ignored, the store paused or killed mid-traffic, and a round
//! of renewals sent as one message.
//!
//! Needs `redis-server` on the PATH (CI installs it); without it each test says loudly that
//! it skipped, unless `CI=true`, where it fails.

use crate::support::fleet as support;

use std::time::Duration;

use breakerbox::fleet::FleetEvent;
use std::sync::Arc;

use breaker_workspace::redis_server::RedisServer;
use breakerbox::{Breaker, Config, State};
use support::{breaker, command_stats, events, eventually, instance, store, trip, TTL};

const SNAPSHOT: Duration = Duration::from_millis(400);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_own_open_reaches_the_peers_and_closing_withdraws_it() {
    let Some(server) = RedisServer::start_or_skip("fleet_store::an_own_open_reaches_the_peers")
    else {
        return;
    };
    let (fa, fb) = (
        instance(&server, "a", SNAPSHOT),
        instance(&server, "b", SNAPSHOT),
    );
    let (a, b) = (
        breaker("db", Duration::from_secs(30)),
        breaker("db", Duration::from_secs(30)),
    );
    fa.join(&a, 2);
    fb.join(&b, 2);
    fa.flush().await;
    fb.flush().await;

    trip(&a);
    assert_eq!(a.state(), State::Open);
    eventually("b sees a's OPEN", || fb.peers_open("db") == 1).await;
    assert_eq!(
        fa.peers_open("db"),
        0,
        "an instance's own opinion is not a peer's"
    );
    assert_eq!(b.state(), State::Closed, "one peer is no quorum");

    a.reset();
    eventually("a's opinion withdrawn", || fb.peers_open("db") == 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_command_reaches_the_store_per_call() {
    let Some(server) =
        RedisServer::start_or_skip("fleet_store::no_command_reaches_the_store_per_call")
    else {
        return;
    };
    // No periodic snapshot within the test: only calls could reach the store.
    let fleet = instance(&server, "a", Duration::from_secs(600));
    let config = Config::builder()
        .count_window(20)
        .min_calls(10)
        .fleet(true)
        .build()
        .unwrap();
    let b = Arc::new(Breaker::new("db", config));
    fleet.join(&b, 2);
    fleet.flush().await;
    let mut conn = store(&server).await;
    let before = command_stats(&mut conn).await;

    for i in 0..10_000 {
        let permit = b.try_acquire().expect("closed");
        // One failure in ten never trips a rate of one half.
        if i % 10 == 0 {
            permit.failure();
        } else {
            permit.success();
        }
    }
    fleet.flush().await;

    assert_eq!(b.state(), State::Closed);
    assert_eq!(
        b.snapshot().totals.success + b.snapshot().totals.failure,
        10_000
    );
    assert_eq!(command_stats(&mut conn).await, before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_instance_stops_counting_after_its_ttl() {
    let Some(server) = RedisServer::start_or_skip("fleet_store::a_dead_instance_stops_counting")
    else {
        return;
    };
    // The instance that dies runs on a runtime of its own, shut down without a goodbye.
    let doomed = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let fa = {
        let _inside = doomed.enter();
        instance(&server, "a", SNAPSHOT)
    };
    let fb = instance(&server, "b", SNAPSHOT);
    let (a, b) = (
        breaker("db", Duration::from_secs(60)),
        breaker("db", Duration::from_secs(60)),
    );
    fa.join(&a, 2);
    fb.join(&b, 2);
    fb.flush().await;
    trip(&a);
    eventually("b sees a's OPEN", || fb.peers_open("db") == 1).await;
    // Renewed while a lives: still there after two time-to-lives.
    tokio::time::sleep(TTL * 2).await;
    assert_eq!(fb.peers_open("db"), 1);

    doomed.shutdown_background();
    let died = tokio::time::Instant::now();
    eventually("a's opinion expires", || fb.peers_open("db") == 0).await;
    assert!(died.elapsed() <= TTL + Duration::from_millis(500));
    // The store dropped it too: a newcomer's first snapshot finds nothing.
    let fc = instance(&server, "c", SNAPSHOT);
    let c = breaker("db", Duration::from_secs(60));
    fc.join(&c, 2);
    fc.flush().await;
    assert_eq!(fc.peers_open("db"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_message_is_healed_by_the_next_snapshot() {
    let Some(server) = RedisServer::start_or_skip("fleet_store::a_lost_message_is_healed") else {
        return;
    };
    let fb = instance(&server, "b", SNAPSHOT);
    let b = breaker("db", Duration::from_secs(60));
    fb.join(&b, 2);
    fb.flush().await;

    // An opinion written as the layout says, whose message never came (docs/fleet.md).
    let mut conn = store(&server).await;
    let (secs, micros): (u64, u64) = redis::cmd("TIME").query_async(&mut conn).await.unwrap();
    let now_ms = secs * 1000 + micros / 1000;
    let until = now_ms + 60_000;
    let _: () = redis::pipe()
        .cmd("ZADD")
        .arg("breaker:fleet:{db}:live")
        .arg(until)
        .arg("ghost")
        .ignore()
        .cmd("HSET")
        .arg("breaker:fleet:{db}:until")
        .arg("ghost")
        .arg(format!("{until} 1"))
        .ignore()
        .query_async(&mut conn)
        .await
        .unwrap();
    eventually("the snapshot brings the lost opinion", || {
        fb.peers_open("db") == 1
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_and_stale_messages_are_ignored() {
    let Some(server) = RedisServer::start_or_skip("fleet_store::malformed_and_stale_messages")
    else {
        return;
    };
    let fb = instance(&server, "b", Duration::from_secs(600));
    let b = breaker("db", Duration::from_secs(60));
    fb.join(&b, 2);
    fb.flush().await;
    let mut conn = store(&server).await;
    for junk in [
        "",
        "1|open",
        "1|open|x|1|-4|1|db",
        "9|open|x|1|5000|5000|db",
        "\u{fffd}|\u{0}",
    ] {
        let _: i64 = redis::cmd("PUBLISH")
            .arg("breaker:fleet:opinions")
            .arg(junk)
            .query_async(&mut conn)
            .await
            .unwrap();
    }
    let publish = |text: &'static str| {
        redis::cmd("PUBLISH")
            .arg("breaker:fleet:opinions")
            .arg(text)
            .to_owned()
    };
    let _: i64 = publish("1|open|x|7|60000|60000|db")
        .query_async(&mut conn)
        .await
        .unwrap();
    eventually("a well-formed opinion after the junk", || {
        fb.peers_open("db") == 1
    })
    .await;
    // An older "closed" of x is stale: x stays OPEN; a newer one withdraws it.
    let _: i64 = publish("1|closed|x|6|0|0|db")
        .query_async(&mut conn)
        .await
        .unwrap();
    let _: i64 = publish("1|open|y|1|60000|60000|db")
        .query_async(&mut conn)
        .await
        .unwrap();
    eventually("y counted", || fb.peers_open("db") == 2).await;
    let _: i64 = publish("1|closed|x|8|0|0|db")
        .query_async(&mut conn)
        .await
        .unwrap();
    eventually("x withdrawn", || fb.peers_open("db") == 1).await;
    assert!(!fb.is_degraded());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_then_killed_store_leaves_every_call_to_local_judgement() {
    let Some(mut server) = RedisServer::start_or_skip("fleet_store::a_paused_then_killed_store")
    else {
        return;
    };
    let (fa, fb) = (
        instance(&server, "a", SNAPSHOT),
        instance(&server, "b", SNAPSHOT),
    );
    let seen = events(&fa);
    let (a, b) = (
        breaker("db", Duration::from_secs(60)),
        breaker("db", Duration::from_secs(60)),
    );
    fa.join(&a, 2);
    fb.join(&b, 2);
    fa.flush().await;
    fb.flush().await;

    // Traffic through b while the store is frozen: every call answered at once by local
    // judgement (a call that waited on the store would outlast the 2 s bound).
    server.pause();
    let traffic = async {
        for _ in 0..2_000 {
            b.call(async { Ok::<_, std::io::Error>(()) })
                .await
                .unwrap()
                .unwrap();
        }
    };
    tokio::time::timeout(Duration::from_secs(2), traffic)
        .await
        .expect("calls never wait on the store");
    eventually("a says its view is degraded", || fa.is_degraded()).await;
    let degraded = seen.lock().unwrap().first().cloned();
    assert!(
        matches!(degraded, Some(FleetEvent::Degraded { .. })),
        "{degraded:?}"
    );
    // a opens while the store is frozen: published when it answers again.
    trip(&a);
    server.resume();
    eventually("a recovered", || !fa.is_degraded()).await;
    eventually("b learns a's OPEN", || fb.peers_open("db") == 1).await;
    assert_eq!(seen.lock().unwrap().last(), Some(&FleetEvent::Recovered));

    // Killed: the store's data is gone; a's opinion is written again once it is back.
    server.kill();
    eventually("a degraded again", || fa.is_degraded()).await;
    let traffic = async {
        for _ in 0..2_000 {
            b.call(async { Ok::<_, std::io::Error>(()) })
                .await
                .unwrap()
                .unwrap();
        }
    };
    tokio::time::timeout(Duration::from_secs(2), traffic)
        .await
        .expect("calls never wait on the store");
    assert_eq!(b.state(), State::Closed);
    server.restart();
    eventually("both recovered", || !fa.is_degraded() && !fb.is_degraded()).await;
    eventually("the views converge again", || fb.peers_open("db") == 1).await;
    let mut conn = store(&server).await;
    let live: Vec<String> = redis::cmd("ZRANGE")
        .arg("breaker:fleet:{db}:live")
        .arg(0)
        .arg(-1)
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(live, ["a"]);
}

/// The texts of a batch of messages (`3|`, then `<bytes>|<text>` each), in order.
fn unbatch(batch: &str) -> Vec<String> {
    let mut rest = batch.strip_prefix("3|").expect("a batch");
    let mut texts = Vec::new();
    while let Some((len, after)) = rest.split_once('|') {
        let len: usize = len.parse().expect("a length");
        texts.push(after[..len].to_string());
        rest = &after[len..];
    }
    assert!(rest.is_empty(), "{batch}");
    texts
}

/// The next message heard, within 10 s.
async fn next(heard: &mut redis::aio::PubSubStream) -> String {
    use futures_util::StreamExt;
    let message = tokio::time::timeout(Duration::from_secs(10), heard.next()).await;
    let message = message.expect("a message within 10 s").expect("subscribed");
    String::from_utf8(message.get_payload_bytes().to_vec()).unwrap()
}

/// `kind|instance|seq|name` of a message's text.
fn gist(text: &str) -> String {
    let parts: Vec<&str> = text.splitn(7, '|').collect();
    format!("{}|{}|{}|{}", parts[1], parts[2], parts[3], parts[6])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_of_renewals_is_one_message_and_keeps_the_peers_counting() {
    let Some(server) = RedisServer::start_or_skip("fleet_store::a_round_of_renewals") else {
        return;
    };
    let client = redis::Client::open(server.url()).unwrap();
    let mut pubsub = client.get_async_pubsub().await.unwrap();
    pubsub.subscribe("breaker:fleet:opinions").await.unwrap();
    let mut heard = pubsub.into_on_message();
    // No snapshot within the test: only messages reach b.
    let (fa, fb) = (
        instance(&server, "a", Duration::from_secs(60)),
        instance(&server, "b", Duration::from_secs(60)),
    );
    let names = ["x", "y|z", "w"];
    let own: Vec<_> = names
        .iter()
        .map(|n| breaker(n, Duration::from_secs(30)))
        .collect();
    let theirs: Vec<_> = names
        .iter()
        .map(|n| breaker(n, Duration::from_secs(30)))
        .collect();
    for b in &theirs {
        fb.join(b, 2);
    }
    for b in &own {
        fa.join(b, 2);
    }
    fa.flush().await;
    fb.flush().await;
    own.iter().for_each(|b| trip(b));

    // The OPENs go out alone, at once, with their writes.
    let mut opens = Vec::new();
    while opens.len() < names.len() {
        let text = next(&mut heard).await;
        assert!(text.starts_with("1|open|a|"), "{text}");
        opens.push(gist(&text));
    }
    opens.sort();
    // Each round of renewals (every ttl/3), the same opinions in one message. The fourth
    // round comes at least a ttl after the OPENs: by then the renewals alone keep b
    // counting a.
    for _ in 0..4 {
        let text = next(&mut heard).await;
        let mut renewed: Vec<String> = unbatch(&text).iter().map(|t| gist(t)).collect();
        renewed.sort();
        assert_eq!(renewed, opens, "{text}");
    }
    for n in names {
        assert_eq!(fb.peers_open(n), 1, "{n}");
    }
}
