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

#[circuit_breaker(timeout = "0s")]
async fn impatient() -> Result<(), Down> {
    Ok(())
}
fn main() {}
