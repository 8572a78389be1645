//! `circuitbreaker_fleet_degraded` and `circuitbreaker_fleet_refused_total`: the fleet's
//! health per instance, against a real `redis-server` that the test stops.

use crate::support::fleet as support;
use crate::support::process;

use std::time::Duration;

use breaker_workspace::redis_server::RedisServer;
use breakerbox::fleet::Fleet;
use support::{eventually, TTL};

fn degraded_line(value: u8) -> String {
    format!("circuitbreaker_fleet_degraded{{fleet_instance=\"metrics-1\"}} {value}\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fleet_s_health_is_a_series_that_turns_to_1_when_the_store_is_gone() {
    // It starts the process's fleet, of which a process has one.
    if !process::alone(concat!(
        module_path!(),
        "::the_fleet_s_health_is_a_series_that_turns_to_1_when_the_store_is_gone"
    )) {
        return;
    }
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
    let fleet = builder.join(breakerbox::registry()).start().unwrap();
    eventually("the fleet reaches its store", || !fleet.is_degraded()).await;
    let text = breakerbox::metrics::text();
    assert!(text.contains(&degraded_line(0)), "{text}");
    assert!(
        text.contains("# TYPE circuitbreaker_fleet_refused counter\n"),
        "{text}"
    );

    // A message nobody can read is refused, and counted, once the fleet listens (it has a
    // member).
    let b = support::breaker("db", Duration::from_secs(30));
    fleet.join(&b, 2);
    fleet.flush().await;
    let mut conn = support::store(&server).await;
    let _: i64 = redis::cmd("PUBLISH")
        .arg("breaker:fleet:opinions")
        .arg("1|open")
        .query_async(&mut conn)
        .await
        .unwrap();
    let refused = |what: &str, n: u64| {
        format!("circuitbreaker_fleet_refused_total{{fleet_instance=\"metrics-1\",what=\"{what}\"}} {n}\n")
    };
    eventually("the malformed message is counted", || {
        breakerbox::metrics::text().contains(&refused("messages_malformed", 1))
    })
    .await;
    let text = breakerbox::metrics::text();
    for what in ["messages_forged", "rows_skipped", "rows_forged"] {
        assert!(text.contains(&refused(what, 0)), "{what}: {text}");
    }
    assert!(
        text.contains(
            "circuitbreaker_fleet_messages_dropped_total{fleet_instance=\"metrics-1\"} 0\n"
        ),
        "{text}"
    );

    server.kill();
    eventually("the series says the store is gone", || {
        breakerbox::metrics::text().contains(&degraded_line(1))
    })
    .await;
}
