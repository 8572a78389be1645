//! What another name's bad data does to the fleet against a real `redis-server`: nothing. A
//! value that is not a number, a key of the wrong type, a sequence number that is not one:
//! the row or the name is skipped with a warning, and every other name works as before.
//!
//! Needs `redis-server` on the PATH (CI installs it); without it each test says loudly that
//! it skipped, unless `CI=true`, where it fails.

use crate::support::fleet as support;

use std::time::Duration;

use breaker_workspace::redis_server::RedisServer;
use breakerbox::{RejectReason, State};
use support::{breaker, eventually, instance, plant, store, trip};

const SNAPSHOT: Duration = Duration::from_millis(400);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_value_or_a_key_of_the_wrong_type_blinds_no_other_name() {
    let Some(server) = RedisServer::start_or_skip("fleet_bad_data::a_malformed_value") else {
        return;
    };
    let mut conn = store(&server).await;
    // A live member whose end is no number, one whose sequence number is none, and a name
    // whose keys are of the wrong type.
    plant(
        &mut conn,
        "bad",
        &[("liar", "garbage 1"), ("fibber", "{far} x")],
    )
    .await;
    let _: () = redis::pipe()
        .cmd("SET")
        .arg("breaker:fleet:{worse}:live")
        .arg("x")
        .ignore()
        .cmd("SET")
        .arg("breaker:fleet:{worse}:until")
        .arg("x")
        .ignore()
        .query_async(&mut conn)
        .await
        .unwrap();

    let fleets: Vec<_> = ["a", "b", "c"]
        .iter()
        .map(|id| instance(&server, id, SNAPSHOT))
        .collect();
    let db: Vec<_> = fleets
        .iter()
        .map(|_| breaker("db", Duration::from_secs(30)))
        .collect();
    let (bad, worse) = (
        breaker("bad", Duration::from_secs(30)),
        breaker("worse", Duration::from_secs(30)),
    );
    fleets[2].join(&bad, 2);
    fleets[2].join(&worse, 2);
    for (fleet, member) in fleets.iter().zip(&db) {
        fleet.join(member, 2);
        fleet.flush().await;
    }
    // c's own OPEN of a name whose keys are of the wrong type cannot be written: that name
    // alone goes without the fleet.
    trip(&worse);
    fleets[2].flush().await;

    trip(&db[0]);
    trip(&db[1]);
    eventually("c adopts the quorum of a and b on db", || {
        db[2].state() == State::Open
    })
    .await;
    let rejected = db[2].try_acquire().err().map(|r| r.reason());
    assert_eq!(rejected, Some(RejectReason::FleetOpen));
    assert_eq!(fleets[2].peers_open("db"), 2);
    assert_eq!(fleets[2].peers_open("bad"), 0, "no malformed row counts");
    assert!(!fleets[2].is_degraded(), "bad data is no store failure");
    // Snapshots go on past the bad names: each skips their rows again, and none degrades.
    for _ in 0..3 {
        let skipped = fleets[2].health().rows_skipped;
        eventually("another snapshot past the bad names", || {
            fleets[2].health().rows_skipped > skipped
        })
        .await;
        assert!(!fleets[2].is_degraded());
    }
}
