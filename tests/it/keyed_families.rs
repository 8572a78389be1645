//! Keyed families: which key a full family evicts, and what a new member is born with.

use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use breakerbox::{circuit_breaker, registry, Breaker, Classify, Config, Outcome, Rejected, State};

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

/// A family takes a member held by anyone but itself for one with a call in flight; a test
/// that reads the whole registry (a list, a metrics scrape) holds every member for a moment.
/// The tests of this file take turns, so that none sees another's reading as a call.
static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[circuit_breaker(name = "fam::lru", key = host, max_keys = 2)]
async fn lru(host: &str) -> Result<(), Down> {
    let _ = host;
    Ok(())
}

#[tokio::test]
async fn a_full_family_evicts_the_least_recently_used_key_never_one_just_looked_up() {
    let _turn = TURN.lock().await;
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
    breakerbox::metrics::text().contains(&series)
}

#[tokio::test]
async fn a_removed_key_leaves_registry_and_metrics_its_live_permit_records_harmlessly_and_the_key_starts_anew(
) {
    let _turn = TURN.lock().await;
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
    let _turn = TURN.blocking_lock();
    let old = registry().register(Arc::new(Breaker::new("fam::single", Config::default())));
    let live = old.try_acquire().unwrap();
    assert!(breakerbox::metrics::text().contains("circuitbreaker_state{name=\"fam::single\"} 0"));
    let removed = registry().remove("fam::single").unwrap();
    assert!(Arc::ptr_eq(&removed, &old));
    assert!(registry().get("fam::single").is_none());
    assert!(!registry().list().iter().any(|e| e.name() == "fam::single"));
    assert!(!breakerbox::metrics::text().contains("name=\"fam::single\""));
    live.success();
    assert_eq!(old.snapshot().totals.success, 1);

    let new = registry().register(Arc::new(Breaker::new("fam::single", Config::default())));
    assert!(!Arc::ptr_eq(&new, &old));
    assert!(Arc::ptr_eq(&registry().get("fam::single").unwrap(), &new));
}

#[tokio::test]
async fn the_keyed_layer_removes_a_key_and_its_next_request_gets_a_new_breaker() {
    let _turn = TURN.lock().await;
    use breakerbox::tower::KeyedCircuitBreakerLayer;
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

/// Polls `future` once; it must be done, or stay pending until a later [`poll`].
fn poll<F: Future>(future: Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

fn now<F: Future>(future: F) -> F::Output {
    match poll(pin!(future)) {
        Poll::Ready(out) => out,
        Poll::Pending => unreachable!("only a gated call waits"),
    }
}

/// Holds a call in flight while it is closed.
struct Gate(AtomicBool);

impl Gate {
    async fn pass(&self) {
        std::future::poll_fn(|_| match self.0.load(Ordering::Acquire) {
            true => Poll::Ready(()),
            false => Poll::Pending,
        })
        .await
    }
}

#[circuit_breaker(name = "fam::busy", key = host, max_keys = 2, window = 2, min = 2)]
async fn busy(host: &str, fail: bool, gate: Option<&Gate>) -> Result<(), Down> {
    let _ = host;
    if let Some(gate) = gate {
        gate.pass().await;
    }
    match fail {
        true => Err(Down),
        false => Ok(()),
    }
}

fn evicted(name: &str, busy: bool) -> String {
    let series = format!("circuitbreaker_keys_evicted_total{{name=\"{name}\",busy=\"{busy}\"}} ");
    let text = breakerbox::metrics::text();
    let line = text.lines().find(|l| l.starts_with(&series));
    line.map_or_else(|| "absent".to_owned(), |l| l[series.len()..].to_owned())
}

#[test]
fn a_full_family_evicts_an_idle_key_before_one_with_a_call_in_flight() {
    let _turn = TURN.blocking_lock();
    let gate = Gate(AtomicBool::new(false));
    assert!(now(busy("a", true, None)).is_err()); // a: 1 failure of 1
    let mut in_flight = pin!(busy("a", true, Some(&gate)));
    assert!(poll(in_flight.as_mut()).is_pending());
    now(busy("b", false, None)).unwrap();
    now(busy("c", false, None)).unwrap(); // full: b goes, idle though newer than a

    gate.0.store(true, Ordering::Release);
    assert!(matches!(poll(in_flight.as_mut()), Poll::Ready(Err(Down))));
    // a failed 2 calls of 2, both in the breaker it still has: open.
    let a = registry().get_keyed("fam::busy", "a").unwrap();
    assert_eq!((a.state(), a.snapshot().failures), (State::Open, 2));
    assert!(now(busy("a", false, None)).is_err()); // rejected
    assert!(registry().get_keyed("fam::busy", "b").is_none());
    assert!(registry().get_keyed("fam::busy", "c").is_some());
    assert_eq!(
        (evicted("fam::busy", false), evicted("fam::busy", true)),
        ("1".to_owned(), "0".to_owned())
    );
}

#[circuit_breaker(name = "fam::all_busy", key = host, max_keys = 2)]
async fn all_busy(host: &str, gate: Option<&Gate>) -> Result<(), Down> {
    let _ = host;
    if let Some(gate) = gate {
        gate.pass().await;
    }
    Ok(())
}

#[test]
fn when_every_member_is_busy_the_least_recently_used_goes_and_is_counted_busy() {
    let _turn = TURN.blocking_lock();
    let gate = Gate(AtomicBool::new(false));
    let mut a = pin!(all_busy("a", Some(&gate)));
    let mut b = pin!(all_busy("b", Some(&gate)));
    assert!(poll(a.as_mut()).is_pending() && poll(b.as_mut()).is_pending());
    let first = registry().get_keyed("fam::all_busy", "a").unwrap();
    now(all_busy("c", None)).unwrap();
    assert!(registry().get_keyed("fam::all_busy", "a").is_none());
    assert!(registry().get_keyed("fam::all_busy", "b").is_some());
    assert_eq!(
        (
            evicted("fam::all_busy", false),
            evicted("fam::all_busy", true)
        ),
        ("0".to_owned(), "1".to_owned())
    );
    // The evicted breaker's call ends in it, unseen by the family.
    gate.0.store(true, Ordering::Release);
    assert!(matches!(poll(a.as_mut()), Poll::Ready(Ok(()))));
    assert!(matches!(poll(b.as_mut()), Poll::Ready(Ok(()))));
    assert_eq!(first.snapshot().calls, 1);
}
