//! One instance of a service in a fleet, as its own OS process: `tests/fleet_processes.rs`
//! starts it several times against one `redis-server` (a binary of the tests'
//! package, so that cargo builds it for them).
//!
//! `cargo run -p breaker-tests --bin fleet_instance -- redis://127.0.0.1:6379 web-1 sick|watch`
//!
//! Its breaker `libraryd` (2 failed calls of 2 open it for 30 s; the fleet on, quorum 2) joins
//! the fleet. `sick` fails two calls, so the breaker opens by its own judgement; `watch` calls
//! every 10 ms and reports what its breaker does. Each prints one line per news on stdout
//! (`ready`, `open`, `peers N`, `rejected REASON`) and exits when its stdin closes, or after
//! 30 s.

use std::io::Read;
use std::sync::Arc;
use std::time::Duration;

use breakerbox::fleet::Fleet;
use breakerbox::{Breaker, Config};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, id, mode] = args.as_slice() else {
        eprintln!("usage: fleet_instance REDIS_URL INSTANCE_ID sick|watch");
        std::process::exit(2);
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    // Ends the process when the parent closes our stdin.
    std::thread::spawn(|| {
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        std::process::exit(0);
    });
    runtime.block_on(run(url, id, mode));
}

async fn run(url: &str, id: &str, mode: &str) {
    let fleet = Fleet::builder(url)
        .instance(id)
        .ttl(Duration::from_millis(1200))
        .timeout(Duration::from_millis(300))
        .snapshot_every(Duration::from_millis(400))
        .start()
        .expect("a valid fleet");
    let config = Config::builder()
        .count_window(2)
        .min_calls(2)
        .open_for(Duration::from_secs(30))
        .probes(1)
        .fleet(true)
        .fleet_quorum(2)
        .build()
        .expect("a valid configuration");
    let b = Arc::new(Breaker::new("libraryd", config));
    fleet.join(&b, b.config().fleet_quorum());
    fleet.flush().await;
    println!("ready");
    if mode == "sick" {
        for _ in 0..2 {
            b.try_acquire().expect("closed").failure();
        }
        fleet.flush().await;
        println!("open");
    }
    let mut peers = usize::MAX;
    for _ in 0..3_000 {
        let now = fleet.peers_open("libraryd");
        if now != peers {
            peers = now;
            println!("peers {peers}");
        }
        if mode == "watch" {
            match b.try_acquire() {
                Ok(permit) => permit.success(),
                Err(rejected) => println!("rejected {:?}", rejected.reason()),
            }
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
