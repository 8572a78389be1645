//! A master, its replica and one sentinel, all real servers on loopback, for the fleet behind
//! Sentinel. Each is killed when the set is dropped.
//!
//! Needs `redis-server` and `redis-sentinel` (Debian's package of that name) on the PATH;
//! without them the test says loudly that it skipped, unless `CI=true`, where it fails.

use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use breaker_workspace::redis_server::{free_port, RedisServer};

/// The master's name the sentinel knows it by.
pub const MASTER: &str = "fleetmaster";

/// How long the sentinel lets a failover take before it gives up on it.
pub const FAILOVER_TIMEOUT: Duration = Duration::from_secs(6);

/// The set: `master` and `replica` by their roles at the start.
pub struct SentinelSet {
    pub master: RedisServer,
    pub replica: RedisServer,
    sentinel: Child,
    pub sentinel_port: u16,
    dir: std::path::PathBuf,
}

/// The port of a server's `redis://127.0.0.1:PORT` URL.
pub fn port(server: &RedisServer) -> u16 {
    server.url().rsplit(':').next().unwrap().parse().unwrap()
}

impl SentinelSet {
    /// Starts the set, or `None` after a loud notice when `redis-sentinel` is missing (a
    /// failure with `CI=true`).
    pub fn start_or_skip(what: &str) -> Option<Self> {
        let installed = Command::new("redis-sentinel")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !installed {
            assert_ne!(
                std::env::var("CI").as_deref(),
                Ok("true"),
                "CI=true and `redis-sentinel` is not on the PATH: apt-get install redis-sentinel"
            );
            let _ = writeln!(
                std::io::stderr(),
                "\n*** SKIPPED {what}: `redis-sentinel` is not on the PATH; apt-get install redis-sentinel ***\n"
            );
            return None;
        }
        let master = RedisServer::start_or_skip(what)?;
        let master_port = port(&master).to_string();
        let replica = RedisServer::start_with(&["--replicaof", "127.0.0.1", &master_port])
            .expect("a replica");
        let sentinel_port = free_port();
        let dir = std::env::temp_dir().join(format!(
            "breaker-sentinel-{}-{sentinel_port}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let config = dir.join("sentinel.conf");
        std::fs::write(
            &config,
            format!(
                "port {sentinel_port}\nbind 127.0.0.1\ndir {dir}\n\
                 sentinel monitor {MASTER} 127.0.0.1 {master_port} 1\n\
                 sentinel down-after-milliseconds {MASTER} 2000\n\
                 sentinel failover-timeout {MASTER} {timeout}\n",
                dir = dir.display(),
                timeout = FAILOVER_TIMEOUT.as_millis(),
            ),
        )
        .unwrap();
        let sentinel = Command::new("redis-sentinel")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-sentinel starts");
        let set = Self {
            master,
            replica,
            sentinel,
            sentinel_port,
            dir,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while set.master_port().is_none() {
            assert!(Instant::now() < deadline, "redis-sentinel never answered");
            std::thread::sleep(Duration::from_millis(10));
        }
        Some(set)
    }

    /// `redis+sentinel://127.0.0.1:PORT/fleetmaster`.
    pub fn url(&self) -> String {
        format!("redis+sentinel://127.0.0.1:{}/{MASTER}", self.sentinel_port)
    }

    /// A connection to the sentinel.
    pub fn sentinel(&self) -> redis::Connection {
        let url = format!("redis://127.0.0.1:{}", self.sentinel_port);
        redis::Client::open(url).unwrap().get_connection().unwrap()
    }

    /// The port of the master the sentinel names now, once it answers.
    pub fn master_port(&self) -> Option<u16> {
        let url = format!("redis://127.0.0.1:{}", self.sentinel_port);
        let mut conn = redis::Client::open(url).ok()?.get_connection().ok()?;
        let (_, port): (String, u16) = redis::cmd("SENTINEL")
            .arg("GET-MASTER-ADDR-BY-NAME")
            .arg(MASTER)
            .query(&mut conn)
            .ok()?;
        Some(port)
    }

    /// Blocks until the sentinel knows the replica in sync, so that it can promote it.
    pub fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        let replica_port = port(&self.replica).to_string();
        loop {
            let known = (|| {
                let url = format!("redis://127.0.0.1:{}", self.sentinel_port);
                let mut conn = redis::Client::open(url).ok()?.get_connection().ok()?;
                let replicas: Vec<std::collections::HashMap<String, String>> =
                    redis::cmd("SENTINEL")
                        .arg("REPLICAS")
                        .arg(MASTER)
                        .query(&mut conn)
                        .ok()?;
                Some(replicas.iter().any(|r| {
                    r.get("port") == Some(&replica_port)
                        && r.get("flags").map(String::as_str) == Some("slave")
                        && r.get("master-link-status").map(String::as_str) == Some("ok")
                }))
            })();
            if known == Some(true) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the sentinel never knew the replica in sync"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Asks the sentinel for a failover until it takes it (it refuses while it knows no
    /// replica fit to promote).
    pub fn force_failover(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let answer: redis::RedisResult<String> = redis::cmd("SENTINEL")
                .arg("FAILOVER")
                .arg(MASTER)
                .query(&mut self.sentinel());
            match answer {
                Ok(ok) if ok == "OK" => return,
                other => assert!(
                    Instant::now() < deadline,
                    "the sentinel never took the failover: {other:?}"
                ),
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for SentinelSet {
    fn drop(&mut self) {
        let _ = self.sentinel.kill();
        let _ = self.sentinel.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
