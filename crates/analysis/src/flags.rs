//! Structure a growth class does not describe, found in the samples
//! themselves rather than in the bucket medians: a second, slower curve
//! within runs (the seeds' "shadow graphs"), runs that disagree with each
//! other, and a cost that drifts with time rather than with n.

use super::buckets::{Sample, median_of};
use super::{DriftSource, Flag, RunInfo};

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

/// A mixture fitted to one group's residuals: a main normal, a second
/// normal above it, and a uniform background for outliers.
#[derive(Debug, Clone, Copy)]
struct Mixture {
    /// Weights of the main and second curve among the normal parts
    /// (w1 + w2 = 1) and of the background among all.
    w2: f64,
    m1: f64,
    s1: f64,
    m2: f64,
    s2: f64,
    /// Residuals at or above this are more likely on the second curve.
    threshold: f64,
    /// Log-likelihood gain over one normal and the background.
    gain: f64,
}

/// Histogram bins of the mixture fit.
const BINS: usize = 128;

/// A binned sample: bin centres and weights, with the bin width.
struct Binned {
    x: Vec<f64>,
    c: Vec<f64>,
    width: f64,
    range: f64,
    total: f64,
}

/// Weighted histogram of residuals over [lo, hi] (values beyond count at
/// the edges).
fn histogram(g: &[Residual], lo: f64, hi: f64) -> Binned {
    let width = (hi - lo) / BINS as f64;
    let mut c = vec![0.0; BINS];
    for x in g {
        let i = (((x.r.clamp(lo, hi) - lo) / width) as usize).min(BINS - 1);
        c[i] += f64::from(x.w);
    }
    let total = c.iter().sum();
    Binned {
        x: (0..BINS).map(|i| lo + (i as f64 + 0.5) * width).collect(),
        c,
        width,
        range: hi - lo,
        total,
    }
}

impl Binned {
    /// Quantile `q` of the binned values (to a bin).
    fn quantile(&self, q: f64) -> f64 {
        let target = q * self.total;
        let mut seen = 0.0;
        for (&x, &c) in self.x.iter().zip(&self.c) {
            seen += c;
            if seen >= target {
                return x;
            }
        }
        self.x[BINS - 1]
    }
}

/// The residuals binned around their median: costs 0.2–20× the main
/// level; beyond, they count at the edges.
fn bin(g: &[Residual]) -> Option<Binned> {
    let (lo, hi) = g
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x.r), b.max(x.r))
        });
    if hi - lo <= 1e-6 || hi.is_nan() || lo.is_nan() {
        return None;
    }
    let rough = histogram(g, lo.max(-5.0), hi.min(5.0).max(lo.max(-5.0) + 1e-6));
    let med = rough.quantile(0.5);
    let (lo, hi) = (lo.max(med - 1.5), hi.min(med + 3.0));
    if hi - lo <= 1e-6 || hi.is_nan() || lo.is_nan() {
        return None;
    }
    Some(histogram(g, lo, hi))
}

fn normal(x: f64, m: f64, s: f64) -> f64 {
    (-0.5 * ((x - m) / s).powi(2)).exp() / (s * (2.0 * std::f64::consts::PI).sqrt())
}

/// EM for a uniform background plus `k` normals (1 or 2) on binned data,
/// from a start; returns the log-likelihood and the components (weight,
/// mean, sd), background first with its weight only.
fn em(
    b: &Binned,
    start: &[(f64, f64, f64)],
    iterations: usize,
) -> (f64, f64, Vec<(f64, f64, f64)>) {
    let mut bg = 0.01;
    let mut comp = start.to_vec();
    let floor = b.width;
    let mut ll = f64::NEG_INFINITY;
    let mut last = f64::NEG_INFINITY;
    let mut resp = vec![0.0; comp.len() + 1];
    for it in 0..=iterations {
        let mut acc = vec![(0.0, 0.0, 0.0); comp.len()];
        let mut acc_bg = 0.0;
        ll = 0.0;
        for (&x, &c) in b.x.iter().zip(&b.c) {
            if c == 0.0 {
                continue;
            }
            resp[0] = bg / b.range;
            for (j, &(w, m, s)) in comp.iter().enumerate() {
                resp[j + 1] = w * normal(x, m, s);
            }
            let p: f64 = resp.iter().sum::<f64>().max(1e-300);
            ll += c * (p * b.width).ln();
            acc_bg += c * resp[0] / p;
            for (j, a) in acc.iter_mut().enumerate() {
                let r = c * resp[j + 1] / p;
                a.0 += r;
                a.1 += r * x;
                a.2 += r * x * x;
            }
        }
        if it == iterations || (ll - last).abs() < 1e-4 * b.total.max(1.0) {
            break;
        }
        last = ll;
        bg = (acc_bg / b.total).clamp(1e-4, 0.2);
        for (j, a) in acc.iter().enumerate() {
            if a.0 > 1e-9 {
                let m = a.1 / a.0;
                let v = (a.2 / a.0 - m * m).max(floor * floor);
                comp[j] = (a.0 / b.total, m, v.sqrt());
            }
        }
    }
    (ll, bg, comp)
}

/// Fits one normal and the background, then two normals and the
/// background (started from a split at the largest gap in density above
/// the main curve's median), and keeps the second when it is above the
/// first.
fn mixture(g: &[Residual]) -> Option<Mixture> {
    let b = bin(g)?;
    let med = b.quantile(0.5);
    // Robust spread of the main curve, from its quartiles.
    let mad = ((b.quantile(0.75) - b.quantile(0.25)) / 1.349).max(b.width);
    let (ll1, _, one) = em(&b, &[(0.99, med, mad)], 30);
    let main = one[0];
    // Start the second curve at the mean of what lies beyond 2.5 robust
    // sds above the main curve.
    let cut = main.1 + 2.5 * main.2;
    let (mut w, mut sx) = (0.0, 0.0);
    for (&x, &c) in b.x.iter().zip(&b.c) {
        if x > cut {
            w += c;
            sx += c * x;
        }
    }
    if w < 3.0 {
        return None;
    }
    let start = [
        (1.0 - w / b.total, main.1, main.2),
        (w / b.total, sx / w, main.2),
    ];
    let (ll2, _, two) = em(&b, &start, 60);
    let (c1, c2) = if two[0].1 <= two[1].1 {
        (two[0], two[1])
    } else {
        (two[1], two[0])
    };
    let w2 = c2.0 / (c1.0 + c2.0);
    // Where the second curve becomes the likelier.
    let threshold =
        b.x.iter()
            .copied()
            .find(|&x| x > c1.1 && c2.0 * normal(x, c2.1, c2.2) > c1.0 * normal(x, c1.1, c1.2))
            .unwrap_or(f64::INFINITY);
    Some(Mixture {
        w2,
        m1: c1.1,
        s1: c1.2,
        m2: c2.1,
        s2: c2.2,
        threshold,
        gain: ll2 - ll1,
    })
}

/// One sample's residual against its run's level in its bucket.
#[derive(Debug, Clone, Copy)]
pub struct Residual {
    /// ln(cost / level).
    pub r: f64,
    /// The cost, ns.
    pub y: f64,
    /// Its run slot.
    pub slot: usize,
    /// Its n.
    pub n: f64,
    /// Times it counts (a bootstrap replica draws samples more than once).
    pub w: u32,
}

/// Weighted median of `(value, weight)` pairs (reorders them).
fn weighted_median(v: &mut [(f64, u32)]) -> f64 {
    v.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    let total: usize = v.iter().map(|x| x.1 as usize).sum();
    let half = total.div_ceil(2);
    let mut seen = 0;
    for x in v.iter() {
        seen += x.1 as usize;
        if seen >= half {
            return x.0;
        }
    }
    f64::NAN
}

/// Fewest samples in a group the second curve is looked for in.
const GROUP_MIN: usize = 200;

/// Looks for a shadow curve, group of buckets by group, so that a second
/// curve may grow differently from the main one (the seeds' O(1) main
/// curve with an O(n) shadow). `groups` holds, per bucket, every sample's
/// residual against its own run's level there; consecutive buckets are
/// joined until a group holds at least 200 samples (and a fifteenth of
/// all). In each group a mixture is fitted to the residuals: a main normal,
/// a uniform background for scattered outliers, and a second normal. The
/// group shows a second curve when the second normal holds 1–50 % of the
/// curves' samples (at least 3, from at least two runs when there are
/// two), lies at least 25 % above the main one, is separated from it by
/// Ashman's D ≥ 2.5, is itself tight (σ of its log-cost ≤ 0.35: a curve,
/// not scatter), and raises the log-likelihood by more than 1.5·ln(m) + 5.
/// The series is bimodal when at least a third of the groups show one.
pub fn find_shadow(buckets: Vec<Vec<Residual>>) -> Option<Shadow> {
    let all: usize = buckets.iter().flatten().map(|x| x.w as usize).sum();
    let min = GROUP_MIN.max(all / 15);
    let mut groups: Vec<Vec<Residual>> = Vec::new();
    let mut cur: Vec<Residual> = Vec::new();
    for b in buckets {
        cur.extend(b);
        if cur.iter().map(|x| x.w as usize).sum::<usize>() >= min {
            groups.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        match groups.last_mut() {
            Some(last) => last.extend(cur),
            None => groups.push(cur),
        }
    }
    let total_groups = groups.len();
    let mut total = 0.0;
    let mut upper = 0.0;
    let mut curve = Vec::new();
    let mut ratios = Vec::new();
    for g in groups {
        let m: usize = g.iter().map(|x| x.w as usize).sum();
        if m < 30 {
            continue;
        }
        let Some(mx) = mixture(&g) else { continue };
        let up = |x: &&Residual| x.r >= mx.threshold;
        let mut slots: Vec<usize> = g.iter().map(|x| x.slot).collect();
        slots.sort_unstable();
        slots.dedup();
        let mut up_slots: Vec<usize> = g.iter().filter(up).map(|x| x.slot).collect();
        up_slots.sort_unstable();
        up_slots.dedup();
        let separation =
            std::f64::consts::SQRT_2 * (mx.m2 - mx.m1) / (mx.s1 * mx.s1 + mx.s2 * mx.s2).sqrt();
        if (0.01..=0.5).contains(&mx.w2)
            && mx.w2 * m as f64 >= 3.0
            && up_slots.len() >= slots.len().min(2)
            && mx.m2 - mx.m1 >= 1.25f64.ln()
            && separation >= 2.5
            && mx.s2 <= 0.35
            && mx.gain > 1.5 * (m as f64).ln() + 5.0
        {
            total += m as f64;
            upper += mx.w2 * m as f64;
            let mut ys: Vec<(f64, u32)> = g.iter().filter(up).map(|x| (x.y, x.w)).collect();
            let med = weighted_median(&mut ys);
            let mut ns: Vec<(f64, u32)> = g.iter().map(|x| (x.n, x.w)).collect();
            let n_mid = weighted_median(&mut ns);
            let k = (mx.w2 * m as f64).max(1.0);
            curve.push((n_mid, med, (med * mx.s2 / k.sqrt()).max(0.002 * med)));
            ratios.push((mx.m2 - mx.m1).exp());
        }
    }
    let with = curve.len();
    if with == 0 || with * 3 < total_groups {
        return None;
    }
    Some(Shadow {
        share: upper / total,
        ratio_low: ratios[0],
        ratio_high: ratios[with - 1],
        buckets_with: with,
        curve,
    })
}

/// Interquartile mean of one run's samples at its lowest and highest
/// tenth of n (the ends, as the verdict's).
fn run_ends(s: &[(f64, f64)]) -> Option<(f64, f64)> {
    if s.len() < 20 {
        return None;
    }
    let mut v = s.to_vec();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let k = ((v.len() as f64 * super::buckets::END_SHARE) as usize).max(1);
    let mut lo: Vec<f64> = v[..k].iter().map(|x| x.1).collect();
    let mut hi: Vec<f64> = v[v.len() - k..].iter().map(|x| x.1).collect();
    Some((
        super::buckets::interquartile_mean(&mut lo),
        super::buckets::interquartile_mean(&mut hi),
    ))
}

/// A cost that moved with time rather than with n, by more than `min`
/// (relative) over one run:
///
/// - **directions**: with runs that visited n in opposite orders (up
///   against down, up-down against down-up: [`RunInfo::downwards`] tells
///   the second kind), each run's own rise between its ends is G·D in one
///   kind and G/D in the other for a growth G with n and a drift D over
///   the part of a run's time between its ends; D is estimated as
///   the square root of the ratio of the two groups' geometric means, and
///   flagged when the two groups differ by at least three standard errors;
/// - **recheck**: a re-timing at low n at the other end of a run in time
///   is compared with the run's own samples at the same n; flagged when
///   every run moved the same way and the median run by more than `min`.
pub fn drift(samples: &[Sample], runs: &[RunInfo], min: f64) -> Option<Flag> {
    let of_run = |r: u32| -> Vec<(f64, f64)> {
        samples
            .iter()
            .filter(|s| s.run == r)
            .map(|s| (s.n, s.ns))
            .collect()
    };
    // Directions.
    let mut up = Vec::new();
    let mut down = Vec::new();
    for info in runs {
        if let Some((lo, hi)) = run_ends(&of_run(info.run))
            && lo > 0.0
            && hi > 0.0
        {
            let l = (hi / lo).ln();
            if info.downwards {
                down.push(l)
            } else {
                up.push(l)
            }
        }
    }
    if !up.is_empty() && !down.is_empty() && up.len() + down.len() >= 3 {
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let (mu, md) = (mean(&up), mean(&down));
        let ss: f64 = up.iter().map(|x| (x - mu).powi(2)).sum::<f64>()
            + down.iter().map(|x| (x - md).powi(2)).sum::<f64>();
        let dof = (up.len() + down.len()) as f64 - 2.0;
        let se = (ss / dof.max(1.0) * (1.0 / up.len() as f64 + 1.0 / down.len() as f64)).sqrt();
        let d = ((mu - md) / 2.0).exp();
        if (d - 1.0).abs() > min && (mu - md).abs() > 3.0 * se {
            return Some(Flag::Drift {
                factor: d,
                source: DriftSource::Directions,
            });
        }
    }
    // Re-timings.
    let mut factors = Vec::new();
    for info in runs.iter().filter(|i| i.recheck.len() >= 5) {
        let (lo_n, hi_n) = info
            .recheck
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
                (a.min(x.0), b.max(x.0))
            });
        let mut own: Vec<f64> = samples
            .iter()
            .filter(|s| s.run == info.run && s.n >= lo_n && s.n <= hi_n)
            .map(|s| s.ns)
            .collect();
        if own.len() < 5 {
            continue;
        }
        let mut again: Vec<f64> = info.recheck.iter().map(|x| x.1).collect();
        let (a, b) = (median_of(&mut again), median_of(&mut own));
        if a > 0.0 && b > 0.0 {
            // Later over earlier: a re-timing after the run is later
            // than the run's own low n; one before it, earlier.
            factors.push(if info.recheck_after { a / b } else { b / a });
        }
    }
    if factors.len() >= 2 {
        let same_way = factors.iter().all(|&f| f > 1.0) || factors.iter().all(|&f| f < 1.0);
        let mut logs: Vec<f64> = factors.iter().map(|f| f.ln()).collect();
        let m = median_of(&mut logs).exp();
        if same_way && (m - 1.0).abs() > min {
            return Some(Flag::Drift {
                factor: m,
                source: DriftSource::Recheck,
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::resample::{Data, summarize};
    use super::super::{Flag, RunInfo};
    use super::*;

    fn noise(i: usize) -> f64 {
        // Deterministic pseudo-noise in [-1, 1].
        let x = ((i as u64)
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407)
            >> 33) as f64;
        x / (1u64 << 31) as f64 - 1.0
    }

    fn shadow(f: impl Fn(usize) -> f64) -> Option<Shadow> {
        let s: Vec<Sample> = (0..5000)
            .map(|i| Sample {
                n: (i % 1000) as f64,
                ns: f(i),
                run: (i / 1000) as u32,
            })
            .collect();
        let d = Data::new(&s);
        summarize(&d.full(), &d, true).shadow.flatten()
    }

    #[test]
    fn a_shadow_curve_is_found_and_sized() {
        let sh = shadow(|i| {
            let slow = i % 5 == 0; // 20 %
            (if slow { 1900.0 } else { 1000.0 }) * (1.0 + 0.05 * noise(i))
        })
        .expect("shadow");
        assert!((sh.share - 0.2).abs() < 0.02, "{sh:?}");
        assert!((sh.ratio_low - 1.9).abs() < 0.1, "{sh:?}");
        assert!((sh.ratio_high - 1.9).abs() < 0.1, "{sh:?}");
    }

    #[test]
    fn a_growing_shadow_over_a_flat_curve_is_found() {
        // Linux 2.4's fork in the seeds: O(1) and O(n) mixed sample by sample.
        let sh = shadow(|i| {
            let n = (i % 1000) as f64;
            let base = if i % 3 == 0 {
                1000.0 + 20.0 * n
            } else {
                1000.0
            };
            base * (1.0 + 0.05 * noise(i))
        })
        .expect("shadow");
        assert!(
            sh.ratio_high > 10.0 && sh.ratio_high > sh.ratio_low,
            "{sh:?}"
        );
        assert!((sh.share - 0.33).abs() < 0.05, "{sh:?}");
    }

    #[test]
    fn scattered_outliers_are_not_a_shadow() {
        let sh = shadow(|i| {
            let out = i % 97 == 0; // ~1 %, all over the place
            1000.0
                * (1.0 + 0.05 * noise(i))
                * if out {
                    2.0 + 20.0 * noise(i * 7).abs()
                } else {
                    1.0
                }
        });
        assert!(sh.is_none(), "{sh:?}");
    }

    fn run(r: u32, down: bool, f: impl Fn(f64, f64) -> f64) -> Vec<Sample> {
        // 1 000 samples; f(n, t) with t the share of the run's time passed.
        (0..1000)
            .map(|i| {
                let n = if down { 999 - i } else { i } as f64;
                let t = i as f64 / 1000.0;
                Sample {
                    n,
                    ns: f(n, t) * (1.0 + 0.02 * noise(i + 1000 * r as usize)),
                    run: r,
                }
            })
            .collect()
    }

    fn info(r: u32, down: bool) -> RunInfo {
        RunInfo {
            run: r,
            downwards: down,
            ..RunInfo::default()
        }
    }

    #[test]
    fn a_drift_in_time_shows_between_directions() {
        // Flat in n, 30 % dearer by the end of every run.
        let mut s = Vec::new();
        let mut runs = Vec::new();
        for r in 0..5u32 {
            let down = r % 2 == 1;
            s.extend(run(r, down, |_, t| 1000.0 * (1.0 + 0.3 * t)));
            runs.push(info(r, down));
        }
        match drift(&s, &runs, 0.1) {
            Some(Flag::Drift { factor, source }) => {
                assert_eq!(source, DriftSource::Directions);
                assert!((factor - 1.3).abs() < 0.05, "{factor}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn growth_with_n_is_not_a_drift() {
        let mut s = Vec::new();
        let mut runs = Vec::new();
        for r in 0..5u32 {
            let down = r % 2 == 1;
            s.extend(run(r, down, |n, _| 1000.0 + n));
            runs.push(info(r, down));
        }
        assert_eq!(drift(&s, &runs, 0.1), None);
    }

    #[test]
    fn a_recheck_that_differs_in_every_run_is_a_drift() {
        let mut s = Vec::new();
        let mut runs = Vec::new();
        for r in 0..3u32 {
            s.extend(run(r, false, |_, _| 1000.0));
            runs.push(RunInfo {
                recheck: (0..50).map(|n| (n as f64, 1250.0)).collect(),
                recheck_after: true,
                ..info(r, false)
            });
        }
        match drift(&s, &runs, 0.1) {
            Some(Flag::Drift { factor, source }) => {
                assert_eq!(source, DriftSource::Recheck);
                assert!((factor - 1.25).abs() < 0.03, "{factor}");
            }
            other => panic!("{other:?}"),
        }
        // The same re-timing taken before the run (n falls): the cost was
        // higher earlier, so it fell with time.
        for r in &mut runs {
            r.recheck_after = false;
        }
        match drift(&s, &runs, 0.1) {
            Some(Flag::Drift { factor, .. }) => assert!((factor - 0.8).abs() < 0.03, "{factor}"),
            other => panic!("{other:?}"),
        }
        // Agreeing re-timings: no drift.
        for r in &mut runs {
            r.recheck = (0..50).map(|n| (n as f64, 1010.0)).collect();
        }
        assert_eq!(drift(&s, &runs, 0.1), None);
    }
}
