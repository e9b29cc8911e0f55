//! Sweeps: one workload's throughput measured at a list of levels
//! (connections, clients, database size …), the DragonFly method: at each
//! level a heat-up, then K samples of T seconds, every sample kept and the
//! mean of the last three the level's figure. While a level's samples run,
//! a sampler reads how busy the CPUs are and at what clock, for the
//! "load × frequency" curve: [`sys::cpu_ticks`] and
//! [`sys::cpu_clocks_mhz`], from /proc and sysfs on Linux, sysctl
//! and Mach calls on the BSDs and macOS. Where the system tells nothing,
//! the level has no CPU figures.
//!
//! The workload supplies one thing: a [`LevelRunner`] that runs a level and
//! returns its samples. Everything else — order, progress with ETA over the
//! whole sweep, ^C, CPU sampling, the figure — is here.

use super::progress::Progress;
use results::{SweepLevel, SweepSample, SweepStats};
use std::collections::BTreeMap;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use sys::CpuTicks;

/// How a sweep runs.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPlan {
    /// What the levels count (`connections`, `clients`).
    pub variable: String,
    /// The unit of the figure (`req/s`, `TPS`).
    pub unit: String,
    /// The levels, in the order run.
    pub levels: Vec<f64>,
    /// The level per-unit efficiency is normalised to.
    pub baseline: f64,
    /// Whether the knee is judged per level unit (`per-unit`) or on the
    /// figure itself (`figure`).
    pub knee_on: &'static str,
    /// Unmeasured time before each level's samples.
    pub heat_up: Duration,
    /// Samples per level.
    pub samples: u32,
    /// Length of one sample.
    pub sample: Duration,
    /// How many of the last samples make the level's figure.
    pub figure_of_last: u32,
    /// The workload counts failed calls by call and errno (each level's
    /// `failures`), so none counted means none failed.
    pub counts_failures: bool,
}

impl SweepPlan {
    /// The planned length of the whole sweep.
    pub fn planned(&self) -> Duration {
        self.level_time() * self.levels.len() as u32
    }

    /// The planned length of one level: its heat-up and its samples.
    pub fn level_time(&self) -> Duration {
        self.heat_up + self.sample * self.samples
    }
}

/// What one level gave.
#[derive(Debug, Clone, Default)]
pub struct LevelOutcome {
    /// The samples that finished, in order.
    pub samples: Vec<SweepSample>,
    /// When the measured samples ran (after the heat-up), for the CPU
    /// figures; `None` if none ran.
    pub window: Option<(Instant, Instant)>,
    /// The level's own parameters.
    pub params: BTreeMap<String, serde_json::Value>,
    /// Why the level did not finish.
    pub error: Option<String>,
    /// Failed calls and refusals, by what failed.
    pub failures: BTreeMap<String, u64>,
}

/// Runs one level of a sweep: the heat-up, then `plan.samples` samples of
/// `plan.sample`, stopping early (with what finished) when
/// [`sys::stop::interrupted`].
pub trait LevelRunner {
    /// Runs level `level`.
    fn run_level(&mut self, level: f64, plan: &SweepPlan) -> LevelOutcome;
}

impl<F: FnMut(f64, &SweepPlan) -> LevelOutcome> LevelRunner for F {
    fn run_level(&mut self, level: f64, plan: &SweepPlan) -> LevelOutcome {
        self(level, plan)
    }
}

/// Runs every level of `plan` in order; a level that fails is recorded
/// with its error and the sweep goes on (a later level may still run), a
/// ^C ends it with the levels so far.
pub fn run(plan: &SweepPlan, progress: &mut Progress, runner: &mut dyn LevelRunner) -> SweepStats {
    let planned = plan.planned();
    let per_level = planned.as_secs() / plan.levels.len().max(1) as u64;
    let mut levels = Vec::with_capacity(plan.levels.len());
    for (i, &level) in plan.levels.iter().enumerate() {
        if sys::stop::interrupted() {
            break;
        }
        progress.phase(&format!(
            "{} {} ({}/{})",
            plan.variable,
            analysis::sweep::fmt_level(level),
            i + 1,
            plan.levels.len()
        ));
        levels.push(measure(plan, level, runner));
        progress.advance(per_level);
    }
    SweepStats {
        variable: plan.variable.clone(),
        unit: plan.unit.clone(),
        baseline: plan.baseline,
        knee_on: plan.knee_on.to_string(),
        heat_up_s: plan.heat_up.as_secs_f64(),
        sample_s: plan.sample.as_secs_f64(),
        samples: plan.samples,
        figure_of_last: plan.figure_of_last,
        cpus: sys::cpu_count(),
        counts_failures: plan.counts_failures,
        levels,
    }
}

/// Runs one level with the CPUs sampled: the level as recorded.
fn measure(plan: &SweepPlan, level: f64, runner: &mut dyn LevelRunner) -> SweepLevel {
    let sampler = Sampler::start(Duration::from_millis(500));
    let out = runner.run_level(level, plan);
    let snaps = sampler.finish();
    let (cpu_busy, busy_mhz) = match out.window {
        Some((from, to)) => cpu_figures(&snaps, from, to),
        None => (None, None),
    };
    SweepLevel {
        level,
        value: figure(&out.samples, plan.figure_of_last),
        samples: out.samples,
        cpu_busy,
        busy_mhz,
        params: out.params,
        error: out.error,
        failures: out.failures,
    }
}

/// The highest level that passed with every level below it (RFC 2544's
/// throughput over the levels run); `levels` as (level, passed), in any
/// order.
pub fn highest_passing(levels: &[(f64, bool)]) -> Option<f64> {
    let (lo, _) = split(levels);
    lo
}

/// The highest level of the passing prefix, and the first level above it
/// (which failed).
fn split(levels: &[(f64, bool)]) -> (Option<f64>, Option<f64>) {
    let mut v = levels.to_vec();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let passed = v.iter().take_while(|(_, ok)| *ok).count();
    (
        passed.checked_sub(1).map(|i| v[i].0),
        v.get(passed).map(|l| l.0),
    )
}

/// The bounds a search narrows: the highest level that passed with every
/// level below it (0 when the lowest failed), and the lowest level above
/// it that failed; `None` when every level passed.
pub fn search_bounds(levels: &[(f64, bool)]) -> Option<(f64, f64)> {
    let (lo, hi) = split(levels);
    Some((lo.unwrap_or(0.0), hi?))
}

/// RFC 2544's binary search for the highest level that passes, after the
/// levels of `plan` ran into `stats`: up to `steps` more levels, each
/// halfway (rounded to a whole level) between the highest level that
/// passed with every level below it and the lowest that failed above it,
/// until the two are within `resolution` (a share of the failed level)
/// or ^C. Each is recorded after the plan's levels with its `search_step`
/// (1, 2, …) in its params; returns how many ran.
pub fn search(
    plan: &SweepPlan,
    stats: &mut SweepStats,
    progress: &mut Progress,
    runner: &mut dyn LevelRunner,
    passes: &dyn Fn(&SweepLevel) -> bool,
    steps: u32,
    resolution: f64,
) -> u32 {
    let per_level = plan.level_time().as_secs();
    for k in 1..=steps {
        if sys::stop::interrupted() {
            return k - 1;
        }
        let seen: Vec<(f64, bool)> = stats.levels.iter().map(|l| (l.level, passes(l))).collect();
        let Some((lo, hi)) = search_bounds(&seen) else {
            return k - 1;
        };
        let mid = ((lo + hi) / 2.0).round();
        if hi - lo <= resolution * hi || mid <= lo || mid >= hi {
            return k - 1;
        }
        progress.phase(&format!(
            "{} {} (search {k}/{steps}: between {} and {})",
            plan.variable,
            analysis::sweep::fmt_level(mid),
            analysis::sweep::fmt_level(lo),
            analysis::sweep::fmt_level(hi),
        ));
        let mut level = measure(plan, mid, runner);
        level
            .params
            .insert("search_step".into(), serde_json::json!(k));
        stats.levels.push(level);
        progress.advance(per_level);
    }
    steps
}

/// The mean of the last `last` samples' values (fewer when fewer ran).
pub fn figure(samples: &[SweepSample], last: u32) -> Option<f64> {
    let tail = &samples[samples.len().saturating_sub(last.max(1) as usize)..];
    (!tail.is_empty()).then(|| tail.iter().map(|s| s.value).sum::<f64>() / tail.len() as f64)
}

/// One reading of the CPUs.
#[derive(Debug, Clone)]
struct Snapshot {
    at: Instant,
    ticks: Vec<CpuTicks>,
    mhz: Option<Vec<f64>>,
}

impl Snapshot {
    fn take() -> Option<Snapshot> {
        Some(Snapshot {
            at: Instant::now(),
            ticks: sys::cpu_ticks()?,
            mhz: sys::cpu_clocks_mhz(),
        })
    }
}

/// Reads the CPUs at a fixed interval on a thread of its own.
struct Sampler {
    stop: mpsc::Sender<()>,
    thread: std::thread::JoinHandle<Vec<Snapshot>>,
}

impl Sampler {
    fn start(interval: Duration) -> Sampler {
        let (stop, rx) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let mut v: Vec<Snapshot> = Snapshot::take().into_iter().collect();
            while let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(interval) {
                v.extend(Snapshot::take());
            }
            v.extend(Snapshot::take());
            v
        });
        Sampler { stop, thread }
    }

    fn finish(self) -> Vec<Snapshot> {
        let _ = self.stop.send(());
        self.thread.join().unwrap_or_default()
    }
}

/// Busy share of all CPUs, and the mean clock of the busy ones (each
/// CPU's clock at the end of an interval weighted by its busy ticks in
/// it), over the snapshots' intervals that overlap `from..to`.
fn cpu_figures(snaps: &[Snapshot], from: Instant, to: Instant) -> (Option<f64>, Option<f64>) {
    let (mut busy, mut total, mut weighted, mut weight) = (0u64, 0u64, 0.0, 0.0);
    for w in snaps.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        if b.at <= from || a.at >= to || a.ticks.len() != b.ticks.len() {
            continue;
        }
        for (cpu, (x, y)) in a.ticks.iter().zip(&b.ticks).enumerate() {
            let db = y.busy.saturating_sub(x.busy);
            busy += db;
            total += y.total.saturating_sub(x.total);
            if let Some(m) = b.mhz.as_ref().and_then(|m| m.get(cpu)) {
                weighted += db as f64 * m;
                weight += db as f64;
            }
        }
    }
    (
        (total > 0).then(|| busy as f64 / total as f64),
        (weight > 0.0).then(|| weighted / weight),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(value: f64) -> SweepSample {
        SweepSample {
            t: 0.0,
            seconds: 1.0,
            value,
            latency_ns: None,
            mean_latency_ns: None,
            errors: 0,
        }
    }

    #[test]
    fn the_figure_is_the_mean_of_the_last_samples() {
        let s: Vec<_> = [10.0, 20.0, 30.0, 40.0, 50.0].map(sample).into();
        assert_eq!(figure(&s, 3), Some(40.0));
        assert_eq!(figure(&s[..2], 3), Some(15.0));
        assert_eq!(figure(&[], 3), None);
    }

    #[test]
    fn cpu_figures_weigh_clocks_by_busy_time() {
        let t0 = Instant::now();
        let snap = |dt: u64, busy: [u64; 2], mhz: [f64; 2]| Snapshot {
            at: t0 + Duration::from_secs(dt),
            ticks: busy
                .iter()
                .map(|&b| CpuTicks {
                    busy: b,
                    total: dt * 100,
                    steal: None,
                })
                .collect(),
            mhz: Some(mhz.into()),
        };
        // CPU 0 busy 75 of 100 ticks at 3000 MHz, CPU 1 busy 25 at 1000.
        let snaps = [
            snap(0, [0, 0], [0.0, 0.0]),
            snap(1, [75, 25], [3000.0, 1000.0]),
        ];
        let (busy, mhz) = cpu_figures(&snaps, t0, t0 + Duration::from_secs(1));
        assert!((busy.unwrap() - 0.5).abs() < 1e-9);
        assert!((mhz.unwrap() - 2500.0).abs() < 1e-9);
        // Outside the window: nothing.
        let later = t0 + Duration::from_secs(5);
        assert_eq!(
            cpu_figures(&snaps, later, later + Duration::from_secs(1)),
            (None, None)
        );
    }

    #[test]
    fn levels_run_in_order_with_their_figures_and_errors() {
        let plan = SweepPlan {
            variable: "clients".into(),
            unit: "TPS".into(),
            levels: vec![1.0, 2.0, 4.0],
            baseline: 1.0,
            knee_on: "per-unit",
            heat_up: Duration::ZERO,
            samples: 4,
            sample: Duration::from_millis(1),
            figure_of_last: 3,
            counts_failures: false,
        };
        let mut seen = Vec::new();
        let mut runner = |level: f64, p: &SweepPlan| {
            seen.push(level);
            let start = Instant::now();
            if level == 2.0 {
                return LevelOutcome {
                    error: Some("too many clients".into()),
                    ..LevelOutcome::default()
                };
            }
            LevelOutcome {
                samples: (0..p.samples)
                    .map(|k| sample(level * 100.0 + k as f64))
                    .collect(),
                window: Some((start, Instant::now())),
                ..LevelOutcome::default()
            }
        };
        let mut progress = Progress::new(super::super::progress::Mode::Quiet);
        let s = run(&plan, &mut progress, &mut runner);
        assert_eq!(seen, vec![1.0, 2.0, 4.0]);
        assert_eq!(s.levels.len(), 3);
        assert_eq!(s.levels[0].value, Some(102.0)); // mean of 101, 102, 103
        assert_eq!(s.levels[1].value, None);
        assert_eq!(s.levels[1].error.as_deref(), Some("too many clients"));
        assert_eq!(s.levels[2].value, Some(402.0));
        assert_eq!(s.levels[2].samples.len(), 4);
        assert_eq!(
            (s.variable.as_str(), s.samples, s.figure_of_last),
            ("clients", 4, 3)
        );
    }

    #[test]
    fn search_bounds_take_the_passing_prefix() {
        assert_eq!(search_bounds(&[]), None);
        assert_eq!(search_bounds(&[(1.0, true), (2.0, true)]), None);
        assert_eq!(
            search_bounds(&[(40.0, false), (10.0, true), (20.0, true)]),
            Some((20.0, 40.0))
        );
        // A pass above a failure does not count: the failure bounds.
        assert_eq!(
            search_bounds(&[(10.0, true), (20.0, false), (30.0, true)]),
            Some((10.0, 20.0))
        );
        assert_eq!(search_bounds(&[(10.0, false)]), Some((0.0, 10.0)));
        assert_eq!(highest_passing(&[(10.0, false)]), None);
        assert_eq!(
            highest_passing(&[(30.0, true), (10.0, true), (20.0, false)]),
            Some(10.0)
        );
        assert_eq!(highest_passing(&[(3.0, true), (1.0, true)]), Some(3.0));
    }

    #[test]
    fn a_search_narrows_to_the_highest_passing_level() {
        let plan = SweepPlan {
            variable: "rate".into(),
            unit: "pps".into(),
            levels: vec![1000.0, 10_000.0, 100_000.0],
            baseline: 1000.0,
            knee_on: "per-unit",
            heat_up: Duration::ZERO,
            samples: 1,
            sample: Duration::from_millis(1),
            figure_of_last: 1,
            counts_failures: false,
        };
        // Levels up to 37 000 pass.
        let mut runner = |level: f64, _: &SweepPlan| {
            let mut out = LevelOutcome {
                samples: vec![sample(level)],
                ..LevelOutcome::default()
            };
            out.params
                .insert("ok".into(), serde_json::json!(level <= 37_000.0));
            out
        };
        let passes = |l: &SweepLevel| l.params["ok"] == serde_json::json!(true);
        let mut progress = Progress::new(super::super::progress::Mode::Quiet);
        let mut s = run(&plan, &mut progress, &mut runner);
        let ran = search(&plan, &mut s, &mut progress, &mut runner, &passes, 20, 0.01);
        let searched: Vec<f64> = s.levels[3..].iter().map(|l| l.level).collect();
        // 10 000..100 000 halved: 55 000 fails, 32 500 passes, 43 750 …
        assert_eq!(searched[..3], [55_000.0, 32_500.0, 43_750.0]);
        assert_eq!(ran as usize, searched.len());
        assert!(ran < 20, "stops within the resolution: {searched:?}");
        for (k, l) in s.levels[3..].iter().enumerate() {
            assert_eq!(l.params["search_step"], serde_json::json!(k + 1));
        }
        let seen: Vec<(f64, bool)> = s.levels.iter().map(|l| (l.level, passes(l))).collect();
        let (lo, hi) = search_bounds(&seen).unwrap();
        assert!(
            lo <= 37_000.0 && hi > 37_000.0 && hi - lo <= 0.01 * hi,
            "{lo} {hi}"
        );
        // No steps: nothing more runs; every level passing: nothing to search.
        let mut t = run(&plan, &mut progress, &mut runner);
        assert_eq!(
            search(&plan, &mut t, &mut progress, &mut runner, &passes, 0, 0.01),
            0
        );
        let all = |_: &SweepLevel| true;
        assert_eq!(
            search(&plan, &mut t, &mut progress, &mut runner, &all, 5, 0.01),
            0
        );
        assert_eq!(t.levels.len(), 3);
    }
}
