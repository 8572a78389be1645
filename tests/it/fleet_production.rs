//! The fleet on stores as production runs them, against real servers on loopback: a Redis
//! Cluster that speaks TLS only (its bus too) and checks its clients' certificates, and a
//! master behind a sentinel, both over TLS, the sentinel with a password of its own. The
//! instances enter as the ACL user `docs/fleet.md` gives for each kind of store, its line
//! run as written there; a wrong password degrades the one instance that gave it, saying
//! whose it was, and calls go on by local judgement.
//!
//! Needs `redis-server`, `redis-cli` and `redis-sentinel` built with TLS on the PATH (CI
//! installs Debian's); without them the tests say loudly that they skipped, unless `CI=true`,
//! where they fail.

use crate::support::cluster::Cluster;
use crate::support::fleet as support;
use crate::support::pki::Pki;
use crate::support::sentinel::GuardedSentinel;

use std::time::Duration;

use breakerbox::fleet::{Fleet, FleetBuilder, FleetEvent};
use breakerbox::{RejectReason, State};
use support::{breaker, documented_acl_user, events, eventually, trip, AclFor};

/// An instance over TLS trusting the test CA, with 900 ms to answer: a handshake of an
/// unoptimized build on a busy machine takes longer than 100 ms. (The calls wait for none
/// of it.)
fn tls_settings(builder: FleetBuilder, id: &str, pki: &Pki) -> FleetBuilder {
    builder
        .instance(id)
        .ttl(Duration::from_secs(3))
        .timeout(Duration::from_millis(900))
        .snapshot_every(Duration::from_secs(1))
        .tls_ca(pki.ca.clone())
        .tls_client(pki.client_cert.clone(), pki.client_key.clone())
}

/// The first degraded event's reason.
fn degraded_reason(seen: &[FleetEvent]) -> String {
    match seen.first() {
        Some(FleetEvent::Degraded { reason }) => reason.clone(),
        other => panic!("a degraded event first, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_tls_as_the_documented_acl_user_a_cluster_fleet_forms_quorums_on_two_nodes() {
    let pki = Pki::new("cluster");
    let acl = documented_acl_user(AclFor::Cluster);
    let acl: Vec<&str> = acl.iter().map(String::as_str).collect();
    let Some(cluster) =
        Cluster::start_tls_or_skip("fleet_production::cluster_over_tls", &pki, &acl)
    else {
        return;
    };
    let ports: Vec<u16> = cluster.masters.iter().map(|m| m.port()).collect();
    // One name on the first master, one on the last.
    let name_on = |master: usize| {
        (0..)
            .map(|n| format!("stock{n}"))
            .find(|name| cluster.master_of(&format!("breaker:fleet:{{{name}}}:live")) == master)
            .unwrap()
    };
    let names = [name_on(0), name_on(2)];

    let url = |password: &str| {
        format!(
            "rediss+cluster://fleet:{password}@127.0.0.1:{},127.0.0.1:{}",
            ports[0], ports[1]
        )
    };
    let fa = tls_settings(Fleet::builder(url("secret")), "a", &pki)
        .start()
        .unwrap();
    let fb = tls_settings(Fleet::builder(url("secret")), "b", &pki)
        .start()
        .unwrap();
    // The third by the builder of nodes, from the node the URL leaves out.
    let third = format!("rediss://fleet:secret@127.0.0.1:{}", ports[2]);
    let fc = tls_settings(Fleet::cluster_builder([third]), "c", &pki)
        .start()
        .unwrap();
    let seen = events(&fc);
    let wrong = tls_settings(Fleet::builder(url("guess")), "wrong", &pki)
        .start()
        .unwrap();
    let refused = events(&wrong);

    let mut kept = Vec::new();
    for name in &names {
        let [a, b, c, alone] = [(); 4].map(|_| breaker(name, Duration::from_secs(60)));
        fa.join(&a, 2);
        fb.join(&b, 2);
        fc.join(&c, 2);
        wrong.join(&alone, 2);
        kept.push((a, b, c, alone));
    }
    for fleet in [&fa, &fb, &fc] {
        fleet.flush().await;
    }
    for (a, b, _, _) in &kept {
        trip(a);
        trip(b);
    }
    for (name, (_, _, c, _)) in names.iter().zip(&kept) {
        eventually("c adopts the quorum over TLS", || c.state() == State::Open).await;
        assert_eq!(
            c.try_acquire().unwrap_err().reason(),
            RejectReason::FleetOpen
        );
        assert_eq!(fc.peers_open(name), 2, "{name}");
    }
    assert!(!fc.is_degraded());
    assert_eq!(*seen.lock().unwrap(), []);

    eventually("the wrong password degrades its instance", || {
        wrong.is_degraded()
    })
    .await;
    let reason = degraded_reason(&refused.lock().unwrap());
    assert!(
        reason.contains("WRONGPASS"),
        "the reason says what failed: {reason}"
    );
    assert!(!reason.contains("guess"), "no password in it: {reason}");
    for (name, (_, _, _, alone)) in names.iter().zip(&kept) {
        assert_eq!((alone.state(), wrong.peers_open(name)), (State::Closed, 0));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_a_sentinel_with_a_password_over_tls_the_fleet_adopts_a_quorum() {
    let pki = Pki::new("sentinel");
    let acl = documented_acl_user(AclFor::Sentinel);
    let Some(set) =
        GuardedSentinel::start_or_skip("fleet_production::sentinel_over_tls", &pki, &acl)
    else {
        return;
    };
    // The sentinel's password is `watch&see`, percent-encoded in the query.
    let url = set.url("fleet:secret", "watch%26see");
    let me = tls_settings(Fleet::builder(&url), "me", &pki)
        .start()
        .unwrap();
    let seen = events(&me);
    let mine = breaker("sentinel::db", Duration::from_secs(60));
    me.join(&mine, 2);
    let wrong = tls_settings(
        Fleet::builder(set.url("fleet:secret", "guess")),
        "wrong",
        &pki,
    )
    .start()
    .unwrap();
    let refused = events(&wrong);
    let alone = breaker("sentinel::db", Duration::from_secs(60));
    wrong.join(&alone, 2);

    let mut kept = Vec::new();
    for id in ["a", "b"] {
        let peer = tls_settings(Fleet::builder(&url), id, &pki)
            .start()
            .unwrap();
        let theirs = breaker("sentinel::db", Duration::from_secs(60));
        peer.join(&theirs, 9);
        peer.flush().await;
        trip(&theirs);
        kept.push((peer, theirs));
    }
    eventually(
        "the quorum reaches this instance through the sentinel",
        || mine.state() == State::Open,
    )
    .await;
    assert_eq!(
        mine.try_acquire().unwrap_err().reason(),
        RejectReason::FleetOpen
    );
    assert_eq!(me.peers_open("sentinel::db"), 2);
    assert!(!me.is_degraded());
    assert_eq!(*seen.lock().unwrap(), []);

    eventually("the wrong sentinel password degrades its instance", || {
        wrong.is_degraded()
    })
    .await;
    let reason = degraded_reason(&refused.lock().unwrap());
    assert!(
        reason.starts_with("the sentinels: ") && reason.contains("AuthenticationFailed"),
        "the reason says whose password failed: {reason}"
    );
    assert!(!reason.contains("guess"), "no password in it: {reason}");
    assert_eq!(
        (alone.state(), wrong.peers_open("sentinel::db")),
        (State::Closed, 0)
    );
    alone.try_acquire().expect("judged alone: closed").success();
}
