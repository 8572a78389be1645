//! Where annotated functions' breakers live: names, the registry, keyed families.

use std::net::SocketAddr;
use std::sync::Arc;

use breakerbox::{circuit_breaker, registry, Breaker, Classify, Config, Outcome, Rejected, State};

#[derive(Debug, PartialEq)]
enum NetError {
    Refused,
    Rejected,
}

impl Classify for NetError {
    fn classify(&self) -> Outcome {
        Outcome::Failure
    }
}

impl From<Rejected> for NetError {
    fn from(_: Rejected) -> Self {
        NetError::Rejected
    }
}

#[circuit_breaker]
async fn plain() -> Result<(), NetError> {
    Ok(())
}

struct Client<T> {
    _marker: std::marker::PhantomData<T>,
}

impl<T: Sync> Client<T> {
    #[circuit_breaker]
    async fn get(&self) -> Result<(), NetError> {
        Ok(())
    }
}

#[tokio::test(start_paused = true)]
async fn default_names_are_module_path_then_fn_and_type_for_methods() {
    plain().await.unwrap();
    assert_eq!(
        registry()
            .get("it::macro_registry::plain")
            .unwrap()
            .snapshot()
            .calls,
        1
    );
    Client::<String> {
        _marker: std::marker::PhantomData,
    }
    .get()
    .await
    .unwrap();
    let b = registry().get("it::macro_registry::Client::get").unwrap();
    assert_eq!(b.name(), "it::macro_registry::Client::get");
    let listed = registry().list();
    assert!(listed
        .iter()
        .any(|e| e.name() == "it::macro_registry::plain" && e.key().is_none()));
}

#[circuit_breaker(name = "inventory", window = 2, min = 2, rate = 1.0)]
async fn inventory_read(fail: bool) -> Result<(), NetError> {
    if fail {
        Err(NetError::Refused)
    } else {
        Ok(())
    }
}

#[circuit_breaker(name = "inventory", window = 50)]
async fn inventory_write() -> Result<(), NetError> {
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn functions_with_one_explicit_name_share_one_breaker() {
    assert_eq!(inventory_read(true).await, Err(NetError::Refused));
    assert_eq!(inventory_read(true).await, Err(NetError::Refused));
    assert_eq!(inventory_write().await, Err(NetError::Rejected));
    let b = registry().get("inventory").unwrap();
    assert_eq!(b.state(), State::Open);
    assert_eq!(
        b.config().min_calls(),
        2,
        "the first registration's config wins"
    );
}

#[tokio::test(start_paused = true)]
async fn registering_by_hand_under_an_attributes_name_returns_the_attributes_breaker() {
    let mine = Arc::new(Breaker::new("billing", Config::default()));
    let registered = registry().register(mine.clone());
    assert!(
        !Arc::ptr_eq(&mine, &registered),
        "the attribute registered its breaker at the registry's first access"
    );
    assert_eq!(registered.config().min_calls(), 3, "the attribute's config");
    registered.force_open();
    assert_eq!(billing().await, Err(NetError::Rejected));
    let again = registry().register(Arc::new(Breaker::new("billing", Config::default())));
    assert!(
        Arc::ptr_eq(&registered, &again),
        "registration never replaces"
    );
}

#[circuit_breaker(name = "billing", window = 3, min = 3)]
async fn billing() -> Result<(), NetError> {
    Ok(())
}

#[circuit_breaker(key = addr, window = 2, min = 2, rate = 1.0, max_keys = 8)]
async fn call_replica(addr: SocketAddr, fail: bool) -> Result<SocketAddr, NetError> {
    if fail {
        Err(NetError::Refused)
    } else {
        Ok(addr)
    }
}

#[tokio::test(start_paused = true)]
async fn keyed_breakers_are_independent_per_key() {
    let a: SocketAddr = "10.0.0.1:7000".parse().unwrap();
    let b: SocketAddr = "10.0.0.2:7000".parse().unwrap();
    assert_eq!(call_replica(a, true).await, Err(NetError::Refused));
    assert_eq!(call_replica(a, true).await, Err(NetError::Refused));
    assert_eq!(call_replica(a, false).await, Err(NetError::Rejected));
    assert_eq!(call_replica(b, false).await, Ok(b));

    let name = "it::macro_registry::call_replica";
    let open = registry().get_keyed(name, "10.0.0.1:7000").unwrap();
    assert_eq!(open.state(), State::Open);
    assert_eq!(
        open.name(),
        "it::macro_registry::call_replica[10.0.0.1:7000]"
    );
    let closed = registry().get_keyed(name, "10.0.0.2:7000").unwrap();
    assert_eq!(closed.state(), State::Closed);
    let mut keys: Vec<String> = registry()
        .list()
        .into_iter()
        .filter(|e| e.name() == name)
        .map(|e| e.key().unwrap().to_owned())
        .collect();
    keys.sort();
    assert_eq!(keys, ["10.0.0.1:7000", "10.0.0.2:7000"]);
}

#[circuit_breaker(key = host, max_keys = 2, window = 1, min = 1)]
async fn call_host(host: &str, fail: bool) -> Result<(), NetError> {
    if fail {
        Err(NetError::Refused)
    } else {
        Ok(())
    }
}

fn hosts() -> Vec<String> {
    let mut keys: Vec<String> = registry()
        .list()
        .into_iter()
        .filter(|e| e.name() == "it::macro_registry::call_host")
        .map(|e| e.key().unwrap().to_owned())
        .collect();
    keys.sort();
    keys
}

#[tokio::test(start_paused = true)]
async fn keyed_breakers_are_bounded_evicting_least_recently_used_closed_first() {
    call_host("a", true).await.unwrap_err(); // "a" opens
    call_host("b", false).await.unwrap();
    call_host("c", false).await.unwrap(); // evicts "b": "a" is older but open
    assert_eq!(hosts(), ["a", "c"]);
    call_host(&String::from("c"), false).await.unwrap(); // a String finds the same key
    call_host("d", false).await.unwrap(); // evicts "c", the only closed one
    assert_eq!(hosts(), ["a", "d"]);
    assert_eq!(call_host("a", false).await, Err(NetError::Rejected));
}

/// A keyed family of its own, so that the tests listing `call_replica`'s keys never see
/// this one's, whatever order the tests run in.
#[circuit_breaker(key = addr, window = 2, min = 2, rate = 1.0, max_keys = 8)]
async fn spawned_replica(addr: SocketAddr) -> Result<SocketAddr, NetError> {
    Ok(addr)
}

#[tokio::test(start_paused = true)]
async fn keyed_call_is_send_and_spawns() {
    let addr: SocketAddr = "10.0.0.9:7000".parse().unwrap();
    let out = tokio::spawn(spawned_replica(addr)).await.unwrap();
    assert_eq!(out, Ok(addr));
}

#[circuit_breaker(name = "recovery::lenient", probes = 5, successes = 2)]
async fn lenient() -> Result<(), NetError> {
    Ok(())
}

#[circuit_breaker(name = "recovery::strict", probes = 4)]
async fn strict() -> Result<(), NetError> {
    Ok(())
}

#[circuit_breaker(name = "recovery::tiny", window = 1, min = 1)]
async fn tiny() -> Result<(), NetError> {
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn attribute_successes_reach_the_config_and_default_to_probes() {
    lenient().await.unwrap();
    strict().await.unwrap();
    let lenient = registry().get("recovery::lenient").unwrap().config();
    assert_eq!((lenient.probes(), lenient.successes()), (5, 2));
    let strict = registry().get("recovery::strict").unwrap().config();
    assert_eq!((strict.probes(), strict.successes()), (4, 4));
}

#[tokio::test(start_paused = true)]
async fn a_count_window_of_one_may_judge_one_call() {
    tiny().await.unwrap();
    let c = registry().get("recovery::tiny").unwrap().config();
    assert_eq!(
        (c.window(), c.min_calls()),
        (breakerbox::config::Window::Count(1), 1)
    );
}
