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

#[circuit_breaker(window = 0)]
async fn counted() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(window = "0s")]
async fn timed() -> Result<(), Down> {
    Ok(())
}
fn main() {}
