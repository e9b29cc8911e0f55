//! Runs one benchmark: budget and caps, warm-up, the timed runs, and the
//! record of every sample.

use super::clock::{Clock, Stopwatch};
use super::progress::Progress;
use super::{Ctx, Resource, limits, reaper};
use crate::bench::{Benchmark, StartError, StepError};
use crate::results::{BenchResult, Cap, Params, RunRecord, Status, now_rfc3339};
use std::collections::BTreeMap;
use std::time::Instant;

/// What to run.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Items per run asked for.
    pub n: u64,
    /// Runs.
    pub runs: u32,
    /// Operations to do and discard first; `None` picks n/20 within 10..=500.
    pub warmup: Option<u64>,
}

/// Operations between progress updates.
const PROGRESS_EVERY: u64 = 64;

/// The warm-up for a run of `n` operations when none is given.
pub fn default_warmup(n: u64) -> u64 {
    (n / 20).clamp(10, 500).min(n)
}

/// Applies the resource budgets to a request: the n that fits, and a cap
/// for each limit that forced it lower.
pub fn fit_to_budget(uses: &[Resource], requested: u64) -> (u64, Vec<Cap>) {
    let mut n = requested;
    let mut caps = Vec::new();
    for &r in uses {
        if let Some(b) = limits::budget(r)
            && b.max < n
        {
            n = b.max;
            caps.push(Cap {
                resource: r.name().into(),
                requested,
                reached: b.max,
                reason: b.reason,
            });
        }
    }
    (n, caps)
}

/// Runs `bench` according to `plan` and returns its full record. Never
/// panics on benchmark errors: they end up in `status` and `message`.
pub fn run_benchmark(
    bench: &dyn Benchmark,
    plan: Plan,
    ctx: &Ctx,
    progress: &mut Progress,
) -> BenchResult {
    let info = bench.info();
    let (mut n, mut caps) = fit_to_budget(info.uses, plan.n);
    let warmup = plan.warmup.unwrap_or_else(|| default_warmup(n)).min(n);
    let mut result = BenchResult {
        name: info.name.into(),
        series: info.name.into(),
        n_meaning: info.n_meaning.into(),
        timed: info.timed.into(),
        status: Status::Ok,
        message: None,
        params: Params {
            requested_n: plan.n,
            n,
            runs: plan.runs,
            warmup_ops: warmup,
            extra: BTreeMap::new(),
        },
        caps: Vec::new(),
        environment: limits::environment(info.uses, info.knobs),
        runs: Vec::new(),
    };
    for c in &caps {
        progress.note(&format!("n capped at {} by {}", c.reached, c.reason));
    }
    if n == 0 {
        result.status = Status::Failed;
        result.message = Some(match caps.first() {
            Some(c) => format!("no room for a single item: {}", c.reason),
            None => "n = 0 requested".into(),
        });
        result.caps = caps;
        return result;
    }
    progress.begin(info.name, warmup + n * u64::from(plan.runs));
    let clock = ctx.clock();

    // Warm-up: one short run whose samples are discarded.
    if warmup > 0 {
        progress.phase("warm-up");
        match one_run(bench, ctx, clock, warmup, progress) {
            Ok(_) => {}
            Err(RunEnd::Unsupported(why)) => {
                result.status = Status::Unsupported;
                result.message = Some(why);
                progress.finish(&format!(
                    "unsupported: {}",
                    result.message.as_deref().unwrap_or("")
                ));
                return result;
            }
            Err(e) => return finish_early(result, e, caps, progress),
        }
    }

    for r in 0..plan.runs {
        if reaper::interrupted() {
            return finish_early(result, RunEnd::Interrupted, caps, progress);
        }
        progress.phase(&format!("run {}/{}", r + 1, plan.runs));
        let timer_overhead = clock.measure_overhead(1000);
        let started = now_rfc3339();
        let t0 = Instant::now();
        let (samples, end) = match one_run(bench, ctx, clock, n, progress) {
            Ok(s) => (s, None),
            Err(RunEnd::Limit {
                samples,
                resource,
                detail,
            }) => {
                let reached = samples.len() as u64;
                progress.note(&format!("limit reached at n = {reached}: {detail}"));
                caps.push(Cap {
                    resource: resource.name().into(),
                    requested: plan.n,
                    reached,
                    reason: detail,
                });
                n = reached;
                (samples, None)
            }
            Err(e) => (Vec::new(), Some(e)),
        };
        if let Some(e) = end {
            return finish_early(result, e, caps, progress);
        }
        if samples.is_empty() {
            return finish_early(
                result,
                RunEnd::Failed("a limit was hit before the first operation".into()),
                caps,
                progress,
            );
        }
        result.runs.push(RunRecord {
            index: r,
            started,
            duration_ms: t0.elapsed().as_secs_f64() * 1e3,
            timer_overhead,
            samples,
        });
    }
    result.params.n = n;
    result.status = if caps.is_empty() {
        Status::Ok
    } else {
        Status::Capped
    };
    result.caps = caps;
    let total: usize = result.runs.iter().map(|r| r.samples.len()).sum();
    progress.finish(&format!(
        "{} runs, {total} samples{}",
        result.runs.len(),
        if result.status == Status::Capped {
            format!(" (capped at n = {n})")
        } else {
            String::new()
        }
    ));
    result
}

/// How a run ended other than normally.
enum RunEnd {
    Limit {
        samples: Vec<[u64; 2]>,
        resource: Resource,
        detail: String,
    },
    Unsupported(String),
    Interrupted,
    Failed(String),
}

fn finish_early(
    mut result: BenchResult,
    end: RunEnd,
    caps: Vec<Cap>,
    progress: &mut Progress,
) -> BenchResult {
    let (status, message) = match end {
        RunEnd::Interrupted => (Status::Interrupted, "interrupted by a signal".to_string()),
        RunEnd::Unsupported(m) => (Status::Unsupported, m),
        RunEnd::Failed(m) => (Status::Failed, m),
        RunEnd::Limit { detail, .. } => (Status::Failed, detail),
    };
    progress.finish(&format!("{}: {message}", status.as_str()));
    result.status = status;
    result.message = Some(message);
    result.caps = caps;
    result
}

/// One run of up to `n` operations; returns the `[n, ns]` samples.
fn one_run(
    bench: &dyn Benchmark,
    ctx: &Ctx,
    clock: &Clock,
    n: u64,
    progress: &Progress,
) -> Result<Vec<[u64; 2]>, RunEnd> {
    let mut run = bench.start(ctx, n).map_err(|e| match e {
        _ if reaper::interrupted() => RunEnd::Interrupted,
        StartError::Unsupported(m) => RunEnd::Unsupported(m),
        StartError::Failed(e) => RunEnd::Failed(format!("{e:#}")),
    })?;
    let mut samples = Vec::with_capacity(n as usize);
    let mut sw = Stopwatch::new(clock);
    for i in 0..n {
        if reaper::interrupted() {
            return Err(RunEnd::Interrupted);
        }
        let held = run.held();
        match run.op(&mut sw) {
            Ok(()) => match sw.take_ns() {
                Some(ns) => samples.push([held, ns]),
                None => {
                    return Err(RunEnd::Failed(format!(
                        "benchmark bug: {} did not time its operation",
                        bench.info().name
                    )));
                }
            },
            Err(StepError::Limit { resource, detail }) => {
                return Err(RunEnd::Limit {
                    samples,
                    resource,
                    detail,
                });
            }
            Err(StepError::Interrupted) => return Err(RunEnd::Interrupted),
            Err(StepError::Failed(e)) => return Err(RunEnd::Failed(format!("{e:#}"))),
        }
        if (i + 1) % PROGRESS_EVERY == 0 {
            progress.advance(PROGRESS_EVERY);
        }
    }
    progress.advance(n % PROGRESS_EVERY);
    drop(run);
    Ok(samples)
}
