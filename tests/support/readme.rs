//! The integration tests of `breaker` live beside this file, each a test target of this
//! package; its docs are the README, so that the README's code runs as doc tests.
#![doc = include_str!("../../README.md")]
