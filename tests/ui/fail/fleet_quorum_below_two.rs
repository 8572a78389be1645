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

#[circuit_breaker(fleet = true, fleet_quorum = 1)]
async fn lonely() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(fleet_quorum = 3)]
async fn quorum_without_fleet() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(fleet = "yes")]
async fn fleet_not_bool() -> Result<(), Down> {
    Ok(())
}

fn main() {}
