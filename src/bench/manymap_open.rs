//! `manymap-open`: open() of one small cached file with n files of the
//! tree already open (10 000 files, 100 per directory, at the seeds' size).

use super::manymap::{Opened, Tree};
use super::{Benchmark, Info, Run, StartError, StepError};
use crate::harness::clock::Stopwatch;
use crate::ctx::Ctx;
use crate::harness::Resource;
use crate::sys::Knob;

/// The `manymap-open` benchmark.
pub struct ManymapOpen;

static INFO: Info = Info {
    name: "manymap-open",
    n_meaning: "files held open",
    timed: "open(O_RDONLY) of a cached ~150-byte file, 100 files per directory",
    uses: &[Resource::Descriptors],
    knobs: &[Knob::FilesSystem, Knob::FilesPerProcess],
    quick_n: 5_000,
    full_n: 10_000,
};

struct OpenRun(Opened);

impl Benchmark for ManymapOpen {
    fn info(&self) -> &'static Info {
        &INFO
    }

    /// Closing the file opened last; the next open() opens it again.
    fn downwards(&self) -> bool {
        true
    }

    fn start(&self, ctx: &Ctx, _variant: Option<&str>, n: u64) -> Result<Box<dyn Run>, StartError> {
        Ok(Box::new(OpenRun(Opened::new(Tree::ensure(ctx, n)?))))
    }
}

impl Run for OpenRun {
    fn held(&self) -> u64 {
        self.0.fds.len() as u64
    }

    fn op(&mut self, sw: &mut Stopwatch) -> Result<(), StepError> {
        self.0.open_next(Some(sw))
    }

    fn undo(&mut self, _sw: &mut Stopwatch) -> Result<(), StepError> {
        self.0.close_last();
        Ok(())
    }
}
