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

#[derive(Debug)]
pub struct LibError;

impl Classify for LibError {
    fn classify(&self) -> Outcome {
        Outcome::Failure
    }
}

#[circuit_breaker]
async fn get_book() -> Result<String, LibError> {
    Ok(String::new())
}
fn main() {}
