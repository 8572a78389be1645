//! A rejection as an axum handler's answer: 503 Service Unavailable, with `Retry-After`; a
//! timeout as 504 Gateway Timeout.

use axum_core::response::{IntoResponse, Response};
use http::{header, HeaderValue, StatusCode};

use crate::{policy::TimedOut, CallError, Rejected};

/// `503 Service Unavailable`, the rejection's text as a plain-text body and, when the
/// breaker knows when it lets probes through, `Retry-After` in whole seconds, rounded up so
/// that a client that waits that long finds the open period over. The [`Rejected`] rides
/// along in the response's extensions, for middleware that tells a rejection from a 503 of
/// the handler's own; so the response classifies as
/// [`Outcome::Ignored`](crate::Outcome::Ignored), as the rejection does, and never opens the
/// breaker of a handler that passes it on.
///
/// ```
/// use std::time::Duration;
/// use axum_core::response::IntoResponse;
/// use breakerbox::clock::ManualClock;
/// use breakerbox::{Breaker, Config, Rejected};
///
/// let clock = ManualClock::new();
/// let b = Breaker::with_clock("libraryd", Config::builder().count_window(1).build()?, clock.clone());
/// b.try_acquire().unwrap().failure();
/// clock.advance(Duration::from_millis(1500));
///
/// let response = b.try_acquire().unwrap_err().into_response();
/// assert_eq!(response.status(), 503);
/// assert_eq!(response.headers()["retry-after"], "4");
/// assert!(response.extensions().get::<Rejected>().is_some());
/// # Ok::<(), breakerbox::config::ConfigError>(())
/// ```
impl IntoResponse for Rejected {
    fn into_response(self) -> Response {
        let retry_after = retry_after_secs(&self);
        let mut response = (StatusCode::SERVICE_UNAVAILABLE, self.to_string()).into_response();
        if let Some(secs) = retry_after {
            let retry_after = HeaderValue::from(secs);
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, retry_after);
        }
        response.extensions_mut().insert(self);
        response
    }
}

/// A rejected call answers as [`IntoResponse`] says, so `#[circuit_breaker]` works on a
/// handler returning `Result<T, axum::response::Response>` as it is; the handler's own
/// error responses are judged by their status (5xx is a failure, with the `http` feature's
/// [`Classify`](crate::Classify) for `http::Response<B>`).
///
/// ```
/// use axum_core::response::{IntoResponse, Response};
/// use breakerbox::circuit_breaker;
/// use http::StatusCode;
///
/// #[circuit_breaker(name = "docs::stock", window = 2, min = 2)]
/// async fn stock(sku: u64) -> Result<String, Response> {
///     match sku {
///         0 => Err((StatusCode::BAD_GATEWAY, "warehouse down").into_response()),
///         _ => Ok(format!("{sku}: 3 left")),
///     }
/// }
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// assert_eq!(stock(0).await.unwrap_err().status(), 502);
/// assert_eq!(stock(0).await.unwrap_err().status(), 502);
/// let rejected = stock(7).await.unwrap_err();
/// assert_eq!(rejected.status(), 503);
/// assert!(rejected.headers().contains_key("retry-after"));
/// # });
/// ```
impl From<Rejected> for Response {
    fn from(rejected: Rejected) -> Response {
        rejected.into_response()
    }
}

/// `504 Gateway Timeout`, the timeout's text as a plain-text body. The [`TimedOut`] rides
/// along in the response's extensions, as a [`Rejected`] does in its answer.
///
/// ```
/// use std::time::Duration;
/// use axum_core::response::IntoResponse;
/// use breakerbox::policy::TimedOut;
///
/// let response = TimedOut::new("libraryd", Duration::from_millis(800)).into_response();
/// assert_eq!(response.status(), 504);
/// assert_eq!(response.headers()["content-type"], "text/plain; charset=utf-8");
/// assert!(response.extensions().get::<TimedOut>().is_some());
/// ```
impl IntoResponse for TimedOut {
    fn into_response(self) -> Response {
        let mut response = (StatusCode::GATEWAY_TIMEOUT, self.to_string()).into_response();
        response.extensions_mut().insert(self);
        response
    }
}

/// An attempt past its `timeout` answers as [`IntoResponse`] says, so
/// `#[circuit_breaker(timeout = ...)]` works on a handler returning
/// `Result<T, axum::response::Response>` as it is.
///
/// ```
/// use std::time::Duration;
/// use axum_core::response::Response;
/// use breakerbox::policy::TimedOut;
///
/// let response = Response::from(TimedOut::new("libraryd", Duration::from_secs(5)));
/// assert_eq!(response.status(), 504);
/// ```
impl From<TimedOut> for Response {
    fn from(timed_out: TimedOut) -> Response {
        timed_out.into_response()
    }
}

/// A call under the policy that returned no output of its own answers as its rejection (503)
/// or its timeout (504) does.
///
/// ```
/// use std::time::Duration;
/// use axum_core::response::IntoResponse;
/// use breakerbox::{CallError, policy::TimedOut};
///
/// let timed_out = CallError::from(TimedOut::new("libraryd", Duration::from_secs(5)));
/// assert_eq!(timed_out.into_response().status(), 504);
/// ```
impl IntoResponse for CallError {
    fn into_response(self) -> Response {
        match self {
            CallError::Rejected(rejected) => rejected.into_response(),
            CallError::TimedOut(timed_out) => timed_out.into_response(),
        }
    }
}

/// So `?` on [`Breaker::run`](crate::Breaker::run) works in a handler returning
/// `Result<T, axum::response::Response>`.
impl From<CallError> for Response {
    fn from(error: CallError) -> Response {
        error.into_response()
    }
}

/// `Retry-After` of a rejection: whole seconds, rounded up.
fn retry_after_secs(rejected: &Rejected) -> Option<u64> {
    let after = rejected.retry_after()?;
    Some(u64::try_from(after.as_nanos().div_ceil(1_000_000_000)).unwrap_or(u64::MAX))
}
