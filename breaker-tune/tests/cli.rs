//! The `breakerbox-tune` binary: its help, its errors as sentences, and the name it takes from
//! the trace.

use std::path::Path;
use std::process::Command;

fn tool() -> Command {
    Command::new(env!("CARGO_BIN_EXE_breakerbox-tune"))
}

fn dir() -> &'static Path {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(dir).unwrap();
    dir
}

#[test]
fn help_names_the_trace_and_every_option() {
    let out = tool().arg("--help").output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for word in [
        "Usage: breakerbox-tune [OPTIONS] <TRACE>",
        "--name",
        "--svg",
        "--perturbations",
        "--seed",
        "--threads",
    ] {
        assert!(help.contains(word), "{word} missing from\n{help}");
    }
}

#[test]
fn a_trace_without_a_name_needs_one_and_the_error_is_a_sentence() {
    let trace = dir().join("unnamed.csv");
    std::fs::write(&trace, "t_ms,latency_ms,outcome\n0,1,success\n").unwrap();
    let out = tool().arg(&trace).output().unwrap();
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!(
            "error: the trace {} does not name its breaker (no `# breaker: NAME` line): pass \
             --name with the name the breaker is registered under\n",
            trace.display()
        )
    );
}

#[test]
fn a_bad_line_is_named_in_a_sentence() {
    let trace = dir().join("bad.csv");
    std::fs::write(
        &trace,
        "t_ms,latency_ms,outcome\n0,1,success\n5,1,crashed\n",
    )
    .unwrap();
    let out = tool().args(["--name", "a"]).arg(&trace).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with(&format!(
            "error: cannot read the trace {}:3: outcome must be one of",
            trace.display()
        )),
        "{err}"
    );
}

#[test]
fn the_name_in_the_trace_names_the_override_block() {
    let trace = dir().join("named.csv");
    let mut text = String::from("# breaker: app::get_book\nt_ms,latency_ms,outcome\n");
    for i in 0..2000u64 {
        let failed = (500..1000).contains(&i);
        text += &format!(
            "{},5,{}\n",
            i * 20,
            if failed { "failure" } else { "success" }
        );
    }
    std::fs::write(&trace, text).unwrap();
    let svg = dir().join("named.svg");
    let out = tool().arg(&trace).arg("--svg").arg(&svg).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = String::from_utf8(out.stdout).unwrap();
    assert!(
        report.contains("[\"app::get_book\"]\nwindow = "),
        "{report}"
    );
    let drawn = std::fs::read_to_string(&svg).unwrap();
    for label in ["closed", "half-open", "open", "slow stretch"] {
        assert!(
            drawn.contains(&format!("\n{label}\n</text>")),
            "the legend names {label}"
        );
    }
}
