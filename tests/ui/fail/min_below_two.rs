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

#[circuit_breaker(min = 0)]
async fn eager() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(min = 1)]
async fn one_call_decides() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(window = "10s", min = 1)]
async fn one_call_decides_in_time() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(window = 1, min = 0)]
async fn window_of_one_without_calls() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(window = 1, min = 2)]
async fn window_of_one_waiting_for_two() -> Result<(), Down> {
    Ok(())
}

fn main() {}
