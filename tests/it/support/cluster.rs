//! A Redis Cluster of three masters, real servers on loopback started with
//! `--cluster-enabled yes` and joined with `redis-cli --cluster create`; each is killed when
//! the cluster is dropped. A master killed and restarted keeps its node id and its slots
//! (its `nodes.conf` stays in its directory). Or the same over TLS only, as a managed Redis in
//! cluster mode runs: `--port 0`, `--tls-port`, the bus on TLS too (`--tls-cluster yes`).

use std::process::{Command, Stdio};
use std::time::Duration;

use breaker_workspace::redis_server::{free_port, RedisServer};

use super::pki::Pki;
use super::sentinel::port;
use super::wait;

pub struct Cluster {
    pub masters: Vec<RedisServer>,
    /// `redis-cli`'s options to reach the nodes over TLS; none for plain ones.
    cli: Vec<String>,
}

/// The configuration of a node, with `more`: a node that stops answering for 1.5 s is
/// failing. Its bus has a free port of its own: the default, its port + 10000, is past 65535
/// for a port the kernel may hand out.
fn node_args(more: &[&str]) -> Vec<String> {
    let mut node = [
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
        "--cluster-node-timeout",
        "1500",
    ]
    .map(String::from)
    .to_vec();
    node.extend(["--cluster-port".into(), free_port().to_string()]);
    node.extend(more.iter().map(|arg| arg.to_string()));
    node
}

fn args(owned: &[String]) -> Vec<&str> {
    owned.iter().map(String::as_str).collect()
}

impl Cluster {
    /// Starts and joins the three masters, or `None` after a loud notice when
    /// `redis-server` is missing (a failure with `CI=true`).
    pub fn start_or_skip(what: &str) -> Option<Self> {
        let first = node_args(&[]);
        let mut masters = vec![RedisServer::start_or_skip_with(what, &args(&first))?];
        for _ in 0..2 {
            let node = node_args(&[]);
            masters.push(RedisServer::start_with(&args(&node)).expect("a cluster node"));
        }
        Some(Self::create(masters, Vec::new()))
    }

    /// Three masters that speak TLS only, among themselves too, with the certificates of
    /// `pki` (checking their clients') and `extra` configuration (an ACL user), or `None`
    /// after a loud notice when `redis-server` is missing (a failure with `CI=true`).
    pub fn start_tls_or_skip(what: &str, pki: &Pki, extra: &[&str]) -> Option<Self> {
        if !RedisServer::installed() {
            // Says loudly that `what` is skipped (a failure with `CI=true`).
            let _ = RedisServer::start_or_skip(what);
            return None;
        }
        let mut tls = pki.server_args(true);
        tls.extend(["--tls-cluster", "yes"].map(String::from));
        tls.extend(extra.iter().map(|arg| arg.to_string()));
        let masters = (0..3)
            .map(|_| {
                let node = node_args(&args(&tls));
                RedisServer::start_tls_only(&args(&node)).expect("a cluster node over TLS")
            })
            .collect();
        Some(Self::create(masters, pki.cli_args()))
    }

    /// Joins `masters` into a cluster, `redis-cli` reaching them with the options `cli`.
    fn create(masters: Vec<RedisServer>, cli: Vec<String>) -> Self {
        let created = Command::new("redis-cli")
            .args(&cli)
            .arg("--cluster")
            .arg("create")
            .args(masters.iter().map(|m| format!("127.0.0.1:{}", port(m))))
            .arg("--cluster-yes")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("redis-cli runs");
        assert!(created.success(), "redis-cli --cluster create failed");
        let cluster = Self { masters, cli };
        cluster.wait_ok();
        cluster
    }

    /// `redis+cluster://` naming the first two masters: they tell of the third.
    pub fn url(&self) -> String {
        format!(
            "redis+cluster://127.0.0.1:{},127.0.0.1:{}",
            port(&self.masters[0]),
            port(&self.masters[1])
        )
    }

    /// A plain connection to master `i`.
    pub fn node(&self, i: usize) -> redis::Connection {
        redis::Client::open(self.masters[i].url())
            .unwrap()
            .get_connection()
            .unwrap()
    }

    /// The master that holds `key`'s slot, by its index.
    pub fn master_of(&self, key: &str) -> usize {
        if !self.cli.is_empty() {
            return self.master_of_by_cli(key);
        }
        let slot = i64::from(self.slot(key));
        let ranges: Vec<Vec<redis::Value>> = redis::cmd("CLUSTER")
            .arg("SLOTS")
            .query(&mut self.node(0))
            .unwrap();
        let number = |v: &redis::Value| match v {
            redis::Value::Int(n) => *n,
            other => panic!("not a number: {other:?}"),
        };
        let owner = ranges
            .iter()
            .find(|range| (number(&range[0])..=number(&range[1])).contains(&slot))
            .map(|range| match &range[2] {
                redis::Value::Array(node) => number(&node[1]),
                other => panic!("not a node: {other:?}"),
            })
            .expect("a master holds every slot");
        (0..self.masters.len())
            .find(|&i| i64::from(port(&self.masters[i])) == owner)
            .expect("the owner is one of the masters")
    }

    /// The slot of `key`.
    pub fn slot(&self, key: &str) -> u16 {
        redis::cmd("CLUSTER")
            .arg("KEYSLOT")
            .arg(key)
            .query(&mut self.node(0))
            .unwrap()
    }

    /// Moves `slot` with its keys from master `from` to master `to`, as `redis-cli --cluster
    /// reshard` does: importing, migrating, `MIGRATE` of its keys, then the slot's new owner
    /// told to every master.
    pub fn move_slot(&self, slot: u16, from: usize, to: usize) {
        let id = |i: usize| -> String {
            redis::cmd("CLUSTER")
                .arg("MYID")
                .query(&mut self.node(i))
                .unwrap()
        };
        let (from_id, to_id) = (id(from), id(to));
        let setslot = |i: usize, how: &str, node: &str| {
            let _: () = redis::cmd("CLUSTER")
                .arg("SETSLOT")
                .arg(slot)
                .arg(how)
                .arg(node)
                .query(&mut self.node(i))
                .unwrap();
        };
        setslot(to, "IMPORTING", &from_id);
        setslot(from, "MIGRATING", &to_id);
        loop {
            let keys: Vec<String> = redis::cmd("CLUSTER")
                .arg("GETKEYSINSLOT")
                .arg(slot)
                .arg(100)
                .query(&mut self.node(from))
                .unwrap();
            if keys.is_empty() {
                break;
            }
            let _: () = redis::cmd("MIGRATE")
                .arg("127.0.0.1")
                .arg(port(&self.masters[to]))
                .arg("")
                .arg(0)
                .arg(5000)
                .arg("KEYS")
                .arg(&keys)
                .query(&mut self.node(from))
                .unwrap();
        }
        for i in [to, from] {
            setslot(i, "NODE", &to_id);
        }
        for i in (0..self.masters.len()).filter(|i| ![to, from].contains(i)) {
            setslot(i, "NODE", &to_id);
        }
    }

    /// Blocks until every running master says the cluster is ok.
    pub fn wait_ok(&self) {
        wait::until(
            "every running master says the cluster is ok",
            Duration::from_secs(30),
            Duration::from_millis(50),
            || {
                (0..self.masters.len()).all(|i| {
                    self.cluster_info(i)
                        .is_some_and(|info| info.contains("cluster_state:ok"))
                })
            },
        );
    }

    /// `CLUSTER INFO` of master `i`, over TLS with `redis-cli` when the nodes speak TLS.
    fn cluster_info(&self, i: usize) -> Option<String> {
        if self.cli.is_empty() {
            let client = redis::Client::open(self.masters[i].url()).ok()?;
            let mut conn = client.get_connection().ok()?;
            return redis::cmd("CLUSTER").arg("INFO").query(&mut conn).ok();
        }
        Some(self.cli(i, &["CLUSTER", "INFO"]))
    }

    /// [`master_of`](Self::master_of) over TLS: `CLUSTER KEYSLOT`, and the slots of each
    /// master in `CLUSTER NODES` (`id ip:port@bus flags master ... connected 0-5460`).
    fn master_of_by_cli(&self, key: &str) -> usize {
        let slot: u16 = self
            .cli(0, &["CLUSTER", "KEYSLOT", key])
            .trim()
            .parse()
            .unwrap();
        let nodes = self.cli(0, &["CLUSTER", "NODES"]);
        let holds = |range: &str| {
            let (from, to) = range.split_once('-').unwrap_or((range, range));
            matches!(
                (from.parse::<u16>(), to.parse::<u16>()),
                (Ok(from), Ok(to)) if (from..=to).contains(&slot)
            )
        };
        let owner = nodes
            .lines()
            .map(|line| line.split(' ').collect::<Vec<&str>>())
            .find(|fields| fields.iter().skip(8).any(|range| holds(range)))
            .and_then(|fields| {
                let address = fields[1].split('@').next()?;
                address.rsplit(':').next()?.parse::<u16>().ok()
            })
            .expect("a master holds every slot");
        (0..self.masters.len())
            .find(|&i| port(&self.masters[i]) == owner)
            .expect("the owner is one of the masters")
    }

    /// `redis-cli`'s answer to `args` from master `i`, over TLS.
    fn cli(&self, i: usize, args: &[&str]) -> String {
        let out = Command::new("redis-cli")
            .args(&self.cli)
            .args(["-p", &self.masters[i].port().to_string()])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("redis-cli runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}
