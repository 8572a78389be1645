//! A pricing client whose breakers exist before its first call: the library side of
//! `examples/boot.rs` and `tests/static_registration.rs`. Nothing in this module is called
//! before they look at the registry; the attribute registered each breaker at the registry's
//! first access.

use breakerbox::{circuit_breaker, Classify, Outcome, Rejected};

/// The registry name of [`get_price`].
pub const GET_PRICE: &str = "pricing::get_price";

/// The registry name of [`PriceClient::refresh`]: the type's path, then the method.
pub const REFRESH: &str = "breaker_workspace::pricing::PriceClient::refresh";

/// The registry name of the keyed family of [`quote`], one breaker per region.
pub const QUOTE: &str = "pricing::quote";

/// Why a price could not be had.
#[derive(Debug, PartialEq, Eq)]
pub enum PriceError {
    /// The pricing service failed to answer.
    Unavailable,
    /// The breaker did not let the call through.
    Rejected,
}

impl Classify for PriceError {
    fn classify(&self) -> Outcome {
        match self {
            PriceError::Unavailable => Outcome::Failure,
            // The breaker's own answer says nothing new about the pricing service.
            PriceError::Rejected => Outcome::Ignored,
        }
    }
}

impl From<Rejected> for PriceError {
    fn from(_: Rejected) -> Self {
        PriceError::Rejected
    }
}

/// The price of `sku` in cents; `up` says whether the pricing service answers.
#[circuit_breaker(
    name = "pricing::get_price",
    window = 20,
    min = 10,
    rate = 0.5,
    open = "10s"
)]
pub async fn get_price(sku: &str, up: bool) -> Result<u32, PriceError> {
    if up {
        Ok(100 + sku.len() as u32)
    } else {
        Err(PriceError::Unavailable)
    }
}

/// The price of `sku` in `region`, with one breaker per region.
#[circuit_breaker(name = "pricing::quote", key = region, window = 10, min = 5, max_keys = 64)]
pub async fn quote(region: &str, sku: &str) -> Result<u32, PriceError> {
    Ok(200 + sku.len() as u32 + region.len() as u32)
}

/// A client of the pricing service.
#[derive(Debug, Default)]
pub struct PriceClient;

impl PriceClient {
    /// Reloads the price list.
    #[circuit_breaker(window = 5, min = 5)]
    pub async fn refresh(&self) -> Result<(), PriceError> {
        Ok(())
    }
}
