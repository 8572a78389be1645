//! The call policy around the breaker: each attempt's timeout, the retries of failed
//! attempts with their backoff and budget, in the order the breaker needs them.
//!
//! [`Breaker::run`](crate::Breaker::run) runs a call under its breaker's current
//! [`Policy`](crate::config::Policy); `#[circuit_breaker(timeout = ..., retries = ...)]` expands to
//! the same runner. One call, in order: a bulkhead slot for the whole call, then for each
//! attempt the breaker is asked, the attempt runs under the timeout, its output is judged and
//! recorded, and only a failure is retried, within the retries and the budget, after a
//! backoff. A rejection is never retried nor counted as a failure: it did not reach the
//! downstream, and counting it would keep an open breaker open by itself.
//!
//! # Against the peers
//!
//! - seatbelt (Microsoft) and tower-resilience stack a retry layer, a breaker layer and a
//!   timeout layer that share no state: whether a retry asks the breaker depends on the order
//!   of the layers, whether a rejection is retried on the user's recovery function, and
//!   neither bounds retries by a budget. Here the runner owns the order, and the budget is
//!   the breaker's.
//! - tower's `TpsBudget` keeps the same kind of budget (Finagle's, Envoy's: a ratio of the
//!   recent first attempts plus a floor a second), but withdraws `1 / ratio` tokens rounded
//!   down to an integer, so a ratio of 0.3 allows a third, and 0.4 a third too. Ours holds
//!   the ratio in parts per billion and compares in integers: 0.3 allows exactly 3 retries
//!   per 10 first attempts. And `TpsBudget` reads tokio's clock only; ours counts on the
//!   breaker's own clock, the one its windows and open periods use, so a
//!   [`ManualClock`](crate::clock::ManualClock) drives it too.
//! - Waits and timeouts are on tokio's clock, so `tokio::time::pause()` makes them exact.

mod error;
mod timed_out;

#[cfg(feature = "policy")]
pub(crate) mod backoff;
#[cfg(feature = "policy")]
mod blocking;
#[cfg(feature = "policy")]
pub(crate) mod budget;
#[cfg(feature = "policy")]
mod hedge;
#[cfg(feature = "policy")]
mod published;
#[cfg(feature = "policy")]
pub(crate) mod run;

pub use self::error::{CallError, CallFailure};
#[cfg(feature = "policy")]
pub(crate) use self::published::{Plan, PolicyState};
pub use self::timed_out::TimedOut;
