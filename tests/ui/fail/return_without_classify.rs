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
pub struct Opaque;

impl From<Rejected> for Opaque {
    fn from(_: Rejected) -> Self {
        Opaque
    }
}

#[circuit_breaker]
async fn get_book() -> Result<String, Opaque> {
    Ok(String::new())
}
fn main() {}
