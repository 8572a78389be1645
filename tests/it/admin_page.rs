//! The admin page (`GET /breakers/ui`) in a real browser: Debian's headless `chromium`,
//! driven by `chromedriver`, against the admin example's service. The page lists the
//! breakers; a tile turns OPEN within a second of the scripted outage; `reset` with the
//! token closes the breaker; with a wrong token, or none, nothing changes.
//!
//! Needs `chromium` and `chromium-driver` (Debian's packages); fails, saying so, without them.

// The test turns the outage on and off itself: the example's script goes unused.
#[allow(dead_code)]
#[path = "../../src/admin_demo.rs"]
mod admin_demo;
use crate::support::webdriver;

use std::time::Duration;

use breakerbox::{registry, State};
use serde_json::{json, Value};
use webdriver::Browser;

/// Every tile's breaker, key and state, in page order: the example's breakers only (the
/// binary's other tests have theirs on the page too, one of them also under `shop::`).
const TILES: &str = "return [...document.querySelectorAll('.tile')]
    .filter(t => ['shop::inventory', 'shop::payments', 'shop::replica'].includes(t.dataset.name))
    .map(t => [t.dataset.name, t.dataset.key, t.dataset.state]);";

/// The state the inventory's tile shows.
const INVENTORY: &str =
    "const t = document.querySelector('.tile[data-name=\"shop::inventory\"]'); return t && t.dataset.state;";

/// The inventory tile's message (an action's refusal).
const MESSAGE: &str =
    "return document.querySelector('.tile[data-name=\"shop::inventory\"] .message').textContent;";

const TOKEN: &str = "page-secret";

fn listed(states: [&str; 4]) -> Value {
    json!([
        ["shop::inventory", "", states[0]],
        ["shop::payments", "", states[1]],
        ["shop::replica", admin_demo::REPLICAS[0], states[2]],
        ["shop::replica", admin_demo::REPLICAS[1], states[3]],
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_lists_the_breakers_shows_the_outage_and_resets_only_with_the_token() {
    let outage = admin_demo::Outage::default();
    admin_demo::start_traffic(outage.clone());
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, admin_demo::app(Some(TOKEN))).await });
    let page = format!("http://127.0.0.1:{port}/breakers/ui");
    let browser = Browser::start().await;
    let long = Duration::from_secs(15);

    // The page lists every breaker, the keyed family's members by key.
    browser.open(&format!("{page}#token={TOKEN}")).await;
    let closed = listed(["closed"; 4]);
    browser
        .wait_for("the page lists the breakers", TILES, &closed, long)
        .await;

    // The outage: the inventory's tile turns OPEN within a second.
    outage.set(true);
    let took = browser
        .wait_for("the tile turns OPEN", INVENTORY, &json!("open"), long)
        .await;
    assert!(
        took <= Duration::from_secs(1),
        "the tile turned OPEN {took:?} after the outage began"
    );
    eprintln!("the tile turned OPEN {took:?} after the outage began");
    outage.set(false);
    let inventory = registry().get("shop::inventory").unwrap();
    assert_eq!(inventory.state(), State::Open);
    let before = inventory.snapshot().totals.rejected;

    // A wrong token: the reset is refused, and the breaker stays OPEN.
    browser.open(&format!("{page}#token=wrong")).await;
    browser
        .wait_for("the tile shows OPEN", INVENTORY, &json!("open"), long)
        .await;
    browser
        .click(".tile[data-name=\"shop::inventory\"] button[data-action=\"reset\"]")
        .await;
    let refused = json!("401: the bearer token is wrong");
    browser
        .wait_for("the refusal is shown", MESSAGE, &refused, long)
        .await;
    assert_eq!(inventory.state(), State::Open);

    // No token: no buttons, and a reset sent from the page anyway is refused.
    browser.open(&page).await;
    browser
        .wait_for("the tile shows OPEN", INVENTORY, &json!("open"), long)
        .await;
    assert_eq!(
        browser
            .run("return document.querySelectorAll('button').length;")
            .await,
        0
    );
    let status = browser
        .run(
            "return fetch('/breakers/shop%3A%3Ainventory', {method: 'POST', \
             headers: {'Content-Type': 'application/json'}, body: '{\"action\": \"reset\"}'}) \
             .then(r => r.status);",
        )
        .await;
    assert_eq!(status, 401);
    assert_eq!(inventory.state(), State::Open);
    assert!(
        inventory.snapshot().totals.rejected > before,
        "the traffic is still rejected"
    );

    // The token: reset closes the breaker, on the page and in the service.
    browser.open(&format!("{page}#token={TOKEN}")).await;
    browser
        .wait_for("the tile shows OPEN", INVENTORY, &json!("open"), long)
        .await;
    browser
        .click(".tile[data-name=\"shop::inventory\"] button[data-action=\"reset\"]")
        .await;
    browser
        .wait_for("the tile turns CLOSED", INVENTORY, &json!("closed"), long)
        .await;
    assert_eq!(inventory.state(), State::Closed);
    browser.quit().await;
}
