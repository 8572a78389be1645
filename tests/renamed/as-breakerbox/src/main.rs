//! The README's first example, its `breakerbox` spelled as this package's dependency is named.

// The example shows the reader variants and fields it does not use.
#![allow(dead_code)]

include!(concat!(env!("OUT_DIR"), "/readme_example.rs"));
