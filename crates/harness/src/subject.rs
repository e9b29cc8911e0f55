//! What a benchmark gives the series engine ([`crate::series`]): its
//! description, how its operations are spread over n, a run to time, and
//! why a run could not start or an operation could not be timed. A
//! benchmark of the binary is bound to the context it runs in (its
//! variant, its work directory, its hosts) as a [`Subject`].

use crate::Resource;
use crate::clock::Stopwatch;
use crate::limits::Budget;
use sys::Knob;

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

/// A benchmark's own error, kept whole with its causes.
pub type Cause = Box<dyn std::error::Error + Send + Sync>;

/// Why a benchmark could not start a run.
///
/// Not itself a [`std::error::Error`]: any error converts into it with `?`
/// (kept whole as [`StartError::Failed`]), as into `anyhow::Error`.
#[derive(Debug)]
pub enum StartError {
    /// This system cannot run the benchmark at all.
    Unsupported(String),
    /// Setting up failed.
    Failed(Cause),
}

/// Why one operation did not produce a sample.
///
/// Not itself a [`std::error::Error`]: any error converts into it with `?`
/// (kept whole as [`StepError::Failed`]).
#[derive(Debug)]
pub enum StepError {
    /// A limit was reached: the run ends here and n is capped.
    Limit {
        /// Which resource ran out.
        resource: Resource,
        /// The failing call and errno, in words.
        detail: String,
    },
    /// ^C arrived while the operation waited.
    Interrupted,
    /// Anything else: the benchmark fails.
    Failed(Cause),
}

/// A benchmark's error in words: its message, then each of its causes,
/// joined by `: ` (the result file's `error`).
pub fn words(e: &(dyn std::error::Error + 'static)) -> String {
    sys::error_words(e)
}

impl<E: Into<Cause>> From<E> for StartError {
    fn from(e: E) -> StartError {
        StartError::Failed(e.into())
    }
}

impl<E: Into<Cause>> From<E> for StepError {
    fn from(e: E) -> StepError {
        StepError::Failed(e.into())
    }
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartError::Unsupported(why) => f.write_str(why),
            StartError::Failed(e) => e.fmt(f),
        }
    }
}

impl std::fmt::Display for StepError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StepError::Limit { detail, .. } => f.write_str(detail),
            StepError::Interrupted => f.write_str("interrupted"),
            StepError::Failed(e) => e.fmt(f),
        }
    }
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

    /// [`Schedule::plan`] in one ascending pass (`run --order up`): each
    /// level once, with all its operations.
    pub fn plan_up(self, n: u64) -> Vec<Option<u64>> {
        match self {
            Schedule::PerItem => vec![None; n as usize],
            Schedule::Levels { levels, per_level } => {
                let l = levels.min(n.max(1));
                (0..l)
                    .flat_map(|i| (0..per_level).map(move |j| (j == 0).then_some(i * n / l)))
                    .collect()
            }
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

/// A benchmark bound to what it runs in (its variant and context): what
/// the series engine times. The binary's benchmarks are bound to their
/// context by `run::series`; the engine knows nothing of it.
pub trait Subject {
    /// Its description.
    fn info(&self) -> &'static Info;

    /// How operations are spread over n.
    fn schedule(&self) -> Schedule;

    /// Whether a [`Schedule::PerItem`] run can also be measured on the
    /// way down (its undo returns the run to the state one item earlier).
    fn downwards(&self) -> bool;

    /// Whether n falls as a run goes on (each operation removes an item).
    fn falling(&self) -> bool;

    /// Limits of its own beyond the resources in [`Info::uses`], as
    /// budgets.
    fn budgets(&self) -> Vec<(Resource, Budget)>;

    /// Why the slowest sample at each n matters as much as the median,
    /// when it does (recorded with the series: `max_matters`).
    fn max_matters(&self) -> Option<&'static str> {
        None
    }

    /// The series this one is drawn and compared with, when it is a
    /// variant of another (`fork-static` of `fork`): recorded as
    /// `pairs_with`.
    fn pairs_with(&self) -> Option<&'static str> {
        None
    }

    /// Starts a run that will perform up to `n` operations.
    fn start(&self, n: u64) -> Result<Box<dyn Run>, StartError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_of_any_kind_is_kept_whole_with_its_causes() {
        #[derive(Debug, thiserror::Error)]
        #[error("reading the helper's reply")]
        struct Outer(#[source] std::io::Error);
        let e: StepError = Outer(std::io::Error::other("pipe closed")).into();
        let StepError::Failed(cause) = e else {
            panic!("{e}")
        };
        assert_eq!(words(&*cause), "reading the helper's reply: pipe closed");
        let e: StartError = "no helper".into();
        assert_eq!(e.to_string(), "no helper");
    }
}
