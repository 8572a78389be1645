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

#[circuit_breaker(backoff = 0.5, open_max = "60s")]
async fn shrinking() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(open = "10s", backoff = 2.0, open_max = "5s")]
async fn capped_below_open() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(ramp = [10, 10, 100])]
async fn flat_ramp() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(ramp = [10, 60])]
async fn unfinished_ramp() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(ramp = [0, 100])]
async fn zero_step() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(ramp = [])]
async fn empty_ramp() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(ramp = [50, 100], ramp_step = "0s")]
async fn instant_steps() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(ramp = [50, 100], ramp_guard = 1.0)]
async fn guard_too_low() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(ramp_guard = 3.0)]
async fn guard_without_ramp() -> Result<(), Down> {
    Ok(())
}

fn main() {}
