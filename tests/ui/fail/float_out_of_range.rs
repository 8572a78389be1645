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

#[circuit_breaker(rate = 1e999, slow = "1s", slow_rate = 1e999)]
async fn infinite_rates() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(rate = -1e999, slow = "1s", slow_rate = 1e-999)]
async fn negative_infinite_and_vanishing_rates() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(backoff = 1e999, open_max = "60s", ramp = [50, 100], ramp_guard = 1e999)]
async fn infinite_factors() -> Result<(), Down> {
    Ok(())
}

fn main() {}
