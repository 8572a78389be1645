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

#[circuit_breaker(window = 0, rate = 2.0, probes = 0, windo = 3, open = "soon", slow_rate = 0.5)]
async fn everything_wrong() -> Result<(), Down> {
    Ok(())
}
fn main() {}
