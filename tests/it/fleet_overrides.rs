//! Overrides that change the fleet's keys of running breakers: `fleet = true` joins a breaker
//! registered without it (its own OPEN published, its peers' quorum adopted, a keyed family's
//! present members too), `fleet = false` takes one out (its opinion withdrawn, an OPEN its
//! peers caused ended, their quorum no longer adopted), and `fleet_quorum` reaches a breaker
//! in the fleet. Against a real `redis-server`; in a binary of its own, as the process's fleet
//! is started once, so one test runs the cases in turn.

use crate::support::fleet as support;
use crate::support::process;

use std::sync::Arc;
use std::time::Duration;

use breaker_workspace::redis_server::RedisServer;
use breakerbox::fleet::Fleet;
use breakerbox::overrides::Overrides;
use breakerbox::{circuit_breaker, registry, Breaker, Classify, Config, Outcome};
use breakerbox::{RejectReason, Rejected, State};
use support::{breaker, eventually, eventually_async, instance, trip, TTL};

const OPEN: Duration = Duration::from_secs(30);

#[derive(Debug)]
struct Down;

impl Classify for Down {
    fn classify(&self) -> Outcome {
        Outcome::Failure
    }
}

impl From<Rejected> for Down {
    fn from(_: Rejected) -> Self {
        Down
    }
}

/// A keyed family registered with the fleet off.
#[circuit_breaker(name = "ovr::shard", key = shard, window = 2, min = 2, open = "30s")]
async fn shard(shard: u32) -> Result<u32, Down> {
    Ok(shard)
}

/// A breaker of the registry like the peers' (`support::breaker`), the fleet as given.
fn registered(name: &str, fleet: bool) -> Arc<Breaker> {
    let config = Config::builder()
        .count_window(2)
        .min_calls(2)
        .open_for(OPEN)
        .probes(1)
        .fleet(fleet)
        .build()
        .unwrap();
    registry().register(Arc::new(Breaker::new(name, config)))
}

fn apply(text: &str) {
    let overrides: Overrides = text.parse().unwrap();
    registry().apply(&overrides).unwrap();
}

/// Each of `peers` joins a breaker named `name` and trips it; the breakers are kept alive.
async fn peers_open(peers: &[&Fleet], name: &str) -> Vec<Arc<Breaker>> {
    let mut kept = Vec::new();
    for peer in peers {
        let b = breaker(name, OPEN);
        // A quorum no peer reaches: each opens by its own judgement only.
        peer.join(&b, 9);
        peer.flush().await;
        trip(&b);
        kept.push(b);
    }
    kept
}

fn rejected_by(b: &Breaker) -> Option<RejectReason> {
    b.try_acquire().err().map(|r| r.reason())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overrides_turn_the_fleet_on_and_off_for_running_breakers() {
    // It starts the process's fleet, of which a process has one.
    if !process::alone(concat!(
        module_path!(),
        "::overrides_turn_the_fleet_on_and_off_for_running_breakers"
    )) {
        return;
    }
    let Some(server) = RedisServer::start_or_skip("fleet_overrides") else {
        return;
    };
    let late = registered("ovr::late", false);
    let late_own = registered("ovr::late_own", false);
    let leaving = registered("ovr::leaving", true);
    let held = registered("ovr::held", true);
    let quorum = registered("ovr::quorum", true);
    assert_eq!(shard(7).await.unwrap(), 7);
    let me = Fleet::builder(server.url())
        .instance("me")
        .ttl(TTL)
        .timeout(Duration::from_millis(300))
        .snapshot_every(Duration::from_secs(10))
        .join(breakerbox::registry())
        .start()
        .unwrap();
    me.flush().await;
    let every = Duration::from_secs(10);
    let (a, b, c) = (
        instance(&server, "a", every),
        instance(&server, "b", every),
        instance(&server, "c", every),
    );

    turning_it_on_joins(&server, &me, [&a, &b], &late, &late_own).await;
    turning_it_on_reaches_a_familys_present_members(&me, [&a, &b]).await;
    turning_it_off_withdraws_and_adopts_no_more(&me, [&a, &b], &leaving).await;
    turning_it_off_ends_an_open_the_peers_caused(&me, [&a, &b], &held).await;
    a_new_quorum_reaches_a_breaker_in_the_fleet(&me, [&a, &b, &c], &quorum).await;
}

async fn turning_it_on_joins(
    server: &RedisServer,
    me: &Fleet,
    [a, b]: [&Fleet; 2],
    late: &Breaker,
    late_own: &Breaker,
) {
    // Off: two peers' OPENs in the store, published to this process, do not open it.
    let _peers = peers_open(&[a, b], "ovr::late").await;
    let store = support::store(server).await;
    eventually_async("both peers' opinions in the store", || {
        let mut store = store.clone();
        async move {
            let live: usize = redis::cmd("ZCARD")
                .arg("breaker:fleet:{ovr::late}:live")
                .query_async(&mut store)
                .await
                .unwrap();
            live == 2
        }
    })
    .await;
    me.flush().await;
    assert_eq!((late.state(), rejected_by(late)), (State::Closed, None));

    apply("[\"ovr::late\"]\nfleet = true\n");
    eventually("the breaker turned on adopts its peers' quorum", || {
        late.state() == State::Open
    })
    .await;
    assert_eq!(rejected_by(late), Some(RejectReason::FleetOpen));

    // Its own OPEN, held when it joins, is published.
    trip(late_own);
    let watching = breaker("ovr::late_own", OPEN);
    a.join(&watching, 2);
    a.flush().await;
    assert_eq!(a.peers_open("ovr::late_own"), 0);
    apply("[\"ovr::late_own\"]\nfleet = true\n");
    eventually("a peer sees the OPEN it held when turned on", || {
        a.peers_open("ovr::late_own") == 1
    })
    .await;
}

async fn turning_it_on_reaches_a_familys_present_members(me: &Fleet, [a, b]: [&Fleet; 2]) {
    apply("[\"ovr::shard\"]\nfleet = true\n");
    me.flush().await;
    let _peers = peers_open(&[a, b], "ovr::shard[7]").await;
    eventually(
        "the family's member made before the override adopts",
        || registry().get_keyed("ovr::shard", "7").unwrap().state() == State::Open,
    )
    .await;
    assert!(matches!(shard(7).await, Err(Down)));
    let member = registry().get_keyed("ovr::shard", "7").unwrap();
    assert_eq!(member.snapshot().totals.rejected_by.fleet_open, 1);
}

async fn turning_it_off_withdraws_and_adopts_no_more(
    me: &Fleet,
    [a, b]: [&Fleet; 2],
    leaving: &Breaker,
) {
    let watching = breaker("ovr::leaving", OPEN);
    a.join(&watching, 2);
    a.flush().await;
    trip(leaving);
    eventually("a peer sees this instance's OPEN", || {
        a.peers_open("ovr::leaving") == 1
    })
    .await;

    apply("[\"ovr::leaving\"]\nfleet = false\n");
    eventually("its opinion is withdrawn although it is still OPEN", || {
        a.peers_open("ovr::leaving") == 0
    })
    .await;
    assert_eq!(leaving.state(), State::Open);

    // Closed again, out of the fleet: its name is forgotten, and two peers' OPENs are not
    // adopted.
    leaving.reset();
    let _peers = peers_open(&[a, b], "ovr::leaving").await;
    eventually("a peer hears the other", || {
        a.peers_open("ovr::leaving") == 1
    })
    .await;
    me.flush().await;
    assert_eq!(
        me.peers_open("ovr::leaving"),
        0,
        "a name that left is forgotten"
    );
    assert_eq!(
        (leaving.state(), rejected_by(leaving)),
        (State::Closed, None)
    );
}

async fn turning_it_off_ends_an_open_the_peers_caused(
    me: &Fleet,
    [a, b]: [&Fleet; 2],
    held: &Breaker,
) {
    let _peers = peers_open(&[a, b], "ovr::held").await;
    eventually("the quorum opens it", || held.state() == State::Open).await;
    assert_eq!(rejected_by(held), Some(RejectReason::FleetOpen));

    apply("[\"ovr::held\"]\nfleet = false\n");
    me.flush().await;
    let probe = held.try_acquire().expect("the fleet's OPEN ended: a probe");
    assert_eq!(held.state(), State::HalfOpen);
    probe.success();
    assert_eq!(held.state(), State::Closed);
    assert_eq!(held.snapshot().totals.rejected_by.fleet_open, 1);
}

async fn a_new_quorum_reaches_a_breaker_in_the_fleet(
    me: &Fleet,
    [a, b, c]: [&Fleet; 3],
    quorum: &Breaker,
) {
    apply("[\"ovr::quorum\"]\nfleet_quorum = 3\n");
    me.flush().await;
    let _two = peers_open(&[a, b], "ovr::quorum").await;
    eventually("this process's view holds both peers", || {
        me.peers_open("ovr::quorum") == 2
    })
    .await;
    me.flush().await;
    assert_eq!(
        (quorum.state(), rejected_by(quorum)),
        (State::Closed, None),
        "two peers are no quorum of 3"
    );
    let _third = peers_open(&[c], "ovr::quorum").await;
    eventually("three peers are", || quorum.state() == State::Open).await;
    assert_eq!(rejected_by(quorum), Some(RejectReason::FleetOpen));
}
