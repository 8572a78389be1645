//! A gateway in front of a flaky upstream, on real HTTP over loopback.
//!
//! The upstream (axum) has a fault switch; the gateway (axum) asks it with reqwest through a
//! `#[circuit_breaker(key = upstream, fallback = ...)]` function, one breaker per upstream
//! address, and serves `/metrics`. The demo flips the switch and shows the breaker opening,
//! the upstream left alone while it is open, the fallback answering, and the recovery.
//!
//! `cargo run --example http_gateway`

#[path = "../src/gateway.rs"]
mod gateway;

use std::time::Duration;

use breaker::registry;
use gateway::{Client, Fault, Gateway, Upstream, BREAKER};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let upstream = Upstream::start().await?;
    let gateway = Gateway::start(upstream.addr()).await?;
    let client = Client::default();
    println!("upstream on http://{}", upstream.addr());
    println!("gateway on http://{}", gateway.addr());

    let ask = |label: &'static str| {
        let client = &client;
        let gateway = &gateway;
        let upstream = &upstream;
        async move {
            let (status, body) = client.get(gateway.addr(), "/book/978-1").await?;
            println!(
                "{label:>9}: {status} {body:<90} (upstream hits: {})",
                upstream.hits()
            );
            Ok::<_, reqwest::Error>(body)
        }
    };

    for _ in 0..2 {
        ask("healthy").await?;
    }
    for fault in [Fault::Slow, Fault::Erroring] {
        client.set_fault(upstream.addr(), fault).await?;
        for _ in 0..2 {
            ask(fault.as_str()).await?;
        }
    }
    let breaker = registry()
        .get_keyed(BREAKER, &upstream.addr().to_string())
        .ok_or("the breaker of the upstream is registered on the first call")?;
    println!("breaker {}: {}", breaker.name(), breaker.state());

    client.set_fault(upstream.addr(), Fault::Healthy).await?;
    println!("the upstream is healthy again; the breaker lets a probe through after 2s");
    for _ in 0..30 {
        if ask("recovery").await?.starts_with("book") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    println!("breaker {}: {}", breaker.name(), breaker.state());

    let (_, metrics) = client.get(gateway.addr(), "/metrics").await?;
    println!("GET /metrics:");
    for line in metrics.lines().filter(|l| l.contains(BREAKER)) {
        println!("  {line}");
    }
    Ok(())
}
