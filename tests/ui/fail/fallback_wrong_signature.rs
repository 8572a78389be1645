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

// A fallback taking one argument takes none of the function's, then the `Rejected`: `&str` is not one.
#[circuit_breaker(fallback = degraded)]
async fn get_book(isbn: &str) -> Result<String, Down> {
    Ok(isbn.to_owned())
}

async fn degraded(isbn: &str) -> Result<String, Down> {
    Ok(isbn.to_owned())
}

#[circuit_breaker(fallback = wrong_type)]
async fn get_page(n: u32) -> Result<String, Down> {
    Ok(n.to_string())
}

async fn wrong_type(n: u32, _: Rejected) -> Option<String> {
    Some(n.to_string())
}
fn main() {}
