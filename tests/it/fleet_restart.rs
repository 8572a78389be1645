//! An instance restarted with its fixed id against a real `redis-server`: its peers hear it
//! as before, though its new life counts its messages anew.
//!
//! Needs `redis-server` on the PATH (CI installs it); without it each test says loudly that
//! it skipped, unless `CI=true`, where it fails.

use crate::support::fleet as support;

use std::time::Duration;

use breaker_workspace::redis_server::RedisServer;
use breakerbox::{RejectReason, State};
use support::{breaker, eventually, instance, trip};

const SNAPSHOT: Duration = Duration::from_millis(400);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_restarted_with_its_fixed_id_is_heard_by_its_peers() {
    let Some(server) = RedisServer::start_or_skip("fleet_restart::an_instance_restarted") else {
        return;
    };
    let (fa, fc) = (
        instance(&server, "a", SNAPSHOT),
        instance(&server, "c", SNAPSHOT),
    );
    let (a, c) = (
        breaker("db", Duration::from_secs(30)),
        breaker("db", Duration::from_secs(30)),
    );
    fa.join(&a, 2);
    fc.join(&c, 2);
    fa.flush().await;
    fc.flush().await;

    // b's first life: it opens, closes and opens again, then dies without a goodbye.
    let first_life = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let fb = {
        let _inside = first_life.enter();
        instance(&server, "b", SNAPSHOT)
    };
    let b = breaker("db", Duration::from_secs(30));
    fb.join(&b, 2);
    fb.flush().await;
    trip(&b);
    eventually("c hears b's first OPEN", || fc.peers_open("db") == 1).await;
    b.reset();
    eventually("c hears b close", || fc.peers_open("db") == 0).await;
    trip(&b);
    eventually("c hears b's second OPEN", || fc.peers_open("db") == 1).await;
    first_life.shutdown_background();
    drop((fb, b));
    eventually("b's last opinion expires", || fc.peers_open("db") == 0).await;

    // Its second life, under the same id: its OPEN and a's make a quorum at c.
    let fb = instance(&server, "b", SNAPSHOT);
    let b = breaker("db", Duration::from_secs(30));
    fb.join(&b, 2);
    fb.flush().await;
    trip(&b);
    trip(&a);
    eventually("c counts the restarted b and a", || {
        fc.peers_open("db") == 2
    })
    .await;
    eventually("c adopts their quorum", || c.state() == State::Open).await;
    let rejected = c.try_acquire().err().map(|r| r.reason());
    assert_eq!(rejected, Some(RejectReason::FleetOpen));
}
