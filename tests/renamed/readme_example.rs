//! The README's first example compiles under each package's name for the runtime, and runs to
//! its end: every assertion it makes holds. Shared by the `renamed-as-*` packages.

use std::process::Command;

#[test]
fn the_readme_example_runs_under_this_name_for_the_runtime() {
    let out = Command::new(env!(concat!("CARGO_BIN_EXE_", env!("CARGO_PKG_NAME"))))
        .output()
        .expect("the example runs");
    assert!(
        out.status.success(),
        "the example failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}
