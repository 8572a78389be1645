//! `Classify` for `http::StatusCode` and `http::Response<B>` (feature `http`).

use breakerbox::{http::StatusClassifier, Classify, Outcome};
use http::{Response, StatusCode};

#[test]
fn server_errors_are_failures_and_other_statuses_answers() {
    for code in [500, 501, 502, 503, 504, 599] {
        let status = StatusCode::from_u16(code).unwrap();
        assert_eq!(status.classify(), Outcome::Failure, "{code}");
    }
    for code in [
        200, 201, 204, 301, 304, 400, 401, 403, 404, 409, 422, 429, 499,
    ] {
        let status = StatusCode::from_u16(code).unwrap();
        assert_eq!(status.classify(), Outcome::Success, "{code}");
    }
}

#[test]
fn responses_are_judged_by_their_status() {
    let unavailable = Response::builder().status(503).body("down").unwrap();
    let not_found = Response::builder()
        .status(404)
        .body("no such book")
        .unwrap();
    assert_eq!(unavailable.classify(), Outcome::Failure);
    assert_eq!(not_found.classify(), Outcome::Success);
    let ok: Result<Response<()>, std::io::Error> = Ok(Response::new(()));
    assert_eq!(ok.classify(), Outcome::Success);
}

#[test]
fn too_many_requests_is_a_failure_only_when_configured() {
    let strict = StatusClassifier::SERVER_ERRORS.with_too_many_requests();
    assert_eq!(
        strict.classify_status(StatusCode::TOO_MANY_REQUESTS),
        Outcome::Failure
    );
    assert_eq!(
        StatusClassifier::SERVER_ERRORS.classify_status(StatusCode::TOO_MANY_REQUESTS),
        Outcome::Success
    );
    assert_eq!(
        strict.classify_status(StatusCode::BAD_GATEWAY),
        Outcome::Failure
    );
    assert_eq!(
        strict.classify_status(StatusCode::NOT_FOUND),
        Outcome::Success
    );
    assert_eq!(StatusClassifier::default(), StatusClassifier::SERVER_ERRORS);
}
