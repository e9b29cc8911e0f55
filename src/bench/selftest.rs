//! Two benchmarks for testing the harness and `--why` itself, kept out of
//! the registry (and so out of `list` and the suites) but runnable by name:
//! `selftest-linear`, whose operation walks all n items in a named user
//! function (O(n)), and `selftest-constant`, whose operation does the same
//! fixed work at every n (O(1)).

use super::{Benchmark, Info, Run, StartError, StepError};
use crate::ctx::Ctx;
use crate::harness::Resource;
use crate::harness::clock::Stopwatch;

/// `selftest-linear`.
pub struct Linear;
/// `selftest-constant`.
pub struct Constant;

static LINEAR: Info = Info {
    name: "selftest-linear",
    n_meaning: "items in a vector",
    timed: "adding an item, then summing every item in selftest_linear_walk (O(n) user-space work)",
    uses: &[] as &[Resource],
    knobs: &[],
    quick_n: 20_000,
    full_n: 20_000,
};

static CONSTANT: Info = Info {
    name: "selftest-constant",
    n_meaning: "items in a vector",
    timed: "adding an item, then summing 4 096 fixed numbers in selftest_constant_work (O(1))",
    uses: &[] as &[Resource],
    knobs: &[],
    quick_n: 20_000,
    full_n: 20_000,
};

/// Mixes every item: the O(n) work `--why` must name. Written with
/// operators and indexing only, so that even a debug build spends the time
/// in this function and not in library helpers it calls.
#[inline(never)]
pub fn selftest_linear_walk(items: &[u64]) -> u64 {
    mix(std::hint::black_box(items))
}

/// Mixes a fixed array: the same work at every n.
#[inline(never)]
pub fn selftest_constant_work(fixed: &[u64; 4096]) -> u64 {
    mix(std::hint::black_box(&fixed[..]))
}

#[inline(always)]
fn mix(items: &[u64]) -> u64 {
    let n = items.len();
    let mut s = 0u64;
    let mut i = 0;
    while i < n {
        s ^= items[i];
        s = (s << 7) ^ (s >> 3);
        i += 1;
    }
    s
}

struct SelfRun {
    linear: bool,
    items: Vec<u64>,
    fixed: Box<[u64; 4096]>,
}

impl Run for SelfRun {
    fn held(&self) -> u64 {
        self.items.len() as u64
    }

    fn op(&mut self, sw: &mut Stopwatch) -> Result<(), StepError> {
        self.items.push(self.items.len() as u64);
        sw.start();
        let s = if self.linear {
            selftest_linear_walk(&self.items)
        } else {
            selftest_constant_work(&self.fixed)
        };
        sw.stop();
        std::hint::black_box(s);
        Ok(())
    }

    fn undo(&mut self, _sw: &mut Stopwatch) -> Result<(), StepError> {
        self.items.pop();
        Ok(())
    }
}

fn start(linear: bool, n: u64) -> Box<dyn Run> {
    Box::new(SelfRun {
        linear,
        items: Vec::with_capacity(n as usize + 1),
        fixed: Box::new([7; 4096]),
    })
}

impl Benchmark for Linear {
    fn info(&self) -> &'static Info {
        &LINEAR
    }

    /// The undo pops the item the operation pushed.
    fn downwards(&self) -> bool {
        true
    }

    fn start(
        &self,
        _ctx: &Ctx,
        _variant: Option<&str>,
        n: u64,
    ) -> Result<Box<dyn Run>, StartError> {
        Ok(start(true, n))
    }
}

impl Benchmark for Constant {
    fn info(&self) -> &'static Info {
        &CONSTANT
    }

    /// The undo pops the item the operation pushed.
    fn downwards(&self) -> bool {
        true
    }

    fn start(
        &self,
        _ctx: &Ctx,
        _variant: Option<&str>,
        n: u64,
    ) -> Result<Box<dyn Run>, StartError> {
        Ok(start(false, n))
    }
}
