//! The integration tests of the runtime: one binary, a module per subject, so that the
//! crate and the test dependencies link once. `cargo test -p breakerbox --test it rules::`
//! runs one subject's tests.
//!
//! The loom models are binaries of their own (`tests/loom.rs`, `tests/loom_open_period.rs`,
//! `tests/loom_open_cap.rs`, `tests/loom_time_lane.rs`):
//! they compile only under `--cfg loom`, where the runtime's atomics are loom's.

#[cfg(feature = "admin")]
mod admin;
mod bulkhead;
mod concurrency;
mod config;
#[cfg(feature = "policy")]
mod hedge;
mod model;
mod open_cap;
mod open_period;
mod probe_timeout;
mod production_clock;
mod pushback;
mod reconfigure;
mod recovery;
mod rules;
mod shadow;
mod throttle;
mod time_lane;
mod transition_reasons;
// Beside the binary, not in it: the fuzz target includes the reference model by its path.
#[path = "../support/mod.rs"]
mod support;
