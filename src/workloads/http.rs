//! Static web serving, as the seeds measured it: `scalebench serve` (its
//! own process or processes) loaded by the built-in load generator over
//! loopback.
//!
//! - `http-ipstack`: one 11 KB file, 50 000 fetches, 50 connections, 10
//!   requests per connection; the server with 1 and with 4 processes, over
//!   IPv4 and IPv6: four rows, as in the seeds' table.
//! - `http-shortconn`: one request per connection (short-lived
//!   connections) for 1 KB, 8 KB and 16 KB objects.

use super::{Info, Options as WorkOptions, Size, Workload};
use crate::harness::Ctx;
use crate::harness::progress::Progress;
use crate::harness::reaper::ChildGroup;
use crate::harness::sweep;
use crate::net::load::{self, Options, Target};
use crate::results::{SweepSample, WorkloadResult, WorkloadRow};
use serde_json::json;
use std::collections::BTreeMap;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The `http-ipstack` workload.
pub struct IpStack;
/// The `http-shortconn` workload.
pub struct ShortConn;

static IPSTACK: Info = Info {
    name: "http-ipstack",
    what: "one 11 KB file fetched over keep-alive connections (50 connections, 10 requests each) from scalebench serve with 1 and 4 processes, over IPv4 and IPv6",
    quick: true,
};

static SHORTCONN: Info = Info {
    name: "http-shortconn",
    what: "one request per connection (50 at a time) for 1 KB, 8 KB and 16 KB objects from scalebench serve",
    quick: true,
};

/// A `scalebench serve` process (or processes), stopped with its process
/// group when dropped.
pub(crate) struct Server {
    _stdin: std::process::ChildStdin,
    _group: ChildGroup,
    /// `http://127.0.0.1:PORT/`.
    pub(crate) url: String,
}

/// Waits up to 10 s for the server's `listening URL` line.
pub(crate) fn read_url(r: &mut impl Read, fd: i32) -> Option<String> {
    let mut line = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while std::time::Instant::now() < deadline {
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: polling one valid pollfd.
        if unsafe { libc::poll(&mut p, 1, 100) } <= 0 {
            continue;
        }
        let mut b = [0u8; 1];
        match r.read(&mut b) {
            Ok(1) if b[0] == b'\n' => {
                let l = String::from_utf8_lossy(&line).into_owned();
                return l.strip_prefix("listening ").map(String::from);
            }
            Ok(1) => line.push(b[0]),
            _ => return None,
        }
    }
    None
}

impl Server {
    /// Starts serving `root` with `processes` worker processes.
    pub(crate) fn start(
        ctx: &Ctx,
        root: &Path,
        processes: u32,
        ipv6: bool,
    ) -> Result<Server, String> {
        let exe = ctx
            .exe()
            .ok_or("cannot find the scalebench executable to run the server")?;
        let mut cmd = Command::new(exe);
        cmd.arg("serve")
            .arg("--root")
            .arg(root)
            .args(["--processes", &processes.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if ipv6 {
            cmd.arg("-6");
        }
        let mut group =
            ChildGroup::spawn(&mut cmd).map_err(|e| format!("starting the server: {e}"))?;
        let child = group.child();
        let stdin = child.stdin.take().ok_or("server stdin")?;
        let mut stdout = child.stdout.take().ok_or("server stdout")?;
        let fd = stdout.as_raw_fd();
        match read_url(&mut stdout, fd) {
            Some(url) => Ok(Server {
                _stdin: stdin,
                _group: group,
                url,
            }),
            None => {
                let mut err = String::new();
                if let Some(e) = group.child().stderr.as_mut() {
                    let _ = e.read_to_string(&mut err);
                }
                Err(format!("the server did not start: {}", err.trim()))
            }
        }
    }
}

/// Writes `name` of `bytes` bytes into `dir`.
fn object(dir: &Path, name: &str, bytes: usize) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let data: Vec<u8> = (0..bytes).map(|i| (i % 251) as u8).collect();
    std::fs::write(dir.join(name), data)
}

/// Rounds measured per row; the row reports the median round.
const ROUNDS: usize = 3;

/// One measured row: a warm-up, then [`ROUNDS`] rounds of `fetches`
/// requests each; the round with the median req/s is kept, and every
/// round's req/s goes in the row's parameters.
fn measure(
    url: &str,
    fetches: u64,
    per_connection: u64,
    params: &mut BTreeMap<String, serde_json::Value>,
) -> Result<crate::results::LoadStats, String> {
    let target = Target::parse(url).map_err(|e| e.to_string())?;
    let mut opts = Options {
        per_connection: Some(per_connection),
        total: Some((fetches / 10).clamp(100, 5_000)),
        ..Options::new(vec![target], 50)
    };
    load::run(&opts).map_err(|e| format!("warm-up: {e}"))?;
    opts.total = Some(fetches);
    let mut rounds = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        if crate::harness::reaper::interrupted() {
            break;
        }
        rounds.push(load::run(&opts).map_err(|e| e.to_string())?.stats());
    }
    params.insert(
        "rounds_requests_per_s".into(),
        json!(rounds.iter().map(|r| r.requests_per_s).collect::<Vec<_>>()),
    );
    rounds.sort_by(|a, b| a.requests_per_s.total_cmp(&b.requests_per_s));
    let mid = rounds.len().saturating_sub(1) / 2;
    rounds
        .into_iter()
        .nth(mid)
        .ok_or_else(|| "interrupted".to_string())
}

/// Sweeps the number of connections: at each level `load` keeps that many
/// connections busy (`per_connection` requests each) for the heat-up, then
/// for each sample; a sample's figure is its req/s.
fn sweep_connections(
    url: &str,
    per_connection: u64,
    plan: &sweep::Plan,
    progress: &mut Progress,
) -> Result<crate::results::SweepStats, String> {
    let target = Target::parse(url).map_err(|e| e.to_string())?;
    let mut runner = |level: f64, plan: &sweep::Plan| {
        let mut opts = Options {
            per_connection: Some(per_connection),
            duration: Some(plan.heat_up),
            stop: Some(crate::harness::reaper::interrupted),
            ..Options::new(vec![target.clone()], level as usize)
        };
        let mut out = sweep::LevelOutcome::default();
        if !plan.heat_up.is_zero()
            && let Err(e) = load::run(&opts)
        {
            out.error = Some(format!("heat-up: {e}"));
            return out;
        }
        opts.duration = Some(plan.sample);
        let start = Instant::now();
        for _ in 0..plan.samples {
            if crate::harness::reaper::interrupted() {
                break;
            }
            match load::run(&opts) {
                Ok(o) if o.stopped => break,
                Ok(o) => {
                    let s = o.stats();
                    out.samples.push(SweepSample {
                        t: start.elapsed().as_secs_f64(),
                        seconds: s.seconds,
                        value: s.requests_per_s,
                        latency_ns: (s.requests > 0).then_some(s.latency_ns),
                        mean_latency_ns: None,
                        errors: o.errors.total(),
                    });
                }
                Err(e) => {
                    out.error = Some(e.to_string());
                    break;
                }
            }
        }
        if !out.samples.is_empty() {
            out.window = Some((start, Instant::now()));
        }
        out
    };
    Ok(sweep::run(plan, progress, &mut runner))
}

/// A row holding a sweep (or why it could not run).
fn sweep_row(
    label: String,
    mut params: BTreeMap<String, serde_json::Value>,
    r: Result<crate::results::SweepStats, String>,
) -> WorkloadRow {
    params.insert("load_threads".into(), json!(1));
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
fn rows_total(rows: u64, plan: Option<&sweep::Plan>) -> u64 {
    match plan {
        Some(p) => {
            rows * (p.planned().as_secs() / p.levels.len().max(1) as u64) * p.levels.len() as u64
        }
        None => rows,
    }
}

impl Workload for IpStack {
    fn info(&self) -> &'static Info {
        &IPSTACK
    }

    fn sweeps(&self) -> &'static [&'static str] {
        &["connections"]
    }

    fn run(&self, ctx: &Ctx, opts: &WorkOptions, progress: &mut Progress) -> WorkloadResult {
        let fetches: u64 = match opts.size {
            Size::Quick => 10_000,
            Size::Full => 50_000,
        };
        let root = ctx.workdir().join("www-ipstack");
        let mut params = BTreeMap::new();
        params.insert("object_bytes".into(), json!(11 * 1024));
        params.insert("fetches".into(), json!(fetches));
        params.insert(
            "server_loop".into(),
            json!(crate::net::server::default_loop()),
        );
        params.insert("connections".into(), json!(50));
        params.insert("requests_per_connection".into(), json!(10));
        if let Err(e) = object(&root, "f11k.bin", 11 * 1024) {
            return super::finish(
                &IPSTACK,
                params,
                vec![row("setup".into(), BTreeMap::new(), Err(e.to_string()))],
                Vec::new(),
            );
        }
        let plan = opts.sweep.as_ref().map(|s| s.plan(opts.size, "req/s"));
        if let Some(p) = &plan {
            params.insert("connections".into(), json!(p.levels));
        }
        progress.begin(IPSTACK.name, rows_total(4, plan.as_ref()));
        let mut rows = Vec::new();
        for (ipv6, processes) in [(false, 1), (false, 4), (true, 1), (true, 4)] {
            if crate::harness::reaper::interrupted() {
                break;
            }
            let label = format!(
                "{processes} process{}, IPv{}",
                if processes == 1 { "" } else { "es" },
                if ipv6 { 6 } else { 4 }
            );
            progress.phase(&label);
            let mut p = BTreeMap::new();
            p.insert("processes".into(), json!(processes));
            p.insert(
                "address_family".into(),
                json!(if ipv6 { "ipv6" } else { "ipv4" }),
            );
            let server = Server::start(ctx, &root, processes, ipv6);
            let url = |s: &Server| format!("{}f11k.bin", s.url);
            match &plan {
                Some(plan) => {
                    let r = server.and_then(|s| sweep_connections(&url(&s), 10, plan, progress));
                    rows.push(sweep_row(label, p, r));
                }
                None => {
                    let r = server.and_then(|s| measure(&url(&s), fetches, 10, &mut p));
                    rows.push(row(label, p, r));
                    progress.advance(1);
                }
            }
        }
        progress.finish(&format!("{} rows", rows.len()));
        super::finish(&IPSTACK, params, rows, Vec::new())
    }
}

impl Workload for ShortConn {
    fn info(&self) -> &'static Info {
        &SHORTCONN
    }

    fn sweeps(&self) -> &'static [&'static str] {
        &["connections"]
    }

    fn run(&self, ctx: &Ctx, opts: &WorkOptions, progress: &mut Progress) -> WorkloadResult {
        let fetches: u64 = match opts.size {
            Size::Quick => 5_000,
            Size::Full => 50_000,
        };
        let root = ctx.workdir().join("www-shortconn");
        let mut params = BTreeMap::new();
        params.insert("fetches".into(), json!(fetches));
        params.insert(
            "server_loop".into(),
            json!(crate::net::server::default_loop()),
        );
        params.insert("connections".into(), json!(50));
        params.insert("requests_per_connection".into(), json!(1));
        let objects = [(1, "f1k.bin"), (8, "f8k.bin"), (16, "f16k.bin")];
        for (kb, name) in objects {
            if let Err(e) = object(&root, name, kb * 1024) {
                return super::finish(
                    &SHORTCONN,
                    params,
                    vec![row("setup".into(), BTreeMap::new(), Err(e.to_string()))],
                    Vec::new(),
                );
            }
        }
        let plan = opts.sweep.as_ref().map(|s| s.plan(opts.size, "req/s"));
        if let Some(p) = &plan {
            params.insert("connections".into(), json!(p.levels));
        }
        progress.begin(
            SHORTCONN.name,
            rows_total(objects.len() as u64, plan.as_ref()),
        );
        let server = Server::start(ctx, &root, 1, false);
        let mut rows = Vec::new();
        for (kb, name) in objects {
            if crate::harness::reaper::interrupted() {
                break;
            }
            let label = format!("{kb} KB object");
            progress.phase(&label);
            let mut p = BTreeMap::new();
            p.insert("object_bytes".into(), json!(kb * 1024));
            match (&server, &plan) {
                (Ok(s), Some(plan)) => {
                    let r = sweep_connections(&format!("{}{name}", s.url), 1, plan, progress);
                    rows.push(sweep_row(label, p, r));
                }
                (Ok(s), None) => {
                    let r = measure(&format!("{}{name}", s.url), fetches, 1, &mut p);
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
