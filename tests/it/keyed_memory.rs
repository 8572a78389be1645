//! 100,000 keyed breakers (count window 20) stay resident in at most 64 MiB.
//!
//! In a process of its own (`support/process.rs`): its breakers would stay in the registry
//! that other tests read whole (a scrape of every breaker, a list). The live bytes are this
//! thread's (`support/heap.rs`).

use breakerbox::{circuit_breaker, registry, Classify, Outcome, Rejected};

use crate::support::{heap, process};

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

const KEYS: usize = 100_000;

#[circuit_breaker(name = "memory::fetch", window = 20, key = host, max_keys = 100_000)]
async fn fetch(host: &str) -> Result<usize, Refused> {
    Ok(host.len())
}

#[tokio::test]
async fn a_hundred_thousand_keyed_breakers_fit_in_64_mib() {
    // Its 100,000 breakers would stay in the registry, which other tests read whole.
    if !process::alone(concat!(
        module_path!(),
        "::a_hundred_thousand_keyed_breakers_fit_in_64_mib"
    )) {
        return;
    }
    let host = |i: usize| format!("10.{}.{}.{}:7000", i >> 16, (i >> 8) & 255, i & 255);
    // The family, the registry and the runtime exist before the count starts.
    fetch(&host(0)).await.unwrap();
    let before = heap::live().curr_bytes;
    for i in 1..KEYS {
        let host = host(i);
        assert_eq!(fetch(&host).await.unwrap(), host.len());
    }
    let resident = usize::try_from(heap::live().curr_bytes - before).unwrap();
    let members = registry()
        .list()
        .iter()
        .filter(|e| e.name() == "memory::fetch")
        .count();
    assert_eq!(members, KEYS);
    eprintln!(
        "{KEYS} keyed breakers: {} KiB, {} bytes a key",
        resident / 1024,
        resident / (KEYS - 1)
    );
    assert!(
        resident <= 64 << 20,
        "{} MiB for {KEYS} keyed breakers",
        resident >> 20
    );
}
