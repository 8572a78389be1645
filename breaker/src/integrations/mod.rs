//! `Classify` for the error and response types of the ecosystem, each behind its feature.

#[cfg(feature = "http")]
pub(crate) mod http;
#[cfg(feature = "reqwest")]
mod reqwest;
#[cfg(feature = "tokio")]
mod tokio;
#[cfg(feature = "tonic")]
mod tonic;
