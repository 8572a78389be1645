//! `Classify` for `http::StatusCode` and `http::Response<B>`: 5xx are failures, and a 429 or
//! 503 tells its `Retry-After`.

use std::time::{Duration, SystemTime};

use http::header::RETRY_AFTER;
use http::{HeaderMap, Response, StatusCode};

use crate::{Classify, Outcome, Rejected};

/// A 5xx status is a failure; every other status is an answer. 429 Too Many Requests is an
/// answer too, unless a [`StatusClassifier`] says otherwise.
///
/// ```
/// use breakerbox::{Classify, Outcome};
/// use http::StatusCode;
///
/// assert_eq!(StatusCode::SERVICE_UNAVAILABLE.classify(), Outcome::Failure);
/// assert_eq!(StatusCode::NOT_FOUND.classify(), Outcome::Success);
/// assert_eq!(StatusCode::TOO_MANY_REQUESTS.classify(), Outcome::Success);
/// ```
impl Classify for StatusCode {
    #[inline]
    fn classify(&self) -> Outcome {
        StatusClassifier::SERVER_ERRORS.classify_status(*self)
    }
}

/// A response is judged by its status: 5xx is a failure. A response made from a [`Rejected`]
/// in this process (it carries the rejection in its extensions, as the `axum` feature's
/// answer does) is ignored, as the rejection is: a guarded handler that calls another,
/// whose breaker is open, does not open its own. A response that arrives over the network
/// is judged by its status.
///
/// A 429 Too Many Requests or 503
/// Service Unavailable with `Retry-After` (seconds, or an HTTP date) carries that pushback:
/// a 503 so opens the breaker for as long as the server asked (a 429 is an answer unless a
/// [`StatusClassifier`] counts it, and a pushback on an answer is ignored).
///
/// ```
/// use std::time::Duration;
/// use breakerbox::{Classify, Outcome};
///
/// let response = http::Response::builder().status(502).body(()).unwrap();
/// assert_eq!(response.classify(), Outcome::Failure);
///
/// let restarting = http::Response::builder()
///     .status(503)
///     .header("retry-after", "120")
///     .body(())
///     .unwrap();
/// assert_eq!(restarting.pushback(), Some(Duration::from_secs(120)));
/// ```
impl<B> Classify for Response<B> {
    #[inline]
    fn classify(&self) -> Outcome {
        StatusClassifier::SERVER_ERRORS.classify_response(self)
    }

    fn pushback(&self) -> Option<Duration> {
        retry_after(self.status(), self.headers())
    }
}

/// The pushback of a response with `status` and `headers`: the `Retry-After` of a 429 or
/// 503, in whole seconds or as an HTTP date (`Wed, 21 Oct 2026 07:28:00 GMT`, counted from
/// the system's wall clock; a date past is none).
pub(crate) fn retry_after(status: StatusCode, headers: &HeaderMap) -> Option<Duration> {
    if status != StatusCode::TOO_MANY_REQUESTS && status != StatusCode::SERVICE_UNAVAILABLE {
        return None;
    }
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    at.duration_since(SystemTime::now()).ok()
}

/// Which HTTP statuses are failures: 5xx always, 429 Too Many Requests if asked.
///
/// A 429 says the downstream is shedding load, which the breaker may help with, but it is
/// also what a rate limit per client says, and then opening the breaker for everyone would be
/// wrong; so it counts only when configured.
///
/// ```
/// use breakerbox::{Outcome, http::StatusClassifier};
/// use http::StatusCode;
///
/// let strict = StatusClassifier::SERVER_ERRORS.with_too_many_requests();
/// assert_eq!(strict.classify_status(StatusCode::TOO_MANY_REQUESTS), Outcome::Failure);
/// assert_eq!(StatusClassifier::SERVER_ERRORS.classify_status(StatusCode::TOO_MANY_REQUESTS), Outcome::Success);
/// ```
///
/// With the `tower` feature it judges responses of a
/// [`CircuitBreakerLayer`](crate::tower::CircuitBreakerLayer) (every error a failure):
///
/// ```
/// # #[cfg(feature = "tower")] {
/// use std::sync::Arc;
/// use breakerbox::tower::CircuitBreakerLayer;
/// use breakerbox::{Breaker, Config, http::StatusClassifier};
///
/// let layer = CircuitBreakerLayer::new(Arc::new(Breaker::new("docs::throttled", Config::default())))
///     .classify_with(StatusClassifier::SERVER_ERRORS.with_too_many_requests());
/// # }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatusClassifier {
    too_many_requests: bool,
}

impl StatusClassifier {
    /// 5xx statuses are failures, every other status an answer.
    pub const SERVER_ERRORS: StatusClassifier = StatusClassifier {
        too_many_requests: false,
    };

    /// The same, and 429 Too Many Requests is a failure too.
    pub const fn with_too_many_requests(self) -> Self {
        Self {
            too_many_requests: true,
        }
    }

    /// The outcome of `response`: ignored if it was made from a [`Rejected`] (which it
    /// carries in its extensions), else as [`classify_status`](Self::classify_status) says.
    pub fn classify_response<B>(&self, response: &Response<B>) -> Outcome {
        if response.extensions().get::<Rejected>().is_some() {
            return Outcome::Ignored;
        }
        self.classify_status(response.status())
    }

    /// The outcome of a response with `status`.
    pub fn classify_status(&self, status: StatusCode) -> Outcome {
        let throttled = self.too_many_requests && status == StatusCode::TOO_MANY_REQUESTS;
        if status.is_server_error() || throttled {
            Outcome::Failure
        } else {
            Outcome::Success
        }
    }
}

#[cfg(feature = "tower")]
impl<B, E> crate::tower::ClassifyResponse<Response<B>, E> for StatusClassifier {
    fn classify(&self, result: &Result<Response<B>, E>) -> Outcome {
        match result {
            Ok(response) => self.classify_response(response),
            Err(_) => Outcome::Failure,
        }
    }

    /// The `Retry-After` of a 429 or 503 response.
    fn pushback(&self, result: &Result<Response<B>, E>) -> Option<Duration> {
        let response = result.as_ref().ok()?;
        retry_after(response.status(), response.headers())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(status: u16, retry_after: &str) -> Response<()> {
        Response::builder()
            .status(status)
            .header(RETRY_AFTER, retry_after)
            .body(())
            .unwrap()
    }

    #[test]
    fn retry_after_is_read_in_seconds_from_a_429_or_a_503_only() {
        assert_eq!(
            response(503, "30").pushback(),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            response(429, " 7 ").pushback(),
            Some(Duration::from_secs(7))
        );
        assert_eq!(response(500, "30").pushback(), None);
        assert_eq!(response(200, "30").pushback(), None);
        assert_eq!(response(503, "-1").pushback(), None);
        assert_eq!(response(503, "soon").pushback(), None);
        let bare = Response::builder().status(503).body(()).unwrap();
        assert_eq!(bare.pushback(), None);
    }

    #[test]
    fn retry_after_as_an_http_date_counts_from_now() {
        let at = SystemTime::now() + Duration::from_secs(3600);
        let pushback = response(503, &httpdate::fmt_http_date(at))
            .pushback()
            .unwrap();
        // The date has whole seconds: up to one less than asked.
        assert!(
            pushback > Duration::from_secs(3598) && pushback <= Duration::from_secs(3600),
            "{pushback:?}"
        );
        let past = SystemTime::now() - Duration::from_secs(60);
        assert_eq!(
            response(503, &httpdate::fmt_http_date(past)).pushback(),
            None
        );
    }
}
