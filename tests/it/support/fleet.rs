//! What the fleet's tests share: instances on one real `redis-server`, short time-to-lives,
//! and waits for a condition that are bounded in time and fail loudly.

#![allow(dead_code)] // each test binary uses its own part

use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_workspace::redis_server::RedisServer;
use breakerbox::fleet::{Fleet, FleetEvent};
use breakerbox::{Breaker, Config};

/// Opinions live 1.2 s unless renewed (every 400 ms); the store gets 300 ms to answer: room
/// enough for a machine busy with builds beside the tests.
pub const TTL: Duration = Duration::from_millis(1200);

/// An instance of the fleet on `server`, named `id`, reading the whole view every
/// `snapshot_every`.
pub fn instance(server: &RedisServer, id: &str, snapshot_every: Duration) -> Fleet {
    Fleet::builder(server.url())
        .instance(id)
        .ttl(TTL)
        .timeout(Duration::from_millis(300))
        .snapshot_every(snapshot_every)
        .start()
        .expect("a valid fleet")
}

/// A breaker that opens after 2 failures of 2 calls, for `open`, with 1 probe.
pub fn breaker(name: &str, open: Duration) -> Arc<Breaker> {
    let config = Config::builder()
        .count_window(2)
        .min_calls(2)
        .open_for(open)
        .probes(1)
        .fleet(true)
        .build()
        .expect("a valid configuration");
    Arc::new(Breaker::new(name, config))
}

/// Fails two calls: the breaker opens by its own judgement.
pub fn trip(b: &Breaker) {
    breakerbox::testing::fail_n(b, 2);
}

/// Waits until `done` holds, checking every 5 ms, for at most 10 s; panics naming `what`.
pub async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    eventually_async(what, || std::future::ready(done())).await;
}

/// [`eventually`] for a condition that has to wait for its answer (a read of the store).
pub async fn eventually_async<F: std::future::Future<Output = bool>>(
    what: &str,
    mut done: impl FnMut() -> F,
) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !done().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "never happened: {what}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The events a fleet reports, as they come.
pub fn events(fleet: &Fleet) -> Arc<Mutex<Vec<FleetEvent>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    fleet.on_event(move |e| log.lock().unwrap().push(e.clone()));
    seen
}

/// A plain connection to the store, for what the tests read or write behind the fleet's back.
pub async fn store(server: &RedisServer) -> redis::aio::MultiplexedConnection {
    let client = redis::Client::open(server.url()).unwrap();
    client.get_multiplexed_async_connection().await.unwrap()
}

/// The store's `INFO commandstats` lines, but the `INFO` command's own.
pub async fn command_stats(conn: &mut redis::aio::MultiplexedConnection) -> Vec<String> {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(conn)
        .await
        .unwrap();
    info.lines()
        .filter(|line| line.starts_with("cmdstat_") && !line.starts_with("cmdstat_info:"))
        .map(|line| line.split(",usec=").next().unwrap().to_string())
        .collect()
}

/// Opinions written into the store by hand, as an instance would (or would not) write them:
/// for each `(member, until)`, `member` live in `name`'s set until ten minutes from the
/// store's time, and its row `until`, in which `{far}` stands for that time in milliseconds.
pub async fn plant(
    conn: &mut redis::aio::MultiplexedConnection,
    name: &str,
    rows: &[(&str, &str)],
) {
    let (secs, _): (u64, u64) = redis::cmd("TIME").query_async(conn).await.unwrap();
    let far = (secs + 600) * 1000;
    let mut live = redis::cmd("ZADD");
    live.arg(format!("breaker:fleet:{{{name}}}:live"));
    let mut until = redis::cmd("HSET");
    until.arg(format!("breaker:fleet:{{{name}}}:until"));
    for (member, row) in rows {
        live.arg(far).arg(*member);
        until
            .arg(*member)
            .arg(row.replace("{far}", &far.to_string()));
    }
    let _: () = redis::pipe()
        .add_command(live)
        .ignore()
        .add_command(until)
        .ignore()
        .query_async(conn)
        .await
        .unwrap();
}

/// The kinds of store `docs/fleet.md` gives an ACL user for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AclFor {
    OneNode,
    Cluster,
    Sentinel,
}

/// The ACL user `docs/fleet.md` gives for `store` (its `ACL SETUSER` line in "Running it in
/// production", password `secret`), as `redis-server --user ...` takes it: the tests run the
/// documented line itself, so that a rule missing from it fails them.
pub fn documented_acl_user(store: AclFor) -> Vec<String> {
    let doc = super::markdown::workspace_file("docs/fleet.md");
    let section = super::markdown::section(&doc, "## Running it in production");
    let line = section
        .lines()
        .filter(|line| line.starts_with("ACL SETUSER fleet "))
        .find(|line| {
            let kind = match (line.contains("+cluster|slots"), line.contains("+role")) {
                (true, false) => AclFor::Cluster,
                (false, true) => AclFor::Sentinel,
                _ => AclFor::OneNode,
            };
            kind == store
        })
        .unwrap_or_else(|| panic!("docs/fleet.md gives no ACL user for {store:?}"));
    let mut args = vec!["--user".to_string()];
    args.extend(line["ACL SETUSER ".len()..].split(' ').map(String::from));
    args
}
