//! Reports from committed fixture result files (tests/fixtures): a default
//! and a tuned run of the same machine (the tuned one with a failed
//! benchmark), and an empty one. Checked for structure, not pixels (the
//! browser test looks at the pixels).

use assert_cmd::prelude::*;
use predicates::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_scalebench"))
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn html_of(args: &[&str], files: &[PathBuf]) -> String {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("r.html");
    bin()
        .arg("report")
        .args(files)
        .args(args)
        .arg("--html")
        .arg(&out)
        .assert()
        .success();
    std::fs::read_to_string(&out).unwrap()
}

#[test]
fn html_has_a_chart_per_benchmark_and_a_series_per_system() {
    let html = html_of(&[], &[fixture("default.json"), fixture("tuned.json")]);
    assert!(html.starts_with("<!doctype html>"));
    // Self-contained: no script, no stylesheet or image to fetch.
    for external in ["<script", "<link", "src=", "@import", "url("] {
        assert!(!html.contains(external), "{external}");
    }
    // socket, bind and mmap have samples on both systems: a linear and a log
    // chart each, with both systems in them; fork-static failed: no chart.
    for series in ["socket", "bind", "mmap"] {
        for scale in ["linear", "log"] {
            let tag = format!("data-series=\"{series}\" data-scale=\"{scale}\" data-systems=\"2\"");
            assert_eq!(html.matches(&tag).count(), 1, "{series} {scale}");
        }
    }
    assert!(
        !html.contains("data-series=\"fork-static\" data-scale"),
        "no chart without samples"
    );
    assert_eq!(html.matches("<svg class=\"chart\"").count(), 6);
    assert_eq!(html.matches("<g class=\"system\"").count(), 12);
    // Every sample drawn, as an embedded density image per system and chart.
    assert_eq!(html.matches("<image class=\"density\"").count(), 12);
    assert!(html.contains("href=\"data:image/png;base64,"));
    assert!(!html.contains("thinned"));
    // Runs are told apart: a median line each.
    assert!(html.contains("class=\"run\" data-system=\"default\" data-run=\"3\""));
    // Verdict table: one row per series; the failed one says why.
    assert_eq!(html.matches("<tr class=\"verdict\"").count(), 4);
    assert!(html.contains("fork() failed with EAGAIN"));
    // Differences in sentences, and the differing system row highlighted.
    assert!(html.contains("<h2 id=\"differences\">What differs (against default)</h2>"));
    assert!(html.contains("fork-static: measured on tuned only, not on default"));
    assert!(
        html.contains("<tr class=\"differs\"><td>timer</td>"),
        "TSC against CLOCK_MONOTONIC"
    );
    // Units on the axes and a legend.
    assert!(html.contains("time per operation (µs") || html.contains("time per operation (ns"));
    assert!(html.contains(">a run</text>") && html.contains(">median</text>"));
}

#[test]
fn labels_can_be_given_per_file() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("r.html");
    bin()
        .arg("report")
        .arg("--label")
        .arg(format!("before={}", fixture("default.json").display()))
        .arg("--label")
        .arg(format!("after={}", fixture("tuned.json").display()))
        .arg("--html")
        .arg(&out)
        .assert()
        .success();
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("data-system=\"before\"") && html.contains("data-system=\"after\""));
    assert!(html.contains("What differs (against before)"));
    bin()
        .args(["report", "--label", "nolabel"])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "--relabel nolabel: expected NAME=FILE",
        ));
}

#[test]
fn json_report_has_verdicts_and_differences() {
    let out = bin()
        .arg("report")
        .arg(fixture("default.json"))
        .arg(fixture("tuned.json"))
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema"], "scalebench-report");
    assert_eq!(v["schema_version"], 2);
    assert_eq!(v["systems"].as_array().unwrap().len(), 2);
    let verdicts = v["verdicts"].as_array().unwrap();
    assert_eq!(verdicts.len(), 7);
    let failed = verdicts
        .iter()
        .find(|x| x["series"] == "fork-static")
        .unwrap();
    assert_eq!(failed["status"], "failed");
    assert!(failed["class"].is_null() && failed["error"].as_str().unwrap().contains("EAGAIN"));
    let ok = verdicts
        .iter()
        .find(|x| x["series"] == "socket" && x["system"] == "default")
        .unwrap();
    let class = ok["class"].as_str().unwrap();
    assert!(
        class.starts_with("O(") || ["undecided", "superlinear", "no fit"].contains(&class),
        "{class}"
    );
    let rise = &ok["rise"];
    let (lo, value, hi) = (
        rise["lo"].as_f64().unwrap(),
        rise["value"].as_f64().unwrap(),
        rise["hi"].as_f64().unwrap(),
    );
    assert!(lo <= value && value <= hi, "{rise}");
    assert!(
        (value - (ok["high_ns"].as_f64().unwrap() / ok["low_ns"].as_f64().unwrap() - 1.0)).abs()
            < 1e-9
    );
    if let Some(e) = ok["exponent"].as_object() {
        assert!(e["lo"].as_f64().unwrap() <= e["hi"].as_f64().unwrap());
    }
    let votes = ok["votes"].as_array().unwrap();
    let total: f64 = votes.iter().map(|x| x["share"].as_f64().unwrap()).sum();
    assert!((total - 1.0).abs() < 1e-9, "{votes:?}");
    let own = votes.iter().find(|x| x["what"] == class).unwrap();
    assert_eq!(own["share"], ok["confidence"]);
    assert!(ok["words"].as_str().unwrap().starts_with(class));
    let diffs = v["differences"].as_array().unwrap();
    assert!(
        diffs
            .iter()
            .any(|d| d["kind"] == "availability" && d["series"] == "fork-static")
    );
    assert!(
        diffs
            .iter()
            .all(|d| d["baseline"] == "default" && d["other"] == "tuned")
    );
}

#[test]
fn markdown_writes_charts_beside_it() {
    let t = tempfile::tempdir().unwrap();
    let svgs = t.path().join("charts");
    let out = bin()
        .arg("report")
        .arg(fixture("default.json"))
        .arg(fixture("tuned.json"))
        .args(["--format", "markdown", "--svg-dir"])
        .arg(&svgs)
        .output()
        .unwrap();
    assert!(out.status.success());
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.contains("**What differs** (against default)"));
    for s in ["socket", "bind", "mmap"] {
        let f = svgs.join(format!("{s}.svg"));
        assert!(f.exists(), "{s}.svg");
        let svg = std::fs::read_to_string(&f).unwrap();
        assert!(svg.starts_with("<svg class=\"chart\""));
        // Self-contained: the samples' image is in the file.
        assert!(svg.contains("<image class=\"density\"") && svg.contains("data:image/png;base64,"));
        assert!(md.contains(&format!("![{s}]({})", f.display())));
    }
}

#[test]
fn terminal_report_fits_100_columns() {
    let out = bin()
        .arg("report")
        .arg(fixture("default.json"))
        .arg(fixture("tuned.json"))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest <= 100, "{widest} columns:\n{text}");
    assert!(text.contains("What differs (against default):"));
}

#[test]
fn a_bad_file_is_named_and_the_rest_is_still_reported() {
    let t = tempfile::tempdir().unwrap();
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("tuned.json")).unwrap()).unwrap();
    let unknown = scalebench::results::SCHEMA_VERSION + 1;
    doc["schema_version"] = unknown.into();
    let newer = t.path().join("newer.json");
    std::fs::write(&newer, doc.to_string()).unwrap();
    let out = t.path().join("r.html");
    bin()
        .arg("report")
        .arg(fixture("default.json"))
        .arg(&newer)
        .arg("--html")
        .arg(&out)
        .assert()
        .failure()
        .stderr(predicate::str::contains(format!(
            "newer.json: schema version {unknown} is not supported"
        )));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("class=\"notice\">left out:") && html.contains("newer.json"));
    assert!(html.contains("data-series=\"socket\" data-scale=\"linear\" data-systems=\"1\""));
}

#[test]
fn an_empty_result_says_so() {
    let html = html_of(&[], &[fixture("empty.json")]);
    assert!(html.contains("No benchmark results in the input."));
}

#[test]
fn run_writes_the_html_report_beside_the_result() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("r.json");
    bin()
        .args(["run", "socket", "--max", "50", "--runs", "1", "-q", "--out"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "report:      {}",
            t.path().join("r.html").display()
        )));
    assert!(
        std::fs::read_to_string(t.path().join("r.html"))
            .unwrap()
            .contains("<svg class=\"chart\"")
    );
    let out2 = t.path().join("s.json");
    bin()
        .args([
            "run",
            "socket",
            "--max",
            "50",
            "--runs",
            "1",
            "-q",
            "--no-report",
            "--out",
        ])
        .arg(&out2)
        .assert()
        .success();
    assert!(!t.path().join("s.html").exists());
}

#[test]
fn a_directory_stands_for_the_result_files_in_it() {
    let t = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("default.json"), t.path().join("a.json")).unwrap();
    std::fs::copy(fixture("tuned.json"), t.path().join("b.json")).unwrap();
    // Not result files: left out, not read as one.
    std::fs::write(t.path().join("other.json"), "{\"x\": 1}").unwrap();
    std::fs::write(t.path().join("a.html"), "<html>").unwrap();
    let json = |args: &[&str]| -> Value {
        let o = bin().args(args).arg(t.path()).output().unwrap();
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let r = json(&["report", "-f", "json"]);
    let systems: Vec<&str> = r["systems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["label"].as_str().unwrap())
        .collect();
    assert_eq!(systems, ["default", "tuned"], "{r}");
    let h = json(&["history", "-f", "json"]);
    let points = h["tracks"][0]["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{h}");
    // A directory without result files is named.
    let empty = tempfile::tempdir().unwrap();
    bin()
        .arg("report")
        .arg(empty.path())
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "a directory with no scalebench result file (*.json) in it",
        ));
}

#[test]
fn a_kept_verdict_is_reused_until_its_runs_change_or_rejudge_is_asked() {
    let t = tempfile::tempdir().unwrap();
    let f = t.path().join("r.json");
    bin()
        .args(["run", "socket", "--max", "300", "--runs", "3", "-q", "-o"])
        .arg(&f)
        .assert()
        .success();
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    let kept = &doc["benchmarks"][0]["verdict"];
    let analysis = kept["analysis"].as_str().unwrap().to_string();
    let version = bin().arg("--version").output().unwrap().stdout;
    assert!(
        String::from_utf8_lossy(&version).contains(&format!("analysis {analysis})")),
        "the stamp is this build's analysis"
    );
    let class = |file: &Path, extra: &[&str]| -> String {
        let o = bin()
            .arg("report")
            .arg(file)
            .args(["-f", "json"])
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let r: Value = serde_json::from_slice(&o.stdout).unwrap();
        r["verdicts"][0]["class"].as_str().unwrap().to_string()
    };
    let judged = class(&f, &[]);
    assert_eq!(judged, kept["verdict"]["class"].as_str().unwrap());
    // The report reads the kept verdict rather than judging again: a
    // bound of the rise's interval moved where it decides nothing (the
    // lower bound of a flat or undecided series, the upper of a growing
    // one; the interval comes from the replicas, which a report does not
    // draw again) is shown as kept…
    let rise = kept["verdict"]["rise"].clone();
    let (bound, by) = if matches!(judged.as_str(), "O(1)" | "undecided") {
        ("lo", -0.001)
    } else {
        ("hi", 0.001)
    };
    let moved = rise[bound].as_f64().unwrap() + by;
    doc["benchmarks"][0]["verdict"]["verdict"]["rise"][bound] = moved.into();
    let p = t.path().join("moved.json");
    std::fs::write(&p, serde_json::to_string(&doc).unwrap()).unwrap();
    let shown = |file: &Path, extra: &[&str]| -> (Value, String) {
        let o = bin()
            .arg("report")
            .arg(file)
            .args(["-f", "json"])
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let r: Value = serde_json::from_slice(&o.stdout).unwrap();
        (
            r["verdicts"][0].clone(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (v, said) = shown(&p, &[]);
    assert_eq!(v["rise"][bound].as_f64().unwrap(), moved, "{v}");
    assert!(!said.contains("disagrees"), "{said}");
    // … --rejudge judges the runs again …
    let (v, _) = shown(&p, &["--rejudge"]);
    assert_eq!(v["rise"][bound], rise[bound], "{v}");
    // … a verdict planted with another class is never shown: it disagrees
    // with its own samples, is judged again and said so, once …
    let planted = if judged == "O(n^2)" {
        "O(log n)"
    } else {
        "O(n^2)"
    };
    doc["benchmarks"][0]["verdict"]["verdict"]["rise"] = rise.clone();
    doc["benchmarks"][0]["verdict"]["verdict"]["class"] = planted.into();
    std::fs::write(&p, serde_json::to_string(&doc).unwrap()).unwrap();
    let (v, said) = shown(&p, &[]);
    assert_eq!(v["class"], judged.as_str(), "{v}");
    assert_eq!(
        said.matches("disagrees with its samples").count(),
        1,
        "{said}"
    );
    assert!(said.contains(&format!("its class is {planted}")), "{said}");
    // … and a report of runs changed by hand judges them again, as ever.
    let ns = doc["benchmarks"][0]["runs"][0]["samples"][3][1]
        .as_u64()
        .unwrap();
    doc["benchmarks"][0]["runs"][0]["samples"][3][1] = (ns + 1).into();
    std::fs::write(&p, serde_json::to_string(&doc).unwrap()).unwrap();
    let (v, said) = shown(&p, &[]);
    assert_eq!(v["class"], judged.as_str(), "{v}");
    assert!(!said.contains("disagrees"), "{said}");
}

#[test]
fn the_output_file_s_extension_names_the_format() {
    let t = tempfile::tempdir().unwrap();
    // The report of the default fixture into `name`, with `args`.
    let report = |args: &[&str], name: &str| -> String {
        let out = t.path().join(name);
        bin()
            .arg("report")
            .arg(fixture("default.json"))
            .args(args)
            .arg("-o")
            .arg(&out)
            .assert()
            .success();
        std::fs::read_to_string(&out).unwrap()
    };
    assert!(report(&[], "r.html").starts_with("<!doctype html>"));
    assert!(report(&[], "r.md").contains("| benchmark"));
    // A --format that contradicts the extension is refused, nothing
    // written: terminal text under an HTML name would mislead.
    let r2 = t.path().join("r2.html");
    bin()
        .arg("report")
        .arg(fixture("default.json"))
        .args(["-f", "terminal", "-o"])
        .arg(&r2)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--format terminal contradicts --output",
        ));
    assert!(!r2.exists());
    // An extension naming a format compare does not write is refused.
    bin()
        .arg("compare")
        .arg(fixture("default.json"))
        .arg(fixture("tuned.json"))
        .arg("-o")
        .arg(t.path().join("c.html"))
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("names the html format")
                .and(predicate::str::contains("terminal, markdown, json")),
        );
}

/// A variant and the series it varies (fork-static of fork), measured in
/// one run: recorded as such, their ratio with its interval in every
/// report, and the two on one chart.
#[test]
fn fork_static_is_drawn_with_fork_and_their_ratio_given() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("r.json");
    bin()
        .args(["run", "fork", "fork-static", "--max", "60", "--runs", "3"])
        .args(["-q", "--no-report", "-o"])
        .arg(&out)
        .assert()
        .success();
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let pairs: Vec<(&str, Option<&str>)> = doc["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["series"].as_str().unwrap(), b["pairs_with"].as_str()))
        .collect();
    assert_eq!(pairs, [("fork", None), ("fork-static", Some("fork"))]);
    let terminal = bin().arg("report").arg(&out).output().unwrap();
    assert!(terminal.status.success());
    let text = String::from_utf8_lossy(&terminal.stdout).replace("\n      ", " ");
    let line = text
        .lines()
        .find(|l| l.starts_with("  - fork-static on ") && l.contains("× the cost of fork"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains("(90 % interval ") && line.contains("3 and 3 runs"),
        "{line}"
    );
    let t2 = tempfile::tempdir().unwrap();
    let json_out = t2.path().join("r.json");
    bin()
        .arg("report")
        .arg(&out)
        .args(["--format", "json", "-o"])
        .arg(&json_out)
        .assert()
        .success();
    let rep: Value = serde_json::from_str(&std::fs::read_to_string(&json_out).unwrap()).unwrap();
    let p = &rep["pairs"][0];
    assert_eq!(
        (&p["series"], &p["with"]),
        (&Value::from("fork-static"), &Value::from("fork"))
    );
    let r = &p["ratio"]["ratio"];
    let (lo, v, hi) = (
        r["lo"].as_f64().unwrap(),
        r["value"].as_f64().unwrap(),
        r["hi"].as_f64().unwrap(),
    );
    assert!(lo <= v && v <= hi && v > 0.0, "{p}");
    let html = html_of(&[], std::slice::from_ref(&out));
    // fork-static's own chart, and the pair's: fork and fork-static on one.
    assert!(html.contains("<ul class=\"words pair\">"), "no pair");
    let pair_chart = html
        .split("data-series=\"fork-static\" data-scale=\"linear\"")
        .nth(2)
        .expect("a second fork-static chart: the pair's");
    let chart = &pair_chart[..pair_chart.find("</svg>").unwrap()];
    assert!(
        chart.contains(">fork</text>") && chart.contains(">fork-static</text>"),
        "{chart}"
    );
    // Markdown with charts: the pair's chart beside each series' own.
    let svgs = t2.path().join("charts");
    let md = bin()
        .arg("report")
        .arg(&out)
        .args(["--format", "markdown", "--svg-dir"])
        .arg(&svgs)
        .output()
        .unwrap();
    assert!(
        md.status.success(),
        "{}",
        String::from_utf8_lossy(&md.stderr)
    );
    let md = String::from_utf8_lossy(&md.stdout);
    let f = svgs.join("fork-static-with-fork.svg");
    assert!(
        md.contains(&format!("![fork with fork-static]({})", f.display())),
        "{md}"
    );
    let svg = std::fs::read_to_string(&f).unwrap();
    assert!(
        svg.contains(">fork</text>") && svg.contains(">fork-static</text>"),
        "{svg}"
    );
    // fork-static without fork: no pair, and every report says how to
    // get one.
    let mut alone = doc.clone();
    alone["benchmarks"]
        .as_array_mut()
        .unwrap()
        .retain(|b| b["series"] != "fork");
    let lone = t2.path().join("alone.json");
    std::fs::write(&lone, serde_json::to_vec(&alone).unwrap()).unwrap();
    for format in ["terminal", "markdown"] {
        let o = bin()
            .arg("report")
            .arg(&lone)
            .args(["--format", format])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&o.stdout).replace("\n      ", " ");
        assert!(
            text.contains("fork-static is a variant of fork, which")
                && text.contains("did not measure"),
            "{format}: {text}"
        );
        assert!(!text.contains("× the cost of fork"), "{format}: {text}");
    }
}
