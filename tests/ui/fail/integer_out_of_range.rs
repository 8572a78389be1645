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

#[circuit_breaker(window = 99999999999, probes = -1, min = -1)]
async fn too_large_and_negative() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(key = id, max_keys = 99999999999999999999999, successes = -3)]
async fn keyed(id: u32) -> Result<u32, Down> {
    Ok(id)
}

#[circuit_breaker(ramp = [-10, 100])]
async fn negative_percent() -> Result<(), Down> {
    Ok(())
}

fn main() {}
