//! The pgbench workload against the system's real PostgreSQL (Debian's
//! `postgresql`, installed by `scripts/test`): a throwaway cluster, a sweep
//! over clients with every progress sample kept, the server's version and
//! settings on record, and nothing left behind — no postgres process, no
//! file, no shared memory segment.

// It finds processes and shared memory through /proc: Linux only.
#![cfg(target_os = "linux")]

mod common;

use common::{Census, assert_valid, bin, load, shm_ids, working_in};
use std::collections::BTreeMap;
use std::path::Path;

/// One cluster at a time.
static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one() -> std::sync::MutexGuard<'static, ()> {
    ONE.lock().unwrap_or_else(|e| e.into_inner())
}

fn entries(d: &Path) -> usize {
    std::fs::read_dir(d).unwrap().count()
}

/// `run pgbench ARGS --no-report --quiet` with a work directory `work`
/// (made) and a result file in `dir`, working in `dir`; checks it
/// succeeded and the file is valid, and returns the file and every
/// process that worked in `dir` meanwhile (its own: other clusters on
/// this machine are not its business).
fn run_pgbench(
    dir: &Path,
    work: &Path,
    args: &[&str],
) -> (serde_json::Value, BTreeMap<i32, String>) {
    std::fs::create_dir(work).unwrap();
    let out = dir.join("r.json");
    let census = Census::start(dir);
    let o = bin()
        .args(["run", "pgbench"])
        .args(args)
        .args(["--no-report", "--quiet", "--workdir"])
        .arg(work)
        .arg("-o")
        .arg(&out)
        .current_dir(dir)
        .output()
        .unwrap();
    let ran = census.finish();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = load(&out);
    assert_valid(&doc);
    (doc, ran)
}

/// Checks that nothing of a run in `dir` runs any more: no process works
/// there (postgres and pgbench included).
fn assert_no_process_left(dir: &Path) {
    let left = working_in(dir);
    assert!(left.is_empty(), "processes left running: {left:?}");
}

#[test]
fn a_client_sweep_against_a_throwaway_cluster_leaves_nothing() {
    let _one = one();
    let shm_before = shm_ids();
    let t = tempfile::tempdir().unwrap();
    let work = t.path().join("work");
    let (doc, ran) = run_pgbench(
        t.path(),
        &work,
        &[
            "--sweep",
            "clients=1,2,3",
            "--heat-up",
            "1",
            "--sample-time",
            "1",
            "--samples",
            "3",
            "--db-size",
            "32M",
            "--pg-mode",
            "select-only,tpcb",
        ],
    );
    let w = &doc["workloads"][0];
    assert_eq!(w["name"], "pgbench");
    assert_eq!(w["status"], "ok", "{w}");
    let p = &w["params"];
    assert_eq!(p["scale"], 2, "32 MB is scale 2");
    assert!(p["db_bytes"].as_u64().unwrap() > 20_000_000, "{p}");
    assert!(
        p["settings"]["server_version"]
            .as_str()
            .unwrap()
            .starts_with(char::is_numeric),
        "{p}"
    );
    for k in ["shared_buffers", "max_connections", "fsync"] {
        assert!(p["settings"][k].is_string(), "{k}: {p}");
    }
    assert_eq!(p["transport"], "tcp 127.0.0.1");
    let rows = w["rows"].as_array().unwrap();
    assert_eq!(
        rows.iter()
            .map(|r| r["label"].as_str().unwrap())
            .collect::<Vec<_>>(),
        vec!["select-only", "tpcb"]
    );
    for r in rows {
        let s = &r["sweep"];
        assert_eq!(
            (s["variable"].as_str(), s["unit"].as_str()),
            (Some("clients"), Some("TPS"))
        );
        let levels = s["levels"].as_array().unwrap();
        assert_eq!(levels.len(), 3);
        for l in levels {
            assert!(l["error"].is_null(), "{l}");
            let samples = l["samples"].as_array().unwrap();
            assert_eq!(samples.len(), 3, "one progress line per second: {l}");
            for x in samples {
                assert!(x["value"].as_f64().unwrap() > 50.0, "{x}");
                assert!(x["mean_latency_ns"].as_f64().unwrap() > 0.0, "{x}");
                assert_eq!(x["errors"], 0, "{x}");
            }
            let mean = samples
                .iter()
                .map(|x| x["value"].as_f64().unwrap())
                .sum::<f64>()
                / 3.0;
            assert!((l["value"].as_f64().unwrap() - mean).abs() < 1e-6 * mean);
            // -j is min(clients, CPUs).
            let cpus = doc["system"]["cpu"]["count"].as_u64().unwrap();
            assert_eq!(
                l["params"]["threads"].as_u64().unwrap(),
                l["level"]
                    .as_u64()
                    .unwrap_or(l["level"].as_f64().unwrap() as u64)
                    .min(cpus)
            );
        }
    }
    // Nothing left: processes, files, shared memory.
    assert!(
        ran.values().any(|n| n == "postgres") && ran.values().any(|n| n == "pgbench"),
        "the run's postgres and pgbench were seen: {ran:?}"
    );
    assert_no_process_left(t.path());
    assert_eq!(entries(&work), 0, "work directory emptied");
    let shm = common::shm_left_by(&shm_before, &ran);
    assert!(shm.is_empty(), "shared memory left: {shm:?}");
}

#[test]
fn pgbench_options_are_checked_before_anything_runs() {
    for (args, says) in [
        (&["run", "pgbench", "--db-size", "lots"][..], "--db-size"),
        (&["run", "pgbench", "--pg-mode", "nosql"][..], "--pg-mode"),
        (
            &["run", "pgbench", "--sweep", "connections=1,2"][..],
            "pgbench cannot be swept over connections",
        ),
        (
            &["run", "http-ipstack", "--memory-sweep"][..],
            "--memory-sweep is pgbench's; http-ipstack has no database",
        ),
        (
            &["run", "pgbench", "--pg-memory", "1G"][..],
            "--memory-sweep",
        ),
        (&["run", "pgbench", "--pg-pin", "sideways"][..], "--pg-pin"),
        (
            &[
                "run",
                "pgbench",
                "--pg-pin",
                "together",
                "--pg-server",
                "host=x",
            ][..],
            "cannot be used with",
        ),
        (
            &["run", "pgbench", "--memory-sweep", "--sweep", "clients=1"][..],
            "cannot be used with",
        ),
        (
            &["run", "pgbench", "--memory-sweep", "--pg-memory", "x"][..],
            "--pg-memory",
        ),
    ] {
        let o = bin().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn a_memory_sweep_grows_the_database_past_a_cgroup_limit() {
    let _one = one();
    let t = tempfile::tempdir().unwrap();
    let work = t.path().join("work");
    let (doc, ran) = run_pgbench(
        t.path(),
        &work,
        &[
            "--memory-sweep",
            "--pg-memory",
            "256M",
            "--heat-up",
            "0",
            "--sample-time",
            "1",
            "--samples",
            "3",
        ],
    );
    let w = &doc["workloads"][0];
    assert_eq!(w["status"], "ok", "{w}");
    let limit = w["params"]["memory_limit"].as_str().unwrap();
    assert!(
        limit.starts_with("cgroup v"),
        "a memory cgroup was made: {limit}"
    );
    assert_eq!(
        w["params"]["settings"]["shared_buffers"], "8192 8kB",
        "a quarter of 256 MB"
    );
    let rows = w["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "only the memory sweep");
    let s = &rows[0]["sweep"];
    assert_eq!(s["variable"], "size/memory");
    assert_eq!(s["knee_on"], "figure");
    let levels = s["levels"].as_array().unwrap();
    assert_eq!(
        levels
            .iter()
            .map(|l| l["level"].as_f64().unwrap())
            .collect::<Vec<_>>(),
        vec![0.5, 1.0, 2.0]
    );
    let mut last_scale = 0;
    for l in levels {
        assert!(l["error"].is_null(), "{l}");
        assert_eq!(l["samples"].as_array().unwrap().len(), 3, "{l}");
        assert!(l["value"].as_f64().unwrap() > 0.0, "{l}");
        // The database is loaded anew at each size, the caches dropped.
        let scale = l["params"]["scale"].as_u64().unwrap();
        assert!(scale > last_scale, "{l}");
        last_scale = scale;
        assert_eq!(l["params"]["cache"], "dropped", "{l}");
        let ratio = l["params"]["db_bytes"].as_f64().unwrap() / (256u64 << 20) as f64;
        let level = l["level"].as_f64().unwrap();
        assert!(
            (ratio / level - 1.0).abs() < 0.35,
            "size/memory {ratio:.2} for level {level}"
        );
    }
    // Nothing left: processes, the cgroup.
    assert_no_process_left(t.path());
    let left = common::cgroups_left_by(&ran);
    assert!(left.is_empty(), "cgroups left: {left:?}");
    assert_eq!(entries(&work), 0, "work directory emptied");
}

#[test]
fn an_existing_server_is_used_by_connection_string_and_left_running() {
    let _one = one();
    use scalebench::workloads::pg::cluster::{Bin, Cluster};
    // "Someone else's" server: a cluster this test makes and stops.
    let t = tempfile::tempdir().unwrap();
    let bin_dir = Bin::find().unwrap();
    let theirs = Cluster::start(
        &bin_dir,
        &t.path().join("theirs"),
        20,
        None,
        &[],
        None,
        None,
    )
    .unwrap();
    let conninfo = format!(
        "host=127.0.0.1 port={} user=scalebench dbname=postgres",
        theirs.port
    );
    let work = t.path().join("work");
    let (doc, _) = run_pgbench(
        t.path(),
        &work,
        &[
            "--pg-server",
            &conninfo,
            "--sweep",
            "clients=1,2",
            "--heat-up",
            "0",
            "--sample-time",
            "1",
            "--samples",
            "2",
            "--db-size",
            "16M",
        ],
    );
    let w = &doc["workloads"][0];
    assert_eq!(w["status"], "ok", "{w}");
    assert_eq!(w["params"]["server"], "given by connection string");
    let argv = doc["command_line"].to_string();
    assert!(
        !argv.contains("dbname"),
        "the connection string is not recorded: {argv}"
    );
    assert!(w["params"]["settings"]["server_version"].is_string(), "{w}");
    let levels = w["rows"][0]["sweep"]["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 2);
    for l in levels {
        assert_eq!(l["samples"].as_array().unwrap().len(), 2, "{l}");
    }
    // Their server still runs, with the tables pgbench made.
    let psql = std::process::Command::new(bin_dir.tool("psql"))
        .args(["-X", "-A", "-t", "-d", &conninfo, "-c"])
        .arg("select count(*) from pgbench_branches")
        .output()
        .unwrap();
    assert!(psql.status.success(), "the server was left running");
    assert_eq!(String::from_utf8_lossy(&psql.stdout).trim(), "1", "scale 1");
    assert_eq!(entries(&work), 0);
    drop(theirs);
}
