//! Every file of `tests/it/` is a module of the binary: a file no `mod` names would never be
//! compiled, and its tests would never run. And the package's other test targets are the
//! ones its manifest lists.

use std::collections::BTreeSet;
use std::path::Path;

/// The `.rs` files of `dir`, without the extension.
fn files(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter_map(|name| name.strip_suffix(".rs").map(str::to_owned))
        .collect()
}

/// The modules `file` declares (`mod name;` and `pub mod name;`).
fn modules(file: &Path) -> BTreeSet<String> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .filter_map(|line| {
            let line = line.trim().trim_start_matches("pub ");
            line.strip_prefix("mod ")?
                .strip_suffix(';')
                .map(str::to_owned)
        })
        .collect()
}

#[test]
fn every_file_of_the_binary_is_a_module() {
    let it = Path::new(env!("CARGO_MANIFEST_DIR")).join("it");
    let mut top = files(&it);
    top.remove("main");
    for (declared_in, declared, found) in [
        ("it/main.rs", modules(&it.join("main.rs")), top),
        (
            "it/support.rs",
            modules(&it.join("support.rs")),
            files(&it.join("support")),
        ),
    ] {
        let missing: Vec<&String> = found.difference(&declared).collect();
        assert!(
            missing.is_empty(),
            "add `mod` lines to {declared_in} for {missing:?}"
        );
        let gone: Vec<&String> = declared.difference(&found).collect();
        assert!(
            gone.is_empty(),
            "{declared_in} declares modules with no file: {gone:?}"
        );
    }
}

#[test]
fn the_package_s_other_test_files_are_its_listed_targets() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest: toml::Table = std::fs::read_to_string(here.join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let targets: BTreeSet<String> = manifest["test"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["path"].as_str().unwrap().to_owned())
        .collect();
    let mut found: BTreeSet<String> = files(here).into_iter().map(|f| f + ".rs").collect();
    // The root package's test of the attribute's compile errors.
    found.remove("ui.rs");
    found.insert("it/main.rs".to_owned());
    assert_eq!(targets, found);
}
