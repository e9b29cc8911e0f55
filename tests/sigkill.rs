//! SIGKILL leaves nothing: scalebench is killed with
//! `kill -9` in the middle of a fork run, a connect run, an HTTP workload,
//! the mail workload,
//! a filesystem workload on a loop device, a profile taken with perf and
//! pgbench against its throwaway PostgreSQL cluster; then no process it started
//! may be left, and the next run removes the work directory it left (and
//! anything mounted there), saying so.
//!
//! Every process scalebench starts shares its session, which each test makes
//! new (setsid), so "what is left" is every live process in that session.

#![cfg(target_os = "linux")]

use crate::common;
use common::bin;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Live processes whose session is `sid`, with their names.
fn in_session(sid: i32) -> Vec<(i32, String)> {
    common::live_processes()
        .into_iter()
        .filter(|(_, _, s)| *s == sid)
        .map(|(pid, name, _)| (pid, name))
        .collect()
}

/// The `scalebench-*` entries in `dir`.
fn work_dirs(dir: &Path) -> Vec<String> {
    common::scalebench_entries(dir)
}

/// Open descriptors of process `pid` (0 once it is gone).
fn fds(pid: i32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

/// Whether one of the arguments of process `pid` is `arg`.
fn cmdline_has(pid: i32, arg: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .is_ok_and(|c| c.split(|&b| b == 0).any(|a| a == arg.as_bytes()))
}

/// Mount points below `dir`.
fn mounts_under(dir: &Path) -> Vec<String> {
    let dir = dir.canonicalize().unwrap();
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter_map(|l| l.split(' ').nth(4).map(String::from))
        .filter(|m| Path::new(m).starts_with(&dir))
        .collect()
}

/// How long what a killed run left may take to go (its processes see
/// their parent gone and end; only a process that stays fails).
const PATIENCE: Duration = Duration::from_secs(30);

/// Starts `scalebench ARGS --workdir BASE` in a session of its own, waits
/// until `ready` holds for the processes of that session (or fails after
/// `limit`), kills scalebench with SIGKILL and checks that every process
/// of the session is gone within [`PATIENCE`]. Returns what was seen when
/// it was killed, for the messages.
/// `run ARGS --no-report -o BASE/result.json`.
fn run_args(base: &Path, args: &[&str]) -> Vec<String> {
    let mut v = vec!["run".to_string()];
    v.extend(args.iter().map(|a| a.to_string()));
    v.extend(["--no-report".into(), "-o".into()]);
    v.push(base.join("result.json").to_string_lossy().into_owned());
    v
}

fn kill_when<S: AsRef<std::ffi::OsStr> + std::fmt::Debug>(
    args: &[S],
    base: &Path,
    limit: Duration,
    ready: impl Fn(&[(i32, String)]) -> bool,
) -> String {
    let mut cmd = bin();
    cmd.args(args)
        .arg("--workdir")
        .arg(base)
        .arg("--quiet")
        .current_dir(base)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    common::in_new_session(&mut cmd);
    let mut child = common::Child(cmd.spawn().unwrap());
    let sid = child.0.id() as i32;
    let start = Instant::now();
    let seen = loop {
        let procs = in_session(sid);
        if ready(&procs) {
            break procs;
        }
        if let Ok(Some(status)) = child.0.try_wait() {
            let mut err = String::new();
            use std::io::Read;
            let _ = child.0.stderr.take().unwrap().read_to_string(&mut err);
            panic!("{args:?} ended ({status}) before the kill: {err}");
        }
        assert!(
            start.elapsed() < limit,
            "{args:?}: not ready after {limit:?}; session: {procs:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let summary = format!(
        "{} processes in the session at the kill ({:?} after the start)",
        seen.len(),
        start.elapsed()
    );
    // SAFETY: SIGKILL to the child this test started.
    unsafe { libc::kill(sid, libc::SIGKILL) };
    child.0.wait().unwrap();
    let deadline = Instant::now() + PATIENCE;
    loop {
        let left = in_session(sid);
        if left.is_empty() {
            break;
        }
        if Instant::now() > deadline {
            // Clean up after a failure, then report it.
            for (pid, _) in &left {
                // SAFETY: processes of the session this test made.
                unsafe { libc::kill(*pid, libc::SIGKILL) };
            }
            panic!(
                "{args:?}: {} processes left {PATIENCE:?} after kill -9: {left:?} ({summary})",
                left.len()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    summary
}

/// The next run in the same base removes what the killed one left, says
/// so, and leaves no work directory of its own.
fn next_run_sweeps(base: &Path, what: &str) {
    assert_eq!(
        work_dirs(base).len(),
        1,
        "{what}: the killed run's work directory is there before the next run"
    );
    let o = bin()
        .args(["run", "socket", "--max", "50", "--runs", "1", "--no-report"])
        .arg("--workdir")
        .arg(base)
        .arg("-o")
        .arg(base.join("next.json"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{what}: the next run failed: {err}");
    assert!(
        err.contains("work dir: removed") && err.contains("which is gone"),
        "{what}: the next run says what it removed: {err}"
    );
    assert_eq!(work_dirs(base), Vec::<String>::new(), "{what}: {err}");
    assert_eq!(mounts_under(base), Vec::<String>::new(), "{what}: {err}");
}

#[test]
fn kill_9_mid_profile_leaves_nothing() {
    let base = tempfile::tempdir().unwrap();
    let result = base.path().join("socket.json");
    let o = bin()
        .args([
            "run",
            "socket",
            "--max",
            "200",
            "--runs",
            "1",
            "--no-report",
        ])
        .args(["--quiet", "--workdir"])
        .arg(base.path())
        .arg("-o")
        .arg(&result)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // `why` with perf recording (and perf's `sleep`) under it.
    let r = result.to_string_lossy().into_owned();
    let seen = kill_when(
        &["why", r.as_str(), "--only", "socket", "--profiler", "perf"],
        base.path(),
        Duration::from_secs(60),
        |p| p.iter().any(|(_, n)| n == "perf"),
    );
    eprintln!("why: {seen}");
    next_run_sweeps(base.path(), "why");
}

/// Live processes named `postgres` (PostgreSQL's children each make a
/// session of their own, so they are found by name, not by session).
fn postgres_processes() -> Vec<i32> {
    common::processes_named(&["postgres"])
}

/// The CPUs process `pid` may run on, as /proc lists them (`0`, `0-1`).
fn cpus_allowed(pid: i32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .map(|v| v.trim().to_string())
        .unwrap_or_default()
}

#[test]
fn kill_9_mid_pgbench_leaves_nothing() {
    let base = tempfile::tempdir().unwrap();
    let shm_before = common::shm_ids();
    // The run's own processes, and its cluster's (which work in its data
    // directory, in the work directory): clusters that other work on this
    // machine runs meanwhile are not its business.
    let census = common::Census::start(base.path());
    let new = || -> Vec<i32> {
        let ours: Vec<i32> = common::working_in(base.path())
            .into_iter()
            .map(|p| p.0)
            .collect();
        postgres_processes()
            .into_iter()
            .filter(|p| ours.contains(p))
            .collect()
    };
    // The cluster's processes and shared memory, as seen until the kill.
    let cluster = std::cell::RefCell::new(common::PgCluster::default());
    // pgbench is measuring against the cluster (the run with progress
    // reports, -P), with the postmaster, its helpers and the backends, in a
    // memory cgroup of the run's own (--memory-sweep).
    let seen = kill_when(
        &run_args(
            base.path(),
            &[
                "pgbench",
                "--memory-sweep",
                "--pg-memory",
                "256M",
                "--heat-up",
                "0",
                "--sample-time",
                "10",
                "--pg-pin",
                "apart",
            ],
        ),
        base.path(),
        Duration::from_secs(120),
        |p| {
            cluster.borrow_mut().look(base.path());
            p.iter().any(|(pid, n)| {
                n == "pgbench"
                    && std::fs::read(format!("/proc/{pid}/cmdline"))
                        .is_ok_and(|c| c.split(|&b| b == 0).any(|a| a == b"-P"))
                    // --pg-pin apart: pgbench on CPU 1 …
                    && cpus_allowed(*pid) == "1"
            }) && new().len() >= 4
                // … and every postgres process on CPU 0.
                && new().iter().all(|pid| cpus_allowed(*pid) == "0")
        },
    );
    eprintln!("pgbench: {seen}");
    // The backends end once they see the postmaster is gone.
    let deadline = Instant::now() + PATIENCE;
    while !new().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        new(),
        Vec::<i32>::new(),
        "postgres processes left {PATIENCE:?} after kill -9"
    );
    next_run_sweeps(base.path(), "pgbench");
    let ran = census.finish();
    assert!(
        ran.values().any(|n| n == "postgres"),
        "the cluster was seen: {ran:?}"
    );
    // The next run also freed the cluster's shared memory segment.
    let left = common::shm_left_by(&shm_before, &ran);
    assert!(left.is_empty(), "shared memory left: {left:?}");
    // The POSIX ones too (/dev/shm/PostgreSQL.*, the dynamic shared
    // memory), which its control segment listed.
    let cluster = cluster.into_inner();
    assert!(
        !cluster.posix.is_empty(),
        "the cluster was seen: {cluster:?}"
    );
    assert_eq!(cluster.left(), Vec::<String>::new());
    // And the memory cgroup the killed run made for the postmaster.
    let cgroups = common::cgroups_left_by(&ran);
    assert!(
        cgroups.is_empty(),
        "memory cgroups left in {}: {cgroups:?}",
        common::memory_cgroup_dir().display()
    );
}

/// A temporary directory that, should the test fail, first unmounts what
/// is mounted below it and detaches the loop devices over its files.
struct Unmounting(tempfile::TempDir);

impl Unmounting {
    fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for Unmounting {
    fn drop(&mut self) {
        let mut points = mounts_under(self.path());
        points.sort_by_key(|p| std::cmp::Reverse(p.len()));
        for m in points {
            let _ = std::process::Command::new("umount").arg(&m).status();
        }
        let out = std::process::Command::new("losetup")
            .arg("-a")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        let dir = self.path().to_string_lossy().into_owned();
        for l in out.lines().filter(|l| l.contains(&dir)) {
            if let Some(dev) = l.split(':').next() {
                let _ = std::process::Command::new("losetup")
                    .args(["-d", dev])
                    .status();
            }
        }
    }
}

#[test]
fn kill_9_mid_fork_leaves_nothing() {
    let base = tempfile::tempdir().unwrap();
    // The helper and at least 200 of its children are alive.
    let seen = kill_when(
        &run_args(base.path(), &["fork", "--max", "3000", "--runs", "20"]),
        base.path(),
        Duration::from_secs(60),
        |p| p.iter().filter(|(_, n)| n.starts_with("forker")).count() >= 200,
    );
    eprintln!("fork: {seen}");
    next_run_sweeps(base.path(), "fork");
}

#[test]
fn kill_9_mid_connect_leaves_nothing() {
    let base = tempfile::tempdir().unwrap();
    // The responder (a second scalebench) holds connections: they are
    // being made and held.
    let seen = kill_when(
        &run_args(base.path(), &["connect", "--max", "3000", "--runs", "20"]),
        base.path(),
        Duration::from_secs(60),
        |p| {
            p.iter().any(|(pid, n)| {
                n == "scalebench" && cmdline_has(*pid, "__responder") && fds(*pid) > 50
            })
        },
    );
    eprintln!("connect: {seen}");
    next_run_sweeps(base.path(), "connect");
}

#[test]
fn kill_9_mid_http_workload_leaves_nothing() {
    let base = tempfile::tempdir().unwrap();
    // The server with its four worker processes: scalebench, serve and 3
    // forked workers.
    let seen = kill_when(
        &run_args(base.path(), &["http-ipstack", "--runs", "5"]),
        base.path(),
        Duration::from_secs(60),
        |p| p.iter().filter(|(_, n)| n == "scalebench").count() >= 5,
    );
    eprintln!("http-ipstack: {seen}");
    next_run_sweeps(base.path(), "http-ipstack");
}

#[test]
fn kill_9_mid_mail_workload_leaves_nothing() {
    let base = tempfile::tempdir().unwrap();
    // scalebench, its SMTP sink and its sender, the sink holding sessions:
    // messages on their way.
    let seen = kill_when(
        &run_args(
            base.path(),
            &[
                "mail",
                "--sweep",
                "sessions=300",
                "--sample-time",
                "5",
                "--samples",
                "2",
            ],
        ),
        base.path(),
        Duration::from_secs(60),
        |p| {
            p.iter().filter(|(_, n)| n == "scalebench").count() >= 3
                && p.iter()
                    .any(|(pid, _)| cmdline_has(*pid, "smtp-sink") && fds(*pid) > 100)
        },
    );
    eprintln!("mail: {seen}");
    next_run_sweeps(base.path(), "mail");
}

#[test]
fn kill_9_mid_fs_workload_on_a_loop_device_leaves_nothing() {
    // SAFETY: geteuid has no preconditions.
    assert!(
        unsafe { libc::geteuid() } == 0,
        "this test makes a loop device: run it as root (scripts/test in CI is)"
    );
    let base = Unmounting(tempfile::tempdir().unwrap());
    let b = base.path().to_path_buf();
    // Killed once the filesystem is mounted in the work directory.
    let seen = kill_when(
        &run_args(
            base.path(),
            &[
                "fs",
                "--mkfs",
                "ext4",
                "--fs-size",
                "512M",
                "--files",
                "20000",
                "--bytes",
                "100M",
                "--requests",
                "500",
            ],
        ),
        base.path(),
        Duration::from_secs(120),
        move |_| !mounts_under(&b).is_empty(),
    );
    eprintln!("fs: {seen}");
    assert!(
        !mounts_under(base.path()).is_empty(),
        "the killed run left its filesystem mounted (the case this test is for)"
    );
    next_run_sweeps(base.path(), "fs");
}
