//! Static web serving, as the seeds measured it: `scalebench serve` (its
//! own process or processes) loaded by the built-in load generator over
//! loopback.
//!
//! - `http-ipstack`: one 11 KB file, 50 000 fetches, 50 connections, 10
//!   requests per connection; the server with 1 and with 4 processes, over
//!   IPv4 and IPv6: four rows, as in the seeds' table.
//! - `http-shortconn`: one request per connection (short-lived
//!   connections) for 1 KB, 8 KB and 16 KB objects, at the DragonFly
//!   slides' scale when full: 30 000 connections at once for 2 minutes per
//!   object, the server with one worker per CPU and SO_REUSEPORT. One
//!   process may not open that many descriptors, nor one source address
//!   have that many ports: the load is spread over processes
//!   ([`crate::harness::spread`]) and loopback source addresses, and what
//!   TIME_WAIT did (its count before and after, the knobs that govern it,
//!   port exhaustion) is recorded.

use super::server_path::{FILES_FLAG, LOOP_FLAG, ServerPath};
use super::{Info, Size, Workload, WorkloadFlag, WorkloadOptions, clients};
use crate::ctx::Ctx;
use crate::harness::progress::Progress;
use crate::harness::spread;
use crate::harness::sweep;
use crate::net::errcount;
use crate::net::load::{self, LoadOptions, Target};
use crate::results::{SweepSample, WorkloadResult, WorkloadRow};
use crate::workloads::FlagError;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// The `http-ipstack` workload.
pub struct IpStack;
/// The `http-shortconn` workload.
pub struct ShortConn;

static IPSTACK: Info = Info {
    name: "http-ipstack",
    what: "one 11 KB file fetched over keep-alive connections (50 connections, 10 requests each) from scalebench serve with 1 and 4 processes, over IPv4 and IPv6",
    quick: true,
    between_hosts: true,
    several_clients: true,
};

static SHORTCONN: Info = Info {
    name: "http-shortconn",
    what: "one request per connection for 1 KB, 8 KB and 16 KB objects from scalebench serve with one SO_REUSEPORT worker per CPU: 30 000 connections at once for 120 s per object (quick: 50 for 0.9 s)",
    quick: true,
    between_hosts: true,
    several_clients: true,
};

const HTTP_HEADING: &str = "Web serving";

/// The flags of the HTTP workloads (`http-ipstack`, `http-shortconn`).
static FLAGS: &[WorkloadFlag] = &[
    WorkloadFlag {
        choices: &[
            (
                "scalebench",
                "`scalebench serve`: an event loop per worker process (the default)",
            ),
            (
                "nginx",
                "nginx, configured by scalebench as the slides ran it (reuseport, access log off)",
            ),
            (
                "fork",
                "a process per connection, as the seeds' fnord under tcpserver (`serve --fork-per-connection`)",
            ),
        ],
        ..WorkloadFlag::value(
            "http-server",
            "SERVER",
            HTTP_HEADING,
            "http-ipstack, http-shortconn: the server measured.",
        )
    },
    WorkloadFlag {
        check: Some(|s| http_workers(s).map(drop)),
        ..WorkloadFlag::value(
            "http-workers",
            "N",
            HTTP_HEADING,
            "http-ipstack, http-shortconn: the server's worker processes (default: ipstack's rows 1 and 4, shortconn one per CPU or as its connections need; not for --http-server fork).",
        )
    },
    WorkloadFlag {
        check: Some(|s| http_threads(s).map(drop)),
        ..WorkloadFlag::value(
            "http-threads",
            "N",
            HTTP_HEADING,
            "http-ipstack, http-shortconn: threads of each load process (default 1).",
        )
    },
    FILES_FLAG,
    LOOP_FLAG,
];

/// Which server the HTTP workloads measure.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum ServerKind {
    /// `scalebench serve`.
    #[default]
    Scalebench,
    /// nginx, configured by `scalebench serve --nginx`.
    Nginx,
    /// `scalebench serve --fork-per-connection`.
    Fork,
}

impl ServerKind {
    fn name(self) -> &'static str {
        match self {
            ServerKind::Scalebench => "scalebench",
            ServerKind::Nginx => "nginx",
            ServerKind::Fork => "fork",
        }
    }
}

/// The HTTP workloads' own options.
#[derive(Debug, Clone, Default)]
pub(crate) struct HttpOptions {
    server: ServerKind,
    /// How scalebench serve answers (with `--http-server fork`: only its
    /// files).
    path: ServerPath,
    workers: Option<u32>,
    threads: usize,
}

impl HttpOptions {
    fn of(asked: &super::Asked) -> Result<HttpOptions, FlagError> {
        let given = asked.given;
        // Its server runs on this OS unless a server host over ssh is
        // given (a namespace of this machine is this OS).
        let server_here = !asked.hosts.iter().any(|h| {
            h.role == crate::hosts::Role::Server && matches!(h.reach, crate::hosts::Reach::Ssh(_))
        });
        let server = match given.value("http-server") {
            None | Some("scalebench") => ServerKind::Scalebench,
            Some("nginx") => ServerKind::Nginx,
            Some("fork") => ServerKind::Fork,
            Some(other) => {
                return Err(FlagError::of(
                    "http-server",
                    format!("--http-server {other}: not a server this knows"),
                ));
            }
        };
        let workers = given.parsed("http-workers", http_workers)?;
        if server == ServerKind::Fork && workers.is_some() {
            return Err(FlagError::of(
                "http-workers",
                "--http-workers: a process-per-connection server has no workers to set (--http-server fork)",
            ));
        }
        if server == ServerKind::Nginx && crate::net::nginx::binary().is_none() {
            return Err(FlagError::of(
                "http-server",
                "--http-server nginx: nginx is not installed here (not on the PATH or in /usr/sbin)",
            )
            .failed());
        }
        let threads = given.parsed("http-threads", http_threads)?.unwrap_or(1);
        let path = ServerPath::of(given, server_here)?;
        let theirs = |flag: &str, why: &str| {
            Err(FlagError::of(
                flag,
                format!("--{flag}: {why} (--http-server {})", server.name()),
            ))
        };
        match server {
            ServerKind::Nginx if given.has("serve-files") => {
                return theirs(
                    "serve-files",
                    "nginx opens its files per request, as configured",
                );
            }
            ServerKind::Nginx | ServerKind::Fork if given.has("serve-loop") => {
                return theirs(
                    "serve-loop",
                    "this server has no event loop of scalebench's",
                );
            }
            _ => {}
        }
        Ok(HttpOptions {
            server,
            path,
            workers,
            threads,
        })
    }

    /// Records them in a workload's params (`server_loop`, scalebench
    /// serve's event loop, only when it serves; `server_files` when it or
    /// a process per connection serves).
    fn record(&self, p: &mut BTreeMap<String, serde_json::Value>, ctx: &Ctx) {
        p.insert("server".into(), json!(self.server.name()));
        p.insert("load_threads".into(), json!(self.threads));
        if self.server != ServerKind::Nginx {
            self.path.record(p, ctx.hosts().server.on_this_machine());
        }
        if self.server != ServerKind::Scalebench {
            p.remove("server_loop");
        }
    }

    /// The server it asks for.
    fn spec(&self) -> ServerSpec {
        ServerSpec {
            kind: self.server,
            path: self.path,
        }
    }
}

/// Which server a workload starts and how scalebench's own answers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ServerSpec {
    /// scalebench serve, nginx or a process per connection.
    pub(crate) kind: ServerKind,
    /// How scalebench's server finds files and waits (not for nginx).
    pub(crate) path: ServerPath,
}

impl ServerSpec {
    /// scalebench serve on `path`.
    pub(crate) fn scalebench(path: ServerPath) -> ServerSpec {
        ServerSpec {
            kind: ServerKind::Scalebench,
            path,
        }
    }
}

/// A `scalebench serve` process (or processes) on the server host,
/// stopped with its process group when dropped.
pub(crate) struct Server {
    served: crate::hosts::Served,
    on_this_machine: bool,
    /// `http://ADDRESS:PORT/`, as the client reaches it.
    pub(crate) url: String,
    /// Its failed accepts by errno when last asked.
    accept_errors_seen: BTreeMap<String, u64>,
    /// What it is ([`Server::info`]).
    info: serde_json::Value,
}

impl Server {
    /// CPU seconds the server's processes have used so far, where the OS
    /// shows them (not for a server on another machine).
    pub(crate) fn cpu_seconds(&self) -> Option<f64> {
        if self.on_this_machine {
            crate::sys::group_cpu_seconds(self.served.pgid())
        } else {
            None
        }
    }

    /// Starts serving `root` on `host` with the server `spec` names: with
    /// `processes` worker processes sharing one listening socket, or with
    /// a SO_REUSEPORT socket each (`reuseport`); nginx over the same root
    /// (its configuration in a directory beside it); or a process per
    /// connection (`processes` and `reuseport` then do not apply).
    /// `objects` (name, bytes) are made in `root` there first.
    pub(crate) fn start(
        host: &crate::hosts::Host,
        root: &Path,
        objects: &[(&str, usize)],
        processes: u32,
        reuseport: bool,
        ipv6: bool,
        spec: ServerSpec,
    ) -> Result<Server, String> {
        let kind = spec.kind;
        // The root is the run's own scratch directory: an object made by
        // the row before is made again.
        let mut args: Vec<std::ffi::OsString> = vec![
            "serve".into(),
            "--root".into(),
            root.into(),
            "--force".into(),
        ];
        for (name, bytes) in objects {
            args.push("--object".into());
            args.push(format!("{name}={bytes}").into());
        }
        if kind == ServerKind::Fork {
            args.push("--fork-per-connection".into());
            args.extend(["--files".into(), spec.path.files.name().into()]);
        } else if kind == ServerKind::Scalebench {
            args.extend(spec.path.serve_args());
        }
        if kind != ServerKind::Fork {
            args.push(
                if reuseport {
                    "--reuseport"
                } else {
                    "--processes"
                }
                .into(),
            );
            args.push(processes.to_string().into());
        }
        if kind == ServerKind::Nginx {
            let mut dir = root.as_os_str().to_owned();
            dir.push(".nginx");
            args.push("--nginx".into());
            args.push("--nginx-dir".into());
            args.push(dir);
        }
        args.push("--addr".into());
        args.push(
            std::net::SocketAddr::new(host.bind_address(ipv6), 0)
                .to_string()
                .into(),
        );
        let served = host.spawn(&args, "the server")?;
        let addr = host.reachable(served.bound()?)?;
        let mut s = Server {
            served,
            on_this_machine: host.on_this_machine(),
            url: format!("http://{addr}/"),
            accept_errors_seen: BTreeMap::new(),
            info: json!({"name": "scalebench serve", "version": env!("CARGO_PKG_VERSION")}),
        };
        match kind {
            ServerKind::Nginx => {
                let line = s.served.ask("info", "info ", Duration::from_secs(10))?;
                s.info = serde_json::from_str(&line["info ".len()..])
                    .map_err(|e| format!("nginx's `info` answer: {e}"))?;
            }
            ServerKind::Fork => {
                s.info["mode"] = json!("a process per connection");
                s.info["files"] = json!(spec.path.files.name());
            }
            ServerKind::Scalebench => {
                s.info["mode"] = json!(spec.path.loop_name(host.on_this_machine()));
                s.info["files"] = json!(spec.path.files.name());
                s.info["processes"] = json!(processes);
                s.info["reuseport"] = json!(reuseport);
            }
        }
        Ok(s)
    }

    /// The server, its version and how it ran (nginx: its configuration),
    /// for a row's params.
    pub(crate) fn info(&self) -> serde_json::Value {
        self.info.clone()
    }

    /// Records in `p` the accepts that failed on the server (all its
    /// processes) since it was last asked, by errno, as
    /// `server_accept_errors` (`{}`: none); where it did not answer,
    /// `null` and `server_accept_errors_unknown` saying why.
    pub(crate) fn record_accept_errors(&mut self, p: &mut BTreeMap<String, serde_json::Value>) {
        let asked = self
            .served
            .ask("stats", errcount::ANSWER, Duration::from_secs(10))
            .and_then(|line| errcount::parse_answer(&line));
        match asked {
            Ok(now) => {
                let since: BTreeMap<&String, u64> = now
                    .iter()
                    .map(|(k, &v)| (k, v - self.accept_errors_seen.get(k).copied().unwrap_or(0)))
                    .filter(|&(_, v)| v > 0)
                    .collect();
                p.insert("server_accept_errors".into(), json!(since));
                self.accept_errors_seen = now;
            }
            Err(e) => {
                p.insert("server_accept_errors".into(), serde_json::Value::Null);
                p.insert("server_accept_errors_unknown".into(), json!(e));
            }
        }
    }
}

/// Rounds measured per row; the row reports the median round.
const ROUNDS: usize = 3;

/// One measured row: a warm-up, then [`ROUNDS`] rounds of `fetches`
/// requests each (over every client of the run); the round with the
/// median req/s is kept (with its clients' shares), and every round's
/// req/s goes in the row's parameters.
fn measure(
    ctx: &Ctx,
    url: &str,
    (fetches, per_connection): (u64, u64),
    threads: usize,
    params: &mut BTreeMap<String, serde_json::Value>,
) -> Result<crate::results::LoadStats, String> {
    let target = Target::parse(url).map_err(|e| e.to_string())?;
    let mut opts = LoadOptions {
        per_connection: Some(per_connection),
        total: Some((fetches / 10).clamp(100, 5_000)),
        threads,
        ..LoadOptions::new(vec![target], 50)
    };
    clients::run(ctx, &opts, 1).map_err(|e| format!("warm-up: {e}"))?;
    opts.total = Some(fetches);
    let mut rounds = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        if crate::stop::interrupted() {
            break;
        }
        rounds.push(clients::run(ctx, &opts, 1)?);
    }
    params.insert(
        "rounds_requests_per_s".into(),
        json!(rounds.iter().map(|r| r.outcome.rate()).collect::<Vec<_>>()),
    );
    rounds.sort_by(|a, b| a.outcome.rate().total_cmp(&b.outcome.rate()));
    let mid = rounds.len().saturating_sub(1) / 2;
    let kept = rounds
        .into_iter()
        .nth(mid)
        .ok_or_else(|| "interrupted".to_string())?;
    kept.record(params);
    Ok(kept.outcome.stats())
}

/// How a load of some number of connections is made here: by how many
/// processes, from which source addresses, and what limited it.
#[derive(Debug, Clone)]
struct Scale {
    /// Connections at once (what was asked, or less where the system
    /// cannot).
    connections: u64,
    /// Load processes.
    processes: u32,
    /// Source addresses (empty: the OS's).
    sources: Vec<std::net::IpAddr>,
    /// Why fewer connections, or fewer source addresses, than wanted.
    notes: Vec<String>,
}

impl Scale {
    /// The scale of a loopback load of `wanted` connections to `server`.
    fn of(wanted: u64, server: std::net::SocketAddr) -> Scale {
        let mut notes = Vec::new();
        let mut connections = wanted;
        // Both ends of every connection are descriptors of this system.
        if let Some((max, name)) = crate::sys::knob_values(crate::sys::Knob::FilesSystem)
            .into_iter()
            .find_map(|(n, v)| v.trim().parse::<u64>().ok().map(|x| (x, n)))
        {
            let fit = max.saturating_sub(4096) / 2;
            if fit < connections {
                notes.push(format!(
                    "{wanted} connections wanted, {fit} reached: {name} = {max} descriptors for both ends"
                ));
                connections = fit;
            }
        }
        let (sources, note) = spread::sources_for(&server, connections);
        if let Some(n) = note {
            // One source address: at most its ports.
            if let Some((a, b)) = crate::sys::port_range() {
                let fit = u64::from(b - a + 1).saturating_sub(1024);
                if fit < connections {
                    notes.push(format!("{wanted} connections wanted, {fit} reached: {n}"));
                    connections = fit;
                }
            }
        }
        Scale {
            connections,
            processes: spread::processes_for(connections),
            sources,
            notes,
        }
    }

    /// Records it in `p`.
    fn record(&self, p: &mut BTreeMap<String, serde_json::Value>) {
        p.insert("load_processes".into(), json!(self.processes));
        p.insert(
            "source_addresses".into(),
            json!(
                self.sources
                    .iter()
                    .map(|a| a.to_string())
                    .collect::<Vec<_>>()
            ),
        );
        if !self.notes.is_empty() {
            p.insert("limited_by".into(), json!(self.notes.join("; ")));
        }
    }
}

/// Runs `opts` at `scale` over the run's clients ([`clients::run`]): with
/// one, in this process when one process may hold the connections, else
/// spread over `scale.processes` `scalebench load` processes; with more,
/// each client's share goes in `p`.
fn run_load(
    ctx: &Ctx,
    opts: &LoadOptions,
    scale: &Scale,
    p: &mut BTreeMap<String, serde_json::Value>,
) -> Result<load::Outcome, String> {
    let opts = LoadOptions {
        connections: scale.connections as usize,
        sources: scale.sources.clone(),
        ..opts.clone()
    };
    let spread = clients::run(ctx, &opts, scale.processes)?;
    spread.record(p);
    Ok(spread.outcome)
}

/// What a run did to TIME_WAIT and the ports, in `p`: the TIME_WAIT count
/// before and after (where the OS tells) and the most connections open at
/// once (port exhaustion is in the row's `load.errors`).
fn record_time_wait(
    p: &mut BTreeMap<String, serde_json::Value>,
    before: Option<u64>,
    o: Option<&load::Outcome>,
) {
    p.insert("time_wait_before".into(), json!(before));
    p.insert(
        "time_wait_after".into(),
        json!(crate::sys::time_wait_count()),
    );
    if let Some(o) = o {
        p.insert("peak_open".into(), json!(o.peak_open));
        if let Some(t) = o.opening {
            p.insert("opening_s".into(), json!(t.as_secs_f64()));
        }
    }
}

/// The knobs that govern short connections, as they are now.
fn time_wait_knobs() -> serde_json::Value {
    let mut m = serde_json::Map::new();
    for k in crate::sys::TIME_WAIT_KNOBS.into_iter().chain([
        crate::sys::Knob::FilesPerProcess,
        crate::sys::Knob::ListenBacklog,
    ]) {
        for (n, v) in crate::sys::knob_values(k) {
            m.insert(n, json!(v));
        }
    }
    serde_json::Value::Object(m)
}

/// Sweeps the number of connections: each level is one load run (spread
/// over processes when one cannot hold it) of `per_connection` requests
/// per connection: the heat-up, then the samples as its rounds, with no
/// new connections between them; a sample's figure is its req/s.
fn sweep_connections(
    ctx: &Ctx,
    server: &mut Server,
    path: &str,
    per_connection: u64,
    threads: usize,
    plan: &sweep::SweepPlan,
    progress: &mut Progress,
) -> Result<crate::results::SweepStats, String> {
    let target = Target::parse(&format!("{}{path}", server.url)).map_err(|e| e.to_string())?;
    server.record_accept_errors(&mut BTreeMap::new());
    let mut runner = |level: f64, plan: &sweep::SweepPlan| {
        let mut out = level_of_connections(ctx, &target, (per_connection, threads), level, plan);
        server.record_accept_errors(&mut out.params);
        out
    };
    Ok(sweep::run(plan, progress, &mut runner))
}

/// One level of [`sweep_connections`]: `level` connections at once.
fn level_of_connections(
    ctx: &Ctx,
    target: &Target,
    (per_connection, threads): (u64, usize),
    level: f64,
    plan: &sweep::SweepPlan,
) -> sweep::LevelOutcome {
    let mut out = sweep::LevelOutcome::default();
    let scale = Scale::of(level as u64, target.addr);
    scale.record(&mut out.params);
    if plan.samples == 0 {
        return out;
    }
    let opts = LoadOptions {
        per_connection: Some(per_connection),
        duration: Some(plan.sample * plan.samples),
        warm_up: plan.heat_up,
        rounds: plan.samples,
        stop: Some(crate::stop::interrupted),
        threads,
        ..LoadOptions::new(vec![target.clone()], level as usize)
    };
    let tw = crate::sys::time_wait_count();
    let begun = Instant::now();
    let r = run_load(ctx, &opts, &scale, &mut out.params);
    let end = Instant::now();
    record_time_wait(&mut out.params, tw, r.as_ref().ok());
    let o = match r {
        Ok(o) => o,
        Err(e) => {
            out.error = Some(e);
            return out;
        }
    };
    let mut rounds = if o.rounds.is_empty() {
        vec![o.clone()]
    } else {
        o.rounds.clone()
    };
    if o.stopped {
        // The last round was cut short.
        rounds.pop();
    }
    let mut t = 0.0;
    for r in rounds {
        let s = r.stats();
        t += s.seconds;
        out.samples.push(SweepSample {
            t,
            seconds: s.seconds,
            value: s.requests_per_s,
            latency_ns: (s.requests > 0).then_some(s.latency_ns),
            mean_latency_ns: None,
            errors: r.errors.total(),
        });
    }
    if !out.samples.is_empty() {
        // The heat-up began once the connections were asked for.
        let heated = begun + o.opening.unwrap_or_default() + plan.heat_up;
        out.window = Some((heated.min(end), end));
    }
    out
}

/// A row holding a sweep (or why it could not run).
fn sweep_row(
    label: String,
    mut params: BTreeMap<String, serde_json::Value>,
    r: Result<crate::results::SweepStats, String>,
) -> WorkloadRow {
    params.entry("load_threads".into()).or_insert(json!(1));
    let (sweep, error) = match r {
        Ok(s) => (Some(s), None),
        Err(e) => (None, Some(e)),
    };
    WorkloadRow {
        label,
        target: None,
        params,
        load: None,
        phase: None,
        sweep,
        error,
    }
}

fn row(
    label: String,
    params: BTreeMap<String, serde_json::Value>,
    r: Result<crate::results::LoadStats, String>,
) -> WorkloadRow {
    match r {
        Ok(s) => WorkloadRow {
            label,
            target: None,
            params,
            load: Some(s),
            phase: None,
            sweep: None,
            error: None,
        },
        Err(e) => WorkloadRow {
            label,
            target: None,
            params,
            load: None,
            phase: None,
            sweep: None,
            error: Some(e),
        },
    }
}

/// Progress units of a workload with `rows` rows: one per row, or with a
/// sweep the planned seconds of all its levels.
fn rows_total(rows: u64, plan: Option<&sweep::SweepPlan>) -> u64 {
    match plan {
        Some(p) => {
            rows * (p.planned().as_secs() / p.levels.len().max(1) as u64) * p.levels.len() as u64
        }
        None => rows,
    }
}

/// The fetches of one round of http-ipstack at a size.
fn ipstack_fetches(size: Size) -> u64 {
    match size {
        Size::Quick => 5_000,
        Size::Full => 50_000,
    }
}

impl Workload for IpStack {
    fn info(&self) -> &'static Info {
        &IPSTACK
    }

    fn flags(&self) -> &'static [WorkloadFlag] {
        FLAGS
    }

    fn options(&self, asked: &super::Asked) -> Result<Option<super::Own>, super::FlagError> {
        Ok(Some(std::sync::Arc::new(HttpOptions::of(asked)?)))
    }

    fn sweeps(&self) -> &'static [&'static str] {
        &["connections"]
    }

    fn size_words(&self, opts: &WorkloadOptions, _here: Option<&Ctx>) -> Option<String> {
        Some(match &opts.sweep {
            Some(s) => format!(
                "one 11 KiB file fetched over connections of 10 requests, {}",
                s.words(opts.size)
            ),
            None => format!(
                "{} fetches of one 11 KiB file a round, over 50 connections of 10 requests",
                units::fmt_n(ipstack_fetches(opts.size) as f64)
            ),
        })
    }

    fn run(&self, ctx: &Ctx, opts: &WorkloadOptions, progress: &mut Progress) -> WorkloadResult {
        let fetches = ipstack_fetches(opts.size);
        let h: HttpOptions = opts.own();
        let root = ctx.hosts().server.scratch().join("www-ipstack");
        let mut params = BTreeMap::new();
        params.insert("object_bytes".into(), json!(11 * 1024));
        params.insert("fetches".into(), json!(fetches));
        h.record(&mut params, ctx);
        params.insert("connections".into(), json!(50));
        params.insert("requests_per_connection".into(), json!(10));
        let plan = opts.sweep.as_ref().map(|s| s.plan(opts.size, "req/s"));
        if let Some(p) = &plan {
            params.insert("connections".into(), json!(p.levels));
        }
        let shapes = ipstack_rows(&h);
        progress.begin(IPSTACK.name, rows_total(shapes.len() as u64, plan.as_ref()));
        let mut rows = Vec::new();
        for (ipv6, processes) in shapes {
            if crate::stop::interrupted() {
                break;
            }
            let label = format!(
                "{}, IPv{}",
                match (h.server, processes) {
                    (ServerKind::Fork, _) => "a process per connection".to_string(),
                    (_, 1) => "1 process".to_string(),
                    (_, n) => format!("{n} processes"),
                },
                if ipv6 { 6 } else { 4 }
            );
            progress.phase(&label);
            let mut p = BTreeMap::new();
            p.insert("processes".into(), json!(processes));
            p.insert("load_threads".into(), json!(h.threads));
            p.insert(
                "address_family".into(),
                json!(if ipv6 { "ipv6" } else { "ipv4" }),
            );
            let server = Server::start(
                &ctx.hosts().server,
                &root,
                &[("f11k.bin", 11 * 1024)],
                processes,
                false,
                ipv6,
                h.spec(),
            );
            if let Ok(s) = &server {
                p.insert("server_info".into(), s.info());
            }
            match (server, &plan) {
                (Ok(mut s), Some(plan)) => {
                    let r =
                        sweep_connections(ctx, &mut s, "f11k.bin", 10, h.threads, plan, progress);
                    rows.push(sweep_row(label, p, r));
                }
                (Ok(mut s), None) => {
                    let url = format!("{}f11k.bin", s.url);
                    let r = measure(ctx, &url, (fetches, 10), h.threads, &mut p);
                    s.record_accept_errors(&mut p);
                    rows.push(row(label, p, r));
                    progress.advance(1);
                }
                (Err(e), Some(_)) => rows.push(sweep_row(label, p, Err(e))),
                (Err(e), None) => {
                    rows.push(row(label, p, Err(e)));
                    progress.advance(1);
                }
            }
        }
        progress.finish(&format!("{} rows", rows.len()));
        super::finish(&IPSTACK, params, rows, Vec::new())
    }
}

/// The rows of `http-ipstack`: (IPv6, server processes) — 1 and 4 over
/// IPv4 and IPv6, or the processes asked for, or one row each way for a
/// process-per-connection server.
fn ipstack_rows(h: &HttpOptions) -> Vec<(bool, u32)> {
    let counts: Vec<u32> = match (h.server, h.workers) {
        (ServerKind::Fork, _) => vec![1],
        (_, Some(w)) => vec![w],
        (_, None) => vec![1, 4],
    };
    [false, true]
        .into_iter()
        .flat_map(|v6| counts.iter().map(move |&n| (v6, n)))
        .collect()
}

/// How `http-shortconn` measures each object: connections at once, the
/// unmeasured warm-up, and the measured time in rounds.
struct ShortPlan {
    connections: u64,
    warm_up: Duration,
    rounds: u32,
    round: Duration,
}

impl ShortPlan {
    fn of(size: Size) -> ShortPlan {
        match size {
            // Quick: the seeds' 50 connections, 0.9 s per object.
            Size::Quick => ShortPlan {
                connections: 50,
                warm_up: Duration::from_millis(300),
                rounds: 3,
                round: Duration::from_millis(300),
            },
            // Full: the DragonFly slides' 30 000 connections (15 000 per
            // client there), 2-minute averages; the warm-up opens them all.
            Size::Full => ShortPlan {
                connections: 30_000,
                warm_up: Duration::from_secs(10),
                rounds: 4,
                round: Duration::from_secs(30),
            },
        }
    }
}

/// Server workers for up to `connections` at once: one per CPU, more when
/// that many cannot hold them in their open-files limits.
fn server_workers(connections: u64) -> u32 {
    let cpus = crate::sys::cpu_count() as u32;
    // A tenth more: reuseport spreads connections by hash, not evenly.
    cpus.max(spread::processes_for(connections + connections / 10))
}

/// One object's row: a load of `plan` against `url`, the row's figures
/// all its rounds together, each round's req/s in the parameters.
fn shortconn_row(
    ctx: &Ctx,
    url: &str,
    plan: &ShortPlan,
    scale: &Scale,
    threads: usize,
    p: &mut BTreeMap<String, serde_json::Value>,
) -> Result<crate::results::LoadStats, String> {
    let target = Target::parse(url).map_err(|e| e.to_string())?;
    let opts = LoadOptions {
        per_connection: Some(1),
        duration: Some(plan.round * plan.rounds),
        warm_up: plan.warm_up,
        rounds: plan.rounds,
        stop: Some(crate::stop::interrupted),
        threads,
        ..LoadOptions::new(vec![target], scale.connections as usize)
    };
    let tw = crate::sys::time_wait_count();
    let r = run_load(ctx, &opts, scale, p);
    record_time_wait(p, tw, r.as_ref().ok());
    let o = r?;
    if o.requests == 0 && o.stopped {
        return Err("interrupted".into());
    }
    p.insert(
        "rounds_requests_per_s".into(),
        json!(o.rounds.iter().map(|r| r.rate()).collect::<Vec<_>>()),
    );
    Ok(o.stats())
}

impl Workload for ShortConn {
    fn info(&self) -> &'static Info {
        &SHORTCONN
    }

    fn flags(&self) -> &'static [WorkloadFlag] {
        FLAGS
    }

    fn options(&self, asked: &super::Asked) -> Result<Option<super::Own>, super::FlagError> {
        Ok(Some(std::sync::Arc::new(HttpOptions::of(asked)?)))
    }

    fn sweeps(&self) -> &'static [&'static str] {
        &["connections"]
    }

    fn size_words(&self, opts: &WorkloadOptions, here: Option<&Ctx>) -> Option<String> {
        let short = ShortPlan::of(opts.size);
        if let Some(s) = &opts.sweep {
            return Some(format!(
                "1, 8 and 16 KB objects, each {}",
                s.words(opts.size)
            ));
        }
        let mut each = format!(
            "{} connections at once, one request each",
            units::fmt_n(short.connections as f64)
        );
        let server = here.and_then(|c| c.hosts().server.address(false).ok());
        if let Some(ip) = server {
            let scale = Scale::of(short.connections, std::net::SocketAddr::new(ip, 80));
            for n in scale.notes {
                each = format!("{each} ({n})");
            }
        }
        Some(format!(
            "1, 8 and 16 KB objects, each {each}: {} warm-up, {} rounds of {} measured",
            humantime::format_duration(short.warm_up),
            short.rounds,
            humantime::format_duration(short.round)
        ))
    }

    fn run(&self, ctx: &Ctx, opts: &WorkloadOptions, progress: &mut Progress) -> WorkloadResult {
        let h: HttpOptions = opts.own();
        let short = ShortPlan::of(opts.size);
        let root = ctx.hosts().server.scratch().join("www-shortconn");
        let mut params = BTreeMap::new();
        h.record(&mut params, ctx);
        params.insert("connections".into(), json!(short.connections));
        params.insert("requests_per_connection".into(), json!(1));
        params.insert("warm_up_s".into(), json!(short.warm_up.as_secs_f64()));
        params.insert(
            "seconds".into(),
            json!((short.round * short.rounds).as_secs_f64()),
        );
        params.insert("rounds".into(), json!(short.rounds));
        params.insert("knobs".into(), time_wait_knobs());
        let objects = [(1, "f1k.bin"), (8, "f8k.bin"), (16, "f16k.bin")];
        let plan = opts.sweep.as_ref().map(|s| s.plan(opts.size, "req/s"));
        let most = match &plan {
            Some(p) => {
                params.insert("connections".into(), json!(p.levels));
                p.levels.iter().copied().fold(1.0, f64::max) as u64
            }
            None => short.connections,
        };
        let server_at = match ctx.hosts().server.address(false) {
            Ok(ip) => std::net::SocketAddr::new(ip, 80),
            Err(e) => {
                return super::finish(
                    &SHORTCONN,
                    params,
                    vec![row("setup".into(), BTreeMap::new(), Err(e))],
                    Vec::new(),
                );
            }
        };
        let scale = Scale::of(short.connections, server_at);
        if plan.is_none() {
            params.insert("connections".into(), json!(scale.connections));
            scale.record(&mut params);
        }
        let workers = h
            .workers
            .unwrap_or_else(|| server_workers(Scale::of(most, server_at).connections));
        params.insert("server_processes".into(), json!(workers));
        params.insert(
            "server_reuseport".into(),
            json!(h.server != ServerKind::Fork),
        );
        progress.begin(
            SHORTCONN.name,
            rows_total(objects.len() as u64, plan.as_ref()),
        );
        let made: Vec<(&str, usize)> = objects
            .iter()
            .map(|(kb, name)| (*name, kb * 1024))
            .collect();
        let mut server = Server::start(
            &ctx.hosts().server,
            &root,
            &made,
            workers,
            true,
            false,
            h.spec(),
        );
        if let Ok(s) = &server {
            params.insert("server_info".into(), s.info());
        }
        let mut rows = Vec::new();
        for (kb, name) in objects {
            if crate::stop::interrupted() {
                break;
            }
            let label = format!("{kb} KB object");
            progress.phase(&label);
            let mut p = BTreeMap::new();
            p.insert("object_bytes".into(), json!(kb * 1024));
            match (&mut server, &plan) {
                (Ok(s), Some(plan)) => {
                    let r = sweep_connections(ctx, s, name, 1, h.threads, plan, progress);
                    rows.push(sweep_row(label, p, r));
                }
                (Ok(s), None) => {
                    let url = format!("{}{name}", s.url);
                    let r = shortconn_row(ctx, &url, &short, &scale, h.threads, &mut p);
                    s.record_accept_errors(&mut p);
                    rows.push(row(label, p, r));
                    progress.advance(1);
                }
                (Err(e), _) => {
                    rows.push(row(label, p, Err(e.clone())));
                    progress.advance(1);
                }
            }
        }
        progress.finish(&format!("{} rows", rows.len()));
        super::finish(&SHORTCONN, params, rows, Vec::new())
    }
}

/// `--http-workers`, as both its check and its reading parse it.
fn http_workers(s: &str) -> Result<u32, String> {
    crate::values::whole::<u32>(1, 1024)(s)
}

/// `--http-threads`, as both its check and its reading parse it.
fn http_threads(s: &str) -> Result<usize, String> {
    crate::values::whole::<usize>(1, 1024)(s)
}
