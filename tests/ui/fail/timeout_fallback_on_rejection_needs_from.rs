use breakerbox::{circuit_breaker, Rejected};

#[derive(Debug)]
pub struct Down;

impl breakerbox::Classify for Down {
    fn classify(&self) -> breakerbox::Outcome {
        breakerbox::Outcome::Failure
    }
}

// The fallback answers rejections only (the default `fallback_on`): a timed-out call is
// returned as `Err(Down::from(timed_out))`, and `Down` has no `From<TimedOut>`.
#[circuit_breaker(timeout = "1s", fallback = on_rejection)]
async fn get_book(isbn: &str) -> Result<String, Down> {
    Ok(isbn.to_owned())
}

async fn on_rejection(isbn: &str, _: Rejected) -> Result<String, Down> {
    Ok(isbn.to_owned())
}

fn main() {}
