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
//! `registry!` list below (it declares the module and fills [`REGISTRY`]),
//! and its `[benchmark.<name>]` table to suites/quick.toml and
//! suites/full.toml at its `quick_n` and `full_n` (a test holds them so).

use crate::ctx::Ctx;
use crate::harness::Resource;
use crate::harness::clock::Stopwatch;
use crate::harness::limits::Budget;
#[allow(unused_imports)] // used by `forker` through `super::rawclock`
use crate::harness::rawclock;
use crate::sys::Knob;

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
    bind::Bind,
    bind_fresh::BindFresh,
    fork::Fork,
    fork_static::ForkStatic,
    fork_cleanup::ForkCleanup,
    mmap::Mmap,
    mmap_touch::MmapTouch,
    manymap_open::ManymapOpen,
    manymap_mmap::ManymapMmap,
    manymap_touch::ManymapTouch,
    connect::Connect,
    httpreq::HttpReq,
    pthread::Pthread,
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
    /// n in the `quick` suite, and of the benchmark named on its own
    /// (suites/quick.toml says the same; a test holds them equal).
    pub quick_n: u64,
    /// n in the `full` suite (the seeds' sizes), and of the benchmark
    /// named on its own with `run --full` (suites/full.toml says the
    /// same; a test holds them equal).
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

    /// Limits of its own beyond the resources in [`Info::uses`] (a server
    /// process's descriptor limit, select's FD_SETSIZE), as budgets.
    fn budgets(&self, _ctx: &Ctx, _variant: Option<&str>) -> Vec<(Resource, Budget)> {
        Vec::new()
    }

    /// Starts a run of `variant` that will perform up to `n` operations:
    /// creates and warms whatever the operations need (untimed).
    fn start(&self, ctx: &Ctx, variant: Option<&str>, n: u64) -> Result<Box<dyn Run>, StartError>;
}

/// How a run's operations are spread over n.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schedule {
    /// One timed operation per item: each operation adds the item it
    /// times (socket, fork, …), so n counts 0, 1, 2, … up to the target.
    PerItem,
    /// `levels` evenly spaced values of n from 0 up to the target, each
    /// run visiting them both ways — up and then down in even-numbered
    /// runs, down and then up in odd ones —, half of a level's operations
    /// on each way (so that a drift over time, or a spell of slow
    /// operations, falls on both ends of n alike and cannot pass for
    /// growth with n); at each visit
    /// the run is resized there untimed ([`Run::resize_to`]), then the
    /// operations are timed. For operations whose cost grows with n, so
    /// that large n stay affordable.
    Levels {
        /// Values of n measured.
        levels: u64,
        /// Timed operations at each.
        per_level: u64,
    },
}

impl Schedule {
    /// Timed operations in a run aiming at `n` items.
    pub fn ops(self, n: u64) -> u64 {
        match self {
            Schedule::PerItem => n,
            Schedule::Levels { levels, per_level } => levels.min(n.max(1)) * per_level,
        }
    }

    /// For each timed operation, the n to resize to first (if any): levels
    /// up, then down, or down and then up when `peak_first` (a level's
    /// operations split between its two visits, the first taking the odd
    /// one).
    pub fn plan(self, n: u64, peak_first: bool) -> Vec<Option<u64>> {
        match self {
            Schedule::PerItem => vec![None; n as usize],
            Schedule::Levels { levels, per_level } => {
                let l = levels.min(n.max(1));
                let mut way: Vec<u64> = (0..l).map(|i| i * n / l).collect();
                if peak_first {
                    way.reverse();
                }
                let visit =
                    |target: u64, ops: u64| (0..ops).map(move |j| (j == 0).then_some(target));
                let (first, second) = (per_level.div_ceil(2), per_level / 2);
                let mut out: Vec<Option<u64>> = way.iter().flat_map(|&t| visit(t, first)).collect();
                out.extend(way.iter().rev().flat_map(|&t| visit(t, second)));
                out
            }
        }
    }
}

/// A run in progress. Dropping it releases everything it holds (closes,
/// unmaps, kills and reaps).
pub trait Run {
    /// Resources held now: the n of the next sample.
    fn held(&self) -> u64;

    /// Grows or shrinks the held resources to `n` (untimed) before the
    /// next timed operations, and lets the system settle; only
    /// [`Schedule::Levels`] benchmarks are asked to.
    fn resize_to(&mut self, _n: u64) -> Result<(), StepError> {
        Ok(())
    }

    /// Performs one operation. The timed call must be bracketed by
    /// `sw.start()` and `sw.stop()` (or measured elsewhere and given with
    /// `sw.record_ticks`).
    fn op(&mut self, sw: &mut Stopwatch) -> Result<(), StepError>;

    /// Undoes the last operation, so that n is back where it was: the
    /// profile windows (`run --why`) repeat op + undo at a fixed n. Closing
    /// the socket just made, unbinding by closing and replacing it, reaping
    /// the child just forked, unmapping the page just mapped, closing the
    /// connection just made, … The default does nothing: right for
    /// benchmarks whose operation leaves n as it was (httpreq); the harness
    /// checks `held()` either way.
    /// `sw`'s readings are discarded.
    fn undo(&mut self, _sw: &mut Stopwatch) -> Result<(), StepError> {
        Ok(())
    }
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
        StepError::Failed(anyhow::anyhow!(detail))
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
