//! The admin example's service (`examples/admin.rs`), which the page's browser test
//! (`tests/admin_page.rs`) runs too: three breakers, one of them keyed, called all the time by
//! a traffic task; the admin router at `/breakers`, its page at `/breakers/ui`; and an
//! outage of the inventory service that a script (or a test) turns on and off.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::response::Redirect;
use axum::routing::get;
use axum::Router;
use breakerbox::admin::{self, Authorize};
use breakerbox::{circuit_breaker, Classify, Outcome, Rejected};

/// The downstream failed, or the breaker said no.
#[derive(Debug)]
pub enum Down {
    Failed,
    Rejected,
}

impl Classify for Down {
    fn classify(&self) -> Outcome {
        match self {
            Down::Failed => Outcome::Failure,
            Down::Rejected => Outcome::Ignored,
        }
    }
}

impl From<Rejected> for Down {
    fn from(_: Rejected) -> Self {
        Down::Rejected
    }
}

/// Whether the inventory service is down.
#[derive(Clone, Debug, Default)]
pub struct Outage(Arc<AtomicBool>);

impl Outage {
    pub fn set(&self, down: bool) {
        self.0.store(down, Ordering::SeqCst);
    }

    fn is_on(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// The replicas the keyed breaker has a member for.
pub const REPLICAS: [&str; 2] = ["10.0.0.1:7000", "10.0.0.2:7000"];

#[circuit_breaker(
    name = "shop::inventory",
    window = 10,
    min = 5,
    rate = 0.5,
    open = "30s"
)]
async fn inventory(outage: &Outage) -> Result<(), Down> {
    if outage.is_on() {
        Err(Down::Failed)
    } else {
        Ok(())
    }
}

#[circuit_breaker(
    name = "shop::payments",
    window = 20,
    min = 10,
    rate = 0.5,
    open = "10s"
)]
async fn payments(call: u64) -> Result<(), Down> {
    // One call in ten fails: a failure rate that stays under the threshold.
    if call.is_multiple_of(10) {
        Err(Down::Failed)
    } else {
        Ok(())
    }
}

#[circuit_breaker(name = "shop::replica", key = host, window = 10, min = 5, open = "10s")]
async fn replica(host: &str) -> Result<(), Down> {
    let _ = host;
    Ok(())
}

/// Calls every breaker every 25 ms, for as long as the runtime runs.
pub fn start_traffic(outage: Outage) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(25));
        for call in 0u64.. {
            tick.tick().await;
            let _ = inventory(&outage).await;
            let _ = payments(call).await;
            let _ = replica(REPLICAS[(call % 2) as usize]).await;
        }
    });
}

/// The scripted outage: 15 seconds healthy, then 20 seconds of outage, again and again.
pub fn start_script(outage: Outage) {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_secs(15)).await;
            outage.set(true);
            tokio::time::sleep(Duration::from_secs(20)).await;
            outage.set(false);
        }
    });
}

/// The service: the admin router at `/breakers` (writes for `token` only, and locked
/// without one), and `/` sending to its page.
pub fn app(token: Option<&str>) -> Router {
    let breakers = admin::router().critical(["shop::inventory", "shop::payments"]);
    let breakers = match token {
        Some(token) => breakers.authorize(admin::bearer_token(token)),
        None => breakers,
    };
    Router::new()
        .nest("/breakers", breakers)
        .route("/", get(|| async { Redirect::to("/breakers/ui") }))
}
