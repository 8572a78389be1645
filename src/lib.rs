//! Examples and integration tests of `breaker`; this library only runs the README's code.
#![doc = include_str!("../README.md")]
