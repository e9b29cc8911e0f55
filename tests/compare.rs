//! `compare` through the binary: two ordinary runs of the same build are
//! not called a regression; a +30 % cost planted into one series is
//! `regressed` and an O(1) → O(n) change `class-changed`, with the exit
//! codes `--fail-on` promises; the Markdown and JSON forms carry the same.

use crate::common;

use common::{bin, load};
use serde_json::Value;
use std::path::Path;

/// One measuring test at a time: two runs meant to be alike must not
/// differ by another test's runs beside one of them.
static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one() -> std::sync::MutexGuard<'static, ()> {
    ONE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `socket` and `mmap` into `a` and `b` at once: two runs meant to
/// be alike see the same machine (one after the other beside other
/// tests, the second could be far dearer than its own noise allows: a
/// regression found where there is none).
fn run_both(a: &Path, b: &Path) {
    let start = |out: &Path| {
        bin()
            .args(["run", "socket", "mmap", "--max", "3000", "--runs", "5"])
            .args(["-q", "--no-report", "-o"])
            .arg(out)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let children = [start(a), start(b)];
    for c in children {
        let r = c.wait_with_output().unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    }
}

/// Rewrites every sample of `series` in the file with `f(n, ns)`.
fn plant(from: &Path, to: &Path, series: &str, f: impl Fn(f64, f64) -> f64) {
    let mut doc: Value = load(from);
    for b in doc["benchmarks"].as_array_mut().unwrap() {
        if b["series"] != series {
            continue;
        }
        for r in b["runs"].as_array_mut().unwrap() {
            for s in r["samples"].as_array_mut().unwrap() {
                let (n, ns) = (s[0].as_f64().unwrap(), s[1].as_f64().unwrap());
                s[1] = Value::from(f(n, ns).round() as u64);
            }
        }
    }
    std::fs::write(to, serde_json::to_vec(&doc).unwrap()).unwrap();
}

fn compare(base: &Path, new: &Path, extra: &[&str]) -> (Option<i32>, Value) {
    let r = bin()
        .arg("compare")
        .arg(base)
        .arg(new)
        .args(["--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&r.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&r.stderr)));
    (r.status.code(), doc)
}

fn outcome<'a>(doc: &'a Value, name: &str) -> &'a str {
    doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("{name} not in {doc}"))["outcome"]
        .as_str()
        .unwrap()
}

#[test]
fn planted_changes_are_found_and_ordinary_runs_pass() {
    let _one = one();
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    run_both(&a, &b);
    // Two runs of the same build: no regression, exit 0 with --fail-on.
    let (code, doc) = compare(&a, &b, &["--fail-on", "regression"]);
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(doc["schema"], "scalebench-compare");
    for s in ["socket", "mmap"] {
        assert_ne!(outcome(&doc, s), "regressed", "{doc:#}");
        assert_ne!(outcome(&doc, s), "not-comparable", "{doc:#}");
    }
    // Both made their runs in passes, and say so; a file whose series
    // say one ascending pass was measured by another path: a warning.
    let passes = |doc: &Value| {
        doc["benchmarks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|b| b["params"]["extra"]["order"] == "passes")
    };
    assert!(passes(&load(&a)) && passes(&load(&b)));
    let warned = |doc: &Value| {
        doc["warnings"].as_array().unwrap().iter().any(|w| {
            w.as_str()
                .unwrap()
                .starts_with("measured by different paths")
        })
    };
    assert!(!warned(&doc), "{doc:#}");
    let up = dir.path().join("up.json");
    let mut d = load(&b);
    for x in d["benchmarks"].as_array_mut().unwrap() {
        x["params"]["extra"]["order"] = "up".into();
    }
    std::fs::write(&up, serde_json::to_vec(&d).unwrap()).unwrap();
    let (_, doc_up) = compare(&a, &up, &[]);
    assert!(warned(&doc_up), "{doc_up:#}");
    let w = doc_up["warnings"].to_string();
    assert!(w.contains("benchmark run order passes → up"), "{w}");
    // A file from before the order was recorded is no other path.
    let old = dir.path().join("old.json");
    let mut d = load(&b);
    for x in d["benchmarks"].as_array_mut().unwrap() {
        x["params"]["extra"]
            .as_object_mut()
            .unwrap()
            .remove("order");
    }
    std::fs::write(&old, serde_json::to_vec(&d).unwrap()).unwrap();
    let (_, doc_old) = compare(&old, &a, &[]);
    assert!(!warned(&doc_old), "{doc_old:#}");

    // +30 % on every socket sample of the second run. Two invocations
    // differ by themselves (up to ±15 % here), so the planted change is
    // held to what it must show on top of that: the ratio moves by 1.3,
    // and it is a regression whenever the two runs agreed within 5 %.
    let ratio = |doc: &Value| {
        doc["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == "socket")
            .unwrap()["cost"]["ratio"]["value"]
            .as_f64()
            .unwrap()
    };
    let natural = ratio(&doc);
    let slow = dir.path().join("slow.json");
    plant(&b, &slow, "socket", |_, ns| ns * 1.3);
    let (code, doc) = compare(&a, &slow, &[]);
    assert_eq!(code, Some(0), "no --fail-on: report only");
    assert!((ratio(&doc) / natural - 1.3).abs() < 0.02, "{doc:#}");
    // A regression must be found when the two runs agreed and were quiet:
    // a run with 16 % run-to-run noise (a busy machine) rightly cannot
    // tell +30 % from noise (its threshold is twice the larger noise).
    let quiet = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "socket")
        .unwrap()["cost"]["noise"]
        .as_array()
        .unwrap()
        .iter()
        .all(|x| x.as_f64().unwrap() <= 0.05);
    if (natural - 1.0).abs() <= 0.05 && quiet {
        assert_eq!(outcome(&doc, "socket"), "regressed", "{doc:#}");
    }
    // On the same run, doubling is always a regression: the threshold is
    // at most 25 %, and the interval from resampling 5 runs stays above it
    // even when the runs differ by 17 % (a +30 % plant on such a run came
    // out +14 %..+48 %: rightly undecided against ±25 %).
    let slow = dir.path().join("slow-a.json");
    plant(&a, &slow, "socket", |_, ns| ns * 2.0);
    let (_, doc) = compare(&a, &slow, &[]);
    assert_eq!(outcome(&doc, "socket"), "regressed", "{doc:#}");
    let (code, _) = compare(&a, &slow, &["--fail-on", "regression"]);
    assert_eq!(code, Some(3));
    let (code, _) = compare(&a, &slow, &["--fail-on", "class-change"]);
    assert_eq!(code, Some(0), "a cost is not a class");
    // And the other way round it is an improvement.
    let (_, doc) = compare(&slow, &a, &[]);
    assert_eq!(outcome(&doc, "socket"), "improved", "{doc:#}");

    // O(1) → O(n): the cost triples from n = 0 to 3 000.
    let linear = dir.path().join("linear.json");
    plant(&b, &linear, "socket", |n, ns| ns + ns * 2.0 * n / 3000.0);
    let (code, doc) = compare(&a, &linear, &["--fail-on", "class-change"]);
    assert_eq!(outcome(&doc, "socket"), "class-changed", "{doc:#}");
    let row = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "socket")
        .unwrap();
    // O(n), or a range that holds it (the data may not tell it from
    // n log n: one CI run read `O(n)–O(n log n)`).
    let new_class = scalebench::analysis::Label::parse(row["new_class"].as_str().unwrap());
    assert!(
        new_class.is_some_and(|l| l.names(scalebench::analysis::Class::Linear)),
        "{row}"
    );
    assert_eq!(code, Some(3));
    let (code, _) = compare(&a, &linear, &["--fail-on", "regression"]);
    assert_eq!(code, Some(3), "a faster-growing class is a regression");

    // For `git bisect run`: 0 good, 1 bad, 125 skip, 128 stop.
    let bisect = |base: &Path, new: &Path| {
        let o = bin()
            .args(["compare", "--bisect"])
            .arg(base)
            .arg(new)
            .args(["--format", "json"])
            .output()
            .unwrap();
        (o.status.code(), common::text(&o.stderr))
    };
    let (code, said) = bisect(&a, &a);
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("compare --bisect: good"), "{said}");
    let (code, said) = bisect(&a, &linear);
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("bad: socket regressed"), "{said}");
    assert_eq!(bisect(&a, &slow).0, Some(1));
    // NEW missing (its kernel never booted): skipped.
    let none = dir.path().join("none.json");
    let (code, said) = bisect(&a, &none);
    assert_eq!(code, Some(125), "{said}");
    assert!(said.contains("none.json"), "{said}");
    // A series NEW lacks cannot be judged: skipped, nothing regressed.
    let lacking = dir.path().join("lacking.json");
    let mut doc = load(&a);
    doc["benchmarks"]
        .as_array_mut()
        .unwrap()
        .retain(|b| b["series"] != "mmap");
    std::fs::write(&lacking, doc.to_string()).unwrap();
    let (code, said) = bisect(&a, &lacking);
    assert_eq!(code, Some(125), "{said}");
    assert!(said.contains("skip: mmap cannot be judged"), "{said}");
    // BASE missing: the bisection itself is wrong, and stops.
    let (code, said) = bisect(&none, &a);
    assert_eq!(code, Some(128), "{said}");
    let o = bin()
        .args(["compare", "--bisect", "--fail-on", "regression"])
        .arg(&a)
        .arg(&a)
        .output()
        .unwrap();
    // --bisect and --fail-on conflict: a command line that does not
    // parse stops a bisection (128), never calls the commit bad (2).
    assert_eq!(o.status.code(), Some(128), "{}", common::text(&o.stderr));

    // The Markdown form, for a pull-request comment.
    let md = bin()
        .arg("compare")
        .arg(&a)
        .arg(&slow)
        .args(["--format", "markdown"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&md.stdout);
    assert!(text.contains("| ❌ | socket | regressed |"), "{text}");
}

#[test]
fn bad_input_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    let r = bin()
        .arg("compare")
        .arg(&missing)
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains("missing.json"));
    let r = bin()
        .args(["compare", "a", "b", "--threshold", "lots"])
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("`lots`"));
}

#[test]
fn history_follows_a_cost_over_five_files_and_marks_the_change() {
    let _one = one();
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for i in 0..5 {
        let f = dir.path().join(format!("h{i}.json"));
        let r = bin()
            .args([
                "run",
                "socket",
                "--max",
                "1000",
                "--runs",
                "5",
                "-q",
                "--no-report",
                "-o",
            ])
            .arg(&f)
            .output()
            .unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        files.push(f);
    }
    // The fourth file is 2.5 times slower, and the fifth the same run
    // again: one change, at the fourth. (×1.6 was missed once in CI on a
    // loaded machine: the fourth run itself came out 14 % fast and noisy,
    // and +38 % with a wide interval is not called a regression.)
    plant(&files[3], &files[3], "socket", |_, ns| ns * 2.5);
    std::fs::copy(&files[3], &files[4]).unwrap();
    let r = bin()
        .arg("history")
        .args(&files)
        .args([
            "--format",
            "json",
            "--benchmark",
            "socket",
            "--order",
            "given",
        ])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let doc: Value = serde_json::from_slice(&r.stdout).unwrap();
    let t = &doc["tracks"][0];
    assert_eq!(t["name"], "socket");
    let points = t["points"].as_array().unwrap();
    assert_eq!(points.len(), 5);
    assert!(points.iter().all(|p| p["value"].as_f64().unwrap() > 0.0));
    let changes: Vec<&Value> = points.iter().map(|p| &p["change"]).collect();
    assert_eq!(changes[3], "regressed", "{t:#}");
    assert_eq!(changes[4], "unchanged", "no change after it: {t:#}");
    assert!(changes[0].is_null(), "nothing before the first: {t:#}");
    let html = dir.path().join("h.html");
    let r = bin()
        .arg("history")
        .args(&files)
        .args(["--format", "html", "--order", "given", "-o"])
        .arg(&html)
        .output()
        .unwrap();
    assert!(r.status.success());
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.contains("<figure class=\"history\"><svg") && text.contains("▲ regressed"));
    let r = bin()
        .arg("history")
        .args(&files[..2])
        .args(["--benchmark", "nosuch"])
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains("`nosuch`"));
}

/// `history --at 1000000000000` printed a cost at n = 10¹² from
/// data measured up to n = 299. A cost is read only where a file measured:
/// outside, the point has none and says so; outside every file, refused.
#[test]
fn history_never_extrapolates_a_cost() {
    let _one = one();
    let dir = tempfile::tempdir().unwrap();
    let measure = |name: &str, max: &str| {
        let f = dir.path().join(name);
        let r = bin()
            .args([
                "run",
                "socket",
                "--max",
                max,
                "--runs",
                "2",
                "-q",
                "--no-report",
                "-o",
            ])
            .arg(&f)
            .output()
            .unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        f
    };
    let small = measure("small.json", "300");
    let large = measure("large.json", "600");
    let r = bin()
        .arg("history")
        .args([&small, &large])
        .args(["--at", "1000000000000"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--at 1000000000000: no file has a cost there")
            && err.contains("this file measured n = 0–299 (not extrapolated)"),
        "{err}"
    );
    assert!(r.stdout.is_empty(), "no figure printed");
    let r = bin()
        .arg("history")
        .args([&small, &large])
        .args(["--at", "500", "--order", "given", "-f", "json"])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let doc: Value = serde_json::from_slice(&r.stdout).unwrap();
    let points = &doc["tracks"][0]["points"];
    assert!(points[0]["value"].is_null(), "{points}");
    assert_eq!(
        points[0]["note"],
        "no cost at n = 500: this file measured n = 0–299 (not extrapolated)"
    );
    assert!(points[1]["value"].as_f64().unwrap() > 0.0, "{points}");
}
