//! Keyed families: which key a full family evicts, and what a new member is born with.

use std::sync::Arc;

use breaker::{circuit_breaker, registry, Breaker, Classify, Config, Outcome, Rejected, State};

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

#[circuit_breaker(name = "fam::lru", key = host, max_keys = 2)]
async fn lru(host: &str) -> Result<(), Down> {
    let _ = host;
    Ok(())
}

#[tokio::test]
async fn a_full_family_evicts_the_least_recently_used_key_never_one_just_looked_up() {
    // Where two keys tie in recency, the table's order picks the victim: a key order that
    // changes with every key's hash, so many rounds catch a tie.
    for round in 0..400 {
        let (x, y, z) = (
            format!("x{round}"),
            format!("y{round}"),
            format!("z{round}"),
        );
        for host in [&x, &y, &x, &z] {
            lru(host).await.unwrap();
        }
        let kept = |host: &str| registry().get_keyed("fam::lru", host).is_some();
        assert_eq!(
            (kept(&x), kept(&y), kept(&z)),
            (true, false, true),
            "round {round}"
        );
    }
}

#[circuit_breaker(name = "fam::instances", key = host, window = 2, min = 2)]
async fn instance(host: &str) -> Result<(), Down> {
    let _ = host;
    Ok(())
}

fn exported(name: &str, key: &str) -> bool {
    let series = format!("circuitbreaker_state{{name=\"{name}\",key=\"{key}\"}}");
    breaker::metrics::text().contains(&series)
}

#[tokio::test]
async fn a_removed_key_leaves_registry_and_metrics_its_live_permit_records_harmlessly_and_the_key_starts_anew(
) {
    instance("10.9.0.1:80").await.unwrap();
    instance("10.9.0.2:80").await.unwrap();
    let old = registry()
        .get_keyed("fam::instances", "10.9.0.1:80")
        .unwrap();
    assert!(exported("fam::instances", "10.9.0.1:80"));
    let live = old.try_acquire_owned().unwrap();

    let removed = registry()
        .remove_keyed("fam::instances", "10.9.0.1:80")
        .unwrap();
    assert!(Arc::ptr_eq(&removed, &old));
    assert!(registry()
        .get_keyed("fam::instances", "10.9.0.1:80")
        .is_none());
    assert!(registry()
        .remove_keyed("fam::instances", "10.9.0.1:80")
        .is_none());
    let keys: Vec<String> = registry()
        .list()
        .iter()
        .filter(|e| e.name() == "fam::instances")
        .map(|e| e.key().unwrap().to_owned())
        .collect();
    assert_eq!(keys, ["10.9.0.2:80"]);
    assert!(!exported("fam::instances", "10.9.0.1:80"));
    assert!(exported("fam::instances", "10.9.0.2:80"));

    // The permit admitted before the removal ends in the removed breaker.
    live.failure();
    assert_eq!((old.snapshot().calls, old.snapshot().failures), (2, 1));

    instance("10.9.0.1:80").await.unwrap();
    let fresh = registry()
        .get_keyed("fam::instances", "10.9.0.1:80")
        .unwrap();
    assert!(!Arc::ptr_eq(&fresh, &old));
    let s = fresh.snapshot();
    assert_eq!((s.state, s.calls, s.failures), (State::Closed, 1, 0));
    assert!(exported("fam::instances", "10.9.0.1:80"));
}

#[test]
fn a_removed_breaker_leaves_registry_and_metrics_and_its_name_registers_anew() {
    let old = registry().register(Arc::new(Breaker::new("fam::single", Config::default())));
    let live = old.try_acquire().unwrap();
    assert!(breaker::metrics::text().contains("circuitbreaker_state{name=\"fam::single\"} 0"));
    let removed = registry().remove("fam::single").unwrap();
    assert!(Arc::ptr_eq(&removed, &old));
    assert!(registry().get("fam::single").is_none());
    assert!(!registry().list().iter().any(|e| e.name() == "fam::single"));
    assert!(!breaker::metrics::text().contains("name=\"fam::single\""));
    live.success();
    assert_eq!(old.snapshot().totals.success, 1);

    let new = registry().register(Arc::new(Breaker::new("fam::single", Config::default())));
    assert!(!Arc::ptr_eq(&new, &old));
    assert!(Arc::ptr_eq(&registry().get("fam::single").unwrap(), &new));
}

#[tokio::test]
async fn the_keyed_layer_removes_a_key_and_its_next_request_gets_a_new_breaker() {
    use breaker::tower::KeyedCircuitBreakerLayer;
    use tower::{service_fn, Layer, Service, ServiceExt};

    let layer =
        KeyedCircuitBreakerLayer::new("fam::layer", Config::default(), 8, |host: &String| {
            host.clone()
        });
    let mut svc = layer.layer(service_fn(|_host: String| async {
        Ok::<_, std::io::Error>(http::StatusCode::OK)
    }));
    svc.ready()
        .await
        .unwrap()
        .call("a".to_owned())
        .await
        .unwrap();
    let old = registry().get_keyed("fam::layer", "a").unwrap();
    let removed = svc.remove("a").unwrap();
    assert!(Arc::ptr_eq(&removed, &old));
    assert!(layer.remove("a").is_none());
    svc.ready()
        .await
        .unwrap()
        .call("a".to_owned())
        .await
        .unwrap();
    let fresh = registry().get_keyed("fam::layer", "a").unwrap();
    assert!(!Arc::ptr_eq(&fresh, &old));
    assert_eq!((old.snapshot().calls, fresh.snapshot().calls), (1, 1));
}
