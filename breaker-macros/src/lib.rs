//! Procedural macros of the `breaker` crate. Use them through `breaker`, not directly.
