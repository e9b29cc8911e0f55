//! Profile windows (`run --why`, `why`): the harness starts a fresh run of
//! a benchmark, holds n at the first decile and then at the largest n, and
//! at each repeats the timed operation and its undo for a fixed time while
//! a sampling profiler records the call stacks of every process of the
//! benchmark. The windows are separate from the timed runs and never
//! disturb their numbers.

use crate::analysis::stacks::{Clock, Window, compare};
use crate::bench::{Benchmark, Run, Schedule, StepError};
use crate::ctx::Ctx;
use crate::harness::clock::Stopwatch;
use crate::harness::profiler::{self, ATTACH_DELAY, Profiler};
use crate::results::StackProfile;
use crate::stop::interrupted;
use std::time::{Duration, Instant};

/// Options of the profile windows.
#[derive(Debug, Clone, PartialEq)]
pub struct WhyOptions {
    /// Length of each window.
    pub seconds: f64,
    /// The profiler's program instead of the default (`perf`, `dtrace`).
    pub profiler_cmd: Option<String>,
    /// Whether this system's clock counts instructions (a guest under
    /// QEMU's -icount, as its host said in the run request or on its
    /// kernel command line): the windows' costs are said in instructions.
    pub instructions: bool,
}

impl Default for WhyOptions {
    fn default() -> Self {
        WhyOptions {
            seconds: 2.0,
            profiler_cmd: None,
            instructions: false,
        }
    }
}

/// A profile that could not be made, saying why.
fn failed(why: String) -> StackProfile {
    StackProfile {
        error: Some(why),
        ..StackProfile::default()
    }
}

/// Moves a run to `n` (untimed): operations for per-item benchmarks (which
/// add an item, or remove one, like fork-cleanup), a resize for levelled
/// ones.
fn reach(run: &mut dyn Run, schedule: Schedule, n: u64, sw: &mut Stopwatch) -> Result<(), String> {
    match schedule {
        Schedule::PerItem => {
            while run.held() != n {
                if interrupted() {
                    return Err("interrupted".into());
                }
                let before = run.held().abs_diff(n);
                run.op(sw).map_err(|e| format!("reaching n = {n}: {e}"))?;
                let _ = sw.take_ns();
                if run.held().abs_diff(n) >= before {
                    return Err(format!(
                        "cannot reach n = {n} from {} with this benchmark's operation",
                        run.held()
                    ));
                }
            }
            Ok(())
        }
        Schedule::Levels { .. } => run
            .resize_to(n)
            .map_err(|e| format!("resizing to n = {n}: {e}")),
    }
}

/// One window at the run's current n.
fn window(
    run: &mut dyn Run,
    p: &dyn Profiler,
    opts: &WhyOptions,
    ctx: &Ctx,
    sw: &mut Stopwatch,
) -> Result<Window, String> {
    let n = run.held();
    let dir = tempfile::Builder::new()
        .prefix("profile-")
        .tempdir_in(ctx.workdir())
        .map_err(|e| format!("a directory for the profiler: {e}"))?;
    let length = Duration::from_secs_f64(opts.seconds);
    // At most: attaching, the window, and a generous margin; the
    // recording is stopped as soon as the window ends.
    let mut rec = p.start(
        &profiler::process_tree(),
        ATTACH_DELAY + length + Duration::from_secs(30),
        dir.path(),
    )?;
    rec.ready()?;
    let start = Instant::now();
    let mut ops = 0u64;
    while start.elapsed() < length && !interrupted() {
        let step = run.op(sw).and_then(|()| {
            let _ = sw.take_ns();
            run.undo(sw)
        });
        let _ = sw.take_ns();
        match step {
            Ok(()) => {}
            Err(StepError::Interrupted) => break,
            Err(e) => return Err(format!("at n = {n}: {e}")),
        }
        if run.held() != n {
            return Err(format!(
                "the operation's undo does not restore n (held {} after op + undo at n = {n})",
                run.held()
            ));
        }
        ops += 1;
    }
    let seconds = start.elapsed().as_secs_f64();
    rec.stop();
    let samples = rec.finish()?;
    Ok(Window {
        n,
        seconds,
        ops,
        samples,
    })
}

/// Profiles `bench` (`variant`) at the first decile of `n` and at `n` —
/// at `n - 1` when a limit `capped` the runs at `n`, since the window's
/// operation needs room for one more item. Never fails: a profile that
/// cannot be made says why in its `error`.
pub fn profile(
    bench: &dyn Benchmark,
    variant: Option<&str>,
    ctx: &Ctx,
    n: u64,
    capped: bool,
    opts: &WhyOptions,
) -> StackProfile {
    let p = match profiler::detect(opts.profiler_cmd.as_deref()) {
        Ok(p) => p,
        Err(e) => return failed(e),
    };
    let n = if capped { n.saturating_sub(1) } else { n };
    if n < 2 {
        return failed(format!("n = {n} is too small for a low and a high window"));
    }
    let low_n = (n / 10).max(1);
    // On the CPU the timed runs used.
    let _pin = ctx
        .pin()
        .and_then(|cpu| crate::sys::PinGuard::new(cpu).ok());
    // One item more than n: at n the window's operation adds one before
    // its undo takes it away.
    let mut run = match bench.start(ctx, variant, n + 1) {
        Ok(r) => r,
        Err(e) => return failed(format!("starting a run to profile: {e}")),
    };
    let mut sw = Stopwatch::new(ctx.clock());
    let schedule = bench.schedule();
    let result = (|| -> Result<StackProfile, String> {
        // A benchmark whose operation removes items (fork-cleanup) starts
        // full and visits the high n first.
        let shrinking = run.held() > low_n;
        let order = if shrinking { [n, low_n] } else { [low_n, n] };
        let mut got = Vec::with_capacity(2);
        for target in order {
            reach(run.as_mut(), schedule, target, &mut sw)?;
            got.push(window(run.as_mut(), p.as_ref(), opts, ctx, &mut sw)?);
        }
        if shrinking {
            got.reverse();
        }
        let high = got.pop().ok_or("no window")?;
        let low = got.pop().ok_or("no window")?;
        let clock = if opts.instructions {
            Clock::Instructions
        } else {
            Clock::Time
        };
        Ok(compare(
            p.name(),
            p.event(),
            p.frequency(),
            clock,
            &low,
            &high,
        ))
    })();
    drop(run);
    result.unwrap_or_else(failed)
}
