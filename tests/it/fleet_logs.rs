//! The fleet's log lines: the view degraded when the store stops answering, recovered when it
//! answers again, and a malformed message ignored. Alone in its process, as every test that
//! reads the logs (see `support/logs.rs`); the fleet's task runs on this test's thread.

use crate::support::fleet;
use crate::support::logs;

use std::time::Duration;

use breaker_workspace::redis_server::RedisServer;
use fleet::{breaker, eventually, instance, store};

#[tokio::test]
async fn the_store_failing_and_recovering_and_junk_are_logged() {
    let Some((captured, _guard)) = logs::capture(concat!(
        module_path!(),
        "::the_store_failing_and_recovering_and_junk_are_logged"
    )) else {
        return;
    };
    let Some(server) = RedisServer::start_or_skip("fleet_logs::the_store_failing") else {
        return;
    };
    let me = instance(&server, "me", Duration::from_millis(400));
    let b = breaker("db", Duration::from_secs(30));
    me.join(&b, 2);
    me.flush().await;

    server.pause();
    eventually("degraded", || me.is_degraded()).await;
    server.resume();
    eventually("recovered", || !me.is_degraded()).await;
    let mut conn = store(&server).await;
    let _: i64 = redis::cmd("PUBLISH")
        .arg("breaker:fleet:opinions")
        .arg("1|open|x|not-a-number|1|1|db")
        .query_async(&mut conn)
        .await
        .unwrap();
    eventually("the junk logged", || {
        captured
            .lines()
            .iter()
            .any(|l| l.contains("fleet message ignored: malformed"))
    })
    .await;

    let lines = captured.lines();
    let degraded = lines.iter().position(|l| {
        l.starts_with(" WARN breakerbox::fleet: fleet view degraded: breakers judge alone")
            && l.contains(r#"instance="me""#)
    });
    let recovered = lines
        .iter()
        .position(|l| l == r#" INFO breakerbox::fleet: fleet view recovered instance="me""#);
    assert!(degraded.is_some() && recovered > degraded, "{lines:#?}");
    assert!(
        lines.iter().any(|l| l
            .starts_with(" WARN breakerbox::fleet::task: fleet message ignored: malformed")
            && l.contains("field=\"seq\"")),
        "{lines:#?}"
    );
}
