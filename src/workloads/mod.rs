//! Real-world workloads: whole scenarios (static web serving, …) run the
//! same way on every system. Each measures rows of throughput and latency,
//! one per configuration, into the result file's `workloads`.
//!
//! Adding a workload: a file here with a unit struct implementing
//! [`Workload`], and one line in the `registry!` list below.

pub mod fs;
pub mod http;

use crate::harness::Ctx;
use crate::harness::progress::Progress;
use crate::results::{Status, WorkloadResult, WorkloadRow};
use std::collections::BTreeMap;

/// Static description of a workload.
#[derive(Debug)]
pub struct Info {
    /// Name used on the command line and in results.
    pub name: &'static str,
    /// What it does, in words.
    pub what: &'static str,
    /// Part of the quick suite (every workload is part of `full`).
    pub quick: bool,
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// How big.
    pub size: Size,
    /// Options of the filesystem workloads.
    pub fs: fs::FsOptions,
}

impl Options {
    /// Defaults for `size`.
    pub fn new(size: Size) -> Options {
        Options {
            size,
            fs: fs::FsOptions::default(),
        }
    }
}

/// A real-world workload.
pub trait Workload: Sync {
    /// Its description.
    fn info(&self) -> &'static Info;

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
}

/// Looks a workload up by name.
pub fn find(name: &str) -> Option<&'static dyn Workload> {
    WORKLOADS.iter().copied().find(|w| w.info().name == name)
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
    let failed = rows.iter().all(|r| r.phase.is_none() && r.load.is_none());
    notes.extend(rows.iter().filter_map(|r| {
        r.error.as_ref().map(|e| {
            format!(
                "{}{}: {e}",
                r.target
                    .as_deref()
                    .map_or(String::new(), |t| format!("{t}, ")),
                r.label
            )
        })
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
        message: notes.into_iter().reduce(|a, b| format!("{a}; {b}")),
        params,
        rows,
    }
}
