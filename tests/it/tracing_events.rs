//! With the default `tracing` feature, transitions are logged with the breaker's name, key
//! and the failure rate that tripped it: a warning on open, info on close.

use crate::support::logs;

use std::time::Duration;

use breakerbox::{circuit_breaker, Outcome};

#[derive(Debug)]
enum Failed {
    Down,
    Rejected,
}

impl breakerbox::Classify for Failed {
    fn classify(&self) -> Outcome {
        match self {
            Failed::Down => Outcome::Failure,
            Failed::Rejected => Outcome::Ignored,
        }
    }
}

impl From<breakerbox::Rejected> for Failed {
    fn from(_: breakerbox::Rejected) -> Self {
        Failed::Rejected
    }
}

#[circuit_breaker(name = "tracing::inventory", key = host, window = 4, min = 4, open = "1s", probes = 1)]
async fn fetch(host: &str, up: bool) -> Result<(), Failed> {
    let _ = host;
    if up {
        Ok(())
    } else {
        Err(Failed::Down)
    }
}

#[tokio::test(start_paused = true)]
async fn transitions_are_logged_with_name_key_and_rate() {
    let Some((captured, _guard)) = logs::capture(concat!(
        module_path!(),
        "::transitions_are_logged_with_name_key_and_rate"
    )) else {
        return;
    };

    for up in [true, false, false, false] {
        let _ = fetch("10.0.0.1:7000", up).await;
    }
    assert!(matches!(
        fetch("10.0.0.1:7000", true).await,
        Err(Failed::Rejected)
    ));
    tokio::time::advance(Duration::from_secs(1)).await;
    fetch("10.0.0.1:7000", true).await.unwrap();

    let who = r#"breaker="tracing::inventory[10.0.0.1:7000]" key="10.0.0.1:7000""#;
    let expected = [
        format!(" WARN breakerbox::trace: circuit breaker opened {who} from=closed to=open reason=failure_rate failure_rate=0.75 calls=4"),
        format!(" INFO breakerbox::trace: circuit breaker state changed {who} from=open to=half_open reason=open_elapsed"),
        format!(" INFO breakerbox::trace: circuit breaker closed {who} from=half_open to=closed reason=trial_passed"),
    ];
    assert_eq!(captured.lines(), expected);
}
