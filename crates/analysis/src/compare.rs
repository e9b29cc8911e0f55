//! Did a change make a benchmark slower? The test behind `scalebench
//! compare` (docs/analysis.md §11).
//!
//! A series' cost in each file is summed up per run, over the n both
//! files measured (the common range): the geometric mean, over groups of
//! n (each level, or up to 40 spans of n), of the median cost of the
//! run's operations in each, so every n counts alike.
//! The ratio new / base is the geometric mean of the new runs' figures
//! over that of the base runs'; its 90 % interval comes from resampling
//! whole runs in both files ([`REPLICAS`] replicas). The run-to-run noise
//! of each file is the robust spread of its runs' figures (1.4826 × the
//! median absolute deviation over the median); the threshold a change
//! must clear is twice the larger of the two, kept within
//! [`MIN_THRESHOLD`]..[`MAX_THRESHOLD`] ([`COUNTED_MIN_THRESHOLD`] and up
//! between two guests counting instructions), unless given. A series has
//! *regressed* when the whole interval lies above 1 + threshold,
//! *improved* when it lies below 1 / (1 + threshold), and is *unchanged*
//! otherwise. A class change (both verdicts a growth class, and
//! different) is reported before the cost.

use super::buckets::{median_of, quantile_of};
use super::{Estimate, Sample};
use rand::rngs::Xoshiro256PlusPlus as Rng64;
use rand::{RngExt, SeedableRng};
use serde::Serialize;

/// Bootstrap replicas of the ratio.
pub const REPLICAS: usize = 2000;
/// The smallest default threshold: 10 %. Runs within one file agree more
/// closely than two invocations of the same build do (docs/measurements.md,
/// "Figures behind the code's choices").
pub const MIN_THRESHOLD: f64 = 0.10;
/// The smallest default threshold between two guests whose clocks counted
/// instructions (QEMU's `-icount`): 0.5 %. Their figures are the same on
/// every run and host (two guests of one kernel agreed to 0.0 %,
/// docs/comparing.md), so only their own run-to-run noise, not another
/// invocation's, widens it.
pub const COUNTED_MIN_THRESHOLD: f64 = 0.005;
/// The largest default threshold: 25 % (a +30 % change is still seen on a
/// noisy machine).
pub const MAX_THRESHOLD: f64 = 0.25;
/// The threshold for a figure measured once (a workload's throughput),
/// which has no run-to-run noise of its own: 10 %.
pub const SINGLE_THRESHOLD: f64 = 0.10;

/// What a comparison found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Faster (or more throughput) beyond the threshold.
    Improved,
    /// Within the threshold.
    Unchanged,
    /// Slower (or less throughput) beyond the threshold.
    Regressed,
    /// The growth class differs.
    ClassChanged,
    /// Missing in one file, failed, or no common n.
    NotComparable,
}

impl Outcome {
    /// Its name (`class-changed`).
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Improved => "improved",
            Outcome::Unchanged => "unchanged",
            Outcome::Regressed => "regressed",
            Outcome::ClassChanged => "class-changed",
            Outcome::NotComparable => "not-comparable",
        }
    }
}

/// The cost ratio of two recorded series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostRatio {
    /// The quantile of each run's costs that sums the run up (0.5: its
    /// median).
    pub quantile: f64,
    /// new / base, with its 90 % interval.
    pub ratio: Estimate,
    /// The run-to-run noise of each file (base, new), relative.
    pub noise: [f64; 2],
    /// The threshold the ratio was judged against.
    pub threshold: f64,
    /// The common range of n, low and high.
    pub n_range: [f64; 2],
    /// Runs in each file (base, new).
    pub runs: [usize; 2],
}

/// The quantile of each run's costs that stands for the run's quiet path
/// between two guests counting instructions: the 10th percentile. There
/// an operation's count is exact but for what lands inside some calls
/// (a timer interrupt, work deferred by the previous call), and the share
/// of calls it lands in moves from run to run: fork's run medians moved
/// by 13 % between runs of one guest while its low percentiles agreed
/// within 0.3 % (docs/kernels.md).
pub const QUIET_QUANTILE: f64 = 0.10;

/// Most groups of n a run is summed up over ([`n_groups`]).
const MAX_GROUPS: usize = 40;
/// Distinct n per group, at least, where there are more than
/// [`MAX_GROUPS`] of them.
const MIN_PER_GROUP: usize = 25;

/// The groups of n both files' runs are summed up over, as each group's
/// largest n: every n in `lo..=hi` its own group where there are at most
/// [`MAX_GROUPS`] (a level schedule), else that many groups or fewer of
/// equally many distinct n, [`MIN_PER_GROUP`] at least in each.
fn n_groups(base: &[Sample], new: &[Sample], lo: f64, hi: f64) -> Vec<f64> {
    let mut ns: Vec<f64> = base
        .iter()
        .chain(new)
        .map(|x| x.n)
        .filter(|&n| n >= lo && n <= hi)
        .collect();
    ns.sort_by(f64::total_cmp);
    ns.dedup();
    if ns.len() <= MAX_GROUPS {
        return ns;
    }
    let groups = (ns.len() / MIN_PER_GROUP).clamp(1, MAX_GROUPS);
    (1..=groups)
        .map(|g| ns[g * ns.len() / groups - 1])
        .collect()
}

/// Each run's figures per group of n (`edges` from [`n_groups`], the
/// first group starting at `lo`): the quantile `q` of its costs in the
/// group (its median at 0.5), `None` where it has no operation there.
fn run_groups(s: &[Sample], lo: f64, edges: &[f64], q: f64) -> Vec<Vec<Option<f64>>> {
    let mut runs: Vec<u32> = s.iter().map(|x| x.run).collect();
    runs.sort_unstable();
    runs.dedup();
    runs.into_iter()
        .map(|r| {
            let mut groups: Vec<Vec<f64>> = vec![Vec::new(); edges.len()];
            for x in s.iter().filter(|x| x.run == r && x.n >= lo) {
                let g = edges.partition_point(|&e| e < x.n);
                if let Some(v) = groups.get_mut(g) {
                    v.push(x.ns);
                }
            }
            groups
                .into_iter()
                .map(|mut v| {
                    (!v.is_empty()).then(|| {
                        if q == 0.5 {
                            median_of(&mut v)
                        } else {
                            quantile_of(&mut v, q)
                        }
                    })
                })
                .collect()
        })
        .collect()
}

/// Each run of both files summed up over the groups of n every run of
/// both measured: the geometric mean of its groups' figures
/// ([`run_groups`]), so that every n counts alike. A run's median over
/// all its operations would be, for a cost growing with n, the cost at
/// one n in the middle, and move with that n's noise alone: fork-maps'
/// two guests of one kernel differed by 1.3 % so, while their 40 levels
/// agreed within 0.2 % on average (docs/kernels.md). Empty when no group
/// was measured by every run.
fn run_figures(base: &[Sample], new: &[Sample], lo: f64, hi: f64, q: f64) -> [Vec<f64>; 2] {
    let edges = n_groups(base, new, lo, hi);
    let (gb, gn) = (
        run_groups(base, lo, &edges, q),
        run_groups(new, lo, &edges, q),
    );
    let common: Vec<usize> = (0..edges.len())
        .filter(|&g| gb.iter().chain(&gn).all(|r| r[g].is_some()))
        .collect();
    if common.is_empty() {
        return [Vec::new(), Vec::new()];
    }
    let sum_up = |runs: Vec<Vec<Option<f64>>>| -> Vec<f64> {
        runs.into_iter()
            .map(|r| {
                let logs: f64 = common.iter().filter_map(|&g| r[g]).map(f64::ln).sum();
                (logs / common.len() as f64).exp()
            })
            .collect()
    };
    [sum_up(gb), sum_up(gn)]
}

/// The robust relative spread of figures: 1.4826 × MAD / median; 0 for
/// fewer than two.
fn noise(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let mut w = v.to_vec();
    let m = median_of(&mut w);
    let mut dev: Vec<f64> = v.iter().map(|x| (x - m).abs()).collect();
    1.4826 * median_of(&mut dev) / m
}

/// Compares the costs of two series, each run summed up by its median;
/// `None` when they share no n or a file has no run there. `threshold`
/// overrides the default, twice the larger noise kept within `floor`
/// ([`MIN_THRESHOLD`], or [`COUNTED_MIN_THRESHOLD`] between instruction
/// counts) and [`MAX_THRESHOLD`].
pub fn cost_ratio(
    base: &[Sample],
    new: &[Sample],
    threshold: Option<f64>,
    floor: f64,
) -> Option<CostRatio> {
    cost_ratio_at(base, new, threshold, floor, 0.5)
}

/// [`cost_ratio`] with each run summed up by the quantile `q` of its
/// costs ([`QUIET_QUANTILE`] for the quiet path).
pub fn cost_ratio_at(
    base: &[Sample],
    new: &[Sample],
    threshold: Option<f64>,
    floor: f64,
    q: f64,
) -> Option<CostRatio> {
    let range = |s: &[Sample]| {
        s.iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
                (a.min(x.n), b.max(x.n))
            })
    };
    let (b0, b1) = range(base);
    let (n0, n1) = range(new);
    let (lo, hi) = (b0.max(n0), b1.min(n1));
    if lo > hi || !lo.is_finite() {
        return None;
    }
    let [fb, fnew] = run_figures(base, new, lo, hi, q);
    if fb.is_empty() || fnew.is_empty() {
        return None;
    }
    // Geometric means of the runs' figures: one slow run moves the ratio
    // by its share, not all or nothing as a median of five would.
    let log = |v: &[f64]| v.iter().map(|x| x.ln()).collect::<Vec<f64>>();
    let (lb, ln) = (log(&fb), log(&fnew));
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let value = (mean(&ln) - mean(&lb)).exp();
    let mut rng = Rng64::seed_from_u64(0x5ca1_ab1e);
    let pick = |v: &[f64], rng: &mut Rng64| -> f64 {
        (0..v.len())
            .map(|_| v[rng.random_range(0..v.len())])
            .sum::<f64>()
            / v.len() as f64
    };
    let mut ratios: Vec<f64> = (0..REPLICAS)
        .map(|_| (pick(&ln, &mut rng) - pick(&lb, &mut rng)).exp())
        .collect();
    ratios.sort_by(f64::total_cmp);
    let at = |p: f64| ratios[((ratios.len() - 1) as f64 * p).round() as usize];
    let noise = [noise(&fb), noise(&fnew)];
    let threshold =
        threshold.unwrap_or_else(|| (2.0 * noise[0].max(noise[1])).clamp(floor, MAX_THRESHOLD));
    Some(CostRatio {
        quantile: q,
        ratio: Estimate {
            value,
            lo: at(0.05),
            hi: at(0.95),
        },
        noise,
        threshold,
        n_range: [lo, hi],
        runs: [fb.len(), fnew.len()],
    })
}

/// The outcome of a cost ratio (higher is worse).
pub fn judge_cost(c: &CostRatio) -> Outcome {
    if c.ratio.lo > 1.0 + c.threshold {
        Outcome::Regressed
    } else if c.ratio.hi < 1.0 / (1.0 + c.threshold) {
        Outcome::Improved
    } else {
        Outcome::Unchanged
    }
}

/// The outcome of a throughput ratio new / base measured once (higher is
/// better).
pub fn judge_throughput(ratio: f64, threshold: f64) -> Outcome {
    if !ratio.is_finite() {
        Outcome::NotComparable
    } else if ratio < 1.0 / (1.0 + threshold) {
        Outcome::Regressed
    } else if ratio > 1.0 + threshold {
        Outcome::Improved
    } else {
        Outcome::Unchanged
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `runs` runs of n = 0..1000, cost `f(n)` with a run factor and
    /// per-sample jitter of a few percent.
    fn series(runs: u32, seed: u64, f: impl Fn(f64) -> f64) -> Vec<Sample> {
        let mut rng = Rng64::seed_from_u64(seed);
        let mut v = Vec::new();
        for r in 0..runs {
            let run_factor = 1.0 + rng.random_range(-0.03..0.03);
            for n in 0..1000 {
                let jitter = 1.0 + rng.random_range(-0.05..0.05);
                v.push(Sample {
                    n: n as f64,
                    ns: f(n as f64) * run_factor * jitter,
                    run: r,
                });
            }
        }
        v
    }

    #[test]
    fn the_same_cost_is_unchanged_and_plus_30_percent_regressed() {
        for seed in 0..8 {
            let a = series(5, seed, |_| 1000.0);
            let b = series(5, seed + 100, |_| 1000.0);
            let c = cost_ratio(&a, &b, None, MIN_THRESHOLD).unwrap();
            assert_eq!(judge_cost(&c), Outcome::Unchanged, "seed {seed}: {c:?}");
            assert!(c.threshold >= MIN_THRESHOLD && c.threshold <= MAX_THRESHOLD);
            let slow = series(5, seed + 200, |_| 1300.0);
            let c = cost_ratio(&a, &slow, None, MIN_THRESHOLD).unwrap();
            assert_eq!(judge_cost(&c), Outcome::Regressed, "seed {seed}: {c:?}");
            assert!((c.ratio.value - 1.3).abs() < 0.05, "{c:?}");
            let fast = series(5, seed + 300, |_| 700.0);
            assert_eq!(
                judge_cost(&cost_ratio(&a, &fast, None, MIN_THRESHOLD).unwrap()),
                Outcome::Improved
            );
        }
    }

    /// `runs` runs of n = 0..1000 whose every operation costs exactly
    /// `cost` (an instruction count) but a timer interrupt's extra in one
    /// operation of 50.
    fn exact(runs: u32, cost: f64) -> Vec<Sample> {
        (0..runs)
            .flat_map(|r| {
                (0..1000).map(move |n| Sample {
                    n: n as f64,
                    ns: if n % 50 == 7 { cost + 3000.0 } else { cost },
                    run: r,
                })
            })
            .collect()
    }

    #[test]
    fn between_instruction_counts_one_percent_is_a_change() {
        let a = exact(3, 4214.0);
        let same = cost_ratio(&a, &exact(3, 4214.0), None, COUNTED_MIN_THRESHOLD).unwrap();
        assert_eq!(same.noise, [0.0, 0.0]);
        assert_eq!(same.threshold, COUNTED_MIN_THRESHOLD);
        assert_eq!(judge_cost(&same), Outcome::Unchanged);
        let more = cost_ratio(&a, &exact(3, 4256.0), None, COUNTED_MIN_THRESHOLD).unwrap();
        assert_eq!(judge_cost(&more), Outcome::Regressed, "{more:?}");
        let less = cost_ratio(&a, &exact(3, 4172.0), None, COUNTED_MIN_THRESHOLD).unwrap();
        assert_eq!(judge_cost(&less), Outcome::Improved, "{less:?}");
        // With the floor of time, the same 1 % is within it.
        let timed = cost_ratio(&a, &exact(3, 4256.0), None, MIN_THRESHOLD).unwrap();
        assert_eq!(judge_cost(&timed), Outcome::Unchanged);
    }

    #[test]
    fn a_run_is_summed_up_by_the_quantile_asked() {
        // One call in fifty 3 000 dearer, the rest exact: the 10th
        // percentile is the exact count, the 99th the dear one.
        let a = exact(3, 4214.0);
        let c = |q| cost_ratio_at(&a, &exact(3, 4256.0), None, COUNTED_MIN_THRESHOLD, q).unwrap();
        assert_eq!(c(QUIET_QUANTILE).quantile, QUIET_QUANTILE);
        assert!((c(QUIET_QUANTILE).ratio.value - 4256.0 / 4214.0).abs() < 1e-12);
        assert_eq!(
            c(0.5),
            cost_ratio(&a, &exact(3, 4256.0), None, COUNTED_MIN_THRESHOLD).unwrap()
        );
        // The dearest call of each of the 40 groups of 25 n: the dear
        // one (n = 7, 57, …) in every other group, the exact count in the
        // rest; every group counts alike.
        let half_and_half = ((7256.0_f64 / 7214.0) * (4256.0 / 4214.0)).sqrt();
        assert!((c(1.0).ratio.value - half_and_half).abs() < 1e-12);
    }

    /// `runs` runs of a level schedule (40 levels of n = 0..3 900, 6
    /// operations at each), every operation costing `per_n` × (n + 100)
    /// exactly, times `level_factor(level)`.
    fn levels(runs: u32, per_n: f64, level_factor: impl Fn(u64) -> f64) -> Vec<Sample> {
        (0..runs)
            .flat_map(|r| {
                let level_factor = &level_factor;
                (0..40u64).flat_map(move |l| {
                    (0..6).map(move |_| Sample {
                        n: (l * 100) as f64,
                        ns: per_n * (l * 100 + 100) as f64 * level_factor(l),
                        run: r,
                    })
                })
            })
            .collect()
    }

    #[test]
    fn a_cost_growing_with_n_is_summed_up_over_every_n_alike() {
        // One level in the middle 3 % dearer in every run (a spell of
        // noise there): a run's median over all its operations is the
        // cost at that level, 3 % up; over the levels alike it is 0.07 %.
        let a = levels(2, 1000.0, |_| 1.0);
        let b = levels(2, 1000.0, |l| if l == 19 || l == 20 { 1.03 } else { 1.0 });
        let c = cost_ratio(&a, &b, None, COUNTED_MIN_THRESHOLD).unwrap();
        assert!(c.ratio.value < 1.002, "{c:?}");
        assert_eq!(judge_cost(&c), Outcome::Unchanged);
        // 1 % at every n is still a change.
        let c = cost_ratio(&a, &levels(2, 1010.0, |_| 1.0), None, COUNTED_MIN_THRESHOLD).unwrap();
        assert!((c.ratio.value - 1.01).abs() < 1e-9, "{c:?}");
        assert_eq!(judge_cost(&c), Outcome::Regressed);
    }

    #[test]
    fn only_the_common_range_counts_and_none_without_one() {
        let a = series(3, 1, |_| 1000.0);
        let b: Vec<Sample> = series(3, 2, |n| if n < 500.0 { 1000.0 } else { 5000.0 })
            .into_iter()
            .filter(|s| s.n < 500.0)
            .collect();
        let c = cost_ratio(&a, &b, None, MIN_THRESHOLD).unwrap();
        assert_eq!(c.n_range, [0.0, 499.0]);
        assert_eq!(judge_cost(&c), Outcome::Unchanged);
        let far: Vec<Sample> = b
            .iter()
            .map(|s| Sample {
                n: s.n + 5000.0,
                ..*s
            })
            .collect();
        assert!(cost_ratio(&a, &far, None, MIN_THRESHOLD).is_none());
    }

    #[test]
    fn throughput_lower_is_a_regression() {
        assert_eq!(judge_throughput(0.8, 0.1), Outcome::Regressed);
        assert_eq!(judge_throughput(0.95, 0.1), Outcome::Unchanged);
        assert_eq!(judge_throughput(1.2, 0.1), Outcome::Improved);
        assert_eq!(judge_throughput(f64::NAN, 0.1), Outcome::NotComparable);
    }
}
