//! Drift over time through the binary: benchmarks whose undo restores the
//! state one item earlier measure every run both ways, in one or more
//! passes (up and down in even-numbered runs, down and up in odd ones);
//! the others are re-timed at low n in a fresh run.

use serde_json::Value;

mod common;
use common::{assert_both_ways, assert_valid, bin, load};

fn bench<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == name)
        .unwrap_or_else(|| panic!("{name} missing"))
}

/// The n of each `[n, ns]` pair, checking every ns is positive.
fn ns_of(pairs: &Value) -> Vec<u64> {
    pairs
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            assert!(s[1].as_u64().unwrap() > 0, "{s}");
            s[0].as_u64().unwrap()
        })
        .collect()
}

#[test]
fn socket_bind_and_fork_measure_every_run_both_ways() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("r.json");
    let ok = bin()
        .args([
            "run",
            "socket",
            "bind",
            "fork",
            "mmap-touch",
            "manymap-touch",
            "--max",
            "300",
            "--runs",
            "3",
            "-q",
        ])
        .args(["--no-report", "-o"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(ok.success());
    let doc = load(&out);
    assert_valid(&doc);
    for name in ["socket", "bind", "fork", "mmap-touch", "manymap-touch"] {
        let b = bench(&doc, name);
        assert_eq!(b["status"], "ok", "{name}: {}", b["message"]);
        let runs = b["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 3);
        for (i, run) in runs.iter().enumerate() {
            assert_both_ways(run, i, 300, name);
            ns_of(&run["samples"]);
            assert!(run.get("recheck").is_none(), "{name} run {i}: {run}");
            assert!(run.get("recheck_when").is_none(), "{name} run {i}");
        }
    }
}

#[test]
fn benchmarks_that_cannot_go_down_are_retimed_at_low_n() {
    let t = tempfile::tempdir().unwrap();
    let work = t.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let out = t.path().join("r.json");
    // The one per-item benchmark that cannot be undone one item at a time
    // (fork-cleanup: each operation removes an item; the touch benchmarks
    // go both ways since their undo maps the page again, untouched).
    let names = ["fork-cleanup"];
    let ok = bin()
        .arg("run")
        .args(names)
        .args(["--max", "40", "--runs", "2", "-q", "--no-report", "-o"])
        .arg(&out)
        .arg("--workdir")
        .arg(&work)
        .status()
        .unwrap();
    assert!(ok.success());
    let doc = load(&out);
    assert_valid(&doc);
    for name in names {
        let b = bench(&doc, name);
        assert_eq!(b["status"], "ok", "{name}: {}", b["message"]);
        let runs = b["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2, "{name}");
        for (i, run) in runs.iter().enumerate() {
            let recheck = ns_of(&run["recheck"]);
            // min(n / 10, 500), at least min(n, 20): 20 operations at n = 40.
            assert_eq!(ns_of(&run["samples"]), (1..=40).rev().collect::<Vec<_>>());
            assert_eq!(run["direction"], "down", "{name} run {i}");
            assert_eq!(run["recheck_when"], "before", "{name} run {i}");
            assert_eq!(
                recheck,
                (1..=20).rev().collect::<Vec<_>>(),
                "{name} run {i}"
            );
        }
    }
    assert_eq!(
        std::fs::read_dir(&work).unwrap().count(),
        0,
        "work directory removed"
    );
}
