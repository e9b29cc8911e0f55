//! Helpers shared by the integration tests.

#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The scalebench binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_scalebench"))
}

/// Reads a JSON file.
pub fn load(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The entry of the array `list` of a JSON document whose `key` is
/// `value` (a result file's benchmark or workload, a comparison's row).
pub fn entry<'a>(doc: &'a Value, list: &str, key: &str, value: &str) -> &'a Value {
    doc[list]
        .as_array()
        .unwrap_or_else(|| panic!("no {list} array"))
        .iter()
        .find(|e| e[key] == value)
        .unwrap_or_else(|| panic!("no {value} in the {list}"))
}

/// The workload `name` of a result file.
pub fn workload<'a>(doc: &'a Value, name: &str) -> &'a Value {
    entry(doc, "workloads", "name", name)
}

/// The benchmark series named `name` (its first series) of a result file.
pub fn benchmark<'a>(doc: &'a Value, name: &str) -> &'a Value {
    entry(doc, "benchmarks", "name", name)
}

/// Checks a result file against docs/results-schema.json.
pub fn assert_valid(doc: &Value) {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/docs/results-schema.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let v = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "result file does not match the schema:\n{}",
        errors.join("\n")
    );
}

/// A child process a test started: stopped and reaped on drop — its input
/// closed, SIGTERM (nginx's master then stops its workers), SIGKILL if it
/// lingers.
pub struct Child(pub std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        drop(self.0.stdin.take());
        // Reaped already (by the test, or now): its pid may be another
        // process's by now, so it is not signalled.
        if !matches!(self.0.try_wait(), Ok(None)) {
            return;
        }
        // SAFETY: signalling our own child, not yet reaped.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        for _ in 0..200 {
            if matches!(self.0.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `cmd` with its input and output piped and reads the first line
/// it prints, which must begin with `prefix` (a server announcing where it
/// listens); returns the child and the rest of that line.
pub fn spawn_announcing(cmd: &mut Command, prefix: &str) -> (Child, String) {
    use std::io::BufRead;
    let mut child = Child(
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("the server starts"),
    );
    let mut line = String::new();
    std::io::BufReader::new(child.0.stdout.as_mut().expect("piped"))
        .read_line(&mut line)
        .expect("the server prints a line");
    let rest = line
        .trim()
        .strip_prefix(prefix)
        .unwrap_or_else(|| panic!("expected {prefix:?}…, got {line:?}"))
        .to_string();
    (child, rest)
}

/// Checks run `i` of a benchmark that measures both ways (socket, bind,
/// mmap, manymap-open, manymap-mmap) against docs/results-format.md: its
/// direction (`up-down` in even-numbered runs, `down-up` in odd ones), its
/// `crossings` (an even number, 2 to 16, when no crossing was cut short;
/// any number up to 16 when the run was, see [`cut_short`]),
/// and the n it timed, in order: crossing h timed the n with selector h
/// (n mod c, or (n + 1) mod c for `down-up`, with c crossings), up and down
/// in turn, each n below `top` once.
pub fn assert_both_ways(run: &Value, i: usize, top: u64, what: &str) {
    let peak_first = i % 2 == 1;
    let dir = if peak_first { "down-up" } else { "up-down" };
    assert_eq!(run["direction"], dir, "{what} run {i}");
    let got = sample_ns(run);
    if cut_short(run, &got, top, !peak_first, what) {
        return;
    }
    let want = both_ways_order(run, peak_first, top, what);
    assert_eq!(got, want, "{what} run {i}: n of each sample");
}

/// Whether the run was cut short as docs/results-format.md allows (a run
/// that took over twice its expected time makes its next crossing its
/// last, timing every n not yet timed, so its crossings may be odd or
/// even and their selectors are not those of the recorded count): its
/// order is not the full order of its recorded crossings. Then every n
/// below `top` was still timed once, in as many crossings as recorded,
/// each one way and the next the other, the first `up` or down as given
/// — checked here. `ns` are the held counts (or the removed ones) in
/// order.
fn cut_short(run: &Value, ns: &[u64], top: u64, up: bool, what: &str) -> bool {
    let c = run["crossings"].as_u64().expect("crossings");
    assert!((1..=16).contains(&c), "{what}: {c} crossings");
    if c.is_multiple_of(2) && both_ways_order(run, !up, top, what) == ns {
        return false;
    }
    let mut sorted = ns.to_vec();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        (0..top).collect::<Vec<_>>(),
        "{what}: a run cut short after {c} crossings still times each n once"
    );
    // Crossings: maximal runs one way, the first as given.
    let mut turns = 0;
    let mut rising = up;
    for w in ns.windows(2) {
        if (w[1] > w[0]) != rising {
            turns += 1;
            rising = !rising;
        }
    }
    assert!(
        turns < c,
        "{what}: {} crossings in the order of a run that recorded {c}: {ns:?}",
        turns + 1
    );
    true
}
/// Like [`assert_both_ways`] for a benchmark whose operation removes an
/// item (fork-cleanup): the order seen from the items removed, k, at
/// n = top − k; even-numbered runs go down first, odd ones up.
pub fn assert_falling_both_ways(run: &Value, i: usize, top: u64, what: &str) {
    let up_first = i % 2 == 1;
    let dir = if up_first { "up-down" } else { "down-up" };
    assert_eq!(run["direction"], dir, "{what} run {i}");
    let removed: Vec<u64> = sample_ns(run).iter().map(|n| top - n).collect();
    if cut_short(run, &removed, top, !up_first, what) {
        return;
    }
    let want: Vec<u64> = both_ways_order(run, up_first, top, what)
        .into_iter()
        .map(|k| top - k)
        .collect();
    assert_eq!(sample_ns(run), want, "{what} run {i}: n of each sample");
}

/// The held counts a run of `top` items times, in order, over its
/// recorded crossings (checked: even, 2 to 16).
fn both_ways_order(run: &Value, peak_first: bool, top: u64, what: &str) -> Vec<u64> {
    let c = run["crossings"].as_u64().expect("crossings");
    assert!(
        (2..=16).contains(&c) && c.is_multiple_of(2),
        "{what}: {c} crossings"
    );
    let sel = |k: u64| if peak_first { (k + 1) % c } else { k % c };
    let mut want = Vec::new();
    for h in 0..c {
        let down = (h % 2 == 0) == peak_first;
        let ks: Vec<u64> = if down {
            (0..top).rev().collect()
        } else {
            (0..top).collect()
        };
        want.extend(ks.into_iter().filter(|&k| sel(k) == h));
    }
    want
}

/// The n of every sample of a run, in order.
pub fn sample_ns(run: &Value) -> Vec<u64> {
    run["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s[0].as_u64().unwrap())
        .collect()
}

/// Live (not zombie) processes, Linux's /proc: pid, name and session.
pub fn live_processes() -> Vec<(i32, String, i32)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let f: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        // state ppid pgrp session …
        if let (Some(&state), Some(sid)) = (f.first(), f.get(3).and_then(|s| s.parse().ok()))
            && state != "Z"
        {
            out.push((pid, stat[open + 1..close].to_string(), sid));
        }
    }
    out
}

/// Live processes with one of these names, by pid.
pub fn processes_named(names: &[&str]) -> Vec<i32> {
    live_processes()
        .into_iter()
        .filter(|(_, n, _)| names.contains(&n.as_str()))
        .map(|(pid, _, _)| pid)
        .collect()
}

/// System V shared memory segment ids (Linux's /proc/sysvipc/shm).
pub fn shm_ids() -> Vec<String> {
    std::fs::read_to_string("/proc/sysvipc/shm")
        .unwrap_or_default()
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().nth(1).map(String::from))
        .collect()
}

/// This process's memory cgroup directory (v1, else v2), where scalebench
/// makes its own below.
pub fn memory_cgroup_dir() -> std::path::PathBuf {
    let text = std::fs::read_to_string("/proc/self/cgroup").unwrap();
    for l in text.lines() {
        let f: Vec<&str> = l.splitn(3, ':').collect();
        if f.len() == 3 && f[1].split(',').any(|c| c == "memory") {
            return Path::new("/sys/fs/cgroup/memory").join(f[2].trim_start_matches('/'));
        }
    }
    let path = text.lines().find_map(|l| l.strip_prefix("0::")).unwrap();
    Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/'))
}

/// The `scalebench-*` entries in `dir`.
pub fn scalebench_entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("scalebench-"))
        .collect()
}

/// Makes closing `c` send a reset instead of a FIN (SO_LINGER 0).
pub fn reset_on_close(c: &std::net::TcpStream) {
    use std::os::fd::AsRawFd;
    let l = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: setting SO_LINGER on our own socket.
    unsafe {
        libc::setsockopt(
            c.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            &l as *const _ as *const libc::c_void,
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
}

/// Closes `c` with a reset.
pub fn reset(c: std::net::TcpStream) {
    reset_on_close(&c);
}

/// Makes `cmd`'s child start a session of its own (setsid before exec), so
/// that every process it starts shares that session and can be found by it.
pub fn in_new_session(cmd: &mut Command) -> &mut Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: setsid is async-signal-safe; called in the child before exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        })
    }
}

/// Insists on root: the tests that make namespaces need it (CI runs as root).
pub fn require_root() {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    assert!(
        root,
        "these tests make network namespaces: run them as root (scripts/test in CI is)"
    );
}

/// All that a child's piped stream (`child.stdout.take()`) says until it
/// closes.
pub fn read_all(stream: Option<impl std::io::Read>) -> String {
    let mut s = String::new();
    stream
        .expect("the stream was piped")
        .read_to_string(&mut s)
        .unwrap();
    s
}

/// Bytes as text, lossily.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Output of a command that must succeed.
pub fn cmd(program: &str, args: &[&str]) -> String {
    let o = Command::new(program).args(args).output().unwrap();
    assert!(
        o.status.success(),
        "{program} {args:?}: {}",
        text(&o.stderr)
    );
    text(&o.stdout)
}

/// The network namespaces whose names start with `prefix`, sorted.
pub fn namespaces(prefix: &str) -> Vec<String> {
    cmd("ip", &["netns", "list"])
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(prefix))
        .map(String::from)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// Whether `pid` runs (not a zombie).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

/// Live processes whose command line names `needle`.
pub fn processes_naming(needle: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
        .filter(|&p| {
            std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| text(&c).contains(needle))
                && alive(p)
        })
        .collect()
}

/// Whether process `pid` works in `dir` or below it: its current
/// directory, also once that was removed. A test runs scalebench with its
/// current directory in the test's own directory; what it starts works
/// there too, and PostgreSQL works in its data directory below the work
/// directory: so a test tells its own processes from those that other
/// work on the machine runs meanwhile.
pub fn works_in(pid: i32, dir: &Path) -> bool {
    std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| c.starts_with(dir))
}

/// Live processes working in `dir` or below ([`works_in`]): pid and name.
pub fn working_in(dir: &Path) -> Vec<(i32, String)> {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    live_processes()
        .into_iter()
        .filter(|(pid, _, _)| works_in(*pid, &dir))
        .map(|(pid, name, _)| (pid, name))
        .collect()
}

/// Every process that worked in a directory while a test ran (sampled
/// every 10 ms by a thread of its own until [`Census::finish`]): what the
/// test's run started, short-lived helpers aside. Shared memory and
/// cgroups are told apart by these pids.
pub struct Census {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<std::collections::BTreeMap<i32, String>>>,
}

impl Census {
    /// Starts counting the processes working in `dir`.
    pub fn start(dir: &Path) -> Census {
        use std::sync::atomic::Ordering;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        let thread = std::thread::spawn(move || {
            let mut seen = std::collections::BTreeMap::new();
            // At most an hour: a test ends long before.
            let until = std::time::Instant::now() + std::time::Duration::from_secs(3600);
            while !flag.load(Ordering::Relaxed) && std::time::Instant::now() < until {
                for (pid, name) in working_in(&dir) {
                    seen.insert(pid, name);
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            seen
        });
        Census {
            stop,
            thread: Some(thread),
        }
    }

    /// Stops counting: every process seen, pid and name.
    pub fn finish(mut self) -> std::collections::BTreeMap<i32, String> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.take().unwrap().join().unwrap()
    }
}

impl Drop for Census {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// System V shared memory segments (Linux's /proc/sysvipc/shm): id and
/// the pid of the process that made it.
pub fn shm_segments() -> Vec<(String, i32)> {
    std::fs::read_to_string("/proc/sysvipc/shm")
        .unwrap_or_default()
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some((f.get(1)?.to_string(), f.get(4)?.parse().ok()?))
        })
        .collect()
}

/// The segments of [`shm_segments`] not in `before` that one of `makers`
/// made: what a run left.
pub fn shm_left_by(
    before: &[String],
    makers: &std::collections::BTreeMap<i32, String>,
) -> Vec<String> {
    shm_segments()
        .into_iter()
        .filter(|(id, cpid)| !before.contains(id) && makers.contains_key(cpid))
        .map(|(id, cpid)| format!("{id} (made by {cpid} {})", makers[&cpid]))
        .collect()
}

/// The memory cgroups (`scalebench-PID`, in [`memory_cgroup_dir`]) of
/// one of `pids`: what a run left.
pub fn cgroups_left_by(pids: &std::collections::BTreeMap<i32, String>) -> Vec<String> {
    scalebench_entries(&memory_cgroup_dir())
        .into_iter()
        .filter(|n| {
            n.strip_prefix("scalebench-")
                .and_then(|p| p.parse::<i32>().ok())
                .is_some_and(|p| pids.contains_key(&p))
        })
        .collect()
}

/// A process's state letter and start time (in clock ticks), from /proc.
pub fn stat(pid: i32) -> Option<(char, u64)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let f: Vec<&str> = s[s.rfind(')')? + 1..].split_whitespace().collect();
    Some((f.first()?.chars().next()?, f.get(19)?.parse().ok()?))
}

/// Whether the process `pid` that started at `start` still runs.
pub fn still_running(pid: i32, start: u64) -> bool {
    stat(pid).is_some_and(|(state, s)| s == start && state != 'Z' && state != 'X')
}

/// A scalebench run's throwaway PostgreSQL cluster, gathered while the
/// run goes on (PostgreSQL's children each make a session of their own,
/// and other clusters may run at the same time): the postmaster (its
/// data directory is under `base`) and its children with their start
/// times, the POSIX segments they map, the System V segments
/// postmaster.pid named.
#[derive(Default, Debug)]
pub struct PgCluster {
    /// Its processes: pid and start time.
    pub processes: std::collections::BTreeSet<(i32, u64)>,
    /// The POSIX shared memory segments they map (`PostgreSQL.N`).
    pub posix: std::collections::BTreeSet<String>,
    /// The System V segments its postmaster.pid named.
    pub sysv: std::collections::BTreeSet<i32>,
}

impl PgCluster {
    /// Adds what is there now.
    pub fn look(&mut self, base: &Path) {
        let under = base.to_string_lossy().into_owned();
        let postmasters = processes_named(&["postgres"]).into_iter().filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| text(&c).contains(&under))
        });
        for pm in postmasters {
            let mut ours = vec![pm];
            for (pid, _, _) in live_processes() {
                let ppid = std::fs::read_to_string(format!("/proc/{pid}/status"))
                    .unwrap_or_default()
                    .lines()
                    .find_map(|l| l.strip_prefix("PPid:").map(|v| v.trim().to_string()));
                if ppid.as_deref() == Some(pm.to_string().as_str()) {
                    ours.push(pid);
                }
            }
            for pid in ours {
                if let Some((_, start)) = stat(pid) {
                    self.processes.insert((pid, start));
                }
                let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
                for l in maps.lines() {
                    if let Some(i) = l.find("/dev/shm/PostgreSQL.") {
                        let name = l[i + "/dev/shm/".len()..].split_whitespace().next();
                        self.posix.extend(name.map(String::from));
                    }
                }
            }
        }
        for w in scalebench_entries(base) {
            let pid_file = base.join(w).join("pg/data/postmaster.pid");
            let id = std::fs::read_to_string(pid_file).ok().and_then(|t| {
                t.lines()
                    .nth(6)?
                    .split_whitespace()
                    .nth(1)?
                    .parse::<i32>()
                    .ok()
            });
            self.sysv.extend(id);
        }
    }

    /// What is left of it, after the run, in words (waited for up to
    /// 30 s: only what stays is left).
    pub fn left(&self) -> Vec<String> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let mut v: Vec<String> = self
                .processes
                .iter()
                .filter(|(p, s)| still_running(*p, *s))
                .map(|(p, _)| format!("postgres process {p}"))
                .collect();
            v.extend(
                self.posix
                    .iter()
                    .filter(|n| Path::new("/dev/shm").join(n).exists())
                    .map(|n| format!("/dev/shm/{n}")),
            );
            let ids = shm_ids();
            v.extend(
                self.sysv
                    .iter()
                    .filter(|i| ids.contains(&i.to_string()))
                    .map(|i| format!("System V segment {i}")),
            );
            if v.is_empty() || std::time::Instant::now() > deadline {
                return v;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

/// A tmpfs a test mounted (as root) on a new directory, unmounted when
/// dropped.
pub struct Tmpfs(pub PathBuf);

impl Tmpfs {
    /// A tmpfs with mount `options` (`size=128m,nosuid`) on the new
    /// directory `dir`.
    pub fn mount(dir: PathBuf, options: &str) -> Tmpfs {
        std::fs::create_dir(&dir).unwrap();
        let made = Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "none"])
            .arg(&dir)
            .status()
            .unwrap();
        assert!(made.success(), "root mounts a tmpfs (scripts/test)");
        Tmpfs(dir)
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// `judge` of every (configuration, seed) pair of `configs`
/// configurations and `seeds` seeds, on all cores (thread t takes every
/// t-th pair), each with the pair it came from. For the labelled series
/// the classifier tests draw.
pub fn on_all_cores<R: Send>(
    configs: usize,
    seeds: u64,
    judge: impl Fn(usize, u64) -> R + Sync,
) -> Vec<(usize, u64, R)> {
    let jobs: Vec<(usize, u64)> = (0..configs)
        .flat_map(|c| (0..seeds).map(move |s| (c, s)))
        .collect();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|sc| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (jobs, judge) = (&jobs, &judge);
                sc.spawn(move || {
                    jobs.iter()
                        .skip(t)
                        .step_by(threads)
                        .map(|&(c, s)| (c, s, judge(c, s)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    })
}

/// A verdict's votes in words: "O(n) 86 %, O(n log n) 14 %".
pub fn votes_words(v: &scalebench::analysis::Verdict) -> String {
    v.votes
        .iter()
        .map(|x| format!("{} {:.0} %", x.what, x.share * 100.0))
        .collect::<Vec<_>>()
        .join(", ")
}
