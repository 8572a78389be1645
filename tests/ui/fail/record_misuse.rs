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

#[circuit_breaker(record = 0)]
async fn unrecorded() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(key = host, record = 1000)]
async fn per_host(host: &str) -> Result<(), Down> {
    let _ = host;
    Ok(())
}

fn main() {}
