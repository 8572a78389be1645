//! Methods keep their receivers: `&self`, `&mut self`, `self: Arc<Self>`, trait impls, and a
//! fallback that gets the receiver.

use std::io;
use std::sync::Arc;

use breakerbox::{circuit_breaker, Rejected};

#[derive(Debug)]
struct Down;

impl breakerbox::Classify for Down {
    fn classify(&self) -> breakerbox::Outcome {
        breakerbox::Outcome::Failure
    }
}

impl From<breakerbox::Rejected> for Down {
    fn from(_: breakerbox::Rejected) -> Self {
        Down
    }
}

impl From<io::Error> for Down {
    fn from(_: io::Error) -> Self {
        Down
    }
}

type Res<T> = Result<T, Down>;

struct Client {
    base: String,
    calls: u32,
}

impl Client {
    #[circuit_breaker(fallback = Self::cached)]
    async fn get(&self, path: &str) -> Res<String> {
        Ok(format!("{}{path}", self.base))
    }

    async fn cached(&self, path: &str, _rejected: Rejected) -> Res<String> {
        Ok(format!("cached {}{path}", self.base))
    }

    #[circuit_breaker]
    async fn count(&mut self) -> Res<u32> {
        self.calls += 1;
        Ok(self.calls)
    }

    #[circuit_breaker(fallback = Self::shared_fallback)]
    async fn shared(self: Arc<Self>) -> Res<usize> {
        Ok(self.base.len())
    }

    async fn shared_fallback(self: Arc<Self>, _rejected: Rejected) -> Res<usize> {
        Ok(0)
    }
}

trait Fetch {
    async fn fetch(&self, id: u32) -> Res<u32>;
}

impl Fetch for Client {
    #[circuit_breaker(window = 10)]
    async fn fetch(&self, id: u32) -> Res<u32> {
        Ok(id)
    }
}

struct Wrapper<T>(T);

impl<T: Clone + Send + Sync> Wrapper<T> {
    #[circuit_breaker]
    async fn inner(&self) -> Res<T> {
        Ok(self.0.clone())
    }
}

fn main() {
    let mut client = Client {
        base: String::from("http://libraryd"),
        calls: 0,
    };
    drop(client.get("/books"));
    drop(client.count());
    drop(client.fetch(1));
    drop(Arc::new(Client {
        base: String::new(),
        calls: 0,
    })
    .shared());
    drop(Wrapper(1u8).inner());
}
