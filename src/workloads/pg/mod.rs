//! `pgbench`: PostgreSQL's own benchmark against a throwaway cluster
//! ([`cluster`]), swept over the number of clients — the DragonFly
//! performance page's experiment. Each level is a heat-up run of pgbench
//! and a measured run with a progress report every sample (`-P`), whose
//! lines are the samples; the mean of the last three is the level's TPS.
//!
//! Select-only (`-S`, DragonFly's) by default, TPC-B-like as well on
//! request; over TCP to 127.0.0.1 (default) or the unix socket; `-j
//! min(clients, CPUs)`; no pinning unless asked (`--pg-pin`; recorded).

pub mod cluster;
pub mod conninfo;
mod options;

pub use options::{Mode, PgOptions, Pin};

use super::{Info, Size, Workload, WorkloadOptions};
use crate::ctx::Ctx;
use crate::harness::progress::Progress;
use crate::harness::reaper::run_bounded;
use crate::harness::sweep::{self, LevelOutcome};
use crate::results::{SweepSample, WorkloadResult, WorkloadRow};
use crate::sys::memlimit::MemoryLimit;
use cluster::{Bin, Cluster, Server, last_lines};
use serde_json::json;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The `pgbench` workload.
pub struct PgBench;

static PGBENCH: Info = Info {
    name: "pgbench",
    what: "PostgreSQL's pgbench (select-only) against a throwaway cluster, TPS against clients (1, 2, 4 … 2×CPUs; full: 4×CPUs)",
    quick: false,
    between_hosts: true,
    several_clients: false,
};

/// Bytes of one scale unit of pgbench's tables with their indexes, about
/// (docs/measurements.md, "Figures behind the code's choices").
const BYTES_PER_SCALE: u64 = 16_000_000;

/// A sample of a full run's client sweep: DragonFly's pgbench points
/// were 60 s runs.
const FULL_SAMPLE: Duration = Duration::from_secs(60);

/// The sweep over clients of a run of `size` on `cpus` CPUs: the levels
/// `asked`, else the default ones, in whole seconds. A full run samples
/// each level as DragonFly did, three 60 s points, also at levels the
/// user gives (DragonFly's 1…64 clients), unless the user gives the
/// samples too.
fn client_sweep(asked: Option<&super::SweepOptions>, size: Size, cpus: usize) -> sweep::SweepPlan {
    let full = size == Size::Full;
    let mut plan = match asked {
        Some(s) => super::SweepOptions {
            variable: "clients".into(),
            levels: if s.timings_only() {
                default_levels(size, cpus)
            } else {
                s.levels.clone()
            },
            sample: s.sample.or(full.then_some(FULL_SAMPLE)),
            samples: s.samples.or(full.then_some(3)),
            ..s.clone()
        },
        None => super::SweepOptions {
            variable: "clients".into(),
            levels: default_levels(size, cpus),
            heat_up: None,
            sample: full.then_some(FULL_SAMPLE),
            samples: full.then_some(3),
            baseline: None,
        },
    }
    .plan(size, "TPS");
    whole_seconds(&mut plan);
    plan
}

/// The scale factor the run asks for and the database's size it aims at:
/// `--pg-scale`, else of `--pg-db-size`, else the size's own.
fn scale_of(opts: &WorkloadOptions, pg: &PgOptions) -> (u64, u64) {
    let db_bytes = match (pg.scale, pg.db_bytes) {
        (Some(scale), _) => scale * BYTES_PER_SCALE,
        (None, Some(b)) => b,
        (None, None) => match opts.size {
            Size::Quick => 10 * BYTES_PER_SCALE,
            Size::Full => 100 * BYTES_PER_SCALE,
        },
    };
    (pg.scale.unwrap_or_else(|| scale_for(db_bytes)), db_bytes)
}

/// The scale factor for a database of about `bytes`.
pub fn scale_for(bytes: u64) -> u64 {
    (bytes / BYTES_PER_SCALE).max(1)
}

/// One `progress:` line of pgbench: seconds since the start, TPS, mean
/// latency in ms, and failed transactions (PostgreSQL 15+; 0 before).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProgressLine {
    /// Seconds since the run started (the end of the interval).
    pub t: f64,
    /// Transactions per second over the interval.
    pub tps: f64,
    /// Mean latency, ms.
    pub lat_ms: Option<f64>,
    /// Failed transactions in the interval.
    pub failed: u64,
}

/// Parses pgbench's `progress: 2.0 s, 62581.2 tps, lat 0.032 ms stddev
/// 0.010, 0 failed` lines out of its standard error.
pub fn parse_progress(stderr: &str) -> Vec<ProgressLine> {
    stderr
        .lines()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix("progress: ")?;
            let mut parts = rest.split(", ");
            let t: f64 = parts.next()?.strip_suffix(" s")?.trim().parse().ok()?;
            let tps: f64 = parts.next()?.strip_suffix(" tps")?.trim().parse().ok()?;
            let mut lat_ms = None;
            let mut failed = 0;
            for p in parts {
                if let Some(x) = p.strip_prefix("lat ") {
                    lat_ms = x.split_whitespace().next().and_then(|v| v.parse().ok());
                } else if let Some(x) = p.strip_suffix(" failed") {
                    failed = x.trim().parse().unwrap_or(0);
                }
            }
            Some(ProgressLine {
                t,
                tps,
                lat_ms,
                failed,
            })
        })
        .collect()
}

/// The default client levels: 1, 2, 4 … up to 2×CPUs (full: 4×CPUs), and
/// that top level itself.
pub fn default_levels(size: Size, cpus: usize) -> Vec<f64> {
    let top = cpus.max(1) * if size == Size::Full { 4 } else { 2 };
    let mut v = Vec::new();
    let mut c = 1;
    while c < top {
        v.push(c as f64);
        c *= 2;
    }
    v.push(top as f64);
    v
}

impl Workload for PgBench {
    fn info(&self) -> &'static Info {
        &PGBENCH
    }

    fn sweeps(&self) -> &'static [&'static str] {
        &["clients"]
    }

    fn sweeps_by_default(&self) -> bool {
        true
    }

    fn flags(&self) -> &'static [super::WorkloadFlag] {
        options::FLAGS
    }

    fn options(&self, asked: &super::Asked) -> Result<Option<super::Own>, super::FlagError> {
        PgOptions::own(asked)
    }

    fn release_stale(&self, dir: &std::path::Path) -> Vec<String> {
        // A swap file on cannot be removed: switched off first.
        let mut v = crate::sys::swap::release_stale(dir);
        v.extend(cluster::release_stale(dir));
        // The memory cgroup of --memory-sweep is named after the run.
        let owner = std::fs::read_to_string(dir.join(crate::harness::workdir::OWNER));
        if let Some(pid) = owner.ok().and_then(|s| s.trim().parse::<u32>().ok()) {
            v.extend(crate::sys::memlimit::release(pid));
        }
        v
    }

    fn agent(&self, args: &[String]) -> Option<anyhow::Result<std::process::ExitCode>> {
        Some(
            options::AgentArgs::parse(args)
                .map_err(anyhow::Error::msg)
                .and_then(|a| cluster::serve(&a)),
        )
    }

    fn size_words(&self, opts: &WorkloadOptions, here: Option<&Ctx>) -> Option<String> {
        let pg: PgOptions = opts.own();
        let (scale, bytes) = scale_of(opts, &pg);
        let asked = format!(
            "scale {} (a database of about {})",
            units::fmt_n(scale as f64),
            units::fmt_bytes(bytes)
        );
        // Only a throwaway cluster in the work directory here is fitted
        // from what the dry run can see.
        let ours =
            here.filter(|c| pg.server.is_none() && !pg.memory_sweep && c.hosts().server.is_local());
        Some(match (opts.fit, ours) {
            (false, _) => asked,
            (true, Some(ctx)) => format!("{asked}; {}", fit_words(scale, ctx.workdir())),
            (true, None) => {
                format!(
                    "{asked}; --fit sizes it to what its disk holds when it runs, unseen here (params.fitted says)"
                )
            }
        })
    }

    fn run(&self, ctx: &Ctx, opts: &WorkloadOptions, progress: &mut Progress) -> WorkloadResult {
        let pg: PgOptions = opts.own();
        let mut s = Setup::new(ctx, opts, &pg);
        let plan = s.client_plan();
        if !pg.memory_sweep {
            s.params.insert("clients".into(), json!(plan.levels));
        }
        if s.apart && pg.memory_sweep {
            return unsupported(
                s.params,
                "the memory sweep limits the server's memory and drops its caches on this machine: not with --host server=…".into(),
            );
        }
        let bin = match s.find_bin() {
            Ok(b) => b,
            Err(e) => return unsupported(s.params, e),
        };
        let modes = if pg.modes.is_empty() {
            vec![Mode::SelectOnly]
        } else {
            pg.modes.clone()
        };
        let max_clients = plan.levels.iter().copied().fold(1.0, f64::max) as u32;
        let sweeps = modes.len() as u64 + u64::from(pg.second_tier.is_some());
        progress.begin(PGBENCH.name, sweeps * (plan.planned().as_secs() + 20));
        progress.phase("initdb and start");
        let limit = s.memory_limit();
        let connections = max_clients.max(s.cpus as u32) + 10;
        let (server, had_tables) = match s.start_server(&bin, limit.as_ref(), connections) {
            Ok(started) => started,
            Err(e) => return failed(s.params, "setup", e),
        };
        // From here on, tables this run makes on a given server are
        // dropped at the end, however the workload ends.
        let tables = pg.server.is_some().then(|| GivenTables {
            server: &server,
            had: had_tables,
        });
        if let Some(t) = &tables {
            s.params.insert("tables".into(), json!(t.words()));
        }
        s.params.insert("settings".into(), json!(server.settings()));
        progress.phase(&format!("pgbench -i -s {}", s.scale));
        if let Err(e) = s.load(&server) {
            return failed(s.params, "setup", e);
        }
        progress.advance(20);
        let mut rows = s.sweep(&server, &plan, modes, limit.as_ref(), progress);
        drop(tables);
        drop(server);
        if let Some(tier) = &pg.second_tier
            && !crate::stop::interrupted()
        {
            rows.push(s.second_tier_row(&bin, tier, limit.as_ref(), connections, progress));
        }
        drop(limit);
        progress.finish(&format!("{} rows", rows.len()));
        super::finish(&PGBENCH, s.params, rows, Vec::new())
    }
}

/// A pgbench run being set up and run ([`PgBench`]): what was asked, and
/// the parameters recorded for the result so far.
struct Setup<'a> {
    ctx: &'a Ctx<'a>,
    opts: &'a WorkloadOptions,
    pg: &'a PgOptions,
    cpus: usize,
    /// The scale factor of the tables.
    scale: u64,
    /// The memory the database may use, with `--memory-sweep`.
    memory: Option<u64>,
    /// Whether the server runs on another host (and is not given).
    apart: bool,
    params: BTreeMap<String, serde_json::Value>,
}

impl<'a> Setup<'a> {
    /// The run `pg` asks for, with the parameters that say how it connects.
    fn new(ctx: &'a Ctx<'a>, opts: &'a WorkloadOptions, pg: &'a PgOptions) -> Self {
        let (scale, db_bytes) = scale_of(opts, pg);
        let memory = pg.memory_sweep.then(|| {
            pg.memory_bytes.unwrap_or(match opts.size {
                Size::Quick => 256 << 20,
                Size::Full => 1 << 30,
            })
        });
        let mut params = BTreeMap::new();
        params.insert("scale".into(), json!(scale));
        params.insert("target_db_bytes".into(), json!(db_bytes));
        params.insert(
            "transport".into(),
            json!(if pg.socket {
                "unix socket"
            } else {
                "tcp 127.0.0.1"
            }),
        );
        params.insert("threads".into(), json!("min(clients, CPUs)"));
        params.insert("pinning".into(), json!(pg.pin.words()));
        let apart = !ctx.hosts().server.is_local() && pg.server.is_none();
        if apart {
            params.insert(
                "server_host".into(),
                json!(ctx.hosts().server.reach().to_string()),
            );
            params.insert("transport".into(), json!("tcp between hosts"));
        }
        Setup {
            ctx,
            opts,
            pg,
            cpus: crate::sys::cpu_count(),
            scale,
            memory,
            apart,
            params,
        }
    }

    /// The sweep over clients: the one asked for, or the default levels
    /// (always those with `--memory-sweep`), in whole seconds.
    fn client_plan(&self) -> sweep::SweepPlan {
        let asked = self.opts.sweep.as_ref().filter(|_| !self.pg.memory_sweep);
        client_sweep(asked, self.opts.size, self.cpus)
    }

    /// PostgreSQL's programs: the clients only for a server made elsewhere.
    fn find_bin(&mut self) -> Result<Bin, String> {
        let bin = if self.pg.server.is_some() || self.apart {
            Bin::find_clients()
        } else {
            Bin::find()
        }?;
        self.params
            .insert("bin_dir".into(), json!(bin.dir.display().to_string()));
        Ok(bin)
    }

    /// With `--memory-sweep`, the memory limit the cluster runs under, if
    /// one can be made (recorded either way).
    fn memory_limit(&mut self) -> Option<MemoryLimit> {
        let bytes = self.memory?;
        self.params.insert("memory_bytes".into(), json!(bytes));
        match MemoryLimit::create(bytes) {
            Ok(l) => {
                self.params.insert(
                    "memory_limit".into(),
                    json!(format!("{} {}", l.kind, l.path().display())),
                );
                Some(l)
            }
            Err(e) => {
                self.params.insert(
                    "memory_limit".into(),
                    json!(format!("none: {}", crate::sys::error_words(&e))),
                );
                None
            }
        }
    }

    /// The disk the database needs while it is loaded.
    fn need(&self) -> u64 {
        space_needed(match self.memory {
            Some(m) => 2 * m,
            None => self.scale * BYTES_PER_SCALE,
        })
    }

    /// Whether the disk a cluster of ours is made on has room for the
    /// database (recorded); not checked on another machine.
    fn free_space(&mut self) -> Result<(), String> {
        let host = &self.ctx.hosts().server;
        let dir = match (self.apart, host.on_this_machine()) {
            (false, _) => Some(self.ctx.workdir()),
            (true, true) => Some(host.scratch()),
            (true, false) => None,
        };
        let note = match dir.map(|d| (d, check_space(d, self.need()))) {
            Some((d, Err(_))) if self.opts.fit && self.memory.is_none() => self.fit_to(d)?,
            Some((_, note)) => note?,
            None => "not checked: the server host is another machine".to_string(),
        };
        self.params.insert("free_space".into(), json!(note));
        Ok(())
    }

    /// `--fit`: the scale lowered until the database fits the free space
    /// of `dir` with a tenth to spare, recorded as `fitted`; the space
    /// note of the scale it runs at.
    fn fit_to(&mut self, dir: &std::path::Path) -> Result<String, String> {
        let free = crate::sys::free_bytes(dir).unwrap_or(0);
        // Below the quick size's scale the tables are no measure of the
        // database asked for: refused as asked (the space note says why).
        let Some(scale) = fit_scale(free) else {
            return check_space(dir, self.need());
        };
        let note = fitted_words(self.scale, scale, dir, free);
        self.scale = scale;
        self.params.insert("scale".into(), json!(scale));
        self.params
            .insert("target_db_bytes".into(), json!(scale * BYTES_PER_SCALE));
        self.params.insert("fitted".into(), json!(note));
        check_space(dir, self.need())
    }

    /// The server: the one given, checked, or a throwaway cluster on the
    /// server host or here (under `limit`, if one), for `connections`;
    /// and whether a given server had pgbench tables already.
    fn start_server(
        &mut self,
        bin: &Bin,
        limit: Option<&MemoryLimit>,
        connections: u32,
    ) -> Result<(Server, bool), String> {
        let pg = self.pg;
        if let Some(ci) = &pg.server {
            self.params
                .insert("server".into(), json!("given by connection string"));
            let s = Server::remote(bin.clone(), ci.clone());
            let had = given_server_ready(&s, ci, pg.drop_tables, self.need(), &mut self.params)?;
            return Ok((s, had));
        }
        self.free_space()?;
        // Under a memory limit the shared buffers take a quarter of it (as
        // PostgreSQL advises for a machine's RAM), and index builds little,
        // so that the limit bounds the cache rather than killing backends.
        let settings: Vec<(&str, String)> = match self.memory {
            Some(m) if limit.is_some() => limited_settings(m / 4),
            _ => Vec::new(),
        };
        let (server, words) = if self.apart {
            let hosts = self.ctx.hosts();
            let s = Server::hosted(bin.clone(), hosts, connections, &settings, pg.pin.cpus())?;
            (s, "throwaway cluster on the server host")
        } else {
            let s = self.local_cluster(bin, "pg", connections, limit, &settings)?;
            (s, "throwaway cluster")
        };
        self.params.insert("server".into(), json!(words));
        Ok((server, false))
    }

    /// A throwaway cluster here, in the work directory's `name`, under
    /// `limit` (if one) with `settings`, pinned as asked; the user it runs
    /// as recorded.
    fn local_cluster(
        &mut self,
        bin: &Bin,
        name: &str,
        connections: u32,
        limit: Option<&MemoryLimit>,
        settings: &[(&str, String)],
    ) -> Result<Server, String> {
        let (server_cpu, client_cpu) = self.pg.pin.cpus();
        let c = Cluster::start(
            bin,
            &self.ctx.workdir().join(name),
            connections,
            limit,
            settings,
            server_cpu,
            None,
        )?;
        if let Some(u) = &c.runs_as {
            self.params.insert("server_user".into(), json!(u));
        }
        Ok(Server::local(bin.clone(), c, self.pg.socket, client_cpu))
    }

    /// Loads the tables (`pgbench -i`), writes them out and warms the
    /// shared buffers with them, recording how each went.
    fn load(&mut self, server: &Server) -> Result<(), String> {
        load_tables(server, self.scale)?;
        // The freshly loaded tables are dirty: write them out now, not
        // during the first level.
        // (On a server of someone else's this may need rights we lack:
        // then it is noted, not fatal.)
        let checkpoint = match server.sql("checkpoint") {
            Ok(_) => "done".to_string(),
            Err(e) if !server.throwaway() => format!("not done: {e}"),
            Err(e) => return Err(e),
        };
        self.params.insert("checkpoint".into(), json!(checkpoint));
        // Warm the shared buffers with the tables and indexes, as a long
        // run would have them (pg_prewarm, from PostgreSQL's contrib; the
        // heat-up of each level does the rest).
        self.params.insert(
            "prewarm".into(),
            json!(match server
                .sql("create extension if not exists pg_prewarm")
                .and_then(|_| server.sql(PREWARM))
            {
                Ok(blocks) => format!("pg_prewarm: {} blocks", blocks.trim()),
                Err(e) => format!("none ({e})"),
            }),
        );
        if let Some(b) = database_bytes(server) {
            self.params.insert("db_bytes".into(), json!(b));
        }
        Ok(())
    }

    /// The memory sweep again over a second tier of memory: a swap file
    /// switched on for it, and a new throwaway cluster under the same
    /// limit whose shared buffers can hold the whole database, so that
    /// what does not fit in memory is swapped out to the tier and read
    /// back from there rather than dropped and read from the data files.
    fn second_tier_row(
        &mut self,
        bin: &Bin,
        tier: &options::SecondTier,
        limit: Option<&MemoryLimit>,
        connections: u32,
        progress: &mut Progress,
    ) -> WorkloadRow {
        let label = "select-only, size against memory, second tier: swap".to_string();
        let mut p = BTreeMap::new();
        match self.second_tier_sweep(bin, tier, limit, connections, progress, &mut p) {
            Ok(mut row) => {
                row.label = label;
                row.params.append(&mut p);
                row
            }
            Err(e) => WorkloadRow {
                label,
                target: None,
                params: p,
                load: None,
                phase: None,
                sweep: None,
                error: Some(e),
            },
        }
    }

    /// The sweep of [`Setup::second_tier_row`], what stood in for the
    /// tier described in `p`; why it could not run.
    fn second_tier_sweep(
        &mut self,
        bin: &Bin,
        tier: &options::SecondTier,
        limit: Option<&MemoryLimit>,
        connections: u32,
        progress: &mut Progress,
        p: &mut BTreeMap<String, serde_json::Value>,
    ) -> Result<WorkloadRow, String> {
        if limit.is_none() {
            return Err("no memory limit to spill past (see memory_limit)".to_string());
        }
        let memory = self.memory.unwrap_or(0);
        let (work, dir) = (self.ctx.workdir(), tier.dir.as_deref());
        let bytes = memory / 2 * 5;
        // The second cluster's database beside the first one's, and the
        // swap file on its own disk or beside them.
        match dir {
            Some(d) if crate::sys::mount_of(d) != crate::sys::mount_of(work) => {
                check_space(d, bytes)?;
                check_space(work, self.need())?;
            }
            _ => check_space(work, bytes + self.need()).map(drop)?,
        }
        let dir = dir.unwrap_or(work);
        let swap = crate::sys::swap::SwapFile::create(dir, bytes, work, mkswap)?;
        // A tier is there to be used: the cgroup swaps shared buffers as
        // readily as it drops file pages (at the default, a database twice
        // the limit once swapped almost nothing and a backend was killed).
        if let Some(l) = limit {
            l.set_swappiness(TIER_SWAPPINESS)
                .map_err(|e| crate::sys::error_words(&e))?;
        }
        let buffers = memory / 4 * 9;
        let mount = crate::sys::mount_of(dir);
        p.insert(
            "second_tier".into(),
            json!({
                "kind": "swap file",
                "path": swap.path().display().to_string(),
                "bytes": bytes,
                "filesystem": mount.map(|m| format!("{} on {}", m.fs_type, m.device)),
                "priority": "highest (used before any other swap)",
                "shared_buffers_bytes": buffers,
                "cgroup_swappiness": limit.and_then(MemoryLimit::swappiness),
                "stands_in_for": "DragonFly's swapcache on an SSD: here PostgreSQL's shared buffers, sized to hold the whole database, spill past the memory limit into swap and are read back from it, instead of being dropped and read from the data files",
            }),
        );
        progress.phase("second tier: initdb and start");
        let settings = limited_settings(buffers);
        let server = self.local_cluster(bin, "pg-second-tier", connections, limit, &settings)?;
        progress.advance(20);
        let row = memory_sweep(
            &server,
            memory,
            self.cpus,
            self.opts,
            progress,
            limit,
            Some(&swap),
        );
        // The cluster stops before its swap file goes.
        drop(server);
        Ok(row)
    }

    /// The rows: the memory sweep, or a sweep over `plan`'s clients for
    /// each of `modes`, until interrupted.
    fn sweep(
        &self,
        server: &Server,
        plan: &sweep::SweepPlan,
        modes: Vec<Mode>,
        limit: Option<&MemoryLimit>,
        progress: &mut Progress,
    ) -> Vec<WorkloadRow> {
        let cpus = self.cpus;
        if let Some(memory) = self.memory {
            return vec![memory_sweep(
                server, memory, cpus, self.opts, progress, limit, None,
            )];
        }
        let mut rows = Vec::new();
        for mode in modes {
            if crate::stop::interrupted() {
                break;
            }
            let mut runner = |level: f64, plan: &sweep::SweepPlan| {
                level_run(server, mode, level as u32, cpus, plan)
            };
            let stats = sweep::run(plan, progress, &mut runner);
            let mut p = BTreeMap::new();
            p.insert("mode".into(), json!(mode.name()));
            rows.push(WorkloadRow {
                label: mode.name().into(),
                target: None,
                params: p,
                load: None,
                phase: None,
                sweep: Some(stats),
                error: None,
            });
        }
        rows
    }
}

/// pgbench's tables.
const TABLES: [&str; 4] = [
    "pgbench_accounts",
    "pgbench_branches",
    "pgbench_history",
    "pgbench_tellers",
];

/// The disk a database of `bytes` needs while `pgbench -i` makes it: the
/// tables and indexes, as much again for the write-ahead log and the
/// index builds' sorts, and 64 MiB for the cluster itself (an estimate
/// from [`BYTES_PER_SCALE`]).
fn space_needed(bytes: u64) -> u64 {
    2 * bytes + (64 << 20)
}

/// The scale `--fit` runs at where `free` bytes cannot hold the database
/// asked for: the largest whose database fits with a tenth to spare, or
/// `None` below the quick size's scale of 10 (no measure of it).
fn fit_scale(free: u64) -> Option<u64> {
    let room = (free / 10 * 9).saturating_sub(64 << 20) / 2;
    Some(room / BYTES_PER_SCALE).filter(|&s| s >= 10)
}

/// The words of a fitted database (`params.fitted`): scale `asked` was
/// lowered to `scale` because `dir` has `free` bytes free.
fn fitted_words(asked: u64, scale: u64, dir: &std::path::Path, free: u64) -> String {
    use crate::units::fmt_bytes;
    format!(
        "fitted to this machine (--fit): scale {} asked (about {} on disk while loaded), scale {} run: {} has {} free",
        crate::units::fmt_n(asked as f64),
        fmt_bytes(space_needed(asked * BYTES_PER_SCALE)),
        crate::units::fmt_n(scale as f64),
        dir.display(),
        fmt_bytes(free)
    )
}

/// What `--fit` will do to the database of `scale` made in `dir`, for the
/// dry run: nothing, the fitted words, or why it cannot.
fn fit_words(scale: u64, dir: &std::path::Path) -> String {
    match crate::sys::free_bytes(dir) {
        None => format!(
            "{}: free space unknown (--fit looks again when it runs)",
            dir.display()
        ),
        Some(free) if free >= space_needed(scale * BYTES_PER_SCALE) => {
            "the disk holds it as asked (--fit changes nothing)".into()
        }
        Some(free) => match fit_scale(free) {
            Some(s) => fitted_words(scale, s, dir, free),
            None => format!(
                "not fitted (--fit): {} has {} free, too little for scale 10, the least --fit shrinks to: the run fails with that said",
                dir.display(),
                crate::units::fmt_bytes(free)
            ),
        },
    }
}

/// Whether the filesystem of `dir` has `need` bytes free; a note for the
/// result, or why not.
fn check_space(dir: &std::path::Path, need: u64) -> Result<String, String> {
    use crate::units::fmt_bytes;
    match crate::sys::free_bytes(dir) {
        Some(free) if free < need => Err(format!(
            "{} has {} free; this database needs about {} while it is loaded (tables, indexes, write-ahead log): a smaller --db-size, or --workdir on a larger disk",
            dir.display(),
            fmt_bytes(free),
            fmt_bytes(need)
        )),
        Some(free) => Ok(format!(
            "{} free in {}, about {} needed",
            fmt_bytes(free),
            dir.display(),
            fmt_bytes(need)
        )),
        None => Ok(format!(
            "not checked: the free space of {} could not be read",
            dir.display()
        )),
    }
}

/// Before anything is loaded on a server scalebench did not make: it
/// answers, it has no pgbench tables of its own (unless `drop_tables`),
/// and, when it is on this machine, its data directory's disk has `need`
/// bytes free (where the server lets us read where that is). Whether it
/// had pgbench tables.
fn given_server_ready(
    s: &Server,
    conninfo: &str,
    drop_tables: bool,
    need: u64,
    params: &mut BTreeMap<String, serde_json::Value>,
) -> Result<bool, String> {
    let list = TABLES.map(|t| format!("'{t}'")).join(", ");
    let had = s.sql(&format!(
        "select string_agg(tablename, ', ' order by tablename) from pg_tables \
         where schemaname = current_schema() and tablename in ({list})"
    ))?;
    let had = had.trim();
    if !had.is_empty() {
        if !drop_tables {
            return Err(format!(
                "the server already has {had}: pgbench -i would drop and remake them, and scalebench drops no table it did not make (--pg-drop-tables to allow it)"
            ));
        }
        params.insert("tables_before".into(), json!(had));
    }
    let local = conninfo::Conninfo::parse(conninfo).is_ok_and(|c| c.is_local());
    let note = if local {
        match s.sql("show data_directory") {
            Ok(d) => check_space(std::path::Path::new(d.trim()), need)?,
            Err(e) => format!("not checked: the server's data directory is not readable ({e})"),
        }
    } else {
        "not checked: the server is not on this machine".to_string()
    };
    params.insert("free_space".into(), json!(note));
    Ok(!had.is_empty())
}

/// pgbench's tables on a server scalebench did not make: when they were
/// not there before the run, the ones it made are dropped when this goes
/// (at the end, on error and after ^C); tables that were there before
/// (`--pg-drop-tables`) are left, remade.
struct GivenTables<'a> {
    server: &'a Server,
    had: bool,
}

impl GivenTables<'_> {
    /// What happens to the tables, in words (for the result).
    fn words(&self) -> &'static str {
        if self.had {
            "there before the run: dropped and remade (--pg-drop-tables), left as remade"
        } else {
            "made by this run and dropped at its end"
        }
    }
}

impl Drop for GivenTables<'_> {
    fn drop(&mut self) {
        if self.had {
            return;
        }
        if let Err(e) = self
            .server
            .sql_to_end(&format!("drop table if exists {}", TABLES.join(", ")))
        {
            sys::say!("pgbench: the tables this run made on the server were not dropped: {e}");
        }
    }
}

/// Loads pgbench's tables and indexes into the shared buffers; prints the
/// blocks read.
const PREWARM: &str = "select sum(pg_prewarm(c.oid::regclass)) from pg_class c \
    where c.relname like 'pgbench\\_%' and c.relkind in ('r', 'i')";

/// The memory cgroup's swappiness while a second tier (swap) is measured
/// (cgroup v1; v2 has none per cgroup): anonymous and shared memory
/// weigh as file pages do.
const TIER_SWAPPINESS: u64 = 100;

/// The settings of a cluster under a memory limit: `shared_buffers`
/// bytes of shared buffers, and little memory for index builds, so that
/// the limit bounds the cache rather than killing backends.
fn limited_settings(shared_buffers: u64) -> Vec<(&'static str, String)> {
    vec![
        ("shared_buffers", format!("{}kB", shared_buffers / 1024)),
        ("maintenance_work_mem", "16MB".to_string()),
    ]
}

/// The swapcache experiment: select-only TPS with as many clients as
/// CPUs while the database grows from half to twice the memory it may use;
/// at each level the tables are loaded anew at the level's scale,
/// checkpointed, and the caches dropped where permitted. With `swap` (the
/// second tier) each level records how much of it is in use after it. A
/// level that `limit`'s OOM killer cut short runs once more (see
/// [`retry_after_oom`]).
fn memory_sweep(
    c: &Server,
    memory: u64,
    cpus: usize,
    opts: &WorkloadOptions,
    progress: &mut Progress,
    limit: Option<&MemoryLimit>,
    swap: Option<&crate::sys::swap::SwapFile>,
) -> WorkloadRow {
    let levels = match opts.size {
        Size::Quick => vec![0.5, 1.0, 2.0],
        Size::Full => vec![0.5, 0.75, 1.0, 1.25, 1.5, 2.0],
    };
    let mut plan = super::SweepOptions {
        variable: "size/memory".into(),
        levels,
        heat_up: opts.sweep.as_ref().and_then(|s| s.heat_up),
        sample: opts.sweep.as_ref().and_then(|s| s.sample),
        samples: opts.sweep.as_ref().and_then(|s| s.samples),
        baseline: None,
    }
    .plan(opts.size, "TPS");
    plan.knee_on = "figure";
    whole_seconds(&mut plan);
    let clients = cpus.max(1) as u32;
    let level = |ratio: f64, plan: &sweep::SweepPlan| {
        let scale = scale_for((ratio * memory as f64) as u64);
        let mut out = LevelOutcome::default();
        out.params.insert("scale".into(), json!(scale));
        if let Err(e) = load_tables(c, scale) {
            out.error = Some(e);
            return out;
        }
        if let Err(e) = c.sql("checkpoint") {
            out.error = Some(e);
            return out;
        }
        if let Some(b) = database_bytes(c) {
            out.params.insert("db_bytes".into(), json!(b));
        }
        out.params.insert(
            "cache".into(),
            json!(match crate::sys::drop_caches() {
                Ok(()) => "dropped".to_string(),
                Err(e) => format!("warm: {e}"),
            }),
        );
        let mut m = level_run(c, Mode::SelectOnly, clients, cpus, plan);
        m.params.append(&mut out.params);
        if let Some(s) = swap {
            m.params.insert("swap_used_bytes".into(), json!(s.used()));
        }
        m
    };
    let kills = || limit.and_then(MemoryLimit::oom_kills);
    let mut runner = |ratio: f64, plan: &sweep::SweepPlan| {
        let wait = || wait_accepting(c, Duration::from_secs(60));
        retry_after_oom(kills, wait, || level(ratio, plan))
    };
    let stats = sweep::run(&plan, progress, &mut runner);
    let mut p = BTreeMap::new();
    p.insert("mode".into(), json!("select-only"));
    p.insert("clients".into(), json!(clients));
    p.insert("memory_bytes".into(), json!(memory));
    WorkloadRow {
        label: "select-only, size against memory".into(),
        target: None,
        params: p,
        load: None,
        phase: None,
        sweep: Some(stats),
        error: None,
    }
}

/// Runs `level`; when it failed and the memory cgroup's OOM killer ended a
/// process meanwhile (`kills` counts them; a backend, which makes the
/// server restart all of them), `wait`s for the server to accept queries
/// again and runs it once more. A memory cgroup's reclaim can fall behind
/// a backend swapping shared memory back in when the machine is busy (it
/// happened once in a CI run beside other tests). The level's `oom_kills`
/// (whenever the killer ended any) and `retried` say so; a second failure
/// names the OOM killer.
fn retry_after_oom(
    kills: impl Fn() -> Option<u64>,
    wait: impl FnOnce() -> Result<(), String>,
    mut level: impl FnMut() -> LevelOutcome,
) -> LevelOutcome {
    let before = kills();
    let mut out = level();
    let killed = |before: Option<u64>| match (before, kills()) {
        (Some(b), Some(a)) if a > b => a - b,
        _ => 0,
    };
    let first = killed(before);
    if first > 0 {
        out.params.insert("oom_kills".into(), json!(first));
    }
    if out.error.is_none() || first == 0 || crate::stop::interrupted() {
        return out;
    }
    let why = out.error.take().unwrap_or_default();
    let again = kills();
    if let Err(e) = wait() {
        out.error = Some(format!(
            "the memory cgroup's OOM killer ended {first} process(es) ({why}); then {e}"
        ));
        return out;
    }
    let mut out = level();
    let second = killed(again);
    out.params.insert("oom_kills".into(), json!(first + second));
    out.params.insert(
        "retried".into(),
        json!(format!(
            "the memory cgroup's OOM killer ended {first} process(es) in the first attempt ({why}); the level ran again"
        )),
    );
    if let Some(e) = out.error.take() {
        out.error = Some(if second > 0 {
            format!("the memory cgroup's OOM killer ended {second} process(es) again: {e}")
        } else {
            e
        });
    }
    out
}

/// Waits (bounded) until the server answers a query again, as after a
/// backend was killed and the postmaster restarted the others.
fn wait_accepting(c: &Server, limit: Duration) -> Result<(), String> {
    let start = Instant::now();
    loop {
        match c.sql("select 1") {
            Ok(_) => return Ok(()),
            Err(e) if start.elapsed() >= limit || crate::stop::interrupted() => {
                return Err(format!("the server did not accept queries again: {e}"));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(250)),
        }
    }
}

/// One level: a heat-up run, then a measured run of `samples × sample`
/// seconds reporting progress every sample.
fn level_run(
    c: &Server,
    mode: Mode,
    clients: u32,
    cpus: usize,
    plan: &sweep::SweepPlan,
) -> LevelOutcome {
    let threads = (clients as usize).min(cpus).max(1);
    let base = |secs: u64, progress: Option<u64>| {
        let (c_, j_, t_) = (clients.to_string(), threads.to_string(), secs.to_string());
        let mut args = vec!["-n", "-c", &c_, "-j", &j_, "-T", &t_];
        if mode == Mode::SelectOnly {
            args.push("-S");
        }
        let p_ = progress.map(|p| p.to_string());
        if let Some(p) = &p_ {
            args.extend(["-P", p.as_str()]);
        }
        c.pgbench(&args)
    };
    let mut out = LevelOutcome::default();
    out.params.insert("threads".into(), json!(threads));
    let limit = |secs: u64| Duration::from_secs(secs * 2 + 60);
    let heat = plan.heat_up.as_secs();
    if heat > 0 {
        match run_bounded(&mut base(heat, None), limit(heat)) {
            Ok(f) if f.status.is_some_and(|s| s.success()) => {}
            Ok(f) => {
                out.error = Some(why(&f, c, "heat-up"));
                return out;
            }
            Err(e) => {
                out.error = Some(format!("heat-up: {e}"));
                return out;
            }
        }
    }
    let each = plan.sample.as_secs().max(1);
    // One second more than the samples: pgbench may leave out the report
    // of an interval that ends with the run.
    let secs = each * u64::from(plan.samples) + 1;
    let start = Instant::now();
    let f = match run_bounded(&mut base(secs, Some(each)), limit(secs)) {
        Ok(f) => f,
        Err(e) => {
            out.error = Some(format!("pgbench: {e}"));
            return out;
        }
    };
    let end = Instant::now();
    let lines = parse_progress(&f.stderr);
    let mut prev = 0.0;
    for l in lines.iter().take(plan.samples as usize) {
        out.samples.push(SweepSample {
            t: l.t,
            seconds: l.t - prev,
            value: l.tps,
            latency_ns: None,
            mean_latency_ns: l.lat_ms.map(|ms| ms * 1e6),
            errors: l.failed,
        });
        prev = l.t;
    }
    if !out.samples.is_empty() {
        out.window = Some((start, end));
    }
    if !f.status.is_some_and(|s| s.success()) {
        out.error = Some(why(&f, c, "pgbench"));
    }
    out
}

/// pgbench counts whole seconds: samples of at least one.
fn whole_seconds(plan: &mut sweep::SweepPlan) {
    plan.sample = Duration::from_secs(plan.sample.as_secs_f64().round().max(1.0) as u64);
    plan.heat_up = Duration::from_secs(plan.heat_up.as_secs_f64().round() as u64);
}

/// Loads pgbench's tables anew at `scale` (`pgbench -i`).
fn load_tables(c: &Server, scale: u64) -> Result<(), String> {
    match run_bounded(
        &mut c.pgbench(&["-i", "-q", "-s", &scale.to_string()]),
        Duration::from_secs(3_600),
    ) {
        Ok(f) if f.status.is_some_and(|s| s.success()) => Ok(()),
        Ok(f) => Err(why(&f, c, "pgbench -i")),
        Err(e) => Err(format!("pgbench -i: {e}")),
    }
}

/// The database's size in bytes, as the server counts it.
fn database_bytes(c: &Server) -> Option<u64> {
    c.sql("select pg_database_size(current_database())")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Why a pgbench run failed, in words.
fn why(f: &crate::harness::reaper::Finished, c: &Server, what: &str) -> String {
    if f.timed_out {
        return format!("{what}: did not finish in time");
    }
    if f.status.is_none() {
        return format!("{what}: interrupted");
    }
    format!(
        "{what} failed: {}",
        last_lines(&format!("{}\n{}", f.stderr, c.log_tail()), 3)
    )
}

fn unsupported(params: BTreeMap<String, serde_json::Value>, why: String) -> WorkloadResult {
    WorkloadResult {
        name: PGBENCH.name.into(),
        what: PGBENCH.what.into(),
        status: crate::results::Status::Unsupported,
        message: Some(why),
        params,
        rows: Vec::new(),
        monitor: None,
    }
}

fn failed(params: BTreeMap<String, serde_json::Value>, label: &str, e: String) -> WorkloadResult {
    super::finish(
        &PGBENCH,
        params,
        vec![WorkloadRow {
            label: label.into(),
            target: None,
            params: BTreeMap::new(),
            load: None,
            phase: None,
            sweep: None,
            error: Some(e),
        }],
        Vec::new(),
    )
}

/// Makes `file` a swap area with util-linux's `mkswap`, in at most a minute.
fn mkswap(file: &std::path::Path) -> Result<(), String> {
    let o = crate::harness::reaper::run_bounded(
        std::process::Command::new("mkswap").arg(file),
        std::time::Duration::from_secs(60),
    )
    .map_err(|e| format!("mkswap (util-linux): {e}"))?;
    if !o.status.is_some_and(|s| s.success()) {
        return Err(format!("mkswap {}: {}", file.display(), o.stderr.trim()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn a_fitted_scale_loads_within_nine_tenths_of_the_free_space_or_is_none_below_ten() {
        for free in [1u64 << 30, 3 << 30, 40 << 30, 1 << 40] {
            let s = fit_scale(free).unwrap();
            assert!(space_needed(s * BYTES_PER_SCALE) <= free / 10 * 9, "{free}");
            // The next scale up would not.
            assert!(
                space_needed((s + 1) * BYTES_PER_SCALE) >= free / 10 * 9,
                "{free}"
            );
        }
        assert_eq!(fit_scale(300 << 20), None);
        assert_eq!(fit_scale(0), None);
    }

    /// A level that fails (`kill` more OOM kills counted) or succeeds, per
    /// attempt, and counts attempts.
    fn attempts(plan: &[(bool, u64)], count: &Cell<u64>, tried: &Cell<usize>) -> LevelOutcome {
        let (ok, kill) = plan[tried.get()];
        tried.set(tried.get() + 1);
        count.set(count.get() + kill);
        let mut out = LevelOutcome::default();
        if !ok {
            out.error = Some("pgbench failed: server closed the connection".into());
        }
        out
    }

    #[test]
    fn a_level_the_oom_killer_cut_short_runs_once_more_and_says_so() {
        let (count, tried) = (Cell::new(3), Cell::new(0));
        let kills = || Some(count.get());
        let out = retry_after_oom(
            kills,
            || Ok(()),
            || attempts(&[(false, 1), (true, 0)], &count, &tried),
        );
        assert_eq!(tried.get(), 2);
        assert!(out.error.is_none(), "{:?}", out.error);
        assert_eq!(out.params["oom_kills"], 1);
        let why = out.params["retried"].as_str().unwrap();
        assert!(
            why.contains("OOM killer ended 1 process") && why.contains("server closed"),
            "{why}"
        );
        // Killed again: the error names the killer.
        let (count, tried) = (Cell::new(0), Cell::new(0));
        let out = retry_after_oom(
            || Some(count.get()),
            || Ok(()),
            || attempts(&[(false, 2), (false, 1)], &count, &tried),
        );
        let e = out.error.unwrap();
        assert!(
            e.starts_with("the memory cgroup's OOM killer ended 1 process(es) again"),
            "{e}"
        );
        assert_eq!(out.params["oom_kills"], 3);
    }

    #[test]
    fn a_failure_without_an_oom_kill_or_a_server_that_does_not_return_is_not_retried() {
        let (count, tried) = (Cell::new(0), Cell::new(0));
        let out = retry_after_oom(
            || Some(count.get()),
            || Ok(()),
            || attempts(&[(false, 0), (true, 0)], &count, &tried),
        );
        assert_eq!(tried.get(), 1);
        assert_eq!(
            out.error.as_deref(),
            Some("pgbench failed: server closed the connection")
        );
        // Killed, yet the level finished: counted, not retried.
        let (count, tried) = (Cell::new(0), Cell::new(0));
        let out = retry_after_oom(
            || Some(count.get()),
            || Ok(()),
            || attempts(&[(true, 1)], &count, &tried),
        );
        assert_eq!((tried.get(), out.error.is_none()), (1, true));
        assert_eq!(out.params["oom_kills"], 1);
        assert!(!out.params.contains_key("retried"));
        // No count (an old kernel, no limit): never retried.
        let tried = Cell::new(0);
        let out = retry_after_oom(
            || None,
            || Ok(()),
            || attempts(&[(false, 1), (true, 0)], &count, &tried),
        );
        assert_eq!((tried.get(), out.error.is_some()), (1, true));
        // The server never came back: both reasons in the error.
        let (count, tried) = (Cell::new(0), Cell::new(0));
        let out = retry_after_oom(
            || Some(count.get()),
            || Err("the server did not accept queries again: timeout".into()),
            || attempts(&[(false, 1), (true, 0)], &count, &tried),
        );
        let e = out.error.unwrap();
        assert_eq!(tried.get(), 1);
        assert!(
            e.contains("OOM killer ended 1") && e.contains("did not accept"),
            "{e}"
        );
    }

    #[test]
    fn progress_lines_of_pgbench_15_and_older_parse() {
        let err = "starting vacuum...end.\n\
                   progress: 1.0 s, 9996.7 tps, lat 0.197 ms stddev 0.488, 0 failed\n\
                   progress: 2.0 s, 10755.9 tps, lat 0.185 ms stddev 0.504, 3 failed\n\
                   progress: 3.0 s, 812.5 tps, lat 2.461 ms stddev 1.020\n\
                   pgbench: error: something\n";
        let p = parse_progress(err);
        assert_eq!(p.len(), 3);
        assert_eq!(
            p[0],
            ProgressLine {
                t: 1.0,
                tps: 9996.7,
                lat_ms: Some(0.197),
                failed: 0
            }
        );
        assert_eq!(p[1].failed, 3);
        assert_eq!((p[2].tps, p[2].failed), (812.5, 0));
    }

    #[test]
    fn levels_double_up_to_twice_or_four_times_the_cpus() {
        assert_eq!(default_levels(Size::Quick, 2), vec![1.0, 2.0, 4.0]);
        assert_eq!(default_levels(Size::Full, 2), vec![1.0, 2.0, 4.0, 8.0]);
        assert_eq!(default_levels(Size::Quick, 3), vec![1.0, 2.0, 4.0, 6.0]);
        assert_eq!(
            default_levels(Size::Full, 16),
            vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
        );
    }

    #[test]
    fn a_full_sweep_of_given_levels_keeps_the_full_plans_samples() {
        let given = |sample: Option<Duration>, samples: Option<u32>| super::super::SweepOptions {
            variable: "clients".into(),
            levels: vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0],
            heat_up: None,
            sample,
            samples,
            baseline: None,
        };
        let default = client_sweep(None, Size::Full, 2);
        let asked = given(None, None);
        let full = client_sweep(Some(&asked), Size::Full, 2);
        assert_eq!((full.sample, full.samples), (FULL_SAMPLE, 3));
        assert_eq!(
            (full.sample, full.samples),
            (default.sample, default.samples)
        );
        assert_eq!(full.levels, asked.levels);
        // The user's own samples win; a quick run keeps the quick plan's.
        let own = given(Some(Duration::from_secs(5)), Some(2));
        let own = client_sweep(Some(&own), Size::Full, 2);
        assert_eq!((own.sample, own.samples), (Duration::from_secs(5), 2));
        let quick = client_sweep(Some(&asked), Size::Quick, 2);
        let quick_default = client_sweep(None, Size::Quick, 2);
        assert_eq!(quick.sample, quick_default.sample);
        assert!(quick.sample < FULL_SAMPLE);
        // Timings without levels: the default levels, timed as given.
        let timed = super::super::SweepOptions {
            variable: String::new(),
            levels: Vec::new(),
            ..given(Some(Duration::from_secs(1)), Some(1))
        };
        let timed = client_sweep(Some(&timed), Size::Quick, 2);
        assert_eq!(timed.levels, quick_default.levels);
        assert_eq!(timed.variable, "clients");
        assert_eq!((timed.sample, timed.samples), (Duration::from_secs(1), 1));
    }

    #[test]
    fn the_scale_follows_the_size() {
        assert_eq!(scale_for(160_000_000), 10);
        assert_eq!(scale_for(1), 1);
        assert_eq!(scale_for(1_600_000_000), 100);
    }
}
