//! Writes the README's first Rust code block to `OUT_DIR/readme_example.rs`, with every
//! `breakerbox` replaced by the name this package's manifest gives the runtime.

use std::path::Path;
use std::{env, fs};

fn main() {
    let manifest = env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let readme = Path::new(&manifest).join("../../../README.md");
    println!("cargo:rerun-if-changed={}", readme.display());
    let text = fs::read_to_string(&readme).expect("the README is readable");
    let name = env::var("CARGO_PKG_NAME").expect("cargo sets CARGO_PKG_NAME");
    let dependency = name
        .strip_prefix("renamed-as-")
        .expect("a package named renamed-as-<dependency>");
    let example = first_rust_block(&text).expect("the README has a ```rust block");
    let out =
        Path::new(&env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("readme_example.rs");
    fs::write(out, example.replace("breakerbox", dependency)).expect("OUT_DIR is writable");
}

fn first_rust_block(text: &str) -> Option<String> {
    let mut lines = text.lines().skip_while(|l| l.trim() != "```rust");
    lines.next()?;
    let block: Vec<&str> = lines.take_while(|l| l.trim() != "```").collect();
    Some(block.join("\n") + "\n")
}
