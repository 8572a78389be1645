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

#[circuit_breaker(retries = 2)]
async fn fill(buffer: &mut Vec<u8>) -> Result<(), Down> {
    buffer.push(1);
    Ok(())
}

#[circuit_breaker(retries = 2)]
async fn destructured((a, b): (u32, u32)) -> Result<u32, Down> {
    Ok(a + b)
}
fn main() {}
