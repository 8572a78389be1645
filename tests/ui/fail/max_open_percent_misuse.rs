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

#[circuit_breaker(max_open_percent = 50)]
async fn unkeyed() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(key = host, max_open_percent = 0)]
async fn none_may_open(host: &str) -> Result<(), Down> {
    let _ = host;
    Ok(())
}

#[circuit_breaker(key = host, max_open_percent = 150)]
async fn over_all(host: &str) -> Result<(), Down> {
    let _ = host;
    Ok(())
}

#[circuit_breaker(key = host, max_open_percent = "50%")]
async fn a_string(host: &str) -> Result<(), Down> {
    let _ = host;
    Ok(())
}

fn main() {}
