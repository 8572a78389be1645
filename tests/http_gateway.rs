//! The gateway demo on real HTTP over loopback: the breaker of an upstream address opens,
//! the gateway stops calling the sick upstream and answers from its fallback, `/metrics`
//! shows it, and the breaker closes once the upstream is healthy again.

#[path = "../src/gateway.rs"]
mod gateway;

use breaker::{registry, State};
use gateway::{Client, Fault, Gateway, Upstream, BREAKER};

/// The sample lines of `/metrics` for one breaker.
fn samples(text: &str, labels: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with('#') && l.contains(labels))
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn breaker_opens_stops_calling_the_sick_upstream_falls_back_and_recovers() {
    let upstream = Upstream::start().await.unwrap();
    let gateway = Gateway::start(upstream.addr()).await.unwrap();
    let client = Client::default();
    let key = upstream.addr().to_string();
    let labels = format!("name=\"{BREAKER}\",key=\"{key}\"");

    for isbn in 0..4 {
        let answer = client
            .get(gateway.addr(), &format!("/book/{isbn}"))
            .await
            .unwrap();
        assert_eq!(answer, (200, format!("book {isbn}")));
    }
    assert_eq!(upstream.hits(), 4);

    // 2 failures among the last 4 calls: the breaker of this upstream opens.
    client
        .set_fault(upstream.addr(), Fault::Erroring)
        .await
        .unwrap();
    for _ in 0..2 {
        let (status, body) = client.get(gateway.addr(), "/book/x").await.unwrap();
        assert_eq!(status, 502);
        assert!(
            body.starts_with("upstream failed: HTTP status server error (503"),
            "{body}"
        );
    }
    let b = registry().get_keyed(BREAKER, &key).unwrap();
    assert_eq!(b.state(), State::Open);
    assert_eq!(upstream.hits(), 6);

    // While OPEN the upstream sees nothing and the fallback answers.
    for _ in 0..5 {
        let (status, body) = client.get(gateway.addr(), "/book/x").await.unwrap();
        assert_eq!(status, 200);
        let expected = format!("cached book x (circuit '{BREAKER}[{key}]' is open; retry in ");
        assert!(body.starts_with(&expected), "{body}");
    }
    assert_eq!(upstream.hits(), 6);
    assert_eq!((b.state(), b.snapshot().rejected), (State::Open, 5));

    let (status, text) = client.get(gateway.addr(), "/metrics").await.unwrap();
    assert_eq!(status, 200);
    assert_eq!(
        samples(&text, &labels),
        [
            format!("circuitbreaker_state{{{labels}}} 1"),
            format!("circuitbreaker_calls_total{{{labels},result=\"success\"}} 4"),
            format!("circuitbreaker_calls_total{{{labels},result=\"failure\"}} 2"),
            format!("circuitbreaker_calls_total{{{labels},result=\"ignored\"}} 0"),
            format!("circuitbreaker_calls_total{{{labels},result=\"cancelled\"}} 0"),
            format!("circuitbreaker_calls_total{{{labels},result=\"rejected\",reason=\"open\"}} 5"),
            format!("circuitbreaker_calls_total{{{labels},result=\"rejected\",reason=\"half_open_full\"}} 0"),
            format!("circuitbreaker_calls_total{{{labels},result=\"rejected\",reason=\"forced_open\"}} 0"),
            format!("circuitbreaker_calls_total{{{labels},result=\"rejected\",reason=\"throttled\"}} 0"),
            format!("circuitbreaker_calls_total{{{labels},result=\"rejected\",reason=\"bulkhead\"}} 0"),
            format!("circuitbreaker_failure_rate{{{labels}}} 0.5"),
            format!(
                "circuitbreaker_state_transitions_total{{{labels},from_state=\"closed\",to_state=\"open\"}} 1"
            ),
        ]
    );

    // Healthy again: once the open period is over, the first request is the probe, and it
    // closes the breaker. The test waits exactly the time the breaker announces, once, on
    // the real clock: it runs on real sockets, where a paused clock would fire the
    // gateway's upstream timeout while a request is on the wire.
    client
        .set_fault(upstream.addr(), Fault::Healthy)
        .await
        .unwrap();
    let rejected = b.try_acquire().expect_err("still open");
    let open_left = rejected.retry_after().expect("an open breaker says when");
    tokio::time::sleep(open_left).await;
    let (status, body) = client.get(gateway.addr(), "/book/y").await.unwrap();
    assert_eq!((status, body.as_str()), (200, "book y"));
    assert_eq!(b.state(), State::Closed);
    assert_eq!(upstream.hits(), 7);

    let (_, text) = client.get(gateway.addr(), "/metrics").await.unwrap();
    assert_eq!(
        samples(&text, &labels),
        [
            format!("circuitbreaker_state{{{labels}}} 0"),
            format!("circuitbreaker_calls_total{{{labels},result=\"success\"}} 5"),
            format!("circuitbreaker_calls_total{{{labels},result=\"failure\"}} 2"),
            format!("circuitbreaker_calls_total{{{labels},result=\"ignored\"}} 0"),
            format!("circuitbreaker_calls_total{{{labels},result=\"cancelled\"}} 0"),
            format!("circuitbreaker_calls_total{{{labels},result=\"rejected\",reason=\"open\"}} 6"),
            format!("circuitbreaker_calls_total{{{labels},result=\"rejected\",reason=\"half_open_full\"}} 0"),
            format!("circuitbreaker_calls_total{{{labels},result=\"rejected\",reason=\"forced_open\"}} 0"),
            format!("circuitbreaker_calls_total{{{labels},result=\"rejected\",reason=\"throttled\"}} 0"),
            format!("circuitbreaker_calls_total{{{labels},result=\"rejected\",reason=\"bulkhead\"}} 0"),
            format!("circuitbreaker_state_transitions_total{{{labels},from_state=\"closed\",to_state=\"open\"}} 1"),
            format!("circuitbreaker_state_transitions_total{{{labels},from_state=\"open\",to_state=\"half_open\"}} 1"),
            format!("circuitbreaker_state_transitions_total{{{labels},from_state=\"half_open\",to_state=\"closed\"}} 1"),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_upstream_opens_its_breaker_by_timeouts() {
    let upstream = Upstream::start().await.unwrap();
    let gateway = Gateway::start(upstream.addr()).await.unwrap();
    let client = Client::default();
    client
        .set_fault(upstream.addr(), Fault::Slow)
        .await
        .unwrap();
    for _ in 0..4 {
        let (status, body) = client.get(gateway.addr(), "/book/z").await.unwrap();
        assert_eq!(status, 502);
        assert!(body.starts_with("upstream failed: "), "{body}");
    }
    let b = registry()
        .get_keyed(BREAKER, &upstream.addr().to_string())
        .unwrap();
    assert_eq!(b.state(), State::Open);
    let (status, body) = client.get(gateway.addr(), "/book/z").await.unwrap();
    assert_eq!(status, 200);
    assert!(body.starts_with("cached book z"), "{body}");
    assert_eq!(upstream.hits(), 4);
}
