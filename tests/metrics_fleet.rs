//! `circuitbreaker_fleet_degraded`: the fleet's health per instance, against a real
//! `redis-server` that the test stops.

#[path = "support/fleet.rs"]
mod support;

use std::time::Duration;

use breaker_workspace::redis_server::RedisServer;
use breakerbox::fleet::{self, Fleet};
use support::{eventually, TTL};

fn degraded_line(value: u8) -> String {
    format!("circuitbreaker_fleet_degraded{{fleet_instance=\"metrics-1\"}} {value}\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fleet_s_health_is_a_series_that_turns_to_1_when_the_store_is_gone() {
    let text = breakerbox::metrics::text();
    assert!(
        text.contains("# TYPE circuitbreaker_fleet_degraded gauge\n"),
        "{text}"
    );
    assert!(
        !text.contains("circuitbreaker_fleet_degraded{"),
        "no fleet runs yet: {text}"
    );

    let mut server = RedisServer::start()
        .expect("redis-server must be installed (apt-get install redis-server)");
    let builder = Fleet::builder(server.url())
        .instance("metrics-1")
        .ttl(TTL)
        .timeout(Duration::from_millis(300))
        .snapshot_every(Duration::from_millis(400));
    let fleet = fleet::connect_with(builder).unwrap();
    eventually("the fleet reaches its store", || !fleet.is_degraded()).await;
    assert!(breakerbox::metrics::text().contains(&degraded_line(0)));

    server.kill();
    eventually("the series says the store is gone", || {
        breakerbox::metrics::text().contains(&degraded_line(1))
    })
    .await;
}
