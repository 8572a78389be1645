//! The README as the tests of its tables read it: its sections and their tables' cells.

use std::path::{Path, PathBuf};

/// A file of the workspace, by its path from the workspace's root.
pub fn workspace_file(path: &str) -> String {
    let root: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The text under the heading `heading` (exactly, `## Name`), up to the next heading of its
/// level or above.
pub fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let level = heading.split(' ').next().unwrap_or_default();
    let start = text
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("no section `{heading}`"))
        + heading.len()
        + 2;
    let rest = &text[start..];
    let end = rest
        .match_indices("\n#")
        .find(|&(at, _)| {
            let hashes = rest[at + 1..].bytes().take_while(|&b| b == b'#').count();
            hashes <= level.len() && rest[at + 1 + hashes..].starts_with(' ')
        })
        .map_or(rest.len(), |(at, _)| at);
    &rest[..end]
}

/// The rows of the first table in `text`, each a list of its cells, trimmed; without the
/// header and the line under it.
pub fn table_rows(text: &str) -> Vec<Vec<String>> {
    let lines: Vec<&str> = text
        .lines()
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .collect();
    assert!(lines.len() > 2, "no table with rows in:\n{text}");
    lines[2..]
        .iter()
        .map(|line| {
            line.trim()
                .trim_matches('|')
                .split(" | ")
                .map(|cell| cell.trim().to_owned())
                .collect()
        })
        .collect()
}

/// `cell` without the backticks around it: `` `window` `` is `window`.
pub fn code(cell: &str) -> &str {
    cell.strip_prefix('`')
        .and_then(|c| c.strip_suffix('`'))
        .unwrap_or_else(|| panic!("`{cell}` is not one code span"))
}
