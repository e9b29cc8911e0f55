//! The pgbench workload against the system's real PostgreSQL (Debian's
//! `postgresql`, installed by `scripts/test`): a throwaway cluster, a sweep
//! over clients with every progress sample kept, the server's version and
//! settings on record, and nothing left behind — no postgres process, no
//! file, no shared memory segment.

// It finds processes and shared memory through /proc: Linux only.
#![cfg(target_os = "linux")]

use crate::common;

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
    let (o, doc, ran) = run_pgbench_as_it_ends(dir, work, args, "r.json");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (doc, ran)
}

/// [`run_pgbench`] however the run ends, its result file named `name`.
fn run_pgbench_as_it_ends(
    dir: &Path,
    work: &Path,
    args: &[&str],
    name: &str,
) -> (
    std::process::Output,
    serde_json::Value,
    BTreeMap<i32, String>,
) {
    if !work.exists() {
        std::fs::create_dir(work).unwrap();
    }
    let out = dir.join(name);
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
    let doc = load(&out);
    assert_valid(&doc);
    (o, doc, ran)
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
        (&["run", "pgbench", "--db-size", "10T"][..], "outside 16M"),
        (&["run", "pgbench", "--db-size", "1M"][..], "outside 16M"),
        (&["run", "pgbench", "--pg-scale", "0"][..], "--pg-scale"),
        (
            &["run", "pgbench", "--pg-scale", "8", "--db-size", "160M"][..],
            "--db-size",
        ),
        (
            &["run", "pgbench", "--memory-sweep", "--pg-memory", "2T"][..],
            "2.00 TiB is outside 16M",
        ),
        (
            &[
                "run",
                "pgbench",
                "--memory-sweep",
                "--pg-second-tier",
                "zram",
            ][..],
            "`zram`: swap (a swap file in the work directory) or swap:DIR",
        ),
        (
            &[
                "run",
                "pgbench",
                "--memory-sweep",
                "--pg-second-tier",
                "swap:/no/such/dir",
            ][..],
            "--pg-second-tier swap:/no/such/dir: not a directory",
        ),
        (
            &["run", "pgbench", "--pg-second-tier", "swap"][..],
            "--memory-sweep",
        ),
        // libpq's defaults would reach the local server's socket.
        (
            &["run", "pgbench", "--pg-server", "garbage"][..],
            "--pg-server",
        ),
        (
            &["run", "pgbench", "--pg-server", ""][..],
            "empty: name a server",
        ),
        (
            &["run", "pgbench", "--pg-server", "port=5432 dbname=x"][..],
            "names no server",
        ),
        (
            &["run", "pgbench", "--pg-server", "hots=db"][..],
            "`hots` is not a libpq connection keyword",
        ),
        (&["run", "pgbench", "--pg-drop-tables"][..], "--pg-server"),
        (&["run", "pgbench", "--pg-mode", "nosql"][..], "--pg-mode"),
        (
            &["run", "pgbench", "--sweep", "connections=1,2"][..],
            "pgbench cannot be swept over connections",
        ),
        (
            &["run", "http-ipstack", "--memory-sweep"][..],
            "--memory-sweep is an option of pgbench, which this run does not have (its workloads: http-ipstack)",
        ),
        (
            &["run", "pgbench", "http-ipstack", "--memory-sweep"][..],
            "--memory-sweep is an option of pgbench; http-ipstack does not take it",
        ),
        (
            &["run", "socket", "--db-size", "160M"][..],
            "--db-size is an option of pgbench, which this run does not have (it runs no workload)",
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

/// Swap areas the kernel lists whose path is below `dir`.
fn swaps_under(dir: &Path) -> Vec<String> {
    std::fs::read_to_string("/proc/swaps")
        .unwrap()
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .filter(|p| Path::new(p).starts_with(dir))
        .map(String::from)
        .collect()
}

/// The memory sweep (row 1) and the same with a second tier (row 2),
/// in one run to spare a second cluster's setup.
#[test]
fn a_memory_sweep_grows_past_a_cgroup_limit_then_into_a_second_tier() {
    let _one = one();
    let t = tempfile::tempdir().unwrap();
    let work = t.path().join("work");
    // The tier elsewhere than the work directory, as on an SSD's mount.
    let tier = t.path().join("ssd");
    std::fs::create_dir(&tier).unwrap();
    let (doc, ran) = run_pgbench(
        t.path(),
        &work,
        &[
            "--memory-sweep",
            "--pg-memory",
            "64M",
            "--pg-second-tier",
            &format!("swap:{}", tier.display()),
            "--heat-up",
            "0",
            "--sample-time",
            "1",
            "--samples",
            "2",
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
        w["params"]["settings"]["shared_buffers"], "2048 8kB",
        "a quarter of 64 MB"
    );
    let rows = w["rows"].as_array().unwrap();
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
        assert_eq!(l["samples"].as_array().unwrap().len(), 2, "{l}");
        assert!(l["value"].as_f64().unwrap() > 0.0, "{l}");
        // The database is loaded anew at each size, the caches dropped.
        let scale = l["params"]["scale"].as_u64().unwrap();
        assert!(scale > last_scale, "{l}");
        last_scale = scale;
        assert_eq!(l["params"]["cache"], "dropped", "{l}");
        assert!(l["params"]["swap_used_bytes"].is_null(), "no tier: {l}");
        let ratio = l["params"]["db_bytes"].as_f64().unwrap() / (64u64 << 20) as f64;
        let level = l["level"].as_f64().unwrap();
        assert!(
            (ratio / level - 1.0).abs() < 0.35,
            "size/memory {ratio:.2} for level {level}"
        );
    }
    let labels: Vec<&str> = rows.iter().map(|r| r["label"].as_str().unwrap()).collect();
    assert_eq!(
        labels,
        [
            "select-only, size against memory",
            "select-only, size against memory, second tier: swap"
        ]
    );
    let tier_said = &rows[1]["params"]["second_tier"];
    assert_eq!(tier_said["kind"], "swap file", "{tier_said}");
    let path = tier_said["path"].as_str().unwrap();
    assert_eq!(Path::new(path), tier.join("scalebench-swap"));
    // The shared buffers hold twice the limit and more: what passes the
    // limit is in the tier.
    let buffers = tier_said["shared_buffers_bytes"].as_u64().unwrap();
    assert!(buffers > 2 * (64 << 20), "{tier_said}");
    // Where the cgroup has its own swappiness (v1), the tier is used readily.
    if limit.starts_with("cgroup v1") {
        assert_eq!(tier_said["cgroup_swappiness"], 100, "{tier_said}");
    }
    assert!(
        tier_said["stands_in_for"]
            .as_str()
            .unwrap()
            .contains("swapcache"),
        "named for what it is: {tier_said}"
    );
    let levels = rows[1]["sweep"]["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 3);
    for l in levels {
        assert!(l["error"].is_null(), "{l}");
        assert!(l["value"].as_f64().unwrap() > 0.0, "{l}");
    }
    let used = |l: &serde_json::Value| l["params"]["swap_used_bytes"].as_u64().unwrap();
    assert!(
        used(&levels[2]) > 0,
        "a database twice the limit spills into the tier: {}",
        levels[2]
    );
    // Nothing left: the swap area off and its file gone, the processes,
    // the cgroup, the work directory's contents.
    assert_eq!(swaps_under(t.path()), Vec::<String>::new());
    assert!(!Path::new(path).exists());
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
            "--pg-scale",
            "1",
        ],
    );
    let w = &doc["workloads"][0];
    assert_eq!(w["status"], "ok", "{w}");
    assert_eq!(w["params"]["server"], "given by connection string");
    // The scale factor given directly (as DragonFly's 800).
    assert_eq!(w["params"]["scale"], 1, "{w}");
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
    assert_eq!(
        w["params"]["tables"],
        "made by this run and dropped at its end"
    );
    assert!(
        w["params"]["free_space"]
            .as_str()
            .is_some_and(|f| f.contains("free in") && f.contains("needed")),
        "a server on this machine: its disk is checked: {w}"
    );
    // Their server still runs, without the tables pgbench made.
    let sql = |q: &str| {
        let o = std::process::Command::new(bin_dir.tool("psql"))
            .args([
                "-X",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-d",
                &conninfo,
                "-c",
                q,
            ])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{q}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    let tables = "select count(*) from pg_tables where tablename like 'pgbench%'";
    assert_eq!(
        sql(tables),
        "0",
        "the server was left running, its tables as found"
    );
    assert_eq!(entries(&work), 0);
    // A server with a pgbench table of its own: refused, the table kept.
    sql("create table pgbench_branches (bid int, note text)");
    sql("insert into pgbench_branches values (42, 'theirs')");
    let args = [
        "--pg-server",
        &conninfo,
        "--sweep",
        "clients=1",
        "--heat-up",
        "0",
    ];
    let args = [
        &args[..],
        &["--sample-time", "1", "--samples", "1", "--db-size", "16M"],
    ]
    .concat();
    let (o, doc, _) = run_pgbench_as_it_ends(t.path(), &work, &args, "refused.json");
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let w = &doc["workloads"][0];
    assert_eq!(w["status"], "failed", "{w}");
    assert!(
        w.to_string().contains("already has pgbench_branches")
            && w.to_string().contains("--pg-drop-tables"),
        "{w}"
    );
    assert_eq!(
        sql("select note from pgbench_branches where bid = 42"),
        "theirs"
    );
    // Told to: dropped, remade, and left as remade.
    let told = [&args[..], &["--pg-drop-tables"]].concat();
    let (o, doc, _) = run_pgbench_as_it_ends(t.path(), &work, &told, "told.json");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let w = &doc["workloads"][0];
    assert_eq!(w["params"]["tables_before"], "pgbench_branches", "{w}");
    assert_eq!(
        sql("select count(*) from pgbench_branches"),
        "1",
        "remade at scale 1"
    );
    drop(theirs);
}

/// A small tmpfs mounted for one test, unmounted when dropped.
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(at: &Path, size: &str) -> Tmpfs {
        common::require_root();
        std::fs::create_dir(at).unwrap();
        let o = std::process::Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size}"),
                "scalebench-test",
            ])
            .arg(at)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "mount: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        Tmpfs(at.to_path_buf())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// The free space a database needs is checked before anything is made:
/// `pgbench -i -s 687194` had started on a disk that could never hold it.
#[test]
fn a_database_the_disk_cannot_hold_is_refused_before_loading() {
    let _one = one();
    let t = tempfile::tempdir().unwrap();
    let small = Tmpfs::mount(&t.path().join("small"), "64m");
    let work = small.0.join("work");
    let args = ["--sweep", "clients=1", "--db-size", "160M"];
    let (o, doc, ran) = run_pgbench_as_it_ends(t.path(), &work, &args, "r.json");
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let w = &doc["workloads"][0];
    assert_eq!(w["status"], "failed", "{w}");
    let e = w["rows"][0]["error"].as_str().unwrap();
    // Scale 10 (160M at 16 MB a unit): twice its 152.6 MiB, and 64 MiB.
    assert!(
        e.contains("has 64.0 MiB free") && e.contains("needs about 369 MiB"),
        "{e}"
    );
    // On standard error, the cause once.
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches("has 64.0 MiB free").count(), 1, "{err}");
    // The run's own processes (other clusters on this machine are not
    // its business): none of PostgreSQL's.
    assert!(
        !ran.values()
            .any(|n| ["postgres", "initdb", "pg_ctl", "pgbench"].contains(&n.as_str())),
        "no cluster was started: {ran:?}"
    );
    assert_no_process_left(t.path());
    assert_eq!(entries(&work), 0, "nothing made in the work directory");
}
