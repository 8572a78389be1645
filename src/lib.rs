//! The code the examples share with the tests of `breaker`: the recovery simulation and the
//! replay tuner.

pub mod pricing;
pub mod simulation;
pub mod tune;
