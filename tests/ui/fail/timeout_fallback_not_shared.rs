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

impl From<breakerbox::policy::TimedOut> for Down {
    fn from(_: breakerbox::policy::TimedOut) -> Self {
        Down
    }
}

struct Cart {
    items: Vec<u32>,
}

impl Cart {
    #[circuit_breaker(timeout = "1s", fallback = Self::unchanged)]
    async fn add(&mut self, item: u32, log: &mut Vec<u32>) -> Result<(), Down> {
        self.items.push(item);
        log.push(item);
        Ok(())
    }

    async fn unchanged(&mut self, _item: u32, _log: &mut Vec<u32>, _: Rejected) -> Result<(), Down> {
        Ok(())
    }
}
fn main() {}
