//! `Classify` for `reqwest::Error`: transport failures and server errors count.

use crate::{Classify, Outcome, StatusClassifier};

/// Timeouts, connect errors and broken bodies are failures; an error made from a status
/// (`Response::error_for_status`) is judged by that status, so 5xx fails and 4xx is an
/// answer; a request that could not be built never reached the downstream and is ignored;
/// a body that arrived but did not decode, or too many redirects, are answers.
///
/// ```
/// use breaker::{Classify, Outcome};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let unbuilt = reqwest::Client::new().get("not a url").send().await.unwrap_err();
/// assert_eq!(unbuilt.classify(), Outcome::Ignored);
/// # });
/// ```
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
