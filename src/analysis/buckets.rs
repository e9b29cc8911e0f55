//! Per-n summaries: samples grouped into buckets along n, each with its
//! median and spread.

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
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
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

/// Standard error of the mean of per-run medians, 0 with fewer than 3
/// runs of at least 5 samples.
fn between_runs(group: &[Sample]) -> f64 {
    let mut runs: Vec<u32> = group.iter().map(|s| s.run).collect();
    runs.sort_unstable();
    runs.dedup();
    let meds: Vec<f64> = runs
        .iter()
        .filter_map(|&r| {
            let mut v: Vec<f64> = group.iter().filter(|s| s.run == r).map(|s| s.ns).collect();
            (v.len() >= 5).then(|| {
                v.sort_by(f64::total_cmp);
                quantile(&v, 0.5)
            })
        })
        .collect();
    if meds.len() < 3 {
        return 0.0;
    }
    let k = meds.len() as f64;
    let mean = meds.iter().sum::<f64>() / k;
    let var = meds.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (k - 1.0);
    (var / k).sqrt()
}

fn summarize(group: &[Sample]) -> Bucket {
    let mut ys: Vec<f64> = group.iter().map(|s| s.ns).collect();
    ys.sort_by(f64::total_cmp);
    let mut ns: Vec<f64> = group.iter().map(|s| s.n).collect();
    ns.sort_by(f64::total_cmp);
    let median = quantile(&ys, 0.5);
    let (p25, p75) = (quantile(&ys, 0.25), quantile(&ys, 0.75));
    let sigma = (p75 - p25) / 1.349;
    let within = 1.2533 * sigma / (ys.len() as f64).sqrt();
    let se = within
        .max(between_runs(group))
        .max(0.002 * median.abs())
        .max(1e-9);
    Bucket {
        n_lo: ns[0],
        n_hi: ns[ns.len() - 1],
        n: quantile(&ns, 0.5),
        count: ys.len(),
        median,
        p10: quantile(&ys, 0.1),
        p25,
        p75,
        p90: quantile(&ys, 0.9),
        se,
    }
}

/// Groups samples into at most `target` buckets along n: one bucket per
/// distinct n when there are few distinct values, otherwise buckets of
/// (nearly) equal sample counts that never split one n value.
pub fn bucketize(samples: &[Sample], target: usize) -> Vec<Bucket> {
    if samples.is_empty() {
        return Vec::new();
    }
    let mut s = samples.to_vec();
    s.sort_by(|a, b| a.n.total_cmp(&b.n));
    let mut distinct = 1;
    for w in s.windows(2) {
        if w[1].n != w[0].n {
            distinct += 1;
        }
    }
    let target = target.max(1);
    let mut out = Vec::new();
    if distinct <= target {
        let mut start = 0;
        for i in 1..=s.len() {
            if i == s.len() || s[i].n != s[start].n {
                out.push(summarize(&s[start..i]));
                start = i;
            }
        }
        return out;
    }
    let per = s.len().div_ceil(target);
    let mut start = 0;
    while start < s.len() {
        let mut end = (start + per).min(s.len());
        while end < s.len() && s[end].n == s[end - 1].n {
            end += 1;
        }
        // Fold a small remainder into this bucket.
        if s.len() - end < per / 2 {
            end = s.len();
        }
        out.push(summarize(&s[start..end]));
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp(k: usize) -> Vec<Sample> {
        (0..k)
            .map(|i| Sample {
                n: i as f64,
                ns: 100.0 + i as f64,
                run: 0,
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
    }

    #[test]
    fn equal_count_buckets_cover_everything_in_order() {
        let b = bucketize(&ramp(1000), 20);
        assert_eq!(b.len(), 20);
        assert_eq!(b.iter().map(|x| x.count).sum::<usize>(), 1000);
        assert!(b.windows(2).all(|w| w[0].n_hi < w[1].n_lo));
        assert_eq!(b[0].n_lo, 0.0);
        assert_eq!(b[19].n_hi, 999.0);
        assert!((b[0].median - 124.5).abs() < 1e-9);
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
        let tight = bucketize(&mk(0.0), 1)[0].se;
        let apart = bucketize(&mk(100.0), 1)[0].se;
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
        let b = bucketize(&s, 20);
        assert_eq!(b.len(), 3);
        assert_eq!(b[2].n, 100.0);
        assert_eq!(b[2].median, 102.0);
        assert_eq!(b[2].count, 5);
    }
}
