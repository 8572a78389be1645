//! `Classify` for `http::StatusCode` and `http::Response<B>`: 5xx are failures.

use http::{Response, StatusCode};

use crate::{Classify, Outcome, Rejected};

/// A 5xx status is a failure; every other status is an answer. 429 Too Many Requests is an
/// answer too, unless a [`StatusClassifier`] says otherwise.
///
/// ```
/// use breaker::{Classify, Outcome};
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
/// ```
/// use breaker::{Classify, Outcome};
///
/// let response = http::Response::builder().status(502).body(()).unwrap();
/// assert_eq!(response.classify(), Outcome::Failure);
/// ```
impl<B> Classify for Response<B> {
    #[inline]
    fn classify(&self) -> Outcome {
        StatusClassifier::SERVER_ERRORS.classify_response(self)
    }
}

/// Which HTTP statuses are failures: 5xx always, 429 Too Many Requests if asked.
///
/// A 429 says the downstream is shedding load, which the breaker may help with, but it is
/// also what a rate limit per client says, and then opening the breaker for everyone would be
/// wrong; so it counts only when configured.
///
/// ```
/// use breaker::{Outcome, StatusClassifier};
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
/// use breaker::tower::CircuitBreakerLayer;
/// use breaker::{Breaker, Config, StatusClassifier};
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
}
