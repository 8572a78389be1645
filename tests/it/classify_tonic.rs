//! `Classify` for `tonic::Status` (feature `tonic`): only a sick server opens the breaker.

use breakerbox::{Classify, Outcome};
use tonic::{Code, Status};

#[test]
fn unavailable_deadline_exceeded_and_internal_are_failures() {
    for code in [Code::Unavailable, Code::DeadlineExceeded, Code::Internal] {
        assert_eq!(
            Status::new(code, "").classify(),
            Outcome::Failure,
            "{code:?}"
        );
    }
}

#[test]
fn business_codes_are_successes() {
    for code in [
        Code::Ok,
        Code::NotFound,
        Code::InvalidArgument,
        Code::PermissionDenied,
        Code::Unauthenticated,
        Code::AlreadyExists,
        Code::FailedPrecondition,
        Code::OutOfRange,
        Code::Aborted,
        Code::ResourceExhausted,
        Code::Unimplemented,
        Code::DataLoss,
        Code::Unknown,
    ] {
        assert_eq!(
            Status::new(code, "").classify(),
            Outcome::Success,
            "{code:?}"
        );
    }
}

#[test]
fn a_cancelled_call_is_ignored() {
    assert_eq!(
        Status::cancelled("caller left").classify(),
        Outcome::Ignored
    );
}

#[tokio::test]
async fn not_found_never_opens_the_breaker() {
    let b = breakerbox::Breaker::new(
        "classify_tonic::books",
        breakerbox::Config::builder()
            .count_window(4)
            .build()
            .unwrap(),
    );
    for _ in 0..10 {
        let out = b
            .call(async { Err::<(), _>(Status::not_found("no such book")) })
            .await;
        assert!(matches!(out, Ok(Err(_))));
    }
    assert_eq!(b.snapshot().failures, 0);
    assert_eq!(b.state(), breakerbox::State::Closed);
}
