//! A gateway in front of a flaky upstream, on real HTTP over loopback.
//!
//! The upstream (axum) has a fault switch; the gateway (axum) asks it with reqwest through a
//! `#[circuit_breaker(key = upstream, fallback = ...)]` function, one breaker per upstream
//! address, and serves `/metrics`. The demo flips the switch and shows the breaker opening,
//! the upstream left alone while it is open, the fallback answering, and the recovery.
//!
//! Then the call policy, against an upstream in process on tokio's paused clock (virtual
//! time, exact counts, no waiting): a retry rescuing a blip, the breaker and the retry
//! budget keeping retries from multiplying the load of a sick upstream, and the bulkhead
//! keeping a hanging upstream from taking every worker of the gateway.
//!
//! `cargo run --example http_gateway --features gateway`

#[path = "../src/gateway.rs"]
mod gateway;

use std::time::Duration;

use breakerbox::registry;
use gateway::{Client, Fault, Gateway, Route, Run, Upstream, BREAKER, HANG_TIMEOUT, WORKERS};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    tokio::runtime::Runtime::new()?.block_on(on_the_wire())?;
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()?
        .block_on(in_virtual_time());
    Ok(())
}

/// The breaker of a real upstream over loopback, on the real clock.
async fn on_the_wire() -> Result<(), Box<dyn std::error::Error>> {
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

/// The call policy in virtual time: every number printed is counted by the run.
async fn in_virtual_time() {
    println!();
    println!("The call policy, on tokio's paused clock (virtual time; every count is the run's):");

    let blip = gateway::blip().await;
    println!(
        "a blip, retries = 2: {} call, {} upstream hits, {} answered, {} failed: the first \
         attempt failed, the retry {}ms later answered (breaker totals: {} failure, {} success, \
         {} retry)",
        blip.calls,
        blip.hits,
        blip.answered,
        blip.failed,
        blip.took.as_millis(),
        blip.totals.failure,
        blip.totals.success,
        blip.totals.retries,
    );

    println!("an outage, 1000 calls one after the other, retries = 2:");
    for (label, breaker_on, budget) in [
        ("breaker disabled, no retry budget", false, false),
        ("breaker disabled, retry_budget = 0.2", false, true),
        ("breaker on, retry_budget = 0.2", true, true),
    ] {
        print_storm(label, &gateway::outage(breaker_on, budget).await);
    }

    println!(
        "a hanging upstream behind /book (each call waits its {}s timeout), a gateway of \
         {WORKERS} workers, 50 requests 20ms apart, every fifth for /author:",
        HANG_TIMEOUT.as_secs()
    );
    for (label, max_concurrent) in [("no bulkhead", None), ("max_concurrent = 4", Some(4))] {
        let isolation = gateway::hanging_upstream(max_concurrent).await;
        println!("  {label:>18}:");
        print_route("/book", &isolation.book);
        print_route("/author", &isolation.author);
    }
}

fn print_route(path: &str, route: &Route) {
    let rejected = if route.rejected == 0 {
        String::new()
    } else {
        format!(
            ", {} rejected (the slowest rejection after {:.3}s)",
            route.rejected,
            route.slowest_rejected.as_secs_f64()
        )
    };
    println!(
        "    {path:>7}: {} requests: {} answered, {} timed out{rejected}; the slowest answer \
         after {:.3}s",
        route.requests,
        route.answered,
        route.timed_out,
        route.slowest.as_secs_f64(),
    );
}

fn print_storm(label: &str, run: &Run) {
    println!(
        "  {label:>36}: {:>4} upstream hits ({} retries; {} calls refused a retry by the \
         budget; {} calls rejected)",
        run.hits, run.totals.retries, run.totals.retry_budget_exhausted, run.rejected,
    );
}
