//! A breaker in front of a downstream that fails for a while, then recovers.
//!
//! Runs in virtual time (tokio's paused clock), so it finishes at once and prints the same
//! story every time: the outage starts, the breaker opens, rejects without calling,
//! half-opens once its open period is over, and closes.

use std::io;
use std::ops::Range;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use breakerbox::{circuit_breaker, events::Event, registry, Classify, Outcome, Rejected};
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

/// When libraryd refuses connections, from the start of the run; healthy before and after.
const OUTAGE: Range<Duration> = Duration::from_secs(2)..Duration::from_secs(8);

/// The downstream: healthy, then down for the [`OUTAGE`], then healthy again. It says when it
/// refuses a call, before the breaker hears of it.
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
    if OUTAGE.contains(&t) {
        static REFUSED: AtomicU32 = AtomicU32::new(0);
        let n = REFUSED.fetch_add(1, Ordering::Relaxed) + 1;
        println!(
            "{:>6.1}s  libraryd refused a call ({n} so far)",
            t.as_secs_f64()
        );
        Err(LibError::Io(io::ErrorKind::ConnectionRefused.into()))
    } else {
        Ok("The Rust Programming Language")
    }
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    println!(
        "libraryd answers in 20ms, and is down from {:.1}s to {:.1}s; the client calls it 75 \
         times, 180ms apart.\nThe breaker judges the last 20 calls once 10 completed, opens \
         at 50% failures for 5s, then lets 3 probes through.\n",
        OUTAGE.start.as_secs_f64(),
        OUTAGE.end.as_secs_f64()
    );
    let started = Instant::now();
    // The outage as it happens, between the calls.
    tokio::spawn(async move {
        tokio::time::sleep_until(started + OUTAGE.start).await;
        println!("{:>6.1}s  libraryd goes down", OUTAGE.start.as_secs_f64());
        tokio::time::sleep_until(started + OUTAGE.end).await;
        println!("{:>6.1}s  libraryd is back", OUTAGE.end.as_secs_f64());
    });
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
