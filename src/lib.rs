//! The code the examples share with the tests of `breakerbox`: the recovery simulation, the
//! pricing library of the boot example, and a `redis-server` for the fleet's tests.

pub mod pricing;
pub mod redis_server;
pub mod simulation;
