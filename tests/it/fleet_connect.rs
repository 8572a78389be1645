//! How the fleet reaches a store that asks for more than a TCP connection, against a real
//! `redis-server`: TLS (`rediss://`) trusting a CA of the application's own, with a client
//! certificate when the store checks its clients, and an ACL user and password in the URL.
//! A store the fleet cannot enter (an untrusted certificate, a wrong password) is a degraded
//! fleet, never a panic, and every call goes on by local judgement.
//!
//! The certificates are made here, for this run only: a throwaway CA, a server certificate
//! for `127.0.0.1`, and a client certificate.

use crate::support::fleet as support;
use crate::support::process;

use std::path::PathBuf;
use std::time::Duration;

use breaker_workspace::redis_server::{free_port, RedisServer, Unavailable};
use breakerbox::fleet::{Fleet, FleetBuilder, FleetError, FleetEvent};
use breakerbox::{RejectReason, State};
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
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

/// A CA, and the certificates it signed, in PEM; the server's files written to a directory
/// removed when this is dropped.
struct Pki {
    dir: PathBuf,
    ca: String,
    client_cert: String,
    client_key: String,
}

impl Pki {
    fn new(tag: &str) -> Self {
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(DnType::CommonName, "breaker fleet test CA");
        ca.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate().unwrap()).unwrap();
        let leaf = |names: &[&str], usage| {
            let key = KeyPair::generate().unwrap();
            let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
            let mut params = CertificateParams::new(names).unwrap();
            params.extended_key_usages = vec![usage];
            let cert = params.signed_by(&key, &ca).unwrap();
            (cert.pem(), key.serialize_pem())
        };
        let (server_cert, server_key) = leaf(
            &["127.0.0.1", "localhost"],
            ExtendedKeyUsagePurpose::ServerAuth,
        );
        let (client_cert, client_key) =
            leaf(&["fleet-instance"], ExtendedKeyUsagePurpose::ClientAuth);
        let dir =
            std::env::temp_dir().join(format!("breaker-fleet-tls-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (file, pem) in [
            ("ca.pem", ca.pem()),
            ("server.pem", server_cert),
            ("server.key", server_key),
        ] {
            std::fs::write(dir.join(file), pem).unwrap();
        }
        Self {
            dir,
            ca: ca.pem(),
            client_cert,
            client_key,
        }
    }

    fn file(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    /// A server that speaks TLS on a port of its own (`rediss://127.0.0.1:PORT`, returned),
    /// checking clients' certificates or not.
    fn server(&self, what: &str, check_clients: bool) -> Option<(RedisServer, String)> {
        // The TLS port is free when chosen, and may not be when the server binds it (the
        // plain port chosen after it, or another process, may take it): a few tries.
        let mut tries = 3;
        loop {
            tries -= 1;
            match self.try_server(what, check_clients) {
                Err(why) if tries > 0 => {
                    eprintln!("redis-server with TLS did not start ({why}): again")
                }
                Err(why) => panic!(
                    "redis-server did not start with TLS ({why}): these tests need a build with \
                     TLS (BUILD_TLS=yes), as Debian's and Homebrew's are"
                ),
                Ok(started) => return started,
            }
        }
    }

    fn try_server(
        &self,
        what: &str,
        check_clients: bool,
    ) -> Result<Option<(RedisServer, String)>, String> {
        let port = free_port().to_string();
        let (cert, key, ca) = (
            self.file("server.pem"),
            self.file("server.key"),
            self.file("ca.pem"),
        );
        let clients = if check_clients { "yes" } else { "no" };
        let args = [
            "--tls-port",
            &port,
            "--tls-cert-file",
            &cert,
            "--tls-key-file",
            &key,
            "--tls-ca-cert-file",
            &ca,
            "--tls-auth-clients",
            clients,
        ];
        let server = match RedisServer::start_with(&args) {
            Ok(server) => server,
            // Skipped loudly, or failed under CI, as every fleet test does.
            Err(Unavailable::Missing) => match RedisServer::start_or_skip_with(what, &args) {
                Some(server) => server,
                None => return Ok(None),
            },
            Err(Unavailable::NotReady(why)) => return Err(why),
        };
        Ok(Some((server, format!("rediss://127.0.0.1:{port}"))))
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
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

/// An ACL user that may do what the fleet does and no more (`docs/fleet.md`), as
/// `redis-server --user ...` takes it.
const ACL_USER: [&str; 15] = [
    "--user",
    "fleet",
    "on",
    ">s3cret",
    "resetchannels",
    "&breaker:fleet:*",
    "resetkeys",
    "~breaker:fleet:*",
    "-@all",
    "+@scripting",
    "+@pubsub",
    "+@sortedset",
    "+@hash",
    "+pexpire",
    "+time",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acl_user_in_the_url_gets_in_and_a_wrong_password_degrades_until_the_store_takes_it() {
    let Some(server) = RedisServer::start_or_skip_with("fleet_connect::acl_user", &ACL_USER) else {
        return;
    };
    let port = server.url().rsplit(':').next().unwrap().to_string();
    let url = |password: &str| format!("redis://fleet:{password}@127.0.0.1:{port}");
    let me = settings(&url("s3cret"), "me").start().unwrap();
    let mine = breaker("acl::inventory", Duration::from_secs(30));
    me.join(&mine, 2);
    let wrong = settings(&url("guess"), "wrong").start().unwrap();
    let refused = events(&wrong);
    let alone = breaker("acl::inventory", Duration::from_secs(30));
    wrong.join(&alone, 2);

    let mut kept = Vec::new();
    for id in ["a", "b"] {
        let peer = settings(&url("s3cret"), id).start().unwrap();
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
