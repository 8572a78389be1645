//! What the tests share: the reference model (which the fuzz target includes by its path),
//! the model's runner of calls through the policy, and a breaker whose transitions are kept.

pub mod reference;
pub mod runner;
pub mod transitions;
