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

#[circuit_breaker(retries = 2, retry_budget = 1.5)]
async fn lavish() -> Result<(), Down> {
    Ok(())
}
fn main() {}
