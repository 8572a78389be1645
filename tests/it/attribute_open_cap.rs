//! `#[circuit_breaker(key = ..., max_open_percent = ...)]`: the attribute's keyed family
//! opens at most its cap of members, counts the trips it refused in the metrics, and an
//! override changes the cap of a running family.

use breakerbox::overrides::Overrides;
use breakerbox::{circuit_breaker, registry, Classify, Outcome, Rejected, State};

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

/// Every address fails: the caller's network is down.
#[circuit_breaker(name = "cap::pool", key = addr, window = 2, min = 2, max_open_percent = 50)]
async fn ping(addr: &str) -> Result<(), Down> {
    let _ = addr;
    Err(Down)
}

#[circuit_breaker(name = "cap::overridden", key = addr, window = 2, min = 2)]
async fn query(addr: &str) -> Result<(), Down> {
    let _ = addr;
    Err(Down)
}

fn states(name: &str, keys: &[&str]) -> Vec<State> {
    let member = |key: &&str| registry().get_keyed(name, key).unwrap().state();
    keys.iter().map(member).collect()
}

/// The line of `metric` for the family `name` in the metrics' text.
fn series(metric: &str, name: &str) -> String {
    let text = breakerbox::metrics::text();
    let start = format!("{metric}{{name=\"{name}\"}} ");
    let line = text.lines().find(|l| l.starts_with(&start));
    line.unwrap_or_else(|| panic!("no {start} in {text}"))
        .to_owned()
}

#[tokio::test]
async fn a_keyed_function_opens_at_most_its_cap_and_the_metrics_count_the_refused_trips() {
    let pool = ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"];
    for _ in 0..2 {
        for addr in pool {
            assert!(ping(addr).await.is_err());
        }
    }
    assert_eq!(
        states("cap::pool", &pool),
        [State::Open, State::Open, State::Closed, State::Closed]
    );
    // The members held CLOSED still call their address: a third round refuses two trips more.
    for addr in &pool[2..] {
        assert!(ping(addr).await.is_err());
    }
    assert_eq!(
        series("circuitbreaker_trips_refused_total", "cap::pool"),
        "circuitbreaker_trips_refused_total{name=\"cap::pool\"} 4"
    );
    assert_eq!(
        series("circuitbreaker_open_members", "cap::pool"),
        "circuitbreaker_open_members{name=\"cap::pool\"} 2"
    );
}

#[tokio::test]
async fn an_override_caps_a_running_family() {
    let pool = ["10.1.0.1", "10.1.0.2", "10.1.0.3", "10.1.0.4"];
    for addr in pool {
        let _ = query(addr).await;
    }
    let file = "[\"cap::overridden\"]\nmax_open_percent = 25\n";
    let overrides = Overrides::from_toml("overrides.toml", file).unwrap();
    registry().apply(&overrides).unwrap();
    for addr in pool {
        let _ = query(addr).await;
    }
    assert_eq!(
        states("cap::overridden", &pool),
        [State::Open, State::Closed, State::Closed, State::Closed]
    );
    let refused = Overrides::from_toml(
        "bad.toml",
        "[\"cap::overridden\"]\nmax_open_percent = 101\n",
    )
    .and_then(|o| registry().apply(&o));
    let message = refused.unwrap_err().to_string();
    assert!(
        message.contains("max_open_percent must be in 1..=100, got 101"),
        "{message}"
    );
}
