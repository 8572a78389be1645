//! What a breaker shows of itself: [`Snapshot`] (its state and window's counts, read
//! together), the [`Trial`] of its probes in HALF_OPEN, and the lifetime [`CallTotals`] with
//! the [`RejectedBy`] reason.
//!
//! ```
//! use breakerbox::snapshot::Snapshot;
//! use breakerbox::{Breaker, Config, State};
//!
//! let b = Breaker::new("libraryd", Config::default());
//! b.try_acquire().unwrap().failure();
//! let Snapshot { state, calls, failures, .. } = b.snapshot();
//! assert_eq!((state, calls, failures), (State::Closed, 1, 1));
//! ```

pub use crate::engine::{CallTotals, RejectedBy};
pub use crate::state::{Snapshot, Trial};
