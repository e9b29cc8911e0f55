//! Outputs never destroy anything: through the binary, every command that
//! writes a file refuses to write over its own input, over anything that
//! is not a regular file (a link, a directory, a device) and into a
//! directory that does not exist; `run` refuses an existing result file
//! unless `--force`, and its default names never collide.

use assert_cmd::Command as AssertCommand;
use predicates::prelude::*;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

mod common;
use common::{bin, load};

fn sb() -> AssertCommand {
    AssertCommand::from_std(bin())
}

/// A small real result file at `path`.
fn measure(path: &Path) {
    sb().args([
        "run",
        "socket",
        "--max",
        "200",
        "--runs",
        "1",
        "-q",
        "--no-report",
        "-o",
    ])
    .arg(path)
    .assert()
    .success();
}

/// The refusal every case shares: exit 1, a message naming `what`, no
/// backtrace.
fn refused(cmd: &mut AssertCommand, what: &str) {
    cmd.assert()
        .code(1)
        .stderr(predicate::str::contains(what))
        .stderr(predicate::str::contains("panicked").not())
        .stderr(predicate::str::contains("RUST_BACKTRACE").not());
}

#[test]
fn run_refuses_an_existing_result_file_unless_forced() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("r.json");
    std::fs::write(&out, "precious").unwrap();
    refused(
        sb().args(["run", "socket", "--max", "200", "--runs", "1", "-q", "-o"])
            .arg(&out),
        "exists; use --force",
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "precious");
    // An HTML report of the same name beside it is refused the same way.
    let out2 = t.path().join("s.json");
    std::fs::write(t.path().join("s.html"), "mine").unwrap();
    refused(
        sb().args(["run", "socket", "--max", "200", "--runs", "1", "-q", "-o"])
            .arg(&out2),
        "s.html exists",
    );
    assert!(!out2.exists(), "nothing claimed when refused");
    assert_eq!(
        std::fs::read_to_string(t.path().join("s.html")).unwrap(),
        "mine"
    );
    // --force replaces regular files.
    sb().args([
        "run", "socket", "--max", "200", "--runs", "1", "-q", "--force", "-o",
    ])
    .arg(&out)
    .assert()
    .success();
    assert_eq!(load(&out)["benchmarks"][0]["name"], "socket");
    assert!(t.path().join("r.html").exists());
}

#[test]
fn run_does_not_write_its_html_over_its_result() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("res.html");
    refused(
        sb().args(["run", "socket", "--max", "200", "--runs", "1", "-q", "-o"])
            .arg(&out),
        "name the result file .json",
    );
    assert!(!out.exists());
    // With --no-report the name is the user's choice.
    sb().args([
        "run",
        "socket",
        "--max",
        "200",
        "--runs",
        "1",
        "-q",
        "--no-report",
        "-o",
    ])
    .arg(&out)
    .assert()
    .success();
    assert_eq!(load(&out)["benchmarks"][0]["name"], "socket");
}

#[test]
fn nothing_but_regular_files_is_replaced() {
    let t = tempfile::tempdir().unwrap();
    let target = t.path().join("target.json");
    std::fs::write(&target, "keep").unwrap();
    let link = t.path().join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let dir = t.path().join("d.json");
    std::fs::create_dir(&dir).unwrap();
    for (path, word) in [
        (link.as_path(), "symbolic link"),
        (dir.as_path(), "is a directory"),
        (Path::new("/dev/null"), "is a device"),
    ] {
        refused(
            sb().args([
                "run", "socket", "--max", "200", "--runs", "1", "-q", "--force",
            ])
            .args(["--no-report", "-o"])
            .arg(path),
            word,
        );
    }
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(dir.is_dir());
    assert!(
        std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    );
    // The report and export writers alike.
    let r = t.path().join("r.json");
    measure(&r);
    refused(
        sb().arg("report").arg(&r).arg("--html").arg(&link),
        "symbolic link",
    );
    refused(
        sb().arg("export").arg(&r).arg("-o").arg(&dir),
        "is a directory",
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
}

#[test]
fn no_output_is_an_input() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().join("a.json");
    measure(&r);
    let before = std::fs::read(&r).unwrap();
    refused(
        sb().arg("report").arg(&r).arg("--html").arg(&r),
        "is also an input",
    );
    refused(
        sb().arg("report")
            .arg(&r)
            .args(["-f", "csv", "-o"])
            .arg(t.path().join("./a.json")),
        "is also an input",
    );
    refused(
        sb().arg("export").arg(&r).arg("-o").arg(&r),
        "is also an input",
    );
    assert_eq!(std::fs::read(&r).unwrap(), before, "the input is untouched");
    // A different, existing regular file is replaced (atomically).
    let csv = t.path().join("x.csv");
    std::fs::write(&csv, "old").unwrap();
    sb().arg("export")
        .arg(&r)
        .arg("-o")
        .arg(&csv)
        .assert()
        .success();
    assert!(
        std::fs::read_to_string(&csv)
            .unwrap()
            .starts_with("system,benchmark,run,n,ns")
    );
}

#[test]
fn missing_directories_are_an_error_not_created() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("no/such/dir/x.json");
    refused(
        sb().args(["run", "socket", "--max", "200", "--runs", "1", "-q", "-o"])
            .arg(&out),
        "does not exist",
    );
    assert!(!t.path().join("no").exists());
    let r = t.path().join("a.json");
    measure(&r);
    refused(
        sb().arg("export")
            .arg(&r)
            .arg("-o")
            .arg(t.path().join("none/x.csv")),
        "does not exist",
    );
    assert!(!t.path().join("none").exists());
}

#[test]
fn default_names_never_collide() {
    let t = tempfile::tempdir().unwrap();
    for _ in 0..2 {
        sb().current_dir(t.path())
            .args([
                "run",
                "socket",
                "--max",
                "100",
                "--runs",
                "1",
                "-q",
                "--no-report",
            ])
            .assert()
            .success();
    }
    let files: Vec<_> = std::fs::read_dir(t.path().join("results"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    for f in &files {
        assert_eq!(
            load(f)["benchmarks"][0]["name"],
            "socket",
            "{}",
            f.display()
        );
    }
}

#[test]
fn svg_dir_needs_markdown() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().join("a.json");
    measure(&r);
    refused(
        sb().arg("report")
            .arg(&r)
            .arg("--svg-dir")
            .arg(t.path().join("svg")),
        "--svg-dir",
    );
    sb().arg("report")
        .arg(&r)
        .args(["-f", "markdown", "--svg-dir"])
        .arg(t.path().join("svg"))
        .assert()
        .success();
}
