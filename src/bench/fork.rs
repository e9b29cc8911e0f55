//! `fork`: fork() with n children alive; the child writes one byte into a
//! pipe and waits, and the time runs until the parent has read the byte —
//! fork itself and the scheduler getting the child to run. The forking
//! process is the small dynamically linked helper (see `forkproc.rs`).

use super::forkproc::{Forker, Linking};
use super::{Benchmark, Info, Run, StartError, StepError};
use crate::harness::clock::Stopwatch;
use crate::ctx::Ctx;
use crate::harness::Resource;
use crate::sys::Knob;

/// The `fork` benchmark.
pub struct Fork;

static INFO: Info = Info {
    name: "fork",
    n_meaning: "live children",
    timed: "fork() until the parent has read the byte the new child wrote to a pipe (dynamically linked forker)",
    uses: &[Resource::Processes],
    knobs: &[Knob::Processes, Knob::ProcessesPerUser],
    quick_n: 1_000,
    full_n: 10_000,
};

/// A run of either fork benchmark: the helper and its children.
pub(crate) struct ForkRun(pub(crate) Forker);

impl Run for ForkRun {
    fn held(&self) -> u64 {
        self.0.live()
    }

    fn op(&mut self, sw: &mut Stopwatch) -> Result<(), StepError> {
        self.0.fork_one(sw)
    }

    /// Kills and reaps the newest child: the children left are those of
    /// one fork earlier.
    fn undo(&mut self, sw: &mut Stopwatch) -> Result<(), StepError> {
        self.0.kill_newest(sw)
    }
}

impl Benchmark for Fork {
    fn info(&self) -> &'static Info {
        &INFO
    }

    /// The undo kills the child the last fork made, so runs are measured
    /// both ways.
    fn downwards(&self) -> bool {
        true
    }

    fn start(&self, ctx: &Ctx, _variant: Option<&str>, _n: u64) -> Result<Box<dyn Run>, StartError> {
        Ok(Box::new(ForkRun(Forker::start(ctx, Linking::Dynamic)?)))
    }
}
