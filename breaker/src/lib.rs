//! A circuit breaker that gets the rules right.
//!
//! A breaker counts the outcomes of recent calls to a downstream. When failures reach a
//! threshold it rejects calls at once (OPEN); after a pause it lets a few probes through
//! (HALF_OPEN), and it closes again only when they succeed.
//!
//! ```
//! use std::time::Duration;
//! use breaker::{Breaker, Config, State};
//! use breaker::clock::ManualClock;
//!
//! let config = Config::builder()
//!     .count_window(20)
//!     .min_calls(10)
//!     .failure_rate(0.5)
//!     .open_for(Duration::from_secs(5))
//!     .probes(3)
//!     .build()?;
//! let clock = ManualClock::new();
//! let b = Breaker::with_clock("libraryd", config, clock.clone());
//!
//! for _ in 0..10 {
//!     b.try_acquire().unwrap().failure();
//! }
//! assert_eq!(b.state(), State::Open);
//! assert!(b.try_acquire().is_err());
//!
//! clock.advance(Duration::from_secs(5));
//! let probes: Vec<_> = (0..3).map(|_| b.try_acquire().unwrap()).collect();
//! assert!(b.try_acquire().is_err(), "at most 3 probes at once");
//! probes.into_iter().for_each(|p| p.success());
//! assert_eq!(b.state(), State::Closed);
//! # Ok::<(), breaker::ConfigError>(())
//! ```
//!
//! # The rules
//!
//! - The window counts **completed** calls only; rejected calls never enter it.
//! - Failure rate is `failures / completed` (not over the window size), compared with `>=`,
//!   and only once `min_calls` calls completed.
//! - HALF_OPEN admits at most `probes` calls **at once**; any probe failure reopens at once;
//!   a permit dropped without a result frees its slot.
//! - Every state change bumps a generation; a result from an earlier generation is discarded,
//!   so a late success can never close a breaker that just opened.
//! - OPEN expires lazily on the next call; there is no timer thread.
//! - Only downstream failures count, as [`Classify`] says; business errors are successes.
//!
//! # Features
//!
//! - `test-util`: the default clock follows tokio's, so `tokio::time::pause()` and
//!   `tokio::time::advance()` drive every breaker. Enable it in `[dev-dependencies]`.

#![forbid(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations)]

mod breaker;
mod classify;
pub mod clock;
mod config;
mod events;
mod latency;
mod machine;
mod permit;
mod recovery;
mod rejected;
mod state;
mod window;

pub use crate::breaker::Breaker;
pub use crate::classify::{Classify, Outcome};
pub use crate::config::{
    Config, ConfigBuilder, ConfigError, SlowCalls, Window, MAX_BUCKETS, MAX_COUNT_WINDOW,
};
pub use crate::events::Event;
pub use crate::permit::Permit;
pub use crate::rejected::{RejectReason, Rejected};
pub use crate::state::{Snapshot, State};
