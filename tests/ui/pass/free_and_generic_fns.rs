//! Free functions keep their signature: generics, where clauses, lifetimes, `impl Trait`
//! arguments, patterns, doc comments and inner attributes.

use std::fmt::Display;
use std::io;

use breakerbox::{circuit_breaker, Classify, Outcome};

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

/// Documented, and the doc stays on the function.
#[circuit_breaker(window = 20, min = 10, rate = 0.5, open = "5s", probes = 3)]
pub async fn plain(isbn: &str) -> Res<String> {
    Ok(isbn.to_owned())
}

#[circuit_breaker(window = "10s", buckets = 5, slow = "800ms", slow_rate = 0.8)]
async fn generic<T, U>(value: T, extra: U) -> Res<String>
where
    T: Display + Send,
    U: Into<u64> + Send,
{
    Ok(format!("{value}{}", extra.into()))
}

#[circuit_breaker]
async fn borrowed<'a, 'b: 'a>(first: &'a str, _second: &'b str) -> Res<&'a str> {
    Ok(first)
}

#[circuit_breaker]
async fn impl_trait_arg(items: impl IntoIterator<Item = u32> + Send) -> Res<u32> {
    Ok(items.into_iter().sum())
}

#[circuit_breaker]
async fn patterns((a, b): (u32, u32), mut n: u32) -> Res<u32> {
    #![allow(clippy::needless_late_init)]
    n += a + b;
    Ok(n)
}

#[circuit_breaker]
async fn question_mark(input: &str) -> Res<u32> {
    let n: u32 = input
        .parse()
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    if n == 0 {
        return Err(Down);
    }
    Ok(n)
}

fn classify_u32(_: &u32) -> Outcome {
    Outcome::Success
}

async fn zero(_input: u32, _rejected: breakerbox::Rejected) -> u32 {
    0
}

#[circuit_breaker(classify = classify_u32, fallback = zero, name = "pass::custom")]
async fn custom(input: u32) -> u32 {
    input
}

struct Status(u16);

impl Classify for Status {
    fn classify(&self) -> Outcome {
        if self.0 >= 500 {
            Outcome::Failure
        } else {
            Outcome::Success
        }
    }
}

async fn unavailable(_rejected: breakerbox::Rejected) -> Status {
    Status(503)
}

#[circuit_breaker(fallback = unavailable)]
async fn not_a_result() -> Status {
    Status(200)
}

#[circuit_breaker(key = host, max_keys = 16)]
async fn keyed_by_str(host: &str) -> Res<()> {
    let _ = host;
    Ok(())
}

#[circuit_breaker(key = port)]
async fn keyed_by_value(port: u16) -> Res<u16> {
    Ok(port)
}

fn main() {
    fn is_send<T: Send>(_: T) {}
    is_send(plain("0"));
    is_send(generic(1, 2u8));
    is_send(borrowed("a", "b"));
    is_send(impl_trait_arg(vec![1, 2]));
    is_send(patterns((1, 2), 3));
    is_send(question_mark("4"));
    is_send(custom(5));
    is_send(not_a_result());
    is_send(keyed_by_str("10.0.0.1"));
    is_send(keyed_by_value(7000));
}
