//! Examples and integration tests of `breaker`, and the code they share. Its docs run the
//! README's code.
#![doc = include_str!("../README.md")]

pub mod simulation;
