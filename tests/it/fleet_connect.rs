//! How the fleet reaches a store that asks for more than a TCP connection, against a real
//! `redis-server`: TLS (`rediss://`) trusting a CA of the application's own, with a client
//! certificate when the store checks its clients, and an ACL user and password in the URL.
//! A store the fleet cannot enter (an untrusted certificate, a wrong password) is a degraded
//! fleet, never a panic, and every call goes on by local judgement.
//!
//! The certificates are made for this run only (`support::pki`): a throwaway CA, a server
//! certificate for `127.0.0.1`, and a client certificate.

use crate::support::fleet as support;
use crate::support::pki::Pki;
use crate::support::process;

use std::time::Duration;

use breaker_workspace::redis_server::RedisServer;
use breakerbox::fleet::{Fleet, FleetBuilder, FleetError, FleetEvent};
use breakerbox::{RejectReason, State};
use support::{breaker, events, eventually, trip, TTL};

/// A fleet's settings for these tests (short time-to-live, 100 ms to answer), on `url`.
fn settings(url: &str, id: &str) -> FleetBuilder {
    Fleet::builder(url)
        .instance(id)
        .ttl(TTL)
        .timeout(Duration::from_millis(300))
        .snapshot_every(Duration::from_millis(400))
}

/// The same over TLS, with 900 ms to answer: a handshake of an unoptimized build on a busy
/// machine takes longer than 100 ms. (The calls wait for none of it.)
fn tls_settings(url: &str, id: &str, ca: &str) -> FleetBuilder {
    Fleet::builder(url)
        .instance(id)
        .ttl(Duration::from_secs(3))
        .timeout(Duration::from_millis(900))
        .snapshot_every(Duration::from_secs(1))
        .tls_ca(ca)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_tls_trusting_its_own_ca_a_fleet_adopts_its_peers_quorum() {
    let pki = Pki::new("trusted");
    let Some((_server, url)) = pki.server("fleet_connect::over_tls", false) else {
        return;
    };
    let me = tls_settings(&url, "me", &pki.ca).start().unwrap();
    let seen = events(&me);
    let mine = breaker("tls::inventory", Duration::from_secs(30));
    me.join(&mine, 2);
    let mut kept = Vec::new();
    for id in ["a", "b"] {
        let peer = tls_settings(&url, id, &pki.ca).start().unwrap();
        let theirs = breaker("tls::inventory", Duration::from_secs(30));
        peer.join(&theirs, 9);
        peer.flush().await;
        trip(&theirs);
        kept.push((peer, theirs));
    }
    eventually("the quorum reaches this instance over TLS", || {
        mine.state() == State::Open
    })
    .await;
    assert_eq!(
        mine.try_acquire().unwrap_err().reason(),
        RejectReason::FleetOpen
    );
    assert_eq!(me.peers_open("tls::inventory"), 2);
    assert!(!me.is_degraded());
    assert_eq!(*seen.lock().unwrap(), []);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_that_checks_clients_lets_in_only_the_instance_with_a_certificate() {
    let pki = Pki::new("clients");
    let Some((_server, url)) = pki.server("fleet_connect::client_certificates", true) else {
        return;
    };
    let with = tls_settings(&url, "with", &pki.ca)
        .tls_client(pki.client_cert.clone(), pki.client_key.clone())
        .start()
        .unwrap();
    let without = tls_settings(&url, "without", &pki.ca).start().unwrap();
    let refused = events(&without);
    let (seen_by_with, seen_by_without) = (
        breaker("tls::stock", Duration::from_secs(30)),
        breaker("tls::stock", Duration::from_secs(30)),
    );
    with.join(&seen_by_with, 2);
    without.join(&seen_by_without, 2);

    let peer = tls_settings(&url, "peer", &pki.ca)
        .tls_client(pki.client_cert.clone(), pki.client_key.clone())
        .start()
        .unwrap();
    let theirs = breaker("tls::stock", Duration::from_secs(30));
    peer.join(&theirs, 9);
    peer.flush().await;
    trip(&theirs);
    eventually("the instance with a certificate sees its peer", || {
        with.peers_open("tls::stock") == 1
    })
    .await;
    // A state, not an event: a listener that subscribed late is told it first.
    eventually("the one without is degraded", || without.is_degraded()).await;
    let FleetEvent::Degraded { reason } = refused.lock().unwrap()[0].clone() else {
        panic!("a degraded event first");
    };
    assert!(
        reason.contains("CertificateRequired"),
        "the reason says what the store wanted: {reason}"
    );
    assert!(without.is_degraded());
    assert_eq!(without.peers_open("tls::stock"), 0);
    assert!(!with.is_degraded());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_no_root_trusts_degrades_the_fleet_and_calls_go_on() {
    let pki = Pki::new("untrusted");
    let Some((_server, url)) = pki.server("fleet_connect::untrusted", false) else {
        return;
    };
    // The system's roots: the test CA is not one of them.
    let fleet = Fleet::builder(&url)
        .instance("me")
        .ttl(Duration::from_secs(3))
        .timeout(Duration::from_millis(900))
        .start()
        .unwrap();
    let seen = events(&fleet);
    let b = breaker("tls::untrusted", Duration::from_secs(30));
    fleet.join(&b, 2);
    eventually("the fleet is degraded", || fleet.is_degraded()).await;
    let FleetEvent::Degraded { reason } = seen.lock().unwrap()[0].clone() else {
        panic!("a degraded event first");
    };
    assert!(
        reason.contains("certificate"),
        "the reason names the certificate: {reason}"
    );
    // Local judgement: admitted, then open by its own failures.
    for _ in 0..2 {
        b.try_acquire().expect("closed").failure();
    }
    assert_eq!(b.try_acquire().unwrap_err().reason(), RejectReason::Open);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acl_user_in_the_url_gets_in_and_a_wrong_password_degrades_until_the_store_takes_it() {
    // The ACL user of `docs/fleet.md`, password `secret`.
    let acl = support::documented_acl_user(support::AclFor::OneNode);
    let acl: Vec<&str> = acl.iter().map(String::as_str).collect();
    let Some(server) = RedisServer::start_or_skip_with("fleet_connect::acl_user", &acl) else {
        return;
    };
    let port = server.url().rsplit(':').next().unwrap().to_string();
    let url = |password: &str| format!("redis://fleet:{password}@127.0.0.1:{port}");
    let me = settings(&url("secret"), "me").start().unwrap();
    let mine = breaker("acl::inventory", Duration::from_secs(30));
    me.join(&mine, 2);
    let wrong = settings(&url("guess"), "wrong").start().unwrap();
    let refused = events(&wrong);
    let alone = breaker("acl::inventory", Duration::from_secs(30));
    wrong.join(&alone, 2);

    let mut kept = Vec::new();
    for id in ["a", "b"] {
        let peer = settings(&url("secret"), id).start().unwrap();
        let theirs = breaker("acl::inventory", Duration::from_secs(30));
        peer.join(&theirs, 9);
        peer.flush().await;
        trip(&theirs);
        kept.push((peer, theirs));
    }
    eventually("the quorum reaches the instance let in", || {
        mine.state() == State::Open
    })
    .await;
    assert!(!me.is_degraded());

    // A state, not an event: the listener subscribed after `start()` is told it first.
    eventually("the refused instance is degraded", || wrong.is_degraded()).await;
    let FleetEvent::Degraded { reason } = refused.lock().unwrap()[0].clone() else {
        panic!("a degraded event first");
    };
    assert!(
        reason.starts_with("Password authentication failed"),
        "the reason says what failed: {reason}"
    );
    assert!(
        !reason.contains("guess"),
        "no password in the reason: {reason}"
    );
    assert_eq!(
        (alone.state(), wrong.peers_open("acl::inventory")),
        (State::Closed, 0)
    );
    alone.try_acquire().expect("judged alone: closed").success();

    // The store's side fixed: the refused instance gets in, without a restart.
    let mut admin = support::store(&server).await;
    let _: () = redis::cmd("ACL")
        .arg("SETUSER")
        .arg("fleet")
        .arg(">guess")
        .query_async(&mut admin)
        .await
        .unwrap();
    eventually("the refused instance recovers", || !wrong.is_degraded()).await;
    assert_eq!(
        *refused.lock().unwrap(),
        [FleetEvent::Degraded { reason }, FleetEvent::Recovered]
    );
    eventually("and sees its peers", || {
        wrong.peers_open("acl::inventory") == 2
    })
    .await;
}

/// The process's fleet from the environment, its CA from a file the environment names. (The
/// only test here that sets the environment or starts the process's fleet.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_environment_names_the_url_and_the_ca_file() {
    // It starts the process's fleet, of which a process has one.
    if !process::alone(concat!(
        module_path!(),
        "::the_environment_names_the_url_and_the_ca_file"
    )) {
        return;
    }
    let pki = Pki::new("env");
    let Some((_server, url)) = pki.server("fleet_connect::environment", false) else {
        return;
    };
    // No other test of this binary reads these variables.
    std::env::set_var("BREAKER_FLEET_URL", &url);
    std::env::set_var("BREAKER_FLEET_TLS_CA", pki.dir.join("no-such.pem"));
    let err = Fleet::from_env().unwrap_err();
    assert!(matches!(
        err,
        FleetError::Invalid {
            field: "BREAKER_FLEET_TLS_CA",
            ..
        }
    ));
    assert!(
        err.to_string().starts_with(&format!(
            "fleet: BREAKER_FLEET_TLS_CA names a file that cannot be read ({}): ",
            pki.dir.join("no-such.pem").display()
        )),
        "{err}"
    );
    std::env::set_var("BREAKER_FLEET_TLS_CA", pki.file("ca.pem"));
    std::env::set_var("BREAKER_FLEET_TLS_CERT", pki.file("ca.pem"));
    let err = Fleet::from_env().unwrap_err();
    assert_eq!(
        err.to_string(),
        "fleet: BREAKER_FLEET_TLS_KEY must be set with BREAKER_FLEET_TLS_CERT"
    );
    std::env::remove_var("BREAKER_FLEET_TLS_CERT");

    let me = Fleet::from_env()
        .unwrap()
        .expect("the URL is set")
        .join(breakerbox::registry())
        .start()
        .unwrap();
    let mine = breaker("env::inventory", Duration::from_secs(30));
    me.join(&mine, 2);
    let peer = tls_settings(&url, "peer", &pki.ca).start().unwrap();
    let theirs = breaker("env::inventory", Duration::from_secs(30));
    peer.join(&theirs, 9);
    peer.flush().await;
    trip(&theirs);
    eventually(
        "the fleet from the environment sees its peer over TLS",
        || me.peers_open("env::inventory") == 1,
    )
    .await;
    assert!(!me.is_degraded());
}
