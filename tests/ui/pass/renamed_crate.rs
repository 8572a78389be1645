//! `crate = "..."` names the runtime when it is renamed.

extern crate breakerbox as resilience;

use std::io;

#[derive(Debug)]
struct Down;

impl resilience::Classify for Down {
    fn classify(&self) -> resilience::Outcome {
        resilience::Outcome::Failure
    }
}

impl From<resilience::Rejected> for Down {
    fn from(_: resilience::Rejected) -> Self {
        Down
    }
}

impl From<io::Error> for Down {
    fn from(_: io::Error) -> Self {
        Down
    }
}

type Res<T> = Result<T, Down>;

#[resilience::circuit_breaker(crate = "::resilience", window = 5)]
async fn get() -> Res<()> {
    Ok(())
}

fn main() {
    drop(get());
}
