//! Drift over time through the binary: benchmarks whose undo restores the
//! state one item earlier measure every run both ways, in one or more
//! passes (up and down in even-numbered runs, down and up in odd ones;
//! fork-cleanup, whose operation removes an item, down and up, then up and
//! down). Re-timing at low n, for benchmarks that cannot go back, is
//! tested in the harness (`harness::runner`): every benchmark here can.

use serde_json::Value;

use crate::common;
use common::benchmark as bench;
use common::{assert_both_ways, assert_falling_both_ways, assert_valid, bin, load};

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
            "bind-fresh",
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
    for name in [
        "socket",
        "bind-fresh",
        "fork",
        "mmap-touch",
        "manymap-touch",
    ] {
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
fn fork_cleanup_measures_every_run_both_ways_from_the_other_end() {
    let t = tempfile::tempdir().unwrap();
    let work = t.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let out = t.path().join("r.json");
    // Each operation removes a child and its undo forks one back: runs go
    // down and up (even-numbered) or up and down (odd-numbered), timing
    // every n from 40 to 1 once.
    let ok = bin()
        .args(["run", "fork-cleanup"])
        .args(["--max", "40", "--runs", "2", "-q", "--no-report", "-o"])
        .arg(&out)
        .arg("--workdir")
        .arg(&work)
        .status()
        .unwrap();
    assert!(ok.success());
    let doc = load(&out);
    assert_valid(&doc);
    let b = bench(&doc, "fork-cleanup");
    assert_eq!(b["status"], "ok", "{}", b["message"]);
    let runs = b["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for (i, run) in runs.iter().enumerate() {
        assert_falling_both_ways(run, i, 40, "fork-cleanup");
        let mut ns = ns_of(&run["samples"]);
        ns.sort_unstable();
        assert_eq!(ns, (1..=40).collect::<Vec<_>>());
        assert!(run.get("recheck").is_none(), "run {i}: {run}");
    }
    assert_eq!(
        std::fs::read_dir(&work).unwrap().count(),
        0,
        "work directory removed"
    );
}

/// `--order up`: every run one ascending pass, as the seeds measured —
/// also for a benchmark that could go both ways, and for a level
/// schedule; a word that is no order is refused by name.
#[test]
fn order_up_makes_every_run_one_ascending_pass() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("r.json");
    let o = bin()
        .args(["run", "socket", "connect", "--backend", "poll"])
        .args(["--max", "200", "--runs", "2", "--order", "up", "-q"])
        .args(["--no-report", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::text(&o.stderr));
    let doc = load(&out);
    assert_valid(&doc);
    for name in ["socket", "connect"] {
        let b = bench(&doc, name);
        assert_eq!(b["status"], "ok", "{name}: {}", b["message"]);
        assert_eq!(b["params"]["extra"]["order"], "up", "{name}");
        for run in b["runs"].as_array().unwrap() {
            assert_eq!(run["direction"], "up", "{name}");
            assert!(
                run.get("recheck")
                    .is_none_or(|r| r.as_array().unwrap().is_empty()),
                "{name}"
            );
            let ns = ns_of(&run["samples"]);
            if name == "socket" {
                assert_eq!(ns, (0..ns.len() as u64).collect::<Vec<_>>());
            } else {
                // Levels: each visited once, going up (passes would come
                // back down through them).
                let per = b["params"]["extra"]["ops_per_level"]
                    .as_u64()
                    .expect("a level schedule");
                let firsts: Vec<u64> = ns.chunks(per as usize).map(|c| c[0]).collect();
                assert!(firsts.windows(2).all(|w| w[0] < w[1]), "{name}: {firsts:?}");
            }
        }
    }
    let o = bin()
        .args(["run", "socket", "--order", "down", "--dry-run"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = common::text(&o.stderr);
    assert!(
        err.contains("--order") && err.contains("\"down\" is no run order"),
        "{err}"
    );
}
