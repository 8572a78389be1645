//! A breaker in front of a downstream that fails for a while, then recovers.
//!
//! Runs in virtual time (tokio's paused clock), so it finishes at once and prints the same
//! story every time: the breaker opens, rejects without calling, half-opens, and closes.

use std::io;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use breaker::{circuit_breaker, registry, Classify, Event, Outcome, Rejected};
use tokio::time::Instant;

#[derive(Debug)]
enum LibError {
    /// libraryd did not answer.
    Io(io::Error),
    /// The breaker did not let the call through: libraryd was not even asked.
    Rejected(Rejected),
}

impl Classify for LibError {
    fn classify(&self) -> Outcome {
        match self {
            LibError::Io(e) => e.classify(),
            // libraryd was not asked: says nothing about its health.
            LibError::Rejected(_) => Outcome::Ignored,
        }
    }
}

impl From<Rejected> for LibError {
    fn from(rejected: Rejected) -> Self {
        LibError::Rejected(rejected)
    }
}

/// The downstream: healthy for 2s, refusing connections until 8s, healthy again after.
#[circuit_breaker(
    name = "libraryd",
    window = 20,
    min = 10,
    rate = 0.5,
    open = "5s",
    probes = 3
)]
async fn get_book(started: Instant, hits: &AtomicU32) -> Result<&'static str, LibError> {
    hits.fetch_add(1, Ordering::Relaxed);
    tokio::time::sleep(Duration::from_millis(20)).await;
    let t = started.elapsed();
    if t >= Duration::from_secs(2) && t < Duration::from_secs(8) {
        Err(LibError::Io(io::ErrorKind::ConnectionRefused.into()))
    } else {
        Ok("The Rust Programming Language")
    }
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    let started = Instant::now();
    let hits = AtomicU32::new(0);
    let (mut served, mut failed, mut rejected) = (0, 0, 0);
    // The attribute registered the breaker before any call: watch its transitions.
    let libraryd = registry().get("libraryd").expect("registered at boot");
    libraryd.on_event(move |e| {
        if let Event::StateTransition { from, to, .. } = e {
            println!("{:>6.1}s  {from} -> {to}", started.elapsed().as_secs_f64());
        }
    });
    for _ in 0..75 {
        match get_book(started, &hits).await {
            Ok(_book) => served += 1,
            Err(LibError::Io(_refused)) => failed += 1,
            Err(LibError::Rejected(r)) => {
                if rejected % 10 == 0 {
                    println!("{:>6.1}s  rejected: {r}", started.elapsed().as_secs_f64());
                }
                rejected += 1;
            }
        }
        tokio::time::sleep(Duration::from_millis(180)).await;
    }

    println!(
        "\nserved {served}, failed {failed}, rejected {rejected} (never reached libraryd); \
         libraryd saw {} calls; breaker is {}",
        hits.load(Ordering::Relaxed),
        libraryd.state()
    );
}
