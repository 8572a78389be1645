//! A Redis Cluster of three masters, real servers on loopback started with
//! `--cluster-enabled yes` and joined with `redis-cli --cluster create`; each is killed when
//! the cluster is dropped. A master killed and restarted keeps its node id and its slots
//! (its `nodes.conf` stays in its directory).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use breaker_workspace::redis_server::RedisServer;

use super::sentinel::port;

pub struct Cluster {
    pub masters: Vec<RedisServer>,
}

/// The configuration of a node: a node that stops answering for 1.5 s is failing.
const NODE: &[&str] = &[
    "--cluster-enabled",
    "yes",
    "--cluster-config-file",
    "nodes.conf",
    "--cluster-node-timeout",
    "1500",
];

impl Cluster {
    /// Starts and joins the three masters, or `None` after a loud notice when
    /// `redis-server` is missing (a failure with `CI=true`).
    pub fn start_or_skip(what: &str) -> Option<Self> {
        let mut masters = vec![RedisServer::start_or_skip_with(what, NODE)?];
        for _ in 0..2 {
            masters.push(RedisServer::start_with(NODE).expect("a cluster node"));
        }
        let created = Command::new("redis-cli")
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
        let cluster = Self { masters };
        cluster.wait_ok();
        Some(cluster)
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
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ok = self.masters.iter().all(|m| {
                let info = redis::Client::open(m.url())
                    .and_then(|c| c.get_connection())
                    .and_then(|mut c| redis::cmd("CLUSTER").arg("INFO").query::<String>(&mut c));
                info.is_ok_and(|info| info.contains("cluster_state:ok"))
            });
            if ok {
                return;
            }
            assert!(Instant::now() < deadline, "the cluster never said ok");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
