//! `mmap-touch`: the first read of one byte of a page mapped by the `mmap`
//! set-up (a page fault that maps a cached page), with n pages of the same
//! kind already faulted in. All n mappings exist before the first sample.

use super::mmap::PageMaps;
use super::{Benchmark, Info, Run, StartError, StepError};
use crate::harness::clock::Stopwatch;
use crate::ctx::Ctx;
use crate::harness::Resource;
use crate::sys::Knob;

/// The `mmap-touch` benchmark.
pub struct MmapTouch;

static INFO: Info = Info {
    name: "mmap-touch",
    n_meaning: "pages already faulted in (all n pages are mapped)",
    timed: "first read of one byte of a mapped page (page fault on a cached file page)",
    uses: &[Resource::Mappings],
    knobs: &[Knob::Mappings],
    quick_n: 10_000,
    full_n: 25_600,
};

struct TouchRun {
    maps: PageMaps,
    touched: usize,
}

/// Measured both ways ([`Benchmark::downwards`]): the undo maps the page
/// touched last again over itself ([`super::mmap::remap_untouched`]), so
/// it is mapped and untouched as before its touch. What stays is the
/// page-table page its first touch allocated, if its neighbours still use
/// it: one touch in 512 (4 KB pages) pays for one on the way up and none
/// on the way down, the same at every n.
impl Benchmark for MmapTouch {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn downwards(&self) -> bool {
        true
    }

    fn start(&self, ctx: &Ctx, _variant: Option<&str>, n: u64) -> Result<Box<dyn Run>, StartError> {
        let mut maps = PageMaps::open(ctx, n)?;
        for _ in 0..n {
            maps.map_next(None)
                .map_err(|e| anyhow::anyhow!("mapping the pages to touch: {e}"))?;
        }
        Ok(Box::new(TouchRun { maps, touched: 0 }))
    }
}

impl Run for TouchRun {
    fn held(&self) -> u64 {
        self.touched as u64
    }

    fn op(&mut self, sw: &mut Stopwatch) -> Result<(), StepError> {
        super::mmap::touch(self.maps.maps[self.touched], sw);
        self.touched += 1;
        Ok(())
    }

    fn undo(&mut self, _sw: &mut Stopwatch) -> Result<(), StepError> {
        if self.touched > 0 {
            self.touched -= 1;
            self.maps.remap(self.touched)?;
        }
        Ok(())
    }
}
