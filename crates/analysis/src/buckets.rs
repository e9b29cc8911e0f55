//! Per-n summaries: samples grouped into buckets along n, each with its
//! median and spread.
//!
//! The bucket edges are chosen once, from all samples of a series, and
//! then reused for every bootstrap replica, so that a replica differs from
//! the data only in which samples it holds. Edges are the union of
//! equal-count cuts (resolution where the samples are), log-spaced cuts
//! (resolution at small n, where the shapes of n, n log n and n² differ
//! most) and the two cuts that delimit the low and high ends (the lowest
//! and highest tenth of the samples by n); buckets with too few samples are
//! merged into a neighbour within the same end.

/// One sample: n resources held, the cost in ns, and the run it came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Resources held.
    pub n: f64,
    /// Cost in nanoseconds.
    pub ns: f64,
    /// Run index.
    pub run: u32,
}

/// Summary of the samples whose n falls in one range.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Bucket {
    /// Smallest n in the bucket.
    pub n_lo: f64,
    /// Largest n in the bucket.
    pub n_hi: f64,
    /// Median n (where the bucket is plotted and fitted).
    pub n: f64,
    /// Samples in the bucket.
    pub count: usize,
    /// Median cost, ns.
    pub median: f64,
    /// 10th percentile, ns.
    pub p10: f64,
    /// 25th percentile, ns.
    pub p25: f64,
    /// 75th percentile, ns.
    pub p75: f64,
    /// 90th percentile, ns.
    pub p90: f64,
    /// Standard error of the median, ns: the larger of 1.2533·σ/√count
    /// (σ from the interquartile range) and, when at least 3 runs have 5
    /// or more samples here, the standard deviation of the runs' own
    /// medians over √runs — so run-to-run variation counts as noise.
    /// Floored at 0.2 % of the median.
    pub se: f64,
}

/// Quantile `q` of sorted values (linear interpolation).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let (i, frac) = (pos.floor() as usize, pos.fract());
    if i + 1 < sorted.len() {
        sorted[i] * (1.0 - frac) + sorted[i + 1] * frac
    } else {
        sorted[i]
    }
}

/// Quantile `q` of unsorted values (linear interpolation, as
/// [`quantile`]; reorders them).
pub fn quantile_of(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let pos = q.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let (i, frac) = (pos.floor() as usize, pos.fract());
    let (_, x, rest) = v.select_nth_unstable_by(i, f64::total_cmp);
    let x = *x;
    if frac == 0.0 || rest.is_empty() {
        return x;
    }
    let next = rest.iter().copied().fold(f64::INFINITY, f64::min);
    x * (1.0 - frac) + next * frac
}

/// The interquartile mean of unsorted values: the mean of those between
/// the first and third quartile (reorders them). As robust as the median
/// to outliers and to a second curve on one side, but it moves smoothly
/// when a share of the values moves, where the median jumps between two
/// groups of nearly equal size.
pub fn interquartile_mean(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let [lo, hi] = quantiles_of(v, [0.25, 0.75]);
    let (sum, count) = v
        .iter()
        .filter(|&&x| x >= lo && x <= hi)
        .fold((0.0, 0usize), |(s, c), &x| (s + x, c + 1));
    if count == 0 {
        (lo + hi) / 2.0
    } else {
        sum / count as f64
    }
}

/// Median of unsorted values (reorders them).
pub fn median_of(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let m = v.len() / 2;
    let (_, hi, _) = v.select_nth_unstable_by(m, f64::total_cmp);
    let hi = *hi;
    if v.len() % 2 == 1 {
        hi
    } else {
        let lo = v[..m].iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lo + hi) / 2.0
    }
}

/// Equal-count cuts.
const EQUAL_CUTS: usize = 24;
/// Log-spaced cuts per decade of n.
const LOG_CUTS_PER_DECADE: f64 = 8.0;
/// One bucket per distinct n when there are at most this many.
const DISTINCT_MAX: usize = 40;
/// Share of the samples (by n) at each end that the words compare.
pub const END_SHARE: f64 = 0.10;

/// Where the buckets of a series begin, and which of them form the low
/// and high ends.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// Bucket `i` holds the samples with `starts[i] <= n < starts[i+1]`
    /// (the last one every n from its start up).
    pub starts: Vec<f64>,
    /// Buckets `0..low_end` are the low end.
    pub low_end: usize,
    /// Buckets `high_end..` are the high end.
    pub high_end: usize,
}

impl Layout {
    /// Chooses bucket edges for `samples` (not necessarily sorted).
    pub fn new(samples: &[Sample]) -> Layout {
        let mut ns: Vec<f64> = samples.iter().map(|s| s.n).collect();
        ns.sort_by(f64::total_cmp);
        let total = ns.len();
        if total == 0 {
            return Layout {
                starts: vec![0.0],
                low_end: 1,
                high_end: 0,
            };
        }
        let mut distinct: Vec<f64> = ns.clone();
        distinct.dedup();
        let ends = Ends::of(&ns);
        let mut cuts = candidate_cuts(&ns, &distinct);
        cuts.extend(ends.low_cut);
        cuts.extend(ends.high_cut);
        cuts.push(ns[0]);
        cuts.sort_by(f64::total_cmp);
        cuts.dedup();
        let counts: Vec<usize> = (0..cuts.len())
            .map(|i| {
                let a = ns.partition_point(|&v| v < cuts[i]);
                let b = cuts
                    .get(i + 1)
                    .map_or(total, |&c| ns.partition_point(|&v| v < c));
                b - a
            })
            .collect();
        let min = if distinct.len() <= DISTINCT_MAX {
            1
        } else {
            (total / 200).max(20)
        };
        let merged = merge_small(&cuts, &counts, min, &ends);
        let starts: Vec<f64> = merged.iter().map(|m| m.0).collect();
        let low_end = merged.iter().take_while(|m| m.2 == 0).count().max(1);
        let high_end = merged
            .iter()
            .position(|m| m.2 == 2)
            .unwrap_or(merged.len().saturating_sub(1))
            .max(low_end.min(merged.len() - 1));
        Layout {
            starts,
            low_end,
            high_end,
        }
    }

    /// Number of buckets.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Whether there are no buckets.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// The bucket that holds `n`.
    pub fn index(&self, n: f64) -> usize {
        self.starts.partition_point(|&s| s <= n).saturating_sub(1)
    }
}

/// The smallest of the sorted `ns` at or above `x` (the start of the
/// bucket holding it).
fn at_or_above(ns: &[f64], x: f64) -> Option<f64> {
    let i = ns.partition_point(|&v| v < x);
    ns.get(i).copied()
}

/// Where the low and the high end of sorted n values (at least one) are
/// cut: at the n of the k-th smallest and the k-th largest sample, k the
/// [`END_SHARE`] of them; every sample with that n belongs to the end.
struct Ends {
    /// The largest n of the low end.
    low_last: f64,
    /// The smallest n of the high end.
    high_first: f64,
    /// The first n above the low end, if any.
    low_cut: Option<f64>,
    /// The start of the high end.
    high_cut: Option<f64>,
}

impl Ends {
    /// The ends of `ns` (sorted, not empty).
    fn of(ns: &[f64]) -> Ends {
        let total = ns.len();
        let k = ((total as f64 * END_SHARE).round() as usize).max(1);
        let low_last = ns[k - 1];
        let high_first = ns[total - k];
        Ends {
            low_last,
            high_first,
            low_cut: at_or_above(ns, next_up(low_last)),
            high_cut: Some(high_first),
        }
    }

    /// The region of a bucket starting at `c`: 0 the low end, 2 the high
    /// end, 1 between.
    fn region(&self, c: f64) -> u8 {
        if self.low_cut.is_some_and(|l| c < l) {
            0
        } else if self.high_cut.is_some_and(|h| c >= h) && self.high_first > self.low_last {
            2
        } else {
            1
        }
    }
}

/// Bucket starts before the ends are added: every distinct n when there
/// are at most [`DISTINCT_MAX`], else equal-count cuts of the sorted `ns`
/// and log-spaced cuts from the smallest positive n.
fn candidate_cuts(ns: &[f64], distinct: &[f64]) -> Vec<f64> {
    let total = ns.len();
    let mut cuts: Vec<f64> = Vec::new();
    if distinct.len() <= DISTINCT_MAX {
        cuts.extend(distinct);
        return cuts;
    }
    for i in 1..EQUAL_CUTS {
        cuts.push(ns[i * total / EQUAL_CUTS]);
    }
    let lo = distinct.iter().copied().find(|&v| v > 0.0);
    let hi = distinct[distinct.len() - 1];
    if let Some(lo) = lo
        && hi > lo
    {
        let steps = ((hi / lo).log10() * LOG_CUTS_PER_DECADE).ceil() as usize;
        for j in 0..=steps {
            let x = lo * 10f64.powf(j as f64 / LOG_CUTS_PER_DECADE);
            if let Some(c) = at_or_above(ns, x) {
                cuts.push(c);
            }
        }
    }
    cuts
}

/// Buckets `(start, samples, region)` from the `cuts` with `counts`
/// samples each: one with fewer than `min` samples is merged into the next
/// of the same region (the last of a region into the one before it).
fn merge_small(cuts: &[f64], counts: &[usize], min: usize, ends: &Ends) -> Vec<(f64, usize, u8)> {
    let mut merged: Vec<(f64, usize, u8)> = Vec::new();
    let mut carry: Option<(f64, usize, u8)> = None;
    for (&c, &n) in cuts.iter().zip(counts) {
        let r = ends.region(c);
        let cur = match carry.take() {
            Some((start, m, cr)) if cr == r => (start, m + n, r),
            Some(prev) => {
                push_or_fold(&mut merged, prev);
                (c, n, r)
            }
            None => (c, n, r),
        };
        if cur.1 >= min {
            merged.push(cur);
        } else {
            carry = Some(cur);
        }
    }
    if let Some(prev) = carry {
        push_or_fold(&mut merged, prev);
    }
    merged
}

/// Appends a too-small bucket to the last one of the same region, or
/// keeps it as its own when there is none.
fn push_or_fold(merged: &mut Vec<(f64, usize, u8)>, b: (f64, usize, u8)) {
    match merged.last_mut() {
        Some(last) if last.2 == b.2 => last.1 += b.1,
        _ => merged.push(b),
    }
}

/// The next representable value above `x`.
fn next_up(x: f64) -> f64 {
    if x == 0.0 {
        f64::MIN_POSITIVE
    } else {
        let bits = x.to_bits();
        f64::from_bits(if x > 0.0 { bits + 1 } else { bits - 1 })
    }
}

/// Standard error of the mean of per-run medians, 0 with fewer than 3
/// runs of at least 5 samples.
fn between_runs(meds: &[f64]) -> f64 {
    if meds.len() < 3 {
        return 0.0;
    }
    let k = meds.len() as f64;
    let mean = meds.iter().sum::<f64>() / k;
    let var = meds.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (k - 1.0);
    (var / k).sqrt()
}

/// The order statistics of `v` at `ranks` (ascending, distinct, each
/// below `v.len()`), written to `out` in the same order; `v` is reordered.
/// One selection splits the slice for the ranks on either side, so the
/// work is about `len · log(ranks)`.
fn select_ranks(v: &mut [f64], offset: usize, ranks: &[usize], out: &mut [f64]) {
    if ranks.is_empty() {
        return;
    }
    let mid = ranks.len() / 2;
    let k = ranks[mid] - offset;
    let (left, x, right) = v.select_nth_unstable_by(k, f64::total_cmp);
    out[mid] = *x;
    let (lo_out, rest) = out.split_at_mut(mid);
    select_ranks(left, offset, &ranks[..mid], lo_out);
    select_ranks(right, offset + k + 1, &ranks[mid + 1..], &mut rest[1..]);
}

/// Quantiles `qs` of unsorted values, as [`quantile`] would give them on
/// the sorted values (reorders `v`).
pub fn quantiles_of<const K: usize>(v: &mut [f64], qs: [f64; K]) -> [f64; K] {
    let n = v.len();
    if n == 0 {
        return [f64::NAN; K];
    }
    let (pos, ranks) = rank_plan(qs, n);
    let mut vals = vec![0.0; ranks.len()];
    select_ranks(v, 0, &ranks, &mut vals);
    interpolate(pos, &ranks, &vals, n)
}

/// Where quantiles `qs` of `n` values sit (fractional positions) and the
/// order statistics they need (ascending, distinct).
fn rank_plan<const K: usize>(qs: [f64; K], n: usize) -> ([f64; K], Vec<usize>) {
    let pos = qs.map(|q| q.clamp(0.0, 1.0) * (n - 1) as f64);
    let mut ranks: Vec<usize> = Vec::with_capacity(2 * K);
    for p in pos {
        let i = p.floor() as usize;
        ranks.push(i);
        if p.fract() > 0.0 && i + 1 < n {
            ranks.push(i + 1);
        }
    }
    ranks.sort_unstable();
    ranks.dedup();
    (pos, ranks)
}

/// The quantiles at `pos` from the order statistics `vals` at `ranks`.
fn interpolate<const K: usize>(pos: [f64; K], ranks: &[usize], vals: &[f64], n: usize) -> [f64; K] {
    let at = |r: usize| vals[ranks.binary_search(&r).expect("rank selected")];
    pos.map(|p| {
        let (i, f) = (p.floor() as usize, p.fract());
        if f > 0.0 && i + 1 < n {
            at(i) * (1.0 - f) + at(i + 1) * f
        } else {
            at(i)
        }
    })
}

/// A resample without its copies: `values` ascending, the i-th drawn
/// `counts[i]` times (at least as many counts as values). Its quantiles
/// and interquartile mean are those of the values repeated — one walk
/// instead of copying and selecting, which was most of a bootstrap's time.
#[derive(Debug, Clone, Copy)]
pub struct Counted<'a> {
    /// The values, ascending.
    pub values: &'a [f64],
    /// How many times each was drawn.
    pub counts: &'a [u32],
}

impl Counted<'_> {
    /// Values drawn, counting repeats.
    pub fn total(&self) -> usize {
        self.counts.iter().map(|&c| c as usize).sum()
    }

    /// The order statistics at `ranks` (ascending) of the repeated values.
    fn at_ranks(&self, ranks: &[usize]) -> Vec<f64> {
        let mut out = Vec::with_capacity(ranks.len());
        let mut next = ranks.iter().peekable();
        let mut below = 0usize; // values, repeats counted, up to this one
        for (&x, &c) in self.values.iter().zip(self.counts) {
            below += c as usize;
            while next.next_if(|&&r| r < below).is_some() {
                out.push(x);
            }
            if next.peek().is_none() {
                break;
            }
        }
        out
    }

    /// Quantiles `qs`, as [`quantiles_of`] gives them on the repeated
    /// values.
    pub fn quantiles<const K: usize>(&self, qs: [f64; K]) -> [f64; K] {
        let n = self.total();
        if n == 0 {
            return [f64::NAN; K];
        }
        let (pos, ranks) = rank_plan(qs, n);
        interpolate(pos, &ranks, &self.at_ranks(&ranks), n)
    }

    /// The interquartile mean, as [`interquartile_mean`] gives it on the
    /// repeated values.
    pub fn interquartile_mean(&self) -> f64 {
        let [lo, hi] = self.quantiles([0.25, 0.75]);
        if lo.is_nan() {
            return f64::NAN;
        }
        let (mut sum, mut count) = (0.0, 0usize);
        for (&x, &c) in self.values.iter().zip(self.counts) {
            if x > hi {
                break;
            }
            if c > 0 && x >= lo {
                sum += x * f64::from(c);
                count += c as usize;
            }
        }
        if count == 0 {
            (lo + hi) / 2.0
        } else {
            sum / count as f64
        }
    }
}

/// Summarises one bucket: `ys` its costs (any order; reordered),
/// `n` its (smallest, largest, median) n, `run_medians` the medians of
/// the runs with at least 5 samples in it.
pub fn summarize(ys: &mut [f64], n: (f64, f64, f64), run_medians: &[f64]) -> Bucket {
    let count = ys.len();
    bucket_of(quantiles_of(ys, BUCKET_QUANTILES), count, n, run_medians)
}

/// The quantiles a bucket states: p10, p25, median, p75, p90.
const BUCKET_QUANTILES: [f64; 5] = [0.1, 0.25, 0.5, 0.75, 0.9];

/// [`summarize`] of a resample without its copies.
pub fn summarize_counted(ys: &Counted, n: (f64, f64, f64), run_medians: &[f64]) -> Bucket {
    bucket_of(ys.quantiles(BUCKET_QUANTILES), ys.total(), n, run_medians)
}

/// A bucket of `count` samples with quantiles `q` ([`BUCKET_QUANTILES`]).
fn bucket_of(q: [f64; 5], count: usize, n: (f64, f64, f64), run_medians: &[f64]) -> Bucket {
    let [p10, p25, median, p75, p90] = q;
    let sigma = (p75 - p25) / 1.349;
    let within = 1.2533 * sigma / (count as f64).sqrt();
    let se = within
        .max(between_runs(run_medians))
        .max(0.002 * median.abs())
        .max(1e-9);
    Bucket {
        n_lo: n.0,
        n_hi: n.1,
        n: n.2,
        count,
        median,
        p10,
        p25,
        p75,
        p90,
        se,
    }
}

/// Smallest, largest and median of n values (reorders them).
pub fn n_range(ns: &mut [f64]) -> (f64, f64, f64) {
    let (lo, hi) = ns
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    (lo, hi, median_of(ns))
}

/// Groups samples into the buckets of `layout` (empty buckets are left
/// out).
pub fn bucketize_with(samples: &[Sample], layout: &Layout) -> Vec<Bucket> {
    let mut groups: Vec<Vec<Sample>> = vec![Vec::new(); layout.len()];
    for s in samples {
        groups[layout.index(s.n)].push(*s);
    }
    groups
        .iter()
        .filter(|g| !g.is_empty())
        .map(|g| summarize_group(g))
        .collect()
}

/// Summarises a group of samples (any runs).
pub fn summarize_group(g: &[Sample]) -> Bucket {
    let mut ys: Vec<f64> = g.iter().map(|s| s.ns).collect();
    let mut ns: Vec<f64> = g.iter().map(|s| s.n).collect();
    let mut runs: Vec<u32> = g.iter().map(|s| s.run).collect();
    runs.sort_unstable();
    runs.dedup();
    let meds: Vec<f64> = runs
        .iter()
        .filter_map(|&r| {
            let mut v: Vec<f64> = g.iter().filter(|s| s.run == r).map(|s| s.ns).collect();
            (v.len() >= 5).then(|| median_of(&mut v))
        })
        .collect();
    summarize(&mut ys, n_range(&mut ns), &meds)
}

/// Groups samples into buckets along n (see [`Layout`]).
pub fn bucketize(samples: &[Sample]) -> Vec<Bucket> {
    bucketize_with(samples, &Layout::new(samples))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp(k: usize, runs: u32) -> Vec<Sample> {
        (0..runs)
            .flat_map(|r| {
                (0..k).map(move |i| Sample {
                    n: i as f64,
                    ns: 100.0 + i as f64,
                    run: r,
                })
            })
            .collect()
    }

    #[test]
    fn quantiles_interpolate() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(quantile(&v, 0.5), 3.0);
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert_eq!(quantile(&v, 1.0), 5.0);
        assert_eq!(quantile(&v, 0.25), 2.0);
        assert!(quantile(&[], 0.5).is_nan());
        assert_eq!(median_of(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median_of(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        let mut v: Vec<f64> = (0..101).rev().map(|x| x as f64).collect();
        let mut sorted = v.clone();
        sorted.sort_by(f64::total_cmp);
        let qs = [0.1, 0.25, 0.333, 0.5, 0.75, 0.9];
        let got = quantiles_of(&mut v, qs);
        for (g, q) in got.iter().zip(qs) {
            assert!((g - quantile(&sorted, q)).abs() < 1e-12, "{q}: {g}");
        }
    }

    #[test]
    fn a_counted_resample_has_the_quantiles_and_mean_of_its_copies() {
        // Values with ties, counts with zeros (first, last, in a row).
        let values: Vec<f64> = [1.0, 2.0, 2.0, 3.5, 4.0, 7.0, 7.0, 9.0, 11.0, 30.0].to_vec();
        for counts in [
            vec![0, 3, 1, 0, 0, 2, 1, 4, 0, 1],
            vec![1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
            vec![0, 0, 0, 0, 5, 0, 0, 0, 0, 0],
            vec![2, 0, 0, 0, 0, 0, 0, 0, 0, 3],
        ] {
            let c = Counted {
                values: &values,
                counts: &counts,
            };
            let mut copies: Vec<f64> = values
                .iter()
                .zip(&counts)
                .flat_map(|(&x, &k)| std::iter::repeat_n(x, k as usize))
                .collect();
            assert_eq!(c.total(), copies.len());
            let qs = [0.0, 0.1, 0.25, 0.333, 0.5, 0.75, 0.9, 1.0];
            assert_eq!(
                c.quantiles(qs),
                quantiles_of(&mut copies.clone(), qs),
                "{counts:?}"
            );
            let (a, b) = (c.interquartile_mean(), interquartile_mean(&mut copies));
            assert!(
                (a - b).abs() <= 1e-12 * b.abs(),
                "{counts:?}: {a} against {b}"
            );
        }
        let none = Counted {
            values: &values,
            counts: &[0; 10],
        };
        assert!(none.quantiles([0.5])[0].is_nan() && none.interquartile_mean().is_nan());
    }

    #[test]
    fn buckets_cover_everything_in_order_with_log_resolution_at_low_n() {
        let s = ramp(10_000, 5);
        let layout = Layout::new(&s);
        let b = bucketize_with(&s, &layout);
        assert_eq!(b.iter().map(|x| x.count).sum::<usize>(), 50_000);
        assert!(b.windows(2).all(|w| w[0].n_hi < w[1].n_lo));
        assert_eq!(b[0].n_lo, 0.0);
        assert_eq!(b.last().unwrap().n_hi, 9_999.0);
        assert!(b.iter().all(|x| x.count >= 250), "{b:?}");
        // Log-spaced cuts put several buckets below n = 1 000.
        assert!(b.iter().filter(|x| x.n < 1000.0).count() >= 4, "{b:?}");
        // The ends are exactly the lowest and highest tenth.
        let low: usize = b[..layout.low_end].iter().map(|x| x.count).sum();
        let high: usize = b[layout.high_end..].iter().map(|x| x.count).sum();
        assert_eq!(low, 5_000);
        assert_eq!(high, 5_000);
    }

    #[test]
    fn runs_that_disagree_widen_the_error() {
        let mk = |spread: f64| -> Vec<Sample> {
            (0..500)
                .map(|i| Sample {
                    n: 1.0,
                    ns: 1000.0 + spread * (i % 5) as f64 + (i % 7) as f64,
                    run: (i % 5) as u32,
                })
                .collect()
        };
        let tight = summarize_group(&mk(0.0)).se;
        let apart = summarize_group(&mk(100.0)).se;
        assert!(apart > 10.0 * tight, "{tight} vs {apart}");
    }

    #[test]
    fn few_distinct_n_give_one_bucket_each() {
        let s: Vec<Sample> = [1.0, 10.0, 100.0]
            .iter()
            .flat_map(|&n| {
                (0..5).map(move |k| Sample {
                    n,
                    ns: n + k as f64,
                    run: k,
                })
            })
            .collect();
        let b = bucketize(&s);
        assert_eq!(b.len(), 3);
        assert_eq!(b[2].n, 100.0);
        assert_eq!(b[2].median, 102.0);
        assert_eq!(b[2].count, 5);
    }

    #[test]
    fn levels_keep_their_ends_whole() {
        // 100 levels, 6 samples each, 5 runs: the ends are 10 levels each.
        let s: Vec<Sample> = (0..5u32)
            .flat_map(|r| {
                (0..100).flat_map(move |l| {
                    (0..6).map(move |_| Sample {
                        n: l as f64 * 80.0,
                        ns: 1.0,
                        run: r,
                    })
                })
            })
            .collect();
        let layout = Layout::new(&s);
        let b = bucketize_with(&s, &layout);
        let low: usize = b[..layout.low_end].iter().map(|x| x.count).sum();
        let high: usize = b[layout.high_end..].iter().map(|x| x.count).sum();
        assert_eq!((low, high), (300, 300), "{layout:?}");
    }
}
