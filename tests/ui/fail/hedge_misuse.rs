use breakerbox::{circuit_breaker, Classify, Outcome, Rejected, policy::TimedOut};

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

impl From<TimedOut> for Down {
    fn from(_: TimedOut) -> Self {
        Down
    }
}

// Hedged attempts run beside each other and the losers are cancelled: not a blocking call.
#[circuit_breaker(hedge = "50ms")]
fn blocking() -> Result<(), Down> {
    Ok(())
}

// `hedges` says how many extra attempts a hedge may start: alone, nothing is hedged.
#[circuit_breaker(hedges = 2)]
async fn alone() -> Result<(), Down> {
    Ok(())
}

// A hedge at or past the timeout could never start.
#[circuit_breaker(timeout = "40ms", hedge = "50ms")]
async fn too_late() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(hedge = "50ms", hedges = 6)]
async fn too_many() -> Result<(), Down> {
    Ok(())
}

struct Client;

impl Client {
    // Each attempt runs the body anew, beside the others: `&mut self` cannot be lent to two.
    #[circuit_breaker(hedge = "50ms")]
    async fn exclusive(&mut self) -> Result<(), Down> {
        Ok(())
    }
}

fn main() {}
