//! Every `#[circuit_breaker]` function's breaker is in the registry from its first access,
//! before anything calls the function: here, in the library crate linked into this test
//! binary, and in this binary itself. Each test looks at functions nothing called before it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_workspace::pricing::{self, PriceError};
use breakerbox::overrides::Overrides;
use breakerbox::{
    circuit_breaker, config::Window, events::Event, registry, Classify, Config, Outcome, Rejected,
    State,
};

#[derive(Debug, PartialEq)]
enum Down {
    Refused,
    Rejected,
}

impl Classify for Down {
    fn classify(&self) -> Outcome {
        match self {
            Down::Refused => Outcome::Failure,
            Down::Rejected => Outcome::Ignored,
        }
    }
}

impl From<Rejected> for Down {
    fn from(_: Rejected) -> Self {
        Down::Rejected
    }
}

fn outcome(fail: bool) -> Result<(), Down> {
    if fail {
        Err(Down::Refused)
    } else {
        Ok(())
    }
}

#[circuit_breaker(
    window = "30s",
    buckets = 6,
    min = 7,
    rate = 0.4,
    slow = "800ms",
    slow_rate = 0.6,
    open = "15s",
    probes = 2,
    successes = 2,
    backoff = 2.0,
    open_max = "2m",
    max_concurrent = 9
)]
async fn never_called() -> Result<(), Down> {
    Ok(())
}

#[test]
fn a_function_never_called_is_registered_with_its_attributes_configuration() {
    let name = "it::static_registration::never_called";
    let b = registry().get(name).expect("registered at boot");
    let expected = Config::builder()
        .time_window(Duration::from_secs(30), 6)
        .min_calls(7)
        .failure_rate(0.4)
        .slow_calls(Duration::from_millis(800), 0.6)
        .open_for(Duration::from_secs(15))
        .probes(2)
        .successes(2)
        .open_backoff(2.0, Duration::from_secs(120))
        .max_concurrent(9)
        .build()
        .unwrap();
    assert_eq!(b.config(), expected);
    assert_eq!((b.state(), b.snapshot().totals.success), (State::Closed, 0));
    let listed: Vec<_> = registry()
        .list()
        .into_iter()
        .filter(|e| e.name() == name)
        .collect();
    assert_eq!(listed.len(), 1);
    assert!(listed[0].key().is_none());
    assert!(Arc::ptr_eq(listed[0].breaker(), &b));
}

struct Shelf;

impl Shelf {
    #[circuit_breaker]
    async fn fetch(&self) -> Result<(), Down> {
        Ok(())
    }
}

struct Client<T> {
    _marker: std::marker::PhantomData<T>,
}

impl<T: Sync> Client<T> {
    #[circuit_breaker(window = 4, min = 4)]
    async fn get(&self) -> Result<(), Down> {
        Ok(())
    }
}

trait Api {
    async fn call(&self) -> Result<(), Down>;
}

impl Api for &Shelf {
    #[circuit_breaker]
    async fn call(&self) -> Result<(), Down> {
        Ok(())
    }
}

#[circuit_breaker(window = 3, min = 3)]
async fn decode<T: Default + Send>() -> Result<T, Down> {
    Ok(T::default())
}

#[tokio::test(start_paused = true)]
async fn methods_generic_functions_and_library_functions_are_registered_before_a_call() {
    let names = [
        "it::static_registration::Shelf::fetch",
        "it::static_registration::Client::get",
        "it::static_registration::<&Shelf as Api>::call",
        "it::static_registration::decode",
        pricing::GET_PRICE,
        pricing::REFRESH,
    ];
    for name in names {
        let b = registry()
            .get(name)
            .unwrap_or_else(|| panic!("{name} at boot"));
        assert_eq!(b.snapshot().calls, 0, "{name}");
    }
    assert_eq!(
        registry()
            .get("it::static_registration::Client::get")
            .unwrap()
            .config()
            .window(),
        Window::Count(4)
    );

    // A call uses the breaker registered at boot, under the same name.
    let client = Client::<String> {
        _marker: std::marker::PhantomData,
    };
    client.get().await.unwrap();
    assert_eq!(decode::<u8>().await, Ok(0));
    assert_eq!(decode::<String>().await, Ok(String::new()));
    (&Shelf).call().await.unwrap();
    let calls = |name: &str| registry().get(name).unwrap().snapshot().calls;
    assert_eq!(calls("it::static_registration::Client::get"), 1);
    assert_eq!(calls("it::static_registration::decode"), 2);
    assert_eq!(calls("it::static_registration::<&Shelf as Api>::call"), 1);
    assert_eq!(calls("it::static_registration::Shelf::fetch"), 0);
}

struct Store;

trait Primary {
    async fn get(&self, fail: bool) -> Result<(), Down>;
}

trait Replica {
    async fn get(&self, fail: bool) -> Result<(), Down>;
}

impl Primary for Store {
    #[circuit_breaker(window = 2, min = 2, rate = 1.0, open = "5s")]
    async fn get(&self, fail: bool) -> Result<(), Down> {
        outcome(fail)
    }
}

impl Replica for Store {
    #[circuit_breaker(window = 2, min = 2, rate = 1.0, open = "5s")]
    async fn get(&self, fail: bool) -> Result<(), Down> {
        outcome(fail)
    }
}

#[tokio::test(start_paused = true)]
async fn two_trait_impls_on_one_type_have_a_breaker_each() {
    let primary = "it::static_registration::<Store as Primary>::get";
    let replica = "it::static_registration::<Store as Replica>::get";
    assert_eq!(Primary::get(&Store, true).await, Err(Down::Refused));
    assert_eq!(Primary::get(&Store, true).await, Err(Down::Refused));
    assert_eq!(Primary::get(&Store, false).await, Err(Down::Rejected));
    assert_eq!(Replica::get(&Store, false).await, Ok(()));
    let state = |name: &str| registry().get(name).map(|b| b.state());
    assert_eq!(state(primary), Some(State::Open));
    assert_eq!(state(replica), Some(State::Closed));
    assert_eq!(registry().get(replica).unwrap().snapshot().calls, 1);
}

trait Dial {
    async fn dial(fail: bool) -> Result<(), Down>;
}

impl Dial for Store {
    #[circuit_breaker(window = 2, min = 2, rate = 1.0, open = "5s")]
    async fn dial(fail: bool) -> Result<(), Down> {
        outcome(fail)
    }
}

impl Dial for Shelf {
    #[circuit_breaker(window = 2, min = 2, rate = 1.0, open = "5s")]
    async fn dial(fail: bool) -> Result<(), Down> {
        outcome(fail)
    }
}

#[tokio::test(start_paused = true)]
async fn associated_functions_of_two_trait_impls_have_a_breaker_each() {
    assert_eq!(<Store as Dial>::dial(true).await, Err(Down::Refused));
    assert_eq!(<Store as Dial>::dial(true).await, Err(Down::Refused));
    assert_eq!(<Shelf as Dial>::dial(false).await, Ok(()));
    let state = |name: &str| registry().get(name).map(|b| b.state());
    assert_eq!(
        state("it::static_registration::<Store as Dial>::dial"),
        Some(State::Open)
    );
    assert_eq!(
        state("it::static_registration::<Shelf as Dial>::dial"),
        Some(State::Closed)
    );
    assert_eq!(state("it::static_registration::dial"), None);
}

mod near {
    use super::{outcome, Down};
    use breakerbox::circuit_breaker;

    pub trait Ping {
        async fn ping(&self, fail: bool) -> Result<(), Down>;
    }

    impl<T: Sync> Ping for T {
        #[circuit_breaker(window = 2, min = 2, rate = 1.0, open = "5s")]
        async fn ping(&self, fail: bool) -> Result<(), Down> {
            outcome(fail)
        }
    }
}

mod far {
    use super::{outcome, Down};
    use breakerbox::circuit_breaker;

    pub trait Ping {
        async fn ping(&self, fail: bool) -> Result<(), Down>;
    }

    impl<T: Sync> Ping for T {
        #[circuit_breaker(window = 2, min = 2, rate = 1.0, open = "5s")]
        async fn ping(&self, fail: bool) -> Result<(), Down> {
            outcome(fail)
        }
    }
}

#[tokio::test(start_paused = true)]
async fn methods_of_blanket_impls_are_named_by_their_module_and_trait() {
    let near = "it::static_registration::near::<_ as Ping>::ping";
    let far = "it::static_registration::far::<_ as Ping>::ping";
    for name in [near, far] {
        assert!(registry().get(name).is_some(), "{name} at boot");
    }
    assert_eq!(near::Ping::ping(&1u8, true).await, Err(Down::Refused));
    assert_eq!(near::Ping::ping(&"a", true).await, Err(Down::Refused));
    assert_eq!(far::Ping::ping(&1u8, false).await, Ok(()));
    let state = |name: &str| registry().get(name).unwrap().state();
    assert_eq!((state(near), state(far)), (State::Open, State::Closed));
    assert!(registry().names().iter().all(|n| !n.starts_with("_::")));
}

#[circuit_breaker(window = 2, min = 2, rate = 1.0, open = "5s")]
async fn flaky(fail: bool) -> Result<(), Down> {
    outcome(fail)
}

#[tokio::test(start_paused = true)]
async fn a_listener_attached_at_boot_sees_the_first_transition() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let events = seen.clone();
    registry()
        .get("it::static_registration::flaky")
        .expect("registered at boot")
        .on_event(move |e| {
            if let Event::StateTransition { from, to, .. } = *e {
                events.lock().unwrap().push((from, to));
            }
        });
    assert_eq!(flaky(true).await, Err(Down::Refused));
    assert_eq!(flaky(true).await, Err(Down::Refused));
    assert_eq!(flaky(false).await, Err(Down::Rejected));
    assert_eq!(*seen.lock().unwrap(), [(State::Closed, State::Open)]);
}

#[circuit_breaker(window = 10, min = 5)]
async fn quiet() -> Result<(), Down> {
    Ok(())
}

#[test]
fn the_first_scrape_has_the_series_of_a_function_never_called() {
    let text = breakerbox::metrics::text();
    let name = "name=\"it::static_registration::quiet\"";
    for line in [
        format!("circuitbreaker_state{{{name}}} 0"),
        format!("circuitbreaker_calls_total{{{name},result=\"success\"}} 0"),
        format!("circuitbreaker_calls_total{{{name},result=\"failure\"}} 0"),
        format!("circuitbreaker_calls_total{{{name},result=\"rejected\",reason=\"open\"}} 0"),
        format!("circuitbreaker_failure_rate{{{name}}} 0.0"),
    ] {
        assert_eq!(
            text.lines().filter(|l| *l == line).count(),
            1,
            "{line}\n{text}"
        );
    }
}

#[circuit_breaker(window = 10, min = 10, rate = 0.5)]
async fn forced() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(window = 10, min = 10, rate = 0.5, open = "1m")]
async fn tuned(fail: bool) -> Result<(), Down> {
    outcome(fail)
}

#[circuit_breaker(key = region, window = 10, min = 5, max_keys = 16)]
async fn by_region(region: &str) -> Result<(), Down> {
    let _ = region;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn overrides_applied_at_boot_are_obeyed_by_the_first_call() {
    let file = r#"
["it::static_registration::forced"]
action = "force_open"

["it::static_registration::tuned"]
window = 2
min = 2
rate = 1.0

["it::static_registration::by_region"]
action = "force_open"
"#;
    let overrides = Overrides::from_toml("overrides.toml", file).unwrap();
    registry()
        .apply(&overrides)
        .expect("every name is registered at boot");

    assert_eq!(forced().await, Err(Down::Rejected));
    assert_eq!(tuned(true).await, Err(Down::Refused));
    assert_eq!(tuned(true).await, Err(Down::Refused));
    assert_eq!(
        tuned(false).await,
        Err(Down::Rejected),
        "window 2, min 2, rate 1.0"
    );
    assert_eq!(by_region("eu-west").await, Err(Down::Rejected));
    let member = registry()
        .get_keyed("it::static_registration::by_region", "eu-west")
        .expect("a member comes with its key");
    assert_eq!(member.state(), State::ForcedOpen);
}

#[circuit_breaker(key = shard, window = 12, min = 6, max_keys = 8)]
async fn by_shard(shard: u32) -> Result<(), Down> {
    let _ = shard;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_keyed_family_is_registered_at_boot_and_its_members_come_with_their_keys() {
    let name = "it::static_registration::by_shard";
    assert!(registry().names().iter().any(|n| n == name));
    let config = registry().family_config(name).expect("the family at boot");
    assert_eq!(
        (config.window(), config.min_calls()),
        (Window::Count(12), 6)
    );
    assert!(registry().list().iter().all(|e| e.name() != name));
    assert!(
        registry().get(name).is_none(),
        "a family is no single breaker"
    );

    by_shard(3).await.unwrap();
    let members: Vec<_> = registry()
        .list()
        .into_iter()
        .filter(|e| e.name() == name)
        .map(|e| e.key().map(str::to_owned))
        .collect();
    assert_eq!(members, [Some("3".to_owned())]);
    assert_eq!(
        registry().family_config(pricing::QUOTE).unwrap().window(),
        Window::Count(10)
    );
}

#[tokio::test(start_paused = true)]
async fn a_library_function_obeys_what_was_applied_at_boot() {
    let overrides = Overrides::from_toml(
        "overrides.toml",
        "[\"breaker_workspace::pricing::PriceClient::refresh\"]\naction = \"force_open\"\n",
    )
    .unwrap();
    registry().apply(&overrides).unwrap();
    let client = pricing::PriceClient;
    assert_eq!(client.refresh().await, Err(PriceError::Rejected));
}
