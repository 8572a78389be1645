//! `Classify` for the error and response types of the ecosystem, and rejections as their
//! answers, each behind its feature.

#[cfg(feature = "axum")]
mod axum;
#[cfg(any(feature = "tonic", feature = "tonic013"))]
mod grpc;
#[cfg(feature = "http")]
pub(crate) mod http;
#[cfg(feature = "reqwest")]
mod reqwest;
#[cfg(feature = "tokio")]
mod tokio;
#[cfg(feature = "tonic")]
mod tonic;
#[cfg(feature = "tonic013")]
mod tonic013;
