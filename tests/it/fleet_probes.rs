//! The fleet spares a sick downstream from probes, against a real `redis-server`: instances
//! that each opened by their own judgement take turns with the probe lease, so that the
//! fleet probes about as often as one instance would; when a probe passes, every instance
//! half-opens at once and closes by its own probes.
//!
//! Needs `redis-server` on the PATH (CI installs it); without it each test says loudly that
//! it skipped, unless `CI=true`, where it fails.

use crate::support::fleet as support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use breaker_workspace::redis_server::RedisServer;
use breakerbox::{Breaker, Config, State};
use support::instance;

const INSTANCES: usize = 4;
const OPEN: Duration = Duration::from_millis(500);
const OUTAGE: Duration = Duration::from_secs(3);

fn breaker(name: &str) -> Arc<Breaker> {
    let config = Config::builder()
        .count_window(2)
        .min_calls(2)
        .open_for(OPEN)
        .probes(1)
        .fleet(true)
        .build()
        .unwrap();
    Arc::new(Breaker::new(name, config))
}

/// Calls every breaker every 10 ms through an outage of [`OUTAGE`], then until all are
/// closed; the probes that reached the sick downstream, and how long after it recovered
/// the last instance closed.
async fn outage(breakers: &[Arc<Breaker>]) -> (usize, Duration) {
    let sick = Arc::new(AtomicBool::new(true));
    let mut probes = 0;
    let start = tokio::time::Instant::now();
    let mut recovered = None;
    loop {
        if recovered.is_none() && start.elapsed() >= OUTAGE {
            sick.store(false, Ordering::Release);
            recovered = Some(tokio::time::Instant::now());
        }
        for b in breakers {
            let Ok(permit) = b.try_acquire() else {
                continue;
            };
            let probe = b.state() == State::HalfOpen;
            if sick.load(Ordering::Acquire) {
                probes += usize::from(probe);
                permit.failure();
            } else {
                permit.success();
            }
        }
        if let Some(at) = recovered {
            if breakers.iter().all(|b| b.state() == State::Closed) {
                return (probes, at.elapsed());
            }
            assert!(at.elapsed() < Duration::from_secs(10), "never all closed");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_that_opened_on_their_own_take_turns_probing_a_sick_downstream() {
    let Some(server) = RedisServer::start_or_skip("fleet_probes::instances_take_turns") else {
        return;
    };
    // Without the fleet: each instance probes every open period.
    let alone: Vec<_> = (0..INSTANCES).map(|_| breaker("alone")).collect();
    let (probes_alone, _) = outage(&alone).await;

    let fleets: Vec<_> = (0..INSTANCES)
        .map(|i| instance(&server, &format!("i{i}"), Duration::from_millis(400)))
        .collect();
    let members: Vec<_> = (0..INSTANCES).map(|_| breaker("db")).collect();
    for (fleet, b) in fleets.iter().zip(&members) {
        // A quorum no one reaches: every OPEN here is an instance's own.
        fleet.join(b, 9);
        fleet.flush().await;
    }
    let (probes_fleet, closing) = outage(&members).await;
    assert!(
        probes_fleet * 2 <= probes_alone,
        "{probes_fleet} probes with the fleet, {probes_alone} without"
    );
    // Recovered: one probe passes, and every instance half-opens at once behind it.
    assert!(
        closing < Duration::from_secs(3),
        "all closed {closing:?} after"
    );
}
