//! Outputs never destroy anything: through the binary, every command that
//! writes a file refuses to write over its own input, over anything that
//! is not a regular file (a link, a directory, a device) and into a
//! directory that does not exist; `run` refuses an existing result file
//! unless `--force`, and its default names never collide.

use assert_cmd::Command as AssertCommand;
use predicates::prelude::*;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

use crate::common;
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
    refused(
        sb().arg("export").arg(&r).args(["--force", "-o"]).arg(&r),
        "is also an input",
    );
    refused(
        sb().args(["why", "--force", "-o"])
            .arg(t.path().join("b.json"))
            .arg(t.path().join("b.json")),
        "b.json",
    );
    assert_eq!(std::fs::read(&r).unwrap(), before, "the input is untouched");
}

/// A writing command's arguments, with `{out}` where the output goes, and
/// what it writes there (a prefix of the new contents).
struct Writer {
    name: &'static str,
    args: Vec<String>,
    writes: &'static str,
}

/// Every command that writes a file, each with one small real input.
fn writers(dir: &Path) -> Vec<Writer> {
    let a = dir.join("a.json");
    let b = dir.join("b.json");
    measure(&a);
    measure(&b);
    let (a, b) = (a.display().to_string(), b.display().to_string());
    let w = |name, args: &[&str], writes| Writer {
        name,
        args: args.iter().map(|x| x.to_string()).collect(),
        writes,
    };
    vec![
        w(
            "report -o",
            &["report", &a, "-f", "json", "-o", "{out}"],
            "{",
        ),
        w(
            "report --html",
            &["report", &a, "--html", "{out}"],
            "<!doctype html>",
        ),
        w(
            "export -o",
            &["export", &a, "-o", "{out}"],
            "system,benchmark",
        ),
        w("compare -o", &["compare", &a, &b, "-o", "{out}"], ""),
        w(
            "history -o",
            &["history", &a, &b, "-f", "json", "-o", "{out}"],
            "{",
        ),
        w(
            "why -o",
            &[
                "why",
                &a,
                "--only",
                "socket",
                "--seconds",
                "0.2",
                "-q",
                "-o",
                "{out}",
            ],
            "{",
        ),
        w(
            "run -o",
            &[
                "run",
                "socket",
                "--max",
                "100",
                "--runs",
                "1",
                "-q",
                "--no-report",
                "-o",
                "{out}",
            ],
            "{",
        ),
    ]
}

fn with_out(args: &[String], out: &Path, force: bool) -> AssertCommand {
    let mut c = sb();
    for a in args {
        if a == "{out}" {
            c.arg(out);
        } else {
            c.arg(a);
        }
    }
    if force {
        c.arg("--force");
    }
    c
}

/// The bug: report, export, compare, history and why replaced
/// an existing file (another result file) without a word. Now every
/// writing command refuses an existing file unless `--force`, refuses a
/// link even then, and with `--force` replaces a regular file.
#[test]
fn every_writing_command_refuses_an_existing_file_unless_forced() {
    let t = tempfile::tempdir().unwrap();
    let cases = writers(t.path());
    let victim = t.path().join("victim.txt");
    std::fs::write(&victim, "keep").unwrap();
    for w in &cases {
        let out = t
            .path()
            .join(format!("{}.out", w.name.replace([' ', '-'], "_")));
        std::fs::write(&out, "precious").unwrap();
        refused(&mut with_out(&w.args, &out, false), "exists; use --force");
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            "precious",
            "{}",
            w.name
        );
        let link = t
            .path()
            .join(format!("{}.link", w.name.replace([' ', '-'], "_")));
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        refused(&mut with_out(&w.args, &link, true), "symbolic link");
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "keep",
            "{}",
            w.name
        );
        let r = with_out(&w.args, &out, true).assert();
        // compare exits 0 (no --fail-on); every other command too.
        r.success();
        let got = std::fs::read_to_string(&out).unwrap();
        assert_ne!(got, "precious", "{}: --force replaced nothing", w.name);
        assert!(got.starts_with(w.writes), "{}: {got:.80}", w.name);
    }
}

/// `report --svg-dir`: the charts go into the directory given (made when
/// only it is missing), never over an existing chart without `--force`,
/// never through a link, and nothing is written when one is refused.
#[test]
fn svg_charts_follow_the_output_rules() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().join("a.json");
    measure(&r);
    let svg = t.path().join("svg");
    let md = t.path().join("r.md");
    let report = |force: bool, md: &Path| {
        let mut c = sb();
        c.arg("report")
            .arg(&r)
            .args(["-f", "markdown", "--svg-dir"]);
        c.arg(&svg).arg("-o").arg(md);
        if force {
            c.arg("--force");
        }
        c
    };
    report(false, &md).assert().success();
    let chart = svg.join("socket.svg");
    assert!(std::fs::read_to_string(&chart).unwrap().contains("<svg"));
    assert!(std::fs::read_to_string(&md).unwrap().contains("socket.svg"));
    // Again: the chart exists, so nothing is written, not even the report.
    let md2 = t.path().join("r2.md");
    refused(&mut report(false, &md2), "socket.svg exists; use --force");
    assert!(!md2.exists(), "no report when a chart is refused");
    // A chart name that is a link to a file outside: refused even forced.
    let victim = t.path().join("victim.svg");
    std::fs::write(&victim, "keep").unwrap();
    std::fs::remove_file(&chart).unwrap();
    std::os::unix::fs::symlink(&victim, &chart).unwrap();
    refused(&mut report(true, &md2), "symbolic link");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    std::fs::remove_file(&chart).unwrap();
    report(true, &md).assert().success();
    assert!(std::fs::read_to_string(&chart).unwrap().contains("<svg"));
    // A parent that does not exist is not made.
    let deep = t.path().join("no/svg");
    let mut c = sb();
    c.arg("report")
        .arg(&r)
        .args(["-f", "markdown", "--svg-dir"])
        .arg(&deep);
    refused(&mut c, "does not exist");
    assert!(!t.path().join("no").exists());
}

/// `serve --object`: the case, `www/link.txt → ../victim.txt`
/// replaced a file outside the root through the link, and an existing
/// file in the root was overwritten. Now neither, and `--force` replaces
/// a regular file only.
#[test]
fn serve_objects_stay_in_the_root_and_replace_only_when_forced() {
    let t = tempfile::tempdir().unwrap();
    let www = t.path().join("www");
    std::fs::create_dir(&www).unwrap();
    let victim = t.path().join("victim.txt");
    std::fs::write(&victim, "keep").unwrap();
    std::os::unix::fs::symlink("../victim.txt", www.join("link.txt")).unwrap();
    std::fs::write(www.join("precious.json"), "precious").unwrap();
    let serve = |object: &str, force: bool| {
        let mut c = sb();
        c.arg("serve").arg("--root").arg(&www);
        c.args(["--addr", "127.0.0.1:0", "--object", object]);
        if force {
            c.arg("--force");
        }
        // Standard input a pipe closed at once: serve ends after starting.
        c.write_stdin("");
        c.timeout(std::time::Duration::from_secs(60));
        c
    };
    refused(&mut serve("precious.json=10", false), "exists; use --force");
    assert_eq!(
        std::fs::read_to_string(www.join("precious.json")).unwrap(),
        "precious"
    );
    refused(&mut serve("link.txt=10", true), "symbolic link");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    // A name with a directory part: refused as a usage error (exit 2).
    serve("../victim.txt=10", true)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("a file name without `/`"));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    serve("precious.json=10", true).assert().success();
    assert_eq!(
        std::fs::read(www.join("precious.json")).unwrap(),
        (0..10u8).collect::<Vec<u8>>()
    );
    serve("new.bin=5", false).assert().success();
    assert_eq!(std::fs::read(www.join("new.bin")).unwrap().len(), 5);
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
    // Options that do not go together: a usage error.
    sb().arg("report")
        .arg(&r)
        .arg("--svg-dir")
        .arg(t.path().join("svg"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--svg-dir"));
    sb().arg("report")
        .arg(&r)
        .args(["-f", "markdown", "--svg-dir"])
        .arg(t.path().join("svg"))
        .assert()
        .success();
}
