//! A test that needs the process to itself runs its body in a process of its own: the same
//! binary started again for that test alone, and it passes when that process passes. The
//! process registry's fleet (`FleetBuilder::join(registry())`) is one per process, and joins every breaker of the
//! registry that has the fleet on; 100,000 keyed breakers would stay in the registry, which
//! other tests read whole.

use std::process::Command;

/// Names the one test a process started by [`alone`] runs.
const ALONE: &str = "BREAKER_TESTS_ALONE";

/// Whether the calling test runs its body here. In the binary's own process it starts the
/// binary again for the test at `path` (`module_path!()` and the test's name), waits for it
/// and answers `false` once it passed; in that second process it answers `true`.
///
/// # Panics
///
/// If the second process fails, or runs no test of that name.
pub fn alone(path: &str) -> bool {
    // The binary's crate name is not part of a test's name.
    let name = path.split_once("::").map_or(path, |(_, name)| name);
    if std::env::var(ALONE).is_ok_and(|alone| alone == name) {
        return true;
    }
    let out = Command::new(std::env::current_exe().expect("the test binary's path"))
        .args([name, "--exact", "--test-threads=1"])
        .env(ALONE, name)
        .output()
        .expect("the test binary starts again");
    let stdout = String::from_utf8_lossy(&out.stdout);
    print!("{stdout}");
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success(),
        "{name}, in a process of its own, failed"
    );
    assert!(
        stdout.contains("test result: ok. 1 passed;"),
        "no test is named {name}"
    );
    false
}
