//! Real-world workloads: whole scenarios (static web serving, …) run the
//! same way on every system. Each measures rows of throughput and latency,
//! one per configuration, into the result file's `workloads`.
//!
//! Adding a workload: a file here with a unit struct implementing
//! [`Workload`], and one line in the `registry!` list below.

pub mod bigfile;
pub mod forward;
pub mod fs;
pub mod http;
pub mod mail;
pub mod pg;

use crate::ctx::Ctx;
use crate::harness::progress::Progress;
use crate::harness::sweep;
use crate::results::{Status, WorkloadResult, WorkloadRow};
use std::collections::BTreeMap;
use std::time::Duration;

/// Static description of a workload.
#[derive(Debug)]
pub struct Info {
    /// Name used on the command line and in results.
    pub name: &'static str,
    /// What it does, in words.
    pub what: &'static str,
    /// Part of the quick suite (every workload is part of `full`).
    pub quick: bool,
    /// Runs between the run's client and server hosts (`run --host`);
    /// otherwise it measures the machine scalebench runs on, whatever
    /// the hosts.
    pub between_hosts: bool,
}

/// How big a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    /// Small: part of the quick suite.
    Quick,
    /// The seeds' sizes.
    Full,
}

/// What a workload is asked to do.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// How big.
    pub size: Size,
    /// Options of the filesystem workloads.
    pub fs: fs::FsOptions,
    /// Sweep over levels of one variable instead of measuring once.
    pub sweep: Option<SweepOptions>,
    /// Options of the pgbench workload.
    pub pg: pg::PgOptions,
    /// Options of the mail workload.
    pub mail: mail::MailOptions,
    /// bigfile: the size of each file (default 1 GB; full: larger than RAM).
    pub bigfile_bytes: Option<u64>,
    /// forward: the share of the packets sent a loss-free level may lose.
    pub forward_loss_tolerance: f64,
    /// forward: binary-search steps after the sweep's levels (`None`: the
    /// size's default, [`forward::default_search_steps`]).
    pub forward_search_steps: Option<u32>,
}

impl Options {
    /// Defaults for `size`.
    pub fn new(size: Size) -> Options {
        Options {
            size,
            fs: fs::FsOptions::default(),
            sweep: None,
            pg: pg::PgOptions::default(),
            mail: mail::MailOptions::default(),
            bigfile_bytes: None,
            forward_loss_tolerance: forward::LOSS_TOLERANCE,
            forward_search_steps: None,
        }
    }
}

/// A sweep as asked for (`run --sweep connections=1,10,100`); what is not
/// given follows the size.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepOptions {
    /// The variable (`connections`, `clients`, `sessions`).
    pub variable: String,
    /// Its levels, in the order to run them.
    pub levels: Vec<f64>,
    /// Heat-up per level (default: quick 1 s, full 10 s).
    pub heat_up: Option<Duration>,
    /// Sample length (default: quick 2 s, full 10 s).
    pub sample: Option<Duration>,
    /// Samples per level (default: quick 3, full 5).
    pub samples: Option<u32>,
    /// Baseline level (default: the lowest).
    pub baseline: Option<f64>,
}

impl SweepOptions {
    /// The harness's plan for a workload of `size` whose figure is in `unit`.
    pub fn plan(&self, size: Size, unit: &str) -> sweep::Plan {
        let (heat, sample, samples) = match size {
            Size::Quick => (1, 2, 3),
            Size::Full => (10, 10, 5),
        };
        sweep::Plan {
            variable: self.variable.clone(),
            unit: unit.to_string(),
            levels: self.levels.clone(),
            baseline: self
                .baseline
                .unwrap_or_else(|| self.levels.iter().copied().fold(f64::INFINITY, f64::min)),
            knee_on: "per-unit",
            heat_up: self.heat_up.unwrap_or(Duration::from_secs(heat)),
            samples: self.samples.unwrap_or(samples),
            sample: self.sample.unwrap_or(Duration::from_secs(sample)),
            figure_of_last: 3,
            counts_failures: false,
        }
    }
}

/// A real-world workload.
pub trait Workload: Sync {
    /// Its description.
    fn info(&self) -> &'static Info;

    /// The variables it can be swept over (`run --sweep VAR=…`); none by
    /// default.
    fn sweeps(&self) -> &'static [&'static str] {
        &[]
    }

    /// Runs it; never panics on failures (they go in the result).
    fn run(&self, ctx: &Ctx, opts: &Options, progress: &mut Progress) -> WorkloadResult;
}

macro_rules! registry {
    ($($path:path),* $(,)?) => {
        /// Every workload, in the order a suite runs them.
        pub static WORKLOADS: &[&dyn Workload] = &[$(&$path),*];
    };
}

registry! {
    http::IpStack,
    http::ShortConn,
    fs::Fs,
    fs::FsSizes,
    pg::PgBench,
    mail::Mail,
    bigfile::BigFile,
    forward::Forward,
}

/// Frees what a killed run's workloads left beyond the files in its work
/// directory `dir` (PostgreSQL's shared memory, the memory cgroup, the
/// forward workload's namespaces);
/// returns what it did.
pub fn release_stale(dir: &std::path::Path) -> Vec<String> {
    let mut v = pg::cluster::release_stale(dir);
    // The forward workload's network namespaces.
    v.extend(forward::release_stale(dir));
    // The memory cgroup of pgbench --memory-sweep is named after the run.
    let owner = std::fs::read_to_string(dir.join(crate::harness::workdir::OWNER));
    if let Some(pid) = owner.ok().and_then(|s| s.trim().parse::<u32>().ok()) {
        v.extend(crate::harness::cgroup::release(pid));
    }
    v
}

/// Looks a workload up by name.
pub fn find(name: &str) -> Option<&'static dyn Workload> {
    WORKLOADS.iter().copied().find(|w| w.info().name == name)
}

/// Whether a row measured anything: a phase, a load, or a sweep with at
/// least one level that did not fail ([`crate::results::SweepLevel::failed`]).
/// A sweep whose every level failed measured nothing.
fn measured(r: &WorkloadRow) -> bool {
    r.phase.is_some()
        || r.load.is_some()
        || r.sweep
            .as_ref()
            .is_some_and(|s| s.levels.iter().any(|l| !l.failed()))
}

/// Why every level of a sweep failed, in words: the first level's error,
/// or what failed most in it.
fn no_level_finished(sw: &crate::results::SweepStats) -> String {
    let Some(l) = sw.levels.first() else {
        return "no level was run".to_string();
    };
    let at = format!("{} {}", sw.variable, crate::analysis::units::fmt_n(l.level));
    let why = match (&l.error, l.failures.iter().max_by_key(|(_, n)| **n)) {
        (Some(e), _) => e.clone(),
        (None, Some((what, n))) => format!("nothing succeeded; {n} × {what}"),
        (None, None) => {
            let errors: u64 = l.samples.iter().map(|s| s.errors).sum();
            format!("nothing succeeded; {errors} failed")
        }
    };
    format!("every level failed ({at}: {why})")
}

/// Ends a workload: ok if any row measured, failed if none did (or
/// interrupted); the message holds `notes` and every row's error, prefixed
/// by its target where it has one.
pub(crate) fn finish(
    info: &Info,
    params: BTreeMap<String, serde_json::Value>,
    rows: Vec<WorkloadRow>,
    mut notes: Vec<String>,
) -> WorkloadResult {
    let mut rows = rows;
    for r in &mut rows {
        if let Some(e) = &mut r.error {
            *e = crate::sys::errno_words(e);
        }
    }
    let failed = !rows.iter().any(measured);
    notes.extend(rows.iter().filter_map(|r| {
        let why = match (&r.error, &r.sweep) {
            (Some(e), _) => e.clone(),
            (None, Some(sw)) if !measured(r) => no_level_finished(sw),
            _ => return None,
        };
        Some(format!(
            "{}{}: {why}",
            r.target
                .as_deref()
                .map_or(String::new(), |t| format!("{t}, ")),
            r.label
        ))
    }));
    WorkloadResult {
        name: info.name.into(),
        what: info.what.into(),
        status: if crate::harness::reaper::interrupted() {
            Status::Interrupted
        } else if failed {
            Status::Failed
        } else {
            Status::Ok
        },
        message: notes
            .into_iter()
            .reduce(|a, b| format!("{a}; {b}"))
            .map(|m| crate::sys::errno_words(&m)),
        params,
        rows,
    }
}
