//! The body sees the names it would see without the attribute: the user's items, arguments and
//! generics, even where they are named like the items and locals of the expansion.

#![allow(non_upper_case_globals, non_snake_case, clippy::too_many_arguments)]

use breakerbox::{circuit_breaker, Rejected};

const BREAKER: u32 = 7;
static BREAKER_CONFIG: &str = "mine";

#[derive(Debug, PartialEq)]
struct Down;

impl breakerbox::Classify for Down {
    fn classify(&self) -> breakerbox::Outcome {
        breakerbox::Outcome::Failure
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

// Named like the runtime's functions the expansion calls.
fn run() -> u32 {
    1
}

fn run_once() -> u32 {
    2
}

#[circuit_breaker]
async fn plain() -> Result<u32, Down> {
    Ok(BREAKER)
}

#[circuit_breaker(key = BREAKER)]
async fn keyed() -> Result<(u32, &'static str), Down> {
    Ok((BREAKER, BREAKER_CONFIG))
}

#[circuit_breaker(window = 4, min = 2)]
async fn every_local(
    breaker: u32,
    permit: u32,
    rejected: u32,
    out: u32,
    admission: u32,
    key: u32,
    fallback_out: u32,
) -> Result<u32, Down> {
    Ok(breaker + permit + rejected + out + admission + key + fallback_out)
}

#[circuit_breaker(key = key, fallback = fallback)]
async fn keyed_locals(key: &str, breaker: u32, rejected: u32) -> Result<u32, Down> {
    Ok(breaker + rejected + key.len() as u32)
}

async fn fallback(
    _key: &str,
    _breaker: u32,
    _rejected: u32,
    _why: Rejected,
) -> Result<u32, Down> {
    Ok(0)
}

#[circuit_breaker(retries = 1, retry_backoff = "0s")]
async fn retried(
    breaker: u32,
    rejected: u32,
    out: u32,
    result: u32,
    timed_out: u32,
    admission: u32,
) -> Result<u32, Down> {
    Ok(breaker + rejected + out + result + timed_out + admission + run() + run_once())
}

#[circuit_breaker(timeout = "1s", key = key, fallback = timed_fallback)]
async fn timed_keyed(key: &str, result: u32, timed_out: u32) -> Result<u32, Down> {
    Ok(key.len() as u32 + result + timed_out + BREAKER)
}

async fn timed_fallback(
    _key: &str,
    _result: u32,
    _timed_out: u32,
    _why: Rejected,
) -> Result<u32, Down> {
    Ok(0)
}

#[circuit_breaker]
async fn generic<BREAKER_CONFIG: Into<u32>>(value: BREAKER_CONFIG) -> Result<u32, Down> {
    Ok(value.into() + BREAKER)
}

#[circuit_breaker]
async fn own_items() -> Result<(u32, &'static str), Down> {
    const BREAKER: u32 = 8;
    static BREAKER_CONFIG: &str = "inner";
    Ok((BREAKER, BREAKER_CONFIG))
}

struct Client {
    BREAKER: u32,
}

impl Client {
    const BREAKER_CONFIG: u32 = 3;

    #[circuit_breaker(key = self.BREAKER)]
    async fn method(&self, permit: u32) -> Result<u32, Down> {
        Ok(self.BREAKER + Self::BREAKER_CONFIG + BREAKER + permit)
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        assert_eq!(plain().await, Ok(7));
        assert_eq!(keyed().await, Ok((7, "mine")));
        assert_eq!(every_local(1, 2, 3, 4, 5, 6, 7).await, Ok(28));
        assert_eq!(keyed_locals("ab", 1, 2).await, Ok(5));
        assert_eq!(retried(1, 2, 3, 4, 5, 6).await, Ok(24));
        assert_eq!(timed_keyed("ab", 1, 2).await, Ok(12));
        assert_eq!(generic(1u8).await, Ok(8));
        assert_eq!(own_items().await, Ok((8, "inner")));
        assert_eq!(Client { BREAKER: 1 }.method(2).await, Ok(13));
    });
}
