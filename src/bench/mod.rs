//! The scaling micro-benchmarks: one file per benchmark, each a small
//! [`Benchmark`] implementation, listed once in [`REGISTRY`].
//!
//! A benchmark says what n is, which resources each item uses, and how to
//! start a run; a [`Run`] holds the resources, reports how many it holds and
//! performs one more operation, bracketing exactly the timed call with the
//! [`Stopwatch`] it is handed. Everything else (clock, runs, warm-up,
//! limits, reaping, progress, recording) belongs to the harness.
//!
//! Adding a benchmark: write `src/bench/<name>.rs` with a unit struct that
//! implements [`Benchmark`], and add one line `<name>::<Type>,` to the
//! `registry!` list below (it declares the module and fills [`REGISTRY`]).

use crate::harness::clock::Stopwatch;
#[allow(unused_imports)] // used by `forker` through `super::rawclock`
use crate::harness::rawclock;
use crate::harness::{Ctx, Resource};
use crate::sys::Knob;

pub(crate) mod forker;
mod forkproc;
mod manymap;

/// Declares each benchmark module and lists its type in [`REGISTRY`], in
/// the order a suite runs them: adding a benchmark is one line here.
macro_rules! registry {
    ($($module:ident :: $ty:ident),* $(,)?) => {
        $(mod $module;)*
        /// Every benchmark, in the order a suite runs them.
        pub static REGISTRY: &[&dyn Benchmark] = &[$(&$module::$ty),*];
    };
}

registry! {
    socket::Socket,
    bind::Bind,
    fork::Fork,
    fork_static::ForkStatic,
    fork_cleanup::ForkCleanup,
    mmap::Mmap,
    mmap_touch::MmapTouch,
    manymap_open::ManymapOpen,
    manymap_mmap::ManymapMmap,
    manymap_touch::ManymapTouch,
}

/// Static description of a benchmark.
#[derive(Debug)]
pub struct Info {
    /// Name used on the command line and in results.
    pub name: &'static str,
    /// What n counts.
    pub n_meaning: &'static str,
    /// What one sample times.
    pub timed: &'static str,
    /// Resources each item (each unit of n) holds.
    pub uses: &'static [Resource],
    /// Kernel tunables that matter to it (recorded with its result).
    pub knobs: &'static [Knob],
    /// n in the `quick` suite.
    pub quick_n: u64,
    /// n in the `full` suite (the seeds' sizes).
    pub full_n: u64,
}

/// Why a benchmark could not start a run.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// This system cannot run the benchmark at all.
    #[error("{0}")]
    Unsupported(String),
    /// Setting up failed.
    #[error(transparent)]
    Failed(#[from] anyhow::Error),
}

/// Why one operation did not produce a sample.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// A limit was reached: the run ends here and n is capped.
    #[error("{detail}")]
    Limit {
        /// Which resource ran out.
        resource: Resource,
        /// The failing call and errno, in words.
        detail: String,
    },
    /// ^C arrived while the operation waited.
    #[error("interrupted")]
    Interrupted,
    /// Anything else: the benchmark fails.
    #[error(transparent)]
    Failed(#[from] anyhow::Error),
}

/// One scaling benchmark.
pub trait Benchmark: Sync {
    /// Its description.
    fn info(&self) -> &'static Info;

    /// Starts a run that will perform up to `n` operations: creates and
    /// warms whatever the operations need (untimed).
    fn start(&self, ctx: &Ctx, n: u64) -> Result<Box<dyn Run>, StartError>;
}

/// A run in progress. Dropping it releases everything it holds (closes,
/// unmaps, kills and reaps).
pub trait Run {
    /// Resources held now: the n of the next sample.
    fn held(&self) -> u64;

    /// Performs one operation. The timed call must be bracketed by
    /// `sw.start()` and `sw.stop()` (or measured elsewhere and given with
    /// `sw.record_ticks`).
    fn op(&mut self, sw: &mut Stopwatch) -> Result<(), StepError>;
}

/// Looks a benchmark up by name.
pub fn find(name: &str) -> Option<&'static dyn Benchmark> {
    REGISTRY.iter().copied().find(|b| b.info().name == name)
}

/// A named group of benchmarks with their sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Suite {
    /// Everything at small n: about a minute on 2 cores.
    Quick,
    /// Everything at the seeds' sizes, 5 runs.
    Full,
}

impl Suite {
    /// Parses a suite name.
    pub fn parse(s: &str) -> Option<Suite> {
        match s {
            "quick" => Some(Suite::Quick),
            "full" => Some(Suite::Full),
            _ => None,
        }
    }

    /// The suite's name.
    pub fn name(self) -> &'static str {
        match self {
            Suite::Quick => "quick",
            Suite::Full => "full",
        }
    }

    /// n for a benchmark in this suite.
    pub fn n_for(self, info: &Info) -> u64 {
        match self {
            Suite::Quick => info.quick_n,
            Suite::Full => info.full_n,
        }
    }

    /// Default runs per benchmark.
    pub fn runs(self) -> u32 {
        5
    }
}

/// The errno of the last failed call, and its description.
pub(crate) fn last_errno() -> (i32, String) {
    let e = std::io::Error::last_os_error();
    (e.raw_os_error().unwrap_or(0), e.to_string())
}

/// Classifies a failed call: `limit_errnos` mean `resource` ran out; any
/// other errno fails the benchmark.
pub(crate) fn step_error(
    call: &str,
    held: u64,
    resource: Resource,
    limit_errnos: &[i32],
) -> StepError {
    let (errno, text) = last_errno();
    let detail = format!(
        "{call} failed with {} ({text}) at n = {held}",
        errno_name(errno)
    );
    if limit_errnos.contains(&errno) {
        StepError::Limit { resource, detail }
    } else {
        StepError::Failed(anyhow::anyhow!(detail))
    }
}

/// Symbolic name of the errno values limits produce.
pub fn errno_name(e: i32) -> String {
    let known = [
        (libc::EMFILE, "EMFILE"),
        (libc::ENFILE, "ENFILE"),
        (libc::EAGAIN, "EAGAIN"),
        (libc::ENOMEM, "ENOMEM"),
        (libc::EADDRINUSE, "EADDRINUSE"),
        (libc::EADDRNOTAVAIL, "EADDRNOTAVAIL"),
        (libc::ENOBUFS, "ENOBUFS"),
        (libc::EINTR, "EINTR"),
        (libc::EACCES, "EACCES"),
        (libc::EPERM, "EPERM"),
        (libc::ENOENT, "ENOENT"),
        (libc::EINVAL, "EINVAL"),
    ];
    known
        .iter()
        .find(|(v, _)| *v == e)
        .map(|(_, n)| n.to_string())
        .unwrap_or_else(|| format!("errno {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_and_sizes_sane() {
        let mut seen = HashSet::new();
        for b in REGISTRY {
            let i = b.info();
            assert!(seen.insert(i.name), "duplicate {}", i.name);
            assert!(i.quick_n > 0 && i.full_n >= i.quick_n, "{}", i.name);
            assert!(!i.n_meaning.is_empty() && !i.timed.is_empty());
            assert!(find(i.name).is_some());
        }
        assert!(find("no-such").is_none());
    }
}
