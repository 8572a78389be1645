//! A master, its replica and one sentinel, all real servers on loopback, for the fleet behind
//! Sentinel. Each is killed when the set is dropped.
//!
//! Needs `redis-server` and `redis-sentinel` (Debian's package of that name) on the PATH;
//! without them the test says loudly that it skipped, unless `CI=true`, where it fails.

use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use breaker_workspace::redis_server::{free_port, RedisServer};

use super::pki::Pki;
use super::wait;

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

/// Whether `redis-sentinel` can be run here; if not, says loudly that `what` is skipped
/// (a failure with `CI=true`).
fn sentinel_installed(what: &str) -> bool {
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
    }
    installed
}

/// A `redis-sentinel` of the configuration file `config`, its output dropped.
fn spawn_sentinel(config: &std::path::Path) -> std::process::Child {
    Command::new("redis-sentinel")
        .arg(config)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-sentinel starts")
}

/// The port of a server's `redis://127.0.0.1:PORT` (or `rediss://`) URL.
pub fn port(server: &RedisServer) -> u16 {
    server.url().rsplit(':').next().unwrap().parse().unwrap()
}

impl SentinelSet {
    /// Starts the set, or `None` after a loud notice when `redis-sentinel` is missing (a
    /// failure with `CI=true`).
    pub fn start_or_skip(what: &str) -> Option<Self> {
        if !sentinel_installed(what) {
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
        let sentinel = spawn_sentinel(&config);
        let set = Self {
            master,
            replica,
            sentinel,
            sentinel_port,
            dir,
        };
        wait::until(
            "redis-sentinel answers",
            Duration::from_secs(10),
            Duration::from_millis(10),
            || set.master_port().is_some(),
        );
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
        let replica_port = port(&self.replica).to_string();
        let in_sync = || -> Option<bool> {
            let url = format!("redis://127.0.0.1:{}", self.sentinel_port);
            let mut conn = redis::Client::open(url).ok()?.get_connection().ok()?;
            let replicas: Vec<std::collections::HashMap<String, String>> = redis::cmd("SENTINEL")
                .arg("REPLICAS")
                .arg(MASTER)
                .query(&mut conn)
                .ok()?;
            Some(replicas.iter().any(|r| {
                r.get("port") == Some(&replica_port)
                    && r.get("flags").map(String::as_str) == Some("slave")
                    && r.get("master-link-status").map(String::as_str) == Some("ok")
            }))
        };
        wait::until(
            "the sentinel knows the replica in sync",
            Duration::from_secs(30),
            Duration::from_millis(50),
            || in_sync() == Some(true),
        );
    }

    /// Asks the sentinel for a failover until it takes it (it refuses while it knows no
    /// replica fit to promote).
    pub fn force_failover(&self) {
        wait::until(
            "the sentinel takes the failover",
            Duration::from_secs(30),
            Duration::from_millis(100),
            || {
                let answer: redis::RedisResult<String> = redis::cmd("SENTINEL")
                    .arg("FAILOVER")
                    .arg(MASTER)
                    .query(&mut self.sentinel());
                match answer {
                    Ok(ok) if ok == "OK" => true,
                    other => {
                        // Shown with the test's output if it never takes it.
                        eprintln!("the sentinel refused the failover: {other:?}");
                        false
                    }
                }
            },
        );
    }
}

impl Drop for SentinelSet {
    fn drop(&mut self) {
        let _ = self.sentinel.kill();
        let _ = self.sentinel.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The password of [`GuardedSentinel`]'s sentinel (`requirepass`).
pub const SENTINEL_PASSWORD: &str = "watch&see";

/// A master and one sentinel as production guards them: both speak TLS only (their
/// clients' certificates unchecked), the sentinel asks for a password, the master has the
/// configuration it is given (an ACL user). No replica: nothing fails over here.
pub struct GuardedSentinel {
    pub master: RedisServer,
    sentinel: Child,
    pub sentinel_port: u16,
    cli: Vec<String>,
    dir: std::path::PathBuf,
}

impl GuardedSentinel {
    /// Starts the pair with the certificates of `pki`, or `None` after a loud notice when
    /// `redis-server` or `redis-sentinel` is missing (a failure with `CI=true`).
    pub fn start_or_skip(what: &str, pki: &Pki, master_extra: &[String]) -> Option<Self> {
        if !sentinel_installed(what) {
            return None;
        }
        if !RedisServer::installed() {
            // Says loudly that `what` is skipped (a failure with `CI=true`).
            let _ = RedisServer::start_or_skip(what);
            return None;
        }
        let tls = pki.server_args(false);
        let master_args: Vec<&str> = tls.iter().chain(master_extra).map(String::as_str).collect();
        let master = RedisServer::start_tls_only(&master_args).expect("a master over TLS");
        let sentinel_port = free_port();
        let dir = std::env::temp_dir().join(format!(
            "breaker-guarded-sentinel-{}-{sentinel_port}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        // `--tls-cert-file PATH` as the configuration file's `tls-cert-file PATH`.
        let tls_lines: String = tls
            .chunks(2)
            .map(|pair| format!("{} {}\n", pair[0].trim_start_matches("--"), pair[1]))
            .collect();
        let config = dir.join("sentinel.conf");
        std::fs::write(
            &config,
            format!(
                "port 0\ntls-port {sentinel_port}\nbind 127.0.0.1\ndir {dir}\n{tls_lines}\
                 tls-replication yes\nrequirepass \"{SENTINEL_PASSWORD}\"\n\
                 sentinel monitor {MASTER} 127.0.0.1 {master_port} 1\n",
                dir = dir.display(),
                master_port = master.port(),
            ),
        )
        .unwrap();
        let sentinel = spawn_sentinel(&config);
        let mut cli = pki.cli_args();
        cli.extend(["--pass", SENTINEL_PASSWORD, "--no-auth-warning"].map(String::from));
        let set = Self {
            master,
            sentinel,
            sentinel_port,
            cli,
            dir,
        };
        wait::until(
            "redis-sentinel names its master",
            Duration::from_secs(10),
            Duration::from_millis(10),
            || set.master_port() == Some(set.master.port()),
        );
        Some(set)
    }

    /// `rediss+sentinel://` with the master's credentials `master_auth` (`user:password`)
    /// and the sentinels' password `sentinel_password`, percent-encoded.
    pub fn url(&self, master_auth: &str, sentinel_password: &str) -> String {
        format!(
            "rediss+sentinel://{master_auth}@127.0.0.1:{}/{MASTER}?sentinel_password={sentinel_password}",
            self.sentinel_port
        )
    }

    /// The port of the master the sentinel names, asked over TLS with the password.
    fn master_port(&self) -> Option<u16> {
        let out = Command::new("redis-cli")
            .args(&self.cli)
            .args(["-p", &self.sentinel_port.to_string()])
            .args(["SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER])
            .stdin(Stdio::null())
            .output()
            .ok()?;
        let out = String::from_utf8_lossy(&out.stdout);
        out.lines().nth(1)?.trim().parse().ok()
    }
}

impl Drop for GuardedSentinel {
    fn drop(&mut self) {
        let _ = self.sentinel.kill();
        let _ = self.sentinel.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
