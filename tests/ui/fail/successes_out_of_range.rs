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

#[circuit_breaker(successes = 0)]
async fn no_successes() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(probes = 2, successes = 3)]
async fn more_successes_than_probes() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(successes = 4)]
async fn more_successes_than_default_probes() -> Result<(), Down> {
    Ok(())
}

// A broken `probes` is reported alone: `successes` is measured against it.
#[circuit_breaker(probes = 0, successes = 2)]
async fn no_probes() -> Result<(), Down> {
    Ok(())
}

fn main() {}
