//! 100,000 keyed breakers (count window 20) stay resident in at most 64 MiB.
//!
//! One test in this binary: it owns the global allocator that counts live bytes.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use breakerbox::{circuit_breaker, registry, Classify, Outcome, Rejected};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

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
    let host = |i: usize| format!("10.{}.{}.{}:7000", i >> 16, (i >> 8) & 255, i & 255);
    // The family, the registry and the runtime exist before the count starts.
    fetch(&host(0)).await.unwrap();
    let before = LIVE.load(Ordering::Relaxed);
    for i in 1..KEYS {
        let host = host(i);
        assert_eq!(fetch(&host).await.unwrap(), host.len());
    }
    let resident = LIVE.load(Ordering::Relaxed) - before;
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
