//! The integration tests of `breakerbox` live beside this file, each a test target of this
//! package; its docs are the README, and its modules' docs the pages of `docs/` that hold
//! code, so that every code block of them runs as a doc test.
#![doc = include_str!("../../README.md")]

#[doc = include_str!("../../docs/calls.md")]
pub mod calls {}

#[doc = include_str!("../../docs/states.md")]
pub mod states {}

#[doc = include_str!("../../docs/integrations.md")]
pub mod integrations {}

#[doc = include_str!("../../docs/fleet.md")]
pub mod fleet {}

#[doc = include_str!("../../docs/tuning.md")]
pub mod tuning {}
