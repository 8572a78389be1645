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

// With `fallback_on = "failure"` the fallback gets the error, not the `Rejected`.
#[circuit_breaker(fallback = takes_rejected, fallback_on = "failure")]
async fn get_book(isbn: &str) -> Result<String, Down> {
    Ok(isbn.to_owned())
}

async fn takes_rejected(isbn: &str, _: Rejected) -> Result<String, Down> {
    Ok(isbn.to_owned())
}

// There is no error to hand over when the function returns no `Result`.
#[circuit_breaker(fallback = no_error, fallback_on = "failure", classify = always_fails)]
async fn get_count() -> u32 {
    1
}

fn always_fails(_: &u32) -> Outcome {
    Outcome::Failure
}

async fn no_error(_: Down) -> u32 {
    0
}
fn main() {}
