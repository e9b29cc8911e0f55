//! A benchmark bound to the context it runs in, for the series engine
//! ([`crate::harness::series`]): the engine times runs, warms up and
//! records; this only binds a [`Benchmark`] to its [`Ctx`] and variant.

use crate::bench::{Benchmark, Info, Run, Schedule, StartError};
use crate::ctx::Ctx;
use crate::harness::limits::Budget;
use crate::harness::progress::Progress;
use crate::harness::series::{Setting, run_series};
use crate::harness::{Resource, subject::Subject};
use crate::results::BenchResult;

pub use crate::harness::series::{
    AutoRuns, DECIDE_MAX, DECIDE_MIN, DECIDE_SPLIT, SeriesPlan, TimeShare, judging_mappings,
};

/// A benchmark, its variant and its context: what the engine times.
struct Bound<'a> {
    bench: &'a dyn Benchmark,
    variant: Option<&'a str>,
    ctx: &'a Ctx<'a>,
}

impl Subject for Bound<'_> {
    fn info(&self) -> &'static Info {
        self.bench.info()
    }
    fn schedule(&self) -> Schedule {
        self.bench.schedule()
    }
    fn downwards(&self) -> bool {
        self.bench.downwards()
    }
    fn falling(&self) -> bool {
        self.bench.falling()
    }
    fn budgets(&self) -> Vec<(Resource, Budget)> {
        self.bench.budgets(self.ctx, self.variant)
    }
    fn max_matters(&self) -> Option<&'static str> {
        self.bench.max_matters()
    }
    fn pairs_with(&self) -> Option<&'static str> {
        self.bench.pairs_with()
    }
    fn start(&self, n: u64) -> Result<Box<dyn Run>, StartError> {
        self.bench.start(self.ctx, self.variant, n)
    }
}

/// Runs one series of `bench` (`variant`, if it has variants) in `ctx`
/// according to `plan` with the harness's series engine
/// ([`run_series`]): on the context's clock, pinned where it pins.
pub fn run_benchmark(
    bench: &dyn Benchmark,
    variant: Option<&str>,
    plan: SeriesPlan,
    ctx: &Ctx,
    progress: &mut Progress,
) -> BenchResult {
    let bound = Bound {
        bench,
        variant,
        ctx,
    };
    let setting = Setting {
        clock: ctx.clock(),
        pin: ctx.pin(),
    };
    run_series(&bound, variant, plan, setting, progress)
}
