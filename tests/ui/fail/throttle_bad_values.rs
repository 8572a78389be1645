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

// Below 1, K would refuse calls of a downstream that answers every one well.
#[circuit_breaker(throttle = 0.5)]
fn below_one() -> Result<(), Down> {
    Ok(())
}

// An infinite K vouches for every call: no throttle at all.
#[circuit_breaker(throttle = 1e999)]
fn infinite() -> Result<(), Down> {
    Ok(())
}

// A share of calls is at most all of them, and above none.
#[circuit_breaker(throttle = 2.0, throttle_max = 1.5)]
fn max_over_one() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(throttle = 2.0, throttle_max = 0.0)]
fn max_zero() -> Result<(), Down> {
    Ok(())
}

// Its buckets are a tenth of the window each.
#[circuit_breaker(throttle = 2.0, throttle_window = "5ns")]
fn window_under_its_buckets() -> Result<(), Down> {
    Ok(())
}

// The max and the window complete throttling: alone, nothing throttles.
#[circuit_breaker(throttle_max = 0.5)]
fn max_alone() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(throttle_window = "30s")]
fn window_alone() -> Result<(), Down> {
    Ok(())
}

// K is a number, not a string.
#[circuit_breaker(throttle = "2.0")]
fn quoted() -> Result<(), Down> {
    Ok(())
}

fn main() {}
