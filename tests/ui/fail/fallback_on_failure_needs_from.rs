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

// A fallback that takes the function's error gets `E::from(timed_out)` for a timeout: `Down`
// has no `From<TimedOut>`.
#[circuit_breaker(timeout = "1s", fallback = takes_error, fallback_on = "failure")]
async fn get_book(isbn: &str) -> Result<String, Down> {
    Ok(isbn.to_owned())
}

async fn takes_error(isbn: &str, _: Down) -> Result<String, Down> {
    Ok(isbn.to_owned())
}

#[derive(Debug)]
pub struct Foreign;

impl Classify for Foreign {
    fn classify(&self) -> Outcome {
        Outcome::Failure
    }
}

// Nor has `Foreign` a `From<Rejected>`, untimed.
#[circuit_breaker(fallback = takes_foreign, fallback_on = "failure")]
async fn get_page(isbn: &str) -> Result<String, Foreign> {
    Ok(isbn.to_owned())
}

async fn takes_foreign(isbn: &str, _: Foreign) -> Result<String, Foreign> {
    Ok(isbn.to_owned())
}

fn main() {}
