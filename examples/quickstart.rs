//! A breaker in front of a downstream that fails for a while, then recovers.
//!
//! Runs in virtual time (tokio's paused clock), so it finishes at once and prints the same
//! story every time: the breaker opens, rejects without calling, half-opens, and closes.

use std::io;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use breaker::{Breaker, Config, Event};
use tokio::time::Instant;

/// The downstream: healthy for 2s, refusing connections until 8s, healthy again after.
async fn get_book(started: Instant, hits: &AtomicU32) -> Result<&'static str, io::Error> {
    hits.fetch_add(1, Ordering::Relaxed);
    tokio::time::sleep(Duration::from_millis(20)).await;
    let t = started.elapsed();
    if t >= Duration::from_secs(2) && t < Duration::from_secs(8) {
        Err(io::ErrorKind::ConnectionRefused.into())
    } else {
        Ok("The Rust Programming Language")
    }
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() -> Result<(), breaker::ConfigError> {
    let config = Config::builder()
        .count_window(20)
        .min_calls(10)
        .failure_rate(0.5)
        .open_for(Duration::from_secs(5))
        .probes(3)
        .build()?;
    let libraryd = Breaker::new("libraryd", config);
    let started = Instant::now();
    libraryd.on_event(move |e| {
        if let Event::StateTransition { from, to } = e {
            println!("{:>6.1}s  {from} -> {to}", started.elapsed().as_secs_f64());
        }
    });

    let hits = AtomicU32::new(0);
    let (mut served, mut failed, mut rejected) = (0, 0, 0);
    for _ in 0..75 {
        match libraryd.call(get_book(started, &hits)).await {
            Ok(Ok(_book)) => served += 1,
            Ok(Err(_refused)) => failed += 1,
            Err(r) => {
                if rejected % 10 == 0 {
                    println!("{:>6.1}s  rejected: {r}", started.elapsed().as_secs_f64());
                }
                rejected += 1;
            }
        }
        tokio::time::sleep(Duration::from_millis(180)).await;
    }

    let s = libraryd.snapshot();
    println!(
        "\nserved {served}, failed {failed}, rejected {rejected} (never reached libraryd); \
         libraryd saw {} calls; breaker is {}",
        hits.load(Ordering::Relaxed),
        s.state
    );
    Ok(())
}
