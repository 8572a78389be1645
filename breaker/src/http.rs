//! HTTP's answers judged (feature `http`): [`Classify`](crate::Classify) is implemented for
//! `http::StatusCode` and `http::Response<B>` (a 5xx is a failure), and
//! [`StatusClassifier`] says which other statuses count, such as 429 Too Many Requests.

pub use crate::integrations::http::StatusClassifier;
