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

/// Applies the budgets to a request: the n that fits, and a cap for each
/// limit that forced it lower.
pub fn fit_to_budget(budgets: Vec<(Resource, limits::Budget)>, requested: u64) -> (u64, Vec<Cap>) {
    let mut n = requested;
    let mut caps = Vec::new();
    for (r, b) in budgets {
        if b.max < n {
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

/// Runs one series of `bench` (`variant`, if it has variants) according
/// to `plan` and returns its full record. Never panics on benchmark errors:
/// they end up in `status` and `message`.
pub fn run_benchmark(
    bench: &dyn Benchmark,
    variant: Option<&str>,
    plan: Plan,
    ctx: &Ctx,
    progress: &mut Progress,
) -> BenchResult {
    let info = bench.info();
    let series = match variant {
        Some(v) => format!("{}[{v}]", info.name),
        None => info.name.to_string(),
    };
    let mut budgets: Vec<(Resource, limits::Budget)> = info
        .uses
        .iter()
        .filter_map(|&r| limits::budget(r).map(|b| (r, b)))
        .collect();
    budgets.extend(bench.budgets(ctx, variant));
    let (mut n, mut caps) = fit_to_budget(budgets, plan.n);
    let schedule = bench.schedule();
    let warmup = plan.warmup.unwrap_or_else(|| default_warmup(n)).min(n);
    let mut result = BenchResult {
        name: info.name.into(),
        series: series.clone(),
        n_meaning: info.n_meaning.into(),
        timed: info.timed.into(),
        status: Status::Ok,
        message: None,
        params: Params {
            requested_n: plan.n,
            n,
            runs: plan.runs,
            warmup_ops: if warmup > 0 { schedule.ops(warmup) } else { 0 },
            extra: BTreeMap::new(),
        },
        caps: Vec::new(),
        environment: limits::environment(info.uses, info.knobs),
        runs: Vec::new(),
        profile: None,
    };
    if n == 0 {
        result.status = Status::Failed;
        result.message = Some(match caps.first() {
            Some(c) => format!("no room for a single item: {}", c.reason),
            None => "n = 0 requested".into(),
        });
        result.caps = caps;
        return result;
    }
    let warm_ops = if warmup > 0 { schedule.ops(warmup) } else { 0 };
    progress.begin(&series, warm_ops + schedule.ops(n) * u64::from(plan.runs));
    for c in &caps {
        progress.note(&format!("n capped at {} by {}", c.reached, c.reason));
    }
    if let crate::bench::Schedule::Levels { levels, per_level } = schedule {
        result.params.extra.insert(
            "levels".into(),
            serde_json::Value::from(levels.min(n.max(1))),
        );
        result
            .params
            .extra
            .insert("ops_per_level".into(), serde_json::Value::from(per_level));
    }
    let clock = ctx.clock();

    // Warm-up: one short run whose samples are discarded.
    if warmup > 0 {
        progress.phase("warm-up");
        match one_run(bench, variant, ctx, clock, warmup, false, progress) {
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
        let (samples, end) = match one_run(bench, variant, ctx, clock, n, r % 2 == 1, progress) {
            Ok(s) => (s, None),
            Err(RunEnd::Limit {
                samples,
                reached,
                resource,
                detail,
            }) => {
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
        reached: u64,
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

/// One run aiming at `n` items; returns the `[n, ns]` samples. A level
/// schedule goes down when `downwards`.
fn one_run(
    bench: &dyn Benchmark,
    variant: Option<&str>,
    ctx: &Ctx,
    clock: &Clock,
    n: u64,
    downwards: bool,
    progress: &Progress,
) -> Result<Vec<[u64; 2]>, RunEnd> {
    let mut run = bench.start(ctx, variant, n).map_err(|e| match e {
        _ if reaper::interrupted() => RunEnd::Interrupted,
        StartError::Unsupported(m) => RunEnd::Unsupported(m),
        StartError::Failed(e) => RunEnd::Failed(format!("{e:#}")),
    })?;
    let plan = bench.schedule().plan(n, downwards);
    let mut samples = Vec::with_capacity(plan.len());
    let mut sw = Stopwatch::new(clock);
    let failed = |e: StepError, samples: Vec<[u64; 2]>, reached: u64| match e {
        StepError::Limit { resource, detail } => RunEnd::Limit {
            samples,
            reached,
            resource,
            detail,
        },
        StepError::Interrupted => RunEnd::Interrupted,
        StepError::Failed(e) => RunEnd::Failed(format!("{e:#}")),
    };
    for (i, grow) in plan.iter().enumerate() {
        if reaper::interrupted() {
            return Err(RunEnd::Interrupted);
        }
        if let Some(target) = *grow
            && let Err(e) = run.resize_to(target)
        {
            let reached = run.held();
            return Err(failed(e, samples, reached));
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
            Err(e) => return Err(failed(e, samples, held)),
        }
        if (i as u64 + 1).is_multiple_of(PROGRESS_EVERY) {
            progress.advance(PROGRESS_EVERY);
        }
    }
    progress.advance(plan.len() as u64 % PROGRESS_EVERY);
    drop(run);
    Ok(samples)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::{Info, Run};
    use crate::harness::clock::TimerKind;
    use crate::harness::progress::Mode;

    /// A benchmark whose operation hits a limit after `limit` items.
    struct Fake {
        limit: u64,
        fail_at: Option<u64>,
    }

    static INFO: Info = Info {
        name: "fake",
        n_meaning: "items",
        timed: "nothing",
        uses: &[],
        knobs: &[],
        quick_n: 10,
        full_n: 10,
    };

    struct FakeRun {
        held: u64,
        limit: u64,
        fail_at: Option<u64>,
    }

    impl Benchmark for Fake {
        fn info(&self) -> &'static Info {
            &INFO
        }
        fn start(
            &self,
            _ctx: &Ctx,
            _variant: Option<&str>,
            _n: u64,
        ) -> Result<Box<dyn crate::bench::Run>, StartError> {
            Ok(Box::new(FakeRun {
                held: 0,
                limit: self.limit,
                fail_at: self.fail_at,
            }))
        }
    }

    impl Run for FakeRun {
        fn held(&self) -> u64 {
            self.held
        }
        fn op(&mut self, sw: &mut Stopwatch) -> Result<(), StepError> {
            if Some(self.held) == self.fail_at {
                return Err(StepError::Failed(anyhow::anyhow!("broke at {}", self.held)));
            }
            if self.held >= self.limit {
                return Err(StepError::Limit {
                    resource: Resource::Descriptors,
                    detail: format!("out of fakes at n = {}", self.held),
                });
            }
            sw.start();
            self.held += 1;
            sw.stop();
            Ok(())
        }
    }

    fn go(b: &Fake, n: u64, runs: u32) -> BenchResult {
        let clock = Clock::new(TimerKind::Monotonic).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let ctx = Ctx::new(dir.path(), &clock);
        let plan = Plan {
            n,
            runs,
            warmup: Some(0),
        };
        run_benchmark(b, None, plan, &ctx, &mut Progress::new(Mode::Quiet))
    }

    #[test]
    fn records_every_sample_of_every_run() {
        let r = go(
            &Fake {
                limit: 1000,
                fail_at: None,
            },
            50,
            3,
        );
        assert_eq!(r.status, Status::Ok);
        assert_eq!(r.runs.len(), 3);
        for (i, run) in r.runs.iter().enumerate() {
            assert_eq!(run.index, i as u32);
            let ns: Vec<u64> = run.samples.iter().map(|s| s[0]).collect();
            assert_eq!(ns, (0..50).collect::<Vec<_>>());
            assert!(run.timer_overhead.median_ns > 0.0);
        }
    }

    #[test]
    fn a_limit_met_while_running_caps_n_and_says_why() {
        let r = go(
            &Fake {
                limit: 30,
                fail_at: None,
            },
            50,
            2,
        );
        assert_eq!(r.status, Status::Capped);
        assert_eq!(r.params.n, 30);
        assert_eq!(r.params.requested_n, 50);
        assert_eq!(r.runs.len(), 2);
        assert!(r.runs.iter().all(|x| x.samples.len() == 30));
        assert_eq!(r.caps[0].reached, 30);
        assert_eq!(r.caps[0].resource, "descriptors");
        assert!(r.caps[0].reason.contains("out of fakes"));
    }

    #[test]
    fn a_failure_keeps_the_runs_that_finished() {
        // Fails in every run at item 20: the first run already fails.
        let r = go(
            &Fake {
                limit: 1000,
                fail_at: Some(20),
            },
            50,
            2,
        );
        assert_eq!(r.status, Status::Failed);
        assert!(r.message.as_deref().unwrap().contains("broke at 20"));
        assert!(r.runs.is_empty());
    }

    #[test]
    fn default_warmup_is_bounded() {
        assert_eq!(default_warmup(5), 5);
        assert_eq!(default_warmup(1000), 50);
        assert_eq!(default_warmup(1_000_000), 500);
    }
}
