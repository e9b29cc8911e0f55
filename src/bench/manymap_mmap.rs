//! `manymap-mmap`: mmap() of a whole small file (one page) with n such
//! files already mapped; all n files are opened first (untimed).

use super::manymap::{Opened, Tree};
use super::{Benchmark, Info, Run, StartError, StepError};
use crate::harness::clock::Stopwatch;
use crate::ctx::Ctx;
use crate::harness::Resource;
use crate::sys::Knob;

/// The `manymap-mmap` benchmark.
pub struct ManymapMmap;

static INFO: Info = Info {
    name: "manymap-mmap",
    n_meaning: "small files mapped",
    timed: "mmap(PROT_READ, MAP_SHARED) of a whole open ~150-byte file",
    uses: &[Resource::Descriptors, Resource::Mappings],
    knobs: &[Knob::FilesPerProcess, Knob::Mappings],
    quick_n: 5_000,
    full_n: 10_000,
};

struct MapRun(Opened);

impl Benchmark for ManymapMmap {
    fn info(&self) -> &'static Info {
        &INFO
    }

    /// Unmapping the file mapped last; the next mmap() maps it again.
    fn downwards(&self) -> bool {
        true
    }

    fn start(&self, ctx: &Ctx, _variant: Option<&str>, n: u64) -> Result<Box<dyn Run>, StartError> {
        let mut o = Opened::new(Tree::ensure(ctx, n)?);
        o.open_all()?;
        Ok(Box::new(MapRun(o)))
    }
}

impl Run for MapRun {
    fn held(&self) -> u64 {
        self.0.maps.len() as u64
    }

    fn op(&mut self, sw: &mut Stopwatch) -> Result<(), StepError> {
        self.0.map_next(Some(sw))
    }

    fn undo(&mut self, _sw: &mut Stopwatch) -> Result<(), StepError> {
        self.0.unmap_last();
        Ok(())
    }
}
