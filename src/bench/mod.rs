//! The scaling micro-benchmarks: one file per benchmark, each a small
//! [`Benchmark`] implementation, listed once in [`REGISTRY`].
//!
//! A benchmark says what n is, which resources each item uses, and how to
//! start a run; a [`Run`] holds the resources, reports how many it holds and
//! performs one more operation, bracketing exactly the timed call with the
//! [`Stopwatch`](crate::harness::clock::Stopwatch) it is handed. Everything else (clock, runs, warm-up,
//! limits, reaping, progress, recording) belongs to the harness.
//!
//! Adding a benchmark: write `src/bench/<name>.rs` with a unit struct that
//! implements [`Benchmark`], and add one line `<name>::<Type>,` to the
//! `registry!` list below (it declares the module and fills [`REGISTRY`]),
//! and its `[benchmark.<name>]` table to suites/quick.toml and
//! suites/full.toml at its `quick_n` and `full_n` (a test holds them so).

use crate::ctx::Ctx;
use crate::harness::Resource;
use crate::harness::limits::Budget;
#[allow(unused_imports)] // used by `forker` through `super::rawclock`
use crate::harness::rawclock;

pub use crate::harness::subject::{Info, Run, Schedule, StartError, StepError};

pub(crate) mod forker;
mod forkproc;
mod manymap;
mod netserver;
mod selftest;

/// Benchmarks that test scalebench itself: runnable by name, but not
/// listed and not in any suite.
pub static HIDDEN: &[&dyn Benchmark] = &[&selftest::Linear, &selftest::Constant];

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
    socket_threads::SocketThreads,
    bind::Bind,
    bind_fresh::BindFresh,
    bind_port::BindPort,
    fork::Fork,
    fork_static::ForkStatic,
    fork_cleanup::ForkCleanup,
    fork_maps::ForkMaps,
    mmap::Mmap,
    mmap_touch::MmapTouch,
    manymap_open::ManymapOpen,
    manymap_mmap::ManymapMmap,
    manymap_touch::ManymapTouch,
    connect::Connect,
    connect_ports::ConnectPorts,
    httpreq::HttpReq,
    pthread::Pthread,
}

/// One scaling benchmark.
pub trait Benchmark: Sync {
    /// Its description.
    fn info(&self) -> &'static Info;

    /// The variants to measure, each recorded as its own series
    /// (`connect[epoll]`); empty (the default) for a single series.
    fn variants(&self, _ctx: &Ctx) -> Vec<String> {
        Vec::new()
    }

    /// How operations are spread over n (default: one per item).
    fn schedule(&self) -> Schedule {
        Schedule::PerItem
    }

    /// Whether a [`Schedule::PerItem`] run can also be measured on the way
    /// down: true when [`Run::undo`] removes the item the last operation
    /// added and so returns the run to the state it had one item earlier,
    /// so that the operation timed at `held() = k` on the way down does
    /// the same thing as at `held() = k` on the way up. The harness then
    /// measures every run both ways, in passes up and down, timing each n
    /// once (coming down: undo, time the operation, undo), so that a cost
    /// drifting over time does not pass for a cost growing with n. False
    /// (the default) makes the harness re-time low n separately instead.
    /// For a [`falling`](Benchmark::falling) benchmark the undo adds an
    /// item back, and runs go down and up, or up and down.
    fn downwards(&self) -> bool {
        false
    }

    /// Whether n falls as a run goes on (fork-cleanup: `start` creates n
    /// items, each operation removes one), so that a run's low-n end is
    /// its last operations; `start(k)` followed by k operations then
    /// measures n = k down to 1.
    fn falling(&self) -> bool {
        false
    }

    /// Whether the C library keeps mappings a run frees for reuse (glibc
    /// caches the stacks of joined threads): mappings left after the run
    /// are then not a leak of scalebench's.
    fn library_keeps_mappings(&self) -> bool {
        false
    }

    /// Why the slowest sample at each n matters as much as the median
    /// (`socket-threads`: the one socket() that grows the descriptor
    /// table), when it does: recorded with the series, so that reports
    /// show its maximum per n beside the median. `None` (the default):
    /// the median tells.
    fn max_matters(&self) -> Option<&'static str> {
        None
    }

    /// The benchmark this one is a variant of, to be drawn and compared
    /// with (`fork-static` of `fork`: the seeds' finding that a static
    /// binary forks faster); `None` (the default) for the others.
    fn pairs_with(&self) -> Option<&'static str> {
        None
    }

    /// Limits of its own beyond the resources in [`Info::uses`] (a server
    /// process's descriptor limit, select's FD_SETSIZE), as budgets.
    fn budgets(&self, _ctx: &Ctx, _variant: Option<&str>) -> Vec<(Resource, Budget)> {
        Vec::new()
    }

    /// Starts a run of `variant` that will perform up to `n` operations:
    /// creates and warms whatever the operations need (untimed).
    fn start(&self, ctx: &Ctx, variant: Option<&str>, n: u64) -> Result<Box<dyn Run>, StartError>;
}

/// Looks a benchmark up by name (the hidden ones too).
pub fn find(name: &str) -> Option<&'static dyn Benchmark> {
    REGISTRY
        .iter()
        .chain(HIDDEN)
        .copied()
        .find(|b| b.info().name == name)
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
    step_error_for(call, held, resource, limit_errnos, last_errno().0)
}

/// [`step_error`] for a call that returns its error (`pthread_create`)
/// instead of setting errno.
pub(crate) fn step_error_for(
    call: &str,
    held: u64,
    resource: Resource,
    limit_errnos: &[i32],
    errno: i32,
) -> StepError {
    let text = std::io::Error::from_raw_os_error(errno).to_string();
    let detail = format!(
        "{call} failed with {} ({text}) at n = {held}",
        errno_name(errno)
    );
    if limit_errnos.contains(&errno) {
        StepError::Limit { resource, detail }
    } else {
        StepError::from(anyhow::anyhow!(detail))
    }
}

pub use crate::sys::errno_name;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn level_schedules_spread_n_evenly() {
        let s = Schedule::Levels {
            levels: 4,
            per_level: 3,
        };
        assert_eq!(s.ops(100), 12);
        let p = s.plan(100, false);
        assert_eq!(p.len(), 12);
        // Up with two operations a level, then down with one.
        let visits: Vec<u64> = p.iter().flatten().copied().collect();
        assert_eq!(visits, vec![0, 25, 50, 75, 75, 50, 25, 0]);
        assert_eq!(p.iter().filter(|x| x.is_none()).count(), 4);
        assert_eq!(p[..3], [Some(0), None, Some(25)]);
        let p = s.plan(100, true);
        let visits: Vec<u64> = p.iter().flatten().copied().collect();
        assert_eq!(visits, vec![75, 50, 25, 0, 0, 25, 50, 75]);
        assert_eq!(Schedule::PerItem.plan(3, true), vec![None, None, None]);
        assert_eq!(s.ops(2), 6, "never more levels than items");
    }

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
