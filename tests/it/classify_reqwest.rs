//! `Classify` for `reqwest::Error` (feature `reqwest`), with real errors from loopback.

use std::time::Duration;

use breakerbox::{Classify, Outcome};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Serves `count` connections on 127.0.0.1, answering each with `status`.
async fn answering(status: u16, count: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        for _ in 0..count {
            let (mut conn, _) = listener.accept().await.unwrap();
            let mut buf = [0; 1024];
            let _ = conn.read(&mut buf).await;
            let head =
                format!("HTTP/1.1 {status} X\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
            conn.write_all(head.as_bytes()).await.unwrap();
        }
    });
    format!("http://{addr}/")
}

#[tokio::test]
async fn status_errors_are_judged_by_their_code() {
    let client = reqwest::Client::new();
    for (status, outcome) in [
        (503, Outcome::Failure),
        (500, Outcome::Failure),
        (404, Outcome::Success),
        (429, Outcome::Success),
    ] {
        let url = answering(status, 1).await;
        let response = client.get(url).send().await.unwrap();
        let err = response.error_for_status().unwrap_err();
        assert_eq!(err.classify(), outcome, "{status}");
    }
}

#[tokio::test]
async fn a_refused_connection_is_a_failure() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener); // nothing listens there any more
    let err = reqwest::Client::new()
        .get(format!("http://{addr}/"))
        .send()
        .await
        .unwrap_err();
    assert!(err.is_connect());
    assert_eq!(err.classify(), Outcome::Failure);
}

#[tokio::test]
async fn a_timeout_is_a_failure() {
    // Accepts the connection and never answers.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let silent = tokio::spawn(async move {
        let (conn, _) = listener.accept().await.unwrap();
        std::future::pending::<()>().await;
        drop(conn);
    });
    let err = reqwest::Client::new()
        .get(format!("http://{addr}/"))
        .timeout(Duration::from_millis(50))
        .send()
        .await
        .unwrap_err();
    silent.abort();
    assert!(err.is_timeout());
    assert_eq!(err.classify(), Outcome::Failure);
}

#[tokio::test]
async fn a_request_that_cannot_be_built_is_ignored() {
    let err = reqwest::Client::new()
        .get("not a url")
        .send()
        .await
        .unwrap_err();
    assert!(err.is_builder());
    assert_eq!(err.classify(), Outcome::Ignored);
}
