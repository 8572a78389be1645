//! `Classify` for `reqwest::Error` and `reqwest::Response`: transport failures and server
//! errors count, and a 429 or 503 response tells its `Retry-After`.

use crate::{http::StatusClassifier, Classify, Outcome};

/// Timeouts, connect errors and broken bodies are failures; an error made from a status
/// (`Response::error_for_status`) is judged by that status, so 5xx fails and 4xx is an
/// answer; a request that could not be built never reached the downstream and is ignored;
/// a body that arrived but did not decode, or too many redirects, are answers.
///
/// ```
/// use breakerbox::{Classify, Outcome};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let unbuilt = reqwest::Client::new().get("not a url").send().await.unwrap_err();
/// assert_eq!(unbuilt.classify(), Outcome::Ignored);
/// # });
/// ```
///
/// No `reqwest::Error` can be made from a [`Rejected`](crate::Rejected), so a function
/// returning `Result<T, reqwest::Error>` takes one more line in its attribute, a fallback
/// whose answer stands in for a rejected call (or it returns an error of its own with
/// `impl From<Rejected>`):
///
/// ```
/// use breakerbox::{circuit_breaker, Rejected};
///
/// #[circuit_breaker(name = "docs::catalog", fallback = cached_title)]
/// async fn title(client: &reqwest::Client, isbn: &str) -> Result<String, reqwest::Error> {
///     let url = format!("http://catalog.invalid/title/{isbn}");
///     client.get(url).send().await?.error_for_status()?.text().await
/// }
///
/// async fn cached_title(
///     _client: &reqwest::Client,
///     isbn: &str,
///     rejected: Rejected,
/// ) -> Result<String, reqwest::Error> {
///     Ok(format!("{isbn} (cached: {rejected})"))
/// }
/// ```
/// A response is judged by its status, as an `http::Response` is: 5xx is a failure, and a
/// 429 or 503 carries its `Retry-After` (seconds, or an HTTP date) as the pushback. So a
/// function returning `Result<reqwest::Response, reqwest::Error>` without
/// `error_for_status` opens its breaker for as long as a 503 asks.
///
/// ```
/// use std::time::Duration;
/// use breakerbox::{Classify, Outcome};
///
/// let restarting = http::Response::builder()
///     .status(503)
///     .header("retry-after", "45")
///     .body("")
///     .unwrap();
/// let response = reqwest::Response::from(restarting);
/// assert_eq!(response.classify(), Outcome::Failure);
/// assert_eq!(response.pushback(), Some(Duration::from_secs(45)));
/// ```
impl Classify for reqwest::Response {
    fn classify(&self) -> Outcome {
        StatusClassifier::SERVER_ERRORS.classify_status(self.status())
    }

    fn pushback(&self) -> Option<std::time::Duration> {
        super::http::retry_after(self.status(), self.headers())
    }
}

impl Classify for reqwest::Error {
    fn classify(&self) -> Outcome {
        if self.is_builder() {
            Outcome::Ignored
        } else if self.is_timeout() || self.is_connect() {
            Outcome::Failure
        } else if let Some(status) = self.status() {
            StatusClassifier::SERVER_ERRORS.classify_status(status)
        } else if self.is_decode() || self.is_redirect() {
            Outcome::Success
        } else {
            Outcome::Failure
        }
    }
}
