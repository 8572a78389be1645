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

// A blocking call cannot be cancelled: `timeout` is refused at the key.
#[circuit_breaker(window = 20, timeout = "1s")]
fn blocking() -> Result<(), Down> {
    Ok(())
}

// `retries` run the body again: a plain `&mut self` method cannot be lent to more than one.
struct Store;

impl Store {
    #[circuit_breaker(retries = 2)]
    fn put(&mut self, key: &str) -> Result<(), Down> {
        let _ = key;
        Ok(())
    }
}

fn main() {}
