//! The README's first example, its `breakerbox` spelled as this package's dependency is named.

include!(concat!(env!("OUT_DIR"), "/readme_example.rs"));
