use breakerbox::{circuit_breaker, Classify, Outcome, Rejected};

#[derive(Debug)]
pub struct Down;

impl Classify for Down {
    fn classify(&self) -> Outcome {
        Outcome::Failure
    }
}

impl From<Rejected> for Down {
    fn from(_: Rejected) -> Self {
        Down
    }
}

impl From<breakerbox::policy::TimedOut> for Down {
    fn from(_: breakerbox::policy::TimedOut) -> Self {
        Down
    }
}

#[circuit_breaker(retries = 2, retry_backoff = "2s", retry_backoff_max = "1s")]
async fn capped_below_its_base() -> Result<(), Down> {
    Ok(())
}
fn main() {}
