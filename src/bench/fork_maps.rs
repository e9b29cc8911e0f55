//! `fork-maps`: fork() of a process that holds n mappings. The forking
//! process is the small fork helper of `fork` (`forkproc.rs`), which maps
//! n anonymous pages of its own (untimed, one mmap() each, with a free
//! page between each two and protections alternating between read-only
//! and read-write, so that no page merges with a neighbour into one
//! region: n mappings are n regions the kernel must copy).
//! The time runs, as for `fork`, from fork() until the helper has read the
//! byte the new child wrote to a pipe; the child is then killed and reaped
//! outside the time, so that its exit (tearing down its copy of the n
//! mappings) is never inside a sample, and no children pile up: n counts
//! mappings only.
//!
//! Expected: O(n) on every kernel — fork copies the parent's address space
//! region by region. What changes between kernels is the slope: Linux 6.8
//! duplicates the whole maple tree of mappings at once (`__mt_dup`, in
//! "fork: use __mt_dup() to duplicate maple tree in dup_mmap()") instead
//! of inserting each region into the child's tree one by one, and 6.1
//! (the maple tree's arrival, replacing the red-black tree and its list)
//! changed it before. The pages are never touched, so no page table is
//! copied: the slope is the regions' own.
//!
//! n takes 40 evenly spaced values per run, 6 forks at each, both ways
//! (every fork costs O(n), so timing every n would make a run O(n²)).

use super::forkproc::{Forker, Linking};
use super::{Benchmark, Info, Run, Schedule, StartError, StepError};
use crate::ctx::Ctx;
use crate::harness::Resource;
use crate::harness::clock::Stopwatch;
use crate::sys::Knob;

/// The `fork-maps` benchmark.
pub struct ForkMaps;

static INFO: Info = Info {
    name: "fork-maps",
    n_meaning: "mappings the forking process holds (one page each, none merged)",
    timed: "fork() until the parent has read the byte the new child wrote to a pipe; the child is \
            killed and reaped untimed",
    uses: &[Resource::Mappings],
    knobs: &[Knob::Mappings, Knob::Processes],
    quick_n: 5_000,
    full_n: 20_000,
};

/// The values of n measured per run, and forks at each.
const LEVELS: Schedule = Schedule::Levels {
    levels: 40,
    per_level: 6,
};

/// A run: the helper, its mappings and (between an op's fork and its
/// reaping) one child.
struct ForkMapsRun(Forker);

impl Benchmark for ForkMaps {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn schedule(&self) -> Schedule {
        LEVELS
    }

    fn start(&self, ctx: &Ctx, _variant: Option<&str>, _n: u64) -> Result<Box<dyn Run>, StartError> {
        Ok(Box::new(ForkMapsRun(Forker::start(ctx, Linking::Dynamic)?)))
    }
}

impl Run for ForkMapsRun {
    fn held(&self) -> u64 {
        self.0.mapped()
    }

    fn resize_to(&mut self, n: u64) -> Result<(), StepError> {
        self.0.map_to(n)
    }

    /// One timed fork, then the child killed and reaped (untimed): the
    /// helper is left as it was, holding its n mappings and no child.
    fn op(&mut self, sw: &mut Stopwatch) -> Result<(), StepError> {
        self.0.fork_one(sw)?;
        self.0.reap_newest()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::clock::Clock;
    use crate::results::TimerKind;

    #[test]
    fn the_helper_holds_the_mappings_it_is_asked_for_and_forks_over_them() {
        let clock = Clock::new(TimerKind::Monotonic).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let ctx = Ctx::new(dir.path(), &clock);
        let mut run = match ForkMaps.start(&ctx, None, 300) {
            Ok(r) => r,
            Err(StartError::Unsupported(why)) if cfg!(not(target_os = "linux")) => {
                sys::say!("{why}");
                return;
            }
            Err(e) => panic!("{e}"),
        };
        let mut sw = Stopwatch::new(&clock);
        for n in [0, 300, 120, 0] {
            run.resize_to(n).unwrap();
            assert_eq!(run.held(), n);
            for _ in 0..2 {
                run.op(&mut sw).unwrap();
                let ns = sw.take_ns().unwrap();
                assert!(ns > 1_000 && ns < 1_000_000_000, "n = {n}: {ns} ns");
                assert_eq!(run.held(), n, "a fork leaves n as it was");
            }
        }
    }
}
