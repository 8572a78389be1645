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

#[circuit_breaker(rate = 0)]
async fn never() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(rate = 1.5)]
async fn beyond() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(rate = "0.5")]
async fn quoted() -> Result<(), Down> {
    Ok(())
}
fn main() {}
