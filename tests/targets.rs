//! Every file of `tests/` is a test target: this package lists its tests by name (`ui.rs` is
//! the root package's), and a file missing from the list would never run.

use std::collections::BTreeSet;
use std::path::Path;

/// The `path` of every `[[test]]` of a manifest.
fn test_paths(manifest: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let table: toml::Table = text.parse().unwrap();
    let Some(tests) = table.get("test").and_then(|t| t.as_array()) else {
        return BTreeSet::new();
    };
    tests
        .iter()
        .map(|t| {
            t["path"]
                .as_str()
                .unwrap()
                .trim_start_matches("tests/")
                .to_owned()
        })
        .collect()
}

#[test]
fn every_test_file_is_a_test_target() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files: BTreeSet<String> = std::fs::read_dir(here)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".rs"))
        .collect();
    let mut targets = test_paths(&here.join("Cargo.toml"));
    targets.extend(test_paths(&here.join("../Cargo.toml")));
    let unlisted: Vec<&String> = files.difference(&targets).collect();
    assert!(
        unlisted.is_empty(),
        "add a [[test]] to tests/Cargo.toml for each of {unlisted:?}"
    );
    let missing: Vec<&String> = targets.difference(&files).collect();
    assert!(missing.is_empty(), "no such test file: {missing:?}");
}
