//! Every signal is the first one until the cleanup is done: two stop signals a few milliseconds apart, at random points of
//! a fork run under a tuning profile, of pgbench against its throwaway
//! PostgreSQL cluster and of the mail workload, and GNU `timeout`'s pair
//! (the process, then its group), skip nothing. Each run ends with status
//! 130 (`timeout`'s own 124 under it), the setting back, the result file
//! holding what finished (the complete runs or levels of the interrupted
//! benchmark, status `interrupted`), no process of the run left, none of
//! the cluster's shared memory left (System V and /dev/shm), the work
//! directory removed, and a message on standard error saying so.
//!
//! The moments are events (a progress line), shifted by a random delay;
//! the gaps between the two signals are random. A try where the first
//! signal is certainly handled before the second arrives (the process
//! stopped with SIGSTOP, both signals queued, then SIGCONT) checks that a
//! repeated signal says the cleanup goes on.
//!
//! Each test changes a sysctl no other test touches (`kernel.msgmax`,
//! `kernel.msgmnb`): applying needs root (as CI runs).

#![cfg(target_os = "linux")]

use crate::common;

use common::{assert_valid, load};
use rand::RngExt;
use serde_json::Value;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// One test at a time: each starts a busy run; together on two CPUs they
/// would only slow each other.
static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one() -> std::sync::MutexGuard<'static, ()> {
    ONE.lock().unwrap_or_else(|e| e.into_inner())
}

/// How long a run may take to reach an event or to end: a bound for a
/// failure (a hang), never a goal.
const LIMIT: Duration = Duration::from_secs(240);

fn require_root() {
    // SAFETY: geteuid has no preconditions.
    assert!(
        unsafe { libc::geteuid() } == 0,
        "these tests apply a sysctl and start PostgreSQL as its user: run them as root (scripts/test in CI is)"
    );
}

fn sysctl(name: &str) -> String {
    std::fs::read_to_string(format!("/proc/sys/{}", name.replace('.', "/")))
        .unwrap()
        .trim()
        .to_string()
}

/// A profile file setting `name` to one more than its value now.
fn profile(dir: &Path, name: &str) -> (PathBuf, String) {
    let value = (sysctl(name).parse::<u64>().unwrap() + 1).to_string();
    let p = dir.join("p.toml");
    std::fs::write(
        &p,
        format!(
            "format = \"scalebench-profile/1\"\nname = \"p\"\ndescription = \"signals\"\n\
             [linux.sysctl]\n\"{name}\" = {value}\n"
        ),
    )
    .unwrap();
    (p, value)
}

fn sig_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "?",
    }
}

/// A scalebench run in a session of its own, its standard error read
/// line by line as it comes.
struct Run {
    child: std::process::Child,
    lines: mpsc::Receiver<String>,
    err: Vec<String>,
    base: PathBuf,
}

/// Should a test fail with its run still going, the run is killed and
/// what it changed put back (`scalebench restore`) before its temporary
/// directory, journal included, goes.
fn abandon(child: &mut std::process::Child, base: &Path) {
    if matches!(child.try_wait(), Ok(None)) {
        // The process group of the session's leader: scalebench (and
        // `timeout` before it); their children die with them.
        // SAFETY: signalling the group of the child this test started.
        unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
        let _ = child.wait();
        let _ = session_left(child.id() as i32);
        let _ = std::process::Command::new(env!("CARGO_BIN_EXE_scalebench"))
            .arg("restore")
            .arg("--workdir")
            .arg(base)
            .status();
    }
}

/// A child abandoned (see [`abandon`]) if the test fails.
struct Guarded(std::process::Child, PathBuf);

impl Drop for Guarded {
    fn drop(&mut self) {
        abandon(&mut self.0, &self.1);
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        abandon(&mut self.child, &self.base);
    }
}

impl Run {
    fn start(program: &str, args: &[String], base: &Path) -> Run {
        let mut cmd = std::process::Command::new(program);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        common::in_new_session(&mut cmd);
        let mut child = cmd.spawn().unwrap();
        let (tx, lines) = mpsc::channel();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for l in std::io::BufReader::new(err).lines() {
                let Ok(l) = l else { break };
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        Run {
            child,
            lines,
            err: Vec::new(),
            base: base.to_path_buf(),
        }
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Waits for a line of standard error containing `needle`.
    fn wait_for(&mut self, needle: &str) {
        let deadline = Instant::now() + LIMIT;
        loop {
            match self
                .lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                Ok(l) => {
                    let hit = l.contains(needle);
                    self.err.push(l);
                    if hit {
                        return;
                    }
                }
                Err(e) => panic!(
                    "no line with {needle:?} ({e:?}); standard error so far:\n{}",
                    self.err.join("\n")
                ),
            }
        }
    }

    fn signal(&self, sig: i32) {
        // SAFETY: signalling the child this test started.
        unsafe { libc::kill(self.pid(), sig) };
    }

    /// Stops the process (SIGSTOP) and waits until it is stopped; false
    /// when it had already ended.
    fn freeze(&self) -> bool {
        self.signal(libc::SIGSTOP);
        let deadline = Instant::now() + LIMIT;
        loop {
            match common::stat(self.pid()) {
                Some(('T', _)) => return true,
                Some(('Z', _)) | None => return false,
                _ => {}
            }
            assert!(Instant::now() < deadline, "SIGSTOP did not stop it");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Waits for the end; its status and everything it wrote on standard
    /// error.
    fn end(&mut self) -> (std::process::ExitStatus, String) {
        let deadline = Instant::now() + LIMIT;
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > deadline {
                abandon(&mut self.child, &self.base);
                panic!(
                    "did not end within {LIMIT:?} of the signals:\n{}",
                    self.err.join("\n")
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        while let Ok(l) = self.lines.recv_timeout(Duration::from_secs(10)) {
            self.err.push(l);
        }
        (status, self.err.join("\n"))
    }
}

/// Sleeps a random time up to `max_ms` (to vary the moment or the gap).
fn jitter(max_ms: u64) -> u64 {
    let ms = rand::rng().random_range(0..=max_ms);
    std::thread::sleep(Duration::from_millis(ms));
    ms
}

/// Two stop signals: `first`, then `second` after a random gap of up to
/// `gap_ms`; or, when `frozen`, both queued while the process is stopped
/// (so that the second is certainly a repeat). Returns the gap, or `None`
/// for a frozen try whose process had already ended.
fn two_signals(r: &Run, first: i32, second: i32, gap_ms: u64, frozen: bool) -> Option<u64> {
    if frozen {
        if !r.freeze() {
            return None;
        }
        r.signal(first);
        r.signal(second);
        r.signal(libc::SIGCONT);
        return Some(0);
    }
    r.signal(first);
    let gap = jitter(gap_ms);
    r.signal(second);
    Some(gap)
}

/// Live processes of session `sid` (scalebench and every child it started
/// that did not leave the session), after waiting up to 30 s for them to
/// go (they end at once unless something is wrong; a busy machine may
/// take a moment to run their exits).
fn session_left(sid: i32) -> Vec<(i32, String)> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left: Vec<(i32, String)> = common::live_processes()
            .into_iter()
            .filter(|(_, _, s)| *s == sid)
            .map(|(p, n, _)| (p, n))
            .collect();
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What a run's end must be.
struct Expect<'a> {
    /// Its exit status (130; `timeout`'s 124 under it).
    code: i32,
    /// A sysctl a profile changed and its value before.
    setting: Option<(&'a str, &'a str)>,
    /// Whether the signals certainly came while the profile was applied
    /// (then the message names the setting restored).
    during_profile: bool,
}

/// What an interrupted run must have done, whatever the moment: status,
/// the message, the result file, no process of the session, the work
/// directory removed, the setting back. Returns the result file.
fn check_cleanup(
    what: &str,
    (status, err): (std::process::ExitStatus, &str),
    result: &Path,
    base: &Path,
    sid: i32,
    e: Expect,
) -> Value {
    assert_eq!(status.code(), Some(e.code), "{what}: exit status\n{err}");
    let summary = summary_of(err);
    assert!(
        !summary.is_empty(),
        "{what}: no message on what the cleanup did:\n{err}"
    );
    assert!(
        !err.contains("panicked"),
        "{what}: a panic during the cleanup:\n{err}"
    );
    if let Some((name, before)) = e.setting {
        assert_eq!(sysctl(name), before, "{what}: {name} restored\n{err}");
        if e.during_profile {
            assert!(
                summary.contains(&format!("{name} restored")),
                "{what}: the message names the setting restored: {summary}"
            );
        }
    }
    let left = session_left(sid);
    assert!(left.is_empty(), "{what}: processes left: {left:?}\n{err}");
    assert_eq!(
        common::scalebench_entries(base),
        Vec::<String>::new(),
        "{what}: work directory left\n{err}"
    );
    assert!(
        summary.contains("removed the work directory"),
        "{what}: the message says the work directory went: {summary}"
    );
    let doc = load(result);
    assert_valid(&doc);
    assert_eq!(
        doc["complete"], false,
        "{what}: an interrupted file is not complete"
    );
    assert!(
        summary.contains(&format!("in {}", result.display())),
        "{what}: the message names the result file: {summary}"
    );
    doc
}

/// The interrupted benchmark of a result file: status `interrupted`, and
/// only complete runs (every n timed) kept, as many as the message says.
fn check_interrupted_series(what: &str, doc: &Value, series: &str, summary: &str) -> usize {
    let b = doc["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["series"] == series)
        .unwrap_or_else(|| panic!("{what}: no {series} in the result file ({summary})"));
    assert_eq!(b["status"], "interrupted", "{what}: {series}");
    let n = b["params"]["n"].as_u64().unwrap() as usize;
    let runs = b["runs"].as_array().unwrap();
    for r in runs {
        assert_eq!(
            r["samples"].as_array().unwrap().len(),
            n,
            "{what}: a kept run of {series} is complete"
        );
    }
    let words = format!(
        "{} complete run{} of {series} (interrupted)",
        runs.len(),
        if runs.len() == 1 { "" } else { "s" }
    );
    assert!(summary.contains(&words), "{what}: {words:?} in {summary}");
    runs.len()
}

fn summary_of(err: &str) -> &str {
    err.lines()
        .find(|l| l.starts_with("interrupted by SIG"))
        .unwrap_or("")
}

#[test]
fn two_signals_at_random_points_of_a_fork_run_under_a_profile_skip_nothing() {
    require_root();
    let _one = one();
    let name = "kernel.msgmax";
    let before = sysctl(name);
    let sigs = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];
    let mut rng = rand::rng();
    let mut said_again = 0;
    let tries = 6;
    for i in 0..tries {
        let base = tempfile::tempdir().unwrap();
        let (file, value) = profile(base.path(), name);
        let result = base.path().join("r.json");
        let first = sigs[rng.random_range(0..3)];
        // Frozen tries queue two different signals (equal ones merge).
        let frozen = i % 3 == 2;
        let second = if frozen {
            sigs[(sigs.iter().position(|&s| s == first).unwrap() + 1) % 3]
        } else {
            sigs[rng.random_range(0..3)]
        };
        let k = rng.random_range(1..=3);
        let mut r = Run::start(
            env!("CARGO_BIN_EXE_scalebench"),
            &[
                "run".into(),
                "fork".into(),
                "--runs".into(),
                "20".into(),
                "--no-report".into(),
                "--profile".into(),
                file.display().to_string(),
                "-o".into(),
                result.display().to_string(),
                "--workdir".into(),
                base.path().display().to_string(),
            ],
            base.path(),
        );
        let sid = r.pid();
        r.wait_for(&format!("fork: run {k}/20"));
        assert_eq!(sysctl(name), value, "applied during the run");
        let late = jitter(300);
        let gap = two_signals(&r, first, second, 30, frozen);
        let what = format!(
            "try {i}: {} then {} {gap:?} ms apart, {late} ms into run {k}{}",
            sig_name(first),
            sig_name(second),
            if frozen { " (frozen)" } else { "" }
        );
        let (status, err) = r.end();
        let doc = check_cleanup(
            &what,
            (status, &err),
            &result,
            base.path(),
            sid,
            Expect {
                code: 130,
                setting: Some((name, &before)),
                during_profile: true,
            },
        );
        let summary = summary_of(&err);
        let runs = check_interrupted_series(&what, &doc, "fork", summary);
        assert!(
            runs >= k - 1,
            "{what}: {runs} runs kept, {} had finished",
            k - 1
        );
        let again = err.contains(" again: the cleanup goes on");
        if frozen {
            assert!(
                again,
                "{what}: a repeated signal says the cleanup goes on:\n{err}"
            );
            assert!(
                err.contains("kill -9") && err.contains("scalebench restore"),
                "{what}: and how to abandon it:\n{err}"
            );
            assert!(summary.contains("(2 signals)"), "{what}: {summary}");
        }
        said_again += usize::from(again);
        eprintln!("{what}: ok, {runs} runs kept; {summary}");
    }
    eprintln!("{said_again} of {tries} tries saw the second signal as a repeat");
}

/// Watches `base` for our cluster every 20 ms until `stop` is set.
fn watch_cluster(
    base: PathBuf,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<common::PgCluster> {
    std::thread::spawn(move || {
        let mut c = common::PgCluster::default();
        while !stop.load(std::sync::atomic::Ordering::SeqCst) {
            c.look(&base);
            std::thread::sleep(Duration::from_millis(20));
        }
        c
    })
}

fn pgbench_args(base: &Path, result: &Path) -> Vec<String> {
    [
        "run",
        "pgbench",
        "--sweep",
        "clients=1,2",
        "--heat-up",
        "0",
        "--sample-time",
        "1",
        "--samples",
        "3",
        "--db-size",
        "48M",
        "--no-report",
        "-o",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        result.display().to_string(),
        "--workdir".into(),
        base.display().to_string(),
    ])
    .collect()
}

/// A pgbench result file: the workload interrupted, its levels as the
/// message says.
fn check_pgbench_result(what: &str, doc: &Value, summary: &str) {
    let w = &doc["workloads"][0];
    assert_eq!(w["name"], "pgbench", "{what}");
    assert_eq!(w["status"], "interrupted", "{what}: {w}");
    let levels: usize = w["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["sweep"]["levels"].as_array())
        .map(|ls| ls.iter().filter(|l| l["value"].is_number()).count())
        .sum();
    // Interrupted while loading the tables, it has no sweep yet: its rows
    // (none measured) are counted instead.
    let sweeps = w["rows"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["sweep"].is_object());
    let words = format!(
        "{levels} measured {}{} of pgbench (interrupted)",
        if sweeps { "level" } else { "row" },
        if levels == 1 { "" } else { "s" }
    );
    assert!(summary.contains(&words), "{what}: {words:?} in {summary}");
}

#[test]
fn two_signals_during_pgbench_stop_its_cluster_and_free_its_shared_memory() {
    require_root();
    let _one = one();
    let mut rng = rand::rng();
    let sigs = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];
    // Loading the tables, the first level, the second level.
    let moments = ["pgbench -i", "clients 1 (1/2)", "clients 2 (2/2)"];
    for (i, moment) in moments.iter().enumerate() {
        let base = tempfile::tempdir().unwrap();
        let result = base.path().join("r.json");
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let watcher = watch_cluster(base.path().to_path_buf(), stop.clone());
        let mut r = Run::start(
            env!("CARGO_BIN_EXE_scalebench"),
            &pgbench_args(base.path(), &result),
            base.path(),
        );
        let sid = r.pid();
        r.wait_for(moment);
        let late = jitter(400);
        let (first, second) = (sigs[rng.random_range(0..3)], sigs[rng.random_range(0..3)]);
        let frozen = i == 1;
        let second = if frozen && second == first {
            sigs[(sigs.iter().position(|&s| s == first).unwrap() + 1) % 3]
        } else {
            second
        };
        let gap = two_signals(&r, first, second, 20, frozen);
        let what = format!(
            "pgbench try {i}: {} then {} {gap:?} ms apart, {late} ms after {moment:?}{}",
            sig_name(first),
            sig_name(second),
            if frozen { " (frozen)" } else { "" }
        );
        let (status, err) = r.end();
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let cluster = watcher.join().unwrap();
        let doc = check_cleanup(
            &what,
            (status, &err),
            &result,
            base.path(),
            sid,
            Expect {
                code: 130,
                setting: None,
                during_profile: false,
            },
        );
        let summary = summary_of(&err);
        check_pgbench_result(&what, &doc, summary);
        assert!(
            !cluster.processes.is_empty() && !cluster.posix.is_empty() && !cluster.sysv.is_empty(),
            "{what}: the cluster was seen running: {cluster:?}"
        );
        assert_eq!(cluster.left(), Vec::<String>::new(), "{what}: {err}");
        assert!(
            summary.contains("stopped PostgreSQL ("),
            "{what}: the message says PostgreSQL was stopped: {summary}"
        );
        if frozen {
            assert!(
                err.contains(" again: the cleanup goes on"),
                "{what}:\n{err}"
            );
        }
        eprintln!(
            "{what}: ok ({} postgres processes, {} POSIX and {} System V segments seen, none left); {summary}",
            cluster.processes.len(),
            cluster.posix.len(),
            cluster.sysv.len()
        );
    }
}

#[test]
fn two_signals_during_the_mail_workload_keep_its_finished_levels() {
    let _one = one();
    let mut rng = rand::rng();
    for i in 0..2 {
        let base = tempfile::tempdir().unwrap();
        let result = base.path().join("r.json");
        let mut r = Run::start(
            env!("CARGO_BIN_EXE_scalebench"),
            &[
                "run",
                "mail",
                "--sweep",
                "sessions=100,200,300",
                "--heat-up",
                "0",
                "--sample-time",
                "1",
                "--samples",
                "2",
                "--no-report",
                "-o",
            ]
            .iter()
            .map(|s| s.to_string())
            .chain([
                result.display().to_string(),
                "--workdir".into(),
                base.path().display().to_string(),
            ])
            .collect::<Vec<_>>(),
            base.path(),
        );
        let sid = r.pid();
        r.wait_for("sessions 200 (2/3)");
        let late = jitter(1500);
        let sigs = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];
        let first = sigs[rng.random_range(0..3)];
        let frozen = i == 1;
        let second = if frozen {
            sigs[(sigs.iter().position(|&s| s == first).unwrap() + 1) % 3]
        } else {
            sigs[rng.random_range(0..3)]
        };
        let gap = two_signals(&r, first, second, 20, frozen);
        let what = format!(
            "mail try {i}: {} then {} {gap:?} ms apart, {late} ms into level 2",
            sig_name(first),
            sig_name(second)
        );
        let (status, err) = r.end();
        let doc = check_cleanup(
            &what,
            (status, &err),
            &result,
            base.path(),
            sid,
            Expect {
                code: 130,
                setting: None,
                during_profile: false,
            },
        );
        let summary = summary_of(&err);
        let w = &doc["workloads"][0];
        assert_eq!(w["status"], "interrupted", "{what}: {w}");
        let levels = w["rows"][0]["sweep"]["levels"].as_array().unwrap();
        let measured = levels.iter().filter(|l| l["value"].is_number()).count();
        assert!(
            measured >= 1,
            "{what}: the first level, which finished, is kept: {w}"
        );
        assert!(
            summary.contains(&format!("{measured} measured level")),
            "{what}: {summary}"
        );
        assert!(
            summary.contains("child process group"),
            "{what}: the message says the sink and sender were stopped: {summary}"
        );
        if frozen {
            assert!(
                err.contains(" again: the cleanup goes on"),
                "{what}:\n{err}"
            );
        }
        eprintln!("{what}: ok, {measured} levels kept; {summary}");
    }
}

/// GNU `timeout`, which sends SIGTERM to scalebench and then to its
/// process group: the same as two signals at once.
#[test]
fn under_gnu_timeout_nothing_is_skipped() {
    require_root();
    let _one = one();
    let name = "kernel.msgmnb";
    let before = sysctl(name);
    let timeout = ["/usr/bin/timeout", "/bin/timeout"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("GNU timeout (coreutils) is installed");
    let mut rng = rand::rng();
    for i in 0..4 {
        let base = tempfile::tempdir().unwrap();
        let (file, value) = profile(base.path(), name);
        let result = base.path().join("r.json");
        // 3 to 5 s into socket or fork (each long enough on any machine).
        let secs = rng.random_range(3..=5);
        let order = if i % 2 == 0 {
            ["socket", "fork"]
        } else {
            ["fork", "socket"]
        };
        let mut r = Run::start(
            timeout,
            &[
                secs.to_string(),
                env!("CARGO_BIN_EXE_scalebench").into(),
                "run".into(),
                order[0].into(),
                order[1].into(),
                "--runs".into(),
                "200".into(),
                "--no-report".into(),
                "--profile".into(),
                file.display().to_string(),
                "-o".into(),
                result.display().to_string(),
                "--workdir".into(),
                base.path().display().to_string(),
            ],
            base.path(),
        );
        let sid = r.pid();
        let what = format!("timeout {secs} try {i}");
        let (status, err) = r.end();
        // timeout's own status when it had to signal.
        let doc = check_cleanup(
            &what,
            (status, &err),
            &result,
            base.path(),
            sid,
            Expect {
                code: 124,
                setting: Some((name, &before)),
                during_profile: false,
            },
        );
        let summary = summary_of(&err);
        assert!(
            summary.starts_with("interrupted by SIGTERM"),
            "{what}: {summary}"
        );
        assert_ne!(value, before);
        // What finished is whole; the one interrupted keeps its complete runs.
        for b in doc["benchmarks"].as_array().unwrap() {
            if b["status"] == "interrupted" {
                let s = b["series"].as_str().unwrap();
                check_interrupted_series(&what, &doc, s, summary);
            } else {
                assert_eq!(b["status"], "ok", "{what}: {b}");
                assert_eq!(b["runs"].as_array().unwrap().len(), 200, "{what}");
            }
        }
        eprintln!("{what}: ok; {summary}");
    }
}

#[test]
fn timeout_during_pgbench_leaves_no_postgres_and_no_shared_memory() {
    require_root();
    let _one = one();
    let timeout = ["/usr/bin/timeout", "/bin/timeout"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("GNU timeout (coreutils) is installed");
    let base = tempfile::tempdir().unwrap();
    let result = base.path().join("r.json");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = watch_cluster(base.path().to_path_buf(), stop.clone());
    // Long enough (10 levels of 4 s of samples) that timeout always
    // comes first; 3 to 12 s: starting the cluster, loading the tables or
    // a level.
    let secs = rand::rng().random_range(3..=12);
    let mut args = vec![secs.to_string(), env!("CARGO_BIN_EXE_scalebench").into()];
    let mut run = pgbench_args(base.path(), &result);
    let at = run.iter().position(|a| a == "clients=1,2").unwrap();
    run[at] = "clients=1,2,3,4,5,6,7,8,9,10".into();
    let at = run.iter().position(|a| a == "--samples").unwrap();
    run[at + 1] = "4".into();
    args.extend(run);
    let mut r = Run::start(timeout, &args, base.path());
    let sid = r.pid();
    let (status, err) = r.end();
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let cluster = watcher.join().unwrap();
    let what = &format!("timeout {secs} pgbench");
    let doc = check_cleanup(
        what,
        (status, &err),
        &result,
        base.path(),
        sid,
        Expect {
            code: 124,
            setting: None,
            during_profile: false,
        },
    );
    let summary = summary_of(&err);
    if !doc["workloads"].as_array().unwrap().is_empty() {
        check_pgbench_result(what, &doc, summary);
    }
    assert_eq!(cluster.left(), Vec::<String>::new(), "{what}: {err}");
    eprintln!(
        "{what}: ok ({} postgres processes, {} POSIX and {} System V segments seen, none left); {summary}",
        cluster.processes.len(),
        cluster.posix.len(),
        cluster.sysv.len()
    );
}

/// A terminal hanging up sends SIGHUP (and every later write to it fails
/// with EIO): the run still cleans up and keeps what finished, although it
/// can no longer say so.
#[test]
fn a_terminal_hanging_up_is_a_stop_signal_like_the_others() {
    require_root();
    let _one = one();
    let name = "kernel.msgmax";
    let before = sysctl(name);
    let base = tempfile::tempdir().unwrap();
    let (file, value) = profile(base.path(), name);
    let result = base.path().join("r.json");
    // SAFETY: posix_openpt and friends on a new pseudo-terminal.
    let (master, slave) = unsafe {
        // Close-on-exec: the child must not hold the master open (it
        // would never see the hang-up, and block writing to a full
        // terminal).
        let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        assert!(m >= 0, "posix_openpt");
        assert_eq!(libc::grantpt(m), 0);
        assert_eq!(libc::unlockpt(m), 0);
        let name = std::ffi::CStr::from_ptr(libc::ptsname(m)).to_owned();
        let s = libc::open(
            name.as_ptr(),
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        );
        assert!(s >= 0, "open the pty");
        use std::os::fd::FromRawFd;
        (std::fs::File::from_raw_fd(m), std::fs::File::from_raw_fd(s))
    };
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_scalebench"));
    cmd.args(["run", "fork", "--runs", "20", "--no-report", "--profile"])
        .arg(&file)
        .arg("-o")
        .arg(&result)
        .arg("--workdir")
        .arg(base.path())
        .stdin(slave.try_clone().unwrap())
        .stdout(slave.try_clone().unwrap())
        .stderr(slave);
    // SAFETY: setsid and ioctl are async-signal-safe: the child leads a
    // session whose controlling terminal is the pty (its standard input).
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            libc::setsid();
            if libc::ioctl(0, libc::TIOCSCTTY, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = Guarded(cmd.spawn().unwrap(), base.path().to_path_buf());
    drop(cmd); // the parent's copies of the slave
    let sid = child.0.id() as i32;
    // The progress bar on the terminal reaches run 2.
    let mut seen = Vec::new();
    let mut m = master;
    let deadline = Instant::now() + LIMIT;
    while !common::text(&seen).contains("run 2/20") {
        assert!(
            Instant::now() < deadline,
            "no run 2: {}",
            common::text(&seen)
        );
        let mut b = [0u8; 4096];
        match std::io::Read::read(&mut m, &mut b) {
            Ok(n) if n > 0 => seen.extend_from_slice(&b[..n]),
            r => panic!("the terminal: {r:?}: {}", common::text(&seen)),
        }
    }
    assert_eq!(sysctl(name), value, "applied during the run");
    drop(m); // hang up
    let deadline = Instant::now() + LIMIT;
    let status = loop {
        if let Some(s) = child.0.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "did not end after the hang-up");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(130), "exit status after the hang-up");
    assert_eq!(sysctl(name), before, "{name} restored");
    assert_eq!(session_left(sid), Vec::<(i32, String)>::new());
    assert_eq!(
        common::scalebench_entries(base.path()),
        Vec::<String>::new()
    );
    let doc = load(&result);
    assert_valid(&doc);
    let b = &doc["benchmarks"][0];
    assert_eq!(b["status"], "interrupted", "{b}");
    let runs = b["runs"].as_array().unwrap();
    assert!(!runs.is_empty(), "run 1 had finished");
    // Every kept run whole: a sample at each n of the benchmark's
    // quick size (the n the run was given).
    let n = b["params"]["n"].as_u64().unwrap();
    assert!(n > 0, "{b}");
    for r in runs {
        assert_eq!(r["samples"].as_array().unwrap().len() as u64, n);
    }
    eprintln!("hang-up: exit 130, {} complete runs kept", runs.len());
}
