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

struct Client {
    calls: u32,
}

impl Client {
    #[circuit_breaker(retries = 2)]
    async fn consume(self) -> Result<(), Down> {
        Ok(())
    }

    #[circuit_breaker(retries = 2)]
    async fn consume_mut(mut self) -> Result<(), Down> {
        self.calls += 1;
        Ok(())
    }

    #[circuit_breaker(retries = 2)]
    async fn exclusive(&mut self) -> Result<(), Down> {
        Ok(())
    }

    #[circuit_breaker(retries = 2)]
    async fn boxed(self: Box<Self>) -> Result<(), Down> {
        Ok(())
    }
}
fn main() {}
