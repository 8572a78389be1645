//! The fleet's quorum against a real `redis-server` on loopback: one OPEN peer changes
//! nothing, two open a third, which rejects with `FleetOpen` and closes by its own probes;
//! clocks that disagree change nothing; twenty instances that adopted OPEN probe one at a
//! time until a trial passes.
//!
//! Needs `redis-server` on the PATH (CI installs it); without it each test says loudly that
//! it skipped, unless `CI=true`, where it fails.

use crate::support::fleet as support;

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use breaker_workspace::redis_server::RedisServer;
use breakerbox::clock::ManualClock;
use breakerbox::fleet::Fleet;
use breakerbox::{Breaker, Config, RejectReason, State};
use support::{breaker, eventually, instance, trip};

const SNAPSHOT: Duration = Duration::from_millis(400);

/// A breaker on a clock of its own, `offset` ahead of its peers'.
fn on_clock(name: &str, open: Duration, offset: Duration) -> (Arc<Breaker>, ManualClock) {
    let clock = ManualClock::new();
    clock.advance(offset);
    let config = Config::builder()
        .count_window(2)
        .min_calls(2)
        .open_for(open)
        .probes(1)
        .fleet(true)
        .build()
        .unwrap();
    (
        Arc::new(Breaker::with_clock(name, config, clock.clone())),
        clock,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_open_peers_open_a_third_which_closes_by_its_own_probes() {
    let Some(server) = RedisServer::start_or_skip("fleet_adoption::two_open_peers_open_a_third")
    else {
        return;
    };
    let fleets: Vec<Fleet> = ["a", "b", "c"]
        .iter()
        .map(|id| instance(&server, id, SNAPSHOT))
        .collect();
    let (a, b) = (
        breaker("db", Duration::from_secs(30)),
        breaker("db", Duration::from_secs(30)),
    );
    let (c, c_clock) = on_clock("db", Duration::from_secs(30), Duration::ZERO);
    for (fleet, member) in fleets.iter().zip([&a, &b, &c]) {
        fleet.join(member, 2);
        fleet.flush().await;
    }

    trip(&a);
    eventually("c sees a", || fleets[2].peers_open("db") == 1).await;
    fleets[2].flush().await;
    assert_eq!(c.state(), State::Closed, "one OPEN peer changes nothing");
    c.try_acquire().expect("admitted").success();
    assert_eq!(b.state(), State::Closed);

    trip(&b);
    eventually("c opens for its peers", || c.state() == State::Open).await;
    let rejected = c.try_acquire().unwrap_err();
    assert_eq!(rejected.reason(), RejectReason::FleetOpen);
    let left = rejected.retry_after().unwrap();
    assert!(
        left > Duration::from_secs(28) && left <= Duration::from_secs(31),
        "{left:?}"
    );
    let totals = c.snapshot().totals;
    assert_eq!(
        (totals.rejected_by.fleet_open, totals.rejected_by.open),
        (1, 0)
    );
    assert_eq!(c.snapshot().calls, 1, "a rejection never enters the window");

    // Its own clock past the peers' OPEN: its own probe closes it, and the same quorum,
    // still renewed, does not open it again.
    c_clock.advance(Duration::from_secs(32));
    c.try_acquire().expect("a probe").success();
    assert_eq!(c.state(), State::Closed);
    tokio::time::sleep(SNAPSHOT * 2).await;
    fleets[2].flush().await;
    assert_eq!(fleets[2].peers_open("db"), 2);
    assert_eq!(c.state(), State::Closed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clocks_that_disagree_change_nothing() {
    let Some(server) = RedisServer::start_or_skip("fleet_adoption::clocks_that_disagree") else {
        return;
    };
    let day = Duration::from_secs(86_400);
    let fleets: Vec<Fleet> = ["a", "b", "c"]
        .iter()
        .map(|id| instance(&server, id, SNAPSHOT))
        .collect();
    // A clock a year ahead, one a day ahead, one at its origin: opinions travel as times left
    // on the server's clock, so none of that shows.
    let (a, _) = on_clock("db", Duration::from_secs(20), day * 365);
    let (b, _) = on_clock("db", Duration::from_secs(20), day);
    let (c, c_clock) = on_clock("db", Duration::from_secs(20), Duration::ZERO);
    for (fleet, member) in fleets.iter().zip([&a, &b, &c]) {
        fleet.join(member, 2);
        fleet.flush().await;
    }
    trip(&a);
    trip(&b);
    eventually("c opens for its peers", || c.state() == State::Open).await;
    let left = c.try_acquire().unwrap_err().retry_after().unwrap();
    assert!(
        left > Duration::from_secs(18) && left <= Duration::from_secs(21),
        "{left:?}"
    );
    c_clock.advance(Duration::from_secs(22));
    c.try_acquire().expect("a probe").success();
    assert_eq!(c.state(), State::Closed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_instances_that_adopted_open_probe_one_at_a_time_until_one_passes() {
    let Some(server) = RedisServer::start_or_skip("fleet_adoption::twenty_instances_recover")
    else {
        return;
    };
    const PROBES: u32 = 2;
    let sick: Vec<Fleet> = ["s1", "s2"]
        .iter()
        .map(|id| instance(&server, id, SNAPSHOT))
        .collect();
    let sick_breakers: Vec<_> = (0..2)
        .map(|_| breaker("db", Duration::from_millis(1_500)))
        .collect();
    for (fleet, member) in sick.iter().zip(&sick_breakers) {
        fleet.join(member, 2);
        fleet.flush().await;
    }
    let mut fleets = Vec::new();
    let mut members = Vec::new();
    for i in 0..20 {
        let fleet = instance(&server, &format!("w{i}"), SNAPSHOT);
        let config = Config::builder()
            .count_window(10)
            .min_calls(10)
            .open_for(Duration::from_secs(60))
            .probes(PROBES)
            .successes(PROBES)
            .fleet(true)
            .build()
            .unwrap();
        let member = Arc::new(Breaker::new("db", config));
        fleet.join(&member, 2);
        fleet.flush().await;
        fleets.push(fleet);
        members.push(member);
    }
    sick_breakers.iter().for_each(|b| trip(b));
    for member in &members {
        eventually("every instance adopts", || member.state() == State::Open).await;
    }

    // Traffic on all twenty: a call every 5 ms each, a probe taking 20 ms. Until the first
    // trial passes, one instance probes at a time; then every other half-opens at once.
    let probing = Arc::new(AtomicU32::new(0));
    let most = Arc::new(AtomicU32::new(0));
    let passed = Arc::new(AtomicBool::new(false));
    let tasks: Vec<_> = members
        .iter()
        .map(|member| {
            let (member, probing, most, passed) = (
                Arc::clone(member),
                Arc::clone(&probing),
                Arc::clone(&most),
                Arc::clone(&passed),
            );
            tokio::spawn(async move {
                while member.state() != State::Closed {
                    let probe = member.state() != State::Closed;
                    if let Ok(permit) = member.try_acquire() {
                        if probe {
                            let now = probing.fetch_add(1, Ordering::SeqCst) + 1;
                            if !passed.load(Ordering::SeqCst) {
                                most.fetch_max(now, Ordering::SeqCst);
                            }
                            tokio::time::sleep(Duration::from_millis(20)).await;
                            probing.fetch_sub(1, Ordering::SeqCst);
                        }
                        permit.success();
                    }
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                passed.store(true, Ordering::SeqCst);
            })
        })
        .collect();
    let all = async {
        for task in tasks {
            task.await.unwrap();
        }
    };
    tokio::time::timeout(Duration::from_secs(20), all)
        .await
        .expect("every instance closes");
    assert!(members.iter().all(|m| m.state() == State::Closed));
    let most = most.load(Ordering::SeqCst);
    assert!(
        (1..=PROBES).contains(&most),
        "{most} probes at once before the first trial passed, at most {PROBES}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_adopted_open_never_ends_before_the_quorums_end() {
    let Some(server) = RedisServer::start_or_skip("fleet_adoption::an_adopted_open_never_ends")
    else {
        return;
    };
    let open = Duration::from_millis(1500);
    let fleets: Vec<Fleet> = ["a", "b", "c"]
        .iter()
        .map(|id| instance(&server, id, SNAPSHOT))
        .collect();
    let peers = [breaker("db", open), breaker("db", open)];
    let c = breaker("db", open);
    for (fleet, member) in fleets.iter().zip(peers.iter().chain([&c])) {
        fleet.join(member, 2);
        fleet.flush().await;
    }
    // Three adoptions, as a newcomer tried them: the adopting instance calls every 2 ms,
    // and its first probe comes when the peers' OPENs ended, not before.
    for round in 0..3 {
        // The earliest the quorum's OPEN can end: the first peer opened after this.
        let earliest_end = tokio::time::Instant::now() + open;
        for peer in &peers {
            trip(peer);
        }
        eventually("c adopts", || c.try_acquire().is_err()).await;
        let probed = loop {
            if let Ok(permit) = c.try_acquire() {
                let at = tokio::time::Instant::now();
                permit.success();
                break at;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        };
        assert!(
            probed >= earliest_end,
            "round {round}: c probed {:?} before the quorum's OPEN ended",
            earliest_end - probed
        );
        assert_eq!(c.state(), State::Closed);
        for peer in &peers {
            peer.reset();
        }
        eventually("the peers' opinions withdrawn", || {
            fleets[2].peers_open("db") == 0
        })
        .await;
    }
}
