//! Structure a growth class does not describe: steps between plateaus
//! (the seeds' "dents": a structure leaving a CPU cache) and bimodality
//! (the seeds' "shadow graphs": a share of samples on a second, slower
//! curve).

use super::buckets::{Bucket, Sample};

/// A jump between two plateaus.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// n where the jump happens (between two buckets).
    pub at_n: f64,
    /// Level before, ns.
    pub from_ns: f64,
    /// Level after, ns.
    pub to_ns: f64,
}

/// Weighted mean and weighted squared deviation of bucket medians.
fn level(b: &[Bucket]) -> (f64, f64) {
    let sw: f64 = b.iter().map(|x| 1.0 / (x.se * x.se)).sum();
    let m = b.iter().map(|x| x.median / (x.se * x.se)).sum::<f64>() / sw;
    let ss = b.iter().map(|x| ((x.median - m) / x.se).powi(2)).sum();
    (m, ss)
}

/// Minimum buckets on a plateau.
const MIN_PLATEAU: usize = 3;

/// Finds one or two steps: a piecewise-constant fit of the bucket medians
/// with 1 or 2 breaks must beat the best smooth model's χ² (`smooth_chi2`)
/// by a factor of 4, every jump must be at least 15 % of the lower level
/// and 4 standard errors, and each plateau must be flat (every median
/// within 3 standard errors plus 5 % of its level or a tenth of the
/// smallest jump, whichever is larger). The bucket on each side
/// of a break may straddle the jump, so it is left out of the plateau it
/// borders; the step's position is therefore known to about one bucket.
pub fn find_steps(buckets: &[Bucket], smooth_chi2: f64) -> Vec<Step> {
    let k = buckets.len();
    if k < 2 * MIN_PLATEAU {
        return Vec::new();
    }
    let mut best1: Option<(f64, usize)> = None;
    for i in MIN_PLATEAU..=k - MIN_PLATEAU {
        let ss = level(&buckets[..i]).1 + level(&buckets[i..]).1;
        if best1.is_none_or(|(b, _)| ss < b) {
            best1 = Some((ss, i));
        }
    }
    let mut best2: Option<(f64, usize, usize)> = None;
    for i in MIN_PLATEAU..=k.saturating_sub(2 * MIN_PLATEAU) {
        for j in i + MIN_PLATEAU..=k - MIN_PLATEAU {
            let ss = level(&buckets[..i]).1 + level(&buckets[i..j]).1 + level(&buckets[j..]).1;
            if best2.is_none_or(|(b, _, _)| ss < b) {
                best2 = Some((ss, i, j));
            }
        }
    }
    let Some((ss1, i1)) = best1 else {
        return Vec::new();
    };
    // Two breaks when they explain clearly more; if they do not pass the
    // checks, one break may still.
    let mut candidates = Vec::new();
    if let Some((ss2, i, j)) = best2
        && ss2 < 0.5 * ss1
    {
        candidates.push(vec![i, j]);
    }
    candidates.push(vec![i1]);
    candidates
        .into_iter()
        .map(|breaks| check_steps(buckets, &breaks, smooth_chi2))
        .find(|s| !s.is_empty())
        .unwrap_or_default()
}

/// The steps at `breaks` if they pass the checks of [`find_steps`], else
/// none.
fn check_steps(buckets: &[Bucket], breaks: &[usize], smooth_chi2: f64) -> Vec<Step> {
    let k = buckets.len();
    let mut edges = vec![0];
    edges.extend(breaks);
    edges.push(k);
    // Plateaus without the buckets that touch a break.
    let plateaus: Vec<&[Bucket]> = edges
        .windows(2)
        .map(|w| {
            let lo = if w[0] > 0 { w[0] + 1 } else { 0 };
            let hi = if w[1] < k { w[1] - 1 } else { k };
            &buckets[lo..hi.max(lo)]
        })
        .collect();
    if plateaus.iter().any(|p| p.len() < 2) {
        return Vec::new();
    }
    let total: f64 = plateaus.iter().map(|s| level(s).1).sum();
    if total * 4.0 > smooth_chi2 {
        return Vec::new();
    }
    let mut steps = Vec::new();
    let mut smallest_jump = f64::INFINITY;
    for (w, &brk) in plateaus.windows(2).zip(breaks) {
        let (a, b) = (level(w[0]).0, level(w[1]).0);
        let se = (w[0].last().expect("plateau").se.powi(2) + w[1][0].se.powi(2)).sqrt();
        let jump = (b - a).abs();
        if jump < 0.15 * a.min(b) || jump < 4.0 * se {
            return Vec::new();
        }
        smallest_jump = smallest_jump.min(jump);
        steps.push(Step {
            at_n: (buckets[brk - 1].n_hi + buckets[brk].n_lo) / 2.0,
            from_ns: a,
            to_ns: b,
        });
    }
    let flat = plateaus.iter().all(|s| {
        let m = level(s).0;
        let tolerance = (0.05 * m).max(0.1 * smallest_jump);
        s.iter()
            .all(|x| (x.median - m).abs() <= tolerance + 3.0 * x.se)
    });
    if flat { steps } else { Vec::new() }
}

/// A linear cost whose slope rises at one point (the seeds' "dents" when
/// a growing structure leaves a CPU cache): O(n) with a kink.
#[derive(Debug, Clone, PartialEq)]
pub struct Kink {
    /// Where the slope changes.
    pub at_n: f64,
    /// Cost per item before, ns.
    pub slope_before: f64,
    /// Cost per item after, ns.
    pub slope_after: f64,
    /// Cost at n = 0, ns.
    pub intercept: f64,
}

/// Weighted least squares of `y = a + b1·n + b2·max(0, n − k)`; returns
/// (a, b1, b2, χ²).
fn hinge(pts: &[(f64, f64, f64)], k: f64) -> Option<(f64, f64, f64, f64)> {
    let mut m = [[0.0f64; 3]; 3];
    let mut v = [0.0f64; 3];
    for &(n, y, se) in pts {
        let w = 1.0 / (se * se);
        let x = [1.0, n, (n - k).max(0.0)];
        for i in 0..3 {
            v[i] += w * x[i] * y;
            for j in 0..3 {
                m[i][j] += w * x[i] * x[j];
            }
        }
    }
    // Gaussian elimination with partial pivoting.
    let mut a = [[0.0f64; 4]; 3];
    for i in 0..3 {
        a[i][..3].copy_from_slice(&m[i]);
        a[i][3] = v[i];
    }
    for c in 0..3 {
        let p = (c..3).max_by(|&x, &y| a[x][c].abs().total_cmp(&a[y][c].abs()))?;
        a.swap(c, p);
        if a[c][c].abs() < 1e-300 {
            return None;
        }
        let pivot = a[c];
        for (r, row) in a.iter_mut().enumerate() {
            if r != c {
                let f = row[c] / pivot[c];
                for (x, p) in row.iter_mut().zip(pivot).skip(c) {
                    *x -= f * p;
                }
            }
        }
    }
    let (c0, c1, c2) = (a[0][3] / a[0][0], a[1][3] / a[1][1], a[2][3] / a[2][2]);
    let chi2 = pts
        .iter()
        .map(|&(n, y, se)| ((y - (c0 + c1 * n + c2 * (n - k).max(0.0))) / se).powi(2))
        .sum();
    Some((c0, c1, c2, chi2))
}

/// The best kink: the continuous two-segment line with the least χ² whose
/// second slope is at least 30 % steeper than the first (which must not
/// fall), with at least 4 buckets on each side. Returns (χ², kink).
pub fn best_kink(buckets: &[Bucket]) -> Option<(f64, Kink)> {
    let pts: Vec<(f64, f64, f64)> = buckets.iter().map(|b| (b.n, b.median, b.se)).collect();
    if pts.len() < 10 {
        return None;
    }
    let mut best: Option<(f64, Kink)> = None;
    for i in 4..pts.len() - 4 {
        let k = pts[i].0;
        let Some((a, b1, b2, chi2)) = hinge(&pts, k) else {
            continue;
        };
        let after = b1 + b2;
        if b1 < -1e-12 * a.abs() || after <= 0.0 || b2 < 0.3 * b1.max(0.0) || b2 <= 0.0 {
            continue;
        }
        if best.as_ref().is_none_or(|(c, _)| chi2 < *c) {
            best = Some((
                chi2,
                Kink {
                    at_n: k,
                    slope_before: b1,
                    slope_after: after,
                    intercept: a,
                },
            ));
        }
    }
    best
}

/// A kink that explains the data clearly better than the best smooth
/// model (χ² `smooth_chi2`): its χ² is lower by a quarter and by at least 10.
pub fn find_kink(buckets: &[Bucket], smooth_chi2: f64) -> Option<Kink> {
    let (chi2, kink) = best_kink(buckets)?;
    (chi2 * 1.25 <= smooth_chi2 && smooth_chi2 - chi2 >= 10.0).then_some(kink)
}

/// A second, slower curve above the main one.
#[derive(Debug, Clone, PartialEq)]
pub struct Shadow {
    /// Share of the samples (in the buckets where it shows) on the slower
    /// curve.
    pub share: f64,
    /// How much slower it is at the low end of n (ratio of medians).
    pub ratio_low: f64,
    /// How much slower it is at the high end of n.
    pub ratio_high: f64,
    /// Buckets in which it shows, out of all.
    pub buckets_with: usize,
    /// (n, median ns, standard error) of the slower curve per bucket where
    /// it shows, for fitting its own class.
    pub curve: Vec<(f64, f64, f64)>,
}

/// Two groups of one bucket's log-costs, split where the within-group
/// variance is least.
struct Split {
    upper: usize,
    m1: f64,
    m2: f64,
    s2: f64,
    separation: f64,
}

fn split(logs: &[f64]) -> Option<Split> {
    let m = logs.len();
    let mut pre = vec![(0.0, 0.0); m + 1];
    for (i, x) in logs.iter().enumerate() {
        pre[i + 1] = (pre[i].0 + x, pre[i].1 + x * x);
    }
    let stats = |lo: usize, hi: usize| {
        let k = (hi - lo) as f64;
        let mean = (pre[hi].0 - pre[lo].0) / k;
        (mean, ((pre[hi].1 - pre[lo].1) / k - mean * mean).max(0.0))
    };
    let lo_k = (m as f64 * 0.5).ceil() as usize;
    let hi_k = m.saturating_sub(3);
    let mut best: Option<(f64, usize)> = None;
    for k in lo_k.max(1)..=hi_k {
        let within = stats(0, k).1 * k as f64 + stats(k, m).1 * (m - k) as f64;
        if best.is_none_or(|(b, _)| within < b) {
            best = Some((within, k));
        }
    }
    let (_, k) = best?;
    let ((m1, v1), (m2, v2)) = (stats(0, k), stats(k, m));
    Some(Split {
        upper: m - k,
        m1,
        m2,
        s2: v2.sqrt(),
        separation: std::f64::consts::SQRT_2 * (m2 - m1) / (v1 + v2).sqrt().max(1e-12),
    })
}

/// Looks for a shadow curve, bucket by bucket, so that a second curve may
/// grow differently from the main one (the seeds' O(1) main curve with an
/// O(n) shadow). In each bucket of at least 30 samples the log-costs are
/// split in two where the within-group variance is least (Otsu); the
/// bucket shows a second curve when the upper group holds 1–50 % of its
/// samples (at least 3), lies at least 25 % above the lower one, is
/// separated from it by Ashman's D ≥ 3 and is itself tight (σ of its
/// log-cost ≤ 0.35: a curve, not scatter). The series is bimodal when at
/// least a third of the buckets show one.
pub fn find_shadow(samples: &[Sample]) -> Option<Shadow> {
    let target = (samples.len() / 100).clamp(1, 40);
    let mut sorted = samples.to_vec();
    sorted.sort_by(|a, b| a.n.total_cmp(&b.n));
    let per = sorted.len().div_ceil(target);
    let mut total = 0;
    let mut upper = 0;
    let mut curve = Vec::new();
    let mut ratios = Vec::new();
    let mut buckets = 0;
    for chunk in sorted.chunks(per.max(1)) {
        buckets += 1;
        if chunk.len() < 30 {
            continue;
        }
        let mut logs: Vec<f64> = chunk
            .iter()
            .filter(|s| s.ns > 0.0)
            .map(|s| s.ns.ln())
            .collect();
        logs.sort_by(f64::total_cmp);
        let Some(sp) = split(&logs) else { continue };
        let share = sp.upper as f64 / logs.len() as f64;
        if (0.01..=0.5).contains(&share)
            && sp.upper >= 3
            && sp.m2 - sp.m1 >= 1.25f64.ln()
            && sp.separation >= 3.0
            && sp.s2 <= 0.35
        {
            total += logs.len();
            upper += sp.upper;
            let up: Vec<f64> = logs[logs.len() - sp.upper..]
                .iter()
                .map(|x| x.exp())
                .collect();
            let med = super::buckets::quantile(&up, 0.5);
            let n_mid = chunk[chunk.len() / 2].n;
            curve.push((
                n_mid,
                med,
                (med * sp.s2 / (sp.upper as f64).sqrt()).max(0.002 * med),
            ));
            ratios.push((sp.m2 - sp.m1).exp());
        }
    }
    let with = curve.len();
    if with == 0 || with * 3 < buckets {
        return None;
    }
    Some(Shadow {
        share: upper as f64 / total as f64,
        ratio_low: ratios[0],
        ratio_high: ratios[with - 1],
        buckets_with: with,
        curve,
    })
}

#[cfg(test)]
mod tests {
    use super::super::buckets::bucketize;
    use super::*;

    fn noise(i: usize) -> f64 {
        // Deterministic pseudo-noise in [-1, 1].
        let x = ((i as u64)
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407)
            >> 33) as f64;
        x / (1u64 << 31) as f64 - 1.0
    }

    fn series(f: impl Fn(usize) -> f64) -> Vec<Sample> {
        (0..5000)
            .map(|i| Sample {
                n: (i % 1000) as f64,
                ns: f(i),
                run: (i / 1000) as u32,
            })
            .collect()
    }

    #[test]
    fn a_step_is_found_where_it_is() {
        let s = series(|i| if i % 1000 < 600 { 1000.0 } else { 1600.0 } * (1.0 + 0.03 * noise(i)));
        let b = bucketize(&s, 40);
        let steps = find_steps(&b, 1e9);
        assert_eq!(steps.len(), 1, "{steps:?}");
        assert!((steps[0].at_n - 600.0).abs() < 30.0, "{steps:?}");
        assert!((steps[0].to_ns / steps[0].from_ns - 1.6).abs() < 0.05);
    }

    #[test]
    fn no_step_in_a_line() {
        let s = series(|i| (1000.0 + (i % 1000) as f64) * (1.0 + 0.03 * noise(i)));
        let b = bucketize(&s, 40);
        let line = super::super::fit::fit(
            super::super::fit::Class::Linear,
            &super::super::fit::points(&b),
        );
        assert!(find_steps(&b, line.chi2).is_empty());
    }

    #[test]
    fn a_kink_is_found_where_the_slope_rises() {
        // 250 ns per item up to 400, then 440 (poll() leaving the cache).
        let s = series(|i| {
            let n = (i % 1000) as f64;
            let y = 20_000.0 + 250.0 * n + 190.0 * (n - 400.0).max(0.0);
            y * (1.0 + 0.03 * noise(i))
        });
        let b = bucketize(&s, 30);
        let pts = super::super::fit::points(&b);
        let best = super::super::fit::Class::ALL
            .iter()
            .map(|&c| super::super::fit::fit(c, &pts).chi2)
            .fold(f64::INFINITY, f64::min);
        let k = find_kink(&b, best).expect("kink");
        assert!((k.at_n - 400.0).abs() < 60.0, "{k:?}");
        assert!((k.slope_before / 250.0 - 1.0).abs() < 0.1, "{k:?}");
        assert!((k.slope_after / 440.0 - 1.0).abs() < 0.1, "{k:?}");
    }

    #[test]
    fn no_kink_in_a_parabola() {
        let s = series(|i| {
            let n = (i % 1000) as f64;
            (1000.0 + n * n / 100.0) * (1.0 + 0.03 * noise(i))
        });
        let b = bucketize(&s, 30);
        let q = super::super::fit::fit(
            super::super::fit::Class::Quadratic,
            &super::super::fit::points(&b),
        );
        assert!(find_kink(&b, q.chi2).is_none());
    }

    #[test]
    fn a_shadow_curve_is_found_and_sized() {
        let s = series(|i| {
            let slow = i % 5 == 0; // 20 %
            (if slow { 1900.0 } else { 1000.0 }) * (1.0 + 0.05 * noise(i))
        });
        let sh = find_shadow(&s).expect("shadow");
        assert!((sh.share - 0.2).abs() < 0.02, "{sh:?}");
        assert!((sh.ratio_low - 1.9).abs() < 0.1, "{sh:?}");
        assert!((sh.ratio_high - 1.9).abs() < 0.1, "{sh:?}");
    }

    #[test]
    fn a_growing_shadow_over_a_flat_curve_is_found() {
        // Linux 2.4's fork in the seeds: O(1) and O(n) mixed sample by sample.
        let s = series(|i| {
            let n = (i % 1000) as f64;
            let base = if i % 3 == 0 {
                1000.0 + 20.0 * n
            } else {
                1000.0
            };
            base * (1.0 + 0.05 * noise(i))
        });
        let sh = find_shadow(&s).expect("shadow");
        assert!(
            sh.ratio_high > 10.0 && sh.ratio_high > sh.ratio_low,
            "{sh:?}"
        );
        assert!((sh.share - 0.33).abs() < 0.05, "{sh:?}");
    }

    #[test]
    fn scattered_outliers_are_not_a_shadow() {
        let s = series(|i| {
            let out = i % 97 == 0; // ~1 %, all over the place
            1000.0
                * (1.0 + 0.05 * noise(i))
                * if out {
                    2.0 + 20.0 * noise(i * 7).abs()
                } else {
                    1.0
                }
        });
        assert!(find_shadow(&s).is_none());
    }
}
