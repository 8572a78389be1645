//! Breakers that exist before traffic. The pricing library's `#[circuit_breaker]` functions
//! (`src/pricing.rs`, a crate of the workspace this example depends on) are in the registry
//! from its first access: the operators' overrides file, a listener and the first Prometheus
//! scrape all reach them before any call, and a typo in the file is caught at start-up.
//!
//! `cargo run --example boot --features boot`

use breaker_workspace::pricing::{self, PriceClient, PriceError};
use breakerbox::overrides::Overrides;
use breakerbox::{events::Event, registry};

/// What operators ship beside the binary: tighter numbers for `get_price`, and the price
/// list's refresh switched off.
const OVERRIDES: &str = r#"
["pricing::get_price"]
window = 4
min = 2

["breaker_workspace::pricing::PriceClient::refresh"]
action = "force_open"
"#;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    println!("registered before any call:");
    for name in registry().names() {
        println!("  {name}");
    }

    println!("\nthe first scrape:");
    let scrape = breakerbox::metrics::text();
    let series = ["circuitbreaker_state{", "circuitbreaker_failure_rate{"];
    for line in scrape.lines().filter(|l| l.contains(pricing::GET_PRICE)) {
        if series.iter().any(|s| line.starts_with(s)) || line.contains("result=\"failure\"") {
            println!("  {line}");
        }
    }

    let typo = Overrides::from_toml("overrides.toml", "[\"pricing::get_prise\"]\nmin = 2\n")
        .expect("valid TOML");
    let refused = registry()
        .apply(&typo)
        .expect_err("no breaker has that name");
    println!("\na typo is refused, and nothing applied:\n  {refused}");

    let overrides = Overrides::from_toml("overrides.toml", OVERRIDES).expect("valid TOML");
    registry()
        .apply(&overrides)
        .expect("every name is registered");
    let get_price = registry().get(pricing::GET_PRICE).expect("registered");
    println!(
        "\noverrides applied at boot: {} has min {}, {} is {}",
        pricing::GET_PRICE,
        get_price.config().min_calls(),
        pricing::REFRESH,
        registry()
            .get(pricing::REFRESH)
            .expect("registered")
            .state()
    );
    get_price.on_event(|e| {
        if let Event::StateTransition { from, to, .. } = e {
            println!("  listener: {} {from} -> {to}", pricing::GET_PRICE);
        }
    });

    println!("\nthe first calls:");
    for up in [false, false, true] {
        println!("  get_price: {:?}", pricing::get_price("sku-1", up).await);
    }
    let refreshed = PriceClient.refresh().await;
    assert_eq!(refreshed, Err(PriceError::Rejected));
    println!("  refresh: {refreshed:?}");
    println!("  quote: {:?}", pricing::quote("eu-west", "sku-1").await);
    let member = registry()
        .get_keyed(pricing::QUOTE, "eu-west")
        .expect("a member comes with its key");
    println!(
        "  {} now has a member for key {:?}",
        pricing::QUOTE,
        member.key()
    );
}
