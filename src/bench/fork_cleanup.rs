//! `fork-cleanup`: n children are forked (untimed), then removed one by one,
//! oldest first: kill(SIGKILL) and waitpid() until reaped. n falls as the
//! operations go on; the undo forks a child in place of the one removed,
//! so runs also time the removal on the way back up (fork, remove, fork at
//! each n), alternating which way they go first.

use super::forkproc::{Forker, Linking};
use super::{Benchmark, Info, Run, StartError, StepError};
use crate::harness::clock::{Clock, Stopwatch};
use crate::ctx::Ctx;
use crate::harness::Resource;
use crate::sys::Knob;
use anyhow::anyhow;

/// The `fork-cleanup` benchmark.
pub struct ForkCleanup;

static INFO: Info = Info {
    name: "fork-cleanup",
    n_meaning: "children left (including the one killed)",
    timed: "kill(child, SIGKILL) + waitpid() until it is reaped",
    uses: &[Resource::Processes],
    knobs: &[Knob::Processes, Knob::ProcessesPerUser],
    quick_n: 1_000,
    full_n: 10_000,
};

struct CleanupRun(Forker);

impl Benchmark for ForkCleanup {
    fn info(&self) -> &'static Info {
        &INFO
    }

    /// n falls: `start(n)` forks n children, each operation removes one.
    fn falling(&self) -> bool {
        true
    }

    /// The undo forks a child back: n rises again, one at a time.
    fn downwards(&self) -> bool {
        true
    }

    fn start(&self, ctx: &Ctx, _variant: Option<&str>, n: u64) -> Result<Box<dyn Run>, StartError> {
        let mut f = Forker::start(ctx, Linking::Dynamic)?;
        let clock: &Clock = ctx.clock();
        let mut sw = Stopwatch::new(clock);
        for _ in 0..n {
            if crate::stop::interrupted() {
                return Err(anyhow!("interrupted while forking the children to remove").into());
            }
            match f.fork_one(&mut sw) {
                Ok(()) => {}
                Err(StepError::Limit { detail, .. }) => {
                    return Err(anyhow!("forking the children to remove: {detail}").into());
                }
                Err(e) => return Err(anyhow!("forking the children to remove: {e}").into()),
            }
        }
        Ok(Box::new(CleanupRun(f)))
    }
}

impl Run for CleanupRun {
    fn held(&self) -> u64 {
        self.0.live()
    }

    fn op(&mut self, sw: &mut Stopwatch) -> Result<(), StepError> {
        self.0.kill_one(sw)
    }

    /// Forks a child in place of the one removed.
    fn undo(&mut self, sw: &mut Stopwatch) -> Result<(), StepError> {
        self.0.fork_one(sw)
    }
}
