//! The gateway demo on real HTTP over loopback: the breaker of an upstream address opens,
//! the gateway stops calling the sick upstream and answers from its fallback, `/metrics`
//! shows it, and the breaker closes once the upstream is healthy again. Then the call
//! policy against an upstream in process, on tokio's paused clock.

#[path = "../../src/gateway.rs"]
mod gateway;

use std::time::Duration;

use breakerbox::{registry, State};
use gateway::{Client, Fault, Gateway, Upstream, BREAKER, HANG_TIMEOUT};

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
            format!("circuitbreaker_calls_total{{{labels},result=\"rejected\",reason=\"fleet_open\"}} 0"),
            format!("circuitbreaker_calls_total{{{labels},result=\"rejected\",reason=\"shed\"}} 0"),
            format!("circuitbreaker_failure_rate{{{labels}}} 0.5"),
            format!("circuitbreaker_failure_rate_threshold{{{labels}}} 0.5"),
            format!(
                "circuitbreaker_state_transitions_total{{{labels},from_state=\"closed\",to_state=\"open\",reason=\"failure_rate\"}} 1"
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
            format!("circuitbreaker_calls_total{{{labels},result=\"rejected\",reason=\"fleet_open\"}} 0"),
            format!("circuitbreaker_calls_total{{{labels},result=\"rejected\",reason=\"shed\"}} 0"),
            format!("circuitbreaker_failure_rate{{{labels}}} 0.0"),
            format!("circuitbreaker_failure_rate_threshold{{{labels}}} 0.5"),
            format!("circuitbreaker_state_transitions_total{{{labels},from_state=\"closed\",to_state=\"open\",reason=\"failure_rate\"}} 1"),
            format!("circuitbreaker_state_transitions_total{{{labels},from_state=\"open\",to_state=\"half_open\",reason=\"open_elapsed\"}} 1"),
            format!("circuitbreaker_state_transitions_total{{{labels},from_state=\"half_open\",to_state=\"closed\",reason=\"trial_passed\"}} 1"),
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

// ---- The call policy, in virtual time ----

#[tokio::test(start_paused = true)]
async fn a_retry_rescues_a_blip_and_the_caller_never_sees_the_failure() {
    let run = gateway::blip().await;
    assert_eq!(
        (run.calls, run.hits, run.answered, run.failed, run.rejected),
        (1, 2, 1, 0, 0)
    );
    let totals = run.totals;
    assert_eq!((totals.failure, totals.success, totals.retries), (1, 1, 1));
    // The one wait is the first retry's backoff, drawn from [0, 20ms].
    assert!(run.took <= Duration::from_millis(20), "{:?}", run.took);
}

#[tokio::test(start_paused = true)]
async fn in_an_outage_the_retry_budget_holds_retries_to_a_fifth_of_the_calls_and_its_floor() {
    let unbudgeted = gateway::outage(false, false).await;
    assert_eq!((unbudgeted.hits, unbudgeted.totals.retries), (3000, 2000));
    assert_eq!(unbudgeted.totals.retry_budget_exhausted, 0);

    // 0.2 x 1,000 first attempts + 10 retries a second over the budget's 10s.
    let budgeted = gateway::outage(false, true).await;
    assert_eq!((budgeted.hits, budgeted.totals.retries), (1300, 300));
    // The first 55 calls retried twice and the next 190 once; 945 calls were refused a
    // retry they had left.
    assert_eq!(budgeted.totals.retry_budget_exhausted, 945);
    assert_eq!((budgeted.failed, budgeted.rejected), (1000, 0));
}

#[tokio::test(start_paused = true)]
async fn in_an_outage_the_open_breaker_rejects_the_retries_too() {
    let run = gateway::outage(true, true).await;
    // Three calls of three failed attempts, then the fourth call's first attempt: the 10th
    // failure opens the breaker, which rejects that call's retry and every call after.
    assert_eq!(
        (run.hits, run.totals.failure, run.totals.retries),
        (10, 10, 6)
    );
    assert_eq!((run.failed, run.rejected), (3, 997));
    assert_eq!(run.totals.rejected, 997);
}

#[tokio::test(start_paused = true)]
async fn without_a_bulkhead_a_hanging_upstream_takes_every_worker_and_every_caller_waits() {
    let isolation = gateway::hanging_upstream(None).await;
    // Eight /book calls take the eight workers by 160ms and hang until 5s; the 41 requests
    // behind them queue. Each timeout frees a worker for the next in line: the /author
    // request that arrived at 380ms is answered at 10.010s, after the second round of
    // /book calls. The 10th timeout, at 10.020s, opens the breaker, which rejects every
    // queued /book request; the last admitted one, arrived at 400ms, times out at 15.010s.
    let book = &isolation.book;
    assert_eq!(
        (book.requests, book.answered, book.timed_out, book.rejected),
        (40, 0, 17, 23)
    );
    assert_eq!(book.slowest, Duration::from_millis(14_610));
    assert!(book.slowest_rejected > Duration::from_secs(9), "{book:?}");
    let author = &isolation.author;
    assert_eq!((author.requests, author.answered), (10, 10));
    assert_eq!(author.slowest, Duration::from_millis(9_630));
}

#[tokio::test(start_paused = true)]
async fn a_bulkhead_rejects_the_call_past_its_limit_at_once_and_the_gateway_keeps_answering() {
    let isolation = gateway::hanging_upstream(Some(4)).await;
    let book = &isolation.book;
    assert_eq!(
        (book.requests, book.answered, book.timed_out, book.rejected),
        (40, 0, 4, 36)
    );
    assert_eq!(
        (book.slowest, book.slowest_rejected),
        (HANG_TIMEOUT, Duration::ZERO)
    );
    let author = &isolation.author;
    assert_eq!((author.requests, author.answered), (10, 10));
    assert_eq!(author.slowest, Duration::from_millis(5));
}
