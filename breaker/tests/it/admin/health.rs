//! `GET /health` and `admin::health`: up unless a critical breaker is open.

use breakerbox::admin::{self, Authorize};
use serde_json::json;

use super::support::{breaker, get, own_registry};

#[tokio::test]
async fn health_is_up_until_a_critical_breaker_opens_then_names_it() {
    let registry = own_registry();
    let (stock, _) = breaker(registry, "svc::stock");
    let (search, _) = breaker(registry, "svc::search");
    let app = admin::router_of(registry).critical(["svc::stock"]);
    assert_eq!(
        get(&app, "/health").await,
        (200.try_into().unwrap(), json!({"status": "UP", "open": []}))
    );

    search.force_open(); // not critical
    assert_eq!(get(&app, "/health").await.0, 200);

    for _ in 0..4 {
        stock.try_acquire().unwrap().failure();
    }
    let (status, json) = get(&app, "/health").await;
    assert_eq!(status, 503);
    assert_eq!(
        json,
        json!({"status": "CIRCUIT_OPEN", "open": ["svc::stock"]})
    );
    assert_eq!(
        admin::health_of(registry, &["svc::stock"]).open(),
        ["svc::stock"]
    );

    stock.reset();
    stock.try_acquire().unwrap().success();
    assert_eq!(get(&app, "/health").await.0, 200);
}

#[tokio::test]
async fn without_a_critical_set_every_breaker_is_critical_forced_open_included() {
    let registry = own_registry();
    let (stock, _) = breaker(registry, "svc::stock");
    let (search, _) = breaker(registry, "svc::search");
    let app = admin::router_of(registry);
    stock.force_open();
    search.disable();
    let (status, json) = get(&app, "/health").await;
    assert_eq!(status, 503);
    assert_eq!(
        json,
        json!({"status": "CIRCUIT_OPEN", "open": ["svc::stock"]})
    );
    let health = admin::health_of(registry, &[]);
    assert!(!health.is_up());
}
