//! A throwaway PostgreSQL cluster: made with the system's `initdb` in the
//! work directory, served by `postgres` started directly (not through
//! `pg_ctl`, which would detach it) as a child in a process group of its
//! own, on a private port of 127.0.0.1 and a private socket directory,
//! trust authentication. Stopped when dropped, each step bounded in time:
//! a fast shutdown (after a stop signal an immediate one at once: the data
//! are thrown away), then an immediate one, and only then SIGKILL to its
//! group, after which the shared memory it left — the System V segment
//! and the POSIX dynamic shared memory segments (`/dev/shm/PostgreSQL.*`)
//! its control segment lists — is freed here ([`release_shared_memory`]).
//! Killed with scalebench even by SIGKILL (the parent-death signal; its
//! backends exit when the postmaster is gone): the next run frees what it
//! left ([`release_stale`]), and its files go with the work directory.
//!
//! PostgreSQL refuses to run as root: as root the cluster runs as the
//! `postgres` user (else `nobody`), owning its directory, and the work
//! directory is made traversable (0711) for it.

use crate::harness::reaper::{ChildGroup, run_bounded};
use crate::stop::{self, Pending, Task};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The PostgreSQL programs of one installation.
#[derive(Debug, Clone)]
pub struct Bin {
    /// The directory holding initdb, postgres, pgbench, psql, pg_isready.
    pub dir: PathBuf,
}

impl Bin {
    /// The installation whose `initdb` is on PATH, else the newest of
    /// Debian's `/usr/lib/postgresql/*/bin`.
    pub fn find() -> Result<Bin, String> {
        let has_all = |d: &Path| {
            ["initdb", "postgres", "pgbench", "psql", "pg_isready"]
                .iter()
                .all(|p| d.join(p).is_file())
        };
        if let Some(path) = std::env::var_os("PATH") {
            for d in std::env::split_paths(&path) {
                let initdb = d.join("initdb");
                if let Ok(real) = std::fs::canonicalize(&initdb)
                    && let Some(dir) = real.parent()
                    && has_all(dir)
                {
                    return Ok(Bin {
                        dir: dir.to_path_buf(),
                    });
                }
            }
        }
        let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
            .map(|rd| {
                rd.flatten()
                    .filter_map(|e| {
                        let v: u32 = e.file_name().to_string_lossy().parse().ok()?;
                        let dir = e.path().join("bin");
                        has_all(&dir).then_some((v, dir))
                    })
                    .collect()
            })
            .unwrap_or_default();
        versions.sort();
        versions.pop().map(|(_, dir)| Bin { dir }).ok_or_else(|| {
            "no PostgreSQL found (initdb, postgres, pgbench, psql and pg_isready on PATH or in /usr/lib/postgresql/*/bin; Debian: apt-get install postgresql)".to_string()
        })
    }

    /// The installation with `pgbench` and `psql` (enough for a server of
    /// someone else's).
    pub fn find_clients() -> Result<Bin, String> {
        if let Ok(b) = Bin::find() {
            return Ok(b);
        }
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path)
            .find_map(|d| {
                let real = std::fs::canonicalize(d.join("pgbench")).ok()?;
                let dir = real.parent()?;
                dir.join("psql").is_file().then(|| Bin {
                    dir: dir.to_path_buf(),
                })
            })
            .ok_or_else(|| "no pgbench and psql found (on PATH or in /usr/lib/postgresql/*/bin; Debian: apt-get install postgresql-client)".to_string())
    }

    /// One of its programs.
    pub fn tool(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

/// Who the cluster runs as: `None` for the current user, else a uid/gid.
type RunAs = Option<(u32, u32, String)>;

/// As root, the `postgres` user (else `nobody`); otherwise nobody else.
fn run_as() -> Result<RunAs, String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    for name in ["postgres", "nobody"] {
        let c = std::ffi::CString::new(name).expect("no NUL");
        // SAFETY: getpwnam with a NUL-terminated name; the result is read
        // at once, before any other getpw* call.
        let pw = unsafe { libc::getpwnam(c.as_ptr()) };
        if !pw.is_null() {
            // SAFETY: non-null passwd entry.
            let (uid, gid) = unsafe { ((*pw).pw_uid, (*pw).pw_gid) };
            return Ok(Some((uid, gid, name.to_string())));
        }
    }
    Err("running as root, and there is neither a `postgres` nor a `nobody` user to run PostgreSQL as (it refuses root)".into())
}

/// Gives `path` to the cluster's user.
fn chown(path: &Path, who: &RunAs) -> Result<(), String> {
    if let Some((uid, gid, _)) = who {
        std::os::unix::fs::chown(path, Some(*uid), Some(*gid))
            .map_err(|e| format!("chown {}: {e}", path.display()))?;
    }
    Ok(())
}

/// A free TCP port on 127.0.0.1 (free when asked; PostgreSQL binds it a
/// moment later).
fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("a free port: {e}"))?;
    Ok(l.local_addr().map_err(|e| e.to_string())?.port())
}

/// Where a cluster serves clients on another host: its listening
/// address and the one client address let in.
#[derive(Debug, Clone, Copy)]
pub struct Network {
    /// The address to listen on (unspecified: every address).
    pub listen: std::net::IpAddr,
    /// The client's address.
    pub allow: std::net::IpAddr,
}

/// `__agent pgbench`: a throwaway cluster made in `a.dir` for a client on
/// another host, listening on `a.addr` (its port 0: a free one), the
/// client at `a.allow` let in; prints `listening ADDRESS:PORT`, serves
/// until standard input ends, then stops it and removes the directory.
pub fn serve(a: &super::options::AgentArgs) -> anyhow::Result<std::process::ExitCode> {
    let bin = Bin::find().map_err(|e| anyhow::anyhow!(e))?;
    let settings: Vec<(&str, String)> = a
        .settings
        .iter()
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect();
    let n = Network {
        listen: a.addr.ip(),
        allow: a.allow,
    };
    let dir = a.dir.as_path();
    let cluster = Cluster::start(
        &bin,
        dir,
        a.max_connections,
        None,
        &settings,
        a.cpu,
        Some(n),
    )
    .map_err(|e| anyhow::anyhow!(e))?;
    {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        writeln!(
            out,
            "listening {}",
            std::net::SocketAddr::new(n.listen, cluster.port)
        )?;
        out.flush()?;
    }
    let mut sink = Vec::new();
    let _ = std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut sink);
    drop(cluster);
    std::fs::remove_dir_all(dir).map_err(|e| anyhow::anyhow!("removing {}: {e}", dir.display()))?;
    Ok(std::process::ExitCode::SUCCESS)
}

/// A cluster being made ([`Cluster::start`]): its programs, its
/// directories and user, and how its server is to run.
struct Setup<'a> {
    /// The PostgreSQL programs.
    bin: &'a Bin,
    /// The cluster's directory.
    dir: &'a Path,
    /// Its data directory (inside `dir`).
    data: PathBuf,
    /// The directory of its unix socket (inside `dir`).
    socket_dir: PathBuf,
    /// Who it runs as.
    who: RunAs,
    /// Its `max_connections`.
    max_connections: u32,
    /// The memory limit its postmaster is put under, if any.
    limit: Option<&'a crate::sys::memlimit::MemoryLimit>,
    /// Further settings (`-c name=value`).
    settings: &'a [(&'a str, String)],
    /// The CPU its postmaster is pinned to, if any.
    cpu: Option<usize>,
    /// Its `listen_addresses`.
    listen: String,
}

impl<'a> Setup<'a> {
    /// The directories made: `dir` (which must not exist), its data and
    /// socket directories, given to the user the cluster runs as (whose
    /// way in through `dir`'s parent is opened).
    fn make(
        bin: &'a Bin,
        dir: &'a Path,
        max_connections: u32,
        limit: Option<&'a crate::sys::memlimit::MemoryLimit>,
        settings: &'a [(&'a str, String)],
        cpu: Option<usize>,
        network: Option<&Network>,
    ) -> Result<Setup<'a>, String> {
        let who = run_as()?;
        if who.is_some()
            && let Some(parent) = dir.parent()
        {
            use std::os::unix::fs::PermissionsExt;
            // The cluster's user must reach its directory inside ours.
            std::fs::set_permissions(parent, std::fs::Permissions::from_mode(0o711))
                .map_err(|e| format!("chmod {}: {e}", parent.display()))?;
        }
        std::fs::create_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let data = dir.join("data");
        let socket_dir = dir.join("sock");
        for d in [&data, &socket_dir] {
            std::fs::create_dir(d).map_err(|e| format!("{}: {e}", d.display()))?;
        }
        for d in [dir, &data, &socket_dir] {
            chown(d, &who)?;
        }
        Ok(Setup {
            bin,
            dir,
            data,
            socket_dir,
            who,
            max_connections,
            limit,
            settings,
            cpu,
            listen: listen_address(network),
        })
    }

    /// `cmd` set to run as the cluster's user, in its directory.
    fn as_user(&self, cmd: &mut Command) {
        use std::os::unix::process::CommandExt;
        if let Some((uid, gid, _)) = &self.who {
            cmd.uid(*uid).gid(*gid);
        }
        cmd.current_dir(self.dir);
    }

    /// The data directory made by `initdb` (trust, the benchmark's user,
    /// UTF-8, the C locale), in two minutes at most.
    fn initdb(&self) -> Result<(), String> {
        let mut initdb = self.initdb_command();
        let f = run_bounded(&mut initdb, Duration::from_secs(120));
        // initdb's own postgres (bootstrap, then single-user) makes a
        // System V segment and names it in postmaster.pid: killed with
        // initdb (a stop signal, the time limit) it leaves the segment.
        let freed = release_shared_memory(&self.data, Duration::from_secs(5));
        if !freed.is_empty() {
            stop::did(format!("stopped initdb: {}", freed.join("; ")));
            if !stop::interrupted() {
                for f in &freed {
                    stop::say(&format!("scalebench: {f}"));
                }
            }
        }
        let f = f.map_err(|e| format!("initdb: {e}"))?;
        if !f.status.is_some_and(|s| s.success()) {
            return Err(format!(
                "initdb failed ({}): {}",
                f.status
                    .map_or("no exit status".to_string(), |s| s.to_string()),
                tool_said("initdb", &f.stderr, 3)
            ));
        }
        Ok(())
    }

    /// The `initdb` command making the data directory.
    fn initdb_command(&self) -> Command {
        let mut initdb = Command::new(self.bin.tool("initdb"));
        initdb.arg("-D").arg(&self.data).args([
            "-A",
            "trust",
            "-U",
            USER,
            "-N",
            "-E",
            "UTF8",
            "--locale=C",
        ]);
        self.as_user(&mut initdb);
        initdb
    }

    /// `network`'s client address let in (trust) by `pg_hba.conf`.
    fn allow_client(&self, n: &Network) -> Result<(), String> {
        use std::io::Write;
        let hba = self.data.join("pg_hba.conf");
        let bits = if n.allow.is_ipv6() { 128 } else { 32 };
        std::fs::OpenOptions::new()
            .append(true)
            .open(&hba)
            .and_then(|mut f| {
                writeln!(
                    f,
                    "# scalebench: the client host\nhost all all {}/{bits} trust",
                    n.allow
                )
            })
            .map_err(|e| format!("{}: {e}", hba.display()))?;
        Ok(())
    }

    /// The server started on `port` (its log in a new `postgres.log`), in
    /// its process group, under the memory limit and on the CPU if asked;
    /// not yet waited for.
    fn spawn(&self, port: u16) -> Result<Cluster, String> {
        let log = self.dir.join("postgres.log");
        let logf = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        chown(&log, &self.who)?;
        let mut cmd = Command::new(self.bin.tool("postgres"));
        cmd.arg("-D")
            .arg(&self.data)
            .arg("-c")
            .arg(format!("listen_addresses={}", self.listen))
            .args(["-c", &format!("port={port}")])
            .arg("-c")
            .arg(format!(
                "unix_socket_directories={}",
                self.socket_dir.display()
            ))
            .args(["-c", &format!("max_connections={}", self.max_connections)])
            .args(
                self.settings
                    .iter()
                    .flat_map(|(k, v)| ["-c".to_string(), format!("{k}={v}")]),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(logf));
        self.as_user(&mut cmd);
        if let Some(cpu) = self.cpu {
            pin_child(&mut cmd, cpu);
        }
        let group = ChildGroup::spawn(&mut cmd).map_err(|e| format!("postgres: {e}"))?;
        // At once, before it forks its helpers and backends.
        if let Some(l) = self.limit {
            l.add(group.pgid() as u32)
                .map_err(|e| crate::sys::error_words(&e))?;
        }
        Ok(Cluster {
            bin: self.bin.clone(),
            group: Some(group),
            dir: self.dir.to_path_buf(),
            port,
            socket_dir: self.socket_dir.clone(),
            runs_as: self.who.as_ref().map(|w| w.2.clone()),
            pending: Some(stop::pending(Task::Database)),
        })
    }
}

/// The `listen_addresses` for `network`'s address (`0.0.0.0` or `::` for
/// every address), or 127.0.0.1 without a network.
fn listen_address(network: Option<&Network>) -> String {
    network.map_or("127.0.0.1".to_string(), |n| match n.listen {
        std::net::IpAddr::V4(a) if a.is_unspecified() => "0.0.0.0".to_string(),
        std::net::IpAddr::V6(a) if a.is_unspecified() => "::".to_string(),
        a => a.to_string(),
    })
}

/// The user the benchmark connects as.
pub const USER: &str = "scalebench";
/// The database it uses.
pub const DATABASE: &str = "postgres";

/// A running throwaway cluster.
pub struct Cluster {
    bin: Bin,
    group: Option<ChildGroup>,
    dir: PathBuf,
    /// The TCP port on 127.0.0.1.
    pub port: u16,
    /// The directory of its unix socket.
    pub socket_dir: PathBuf,
    /// Who it runs as (the user name), when not the current user.
    pub runs_as: Option<String>,
    /// Counted as cleanup still to do until it is stopped.
    pending: Option<Pending>,
}

impl Cluster {
    /// Makes a cluster in `dir` (created; must not exist) and starts it
    /// with `max_connections` and `settings`, its postmaster (and so every
    /// backend) under `limit` and on `cpu` if given; waits until it accepts
    /// connections. It listens on 127.0.0.1, or on `network`'s address
    /// letting in its client address besides this machine's (trust, as the
    /// rest).
    pub fn start(
        bin: &Bin,
        dir: &Path,
        max_connections: u32,
        limit: Option<&crate::sys::memlimit::MemoryLimit>,
        settings: &[(&str, String)],
        cpu: Option<usize>,
        network: Option<Network>,
    ) -> Result<Cluster, String> {
        let s = Setup::make(
            bin,
            dir,
            max_connections,
            limit,
            settings,
            cpu,
            network.as_ref(),
        )?;
        s.initdb()?;
        if let Some(n) = &network {
            s.allow_client(n)?;
        }
        let mut last_error = String::new();
        for _ in 0..3 {
            let mut c = s.spawn(free_port()?)?;
            match c.wait_ready(Duration::from_secs(60)) {
                Ok(()) => return Ok(c),
                Err(e) if stop::interrupted() => return Err(e),
                Err(e) => last_error = e,
            }
        }
        Err(format!("postgres did not start: {last_error}"))
    }

    /// Waits until the server accepts connections, or it has exited.
    fn wait_ready(&mut self, limit: Duration) -> Result<(), String> {
        let start = Instant::now();
        while start.elapsed() < limit {
            if let Some(g) = self.group.as_mut()
                && let Ok(Some(st)) = g.child().try_wait()
            {
                return Err(format!("postgres exited ({st}): {}", self.log_tail()));
            }
            let f = run_bounded(
                Command::new(self.bin.tool("pg_isready"))
                    .args(["-q", "-t", "1", "-h"])
                    .arg(&self.socket_dir)
                    .args(["-p", &self.port.to_string()]),
                Duration::from_secs(5),
            )
            .map_err(|e| format!("pg_isready: {e}"))?;
            if f.status.is_some_and(|s| s.success()) {
                return Ok(());
            }
            if crate::stop::interrupted() {
                return Err("interrupted".into());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(format!("not ready after {limit:?}: {}", self.log_tail()))
    }

    /// The last lines of the server's log.
    pub fn log_tail(&self) -> String {
        last_lines(
            &std::fs::read_to_string(self.dir.join("postgres.log")).unwrap_or_default(),
            3,
        )
    }

    /// Stops the server, every step bounded in time: a fast shutdown
    /// (SIGINT: a checkpoint, then every process ends and the shared
    /// memory is freed) for up to 30 s, then an immediate one (SIGQUIT: no
    /// checkpoint, the same end) for up to 10 s, then SIGKILL to its
    /// group, after which the shared memory it left is freed here. After a
    /// stop signal the immediate shutdown comes first (the data are thrown
    /// away: nothing to write). What was done is recorded for the message
    /// after a stop signal ([`stop::did`]).
    pub fn stop(&mut self) {
        let Some(mut g) = self.group.take() else {
            return;
        };
        let start = Instant::now();
        let how = shut_down(&mut g);
        drop(g); // kills and reaps what is left of its group
        // A postmaster that ended well removed postmaster.pid; one that
        // was killed left it, naming its shared memory.
        let freed = release_shared_memory(&self.dir.join("data"), Duration::from_secs(5));
        stop::did(format!(
            "stopped PostgreSQL ({how}, {:.1} s){}",
            start.elapsed().as_secs_f64(),
            if freed.is_empty() {
                String::new()
            } else {
                format!(": {}", freed.join("; "))
            }
        ));
        if !stop::interrupted() {
            for f in &freed {
                stop::say(&format!("scalebench: {f}"));
            }
        }
        self.pending = None;
    }
}

/// Ends the postmaster leading `g` (see [`Cluster::stop`]); returns how,
/// in words.
fn shut_down(g: &mut ChildGroup) -> &'static str {
    let ended = |g: &mut ChildGroup| !matches!(g.child().try_wait(), Ok(None));
    if ended(g) {
        return "it had exited";
    }
    let steps = [
        (libc::SIGINT, "fast shutdown", Duration::from_secs(30)),
        (libc::SIGQUIT, "immediate shutdown", Duration::from_secs(10)),
    ];
    let first = usize::from(stop::interrupted());
    for (sig, words, limit) in &steps[first..] {
        let calm = !stop::interrupted();
        // SAFETY: signalling the postmaster we started.
        unsafe { libc::kill(g.pgid(), *sig) };
        let t = Instant::now();
        let mut pause = Duration::from_millis(1);
        while t.elapsed() < *limit {
            if ended(g) {
                return words;
            }
            // A stop signal during a fast shutdown: go on with an
            // immediate one at once.
            if calm && stop::interrupted() {
                break;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(20));
        }
    }
    "killed with SIGKILL: it did not stop within 40 s"
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The database pgbench runs against: the throwaway cluster, or an
/// existing server given by a libpq connection string.
pub struct Server {
    bin: Bin,
    local: Option<Cluster>,
    conninfo: Option<String>,
    socket: bool,
    client_cpu: Option<usize>,
    /// A throwaway cluster on the server host (`__agent pgbench`).
    hosted: Option<crate::hosts::Served>,
}

impl Drop for Server {
    /// A throwaway cluster on the server host (`__agent pgbench`) stops it
    /// and frees its shared memory when its input ends: it is given the
    /// time for that (bounded) before its process group is killed.
    fn drop(&mut self) {
        if let Some(mut s) = self.hosted.take() {
            let start = Instant::now();
            s.close_input();
            let ended = s.wait(Duration::from_secs(45));
            stop::did(match ended {
                Some(_) => format!(
                    "stopped PostgreSQL on the server host ({:.1} s)",
                    start.elapsed().as_secs_f64()
                ),
                None => "PostgreSQL on the server host did not stop within 45 s: killed".into(),
            });
        }
    }
}

/// Pins the child `cmd` starts to `cpu` before it runs (what it forks
/// inherits that); when the pin fails the child does not start, so that
/// a pinning recorded is a pinning that happened.
fn pin_child(cmd: &mut Command, cpu: usize) {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec; pin_to_cpu makes one system call and
    // allocates nothing.
    unsafe {
        cmd.pre_exec(move || crate::sys::pin_to_cpu(cpu));
    }
}

impl Server {
    /// The throwaway cluster `c`, reached over TCP (or its unix socket),
    /// pgbench on `client_cpu` if given.
    pub fn local(bin: Bin, c: Cluster, socket: bool, client_cpu: Option<usize>) -> Server {
        Server {
            bin,
            local: Some(c),
            conninfo: None,
            socket,
            client_cpu,
            hosted: None,
        }
    }

    /// An existing server by connection string (`host=… port=… user=…
    /// dbname=…` or a `postgresql://` URI).
    pub fn remote(bin: Bin, conninfo: String) -> Server {
        Server {
            bin,
            local: None,
            conninfo: Some(conninfo),
            socket: false,
            client_cpu: None,
            hosted: None,
        }
    }

    /// A throwaway cluster on `host` (`__agent pgbench` there, in its scratch
    /// directory) for at least `max_connections` clients, with
    /// `settings`, the server on `server_cpu` (a CPU of this machine: not
    /// for another machine); pgbench on `client_cpu`.
    pub fn hosted(
        bin: Bin,
        hosts: &crate::hosts::Hosts,
        max_connections: u32,
        settings: &[(&str, String)],
        cpus: (Option<usize>, Option<usize>),
    ) -> Result<Server, String> {
        let host = &hosts.server;
        let allow = hosts.client_address(false)?;
        let agent = super::options::AgentArgs {
            dir: host.scratch().join("pg"),
            addr: std::net::SocketAddr::new(host.bind_address(false), 0),
            allow,
            max_connections,
            settings: settings
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            cpu: cpus.0.filter(|_| host.on_this_machine()),
        };
        let mut args: Vec<std::ffi::OsString> = vec!["__agent".into(), "pgbench".into()];
        args.extend(agent.to_args().into_iter().map(Into::into));
        let served = host.spawn(&args, "PostgreSQL")?;
        let at = host.reachable(served.bound()?)?;
        Ok(Server {
            bin,
            local: None,
            conninfo: Some(format!(
                "host={} port={} user={USER} dbname={DATABASE}",
                at.ip(),
                at.port()
            )),
            socket: false,
            client_cpu: cpus.1,
            hosted: Some(served),
        })
    }

    /// Whether the database is one this run made (here or on the server
    /// host), so that it may be checkpointed and dropped at will.
    pub fn throwaway(&self) -> bool {
        self.local.is_some() || self.hosted.is_some()
    }

    /// The throwaway cluster, if this is one.
    pub fn cluster(&self) -> Option<&Cluster> {
        self.local.as_ref()
    }

    /// The connection arguments of pgbench and psql, the database last
    /// (so it goes at the end of the command line).
    fn target(&self, cmd: &mut Command, db_flag: bool) {
        match (&self.local, &self.conninfo) {
            (Some(c), _) => {
                if self.socket {
                    cmd.arg("-h").arg(&c.socket_dir);
                } else {
                    cmd.args(["-h", "127.0.0.1"]);
                }
                cmd.args(["-p", &c.port.to_string(), "-U", USER]);
                if db_flag {
                    cmd.args(["-d", DATABASE]);
                }
            }
            (None, Some(ci)) => {
                if db_flag {
                    cmd.arg("-d");
                }
                cmd.arg(ci);
            }
            (None, None) => {}
        }
    }

    /// `pgbench ARGS… DATABASE`, pointed at the server.
    pub fn pgbench(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(self.bin.tool("pgbench"));
        if let Some(cpu) = self.client_cpu {
            pin_child(&mut cmd, cpu);
        }
        cmd.args(args);
        if self.local.is_some() {
            self.target(&mut cmd, false);
            cmd.arg(DATABASE);
        } else {
            self.target(&mut cmd, false);
        }
        cmd
    }

    /// Runs SQL through psql; returns its output, rows separated by
    /// newlines, fields by `|`.
    pub fn sql(&self, query: &str) -> Result<String, String> {
        self.psql(query, true)
    }

    /// [`Server::sql`] not cut short by ^C: for what undoes the run's
    /// changes on a server (dropping the tables it made).
    pub fn sql_to_end(&self, query: &str) -> Result<String, String> {
        self.psql(query, false)
    }

    fn psql(&self, query: &str, stop_on_interrupt: bool) -> Result<String, String> {
        let mut cmd = Command::new(self.bin.tool("psql"));
        cmd.args(["-X", "-A", "-t", "-F", "|", "-v", "ON_ERROR_STOP=1"]);
        self.target(&mut cmd, true);
        cmd.args(["-c", query]);
        let limit = Duration::from_secs(60);
        let f = if stop_on_interrupt {
            run_bounded(&mut cmd, limit)
        } else {
            crate::harness::reaper::run_to_end(&mut cmd, limit)
        }
        .map_err(|e| format!("psql: {e}"))?;
        if f.status.is_some_and(|s| s.success()) {
            Ok(f.stdout)
        } else {
            Err(format!("psql: {}", tool_said("psql", &f.stderr, 2)))
        }
    }

    /// The server's version and the settings that matter to a benchmark.
    pub fn settings(&self) -> BTreeMap<String, String> {
        let q = "select name, setting || coalesce(' ' || unit, '') from pg_settings where name in \
                 ('server_version', 'shared_buffers', 'max_connections', 'fsync', \
                 'synchronous_commit', 'full_page_writes', 'wal_level', 'work_mem', \
                 'effective_cache_size', 'huge_pages', 'shared_memory_type', 'max_wal_size', \
                 'checkpoint_timeout', 'jit')";
        self.sql(q)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| {
                let (k, v) = l.split_once('|')?;
                Some((k.to_string(), v.to_string()))
            })
            .collect()
    }

    /// The last lines of the throwaway cluster's log (empty for a server
    /// of someone else's).
    pub fn log_tail(&self) -> String {
        self.local
            .as_ref()
            .map(Cluster::log_tail)
            .unwrap_or_default()
    }
}

/// Frees the shared memory of a cluster left in `dir` (the work
/// directory of a killed run), as [`release_shared_memory`] does for its
/// data directory. Returns what it did.
pub fn release_stale(dir: &Path) -> Vec<String> {
    release_shared_memory(&dir.join("pg/data"), Duration::ZERO)
}

/// `PGShmemMagic`: the first field of PostgreSQL's System V segment.
const SHMEM_MAGIC: i32 = 679_834_894;
/// `PG_DYNSHMEM_CONTROL_MAGIC`: the first field of its dynamic shared
/// memory control segment.
const DSM_CONTROL_MAGIC: u32 = 0x9a50_3d32;

/// What `postmaster.pid` in `data` says: the postmaster's pid and its
/// System V segment's key and id (line 7). A standalone backend (initdb's
/// bootstrap and single-user postgres) writes its pid negated.
fn postmaster_pid(data: &Path) -> Option<(i32, i64, i32)> {
    let text = std::fs::read_to_string(data.join("postmaster.pid")).ok()?;
    let pid = text
        .lines()
        .next()?
        .trim()
        .parse::<i32>()
        .ok()?
        .checked_abs()?;
    let l = text.lines().nth(6)?;
    let mut f = l.split_whitespace();
    Some((pid, f.next()?.parse().ok()?, f.next()?.parse().ok()?))
}

/// The handle of the dynamic shared memory control segment named by the
/// header of PostgreSQL's System V segment (`PGShmemHeader`: magic,
/// creator pid, two sizes, then `dsm_control`), if the header is one and
/// was made by `creator`.
fn control_handle(header: &[u8], creator: i32) -> Result<Option<u32>, String> {
    let word = std::mem::size_of::<usize>();
    let at = 8 + 2 * word;
    let get = |i: usize| -> Option<[u8; 4]> { header.get(i..i + 4)?.try_into().ok() };
    let (Some(magic), Some(pid), Some(handle)) = (get(0), get(4), get(at)) else {
        return Err(format!("its header is {} bytes", header.len()));
    };
    if i32::from_ne_bytes(magic) != SHMEM_MAGIC {
        return Err("it is not PostgreSQL's".into());
    }
    if i32::from_ne_bytes(pid) != creator {
        return Err(format!(
            "it was made by process {}, not {creator}",
            i32::from_ne_bytes(pid)
        ));
    }
    let h = u32::from_ne_bytes(handle);
    Ok((h != 0).then_some(h))
}

/// The handles of the segments a dynamic shared memory control segment
/// (`dsm_control_header`: magic, nitems, maxitems, then maxitems items
/// that each begin with a handle and a reference count) lists as in use.
/// The item size differs between PostgreSQL versions; the control
/// segment is exactly as big as its items, which gives it.
fn listed_segments(control: &[u8]) -> Result<Vec<u32>, String> {
    let u32_at = |i: usize| -> Option<u32> {
        Some(u32::from_ne_bytes(control.get(i..i + 4)?.try_into().ok()?))
    };
    let (Some(magic), Some(nitems), Some(maxitems)) = (u32_at(0), u32_at(4), u32_at(8)) else {
        return Err(format!("the control segment is {} bytes", control.len()));
    };
    if magic != DSM_CONTROL_MAGIC {
        return Err("the control segment is not PostgreSQL's".into());
    }
    let align = std::mem::align_of::<usize>();
    let first = 12usize.div_ceil(align) * align;
    let body = control.len().saturating_sub(first);
    let (nitems, maxitems) = (nitems as usize, maxitems as usize);
    if maxitems == 0 || nitems > maxitems || !body.is_multiple_of(maxitems) || body / maxitems < 8 {
        return Err(format!(
            "the control segment ({} bytes) does not hold {maxitems} items",
            control.len()
        ));
    }
    let stride = body / maxitems;
    Ok((0..nitems)
        .filter_map(|i| {
            let at = first + i * stride;
            let (handle, refs) = (u32_at(at)?, u32_at(at + 4)?);
            (refs != 0).then_some(handle)
        })
        .collect())
}

/// Removes the POSIX dynamic shared memory segments (`/PostgreSQL.N`)
/// of the cluster whose System V segment is `id`: its control segment
/// and every segment that lists as in use — as PostgreSQL itself does on
/// its next start. Returns how many it removed.
fn remove_dynamic_segments(id: i32, creator: i32) -> Result<usize, String> {
    let header = crate::sys::shm_read(id, 64).map_err(|e| format!("reading segment {id}: {e}"))?;
    let Some(control) = control_handle(&header, creator)? else {
        return Ok(0);
    };
    let name = |h: u32| format!("PostgreSQL.{h}");
    let listed = match crate::sys::posix_shm_read(&name(control), 64 << 20) {
        Ok(bytes) => listed_segments(&bytes)?,
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(0),
        Err(e) => return Err(format!("reading /{}: {e}", name(control))),
    };
    let mut removed = 0;
    for h in listed.into_iter().chain([control]) {
        match crate::sys::posix_shm_unlink(&name(h)) {
            Ok(true) => removed += 1,
            Ok(false) => {} // never made (a handle of the main area)
            Err(e) => return Err(format!("removing /{}: {e}", name(h))),
        }
    }
    Ok(removed)
}

/// Frees the shared memory a cluster whose postmaster is gone left, as
/// its data directory `data` tells (`postmaster.pid`, which a postmaster
/// that ended well has removed): once no process is attached to its
/// System V segment (waiting up to `wait` for its backends to end), the
/// POSIX dynamic shared memory segments its control segment lists and
/// then the System V segment itself. Only the cluster's own: the segment
/// must have the key `postmaster.pid` names and a header made by that
/// postmaster. Returns what it did, in words.
pub fn release_shared_memory(data: &Path, wait: Duration) -> Vec<String> {
    let Some((pid, key, id)) = postmaster_pid(data) else {
        return Vec::new();
    };
    let deadline = Instant::now() + wait;
    loop {
        match crate::sys::shm_stat(id) {
            None => return Vec::new(),
            Some(st) if st.key.is_some_and(|k| k != key) => return Vec::new(),
            Some(st) if st.attached == 0 => break,
            Some(st) if Instant::now() >= deadline => {
                return if wait.is_zero() {
                    Vec::new() // a live cluster's: not ours to free
                } else {
                    vec![format!(
                        "PostgreSQL's shared memory segment {id} still has {} processes attached after {} s: remove it with ipcrm -m {id} once they are gone",
                        st.attached,
                        wait.as_secs()
                    )]
                };
            }
            Some(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    let mut out = Vec::new();
    match crate::sys::shm_stat(id).and_then(|st| st.key) {
        Some(_) => match remove_dynamic_segments(id, pid) {
            Ok(0) => {}
            Ok(n) => out.push(format!(
                "removed {n} PostgreSQL dynamic shared memory segment{}",
                if n == 1 { "" } else { "s" }
            )),
            Err(e) => out.push(format!(
                "PostgreSQL's dynamic shared memory segments may be left ({e}): look for PostgreSQL.* in /dev/shm"
            )),
        },
        None => out.push(
            "PostgreSQL's dynamic shared memory segments may be left (this system's segment keys cannot be read): look for PostgreSQL.* in /dev/shm".into(),
        ),
    }
    match crate::sys::shm_remove_unused(id, key) {
        Some(Ok(true)) => out.push(format!(
            "removed PostgreSQL's shared memory segment {id} (key {key})"
        )),
        Some(Ok(false)) => {} // gone, another key, or in use
        Some(Err(e)) => out.push(format!(
            "could not remove PostgreSQL's shared memory segment {id}: {e}"
        )),
        None => out.push(format!(
            "PostgreSQL's shared memory segment {id} (key {key}) may be left: remove it with ipcrm -m {id} once no process uses it"
        )),
    }
    out
}

/// The last `n` non-empty lines of `s`, joined by " / ".
pub fn last_lines(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" / ")
}

/// What PostgreSQL's `tool` said on its standard error `s`, for a message
/// that names the tool itself: its last `n` lines, each without the
/// tool's own `psql: error: ` (the cause once, not "psql: psql: error:").
pub fn tool_said(tool: &str, s: &str, n: usize) -> String {
    let head = format!("{tool}: ");
    let lines: Vec<&str> = s
        .lines()
        .map(|l| {
            let l = l.trim();
            let l = l.strip_prefix(&head).unwrap_or(l);
            l.strip_prefix("error: ").unwrap_or(l)
        })
        .filter(|l| !l.is_empty())
        .collect();
    lines[lines.len().saturating_sub(n)..].join(" / ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_s_own_name_and_error_word_are_said_once() {
        let err = "psql: error: connection to server at \"127.0.0.1\", port 9 failed: Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?\n";
        assert_eq!(
            tool_said("psql", err, 2),
            "connection to server at \"127.0.0.1\", port 9 failed: Connection refused / Is the server running on that host and accepting TCP/IP connections?"
        );
    }

    /// A control segment of `maxitems` items of `stride` bytes listing
    /// `items` (handle, reference count).
    fn control(maxitems: usize, stride: usize, items: &[(u32, u32)]) -> Vec<u8> {
        let first = 12usize.div_ceil(std::mem::align_of::<usize>()) * std::mem::align_of::<usize>();
        let mut v = vec![0u8; first + maxitems * stride];
        v[0..4].copy_from_slice(&DSM_CONTROL_MAGIC.to_ne_bytes());
        v[4..8].copy_from_slice(&(items.len() as u32).to_ne_bytes());
        v[8..12].copy_from_slice(&(maxitems as u32).to_ne_bytes());
        for (i, (h, r)) in items.iter().enumerate() {
            let at = first + i * stride;
            v[at..at + 4].copy_from_slice(&h.to_ne_bytes());
            v[at + 4..at + 8].copy_from_slice(&r.to_ne_bytes());
        }
        v
    }

    #[test]
    fn the_control_segment_lists_the_segments_in_use_whatever_its_item_size() {
        // PostgreSQL 15's items are 40 bytes on 64-bit, 12's 24.
        for stride in [24, 40] {
            let c = control(674, stride, &[(10, 2), (12, 0), (14, 1), (17, 3)]);
            assert_eq!(listed_segments(&c).unwrap(), vec![10, 14, 17], "{stride}");
        }
        let mut bad = control(8, 40, &[(10, 2)]);
        bad[0] ^= 1;
        assert!(
            listed_segments(&bad)
                .unwrap_err()
                .contains("not PostgreSQL's")
        );
        let mut short = control(8, 40, &[(10, 2)]);
        short.truncate(100);
        assert!(listed_segments(&short).is_err());
        assert!(listed_segments(&[1, 2]).is_err());
    }

    #[test]
    fn the_header_names_the_control_segment_only_for_its_creator() {
        let word = std::mem::size_of::<usize>();
        let mut h = vec![0u8; 8 + 2 * word + 8];
        h[0..4].copy_from_slice(&SHMEM_MAGIC.to_ne_bytes());
        h[4..8].copy_from_slice(&4242i32.to_ne_bytes());
        h[8 + 2 * word..12 + 2 * word].copy_from_slice(&77u32.to_ne_bytes());
        assert_eq!(control_handle(&h, 4242), Ok(Some(77)));
        assert!(control_handle(&h, 4243).unwrap_err().contains("4242"));
        h[0] ^= 1;
        assert!(control_handle(&h, 4242).is_err());
        assert!(control_handle(&h[..6], 4242).is_err());
    }

    /// The System V segment id and the POSIX segment names of a running
    /// cluster, read as [`release_shared_memory`] reads them.
    fn shared_memory_of(c: &Cluster) -> (i32, Vec<String>) {
        let (pid, _, id) = postmaster_pid(&c.dir.join("data")).expect("postmaster.pid");
        let header = crate::sys::shm_read(id, 64).unwrap();
        let control = control_handle(&header, pid)
            .unwrap()
            .expect("a control segment");
        let name = format!("PostgreSQL.{control}");
        let bytes = crate::sys::posix_shm_read(&name, 64 << 20).unwrap();
        let mut names: Vec<String> = listed_segments(&bytes)
            .unwrap()
            .into_iter()
            .map(|h| format!("PostgreSQL.{h}"))
            .collect();
        names.push(name);
        (id, names)
    }

    /// The names among `names` that exist as POSIX shared memory.
    fn existing(names: &[String]) -> Vec<String> {
        names
            .iter()
            .filter(|n| crate::sys::posix_shm_read(n, 1).is_ok())
            .cloned()
            .collect()
    }

    /// A cluster stopped well, and one whose postmaster was killed, leave
    /// no shared memory: neither its System V segment nor any POSIX
    /// segment its control segment listed.
    #[test]
    fn a_stopped_or_killed_cluster_leaves_no_shared_memory() {
        let _one = crate::testing::one();
        let bin = Bin::find().expect("PostgreSQL is installed (scripts/test installs it)");
        for kill in [false, true] {
            let t = tempfile::tempdir().unwrap();
            let mut c = Cluster::start(&bin, &t.path().join("pg"), 20, None, &[], None, None)
                .expect("the cluster starts");
            let (id, names) = shared_memory_of(&c);
            assert!(crate::sys::shm_stat(id).is_some());
            if cfg!(target_os = "linux") {
                assert_eq!(existing(&names), names, "the segments are there");
            }
            if kill {
                let g = c.group.as_mut().unwrap();
                // SAFETY: killing the postmaster this test started.
                unsafe { libc::kill(g.pgid(), libc::SIGKILL) };
            }
            c.stop();
            assert!(
                crate::sys::shm_stat(id).is_none(),
                "kill {kill}: System V segment {id} left"
            );
            assert_eq!(existing(&names), Vec::<String>::new(), "kill {kill}");
        }
    }

    /// initdb killed while its own postgres holds a System V segment
    /// (named in postmaster.pid under its pid negated) leaves none.
    #[test]
    fn initdb_killed_mid_way_leaves_no_shared_memory() {
        let _one = crate::testing::one();
        let bin = Bin::find().expect("PostgreSQL is installed (scripts/test installs it)");
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("pg");
        let s = Setup::make(&bin, &dir, 20, None, &[], None, None).unwrap();
        let mut cmd = s.initdb_command();
        cmd.stdout(Stdio::null()).stderr(Stdio::null());
        let g = ChildGroup::spawn(&mut cmd).unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        let found = loop {
            match postmaster_pid(&s.data) {
                Some(p) if crate::sys::shm_stat(p.2).is_some() => break p,
                _ if Instant::now() > deadline => panic!("initdb made no segment in 60 s"),
                _ => std::thread::sleep(Duration::from_millis(2)),
            }
        };
        drop(g); // SIGKILL to initdb and its postgres, reaped
        let (pid, key, id) = found;
        let text = std::fs::read_to_string(s.data.join("postmaster.pid")).unwrap();
        let words = release_shared_memory(&s.data, Duration::from_secs(5));
        assert_eq!(text.lines().next(), Some(format!("-{pid}").as_str()));
        assert!(
            crate::sys::shm_stat(id).is_none(),
            "segment {id} left: {words:?}"
        );
        assert!(
            words.contains(&format!(
                "removed PostgreSQL's shared memory segment {id} (key {key})"
            )),
            "{words:?}"
        );
        assert!(
            !words.iter().any(|w| w.contains("may be left")),
            "{words:?}"
        );
    }
}
