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

#[circuit_breaker(window = 99999999999, backoff = 1e999, open_max = "60s")]
async fn get_book(isbn: &str) -> Result<String, Down> {
    Ok(isbn.to_owned())
}

struct Library;

impl Library {
    #[circuit_breaker(windo = 3)]
    async fn shelf(&self, n: u32) -> Result<u32, Down> {
        Ok(n)
    }
}

// The function is still defined, with its signature: only the attribute's errors show.
async fn callers() -> Result<usize, Down> {
    let title: String = get_book("978-1").await?;
    let shelf: u32 = Library.shelf(3).await?;
    Ok(title.len() + shelf as usize)
}

fn main() {
    drop(callers());
}
