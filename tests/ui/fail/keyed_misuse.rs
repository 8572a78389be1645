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

#[circuit_breaker(max_keys = 10)]
async fn unkeyed() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(key = host, max_keys = 0)]
async fn no_room(host: &str) -> Result<(), Down> {
    let _ = host;
    Ok(())
}

#[circuit_breaker(key = bytes)]
async fn not_displayable(bytes: Vec<u8>) -> Result<(), Down> {
    let _ = bytes;
    Ok(())
}

fn main() {}
