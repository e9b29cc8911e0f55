//! Real-world workloads: whole scenarios (static web serving, …) run the
//! same way on every system. Each measures rows of throughput and latency,
//! one per configuration, into the result file's `workloads`.
//!
//! Adding a workload: a file here with a unit struct implementing
//! [`Workload`], and one line in the `registry!` list below.

pub mod http;

use crate::harness::Ctx;
use crate::harness::progress::Progress;
use crate::results::WorkloadResult;

/// Static description of a workload.
#[derive(Debug)]
pub struct Info {
    /// Name used on the command line and in results.
    pub name: &'static str,
    /// What it does, in words.
    pub what: &'static str,
}

/// How big a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    /// Small: part of the quick suite.
    Quick,
    /// The seeds' sizes.
    Full,
}

/// A real-world workload.
pub trait Workload: Sync {
    /// Its description.
    fn info(&self) -> &'static Info;

    /// Runs it; never panics on failures (they go in the result).
    fn run(&self, ctx: &Ctx, size: Size, progress: &mut Progress) -> WorkloadResult;
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
}

/// Looks a workload up by name.
pub fn find(name: &str) -> Option<&'static dyn Workload> {
    WORKLOADS.iter().copied().find(|w| w.info().name == name)
}
