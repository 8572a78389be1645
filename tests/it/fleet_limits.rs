//! Open periods near the limits of time through the fleet, against a real `redis-server`:
//! an OPEN of any length, held when the breaker joins or entered after, reaches the peers,
//! and the background task goes on serving every other breaker.
//!
//! Needs `redis-server` on the PATH (CI installs it); without it each test says loudly that
//! it skipped, unless `CI=true`, where it fails.

use crate::support::fleet as support;

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use breaker_workspace::redis_server::RedisServer;
use breakerbox::State;
use proptest::prelude::*;
use proptest::test_runner::{Config as Cases, TestRunner};
use support::{breaker, eventually, instance, trip};

const SNAPSHOT: Duration = Duration::from_millis(400);

/// Open periods from a second to the longest `Duration`, crowded at the top.
fn near_the_limits() -> impl Strategy<Value = Duration> {
    prop_oneof![
        Just(Duration::MAX),
        (0..=u64::MAX).prop_map(|secs| Duration::new(secs, 999_999_999)),
        (0..=u64::MAX).prop_map(Duration::from_millis),
        (1..=u64::MAX / 1_000_000).prop_map(Duration::from_secs),
        (1_000_000_000..=u64::MAX).prop_map(Duration::from_nanos),
    ]
}

#[test]
fn an_open_of_any_length_reaches_the_peers_and_the_task_lives_on() {
    let Some(server) = RedisServer::start_or_skip("fleet_limits::an_open_of_any_length") else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (fa, fb) = runtime.block_on(async {
        (
            instance(&server, "a", SNAPSHOT),
            instance(&server, "b", SNAPSHOT),
        )
    });
    let case = AtomicU32::new(0);
    let mut runner = TestRunner::new(Cases {
        cases: 24,
        failure_persistence: None,
        max_shrink_iters: 8,
        ..Cases::default()
    });
    let outcome = runner.run(&(near_the_limits(), any::<bool>()), |(open, join_first)| {
        let name = format!("db-{}", case.fetch_add(1, Ordering::Relaxed));
        runtime.block_on(async {
            let (a, b) = (breaker(&name, open), breaker(&name, open));
            fb.join(&b, 2);
            if join_first {
                fa.join(&a, 2);
                fa.flush().await;
                trip(&a);
            } else {
                trip(&a);
                fa.join(&a, 2);
            }
            assert_eq!(a.state(), State::Open);
            fa.flush().await;
            eventually(&format!("b hears a's OPEN of {open:?}"), || {
                fb.peers_open(&name) == 1
            })
            .await;
            // The task still serves a's other breakers.
            let other = breaker(&format!("{name}-other"), Duration::from_secs(30));
            let peer = breaker(&format!("{name}-other"), Duration::from_secs(30));
            fb.join(&peer, 2);
            fa.join(&other, 2);
            fb.flush().await;
            fa.flush().await;
            trip(&other);
            eventually("b hears a's next OPEN", || {
                fb.peers_open(&format!("{name}-other")) == 1
            })
            .await;
            a.reset();
            eventually("a's OPEN withdrawn", || fb.peers_open(&name) == 0).await;
        });
        Ok(())
    });
    if let Err(failure) = outcome {
        panic!("{failure}");
    }
}
