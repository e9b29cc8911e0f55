//! The model family one verdict chooses from, fitted to bucket medians by
//! weighted least squares (weight 1/se²):
//!
//! - the five classes `a + b·g(n)` ([`Class`]);
//! - a power `a + b·nᵖ`, for the exponent of the growing part;
//! - a bent line `a + b₁·n + b₂·max(0, n − k)` (a structure outgrowing a
//!   cache: the cost per item rises at one n);
//! - segments: one or two jumps between segments that are each constant or
//!   a line (plateaus joined by steps; a line with a jump).
//!
//! Models are compared by an information criterion, [`Ic`]: χ² scaled by
//! the misfit of the best-fitting model (so that standard errors that are
//! too small do not make every wiggle significant) plus ln(K) per
//! parameter (K buckets).

use super::buckets::Bucket;
use super::fit::{Class, Fit};
use serde::Serialize;

/// A fit point: (n, median, standard error).
pub type Point = (f64, f64, f64);

/// Fit points of buckets.
pub fn points(buckets: &[Bucket]) -> Vec<Point> {
    buckets.iter().map(|b| (b.n, b.median, b.se)).collect()
}

/// Weighted least squares of y on up to four columns; returns the
/// coefficients and χ², or `None` when the design is singular.
pub fn wls<const K: usize>(
    pts: &[Point],
    cols: impl Fn(f64) -> [f64; K],
) -> Option<([f64; K], f64)> {
    // Scale every column to at most 1 in magnitude so that n² and 1 can
    // share one system.
    let mut scale = [0.0f64; K];
    for p in pts {
        for (s, c) in scale.iter_mut().zip(cols(p.0)) {
            *s = s.max(c.abs());
        }
    }
    if scale.contains(&0.0) {
        return None;
    }
    let mut m = [[0.0f64; K]; K];
    let mut v = [0.0f64; K];
    for &(n, y, se) in pts {
        let w = 1.0 / (se * se);
        let mut x = cols(n);
        for (xi, s) in x.iter_mut().zip(scale) {
            *xi /= s;
        }
        for i in 0..K {
            v[i] += w * x[i] * y;
            for j in 0..K {
                m[i][j] += w * x[i] * x[j];
            }
        }
    }
    solve(m, v, scale, pts, cols)
}

/// The rest of [`wls`]: solves the scaled normal equations `m`·c = `v`
/// (columns divided by `scale`) and measures χ² of the fit on `pts`.
fn solve<const K: usize>(
    mut m: [[f64; K]; K],
    mut v: [f64; K],
    scale: [f64; K],
    pts: &[Point],
    cols: impl Fn(f64) -> [f64; K],
) -> Option<([f64; K], f64)> {
    // Gaussian elimination with partial pivoting.
    for c in 0..K {
        let p = (c..K).max_by(|&a, &b| m[a][c].abs().total_cmp(&m[b][c].abs()))?;
        m.swap(c, p);
        v.swap(c, p);
        let diag = m[c][c];
        let norm = m[c].iter().fold(0.0f64, |a, x| a.max(x.abs()));
        if diag.abs() <= 1e-12 * norm.max(1e-300) {
            return None;
        }
        for r in 0..K {
            if r != c {
                let f = m[r][c] / diag;
                if f != 0.0 {
                    let row = m[c];
                    for (x, p) in m[r].iter_mut().zip(row) {
                        *x -= f * p;
                    }
                    v[r] -= f * v[c];
                }
            }
        }
    }
    let mut coef = [0.0f64; K];
    for i in 0..K {
        coef[i] = v[i] / m[i][i] / scale[i];
    }
    let chi2 = pts
        .iter()
        .map(|&(n, y, se)| {
            let pred: f64 = cols(n).iter().zip(coef).map(|(x, c)| x * c).sum();
            ((y - pred) / se).powi(2)
        })
        .sum();
    Some((coef, chi2))
}

/// Fits `a + b·g(n)` of one class (b of either sign).
pub fn fit_class(class: Class, pts: &[Point]) -> Fit {
    let constant = || {
        let sw: f64 = pts.iter().map(|p| 1.0 / (p.2 * p.2)).sum();
        let a = pts.iter().map(|p| p.1 / (p.2 * p.2)).sum::<f64>() / sw;
        let chi2 = pts.iter().map(|p| ((p.1 - a) / p.2).powi(2)).sum();
        Fit {
            class: Class::Constant,
            a,
            b: 0.0,
            chi2,
        }
    };
    if class == Class::Constant {
        return constant();
    }
    match wls(pts, |n| [1.0, class.g(n)]) {
        Some(([a, b], chi2)) => Fit { class, a, b, chi2 },
        None => Fit {
            class,
            ..constant()
        },
    }
}

/// `a + b·nᵖ`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct Power {
    /// Intercept, ns.
    pub a: f64,
    /// Coefficient, ns.
    pub b: f64,
    /// Exponent of the growing part.
    pub p: f64,
    /// χ².
    pub chi2: f64,
}

impl Power {
    /// The model's cost at n.
    pub fn at(&self, n: f64) -> f64 {
        self.a + self.b * n.max(0.0).powf(self.p)
    }
}

/// Weighted least squares of y on (1, x): (a, b, χ²), or `None` when x
/// does not vary.
fn line(pts: &[Point], x: &[f64]) -> Option<(f64, f64, f64)> {
    let (mut sw, mut sx, mut sy, mut sxx, mut sxy) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (&(_, y, se), &x) in pts.iter().zip(x) {
        let w = 1.0 / (se * se);
        sw += w;
        sx += w * x;
        sy += w * y;
        sxx += w * x * x;
        sxy += w * x * y;
    }
    let det = sw * sxx - sx * sx;
    if det.is_nan() || det <= 1e-12 * sw * sxx {
        return None;
    }
    let a = (sxx * sy - sx * sxy) / det;
    let b = (sw * sxy - sx * sy) / det;
    let chi2 = pts
        .iter()
        .zip(x)
        .map(|(&(_, y, se), &x)| ((y - a - b * x) / se).powi(2))
        .sum();
    Some((a, b, chi2))
}

/// The best `a + b·nᵖ` with b > 0 and p in 0.02–4 (a grid, then a golden
/// section search around its best point); `None` when nothing grows.
pub fn fit_power(pts: &[Point]) -> Option<Power> {
    let ln: Vec<f64> = pts
        .iter()
        .map(|p| {
            if p.0 > 0.0 {
                p.0.ln()
            } else {
                f64::NEG_INFINITY
            }
        })
        .collect();
    let mut x = vec![0.0; pts.len()];
    let mut at = |p: f64| -> Option<Power> {
        for (xi, l) in x.iter_mut().zip(&ln) {
            *xi = (p * l).exp();
        }
        let (a, b, chi2) = line(pts, &x)?;
        (b > 0.0).then_some(Power { a, b, p, chi2 })
    };
    const STEP: f64 = 0.1;
    let mut best: Option<Power> = None;
    let mut p = 0.02;
    while p <= 4.0 + 1e-9 {
        if let Some(f) = at(p)
            && best.is_none_or(|b| f.chi2 < b.chi2)
        {
            best = Some(f);
        }
        p += STEP;
    }
    let mut best = best?;
    let (mut lo, mut hi) = ((best.p - STEP).max(0.005), (best.p + STEP).min(4.0));
    let g = 0.618_033_988_75;
    for _ in 0..24 {
        let x1 = hi - g * (hi - lo);
        let x2 = lo + g * (hi - lo);
        let (c1, c2) = (
            at(x1).map_or(f64::INFINITY, |f| f.chi2),
            at(x2).map_or(f64::INFINITY, |f| f.chi2),
        );
        if c1 < c2 {
            hi = x2;
        } else {
            lo = x1;
        }
    }
    if let Some(f) = at((lo + hi) / 2.0)
        && f.chi2 <= best.chi2
    {
        best = f;
    }
    Some(best)
}

/// A continuous line whose slope changes at `knot`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct Bent {
    /// Cost at n = 0, ns.
    pub a: f64,
    /// Slope before the knot, ns per item.
    pub before: f64,
    /// Slope after it.
    pub after: f64,
    /// Where the slope changes.
    pub knot: f64,
    /// χ².
    pub chi2: f64,
}

impl Bent {
    /// The model's cost at n.
    pub fn at(&self, n: f64) -> f64 {
        self.a + self.before * n + (self.after - self.before) * (n - self.knot).max(0.0)
    }
}

/// Minimum buckets on each side of a knot.
const BENT_SIDE: usize = 4;

/// The best bent line whose slope rises at the knot by at least 30 % (the
/// first slope not falling), with at least four buckets on each side.
pub fn fit_bent(pts: &[Point]) -> Option<Bent> {
    if pts.len() < 2 * BENT_SIDE + 1 {
        return None;
    }
    let mut best: Option<Bent> = None;
    for i in BENT_SIDE..pts.len() - BENT_SIDE {
        let k = pts[i].0;
        let Some(([a, b1, b2], chi2)) = wls(pts, |n| [1.0, n, (n - k).max(0.0)]) else {
            continue;
        };
        let after = b1 + b2;
        let level = a.abs().max(1e-300);
        if b1 < -1e-9 * level || after <= 0.0 || b2 <= 0.0 || b2 < 0.3 * b1.max(0.0) {
            continue;
        }
        if best.is_none_or(|b| chi2 < b.chi2) {
            best = Some(Bent {
                a,
                before: b1,
                after,
                knot: k,
                chi2,
            });
        }
    }
    best
}

/// A continuous line whose slope rises at two n (a cost per item that
/// rises twice: a structure leaving one cache, then the next).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct Bent2 {
    /// Cost at n = 0, ns.
    pub a: f64,
    /// Slopes before the first knot, between the knots, after the second.
    pub slopes: [f64; 3],
    /// Where the slope changes.
    pub knots: [f64; 2],
    /// χ².
    pub chi2: f64,
}

impl Bent2 {
    /// The model of a fit (`[a, b₁, d₁, d₂]` and χ²) with `knots`, when
    /// its slope rises at each knot by at least 30 % (the first not
    /// falling).
    fn of(([a, b1, d1, d2], chi2): ([f64; 4], f64), knots: [f64; 2]) -> Option<Bent2> {
        let (s1, s2) = (b1 + d1, b1 + d1 + d2);
        let level = a.abs().max(1e-300);
        if b1 < -1e-9 * level || d1 <= 0.3 * b1.max(0.0) || d2 <= 0.3 * s1.max(0.0) || d1 <= 0.0 {
            return None;
        }
        Some(Bent2 {
            a,
            slopes: [b1, s1, s2],
            knots,
            chi2,
        })
    }

    /// The model's cost at n.
    pub fn at(&self, n: f64) -> f64 {
        self.a
            + self.slopes[0] * n
            + (self.slopes[1] - self.slopes[0]) * (n - self.knots[0]).max(0.0)
            + (self.slopes[2] - self.slopes[1]) * (n - self.knots[1]).max(0.0)
    }
}

/// The best line with two knots whose slope rises at each by at least
/// 30 % (the first not falling), with at least three buckets before the
/// first knot, between them, and after the second.
pub fn fit_bent2(pts: &[Point]) -> Option<Bent2> {
    let k = pts.len();
    if k < 10 {
        return None;
    }
    let sums = Bent2Sums::new(pts)?;
    let mut best: Option<Bent2> = None;
    for i in 3..k - 6 {
        let k1 = pts[i].0;
        let Some(first) = sums.knot(k1) else {
            continue;
        };
        for &(k2, _, _) in &pts[i + 3..k - 3] {
            let Some(b) = sums
                .fit(&first, k1, k2)
                .and_then(|f| Bent2::of(f, [k1, k2]))
            else {
                continue;
            };
            if best.is_none_or(|x| b.chi2 < x.chi2) {
                best = Some(b);
            }
        }
    }
    best
}

/// [`wls`] of `a + b·n + d₁·max(0, n − k₁) + d₂·max(0, n − k₂)` for every
/// pair of knots, sharing what pairs share: the sums of the first two
/// columns are the same for every pair, those of the k₁ column for every
/// k₂. Each sum adds the same terms in the same order as [`wls`] (a term
/// of a column that is zero at a point adds nothing, exactly), so every
/// fit is bit for bit the one `wls` gives, at a fraction of the work.
struct Bent2Sums<'a> {
    pts: &'a [Point],
    /// Each point's weight 1/se².
    w: Vec<f64>,
    /// Each point's scaled first two columns.
    x: Vec<[f64; 2]>,
    /// The scales of the first two columns.
    scale: [f64; 2],
    /// Their part of the normal equations.
    m: [[f64; 2]; 2],
    v: [f64; 2],
}

/// The first knot's column: its scale and its part of the normal
/// equations (`m[c]` its products with columns 0, 1 and itself).
struct Knot {
    scale: f64,
    m: [f64; 3],
    m_t: [f64; 2],
    v: f64,
}

impl<'a> Bent2Sums<'a> {
    /// `None` when the n column is all zero (as `wls` finds it singular).
    fn new(pts: &'a [Point]) -> Option<Bent2Sums<'a>> {
        let mut scale = [0.0f64; 2];
        for p in pts {
            for (s, c) in scale.iter_mut().zip([1.0, p.0]) {
                *s = s.max(c.abs());
            }
        }
        if scale.contains(&0.0) {
            return None;
        }
        let w: Vec<f64> = pts.iter().map(|p| 1.0 / (p.2 * p.2)).collect();
        let x: Vec<[f64; 2]> = pts
            .iter()
            .map(|p| [1.0 / scale[0], p.0 / scale[1]])
            .collect();
        let (mut m, mut v) = ([[0.0f64; 2]; 2], [0.0f64; 2]);
        for ((p, &w), x) in pts.iter().zip(&w).zip(&x) {
            for i in 0..2 {
                v[i] += w * x[i] * p.1;
                for j in 0..2 {
                    m[i][j] += w * x[i] * x[j];
                }
            }
        }
        Some(Bent2Sums {
            pts,
            w,
            x,
            scale,
            m,
            v,
        })
    }

    /// The scale of the column `max(0, n − k)`: its largest value.
    fn column_scale(&self, k: f64) -> f64 {
        self.pts
            .iter()
            .fold(0.0f64, |s, p| s.max((p.0 - k).max(0.0).abs()))
    }

    /// The column of the first knot `k1`; `None` when it is all zero.
    fn knot(&self, k1: f64) -> Option<Knot> {
        let scale = self.column_scale(k1);
        if scale == 0.0 {
            return None;
        }
        let mut c = Knot {
            scale,
            m: [0.0; 3],
            m_t: [0.0; 2],
            v: 0.0,
        };
        for ((p, &w), x) in self.pts.iter().zip(&self.w).zip(&self.x) {
            let x2 = (p.0 - k1).max(0.0) / scale;
            if x2 == 0.0 {
                continue;
            }
            for ((t, m), xa) in c.m_t.iter_mut().zip(&mut c.m).zip(x) {
                *t += w * xa * x2;
                *m += w * x2 * xa;
            }
            c.m[2] += w * x2 * x2;
            c.v += w * x2 * p.1;
        }
        Some(c)
    }

    /// The fit with knots `k1` (its column `first`) and `k2`.
    fn fit(&self, first: &Knot, k1: f64, k2: f64) -> Option<([f64; 4], f64)> {
        let s3 = self.column_scale(k2);
        if s3 == 0.0 {
            return None;
        }
        let mut m = [[0.0f64; 4]; 4];
        for ((row, own), t) in m.iter_mut().zip(&self.m).zip(first.m_t) {
            row[..2].copy_from_slice(own);
            row[2] = t;
        }
        m[2][..3].copy_from_slice(&first.m);
        let mut v = [self.v[0], self.v[1], first.v, 0.0];
        for ((p, &w), x) in self.pts.iter().zip(&self.w).zip(&self.x) {
            let x3 = (p.0 - k2).max(0.0) / s3;
            if x3 == 0.0 {
                continue;
            }
            let xs = [x[0], x[1], (p.0 - k1).max(0.0) / first.scale];
            for (a, xa) in xs.into_iter().enumerate() {
                m[a][3] += w * xa * x3;
                m[3][a] += w * x3 * xa;
            }
            m[3][3] += w * x3 * x3;
            v[3] += w * x3 * p.1;
        }
        let scale = [self.scale[0], self.scale[1], first.scale, s3];
        solve(m, v, scale, self.pts, |n| {
            [1.0, n, (n - k1).max(0.0), (n - k2).max(0.0)]
        })
    }
}

/// One segment of a segmented model: a constant or a line over n.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct Segment {
    /// First n of the segment (the median n of its first bucket).
    pub from_n: f64,
    /// Last n of the segment.
    pub to_n: f64,
    /// Cost at n = 0 of its line (its level when constant), ns.
    pub a: f64,
    /// Slope, ns per item (0 when constant).
    pub b: f64,
    /// Whether the segment is a line (else a constant).
    pub line: bool,
}

impl Segment {
    /// The segment's cost at n.
    pub fn at(&self, n: f64) -> f64 {
        self.a + self.b * n
    }

    /// Its rise from its first to its last n, relative.
    pub fn rise(&self) -> f64 {
        let lo = self.at(self.from_n);
        if lo > 0.0 {
            (self.at(self.to_n) - lo) / lo
        } else {
            0.0
        }
    }
}

/// Segments joined by jumps.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Segmented {
    /// The segments, by n.
    pub segments: Vec<Segment>,
    /// Where each jump happens (between two buckets).
    pub jumps_at: Vec<f64>,
    /// Buckets left out because they straddle a jump.
    pub left_out: usize,
    /// χ².
    pub chi2: f64,
    /// Parameters, for the criterion.
    pub params: usize,
}

impl Segmented {
    /// The model's cost at n.
    pub fn at(&self, n: f64) -> f64 {
        let i = self.jumps_at.iter().filter(|&&j| n >= j).count();
        self.segments[i].at(n)
    }

    /// Cost just before and just after jump `i`.
    pub fn jump(&self, i: usize) -> (f64, f64) {
        let at = self.jumps_at[i];
        (self.segments[i].at(at), self.segments[i + 1].at(at))
    }
}

/// Minimum buckets in a segment.
const SEGMENT_MIN: usize = 3;

/// Fits one segment (constant or line) to `pts`; returns it with its χ².
fn segment(pts: &[Point], line: bool) -> Option<(Segment, f64)> {
    let (from_n, to_n) = (pts.first()?.0, pts.last()?.0);
    if line {
        let ([a, b], chi2) = wls(pts, |n| [1.0, n])?;
        Some((
            Segment {
                from_n,
                to_n,
                a,
                b,
                line: true,
            },
            chi2,
        ))
    } else {
        let f = fit_class(Class::Constant, pts);
        Some((
            Segment {
                from_n,
                to_n,
                a: f.a,
                b: 0.0,
                line: false,
            },
            f.chi2,
        ))
    }
}

/// The best model with one jump (each side a constant or a line, the
/// cheaper by the criterion) and the best with two jumps between
/// constants. A bucket that straddles a jump may be left out (its median
/// lies between the levels); that costs one parameter.
pub fn fit_segmented(pts: &[Point], penalty: f64, scale: f64) -> Vec<Segmented> {
    let k = pts.len();
    let mut out = Vec::new();
    if k < 2 * SEGMENT_MIN {
        return out;
    }
    // Parts of the data: [lo, hi).
    let part = |lo: usize, hi: usize, line: bool| segment(&pts[lo..hi], line);
    let ic = |chi2: f64, params: usize| chi2 / scale + penalty * params as f64;
    let mut best1: Option<(f64, Segmented)> = None;
    for i in SEGMENT_MIN..=k - SEGMENT_MIN {
        // Jump between bucket i-1 and i; optionally drop i-1 or i.
        for drop in [None, Some(i - 1), Some(i)] {
            let (l_hi, r_lo) = match drop {
                None => (i, i),
                Some(d) if d < i => (d, i),
                Some(d) => (i, d + 1),
            };
            let side = |lo: usize, hi: usize| -> Option<(Segment, f64, usize)> {
                let c = part(lo, hi, false)?;
                let l = if hi - lo >= 3 {
                    part(lo, hi, true)
                } else {
                    None
                };
                match l {
                    Some(l) if ic(l.1, 2) < ic(c.1, 1) => Some((l.0, l.1, 2)),
                    _ => Some((c.0, c.1, 1)),
                }
            };
            let (Some(left), Some(right)) = (side(0, l_hi), side(r_lo, k)) else {
                continue;
            };
            let params = left.2 + right.2 + 1 + usize::from(drop.is_some());
            let chi2 = left.1 + right.1;
            let score = ic(chi2, params);
            if best1.as_ref().is_none_or(|(s, _)| score < *s) {
                let at = (pts[i - 1].0 + pts[i].0) / 2.0;
                best1 = Some((
                    score,
                    Segmented {
                        segments: vec![left.0, right.0],
                        jumps_at: vec![at],
                        left_out: usize::from(drop.is_some()),
                        chi2,
                        params,
                    },
                ));
            }
        }
    }
    out.extend(best1.map(|b| b.1));
    // Two jumps between constants (prefix sums make each try O(1)).
    let mut pre = vec![(0.0, 0.0, 0.0); k + 1];
    for (i, p) in pts.iter().enumerate() {
        let w = 1.0 / (p.2 * p.2);
        pre[i + 1] = (pre[i].0 + w, pre[i].1 + w * p.1, pre[i].2 + w * p.1 * p.1);
    }
    let level = |lo: usize, hi: usize| {
        let (w, wy, wyy) = (
            pre[hi].0 - pre[lo].0,
            pre[hi].1 - pre[lo].1,
            pre[hi].2 - pre[lo].2,
        );
        let m = wy / w;
        (m, (wyy - wy * m).max(0.0))
    };
    let mut best2: Option<(f64, usize, usize)> = None;
    if k >= 3 * SEGMENT_MIN {
        for i in SEGMENT_MIN..=k - 2 * SEGMENT_MIN {
            for j in i + SEGMENT_MIN..=k - SEGMENT_MIN {
                let chi2 = level(0, i).1 + level(i, j).1 + level(j, k).1;
                if best2.is_none_or(|(c, _, _)| chi2 < c) {
                    best2 = Some((chi2, i, j));
                }
            }
        }
    }
    if let Some((chi2, i, j)) = best2 {
        let seg = |lo: usize, hi: usize| Segment {
            from_n: pts[lo].0,
            to_n: pts[hi - 1].0,
            a: level(lo, hi).0,
            b: 0.0,
            line: false,
        };
        out.push(Segmented {
            segments: vec![seg(0, i), seg(i, j), seg(j, k)],
            jumps_at: vec![
                (pts[i - 1].0 + pts[i].0) / 2.0,
                (pts[j - 1].0 + pts[j].0) / 2.0,
            ],
            left_out: 0,
            chi2,
            params: 5,
        });
    }
    out
}

/// The information criterion: χ²/ĉ + ln(K)·parameters, where ĉ ≥ 1 is
/// the smallest reduced χ² (χ² per degree of freedom) of any model tried.
#[derive(Debug, Clone, Copy)]
pub struct Ic {
    /// Misfit scale ĉ.
    pub scale: f64,
    /// Penalty per parameter, ln(K).
    pub penalty: f64,
}

impl Ic {
    /// The criterion of a model with χ² `chi2` and `params` parameters.
    pub fn of(&self, chi2: f64, params: usize) -> f64 {
        chi2 / self.scale + self.penalty * params as f64
    }
}

/// The χ² quantile `q` for `dof` degrees of freedom (Wilson–Hilferty).
pub fn chi2_quantile(dof: f64, z: f64) -> f64 {
    let d = dof.max(1.0);
    let t = 2.0 / (9.0 * d);
    d * (1.0 - t + z * t.sqrt()).powi(3).max(0.0)
}

/// The class fit with the least χ² (b of either sign).
pub fn best_smooth_fit(pts: &[Point]) -> Fit {
    Class::ALL
        .iter()
        .map(|&c| fit_class(c, pts))
        .min_by(|x, y| x.chi2.total_cmp(&y.chi2))
        .expect("five classes")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pts(f: impl Fn(f64) -> f64) -> Vec<Point> {
        (0..30)
            .map(|i| {
                let n = 100.0 + i as f64 * 300.0;
                (n, f(n), 0.01 * f(n).abs().max(1.0))
            })
            .collect()
    }

    #[test]
    fn wls_recovers_exact_coefficients_even_with_large_columns() {
        let p = pts(|n| 5.0 + 2.0 * n + 3e-4 * n * n);
        let ([a, b, c], chi2) = wls(&p, |n| [1.0, n, n * n]).unwrap();
        assert!((a - 5.0).abs() < 1e-6 && (b - 2.0).abs() < 1e-9 && (c - 3e-4).abs() < 1e-12);
        assert!(chi2 < 1e-12);
        assert!(wls(&p, |_| [1.0, 1.0]).is_none(), "singular design");
    }

    /// [`fit_bent2`] as it was written first: [`wls`] afresh for every
    /// pair of knots.
    fn bent2_by_wls(pts: &[Point]) -> Option<Bent2> {
        let k = pts.len();
        let mut best: Option<Bent2> = None;
        for i in 3..k - 6 {
            for j in i + 3..k - 3 {
                let (k1, k2) = (pts[i].0, pts[j].0);
                let fit = wls(pts, |n| [1.0, n, (n - k1).max(0.0), (n - k2).max(0.0)]);
                let Some(b) = fit.and_then(|f| Bent2::of(f, [k1, k2])) else {
                    continue;
                };
                if best.is_none_or(|x| b.chi2 < x.chi2) {
                    best = Some(b);
                }
            }
        }
        best
    }

    /// The shared sums give every pair's fit bit for bit as `wls` does:
    /// curves with two bends, one, none, noise, repeated and unsorted n,
    /// and an n column of zeros.
    #[test]
    fn bent2_is_bit_for_bit_wls_for_every_pair() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand::rngs::Xoshiro256PlusPlus::seed_from_u64(7);
        let bits = |b: Option<Bent2>| {
            b.map(|b| {
                [
                    b.a,
                    b.slopes[0],
                    b.slopes[1],
                    b.slopes[2],
                    b.knots[0],
                    b.knots[1],
                    b.chi2,
                ]
                .map(f64::to_bits)
            })
        };
        let mut found = 0;
        for case in 0..300 {
            let k = rng.random_range(10..60);
            let (k1, k2) = (rng.random_range(0.0..5e3), rng.random_range(5e3..1e4));
            let (s0, s1, s2) = (
                rng.random_range(-1.0..3.0),
                rng.random_range(0.0..9.0),
                rng.random_range(0.0..30.0),
            );
            let mut p: Vec<Point> = (0..k)
                .map(|i| {
                    let n = match case % 3 {
                        0 => i as f64 * 1e4 / k as f64,
                        1 => (i / 2) as f64 * 2e4 / k as f64,
                        _ => rng.random_range(0.0..1e4),
                    };
                    let y = 500.0 + s0 * n + s1 * (n - k1).max(0.0) + s2 * (n - k2).max(0.0);
                    let y = y * (1.0 + rng.random_range(-0.02..0.02));
                    (n, y, rng.random_range(0.1..20.0))
                })
                .collect();
            if case % 3 != 2 {
                p.sort_by(|a, b| a.0.total_cmp(&b.0));
            }
            let fast = fit_bent2(&p);
            found += usize::from(fast.is_some());
            assert_eq!(bits(fast), bits(bent2_by_wls(&p)), "case {case}: {p:?}");
        }
        assert!(found > 100, "only {found} cases fitted two bends");
        let zeros: Vec<Point> = (0..20).map(|i| (0.0, i as f64, 1.0)).collect();
        assert_eq!(fit_bent2(&zeros), None);
        assert_eq!(bent2_by_wls(&zeros), None);
    }

    #[test]
    fn power_finds_the_exponent() {
        for p in [0.5, 1.0, 1.5, 2.0, 3.0] {
            let f = fit_power(&pts(|n| 1000.0 + 0.01 * n.powf(p))).unwrap();
            assert!((f.p - p).abs() < 0.01, "{p}: {f:?}");
        }
        assert!(fit_power(&pts(|n| 1000.0 - n)).is_none());
    }

    #[test]
    fn bent_line_finds_its_knot() {
        let f = fit_bent(&pts(|n| 1000.0 + n + 3.0 * (n - 4000.0).max(0.0))).unwrap();
        assert!((f.knot - 4000.0).abs() <= 300.0, "{f:?}");
        assert!(
            (f.before - 1.0).abs() < 0.1 && (f.after - 4.0).abs() < 0.1,
            "{f:?}"
        );
        assert!(fit_bent(&pts(|n| 1000.0 + n)).is_none_or(|b| b.chi2 < 1e-6));
    }

    #[test]
    fn segments_find_a_step_and_a_line_before_it() {
        let ic = Ic {
            scale: 1.0,
            penalty: 30f64.ln(),
        };
        let s = fit_segmented(
            &pts(|n| if n < 5000.0 { 1000.0 + 0.1 * n } else { 9000.0 }),
            ic.penalty,
            ic.scale,
        );
        let one = &s[0];
        assert_eq!(one.jumps_at.len(), 1);
        assert!((one.jumps_at[0] - 5000.0).abs() < 300.0, "{one:?}");
        assert!(one.segments[0].line && !one.segments[1].line, "{one:?}");
        let (before, after) = one.jump(0);
        assert!(
            (after / before - 9000.0 / 1500.0).abs() < 0.1,
            "{before} {after}"
        );
        // Two plateaus of three levels.
        let s = fit_segmented(
            &pts(|n| {
                if n < 3000.0 {
                    1.0
                } else if n < 6000.0 {
                    2.0
                } else {
                    5.0
                }
            }),
            ic.penalty,
            ic.scale,
        );
        let two = s.iter().find(|m| m.jumps_at.len() == 2).unwrap();
        assert!(two.chi2 < 1e-9);
        assert!(
            (two.jumps_at[0] - 3000.0).abs() < 300.0 && (two.jumps_at[1] - 6000.0).abs() < 300.0
        );
    }

    #[test]
    fn chi2_quantiles_are_close() {
        // χ²(28) 99.9 % quantile is 56.9.
        assert!((chi2_quantile(28.0, 3.09) - 56.9).abs() < 1.0);
    }
}
