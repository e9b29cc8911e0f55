//! A throwaway PostgreSQL cluster: made with the system's `initdb` in the
//! work directory, served by `postgres` started directly (not through
//! `pg_ctl`, which would detach it) as a child in a process group of its
//! own, on a private port of 127.0.0.1 and a private socket directory,
//! trust authentication. Stopped with a fast shutdown when dropped, killed
//! with its group if that does not end it; killed with scalebench even by
//! SIGKILL (the parent-death signal; its backends exit when the postmaster
//! is gone), and its files go with the work directory.
//!
//! PostgreSQL refuses to run as root: as root the cluster runs as the
//! `postgres` user (else `nobody`), owning its directory, and the work
//! directory is made traversable (0711) for it.

use crate::harness::reaper::{ChildGroup, run_bounded};
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

/// `__pg-cluster`: a throwaway cluster made in `dir` for a client on
/// another host, listening on `addr` (its port 0: a free one), the
/// client at `n.allow` let in; prints `listening ADDRESS:PORT`, serves
/// until standard input ends, then stops it and removes `dir`.
pub fn serve(
    dir: &Path,
    n: Network,
    max_connections: u32,
    settings: &[(String, String)],
    cpu: Option<usize>,
) -> anyhow::Result<std::process::ExitCode> {
    let bin = Bin::find().map_err(|e| anyhow::anyhow!(e))?;
    let settings: Vec<(&str, String)> = settings
        .iter()
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect();
    let cluster = Cluster::start(&bin, dir, max_connections, None, &settings, cpu, Some(n))
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
        limit: Option<&crate::harness::cgroup::MemoryLimit>,
        settings: &[(&str, String)],
        cpu: Option<usize>,
        network: Option<Network>,
    ) -> Result<Cluster, String> {
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
        let as_user = |cmd: &mut Command| {
            use std::os::unix::process::CommandExt;
            if let Some((uid, gid, _)) = &who {
                cmd.uid(*uid).gid(*gid);
            }
            cmd.current_dir(dir);
        };
        let mut initdb = Command::new(bin.tool("initdb"));
        initdb.arg("-D").arg(&data).args([
            "-A",
            "trust",
            "-U",
            USER,
            "-N",
            "-E",
            "UTF8",
            "--locale=C",
        ]);
        as_user(&mut initdb);
        let f = run_bounded(&mut initdb, Duration::from_secs(120))
            .map_err(|e| format!("initdb: {e}"))?;
        if !f.status.is_some_and(|s| s.success()) {
            return Err(format!("initdb failed: {}", last_lines(&f.stderr, 3)));
        }
        if let Some(n) = &network {
            use std::io::Write;
            let hba = data.join("pg_hba.conf");
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
        }
        let listen = network
            .as_ref()
            .map_or("127.0.0.1".to_string(), |n| match n.listen {
                std::net::IpAddr::V4(a) if a.is_unspecified() => "0.0.0.0".to_string(),
                std::net::IpAddr::V6(a) if a.is_unspecified() => "::".to_string(),
                a => a.to_string(),
            });
        let log = dir.join("postgres.log");
        let mut last_error = String::new();
        for _ in 0..3 {
            let port = free_port()?;
            let logf =
                std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
            chown(&log, &who)?;
            let mut cmd = Command::new(bin.tool("postgres"));
            cmd.arg("-D")
                .arg(&data)
                .arg("-c")
                .arg(format!("listen_addresses={listen}"))
                .args(["-c", &format!("port={port}")])
                .arg("-c")
                .arg(format!("unix_socket_directories={}", socket_dir.display()))
                .args(["-c", &format!("max_connections={max_connections}")])
                .args(
                    settings
                        .iter()
                        .flat_map(|(k, v)| ["-c".to_string(), format!("{k}={v}")]),
                )
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::from(logf));
            as_user(&mut cmd);
            if let Some(cpu) = cpu {
                pin_child(&mut cmd, cpu);
            }
            let group = ChildGroup::spawn(&mut cmd).map_err(|e| format!("postgres: {e}"))?;
            // At once, before it forks its helpers and backends.
            if let Some(l) = limit {
                l.add(group.pgid() as u32)?;
            }
            let mut c = Cluster {
                bin: bin.clone(),
                group: Some(group),
                dir: dir.to_path_buf(),
                port,
                socket_dir: socket_dir.clone(),
                runs_as: who.as_ref().map(|w| w.2.clone()),
            };
            match c.wait_ready(Duration::from_secs(60)) {
                Ok(()) => return Ok(c),
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
            if crate::harness::reaper::interrupted() {
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

    /// Stops the server: a fast shutdown (SIGINT), up to 30 s, then its
    /// whole process group is killed.
    pub fn stop(&mut self) {
        if let Some(mut g) = self.group.take() {
            // SAFETY: signalling the postmaster we started.
            unsafe { libc::kill(g.pgid(), libc::SIGINT) };
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(30) {
                if matches!(g.child().try_wait(), Ok(Some(_))) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            drop(g);
        }
    }
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
    /// A throwaway cluster on the server host (`__pg-cluster`).
    hosted: Option<crate::hosts::Served>,
}

/// Pins the child `cmd` starts to `cpu` before it runs (what it forks
/// inherits that).
fn pin_child(cmd: &mut Command, cpu: usize) {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec; on success pin_to_cpu makes one
    // system call and allocates nothing (the CPU was checked to exist).
    unsafe {
        cmd.pre_exec(move || {
            let _ = crate::sys::pin_to_cpu(cpu);
            Ok(())
        });
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

    /// A throwaway cluster on `host` (`__pg-cluster` there, in its scratch
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
        let mut args: Vec<std::ffi::OsString> = vec![
            "__pg-cluster".into(),
            "--dir".into(),
            host.scratch().join("pg").into(),
            "--addr".into(),
            std::net::SocketAddr::new(host.bind_address(false), 0)
                .to_string()
                .into(),
            "--allow".into(),
            allow.to_string().into(),
            "--max-connections".into(),
            max_connections.to_string().into(),
        ];
        for (k, v) in settings {
            args.push("--set".into());
            args.push(format!("{k}={v}").into());
        }
        if let Some(cpu) = cpus.0
            && host.on_this_machine()
        {
            args.push("--cpu".into());
            args.push(cpu.to_string().into());
        }
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
            Err(format!("psql: {}", last_lines(&f.stderr, 2)))
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

/// Frees the System V shared memory segment of a cluster left in `dir`
/// (the work directory of a killed run): its `postmaster.pid` names the
/// segment's key and id (line 7); a segment with that key and id and no
/// process attached is removed. Returns what it did.
pub fn release_stale(dir: &Path) -> Vec<String> {
    let pid_file = dir.join("pg/data/postmaster.pid");
    let Ok(text) = std::fs::read_to_string(&pid_file) else {
        return Vec::new();
    };
    let Some((key, id)) = text.lines().nth(6).and_then(|l| {
        let mut f = l.split_whitespace();
        Some((
            f.next()?.parse::<i64>().ok()?,
            f.next()?.parse::<i32>().ok()?,
        ))
    }) else {
        return Vec::new();
    };
    match crate::sys::shm_remove_unused(id, key) {
        Some(Ok(true)) => {
            vec![format!(
                "removed PostgreSQL's shared memory segment {id} (key {key})"
            )]
        }
        Some(Ok(false)) => Vec::new(), // gone, another key, or in use
        Some(Err(e)) => vec![format!(
            "could not remove PostgreSQL's shared memory segment {id}: {e}"
        )],
        None => vec![format!(
            "PostgreSQL's shared memory segment {id} (key {key}) may be left: remove it with ipcrm -m {id} once no process uses it"
        )],
    }
}

/// The last `n` non-empty lines of `s`, joined by " / ".
pub fn last_lines(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" / ")
}
