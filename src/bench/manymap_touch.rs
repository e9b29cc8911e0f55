//! `manymap-touch`: the first read of one byte of a mapped small file (a
//! page fault, unless the OS mapped the page at mmap time), with n files
//! already touched; all n files are opened and mapped first (untimed).

use super::manymap::{Opened, Tree};
use super::{Benchmark, Info, Run, StartError, StepError};
use crate::harness::clock::Stopwatch;
use crate::ctx::Ctx;
use crate::harness::Resource;
use crate::sys::Knob;

/// The `manymap-touch` benchmark.
pub struct ManymapTouch;

static INFO: Info = Info {
    name: "manymap-touch",
    n_meaning: "mapped small files already touched (all n are mapped)",
    timed: "first read of one byte of a mapped ~150-byte file",
    uses: &[Resource::Descriptors, Resource::Mappings],
    knobs: &[Knob::FilesPerProcess, Knob::Mappings],
    quick_n: 5_000,
    full_n: 10_000,
};

struct TouchRun {
    files: Opened,
    touched: usize,
}

/// Measured both ways ([`Benchmark::downwards`]), as `mmap-touch`: the
/// undo maps the file touched last again over itself, untouched.
impl Benchmark for ManymapTouch {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn downwards(&self) -> bool {
        true
    }

    fn start(&self, ctx: &Ctx, _variant: Option<&str>, n: u64) -> Result<Box<dyn Run>, StartError> {
        let mut files = Opened::new(Tree::ensure(ctx, n)?);
        files.open_all()?;
        files.map_all()?;
        Ok(Box::new(TouchRun { files, touched: 0 }))
    }
}

impl Run for TouchRun {
    fn held(&self) -> u64 {
        self.touched as u64
    }

    fn op(&mut self, sw: &mut Stopwatch) -> Result<(), StepError> {
        super::mmap::touch(self.files.maps[self.touched], sw);
        self.touched += 1;
        Ok(())
    }

    fn undo(&mut self, _sw: &mut Stopwatch) -> Result<(), StepError> {
        if self.touched > 0 {
            self.touched -= 1;
            let i = self.touched;
            super::mmap::remap_untouched(
                self.files.maps[i],
                super::manymap::FILE_BYTES,
                self.files.fds[i],
                0,
                i as u64,
            )?;
        }
        Ok(())
    }
}
