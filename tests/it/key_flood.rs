//! Keys chosen by an attacker cannot grow memory beyond `max_keys` breakers.
//!
//! The live heap is this thread's (`support/heap.rs`): the binary's other tests, running
//! beside this one, allocate on theirs.

use breakerbox::{circuit_breaker, registry, Classify, Outcome, Rejected};

use crate::support::heap;

#[derive(Debug)]
struct Refused;

impl Classify for Refused {
    fn classify(&self) -> Outcome {
        Outcome::Failure
    }
}

impl From<Rejected> for Refused {
    fn from(_: Rejected) -> Self {
        Refused
    }
}

#[circuit_breaker(name = "flood::fetch", key = host, max_keys = 64)]
async fn fetch(host: &str) -> Result<usize, Refused> {
    Ok(host.len())
}

#[tokio::test]
async fn a_flood_of_new_keys_keeps_max_keys_breakers_and_bounded_memory() {
    let flood = |from: usize, to: usize| async move {
        for i in from..to {
            let host = format!("attacker-{i:08}.example");
            assert_eq!(fetch(&host).await.unwrap(), host.len());
        }
    };
    let members = || {
        registry()
            .list()
            .iter()
            .filter(|e| e.name() == "flood::fetch")
            .count()
    };

    flood(0, 1_000).await;
    assert_eq!(members(), 64);
    let after_1k = heap::live().curr_bytes;

    flood(1_000, 20_000).await;
    assert_eq!(members(), 64);
    let after_20k = heap::live().curr_bytes;
    // 19,000 more distinct keys: the same 64 breakers' worth of memory (key texts have one
    // length, so even the allocator's sizes repeat).
    assert_eq!(after_20k, after_1k);
}
