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

#[circuit_breaker(fallback_on = "failure")]
async fn without_fallback() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(fallback = degraded, fallback_on = "failures")]
async fn misspelled() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(fallback = degraded, fallback_on = failure)]
async fn unquoted() -> Result<(), Down> {
    Ok(())
}

async fn degraded(_: Down) -> Result<(), Down> {
    Ok(())
}
fn main() {}
