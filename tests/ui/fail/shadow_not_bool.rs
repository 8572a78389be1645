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

#[circuit_breaker(shadow = 3)]
async fn watched() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(shadow = "true")]
async fn quoted() -> Result<(), Down> {
    Ok(())
}
fn main() {}
