//! `fork-static`: the `fork` benchmark done by the same helper linked
//! statically (`-C target-feature=+crt-static`, built by `build.rs`). The
//! seeds found static linking about halves fork latency.

use super::fork::ForkRun;
use super::forkproc::{Forker, Linking};
use super::{Benchmark, Info, Run, StartError};
use crate::ctx::Ctx;
use crate::harness::Resource;
use crate::sys::Knob;

/// The `fork-static` benchmark.
pub struct ForkStatic;

static INFO: Info = Info {
    name: "fork-static",
    n_meaning: "live children",
    timed: "fork() until the parent has read the child's byte (statically linked forker)",
    uses: &[Resource::Processes],
    knobs: &[Knob::Processes, Knob::ProcessesPerUser],
    quick_n: 1_000,
    full_n: 10_000,
};

impl Benchmark for ForkStatic {
    fn info(&self) -> &'static Info {
        &INFO
    }

    /// As `fork`: the undo kills the newest child.
    fn downwards(&self) -> bool {
        true
    }

    /// The seeds' finding is the ratio of the two.
    fn pairs_with(&self) -> Option<&'static str> {
        Some("fork")
    }

    fn start(&self, ctx: &Ctx, _variant: Option<&str>, _n: u64) -> Result<Box<dyn Run>, StartError> {
        Ok(Box::new(ForkRun(Forker::start(ctx, Linking::Static)?)))
    }
}
