//! The README's first example, its `breakerbox` spelled as the package's dependency is named
//! (see `build.rs`). Shared by the `renamed-as-*` packages.

// The example shows the reader variants and fields it does not use.
#![allow(dead_code)]

include!(concat!(env!("OUT_DIR"), "/readme_example.rs"));
