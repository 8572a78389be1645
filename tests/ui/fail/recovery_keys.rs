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

#[circuit_breaker(backoff = 2.0)]
async fn backoff_alone() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(open_max = "60s")]
async fn max_alone() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(ramp_step = "5s")]
async fn step_alone() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(ramp = "10, 30, 100", backoff = "2")]
async fn wrong_kinds() -> Result<(), Down> {
    Ok(())
}

fn main() {}
