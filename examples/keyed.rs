//! One breaker per downstream instance with `key = addr`.
//!
//! Three replicas serve the same data; one of them is down. Its breaker opens and rejects at
//! once, while the healthy replicas' breakers stay closed, so callers can move on to them.
//! When service discovery drops an instance, its breaker is removed with it.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::time::Duration;

use breakerbox::{circuit_breaker, registry, Classify, Outcome, Rejected};

#[derive(Debug)]
enum ReplicaError {
    Refused(SocketAddr),
    Rejected(Rejected),
}

impl Classify for ReplicaError {
    fn classify(&self) -> Outcome {
        match self {
            ReplicaError::Refused(_) => Outcome::Failure,
            // The replica was not asked: says nothing about its health.
            ReplicaError::Rejected(rejected) => rejected.classify(),
        }
    }
}

impl From<Rejected> for ReplicaError {
    fn from(rejected: Rejected) -> Self {
        ReplicaError::Rejected(rejected)
    }
}

/// Asks the replica at `addr`; the replicas in `down` refuse connections.
#[circuit_breaker(key = addr, max_keys = 64, window = 4, min = 4, open = "3s", probes = 1)]
async fn query(addr: SocketAddr, down: &HashSet<SocketAddr>) -> Result<u64, ReplicaError> {
    if down.contains(&addr) {
        Err(ReplicaError::Refused(addr))
    } else {
        Ok(u64::from(addr.port()))
    }
}

fn show_breakers() {
    for entry in registry().list() {
        if let Some(key) = entry.key() {
            let s = entry.breaker().snapshot();
            println!(
                "   {} [{}]: {} (calls {}, failures {}, rejected {})",
                entry.name(),
                key,
                s.state,
                s.calls,
                s.failures,
                s.rejected
            );
        }
    }
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    let replicas: Vec<SocketAddr> = ["10.0.0.1:7001", "10.0.0.2:7002", "10.0.0.3:7003"]
        .iter()
        .map(|a| a.parse().expect("a valid address"))
        .collect();
    let mut down = HashSet::from([replicas[1]]);

    for round in 1..=6 {
        let mut line = format!("round {round}:");
        for &addr in &replicas {
            let shown = match query(addr, &down).await {
                Ok(v) => format!("ok({v})"),
                Err(ReplicaError::Refused(at)) => format!("refused by {}", at.ip()),
                Err(ReplicaError::Rejected(r)) => format!("rejected({:?})", r.reason()),
            };
            line.push_str(&format!(" {addr}={shown}"));
        }
        println!("{line}");
    }
    show_breakers();

    println!("the replica comes back; 3s later its breaker lets a probe through");
    down.clear();
    tokio::time::advance(Duration::from_secs(3)).await;
    let probe = query(replicas[1], &down).await;
    println!("probe to {}: {probe:?}", replicas[1]);
    show_breakers();

    println!(
        "service discovery drops {}: its breaker goes with it",
        replicas[2]
    );
    // The family's name: the function's path, as no `name = ...` is given.
    registry().remove_keyed("keyed::query", &replicas[2].to_string());
    show_breakers();
}
