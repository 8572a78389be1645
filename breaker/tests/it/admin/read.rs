//! `GET /` and `GET /{name}`: every field of the JSON.

use std::time::Duration;

use breakerbox::admin;
use breakerbox::overrides::Overrides;
use breakerbox::{circuit_breaker, registry, Classify, Outcome, Rejected};
use serde_json::json;

use super::support::{breaker, get, own_registry};

#[tokio::test]
async fn the_list_shows_each_breaker_field_by_field() {
    let registry = own_registry();
    let (b, clock) = breaker(registry, "svc::stock");
    breaker(registry, "svc::search");
    for ok in [true, false, true, false] {
        let permit = b.try_acquire().unwrap();
        if ok {
            permit.success()
        } else {
            permit.failure()
        }
    }
    let _ = b.try_acquire().unwrap_err();
    clock.advance(Duration::from_secs(2));

    let app = admin::router_of(registry);
    let (status, json) = get(&app, "/").await;
    assert_eq!(status, 200);
    let list = json["breakers"].as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["name"], "svc::search");
    let stock = &list[1];
    assert_eq!(stock["name"], "svc::stock");
    assert_eq!(stock["key"], json!(null));
    assert_eq!(stock["state"], "open");
    assert_eq!(
        (stock["calls"].clone(), stock["failures"].clone()),
        (json!(4), json!(2))
    );
    assert_eq!(stock["slow_calls"], 0);
    assert_eq!(stock["failure_rate"], 0.5);
    assert_eq!(stock["slow_call_rate"], json!(null));
    assert_eq!(stock["rejected"], 1);
    assert_eq!(stock["admit_percent"], 100);
    assert_eq!(
        stock["totals"],
        json!({
            "success": 2, "failure": 2, "ignored": 0, "cancelled": 0, "rejected": 1,
            "rejected_by": {"open": 1, "half_open_full": 0, "forced_open": 0, "throttled": 0,
                            "bulkhead": 0, "fleet_open": 0, "shed": 0},
            "shadow_rejected": 0, "retries": 0, "retry_budget_exhausted": 0
        })
    );
    assert_eq!(stock["trial"], json!(null));
    assert_eq!(
        stock["thresholds"],
        json!({"failure_rate": 0.5, "slow_call_rate": null})
    );
    assert_eq!(stock["open_left_ms"], 3000);
    assert_eq!(stock["shed_probability"], json!(null));
    assert_eq!(
        stock["fleet"],
        json!({"member": false, "open_for_fleet": false, "degraded": null, "peers_open": null})
    );
    let last = &stock["last_transition"];
    assert_eq!(last["id"], 1);
    assert_eq!(
        (last["name"].clone(), last["key"].clone()),
        (json!("svc::stock"), json!(null))
    );
    assert_eq!(last["type"], "state_transition");
    assert_eq!(last["operator"], json!(null));
    assert_eq!(
        (last["from"].clone(), last["to"].clone()),
        (json!("closed"), json!("open"))
    );
    assert_eq!(
        (last["reason"].clone(), last["shadow"].clone()),
        (json!("failure_rate"), json!(false))
    );
    assert!(last["at_ms"].as_u64().unwrap() > 1_700_000_000_000);
    assert_eq!(stock["recent"], json!([last]));
    assert_eq!(list[0]["state"], "closed");
    assert_eq!(list[0]["last_transition"], json!(null));
    assert_eq!(list[0]["open_left_ms"], json!(null));
}

#[tokio::test]
async fn the_half_open_trial_shows_its_probes() {
    let registry = own_registry();
    let (b, clock) = breaker(registry, "svc::trial");
    for _ in 0..4 {
        b.try_acquire().unwrap().failure();
    }
    clock.advance(Duration::from_secs(5));
    let probe = b.try_acquire().unwrap();
    let (_, json) = get(&admin::router_of(registry), "/").await;
    let view = &json["breakers"][0];
    assert_eq!(view["state"], "half_open");
    assert_eq!(
        view["trial"],
        json!({"admitted": 1, "in_flight": 1, "succeeded": 0})
    );
    assert_eq!(view["last_transition"]["reason"], "open_elapsed");
    assert_eq!(view["recent"].as_array().unwrap().len(), 2);
    probe.success();
}

#[derive(Debug)]
struct Down;

impl Classify for Down {
    fn classify(&self) -> Outcome {
        Outcome::Failure
    }
}

impl From<Rejected> for Down {
    fn from(_: Rejected) -> Self {
        Down
    }
}

#[circuit_breaker(name = "admin_read::replica", key = host, window = 10, min = 5)]
async fn ping(host: &str) -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(name = "admin_read::declared", rate = 0.25)]
async fn declared() -> Result<(), Down> {
    Ok(())
}

#[tokio::test]
async fn keyed_members_are_listed_with_their_key_and_their_family_in_detail() {
    ping("10.0.0.1:7000").await.unwrap();
    ping("10.0.0.2:7000").await.unwrap();
    let app = admin::router();
    let (_, json) = get(&app, "/").await;
    let members: Vec<_> = json["breakers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["name"] == "admin_read::replica")
        .map(|b| (b["key"].clone(), b["calls"].clone()))
        .collect();
    assert_eq!(
        members,
        [
            (json!("10.0.0.1:7000"), json!(1)),
            (json!("10.0.0.2:7000"), json!(1))
        ]
    );

    let (status, detail) = get(&app, "/admin_read::replica").await;
    assert_eq!(status, 200);
    assert_eq!(
        (detail["name"].clone(), detail["keyed"].clone()),
        (json!("admin_read::replica"), json!(true))
    );
    assert_eq!(detail["breakers"].as_array().unwrap().len(), 2);
    let window = detail["config"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["key"] == "window")
        .unwrap();
    assert_eq!(
        *window,
        json!({"key": "window", "value": 10, "source": "attribute"})
    );
}

#[tokio::test]
async fn the_detail_shows_every_key_its_value_and_where_it_came_from() {
    declared().await.unwrap();
    let overrides: Overrides = "[\"admin_read::declared\"]\nopen = \"30s\"\n"
        .parse()
        .unwrap();
    registry().apply(&overrides).unwrap();
    let (status, detail) = get(&admin::router(), "/admin_read::declared").await;
    assert_eq!(status, 200);
    assert_eq!(detail["keyed"], false);
    let config = detail["config"].as_array().unwrap();
    assert_eq!(config.len(), breakerbox::overrides::CONFIG_KEYS.len());
    let keys: Vec<&str> = config.iter().map(|s| s["key"].as_str().unwrap()).collect();
    assert_eq!(keys, breakerbox::overrides::CONFIG_KEYS);
    let entry = |key: &str| config.iter().find(|s| s["key"] == key).unwrap().clone();
    assert_eq!(
        entry("rate"),
        json!({"key": "rate", "value": 0.25, "source": "attribute"})
    );
    assert_eq!(
        entry("open"),
        json!({"key": "open", "value": "30s", "source": "overrides"})
    );
    assert_eq!(
        entry("window"),
        json!({"key": "window", "value": 20, "source": "attribute"})
    );
    assert_eq!(
        entry("slow"),
        json!({"key": "slow", "value": null, "source": "attribute"})
    );
    assert_eq!(
        entry("probe_timeout"),
        json!({"key": "probe_timeout", "value": "1m", "source": "attribute"})
    );
    assert_eq!(
        entry("shadow"),
        json!({"key": "shadow", "value": false, "source": "attribute"})
    );
}

#[tokio::test]
async fn a_breaker_built_by_code_shows_its_keys_from_the_builder() {
    let registry = own_registry();
    breaker(registry, "svc::built");
    let (_, detail) = get(&admin::router_of(registry), "/svc::built").await;
    let config = detail["config"].as_array().unwrap();
    assert!(config.iter().all(|s| s["source"] == "builder"), "{detail}");
    let min = config.iter().find(|s| s["key"] == "min").unwrap();
    assert_eq!(min["value"], 4);
}

#[tokio::test]
async fn an_unknown_name_answers_404_with_the_nearest_names() {
    let registry = own_registry();
    breaker(registry, "svc::stock");
    breaker(registry, "svc::stack");
    breaker(registry, "svc::payments");
    let (status, json) = get(&admin::router_of(registry), "/svc::stok").await;
    assert_eq!(status, 404);
    assert_eq!(
        json,
        json!({"error": "no breaker is registered as \"svc::stok\"",
               "did_you_mean": ["svc::stock", "svc::stack"]})
    );
}

#[tokio::test]
async fn a_throttled_breaker_shows_the_probability_it_sheds_a_call() {
    let registry = own_registry();
    let config = breakerbox::Config::builder()
        .throttle(2.0)
        .min_calls(10)
        .build()
        .unwrap();
    let b = registry.register(std::sync::Arc::new(breakerbox::Breaker::with_clock(
        "svc::throttled",
        config,
        breakerbox::clock::ManualClock::new(),
    )));
    let app = admin::router_of(registry);
    let shed = |json: serde_json::Value| json["breakers"][0]["shed_probability"].clone();
    assert_eq!(shed(get(&app, "/").await.1), json!(0.0));
    // Seven calls asked, one answered well: (7 - 2 * 1) / (7 + 1).
    let mut calls: Vec<_> = (0..7).map(|_| b.try_acquire().unwrap()).collect();
    calls.pop().unwrap().success();
    calls.into_iter().for_each(|call| call.failure());
    assert_eq!(shed(get(&app, "/").await.1), json!(0.625));
}
