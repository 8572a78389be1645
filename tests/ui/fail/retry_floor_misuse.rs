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

#[circuit_breaker(retry_floor = 5)]
async fn floors_nothing() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(retries = 2, retry_floor = -1)]
async fn below_nothing() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(retries = 2, retry_floor = "5")]
async fn floor_as_text() -> Result<(), Down> {
    Ok(())
}
fn main() {}
