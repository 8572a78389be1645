//! `Classify` for `tokio::time::error::Elapsed`: the downstream did not answer in time.

use tokio::time::error::Elapsed;

use crate::{Classify, Outcome};

/// A timeout is a failure.
///
/// ```
/// use std::time::Duration;
/// use breakerbox::{Classify, Outcome};
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().unwrap().block_on(async {
/// let late = tokio::time::timeout(Duration::from_millis(10), std::future::pending::<()>()).await;
/// assert_eq!(late.classify(), Outcome::Failure);
/// # });
/// ```
impl Classify for Elapsed {
    #[inline]
    fn classify(&self) -> Outcome {
        Outcome::Failure
    }
}
