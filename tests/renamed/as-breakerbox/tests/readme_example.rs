//! The README's first example compiles under this package's name for the runtime, and runs to
//! its end: every assertion it makes holds.

use std::process::Command;

#[test]
fn the_readme_example_runs_under_this_name_for_the_runtime() {
    let out = Command::new(env!("CARGO_BIN_EXE_renamed-as-breakerbox"))
        .output()
        .expect("the example runs");
    assert!(
        out.status.success(),
        "the example failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}
