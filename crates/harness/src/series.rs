//! Runs one benchmark: budget and caps, warm-up, the timed runs, and the
//! record of every sample.
//!
//! So that a cost drifting over time (a CPU warming up, a cache filling,
//! another process starting) does not pass for a cost growing with n, runs
//! do not all visit n in the same order. Level schedules go up in
//! even-numbered runs and down in odd ones. Per-item benchmarks whose undo
//! restores the state one item earlier ([`Subject::downwards`]) do the
//! same: an odd-numbered run grows to n untimed, then for k = n-1 down to
//! 0 undoes one item, times the operation at n = k and undoes it again.
//! A per-item benchmark whose n falls and whose undo adds an item back
//! (fork-cleanup) goes both ways from the other end (`Removed`). The
//! other per-item benchmarks are re-timed at low n in a fresh run, after
//! each run (before it when n falls during a run), so that each run's low
//! n are also measured far in time from the run's own low-n samples.

use crate::clock::{Clock, Stopwatch};
use crate::progress::Progress;
use crate::subject::{Run, Schedule, StartError, StepError, Subject};
use crate::{Resource, limits};
use results::{BenchResult, Cap, Direction, Params, RecheckWhen, RunRecord, Status, now_rfc3339};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// What to run.
#[derive(Debug, Clone, Copy)]
pub struct SeriesPlan {
    /// Items per run asked for.
    pub n: u64,
    /// Runs (with `auto`, the most).
    pub runs: u32,
    /// Operations to do and discard first; `None` picks n/20 within 10..=500.
    pub warmup: Option<u64>,
    /// Add runs until both ends of n are known well enough (`--runs
    /// auto`), up to `runs`.
    pub auto: Option<AutoRuns>,
    /// Stop once the verdict on the runs so far is decided, after at
    /// least [`DECIDE_MIN`] runs and at most `runs` (the default, when
    /// `--runs` is not given).
    pub decide: bool,
    /// How each run visits n ([`RunOrder`]).
    pub order: RunOrder,
    /// Judge the series once its runs are done and keep the verdict with
    /// it. `false` where the system that asked for the run judges what it
    /// is sent (`__run`): a guest under emulation spent more on judging a
    /// small series than on measuring it. A verdict made on the way
    /// (`decide`) from all the runs is kept either way.
    pub keep_verdict: bool,
    /// The series' share of a run that keeps to a time goal (`run
    /// --within`); `None`: as long as its runs take.
    pub time: Option<TimeShare>,
}

/// A series' share of a run that keeps to a time goal (`run --within`):
/// the series makes its runs fit by making fewer passes, then by lowering
/// n (a cap on `time`, said so), and stops adding runs once another would
/// not fit ([`Series::keep_to`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeShare {
    /// Wall time the series may take from its start, warm-up included.
    pub allowance: Duration,
    /// The whole run's goal, for the words.
    pub goal: Duration,
}

/// A run's time goal in words: `60 s`, `2.5 min`.
fn goal_words(goal: Duration) -> String {
    let s = goal.as_secs_f64();
    if s < 120.0 {
        format!("{} s", (s * 10.0).round() / 10.0)
    } else {
        format!("{} min", (s / 6.0).round() / 10.0)
    }
}

/// The least share of its n a time goal leaves a series: one tenth (and
/// never under [`TIME_MIN_ITEMS`]), so that a goal already spent still
/// measures a range of n.
pub const TIME_MIN_SHARE: u64 = 10;

/// The fewest items a time goal lowers a series to.
pub const TIME_MIN_ITEMS: u64 = 100;

/// The time set aside for judging a series' runs, out of its share of a
/// time goal: a judgement of the quick suite's series took 90 ms on
/// average here (`report --rejudge`, 22 series in 1.9 s), the slowest
/// about twice that.
pub const TIME_JUDGING: Duration = Duration::from_millis(200);

/// How each run visits n, as `run --order` asks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RunOrder {
    /// The default: in passes up and down (down and up in every other
    /// run) where a benchmark can undo its operation or resizes to
    /// levels, so that a drift over a run's time cannot pass for growth
    /// with n; a benchmark that cannot goes up and is re-timed at low n.
    #[default]
    Passes,
    /// One ascending pass per run, as the seeds measured: each n once,
    /// from 0 up, no re-timing (a benchmark whose n falls by itself,
    /// fork-cleanup, still goes down).
    Up,
}

impl RunOrder {
    /// Its name on the command line and in a suite (`passes`, `up`).
    pub fn name(self) -> &'static str {
        match self {
            RunOrder::Passes => "passes",
            RunOrder::Up => "up",
        }
    }

    /// Reads `passes` or `up`.
    pub fn parse(s: &str) -> Result<RunOrder, String> {
        match s {
            "passes" => Ok(RunOrder::Passes),
            "up" => Ok(RunOrder::Up),
            _ => Err(format!(
                "{s:?} is no run order: give passes (up and down, the default) or up (one ascending pass per run)"
            )),
        }
    }
}

/// Runs made before a verdict may stop a series (resampling whole runs
/// needs three).
pub const DECIDE_MIN: u32 = 3;

/// Runs after which a verdict that is a range of growth classes stops a
/// series: the range is then the answer (more runs seldom settle it: eight
/// runs of the select series here gave more ranges, not fewer).
pub const DECIDE_SPLIT: u32 = 5;

/// The most runs a series makes when its runs stop once decided: an
/// undecided series gets up to this many before it is left undecided.
pub const DECIDE_MAX: u32 = 8;

/// `--runs auto`: runs are added until the 95 % interval of the mean of
/// the runs' medians at the low end of n (its lowest tenth) and at the
/// high end (its highest tenth) are each within ±`target` of that mean,
/// after at least `min` runs and at most [`SeriesPlan::runs`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AutoRuns {
    /// Runs before the first look.
    pub min: u32,
    /// The half-width wanted, relative (0.05: ±5 %).
    pub target: f64,
}

impl Default for AutoRuns {
    fn default() -> Self {
        AutoRuns {
            min: 3,
            target: 0.05,
        }
    }
}

/// Student's t for a two-sided 95 % interval with `df` degrees of freedom.
fn t95(df: usize) -> f64 {
    const T: [f64; 10] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    ];
    match df {
        0 => f64::INFINITY,
        1..=10 => T[df - 1],
        11..=20 => 2.228 - (df - 10) as f64 * 0.014,
        21..=30 => 2.086 - (df - 20) as f64 * 0.0044,
        _ => 1.96 + 2.4 / df as f64,
    }
}

/// The relative half-width of the 95 % interval of the mean of the runs'
/// medians at the low and at the high end of n.
pub fn end_half_widths(runs: &[RunRecord]) -> [f64; 2] {
    let top = runs
        .iter()
        .flat_map(|r| r.samples.iter().map(|s| s[0]))
        .max()
        .unwrap_or(0) as f64;
    let (lo_edge, hi_edge) = (top * 0.1, top * 0.9);
    let end = |low: bool| -> f64 {
        let medians: Vec<f64> = runs
            .iter()
            .filter_map(|r| {
                let mut v: Vec<u64> = r
                    .samples
                    .iter()
                    .filter(|s| {
                        let n = s[0] as f64;
                        if low { n <= lo_edge } else { n >= hi_edge }
                    })
                    .map(|s| s[1])
                    .collect();
                if v.is_empty() {
                    return None;
                }
                v.sort_unstable();
                Some(v[v.len() / 2] as f64)
            })
            .collect();
        let k = medians.len();
        if k < 2 {
            return f64::INFINITY;
        }
        let mean = medians.iter().sum::<f64>() / k as f64;
        let var = medians.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (k - 1) as f64;
        t95(k - 1) * (var / k as f64).sqrt() / mean
    };
    [end(true), end(false)]
}

/// Operations between progress updates.
const PROGRESS_EVERY: u64 = 64;

/// The warm-up for a run of `n` operations when none is given.
pub fn default_warmup(n: u64) -> u64 {
    (n / 20).clamp(10, 500).min(n)
}

/// Operations of a re-timing at low n after (or before) a run of `n`
/// items: as many as a run has in its lowest tenth of n, at most 500, and
/// at least 20 (or n, if smaller).
pub fn recheck_ops(n: u64) -> u64 {
    (n / 10).min(500).max(n.min(20))
}

/// How a benchmark's runs visit n, and whether they are re-timed at low n.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    /// A level schedule: up and down in even-numbered runs, down and up
    /// in odd ones.
    Levels,
    /// Per item, able to go down: even-numbered runs go up and down,
    /// odd ones down and up ([`Runner::updown_run`]).
    UpDown,
    /// Per item, n rises in every run; re-timed at low n after each run.
    Rising,
    /// Per item, n falls in every run; re-timed at low n before each run.
    Falling,
    /// Per item, n falls and can rise again (fork-cleanup: its undo adds
    /// an item back): even-numbered runs go down and up, odd ones up and
    /// down ([`Runner::updown_run`] on the items removed, [`Removed`]).
    FallingBothWays,
    /// `--order up`: one ascending pass per run, levels or items, no
    /// re-timing.
    Ascending,
}

impl Order {
    fn of(bench: &dyn Subject, asked: RunOrder) -> Order {
        if asked == RunOrder::Up {
            return if bench.falling() {
                Order::Falling
            } else {
                Order::Ascending
            };
        }
        match bench.schedule() {
            Schedule::Levels { .. } => Order::Levels,
            Schedule::PerItem if bench.falling() && bench.downwards() => Order::FallingBothWays,
            Schedule::PerItem if bench.falling() => Order::Falling,
            Schedule::PerItem if bench.downwards() => Order::UpDown,
            Schedule::PerItem => Order::Rising,
        }
    }

    /// Whether run `r` visits its top n first (down-up) — for
    /// [`Order::FallingBothWays`], whether it removes every item untimed
    /// first (up-down).
    fn peak_first(self, r: u32) -> bool {
        matches!(self, Order::Levels | Order::UpDown | Order::FallingBothWays) && r % 2 == 1
    }

    /// The order in which run `r` visits n, as recorded.
    fn direction(self, r: u32) -> Direction {
        match self {
            Order::Levels | Order::UpDown if self.peak_first(r) => Direction::DownUp,
            Order::Levels | Order::UpDown => Direction::UpDown,
            Order::FallingBothWays if self.peak_first(r) => Direction::UpDown,
            Order::FallingBothWays => Direction::DownUp,
            Order::Falling => Direction::Down,
            Order::Rising | Order::Ascending => Direction::Up,
        }
    }

    /// When its runs are re-timed at low n, if they are.
    fn recheck(self) -> Option<RecheckWhen> {
        match self {
            Order::Rising => Some(RecheckWhen::After),
            Order::Falling => Some(RecheckWhen::Before),
            Order::Levels | Order::UpDown | Order::FallingBothWays | Order::Ascending => None,
        }
    }

    /// Units of progress of run `r` aiming at `n`, its re-timing included.
    fn units(self, r: u32, schedule: Schedule, n: u64) -> u64 {
        self.run_units(r, schedule, n) + self.recheck().map_or(0, |_| recheck_ops(n))
    }

    /// Units of progress of run `r` itself: every call to `op` or `undo`,
    /// timed or not — for a run that measures both ways, those of a single
    /// pass ([`updown_units`]), which its passes share.
    fn run_units(self, r: u32, schedule: Schedule, n: u64) -> u64 {
        if matches!(self, Order::UpDown | Order::FallingBothWays) {
            updown_units(n, self.peak_first(r))
        } else {
            schedule.ops(n)
        }
    }
}

/// The work of a run aiming at `n` in units of about one operation each,
/// for its time (with its re-timing, if `recheck`): a level schedule's
/// runs also add and remove their n items (the connections of connect),
/// untimed, which its units of progress leave out.
fn work_units(order: Order, schedule: Schedule, n: u64, recheck: bool) -> u64 {
    match schedule {
        Schedule::Levels { .. } => 2 * n + schedule.ops(n),
        Schedule::PerItem if recheck => order.units(0, schedule, n),
        Schedule::PerItem => order.run_units(0, schedule, n),
    }
}

/// Units of progress of a run that measures both ways aiming at `n`,
/// however many passes it makes: those of one pass. Up: one op per item,
/// and an op and an undo before each timed one at even n; down: undo, op,
/// undo at odd n, undo at even n; a down-up run grows once more.
fn updown_units(n: u64, peak_first: bool) -> u64 {
    if peak_first { 5 * n } else { 4 * n }
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

/// Where a series runs: the clock of every sample, and the CPU its runs
/// are pinned to (none: left to the scheduler).
#[derive(Clone, Copy)]
pub struct Setting<'a> {
    /// The clock every sample is read with.
    pub clock: &'a Clock,
    /// The CPU the series is pinned to, with the processes it starts.
    pub pin: Option<usize>,
}

/// Runs one series of `bench` (recorded under its `variant`, if it has
/// variants) according to `plan` and returns its full record. Never panics
/// on benchmark errors: they end up in `status` and `message`. The series
/// keeps its verdict (`verdict`), judged as the runs ended.
pub fn run_series(
    bench: &dyn Subject,
    variant: Option<&str>,
    plan: SeriesPlan,
    setting: Setting,
    progress: &mut Progress,
) -> BenchResult {
    let mut judged = None;
    let mut result = measure(bench, variant, plan, setting, progress, &mut judged);
    let verdict = match judged {
        Some((runs, v)) if runs == result.runs.len() => Some(v),
        _ if plan.keep_verdict => Some(judge_counted(&result)),
        _ => None,
    };
    if let Some(Ok(v)) = verdict {
        analysis::recorded::keep(&mut result, &v, &analysis::Options::default());
    }
    result
}

thread_local! {
    /// Mappings the judging of series on this thread added to the process
    /// (see [`judging_mappings`]).
    static JUDGING_MAPPINGS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Mappings that judging series on this thread has added so far: the
/// analysis's threads leave their stacks and malloc arenas with the process
/// (glibc keeps both for later threads), which a check for a benchmark's
/// leftovers must not count as the benchmark's.
pub fn judging_mappings() -> usize {
    JUDGING_MAPPINGS.with(|c| c.get())
}

/// Judges the runs of `b` so far (on every CPU the process may use),
/// counting the mappings it leaves.
fn judge_counted(b: &BenchResult) -> Result<analysis::Verdict, String> {
    let before = sys::count_mappings();
    let v = analysis::recorded::judge_fresh(b, &analysis::Options::default());
    if let (Some(a), Some(b)) = (before, sys::count_mappings()) {
        JUDGING_MAPPINGS.with(|c| c.set(c.get() + b.saturating_sub(a)));
    }
    v
}

/// The verdict on a series' first runs: how many, and what it said.
type Judged = Option<(usize, Result<analysis::Verdict, String>)>;

/// Measures a series ([`run_series`]); `judged` is left holding the
/// last verdict made on the way, if any.
fn measure(
    bench: &dyn Subject,
    variant: Option<&str>,
    plan: SeriesPlan,
    setting: Setting,
    progress: &mut Progress,
    judged: &mut Judged,
) -> BenchResult {
    let order = Order::of(bench, plan.order);
    let runner = Runner {
        bench,
        variant,
        pin: setting.pin,
        clock: setting.clock,
        ascending: order == Order::Ascending,
    };
    let (n, caps) = runner.fit(plan.n);
    let warmup = plan.warmup.unwrap_or_else(|| default_warmup(n)).min(n);
    let mut result = runner.record(plan, n, warmup);
    if n == 0 {
        result.status = Status::Failed;
        result.message = Some(match caps.first() {
            Some(c) => format!("no room for a single item: {}", c.reason),
            None => "n = 0 requested".into(),
        });
        result.caps = caps;
        return result;
    }
    let mut series = Series {
        runner,
        plan,
        order,
        schedule: bench.schedule(),
        progress,
        n,
        caps,
        result,
        pass_time: None,
        run_budget: PASS_BUDGET,
        started: Instant::now(),
        pinned: None,
    };
    // Everything below runs on one CPU (`setting.pin`); the guard restores
    // the affinity when the benchmark is done (and while a verdict is
    // judged between runs, on every CPU).
    series.pinned = series.pin();
    series.begin(warmup);
    if warmup > 0 {
        match series.warm_up(warmup) {
            Ok(_) => {}
            Err(RunEnd::Unsupported(why)) => return series.unsupported(why),
            Err(e) => return series.finish_early(e),
        }
    }
    if let Some(share) = plan.time {
        // The first warm-up meets what is cold (tables that grow, pages
        // first touched: socket's pace 6 times its runs' here); the pace
        // is a second one's.
        let mut warm = None;
        if warmup > 0 {
            match series.warm_up(warmup) {
                Ok(w) => warm = Some(w),
                Err(e) => return series.finish_early(e),
            }
        }
        series.keep_to(share, warm);
    }
    for r in 0..plan.runs {
        if let Err(e) = series.timed_run(r) {
            return series.finish_early(e);
        }
        if let Some(a) = plan.auto
            && series.enough_runs(a)
        {
            break;
        }
        if plan.decide && series.decided(judged) {
            break;
        }
    }
    series.finish()
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

/// What a series runs, and with what: the benchmark (its variant, if it
/// has variants), the CPU and the clock, shared by every run of it.
#[derive(Clone, Copy)]
struct Runner<'a> {
    bench: &'a dyn Subject,
    variant: Option<&'a str>,
    pin: Option<usize>,
    clock: &'a Clock,
    /// One ascending pass per run ([`Order::Ascending`]).
    ascending: bool,
}

/// A series under way ([`run_series`]): its plan, its record so far, and
/// what its runs taught (a lower n after a limit, the caps, the pace).
struct Series<'a> {
    runner: Runner<'a>,
    plan: SeriesPlan,
    order: Order,
    schedule: Schedule,
    progress: &'a mut Progress,
    /// Items per run: the n that fits, lowered where a run met a limit.
    n: u64,
    caps: Vec<Cap>,
    result: BenchResult,
    /// The time one up-and-down pass over n takes, for runs that measure
    /// both ways: guessed from the warm-up, then from each run.
    pass_time: Option<Duration>,
    /// The wall time a run that measures both ways aims at:
    /// [`PASS_BUDGET`], or less under a time goal ([`Series::keep_to`]).
    run_budget: Duration,
    /// When the series began.
    started: Instant,
    /// Holds the runs on one CPU until dropped.
    pinned: Option<sys::PinGuard>,
}

impl Series<'_> {
    /// Pins the series to the CPU its setting names, if it names one, and
    /// records it; the guard restores the affinity when dropped.
    fn pin(&mut self) -> Option<sys::PinGuard> {
        let cpu = self.runner.pin?;
        let guard = sys::PinGuard::new(cpu).ok()?;
        self.result
            .params
            .extra
            .insert("pinned_cpu".into(), serde_json::Value::from(cpu));
        Some(guard)
    }

    /// Announces the series and its whole work (a warm-up of `warmup`
    /// items included) to the progress display with the caps met so far,
    /// and records a level schedule's shape.
    fn begin(&mut self, warmup: u64) {
        let (order, schedule, n) = (self.order, self.schedule, self.n);
        // Under a time goal the pace is a second warm-up's.
        let warm_ups = if self.plan.time.is_some() { 2 } else { 1 };
        let warm_ops = if warmup > 0 {
            warm_ups * order.run_units(0, schedule, warmup)
        } else {
            0
        };
        let run_units: u64 = (0..self.plan.runs)
            .map(|r| order.units(r, schedule, n))
            .sum();
        self.progress
            .begin(&self.result.series, warm_ops + run_units);
        for c in &self.caps {
            self.progress
                .note(&format!("n capped at {} by {}", c.reached, c.reason));
        }
        if let Schedule::Levels { levels, per_level } = schedule {
            let extra = &mut self.result.params.extra;
            extra.insert(
                "levels".into(),
                serde_json::Value::from(levels.min(n.max(1))),
            );
            extra.insert("ops_per_level".into(), serde_json::Value::from(per_level));
        }
    }

    /// The warm-up: one short run of `warmup` items whose samples are
    /// discarded, and a first guess at the pace of a pass; returns what
    /// it took ([`Warm`]).
    fn warm_up(&mut self, warmup: u64) -> Result<Warm, RunEnd> {
        self.progress.phase("warm-up");
        let t0 = Instant::now();
        let mut sweeps = Sweeps::default();
        let one_pass = PassPlan {
            passes: 1,
            budget: PASS_BUDGET,
        };
        self.runner
            .one_run(warmup, false, one_pass, &mut sweeps, self.progress)?;
        // One pass over `warmup` items: a first guess at the pace.
        if sweeps.timed > 0 {
            self.pass_time = Some(sweeps.took.mul_f64(self.n as f64 / warmup as f64));
        }
        Ok(Warm {
            items: warmup,
            wall: t0.elapsed(),
            ops: sweeps.took,
        })
    }

    /// Fits the series into its share of a run's time goal, at the pace
    /// the warm-up (`warm`: its time and items) showed: runs that measure
    /// both ways aim at a shorter run (fewer passes, down to
    /// [`MIN_PASSES`]); where the least runs the series makes would still
    /// take longer than its share, n is lowered to fit (down to a tenth,
    /// [`TIME_MIN_SHARE`]) and a cap on `time` says so. A pace from a
    /// warm-up at low n is a guess: a cost that grows with n makes the
    /// runs longer than it says, which the shares of the series after
    /// this one absorb.
    fn keep_to(&mut self, share: TimeShare, warm: Option<Warm>) {
        let runs = match (self.plan.decide, self.plan.auto) {
            (true, _) => DECIDE_MIN.min(self.plan.runs),
            (false, Some(a)) => a.min.min(self.plan.runs),
            (false, None) => self.plan.runs,
        }
        .max(1);
        let left = share.allowance.saturating_sub(self.started.elapsed());
        let per_run = left.saturating_sub(TIME_JUDGING) / runs;
        self.run_budget = per_run.min(PASS_BUDGET);
        let n = self.n;
        // What starting and ending a run costs besides its operations
        // (socket-threads waits for its threads to settle), paid again by
        // a re-timing at low n.
        let fixed = warm.map_or(Duration::ZERO, |w| w.wall.saturating_sub(w.ops));
        let starts = if self.order.recheck().is_some() { 2 } else { 1 };
        let expected = match (self.pass_time, warm) {
            (Some(pass), _) => Some((pass * MIN_PASSES).max(self.run_budget) + fixed),
            (None, Some(w)) => {
                let warm_units = work_units(self.order, self.schedule, w.items, false).max(1);
                let units = work_units(self.order, self.schedule, n, true);
                Some(w.ops.mul_f64(units as f64 / warm_units as f64) + fixed * starts)
            }
            (None, None) => None,
        };
        let Some(expected) = expected.filter(|e| *e > per_run && !e.is_zero()) else {
            return;
        };
        let fit = (n as f64 * per_run.as_secs_f64() / expected.as_secs_f64()) as u64;
        let to = fit.max(n / TIME_MIN_SHARE).max(TIME_MIN_ITEMS).min(n);
        if to >= n {
            return;
        }
        let reason = format!(
            "the run's time goal of {}: this series' share was {} after its warm-up, and at the warm-up's pace {runs} runs of n = {n} take about {}",
            goal_words(share.goal),
            units::fmt_secs(left.as_secs_f64()),
            units::fmt_secs((expected * runs).as_secs_f64()),
        );
        self.progress
            .note(&format!("n lowered to {to} by {reason}"));
        self.caps.push(Cap {
            resource: "time".into(),
            requested: n,
            reached: to,
            reason,
        });
        self.pass_time = self.pass_time.map(|p| p.mul_f64(to as f64 / n as f64));
        self.n = to;
    }

    /// Whether a time goal leaves no room for another run like the last.
    fn out_of_time(&self) -> bool {
        let Some(share) = self.plan.time else {
            return false;
        };
        let last = self.result.runs.last().map_or(Duration::ZERO, |r| {
            Duration::from_secs_f64(r.duration_ms / 1e3)
        });
        self.started.elapsed() + last + TIME_JUDGING > share.allowance
    }

    /// Run `r` and its record, with its re-timing at low n before or after
    /// it where the order wants one.
    fn timed_run(&mut self, r: u32) -> Result<(), RunEnd> {
        if sys::stop::interrupted() {
            return Err(RunEnd::Interrupted);
        }
        let phase = format!("run {}/{}", r + 1, self.plan.runs);
        let mut recheck = Vec::new();
        if self.order.recheck() == Some(RecheckWhen::Before) {
            self.progress
                .phase(&format!("{phase}: re-timing low n first"));
            recheck = self.runner.recheck_low_n(self.n, true, self.progress)?;
        }
        self.progress.phase(&phase);
        let timer_overhead = self.runner.clock.measure_overhead(1000);
        let started = now_rfc3339();
        let t0 = Instant::now();
        let passes = PassPlan::at_pace(self.pass_time, self.run_budget);
        let peak_first = self.order.peak_first(r);
        let mut sweeps = Sweeps::default();
        let outcome = self
            .runner
            .one_run(self.n, peak_first, passes, &mut sweeps, self.progress);
        if sweeps.timed > 0 {
            // A down-up run also grows once untimed: count it as half a pass.
            let made = f64::from(sweeps.timed) / 2.0 + if peak_first { 0.5 } else { 0.0 };
            self.pass_time = Some(sweeps.took.div_f64(made));
        }
        let samples = self.samples_of(outcome)?;
        let duration_ms = t0.elapsed().as_secs_f64() * 1e3;
        // The run's resources are released: re-time low n in a fresh run.
        let mut after_end = None;
        if self.order.recheck() == Some(RecheckWhen::After) {
            self.progress.phase(&format!("{phase}: re-timing low n"));
            match self.runner.recheck_low_n(self.n, false, self.progress) {
                Ok(s) => recheck = s,
                Err(e) => after_end = Some(e),
            }
        }
        self.result.runs.push(RunRecord {
            index: r,
            started,
            duration_ms,
            timer_overhead,
            samples,
            direction: self.order.direction(r),
            crossings: (sweeps.timed > 0).then_some(sweeps.timed),
            primed: sweeps.timed > 0,
            recheck_when: self.order.recheck().filter(|_| !recheck.is_empty()),
            recheck,
        });
        after_end.map_or(Ok(()), Err)
    }

    /// The samples of a run that ended normally or met a limit (which caps
    /// n where it was met, for this run and the next); any other end, or no
    /// sample at all, ends the series.
    fn samples_of(
        &mut self,
        outcome: Result<Vec<[u64; 2]>, RunEnd>,
    ) -> Result<Vec<[u64; 2]>, RunEnd> {
        let samples = match outcome {
            Ok(s) => s,
            Err(RunEnd::Limit {
                samples,
                reached,
                resource,
                detail,
            }) => {
                self.progress
                    .note(&format!("limit reached at n = {reached}: {detail}"));
                self.caps.push(Cap {
                    resource: resource.name().into(),
                    requested: self.plan.n,
                    reached,
                    reason: detail,
                });
                self.n = reached;
                samples
            }
            Err(e) => return Err(e),
        };
        if samples.is_empty() {
            return Err(RunEnd::Failed(
                "a limit was hit before the first operation".into(),
            ));
        }
        Ok(samples)
    }

    /// With `--runs auto` (`a`): whether the runs so far know both ends of
    /// n well enough, or are the most allowed; if so, says and records why
    /// the series stops there (`runs_auto`) and how many runs it made.
    fn enough_runs(&mut self, a: AutoRuns) -> bool {
        let plan = self.plan;
        let done = self.result.runs.len() as u32;
        let hw = end_half_widths(&self.result.runs);
        let known = done >= a.min.max(2) && hw.iter().all(|h| *h <= a.target);
        let timed_out = done >= a.min && self.out_of_time();
        if !known && !timed_out && done < plan.runs {
            return false;
        }
        let pct = |h: f64| {
            if h.is_finite() {
                serde_json::json!((h * 1e4).round() / 1e4)
            } else {
                serde_json::Value::Null
            }
        };
        let why = if known {
            format!(
                "both ends of n within ±{:.0} % after {done} runs",
                a.target * 100.0
            )
        } else if done < plan.runs {
            format!(
                "no time for another run within the run's time goal after {done} runs; the ends are known within ±{:.1} % and ±{:.1} %",
                hw[0] * 100.0,
                hw[1] * 100.0
            )
        } else {
            format!(
                "the most runs ({}) reached; the ends are known within ±{:.1} % and ±{:.1} %",
                plan.runs,
                hw[0] * 100.0,
                hw[1] * 100.0
            )
        };
        self.progress.note(&why);
        self.result.params.extra.insert(
            "runs_auto".into(),
            serde_json::json!({
                "target": a.target,
                "min": a.min,
                "max": plan.runs,
                "runs": done,
                "half_widths": [pct(hw[0]), pct(hw[1])],
                "stopped": if known {
                    "known"
                } else if done < plan.runs {
                    "time"
                } else {
                    "max"
                },
                "why": why,
            }),
        );
        self.result.params.runs = done;
        true
    }

    /// With runs decided by their verdict: judges the runs so far once
    /// there are [`DECIDE_MIN`] (into `judged`); whether the verdict is
    /// decided, or the runs are the most allowed; if so, says and records
    /// why the series stops there (`runs_decided`).
    fn decided(&mut self, judged: &mut Judged) -> bool {
        let plan = self.plan;
        let done = self.result.runs.len() as u32;
        if done < DECIDE_MIN.min(plan.runs) {
            return false;
        }
        // Judged on every CPU, not only the one the runs are pinned to.
        let was_pinned = self.pinned.take().is_some();
        let v = judge_counted(&self.result);
        if was_pinned {
            self.pinned = self.pin();
        }
        let settled = match &v {
            Ok(v) => v.decided(),
            Err(e) => Err(e.clone()),
        };
        let split = matches!(&v, Ok(v) if matches!(v.class, analysis::Label::Between(..)));
        let edge = matches!(&v, Ok(v) if v.on_the_edge());
        *judged = Some((done as usize, v));
        let split_stops = split && done >= DECIDE_SPLIT;
        let timed_out = self.out_of_time();
        let more = settled.is_err() || (edge && done < DECIDE_SPLIT);
        if more && !split_stops && !timed_out && done < plan.runs {
            return false;
        }
        let goal = || plan.time.map_or_else(String::new, |t| goal_words(t.goal));
        let (stopped, why) = match &settled {
            // A flat rise near its bound's edge stopped short of the runs
            // it asks for: by time or by the most allowed.
            Ok(why) if edge && done < DECIDE_SPLIT && done < plan.runs => (
                "time",
                format!(
                    "no time for another run within the run's time goal of {} after {done} runs, of the {DECIDE_SPLIT} a flat rise near its bound's edge asks for; {why}",
                    goal()
                ),
            ),
            Ok(why) if edge && done < DECIDE_SPLIT => (
                "max",
                format!("the most runs ({}) reached; {why}", plan.runs),
            ),
            Ok(why) if edge && done > DECIDE_MIN => (
                "decided",
                format!(
                    "decided after {done} runs, the {DECIDE_SPLIT} a flat rise near its bound's edge asks for: {why}"
                ),
            ),
            Ok(why) => ("decided", format!("decided after {done} runs: {why}")),
            Err(why) if split_stops && done < plan.runs => (
                "split",
                format!("split after {done} runs, the answer: {why}"),
            ),
            Err(why) if done < plan.runs => (
                "time",
                format!(
                    "no time for another run within the run's time goal of {} after {done} runs; {why}",
                    goal()
                ),
            ),
            Err(why) => (
                "max",
                format!("the most runs ({}) reached; {why}", plan.runs),
            ),
        };
        self.progress.note(&why);
        self.result.params.extra.insert(
            "runs_decided".into(),
            serde_json::json!({
                "min": DECIDE_MIN,
                "max": plan.runs,
                "runs": done,
                "stopped": stopped,
                "why": why,
            }),
        );
        self.result.params.runs = done;
        true
    }

    /// The record of a series whose runs all ended: capped if a limit held
    /// n below the request.
    fn finish(self) -> BenchResult {
        let (mut result, n) = (self.result, self.n);
        result.params.n = n;
        result.status = if self.caps.is_empty() {
            Status::Ok
        } else {
            Status::Capped
        };
        result.caps = self.caps;
        let total: usize = result.runs.iter().map(|r| r.samples.len()).sum();
        // The re-timings at low n are judged as samples too: said, so
        // that the report's count (both) is not a surprise.
        let again: usize = result.runs.iter().map(|r| r.recheck.len()).sum();
        let again = if again > 0 {
            format!(" and {again} re-timings at low n")
        } else {
            String::new()
        };
        self.progress.finish(&format!(
            "{} runs, {total} samples{again}{}",
            result.runs.len(),
            if result.status == Status::Capped {
                format!(" (capped at n = {n})")
            } else {
                String::new()
            }
        ));
        result
    }

    /// Ends a series whose warm-up found the benchmark unsupported here.
    fn unsupported(mut self, why: String) -> BenchResult {
        self.progress.finish(&format!("unsupported: {why}"));
        self.result.status = Status::Unsupported;
        self.result.message = Some(why);
        self.result
    }

    /// Ends the series early (`end`), with the runs it finished.
    fn finish_early(self, end: RunEnd) -> BenchResult {
        let (status, message) = match end {
            RunEnd::Interrupted => (Status::Interrupted, "interrupted by a signal".to_string()),
            RunEnd::Unsupported(m) => (Status::Unsupported, m),
            RunEnd::Failed(m) => (Status::Failed, m),
            RunEnd::Limit { detail, .. } => (Status::Failed, detail),
        };
        let message = sys::errno_words(&message);
        self.progress
            .finish(&format!("{}: {message}", status.as_str()));
        let mut result = self.result;
        result.status = status;
        result.message = Some(message);
        result.caps = self.caps;
        result
    }
}

impl Runner<'_> {
    /// The n that fits the budgets of every resource the benchmark uses
    /// (`requested` at most), and a cap for each limit that forced it lower.
    fn fit(&self, requested: u64) -> (u64, Vec<Cap>) {
        let mut budgets: Vec<(Resource, limits::Budget)> = self
            .bench
            .info()
            .uses
            .iter()
            .filter_map(|&r| limits::budget(r).map(|b| (r, b)))
            .collect();
        budgets.extend(self.bench.budgets());
        fit_to_budget(budgets, requested)
    }

    /// The record of a series of `n` items per run (and a warm-up of
    /// `warmup`), before its first run.
    fn record(&self, plan: SeriesPlan, n: u64, warmup: u64) -> BenchResult {
        let info = self.bench.info();
        let series = match self.variant {
            Some(v) => format!("{}[{v}]", info.name),
            None => info.name.to_string(),
        };
        BenchResult {
            name: info.name.into(),
            series,
            n_meaning: info.n_meaning.into(),
            timed: info.timed.into(),
            max_matters: self.bench.max_matters().map(String::from),
            pairs_with: self.bench.pairs_with().map(String::from),
            status: Status::Ok,
            message: None,
            params: Params {
                requested_n: plan.n,
                n,
                runs: plan.runs,
                warmup_ops: if warmup > 0 {
                    self.bench.schedule().ops(warmup)
                } else {
                    0
                },
                // The order its runs visited n in (`--order`), for the
                // report's settings and `compare`.
                extra: BTreeMap::from([("order".to_string(), plan.order.name().into())]),
            },
            caps: Vec::new(),
            environment: limits::environment(info.uses, info.knobs),
            runs: Vec::new(),
            profile: None,
            verdict: None,
            monitor: None,
        }
    }

    /// Starts a run of the benchmark for `n` items.
    fn start(&self, n: u64) -> Result<Box<dyn Run>, RunEnd> {
        self.bench.start(n).map_err(|e| match e {
            _ if sys::stop::interrupted() => RunEnd::Interrupted,
            StartError::Unsupported(m) => RunEnd::Unsupported(m),
            StartError::Failed(e) => RunEnd::Failed(crate::subject::words(&*e)),
        })
    }

    /// One run aiming at `n` items; returns the `[n, ns]` samples. A level
    /// schedule visits its levels both ways, and a per-item benchmark that
    /// can ([`Subject::downwards`]) times n both ways
    /// ([`Runner::updown_run`]): up and down, or down and up when
    /// `peak_first`, in the passes `passes` plans, telling `sweeps` how it
    /// went.
    fn one_run(
        &self,
        n: u64,
        peak_first: bool,
        passes: PassPlan,
        sweeps: &mut Sweeps,
        progress: &Progress,
    ) -> Result<Vec<[u64; 2]>, RunEnd> {
        let bench = self.bench;
        let mut run = self.start(n)?;
        let schedule = bench.schedule();
        let both_ways = bench.downwards() && !self.ascending;
        if schedule == Schedule::PerItem && both_ways && bench.falling() {
            let mut removed = Removed {
                run: run.as_mut(),
                top: n,
            };
            let at_n = |samples: Vec<[u64; 2]>| {
                samples
                    .into_iter()
                    .map(|[k, ns]| [n - k, ns])
                    .collect::<Vec<_>>()
            };
            return self
                .updown_run(&mut removed, n, peak_first, passes, sweeps, progress)
                .map(at_n)
                .map_err(|e| match e {
                    RunEnd::Limit {
                        samples,
                        reached,
                        resource,
                        detail,
                    } => RunEnd::Limit {
                        samples: at_n(samples),
                        reached,
                        resource,
                        detail,
                    },
                    e => e,
                });
        }
        if schedule == Schedule::PerItem && both_ways {
            return self.updown_run(run.as_mut(), n, peak_first, passes, sweeps, progress);
        }
        let plan = if self.ascending {
            schedule.plan_up(n)
        } else {
            schedule.plan(n, peak_first)
        };
        let t0 = Instant::now();
        let mut samples = Vec::with_capacity(plan.len());
        let mut sw = Stopwatch::new(self.clock);
        let mut ticker = Ticker::new(progress);
        for grow in &plan {
            if sys::stop::interrupted() {
                return Err(RunEnd::Interrupted);
            }
            if let Some(target) = *grow
                && let Err(e) = run.resize_to(target)
            {
                let reached = run.held();
                return Err(step_end(e, samples, reached));
            }
            let held = run.held();
            match run.op(&mut sw) {
                Ok(()) => samples.push([held, reading(bench, &mut sw)?]),
                Err(e) => return Err(step_end(e, samples, held)),
            }
            ticker.add(1);
        }
        sweeps.took = t0.elapsed();
        drop(ticker);
        drop(run);
        Ok(samples)
    }

    /// A per-item run that visits n both ways, several times over, timing
    /// each n once, so that every run meets both ends of n early, late and
    /// in between, and a drift over the run's time, or a spell of slow
    /// operations, falls on both ends alike. The run crosses the range 2·m
    /// times (m = `plan.passes`): going up it makes the operation at every
    /// n, coming down it removes one item ([`Run::undo`]) at every n; the
    /// crossing numbered h (from 0) times the n whose selector is h — for
    /// an operation timed on the way down, the item is removed, the
    /// operation timed at `held() = k` and undone.
    ///
    /// - **up-down** (`peak_first` false): crossings up, down, up, …; n is
    ///   timed in crossing n mod 2m (with one pass: even n going up, odd n
    ///   coming down);
    /// - **down-up** (`peak_first`): grows to `n` untimed first, then
    ///   crosses down, up, …; n is timed in crossing (n + 1) mod 2m (with
    ///   one pass: odd n coming down, even n going up).
    ///
    /// When the run has taken over twice the time it was expected to take
    /// (`plan.budget`) after a crossing, the next crossing times every n
    /// not yet timed, and is the last. A limit met while first growing
    /// caps n where it was met, as in a run going up. A limit met later,
    /// below an n the run already held, fails the benchmark.
    fn updown_run(
        &self,
        run: &mut dyn Run,
        n: u64,
        peak_first: bool,
        plan: PassPlan,
        sweeps: &mut Sweeps,
        progress: &Progress,
    ) -> Result<Vec<[u64; 2]>, RunEnd> {
        let name = self.bench.info().name;
        let t0 = Instant::now();
        // Never more crossings than items to time.
        let crossings = 2 * u64::from(plan.passes).min(n / 2).max(1);
        // Progress: 4n units for an up-down run, 5n for a down-up one,
        // however many passes it makes.
        let steps = crossings * n + if peak_first { n } else { 0 };
        let mut c = Crossings {
            bench: self.bench,
            run,
            sw: Stopwatch::new(self.clock),
            untimed: Stopwatch::new(self.clock),
            samples: Vec::with_capacity(n as usize),
            crossings,
            peak_first,
            ticks: Spread::new(progress, updown_units(n, peak_first), steps),
        };
        let limit = c.grow(n)?;
        let top = c.run.held();
        if top > n || (limit.is_none() && top != n) {
            return Err(RunEnd::Failed(format!(
                "benchmark bug: {name} held {top} items after growing towards {n}"
            )));
        }
        let first = if peak_first { 0 } else { 1 };
        let mut last = false;
        sweeps.timed = first as u32;
        for h in first..crossings {
            if sys::stop::interrupted() {
                return Err(RunEnd::Interrupted);
            }
            // The first growth of a down-up run is no crossing of its own.
            let done = h - first + u64::from(!peak_first);
            if h + 1 < crossings && done > 0 && t0.elapsed() > 2 * plan.budget {
                last = true;
            }
            sweeps.timed += 1;
            if (h % 2 == 0) == peak_first {
                c.cross_down(h, last, top)?;
            } else {
                c.cross_up(h, last, top)?;
            }
            if last {
                break;
            }
        }
        c.ticks.rest();
        sweeps.took = t0.elapsed();
        match limit {
            Some((resource, detail)) => Err(RunEnd::Limit {
                samples: c.samples,
                reached: top,
                resource,
                detail,
            }),
            None => Ok(c.samples),
        }
    }

    /// Re-times low n for a benchmark that cannot measure on the way down:
    /// starts a fresh run and times its first [`recheck_ops`]`(n)`
    /// operations. The run is started for `n` items (the state the run's
    /// own first operations met), or, when n falls during a run
    /// (`falling`), for that many items only, so that its operations remove
    /// the last ones (n = k … 1). A limit ends the re-timing early without
    /// capping n.
    fn recheck_low_n(
        &self,
        n: u64,
        falling: bool,
        progress: &Progress,
    ) -> Result<Vec<[u64; 2]>, RunEnd> {
        let k = recheck_ops(n);
        let mut run = self.start(if falling { k } else { n })?;
        let mut sw = Stopwatch::new(self.clock);
        let mut ticker = Ticker::new(progress);
        let mut samples = Vec::with_capacity(k as usize);
        for _ in 0..k {
            if sys::stop::interrupted() {
                return Err(RunEnd::Interrupted);
            }
            let held = run.held();
            match run.op(&mut sw) {
                Ok(()) => samples.push([held, reading(self.bench, &mut sw)?]),
                Err(StepError::Limit { detail, .. }) => {
                    progress.note(&format!(
                        "re-timing low n stopped by a limit at n = {held}: {detail}"
                    ));
                    break;
                }
                Err(e) => return Err(step_end(e, samples, held)),
            }
            ticker.add(1);
        }
        drop(ticker);
        drop(run);
        Ok(samples)
    }
}

/// A run that measures both ways under way ([`Runner::updown_run`]): the
/// run, its two stopwatches, its samples so far and its progress.
struct Crossings<'r, 'c, 'p> {
    bench: &'r dyn Subject,
    run: &'r mut dyn Run,
    /// Times the operations sampled.
    sw: Stopwatch<'c>,
    /// Brackets the operations and undos not sampled; read and discarded.
    untimed: Stopwatch<'c>,
    samples: Vec<[u64; 2]>,
    /// Crossings of the range of n the run makes, at most.
    crossings: u64,
    peak_first: bool,
    ticks: Spread<'p>,
}

impl Crossings<'_, '_, '_> {
    /// The crossing in which n = `k` is timed.
    #[inline]
    fn crossing_of(&self, k: u64) -> u64 {
        if self.peak_first {
            (k + 1) % self.crossings
        } else {
            k % self.crossings
        }
    }

    /// Whether crossing `h` times n = `k`: its own n, and in the `last`
    /// crossing every n not yet timed.
    #[inline]
    fn times(&self, h: u64, last: bool, k: u64) -> bool {
        let c = self.crossing_of(k);
        c == h || (last && c > h)
    }

    /// The first growth towards `n` items, timed (crossing 0) in an
    /// up-down run: returns the limit that stopped it below `n`, if one
    /// did.
    fn grow(&mut self, n: u64) -> Result<Option<(Resource, String)>, RunEnd> {
        for _ in 0..n {
            if sys::stop::interrupted() {
                return Err(RunEnd::Interrupted);
            }
            let k = self.run.held();
            let timed = !self.peak_first && self.crossing_of(k) == 0;
            let done = if timed {
                self.prime().and_then(|()| self.run.op(&mut self.sw))
            } else {
                self.run.op(&mut self.untimed)
            };
            match done {
                Ok(()) if timed => self.samples.push([k, reading(self.bench, &mut self.sw)?]),
                Ok(()) => {
                    self.untimed.take_ns();
                }
                Err(StepError::Limit { resource, detail }) => {
                    return Ok(Some((resource, detail)));
                }
                Err(e) => return Err(step_end(e, std::mem::take(&mut self.samples), k)),
            }
            self.ticks.tick();
        }
        Ok(None)
    }

    /// Crossing `h` downwards from `top` items: at every n removes an item,
    /// and where n is timed here, times the operation and undoes it.
    fn cross_down(&mut self, h: u64, last: bool, top: u64) -> Result<(), RunEnd> {
        let turned = |e| after_the_turn(e, top);
        for k in (0..top).rev() {
            self.run.undo(&mut self.untimed).map_err(turned)?;
            self.untimed.take_ns();
            if self.run.held() != k {
                return Err(RunEnd::Failed(format!(
                    "benchmark bug: {}'s undo left {} items, not {k}",
                    self.bench.info().name,
                    self.run.held()
                )));
            }
            if self.times(h, last, k) {
                self.run.op(&mut self.sw).map_err(turned)?;
                self.samples.push([k, reading(self.bench, &mut self.sw)?]);
                self.run.undo(&mut self.untimed).map_err(turned)?;
                self.untimed.take_ns();
            }
            self.ticks.tick();
        }
        Ok(())
    }

    /// The operation and its undo, untimed, before an operation timed on
    /// the way up: so that in both directions the timed operation follows
    /// an undo, as it does going down. What the last undo freed (the
    /// slab objects of an exited child, say) is then at hand in both
    /// directions alike, where otherwise the two directions time two
    /// different operations and every run mixes them half and half.
    fn prime(&mut self) -> Result<(), StepError> {
        self.run.op(&mut self.untimed)?;
        self.untimed.take_ns();
        self.run.undo(&mut self.untimed)?;
        self.untimed.take_ns();
        Ok(())
    }

    /// Crossing `h` upwards to `top` items: the operation at every n, timed
    /// where n is timed here, after an untimed operation and undo
    /// ([`Crossings::prime`]).
    fn cross_up(&mut self, h: u64, last: bool, top: u64) -> Result<(), RunEnd> {
        let turned = |e| after_the_turn(e, top);
        for k in 0..top {
            if self.times(h, last, k) {
                self.prime().map_err(turned)?;
                self.run.op(&mut self.sw).map_err(turned)?;
                self.samples.push([k, reading(self.bench, &mut self.sw)?]);
            } else {
                self.run.op(&mut self.untimed).map_err(turned)?;
                self.untimed.take_ns();
            }
            self.ticks.tick();
        }
        Ok(())
    }
}

/// How a failed operation ends a run that measures both ways after its
/// first growth to `top` items: a limit met now, below an n the run
/// already held, fails the benchmark.
fn after_the_turn(e: StepError, top: u64) -> RunEnd {
    match e {
        StepError::Limit { detail, .. } => RunEnd::Failed(format!(
            "{detail}, below the n = {top} this run already held"
        )),
        e => step_end(e, Vec::new(), 0),
    }
}

/// `units` of progress spread evenly over `steps` calls of
/// [`Spread::tick`], passed on through a [`Ticker`].
struct Spread<'p> {
    ticker: Ticker<'p>,
    units: u64,
    steps: u64,
    step: u64,
    given: u64,
}

impl<'p> Spread<'p> {
    fn new(progress: &'p Progress, units: u64, steps: u64) -> Self {
        Spread {
            ticker: Ticker::new(progress),
            units,
            steps,
            step: 0,
            given: 0,
        }
    }

    /// One step done.
    #[inline]
    fn tick(&mut self) {
        self.step += 1;
        let due = self.units * self.step / self.steps.max(1);
        self.ticker.add(due - self.given);
        self.given = due;
    }

    /// The units not given yet, at the end of a run that took fewer steps
    /// than planned.
    fn rest(&mut self) {
        self.ticker.add(self.units - self.given);
    }
}

/// Passes work done on to the progress display in batches, the rest when
/// dropped (between operations, never inside a timed call).
struct Ticker<'p> {
    progress: &'p Progress,
    pending: u64,
}

impl<'p> Ticker<'p> {
    fn new(progress: &'p Progress) -> Self {
        Ticker {
            progress,
            pending: 0,
        }
    }

    #[inline]
    fn add(&mut self, units: u64) {
        self.pending += units;
        if self.pending >= PROGRESS_EVERY {
            self.progress.advance(self.pending);
            self.pending = 0;
        }
    }
}

impl Drop for Ticker<'_> {
    fn drop(&mut self) {
        self.progress.advance(self.pending);
    }
}

/// How a failed operation ends a run: a limit caps n at `reached`.
fn step_end(e: StepError, samples: Vec<[u64; 2]>, reached: u64) -> RunEnd {
    match e {
        StepError::Limit { resource, detail } => RunEnd::Limit {
            samples,
            reached,
            resource,
            detail,
        },
        StepError::Interrupted => RunEnd::Interrupted,
        StepError::Failed(e) => RunEnd::Failed(crate::subject::words(&*e)),
    }
}

/// The reading of an operation that must have timed itself.
fn reading(bench: &dyn Subject, sw: &mut Stopwatch) -> Result<u64, RunEnd> {
    sw.take_ns().ok_or_else(|| {
        RunEnd::Failed(format!(
            "benchmark bug: {} did not time its operation",
            bench.info().name
        ))
    })
}

/// A run whose operation removes an item and whose undo adds one back
/// (a falling benchmark that can go both ways), seen from its other end
/// for [`Runner::updown_run`]: it holds the items removed so far (of `top`), so
/// its operation adds one and its undo removes one. A sample at k items
/// removed is at n = `top − k` items left, the n the operation met.
struct Removed<'a> {
    run: &'a mut dyn Run,
    top: u64,
}

impl Run for Removed<'_> {
    fn held(&self) -> u64 {
        self.top.saturating_sub(self.run.held())
    }

    fn op(&mut self, sw: &mut Stopwatch) -> Result<(), StepError> {
        self.run.op(sw)
    }

    fn undo(&mut self, sw: &mut Stopwatch) -> Result<(), StepError> {
        self.run.undo(sw)
    }
}

/// Largest number of up-and-down passes a run that measures both ways
/// makes ([`Runner::updown_run`]).
pub const MAX_PASSES: u32 = 8;

/// Fewest up-and-down passes a run that measures both ways makes, however
/// long a pass takes: each end of n is then timed in at least this many
/// separate spells of the run. The machine's speed wanders in spells of
/// 0.1 to 2 s (fork at a fixed n here: 88 µs for a while, then 120 µs);
/// with one pass a run times its high end in a single stretch around the
/// turn and its low end at its start and finish, so which spell fell where
/// decided each run's rise (fork: runs from −39 % to +29 % in one
/// series of 5 runs).
pub const MIN_PASSES: u32 = 4;

/// Wall time a run that measures both ways aims at: it makes as many
/// passes (from [`MIN_PASSES`] up to [`MAX_PASSES`]) as the previous run's
/// pace says fit; a run whose [`MIN_PASSES`] passes take longer takes that
/// long.
pub const PASS_BUDGET: Duration = Duration::from_millis(300);

/// Passes for the next run that measures both ways, from the time one
/// pass took so far.
fn passes_for(pass_time: Option<Duration>, budget: Duration) -> u32 {
    match pass_time {
        Some(t) if !t.is_zero() => {
            // Whole nanoseconds: 0.3 s / 50 ms is 6 passes, not 5.99….
            let fit = budget.as_nanos() / t.as_nanos();
            fit.clamp(MIN_PASSES.into(), MAX_PASSES.into()) as u32
        }
        _ => MIN_PASSES,
    }
}

/// The wall time the next run that measures both ways is expected to take
/// in `passes` passes at the pace so far: `budget` (its aim,
/// [`PASS_BUDGET`] without a time goal), or more when its passes take
/// more. Past twice this, the run ends with its next crossing
/// ([`Runner::updown_run`]).
fn run_budget(pass_time: Option<Duration>, passes: u32, budget: Duration) -> Duration {
    pass_time.map_or(budget, |t| (t * passes).max(budget))
}

/// How many passes a run that measures both ways is to make, and the wall
/// time it is expected to take ([`run_budget`]).
#[derive(Debug, Clone, Copy)]
struct PassPlan {
    passes: u32,
    budget: Duration,
}

impl PassPlan {
    /// The plan for the next run at the pace so far, aiming at `budget`.
    fn at_pace(pass_time: Option<Duration>, budget: Duration) -> PassPlan {
        let passes = passes_for(pass_time, budget);
        PassPlan {
            passes,
            budget: run_budget(pass_time, passes, budget),
        }
    }
}

/// What a warm-up took: its items, its wall time, and the time of its
/// operations alone (without starting and ending its run).
#[derive(Debug, Clone, Copy)]
struct Warm {
    items: u64,
    wall: Duration,
    ops: Duration,
}

/// What a run that measures both ways did besides its samples.
#[derive(Debug, Clone, Copy, Default)]
struct Sweeps {
    /// Crossings of the range of n in which the run timed operations.
    timed: u32,
    /// Wall time the run's operations took (from its start to its last
    /// operation; in a run of one pass too).
    took: Duration,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::Mode;
    use crate::subject::{Info, Run};
    use results::TimerKind;
    use std::sync::{Arc, Mutex};

    /// Where the tests' series run: pinned as a run pins by default.
    fn setting(clock: &Clock) -> Setting<'_> {
        Setting {
            clock,
            pin: crate::NetOptions::default().cpus.map(|c| c.0),
        }
    }

    /// What a fake run was asked to do, in order.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Event {
        /// A run started for this many items.
        Start(u64),
        /// An operation made while this many items were held.
        Op(u64),
        /// An undo that left this many items held.
        Undo(u64),
    }

    /// A benchmark whose operation adds an item (removes one when
    /// `falling`) and records `1000 + items held before it` ticks, so that
    /// a sample's ns says which state the timed operation really met.
    struct Fake {
        /// Items an operation can never go beyond.
        limit: u64,
        /// (k, m): the k-th run started (0-based) meets a limit at m items.
        limit_in_start: Option<(usize, u64)>,
        /// An operation at this many items fails.
        fail_at: Option<u64>,
        /// Only in the k-th run started, if given.
        fail_in_start: Option<usize>,
        downwards: bool,
        falling: bool,
        /// Each run started costs a different base (1000, 1400, 1800, …):
        /// run-to-run noise.
        noisy: bool,
        /// Each run started costs 10 000 ticks and these many more per
        /// item held, in turn: the runs rise by different shares.
        steps: Option<[u64; 3]>,
        /// Each operation also sleeps this long (a slow benchmark).
        op_sleep: Duration,
        log: Arc<Mutex<Vec<Event>>>,
    }

    impl Fake {
        fn new(limit: u64) -> Fake {
            Fake {
                limit,
                limit_in_start: None,
                fail_at: None,
                fail_in_start: None,
                downwards: false,
                falling: false,
                noisy: false,
                steps: None,
                op_sleep: Duration::ZERO,
                log: Arc::default(),
            }
        }

        fn events(&self) -> Vec<Event> {
            self.log.lock().unwrap().clone()
        }
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
        base: u64,
        step: u64,
        limit: u64,
        fail_at: Option<u64>,
        falling: bool,
        op_sleep: Duration,
        log: Arc<Mutex<Vec<Event>>>,
    }

    impl Subject for Fake {
        fn info(&self) -> &'static Info {
            &INFO
        }
        fn schedule(&self) -> Schedule {
            Schedule::PerItem
        }
        fn downwards(&self) -> bool {
            self.downwards
        }
        fn falling(&self) -> bool {
            self.falling
        }
        fn budgets(&self) -> Vec<(Resource, limits::Budget)> {
            Vec::new()
        }
        fn start(&self, n: u64) -> Result<Box<dyn Run>, StartError> {
            let mut log = self.log.lock().unwrap();
            let nth = log.iter().filter(|e| matches!(e, Event::Start(_))).count();
            log.push(Event::Start(n));
            let limit = match self.limit_in_start {
                Some((k, m)) if k == nth => m,
                _ => self.limit,
            };
            let fail_at = self
                .fail_at
                .filter(|_| self.fail_in_start.is_none_or(|k| k == nth));
            Ok(Box::new(FakeRun {
                held: if self.falling { n } else { 0 },
                base: match (self.noisy, self.steps) {
                    (_, Some(_)) => 10_000,
                    (true, None) => 1000 + (nth as u64 % 3) * 400,
                    (false, None) => 1000,
                },
                step: self.steps.map_or(1, |s| s[nth % 3]),
                limit,
                fail_at,
                falling: self.falling,
                op_sleep: self.op_sleep,
                log: Arc::clone(&self.log),
            }))
        }
    }

    impl Run for FakeRun {
        fn held(&self) -> u64 {
            self.held
        }
        fn op(&mut self, sw: &mut Stopwatch) -> Result<(), StepError> {
            self.log.lock().unwrap().push(Event::Op(self.held));
            if !self.op_sleep.is_zero() {
                std::thread::sleep(self.op_sleep);
            }
            if Some(self.held) == self.fail_at {
                return Err(StepError::from(format!("broke at {}", self.held)));
            }
            if self.falling {
                sw.record_ticks(self.base + self.held * self.step);
                self.held -= 1;
                return Ok(());
            }
            if self.held >= self.limit {
                return Err(StepError::Limit {
                    resource: Resource::Descriptors,
                    detail: format!("out of fakes at n = {}", self.held),
                });
            }
            sw.record_ticks(self.base + self.held * self.step);
            self.held += 1;
            Ok(())
        }
        fn undo(&mut self, _sw: &mut Stopwatch) -> Result<(), StepError> {
            if self.falling {
                self.held += 1;
            } else {
                self.held = self.held.saturating_sub(1);
            }
            self.log.lock().unwrap().push(Event::Undo(self.held));
            Ok(())
        }
    }

    #[test]
    fn runs_auto_stops_early_when_quiet_and_at_the_most_when_noisy() {
        let clock = Clock::new(TimerKind::Monotonic).unwrap();
        let setting = setting(&clock);
        let auto = |b: &Fake| {
            let plan = SeriesPlan {
                auto: Some(AutoRuns::default()),
                decide: false,
                keep_verdict: true,
                n: 200,
                runs: 12,
                warmup: Some(0),
                order: RunOrder::Passes,
                time: None,
            };
            run_series(b, None, plan, setting, &mut Progress::new(Mode::Quiet))
        };
        let quiet = auto(&Fake::new(u64::MAX));
        assert_eq!(quiet.runs.len(), 3, "known at the first look");
        assert_eq!(quiet.params.runs, 3);
        let a = &quiet.params.extra["runs_auto"];
        assert_eq!(a["stopped"], "known");
        assert_eq!(a["max"], 12);
        let mut noisy = Fake::new(u64::MAX);
        noisy.noisy = true;
        let noisy = auto(&noisy);
        assert_eq!(noisy.runs.len(), 12, "never known within ±5 %");
        let a = &noisy.params.extra["runs_auto"];
        assert_eq!(a["stopped"], "max");
        assert!(a["half_widths"][0].as_f64().unwrap() > 0.05);
        assert!(a["why"].as_str().unwrap().contains("most runs (12)"));
    }

    #[test]
    fn runs_stop_once_the_verdict_is_decided_and_keep_it() {
        let clock = Clock::new(TimerKind::Monotonic).unwrap();
        let setting = setting(&clock);
        let decide = |n: u64, noisy: bool| {
            let plan = SeriesPlan {
                auto: None,
                decide: true,
                keep_verdict: true,
                n,
                runs: 5,
                warmup: Some(0),
                order: RunOrder::Passes,
                time: None,
            };
            let mut b = Fake::new(u64::MAX);
            b.noisy = noisy;
            run_series(&b, None, plan, setting, &mut Progress::new(Mode::Quiet))
        };
        // A cost of 1000 + n ticks: +5 % over n = 50 is flat at once.
        let flat = decide(50, false);
        assert_eq!(flat.runs.len() as u32, DECIDE_MIN);
        let d = &flat.params.extra["runs_decided"];
        assert_eq!(d["stopped"], "decided");
        assert_eq!(d["runs"], 3);
        assert!(
            d["why"]
                .as_str()
                .unwrap()
                .starts_with("decided after 3 runs: O(1)")
        );
        // The verdict made on those runs is the one kept with them.
        let opts = analysis::Options::default();
        let kept = analysis::recorded::kept(&flat, &opts).expect("a kept verdict");
        assert_eq!(Ok(kept), analysis::recorded::judge_fresh(&flat, &opts));
        // Runs whose costs start at 1000, 1400 and 1800 ticks and rise by
        // n = 300 ticks: +30 %, +21 %, +17 %, around the tolerance (20 %).
        let edge = decide(300, true);
        assert_eq!(edge.runs.len(), 5, "{}", edge.params.extra["runs_decided"]);
        let d = &edge.params.extra["runs_decided"];
        assert_eq!(d["stopped"], "max");
        assert!(d["why"].as_str().unwrap().contains("most runs (5)"), "{d}");
        assert!(analysis::recorded::kept(&edge, &opts).is_some());
    }

    #[test]
    fn a_flat_rise_near_its_bounds_edge_takes_five_runs_before_it_stops() {
        let clock = Clock::new(TimerKind::Monotonic).unwrap();
        let setting = setting(&clock);
        let plan = SeriesPlan {
            auto: None,
            decide: true,
            keep_verdict: true,
            n: 120,
            runs: 8,
            warmup: Some(0),
            order: RunOrder::Passes,
            time: None,
        };
        // Runs whose costs start at 10 000 ticks and rise by 10, 7 and 8
        // ticks an item to n = 120: +12 %, +8.4 %, +9.6 %, flat by τ
        // (20 %) with a bound around half of τ.
        let mut b = Fake::new(u64::MAX);
        b.steps = Some([10, 7, 8]);
        let edge = run_series(&b, None, plan, setting, &mut Progress::new(Mode::Quiet));
        let d = &edge.params.extra["runs_decided"];
        let opts = analysis::Options::default();
        let mut three = edge.clone();
        three.runs.truncate(3);
        let v3 = analysis::recorded::judge_fresh(&three, &opts).unwrap();
        assert!(v3.decided().is_ok(), "{}", v3.words());
        assert!(v3.on_the_edge(), "{:?}: {}", v3.rise, v3.words());
        assert_eq!(edge.runs.len() as u32, DECIDE_SPLIT, "{d}");
        assert_eq!(d["stopped"], "decided", "{d}");
        let why = d["why"].as_str().unwrap();
        assert!(
            why.starts_with(
                "decided after 5 runs, the 5 a flat rise near its bound's edge asks for: O(1)"
            ),
            "{why}"
        );
        // The same runs a series of at most three makes stop at the most.
        let short = run_series(
            &b,
            None,
            SeriesPlan { runs: 3, ..plan },
            setting,
            &mut Progress::new(Mode::Quiet),
        );
        let d = &short.params.extra["runs_decided"];
        assert_eq!(short.runs.len(), 3);
        assert_eq!(d["stopped"], "max", "{d}");
        assert!(
            d["why"]
                .as_str()
                .unwrap()
                .starts_with("the most runs (3) reached; O(1)"),
            "{d}"
        );
    }

    #[test]
    fn a_series_whose_asker_judges_keeps_only_a_verdict_made_on_the_way() {
        let clock = Clock::new(TimerKind::Monotonic).unwrap();
        let setting = setting(&clock);
        let series = |decide: bool| {
            let plan = SeriesPlan {
                auto: None,
                decide,
                keep_verdict: false,
                n: 50,
                runs: if decide { 5 } else { 3 },
                warmup: Some(0),
                order: RunOrder::Passes,
                time: None,
            };
            run_series(
                &Fake::new(u64::MAX),
                None,
                plan,
                setting,
                &mut Progress::new(Mode::Quiet),
            )
        };
        // Runs given: measured, not judged; the asker judges them.
        let given = series(false);
        assert_eq!(given.runs.len(), 3);
        assert!(given.verdict.is_none());
        let opts = analysis::Options::default();
        assert!(analysis::recorded::judge_fresh(&given, &opts).is_ok());
        // Runs decided by their verdict: the one that stopped them is
        // kept, made from all of them.
        let decided = series(true);
        assert_eq!(decided.runs.len() as u32, DECIDE_MIN);
        let kept = analysis::recorded::kept(&decided, &opts).expect("a kept verdict");
        assert_eq!(Ok(kept), analysis::recorded::judge_fresh(&decided, &opts));
    }

    #[test]
    fn half_widths_follow_the_spread_of_the_runs_at_each_end() {
        let run = |k: u32, low: u64, high: u64| RunRecord {
            index: k,
            started: String::new(),
            duration_ms: 0.0,
            timer_overhead: results::Overhead {
                min_ns: 0.0,
                median_ns: 0.0,
            },
            samples: (0..100u64)
                .map(|n| [n, if n < 50 { low } else { high }])
                .collect(),
            direction: Direction::Up,
            crossings: None,
            primed: false,
            recheck: Vec::new(),
            recheck_when: None,
        };
        let same = [run(0, 100, 200), run(1, 100, 200), run(2, 100, 200)];
        assert_eq!(end_half_widths(&same), [0.0, 0.0]);
        let spread = [run(0, 90, 200), run(1, 100, 200), run(2, 110, 200)];
        let hw = end_half_widths(&spread);
        // sd 10 over mean 100, t(2) = 4.303, √3: ±24.8 %.
        assert!((hw[0] - 0.248).abs() < 0.001, "{hw:?}");
        assert_eq!(hw[1], 0.0);
        assert!(end_half_widths(&same[..1])[0].is_infinite());
    }

    fn go(b: &Fake, n: u64, runs: u32) -> BenchResult {
        let clock = Clock::new(TimerKind::Monotonic).unwrap();
        let setting = setting(&clock);
        let plan = SeriesPlan {
            auto: None,
            decide: false,
            keep_verdict: true,
            n,
            runs,
            warmup: Some(0),
            order: RunOrder::Passes,
            time: None,
        };
        run_series(b, None, plan, setting, &mut Progress::new(Mode::Quiet))
    }

    /// One run of `b` for `n` items straight through [`Runner::one_run`], in
    /// `passes` passes: its samples and how many crossings it timed.
    fn one(b: &Fake, n: u64, peak_first: bool, passes: u32) -> (Vec<[u64; 2]>, u32) {
        let passes = PassPlan {
            passes,
            budget: PASS_BUDGET,
        };
        let clock = Clock::new(TimerKind::Monotonic).unwrap();
        let setting = setting(&clock);
        let progress = Progress::new(Mode::Quiet);
        let mut sweeps = Sweeps::default();
        let runner = Runner {
            bench: b,
            variant: None,
            pin: setting.pin,
            clock: &clock,
            ascending: false,
        };
        let samples = runner
            .one_run(n, peak_first, passes, &mut sweeps, &progress)
            .ok()
            .unwrap();
        (samples, sweeps.timed)
    }

    fn ns_of(samples: &[[u64; 2]]) -> Vec<u64> {
        samples.iter().map(|s| s[0]).collect()
    }

    /// Each sample's ns is 1000 + the items the fake really held when the
    /// timed operation was made: it must agree with the sample's n.
    fn assert_timed_at_n(samples: &[[u64; 2]]) {
        for s in samples {
            assert_eq!(s[1], 1000 + s[0], "sample {s:?} timed at another n");
        }
    }

    #[test]
    fn records_every_sample_of_every_run() {
        let r = go(&Fake::new(1000), 50, 3);
        assert_eq!(r.status, Status::Ok);
        assert_eq!(r.runs.len(), 3);
        for (i, run) in r.runs.iter().enumerate() {
            assert_eq!(run.index, i as u32);
            assert_eq!(ns_of(&run.samples), (0..50).collect::<Vec<_>>());
            assert_timed_at_n(&run.samples);
            assert_eq!(run.direction, Direction::Up);
            assert!(run.timer_overhead.median_ns > 0.0);
        }
    }

    /// The n a run that measures both ways times, in order, below `top`,
    /// when it crosses the range 2·`passes` times: starting up (or down
    /// when `peak_first`), crossing h times the n with selector h.
    fn both_ways(top: u64, peak_first: bool, passes: u64) -> Vec<u64> {
        let c = 2 * passes;
        let sel = |k: u64| if peak_first { (k + 1) % c } else { k % c };
        let mut v = Vec::new();
        for h in 0..c {
            let down = (h % 2 == 0) == peak_first;
            let ks: Vec<u64> = if down {
                (0..top).rev().collect()
            } else {
                (0..top).collect()
            };
            v.extend(ks.into_iter().filter(|&k| sel(k) == h));
        }
        v
    }

    /// What run `r` of a downward benchmark timed is `both_ways` with the
    /// crossings it recorded.
    fn assert_both_ways(r: usize, run: &RunRecord, top: u64) {
        let peak_first = r % 2 == 1;
        let dir = if peak_first {
            Direction::DownUp
        } else {
            Direction::UpDown
        };
        assert_eq!(run.direction, dir, "run {r}");
        let crossings = u64::from(run.crossings.expect("crossings recorded"));
        assert!(crossings >= 2 && crossings.is_multiple_of(2), "run {r}");
        assert!(crossings <= 2 * u64::from(MAX_PASSES));
        assert_eq!(
            ns_of(&run.samples),
            both_ways(top, peak_first, crossings / 2),
            "run {r}"
        );
        let mut every: Vec<u64> = ns_of(&run.samples);
        every.sort_unstable();
        assert_eq!(every, (0..top).collect::<Vec<_>>(), "each n once, run {r}");
    }

    #[test]
    fn one_pass_is_even_n_up_and_odd_n_down_or_odd_n_down_and_even_n_up() {
        assert_eq!(both_ways(5, false, 1), vec![0, 2, 4, 3, 1]);
        assert_eq!(both_ways(5, true, 1), vec![3, 1, 0, 2, 4]);
        // Crossing 0 up: 0, 4; 1 down: 5, 1; 2 up: 2, 6; 3 down: 7, 3.
        assert_eq!(both_ways(8, false, 2), vec![0, 4, 5, 1, 2, 6, 7, 3]);
    }

    #[test]
    fn a_run_in_three_passes_crosses_six_times_timing_each_n_once() {
        let b = Fake {
            downwards: true,
            ..Fake::new(1000)
        };
        for peak_first in [false, true] {
            let (samples, timed) = one(&b, 40, peak_first, 3);
            assert_eq!(timed, 6);
            assert_eq!(ns_of(&samples), both_ways(40, peak_first, 3));
            assert_timed_at_n(&samples);
        }
        // Never more crossings than items.
        let (samples, timed) = one(&b, 3, false, 8);
        assert_eq!(timed, 2);
        assert_eq!(ns_of(&samples), vec![0, 2, 1]);
    }

    #[test]
    fn passes_follow_the_pace_within_bounds() {
        assert_eq!(passes_for(None, PASS_BUDGET), MIN_PASSES);
        assert_eq!(passes_for(Some(Duration::ZERO), PASS_BUDGET), MIN_PASSES);
        assert_eq!(passes_for(Some(PASS_BUDGET * 2), PASS_BUDGET), MIN_PASSES);
        assert_eq!(passes_for(Some(PASS_BUDGET / 6), PASS_BUDGET), 6);
        assert_eq!(
            passes_for(Some(Duration::from_nanos(1)), PASS_BUDGET),
            MAX_PASSES
        );
    }

    #[test]
    fn a_run_whose_passes_are_slow_still_makes_the_fewest_passes() {
        // 24 items at 15 ms an operation: a pass takes about 0.4 s (0.54 s
        // by the warm-up's guess), so no second pass fits in PASS_BUDGET;
        // the run makes MIN_PASSES all the same and is not cut short.
        let b = Fake {
            downwards: true,
            op_sleep: Duration::from_millis(15),
            ..Fake::new(1000)
        };
        let clock = Clock::new(TimerKind::Monotonic).unwrap();
        let setting = setting(&clock);
        let plan = SeriesPlan {
            auto: None,
            decide: false,
            keep_verdict: true,
            n: 24,
            runs: 1,
            warmup: Some(4),
            order: RunOrder::Passes,
            time: None,
        };
        let r = run_series(&b, None, plan, setting, &mut Progress::new(Mode::Quiet));
        assert_eq!(r.status, Status::Ok);
        assert_eq!(r.runs[0].crossings, Some(2 * MIN_PASSES));
        assert_both_ways(0, &r.runs[0], 24);
        assert_timed_at_n(&r.runs[0].samples);
    }

    #[test]
    fn a_series_keeps_to_its_share_of_a_time_goal_by_lowering_n_and_runs() {
        // 1 000 items at 0.2 ms an operation: a pass up and down takes about
        // 0.5 s, four passes 2 s a run, three runs 6 s; the share is 1.5 s.
        let b = Fake {
            downwards: true,
            noisy: true,
            op_sleep: Duration::from_micros(200),
            ..Fake::new(10_000)
        };
        let clock = Clock::new(TimerKind::Monotonic).unwrap();
        let plan = SeriesPlan {
            auto: None,
            decide: true,
            keep_verdict: true,
            n: 1000,
            runs: DECIDE_MAX,
            warmup: Some(50),
            order: RunOrder::Passes,
            time: Some(TimeShare {
                allowance: Duration::from_millis(1500),
                goal: Duration::from_secs(60),
            }),
        };
        let r = run_series(
            &b,
            None,
            plan,
            setting(&clock),
            &mut Progress::new(Mode::Quiet),
        );
        assert_eq!(r.status, Status::Capped, "{:?}", r.message);
        let cap = &r.caps[0];
        assert_eq!((cap.resource.as_str(), cap.requested), ("time", 1000));
        assert!(
            (TIME_MIN_ITEMS..1000).contains(&cap.reached) && r.params.n == cap.reached,
            "{cap:?}"
        );
        assert!(cap.reason.contains("time goal of 60 s"), "{}", cap.reason);
        for run in &r.runs {
            assert!(run.samples.iter().all(|s| s[0] <= cap.reached));
        }
        // No run beyond the least once another would not fit: the noisy
        // runs are seldom decided at three, and never run to eight here.
        let stopped = &r.params.extra["runs_decided"]["stopped"];
        assert!(r.runs.len() < DECIDE_MAX as usize, "{} runs", r.runs.len());
        if stopped == "time" {
            let why = r.params.extra["runs_decided"]["why"].as_str().unwrap();
            assert!(why.starts_with("no time for another run"), "{why}");
        }
    }

    #[test]
    fn a_time_goal_in_words() {
        assert_eq!(goal_words(Duration::from_secs(60)), "60 s");
        assert_eq!(goal_words(Duration::from_millis(7500)), "7.5 s");
        assert_eq!(goal_words(Duration::from_secs(300)), "5 min");
    }

    #[test]
    fn order_up_makes_one_ascending_pass_per_run_even_where_passes_could_go_down() {
        for (downwards, falling) in [(true, false), (false, false), (false, true)] {
            let b = Fake {
                downwards,
                falling,
                ..Fake::new(1000)
            };
            let clock = Clock::new(TimerKind::Monotonic).unwrap();
            let plan = SeriesPlan {
                auto: None,
                decide: false,
                keep_verdict: true,
                n: 40,
                runs: 2,
                warmup: Some(0),
                order: RunOrder::Up,
                time: None,
            };
            let r = run_series(
                &b,
                None,
                plan,
                setting(&clock),
                &mut Progress::new(Mode::Quiet),
            );
            assert_eq!(r.status, Status::Ok, "{:?}", r.message);
            for run in &r.runs {
                let ns: Vec<u64> = run.samples.iter().map(|s| s[0]).collect();
                if falling {
                    // Its n falls by itself: one pass down, as always.
                    assert_eq!(run.direction, Direction::Down);
                    continue;
                }
                assert_eq!(run.direction, Direction::Up);
                assert_eq!(ns, (0..40).collect::<Vec<u64>>(), "{downwards}");
                assert_eq!((run.crossings, &run.recheck), (None, &Vec::new()));
            }
        }
        assert_eq!(RunOrder::parse("up"), Ok(RunOrder::Up));
        assert_eq!(
            RunOrder::parse(RunOrder::Passes.name()),
            Ok(RunOrder::Passes)
        );
        assert!(
            RunOrder::parse("down")
                .unwrap_err()
                .contains("\"down\" is no run order")
        );
    }

    #[test]
    fn levels_up_visit_each_level_once_with_all_its_operations() {
        let s = Schedule::Levels {
            levels: 4,
            per_level: 3,
        };
        let plan = s.plan_up(100);
        assert_eq!(plan.len() as u64, s.ops(100));
        let firsts: Vec<u64> = plan.iter().flatten().copied().collect();
        assert_eq!(firsts, [0, 25, 50, 75]);
        assert!(
            plan.chunks(3)
                .all(|c| c[0].is_some() && c[1..].iter().all(Option::is_none))
        );
        assert_eq!(Schedule::PerItem.plan_up(5), vec![None; 5]);
    }

    #[test]
    fn slow_passes_get_the_time_their_fewest_passes_take() {
        // Unknown pace: the plain budget.
        assert_eq!(run_budget(None, MIN_PASSES, PASS_BUDGET), PASS_BUDGET);
        // Fast passes: as many as fit in the budget.
        let fast = PASS_BUDGET / 8;
        let passes = passes_for(Some(fast), PASS_BUDGET);
        assert_eq!(run_budget(Some(fast), passes, PASS_BUDGET), PASS_BUDGET);
        // A pass of 0.6 s (fork at n = 2 000 here): the fewest passes,
        // and the time they take.
        let slow = Duration::from_millis(600);
        let plan = PassPlan::at_pace(Some(slow), PASS_BUDGET);
        assert_eq!(plan.passes, MIN_PASSES);
        assert_eq!(plan.budget, slow * MIN_PASSES);
        // Under a time goal's shorter aim, fast passes are fewer.
        let plan = PassPlan::at_pace(Some(fast), PASS_BUDGET / 2);
        assert_eq!((plan.passes, plan.budget), (MIN_PASSES, PASS_BUDGET / 2));
    }

    #[test]
    fn runs_of_a_downward_benchmark_alternate_up_down_and_down_up() {
        let b = Fake {
            downwards: true,
            ..Fake::new(1000)
        };
        let r = go(&b, 50, 3);
        assert_eq!(r.status, Status::Ok);
        assert_eq!(r.runs.len(), 3);
        for (i, run) in r.runs.iter().enumerate() {
            assert_both_ways(i, run, 50);
            assert_timed_at_n(&run.samples);
            assert!(run.primed, "each operation timed going up follows an undo");
            assert!(
                run.recheck.is_empty(),
                "no re-timing when a run can go down"
            );
            assert_eq!(run.recheck_when, None);
        }
    }

    #[test]
    fn an_updown_run_times_even_n_going_up_then_odd_n_coming_down() {
        let b = Fake {
            downwards: true,
            ..Fake::new(1000)
        };
        let (samples, timed) = one(&b, 4, false, 1);
        assert_eq!(timed, 2);
        use Event::*;
        let events = b.events();
        let start = events.iter().rposition(|e| *e == Start(4)).unwrap();
        assert_eq!(
            events[start..],
            [
                Start(4),
                // Up to n: every operation made, the even n timed, each
                // after an untimed operation and its undo.
                Op(0),
                Undo(0),
                Op(0),
                Op(1),
                Op(2),
                Undo(2),
                Op(2),
                Op(3),
                // k = 3 (odd): remove one, time the operation at k, remove
                // it; k = 2 (even): remove one; and so on.
                Undo(3),
                Op(3),
                Undo(3),
                Undo(2),
                Undo(1),
                Op(1),
                Undo(1),
                Undo(0),
            ]
        );
        assert_eq!(samples, vec![[0, 1000], [2, 1002], [3, 1003], [1, 1001]]);
        // A whole run makes at least MIN_PASSES passes, here as many as
        // 4 items allow (2).
        let r = go(&b, 4, 1);
        assert_eq!(r.status, Status::Ok);
        assert_eq!(r.runs[0].crossings, Some(4));
        assert_both_ways(0, &r.runs[0], 4);
    }

    #[test]
    fn a_downup_run_grows_untimed_times_odd_n_coming_down_then_even_n_going_up() {
        let b = Fake {
            downwards: true,
            ..Fake::new(1000)
        };
        let (samples, timed) = one(&b, 4, true, 1);
        assert_eq!(timed, 2);
        use Event::*;
        let events = b.events();
        let start = events.iter().rposition(|e| *e == Start(4)).unwrap();
        assert_eq!(
            events[start..],
            [
                Start(4),
                // Up to n, untimed.
                Op(0),
                Op(1),
                Op(2),
                Op(3),
                // Down, timing odd k.
                Undo(3),
                Op(3),
                Undo(3),
                Undo(2),
                Undo(1),
                Op(1),
                Undo(1),
                Undo(0),
                // Up again, timing even k, each after an operation and
                // its undo.
                Op(0),
                Undo(0),
                Op(0),
                Op(1),
                Op(2),
                Undo(2),
                Op(2),
                Op(3),
            ]
        );
        assert_eq!(samples, vec![[3, 1003], [1, 1001], [0, 1000], [2, 1002]]);
    }

    #[test]
    fn a_limit_met_while_growing_caps_n_and_the_run_comes_down_from_it() {
        // Run 0 reaches 50; run 1 meets a limit at 30 while growing; run 2
        // aims at 30.
        let b = Fake {
            downwards: true,
            limit_in_start: Some((1, 30)),
            ..Fake::new(1000)
        };
        let r = go(&b, 50, 3);
        assert_eq!(r.status, Status::Capped);
        assert_eq!(r.params.n, 30);
        assert_eq!(r.caps.len(), 1);
        assert_eq!(r.caps[0].reached, 30);
        assert_eq!(r.caps[0].requested, 50);
        assert_eq!(r.caps[0].resource, "descriptors");
        assert!(r.caps[0].reason.contains("out of fakes at n = 30"));
        assert_both_ways(0, &r.runs[0], 50);
        assert_both_ways(1, &r.runs[1], 30);
        assert_both_ways(2, &r.runs[2], 30);
        for run in &r.runs {
            assert_timed_at_n(&run.samples);
        }
    }

    #[test]
    fn a_limit_at_the_first_item_of_a_down_run_fails_as_in_an_up_run() {
        let b = Fake {
            downwards: true,
            limit_in_start: Some((1, 0)),
            ..Fake::new(1000)
        };
        let r = go(&b, 20, 2);
        assert_eq!(r.status, Status::Failed);
        assert!(r.message.unwrap().contains("before the first operation"));
        assert_eq!(r.runs.len(), 1, "the finished run is kept");
    }

    #[test]
    fn a_failure_in_a_down_run_keeps_the_runs_that_finished() {
        let b = Fake {
            downwards: true,
            fail_at: Some(10),
            fail_in_start: Some(1),
            ..Fake::new(1000)
        };
        let r = go(&b, 20, 3);
        assert_eq!(r.status, Status::Failed);
        assert!(r.message.as_deref().unwrap().contains("broke at 10"));
        assert_eq!(r.runs.len(), 1);
        assert_eq!(r.runs[0].direction, Direction::UpDown);
    }

    #[test]
    fn a_benchmark_that_cannot_go_down_is_retimed_at_low_n_after_each_run() {
        let b = Fake::new(1000);
        let r = go(&b, 300, 2);
        assert_eq!(r.status, Status::Ok);
        let k = recheck_ops(300);
        assert_eq!(k, 30);
        for run in &r.runs {
            assert_eq!(run.direction, Direction::Up);
            assert!(!run.primed, "nothing to undo, nothing primed");
            assert_eq!(ns_of(&run.samples), (0..300).collect::<Vec<_>>());
            assert_eq!(run.recheck_when, Some(RecheckWhen::After));
            assert_eq!(ns_of(&run.recheck), (0..k).collect::<Vec<_>>());
            assert_timed_at_n(&run.recheck);
        }
        // Run, then a fresh run (started for the same n) for the
        // re-timing, twice; each re-timing's operations follow its run's.
        use Event::*;
        let events = b.events();
        let starts: Vec<usize> = (0..events.len())
            .filter(|&i| matches!(events[i], Start(_)))
            .collect();
        assert_eq!(starts.len(), 4);
        for (j, &i) in starts.iter().enumerate() {
            assert_eq!(events[i], Start(300));
            let ops = starts.get(j + 1).unwrap_or(&events.len()) - i - 1;
            assert_eq!(ops as u64, if j % 2 == 0 { 300 } else { k });
            assert_eq!(events[i + ops], Op(if j % 2 == 0 { 299 } else { k - 1 }));
        }
    }

    #[test]
    fn a_falling_benchmark_is_retimed_at_low_n_before_each_run() {
        let b = Fake {
            falling: true,
            ..Fake::new(1000)
        };
        let r = go(&b, 300, 2);
        assert_eq!(r.status, Status::Ok);
        let k = recheck_ops(300);
        for run in &r.runs {
            assert_eq!(run.direction, Direction::Down);
            assert_eq!(ns_of(&run.samples), (1..=300).rev().collect::<Vec<_>>());
            assert_eq!(run.recheck_when, Some(RecheckWhen::Before));
            // A fresh run of k items, removed one by one: n = k … 1.
            assert_eq!(ns_of(&run.recheck), (1..=k).rev().collect::<Vec<_>>());
            assert_timed_at_n(&run.samples);
            assert_timed_at_n(&run.recheck);
        }
        use Event::*;
        let starts: Vec<Event> = b
            .events()
            .into_iter()
            .filter(|e| matches!(e, Start(_)))
            .collect();
        assert_eq!(starts, [Start(k), Start(300), Start(k), Start(300)]);
    }

    #[test]
    fn a_falling_benchmark_that_can_go_back_up_is_timed_both_ways() {
        let b = Fake {
            falling: true,
            downwards: true,
            ..Fake::new(1000)
        };
        let r = go(&b, 300, 3);
        assert_eq!(r.status, Status::Ok);
        for (i, run) in r.runs.iter().enumerate() {
            // Down first in even runs, up first (all removed untimed) in
            // odd ones; no re-timing.
            let want = if i % 2 == 0 {
                Direction::DownUp
            } else {
                Direction::UpDown
            };
            assert_eq!(run.direction, want, "run {i}");
            assert!(run.recheck.is_empty() && run.recheck_when.is_none());
            let c = run.crossings.unwrap();
            assert!(c >= 2 && c % 2 == 0, "{c}");
            // Every n from 300 down to 1 timed once, at the n it met.
            let mut ns = ns_of(&run.samples);
            assert_eq!(run.samples.len(), 300);
            ns.sort_unstable();
            assert_eq!(ns, (1..=300).collect::<Vec<_>>());
            assert_timed_at_n(&run.samples);
            // An even run times high n first, an odd one low n (within
            // the crossings' spacing of the ends).
            let first = run.samples[0][0];
            if i % 2 == 0 {
                assert!(first > 300 - c as u64, "run {i} began at n = {first}");
            } else {
                assert!(first <= c as u64, "run {i} began at n = {first}");
            }
        }
        // One start per run, for 300 items; never more than 300 held.
        use Event::*;
        let events = b.events();
        let starts = events.iter().filter(|e| matches!(e, Start(_))).count();
        assert_eq!(starts, 3);
        assert!(events.iter().all(|e| match e {
            Start(k) | Op(k) | Undo(k) => *k <= 300,
        }));
    }

    #[test]
    fn a_limit_met_while_running_caps_n_and_says_why() {
        let r = go(&Fake::new(30), 50, 2);
        assert_eq!(r.status, Status::Capped);
        assert_eq!(r.params.n, 30);
        assert_eq!(r.params.requested_n, 50);
        assert_eq!(r.runs.len(), 2);
        assert!(r.runs.iter().all(|x| x.samples.len() == 30));
        assert_eq!(r.caps.len(), 1);
        assert_eq!(r.caps[0].reached, 30);
        assert_eq!(r.caps[0].resource, "descriptors");
        assert!(r.caps[0].reason.contains("out of fakes"));
        // The re-timing after each run aims at the n reached.
        assert!(r.runs.iter().all(|x| x.recheck.len() == 20));
    }

    #[test]
    fn a_failure_keeps_the_runs_that_finished() {
        // Fails in every run at item 20: the first run already fails.
        let r = go(
            &Fake {
                fail_at: Some(20),
                ..Fake::new(1000)
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

    #[test]
    fn recheck_ops_is_the_lowest_tenth_bounded() {
        assert_eq!(recheck_ops(0), 0);
        assert_eq!(recheck_ops(5), 5);
        assert_eq!(recheck_ops(40), 20);
        assert_eq!(recheck_ops(300), 30);
        assert_eq!(recheck_ops(2000), 200);
        assert_eq!(recheck_ops(1_000_000), 500);
    }

    #[test]
    fn directions_and_rechecks_follow_the_order() {
        assert_eq!(Order::Levels.direction(0), Direction::UpDown);
        assert_eq!(Order::Levels.direction(1), Direction::DownUp);
        assert_eq!(Order::UpDown.direction(2), Direction::UpDown);
        assert_eq!(Order::UpDown.direction(3), Direction::DownUp);
        assert_eq!(Order::Levels.recheck(), None);
        assert_eq!(Order::UpDown.recheck(), None);
        assert_eq!(Order::Rising.direction(1), Direction::Up);
        assert_eq!(Order::Falling.direction(1), Direction::Down);
        assert!(!Order::Falling.peak_first(1), "its start() already holds n");
        let per_item = Schedule::PerItem;
        assert_eq!(Order::UpDown.units(0, per_item, 100), 400);
        assert_eq!(Order::UpDown.units(1, per_item, 100), 500);
        assert_eq!(Order::Rising.units(1, per_item, 100), 120);
    }
}
