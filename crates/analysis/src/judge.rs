//! The judgement: from a [`Summary`] (bucket medians, the two ends, a
//! second curve) and the interval of the rise between the ends, a label
//! (a growth class, `undecided`, `superlinear` or `no fit`), the model
//! behind it, and the flags. The same function judges the data and every
//! bootstrap replica, so the confidence measures the whole judgement.
//!
//! The order of decisions (documented in docs/analysis.md):
//! 1. every model of the family is fitted ([`super::models`]);
//! 2. a structure (a step between segments, a bent line) is taken when it
//!    beats every smooth model clearly and passes its own checks;
//! 3. otherwise the rise between the ends decides flat against growth on
//!    its interval: flat (O(1)) when its upper bound is below the
//!    tolerance τ, growth when its lower bound is above τ, undecided in
//!    between;
//! 4. growth is named by the best smooth class, or the best model when no
//!    class fits; n, n log n and n² are told apart only over enough
//!    decades of n; a class the bootstrap replicas' majority named
//!    ([`Context::prefer`]) is named instead of the best by the
//!    criterion.

use super::fit::{Class, Fit};
use super::models::{self, Bent, Bent2, Ic, Point, Power, Segmented};
use super::resample::Summary;
use super::{Flag, Label, Options};
use serde::Serialize;

/// The model a verdict stands on.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Model {
    /// `a + b·g(n)` of one class.
    Smooth(Fit),
    /// `a + b·nᵖ` (no class fits better).
    Power(Power),
    /// A line whose slope rises at one n.
    Bent(Bent),
    /// A line whose slope rises at two n.
    Bent2(Bent2),
    /// Segments joined by jumps.
    Segmented(Segmented),
}

impl Model {
    /// The model's cost at n.
    pub fn at(&self, n: f64) -> f64 {
        match self {
            Model::Smooth(f) => f.at(n),
            Model::Power(p) => p.at(n),
            Model::Bent(b) => b.at(n),
            Model::Bent2(b) => b.at(n),
            Model::Segmented(s) => s.at(n),
        }
    }

    /// χ² of the fit.
    pub fn chi2(&self) -> f64 {
        match self {
            Model::Smooth(f) => f.chi2,
            Model::Power(p) => p.chi2,
            Model::Bent(b) => b.chi2,
            Model::Bent2(b) => b.chi2,
            Model::Segmented(s) => s.chi2,
        }
    }

    /// Parameters it was fitted with.
    pub fn params(&self) -> usize {
        match self {
            Model::Smooth(f) if f.class == Class::Constant => 1,
            Model::Smooth(_) => 2,
            Model::Power(_) => 3,
            Model::Bent(_) => 4,
            Model::Bent2(_) => 6,
            Model::Segmented(s) => s.params,
        }
    }
}

/// What was decided about one summary.
#[derive(Debug, Clone)]
pub struct Judgement {
    /// The label.
    pub label: Label,
    /// The model behind it.
    pub model: Model,
    /// Another class that fits about as well.
    pub alternative: Option<Class>,
    /// Every growth class the data cannot tell from the class named (its
    /// criterion within [`APART`] of the named class's, or of the
    /// alternative's where a bent line came close to one); empty unless a
    /// growth class is named.
    pub near: Vec<Class>,
    /// Fits of every class, simplest first (b of either sign).
    pub fits: Vec<Fit>,
    /// The best power `a + b·nᵖ`, when something grows.
    pub power: Option<Power>,
    /// Local exponent of the growing part over the lower and the upper
    /// half of the buckets.
    pub local: Option<(f64, f64)>,
    /// Flags.
    pub flags: Vec<Flag>,
    /// The rise between the ends and its interval (relative).
    pub rise: (f64, f64, f64),
}

impl Judgement {
    /// Whether it is a flat curve that surely rises
    /// ([`Candidates::rising_within`]): `O(1)` with the model of the
    /// growth class it is shaped like.
    pub fn rises_within(&self) -> bool {
        self.label == Label::Class(Class::Constant)
            && matches!(self.model, Model::Smooth(f) if f.class != Class::Constant)
    }
}

/// What a judgement needs beyond the summary.
#[derive(Debug, Clone, Copy)]
pub struct Context {
    /// The rise interval as factors of the ratio: (lower, upper) bound of
    /// high/low divided by its point value.
    pub interval: (f64, f64),
    /// Decades of n the buckets span.
    pub span: f64,
    /// Median timer overhead, ns.
    pub overhead_ns: Option<f64>,
    /// Median sample, ns (for `timer-bound`).
    pub median_ns: f64,
    /// The growth class to name when the cost grows and that class fits
    /// with b > 0: the class most bootstrap replicas named (see
    /// `analyze_runs`). `None` lets the criterion choose.
    pub prefer: Option<Class>,
}

/// Improvement of the criterion a structure needs over every smooth
/// class.
const STRUCTURE_MARGIN: f64 = 10.0;
/// … and a bent line.
const BENT_MARGIN: f64 = 6.0;
/// Criterion difference within which two classes tie (the simpler wins,
/// the other is the alternative).
const TIE: f64 = 2.0;
/// Criterion difference a class must beat another growth class by for the
/// data to tell them apart: within it the other is near
/// ([`Judgement::near`]; the best of them the alternative), and a class
/// near in a third of the replicas is in the verdict's range. Wider than
/// [`TIE`]: under heavy noise a difference of 2–8 favoured the wrong class
/// (n log n lost to n by 7.6 in one of 20 draws, tests/heavy.rs).
const APART: f64 = 8.0;
/// The smallest jump of a step, relative to the lower level.
const MIN_JUMP: f64 = 0.15;
/// Ends closer than this are never a growth class.
pub(crate) const NEAR: f64 = 0.05;
/// Share of the level a bucket may stray from a fitted segment (plus
/// three standard errors): how flat a plateau must be, whatever the jump.
const SEGMENT_TOLERANCE: f64 = 0.05;
/// Relative error added to every bucket for the lack-of-fit test: misfit
/// smaller than this is not practically a misfit.
const PRACTICAL: f64 = 0.03;

/// Judges one summary.
pub fn judge(sum: &Summary, ctx: &Context, opts: &Options) -> Judgement {
    let mut flags = Vec::new();
    if let Some(f) = warm_up_flag(sum) {
        flags.push(f);
    }
    let b = &sum.buckets[sum.warm_up..];
    let pts = models::points(b);
    let tau = opts.tolerance;
    let ratio = sum.ratio();
    let rise = ratio - 1.0;
    let (lo, hi) = (
        (ratio * ctx.interval.0 - 1.0).min(rise),
        (ratio * ctx.interval.1 - 1.0).max(rise),
    );
    let cands = Candidates::fit(&pts);
    let near = rise.abs() < NEAR;
    let flat = |label| Decision {
        label,
        model: Model::Smooth(cands.fits[0]),
        alternative: None,
        local: None,
    };
    let d = if let Some(s) = cands.step(b) {
        step_decision(s, tau, near, &mut flags)
    } else if hi < tau {
        cands
            .rising_within((lo, rise, hi), tau, ctx)
            .unwrap_or_else(|| flat(Label::Class(Class::Constant)))
    } else if lo <= tau || near {
        flat(Label::Undecided)
    } else {
        cands.growth(&pts, ctx, opts, &mut flags)
    };
    // Flags the label does not carry.
    if d.label == Label::Class(Class::Constant)
        && !matches!(d.model, Model::Segmented(_))
        && hi < -NEAR
        && ratio < 1.0 - 2.0 * NEAR
    {
        flags.push(Flag::Falls { ratio });
    }
    other_flags(sum, ctx, tau, &mut flags);
    let near = cands.near(&d);
    Judgement {
        label: d.label,
        model: d.model,
        alternative: d.alternative,
        near,
        fits: cands.fits,
        power: cands.power,
        local: d.local,
        flags,
        rise: (rise, lo, hi),
    }
}

/// The `warm-up` flag, when leading buckets are a warm-up transient: how
/// much the first exceeds the best smooth fit of the rest.
fn warm_up_flag(sum: &Summary) -> Option<Flag> {
    let skip = sum.warm_up;
    if skip == 0 {
        return None;
    }
    let first = &sum.buckets[0];
    let rest = models::points(&sum.buckets[skip..]);
    let best = models::best_smooth_fit(&rest);
    Some(Flag::WarmUp {
        until_n: sum.buckets[skip - 1].n_hi,
        excess: first.median / best.at(first.n),
    })
}

/// The flags that do not depend on the label: a second curve, runs that
/// disagree, a timer overhead that bounds the cost, noise.
fn other_flags(sum: &Summary, ctx: &Context, tau: f64, flags: &mut Vec<Flag>) {
    if let Some(Some(sh)) = &sum.shadow {
        let class = (sh.curve.len() >= 3).then(|| shadow_class(&sh.curve, tau));
        flags.push(Flag::Bimodal {
            share: sh.share,
            ratio_low: sh.ratio_low,
            ratio_high: sh.ratio_high,
            class: class.flatten(),
        });
    }
    if let Some(f) = runs_disagree(sum, tau) {
        flags.push(f);
    }
    if let Some(o) = ctx.overhead_ns
        && ctx.median_ns > 0.0
        && o / ctx.median_ns > 0.05
    {
        flags.push(Flag::TimerBound {
            overhead_ns: o,
            share: o / ctx.median_ns,
        });
    }
    if sum.spread > 1.0 {
        flags.push(Flag::Noisy { spread: sum.spread });
    }
}

/// What a judgement decided: the label, the model behind it, and what
/// goes with a growth class.
struct Decision {
    /// The label.
    label: Label,
    /// The model behind it.
    model: Model,
    /// Another class that fits about as well.
    alternative: Option<Class>,
    /// Local exponents of the growing part.
    local: Option<(f64, f64)>,
}

/// A step structure: a `step` flag per jump, and the label of its
/// steepest segment (O(n) for a segment that rises by `tau`, unless the
/// ends are `near`; else O(1)).
fn step_decision(s: Segmented, tau: f64, near: bool, flags: &mut Vec<Flag>) -> Decision {
    for i in 0..s.jumps_at.len() {
        let (from, to) = s.jump(i);
        flags.push(Flag::Step {
            at_n: s.jumps_at[i],
            from_ns: from,
            to_ns: to,
        });
    }
    let class = s
        .segments
        .iter()
        .map(|g| {
            if g.line && g.rise() >= tau && !near {
                Class::Linear
            } else {
                Class::Constant
            }
        })
        .max()
        .unwrap_or(Class::Constant);
    Decision {
        label: Label::Class(class),
        model: Model::Segmented(s),
        alternative: None,
        local: None,
    }
}

/// Every model of the family fitted to the points, and the information
/// criterion they are compared by.
struct Candidates {
    /// Every class, simplest first.
    fits: Vec<Fit>,
    /// `a + b·nᵖ`.
    power: Option<Power>,
    /// A line with one bend.
    bent: Option<Bent>,
    /// A line with two bends.
    bent2: Option<Bent2>,
    /// Segments joined by jumps.
    segs: Vec<Segmented>,
    /// The criterion, its misfit scale from the best of them all.
    ic: Ic,
    /// The criterion of the best smooth model, classes and power.
    best_any_smooth: f64,
}

/// The classes that grow (b > 0), and the one named.
struct Growth<'c> {
    /// The classes with b > 0, simplest first.
    growth: Vec<&'c Fit>,
    /// The best criterion among them.
    best: f64,
    /// The class the replicas named, when it grows here.
    preferred: Option<Fit>,
    /// The class named: the preferred one, else the simplest within
    /// [`TIE`] of the best.
    pick: Option<Fit>,
}

impl Candidates {
    /// Fits every model to `pts`.
    fn fit(pts: &[Point]) -> Candidates {
        let k = pts.len();
        let fits: Vec<Fit> = Class::ALL
            .iter()
            .map(|&c| models::fit_class(c, pts))
            .collect();
        let power = models::fit_power(pts);
        let bent = models::fit_bent(pts);
        let bent2 = models::fit_bent2(pts);
        let reduced = |chi2: f64, params: usize| chi2 / (k as f64 - params as f64).max(1.0);
        let mut scale = fits
            .iter()
            .map(|f| reduced(f.chi2, if f.class == Class::Constant { 1 } else { 2 }))
            .chain(power.map(|p| reduced(p.chi2, 3)))
            .chain(bent.map(|b| reduced(b.chi2, 4)))
            .chain(bent2.map(|b| reduced(b.chi2, 6)))
            .fold(f64::INFINITY, f64::min)
            .max(1.0);
        let penalty = (k as f64).ln().max(1.0);
        let segs = models::fit_segmented(pts, penalty, scale);
        scale = segs
            .iter()
            .map(|s| reduced(s.chi2, s.params))
            .fold(scale, f64::min)
            .max(1.0);
        let ic = Ic { scale, penalty };
        let class_ic = |f: &Fit| ic.of(f.chi2, if f.class == Class::Constant { 1 } else { 2 });
        let best_smooth = fits.iter().map(class_ic).fold(f64::INFINITY, f64::min);
        let best_any_smooth = power.map_or(best_smooth, |p| best_smooth.min(ic.of(p.chi2, 3)));
        Candidates {
            fits,
            power,
            bent,
            bent2,
            segs,
            ic,
            best_any_smooth,
        }
    }

    /// A flat curve (its rise's upper bound `hi` below τ) that surely
    /// rises — by half of τ or more (`lo`), or by more than [`NEAR`] where
    /// its upper bound comes within a third of τ of τ (flat without room
    /// to spare, as under heavy noise) — or perhaps rises: its upper
    /// bound that close to τ and its measured rise (`rise`) above
    /// [`NEAR`], the lower bound not: `O(1)` by the tolerance, yet shaped
    /// like a growth class, the one named with its model, as the
    /// alternative ([`Judgement::rises_within`]). The verdict states the
    /// range from O(1) to it (`stated`), so that a cost rising 15 % as
    /// log n does is not a plain O(1) even where noise hides whether it
    /// rises. `None` otherwise, or where no class grows.
    fn rising_within(
        &self,
        (lo, rise, hi): (f64, f64, f64),
        tau: f64,
        ctx: &Context,
    ) -> Option<Decision> {
        let close = hi >= tau * 2.0 / 3.0;
        if lo < tau / 2.0 && !(close && (lo > NEAR || rise > NEAR)) {
            return None;
        }
        let f = self.growing(ctx).pick?;
        Some(Decision {
            label: Label::Class(Class::Constant),
            model: Model::Smooth(f),
            alternative: Some(f.class),
            local: None,
        })
    }

    /// The growth classes the data cannot tell from the class `d` names
    /// ([`Judgement::near`]); of a flat curve that surely rises
    /// ([`Candidates::rising_within`]), the class it is shaped like and
    /// those within [`APART`] of it.
    fn near(&self, d: &Decision) -> Vec<Class> {
        let Label::Class(named) = d.label else {
            return Vec::new();
        };
        let anchor = match &d.model {
            Model::Smooth(f) if f.class != Class::Constant => Some(f.class),
            Model::Bent(_) | Model::Bent2(_) => d.alternative,
            _ => None,
        };
        let Some(anchor) = anchor.and_then(|c| self.fits.iter().find(|f| f.class == c)) else {
            return Vec::new();
        };
        // The alternative is among them: a growing class within APART of
        // the named one, or the anchor itself.
        let limit = self.class_ic(anchor) + APART;
        self.fits[1..]
            .iter()
            .filter(|f| f.b > 0.0 && f.class != named && self.class_ic(f) <= limit)
            .map(|f| f.class)
            .collect()
    }

    /// The criterion of a class fit.
    fn class_ic(&self, f: &Fit) -> f64 {
        self.ic
            .of(f.chi2, if f.class == Class::Constant { 1 } else { 2 })
    }

    /// A structure that beats every smooth model clearly and holds on the
    /// buckets `b`.
    fn step(&self, b: &[Bucket]) -> Option<Segmented> {
        let ic = &self.ic;
        self.segs
            .iter()
            .filter(|s| ic.of(s.chi2, s.params) <= self.best_any_smooth - STRUCTURE_MARGIN)
            .filter(|s| segments_hold(s, b))
            .min_by(|x, y| ic.of(x.chi2, x.params).total_cmp(&ic.of(y.chi2, y.params)))
            .cloned()
    }

    /// Growth: the best class, a bent line, or no class.
    fn growth(
        &self,
        pts: &[Point],
        ctx: &Context,
        opts: &Options,
        flags: &mut Vec<Flag>,
    ) -> Decision {
        let g = self.growing(ctx);
        if let Some((m, alternative)) = self.bent_line(&g) {
            slope_change_flags(&m, flags);
            return Decision {
                label: Label::Class(Class::Linear),
                model: m,
                alternative,
                local: None,
            };
        }
        match g.pick {
            Some(f) => self.name_class(f, &g, pts, ctx, opts),
            None => Decision {
                label: Label::Undecided,
                model: Model::Smooth(self.fits[0]),
                alternative: None,
                local: None,
            },
        }
    }

    /// The classes that grow and the one to name.
    fn growing(&self, ctx: &Context) -> Growth<'_> {
        let growth: Vec<&Fit> = self.fits[1..].iter().filter(|f| f.b > 0.0).collect();
        let best = growth
            .iter()
            .map(|f| self.class_ic(f))
            .fold(f64::INFINITY, f64::min);
        let preferred = ctx
            .prefer
            .and_then(|c| growth.iter().find(|f| f.class == c).map(|f| **f));
        let pick = preferred.or_else(|| {
            growth
                .iter()
                .find(|f| self.class_ic(f) <= best + TIE)
                .map(|f| **f)
        });
        Growth {
            growth,
            best,
            preferred,
            pick,
        }
    }

    /// A line whose cost per item rises once or twice (a structure
    /// leaving one cache, then the next), when it beats every class; with
    /// the best class as the one that fits about as well where the bent
    /// line does not beat it clearly (the verdict then names both).
    fn bent_line(&self, g: &Growth) -> Option<(Model, Option<Class>)> {
        let ic = &self.ic;
        let bent1 = self.bent.map(|x| (ic.of(x.chi2, 4), Model::Bent(x)));
        let bent2 = self.bent2.map(|x| (ic.of(x.chi2, 6), Model::Bent2(x)));
        // A line with one bend is O(n) whose cost per item rises once (a
        // structure outgrowing a cache): n² must beat it by the margin a
        // structure needs, since over a decade or two the two are hard to
        // tell apart (select's scan over n descriptors). Not n log n: a bent
        // line follows it too closely for the two to be told apart.
        let quadratic_pick = g.pick.is_some_and(|f| f.class == Class::Quadratic);
        [bent1, bent2]
            .into_iter()
            .flatten()
            .filter(|(c, m)| match g.preferred.map(|f| f.class) {
                // Named by the replicas: a bent line only for O(n), when
                // it beats the straight one.
                Some(Class::Linear) => *c <= self.class_ic(&g.preferred.unwrap()) - BENT_MARGIN,
                Some(_) => false,
                None => {
                    *c <= g.best - BENT_MARGIN
                        || (quadratic_pick
                            && matches!(m, Model::Bent(_))
                            && *c <= g.best + STRUCTURE_MARGIN)
                }
            })
            .min_by(|x, y| x.0.total_cmp(&y.0))
            .map(|(c, m)| {
                // The best class but a line, when the bent line does not
                // beat it clearly (it came close to n², or the replicas
                // named O(n)), or a smooth power steeper than n fits about
                // as well as the bent line (bind-fresh here: two bends,
                // or n^2.4 as well): the data cannot tell them apart.
                let best = g
                    .growth
                    .iter()
                    .min_by(|x, y| self.class_ic(x).total_cmp(&self.class_ic(y)))
                    .map(|f| f.class);
                let smooth_too = self
                    .power
                    .is_some_and(|p| p.p > 1.1 && c > ic.of(p.chi2, 3) - BENT_MARGIN);
                let alternative = best
                    .filter(|&k| k != Class::Linear && (c > g.best - BENT_MARGIN || smooth_too));
                (m, alternative)
            })
    }

    /// Names the growth class `f`: superlinear over too few decades, no
    /// fit where it misses and a power fits, else the class, with the
    /// class that fits about as well.
    fn name_class(
        &self,
        f: Fit,
        g: &Growth,
        pts: &[Point],
        ctx: &Context,
        opts: &Options,
    ) -> Decision {
        let alternative = g
            .growth
            .iter()
            .filter(|x| x.class != f.class && self.class_ic(x) <= self.class_ic(&f) + APART)
            .min_by(|x, y| self.class_ic(x).total_cmp(&self.class_ic(y)))
            .map(|x| x.class);
        let superlinear = matches!(f.class, Class::NLogN | Class::Quadratic);
        if superlinear && ctx.span < opts.min_decades {
            Decision {
                label: Label::Superlinear,
                model: Model::Smooth(f),
                alternative: None,
                local: self.power.and_then(|p| local_exponents(pts, p.a)),
            }
        } else if let Some(p) = self.power.filter(|p| {
            !near_class_exponent(p.p)
                && !fits_practically(pts, |n| f.at(n), 2)
                && fits_practically(pts, |n| p.at(n), 3)
        }) {
            // The class misses where a power fits: no class fits.
            Decision {
                label: Label::NoFit,
                model: Model::Power(p),
                alternative: None,
                local: local_exponents(pts, p.a),
            }
        } else {
            Decision {
                label: Label::Class(f.class),
                model: Model::Smooth(f),
                alternative,
                local: None,
            }
        }
    }
}

/// A `slope-change` flag per bend of a bent line.
fn slope_change_flags(m: &Model, flags: &mut Vec<Flag>) {
    let knots: Vec<(f64, f64, f64)> = match m {
        Model::Bent(x) => vec![(x.knot, x.before, x.after)],
        Model::Bent2(x) => vec![
            (x.knots[0], x.slopes[0], x.slopes[1]),
            (x.knots[1], x.slopes[1], x.slopes[2]),
        ],
        _ => Vec::new(),
    };
    for (at_n, before_ns, after_ns) in knots {
        flags.push(Flag::SlopeChange {
            at_n,
            before_ns,
            after_ns,
        });
    }
}

/// Whether a segmented model's jumps are real steps and its segments hold:
/// every jump at least [`MIN_JUMP`] of the lower level and four standard
/// errors; every bucket within three standard errors plus
/// [`SEGMENT_TOLERANCE`] of its segment (the bucket on each side of a jump
/// may straddle it and is not checked).
fn segments_hold(s: &Segmented, b: &[Bucket]) -> bool {
    for i in 0..s.jumps_at.len() {
        let (from, to) = s.jump(i);
        let lower = from.min(to);
        if lower.is_nan() || lower <= 0.0 {
            return false;
        }
        let at = s.jumps_at[i];
        let left = b.iter().rev().find(|x| x.n < at);
        let right = b.iter().find(|x| x.n > at);
        let (Some(l), Some(r)) = (left, right) else {
            return false;
        };
        let se = (l.se * l.se + r.se * r.se).sqrt();
        let jump = (to - from).abs();
        if jump < MIN_JUMP * lower || jump < 4.0 * se {
            return false;
        }
    }
    let near_jump = |x: &Bucket| {
        s.jumps_at.iter().any(|&j| {
            let l = b.iter().rev().find(|y| y.n < j).map(|y| y.n);
            let r = b.iter().find(|y| y.n > j).map(|y| y.n);
            Some(x.n) == l || Some(x.n) == r
        })
    };
    b.iter().filter(|x| !near_jump(x)).all(|x| {
        let m = s.at(x.n);
        (x.median - m).abs() <= SEGMENT_TOLERANCE * m.abs() + 3.0 * x.se
    })
}

/// Whether a power's exponent is that of a class: within 0.1 of 1 (n) or
/// 2 (n²) — such a power is the class, not a misfit of it.
fn near_class_exponent(p: f64) -> bool {
    (p - 1.0).abs() < 0.1 || (p - 2.0).abs() < 0.1
}

/// Lack of fit, practically: the model's χ² with every standard error
/// widened by [`PRACTICAL`] of the level is within the 99.9 % quantile
/// of χ² with its degrees of freedom.
fn fits_practically(pts: &[Point], at: impl Fn(f64) -> f64, params: usize) -> bool {
    let chi2: f64 = pts
        .iter()
        .map(|&(n, y, se)| {
            let e2 = se * se + (PRACTICAL * y).powi(2);
            (y - at(n)).powi(2) / e2
        })
        .sum();
    let dof = (pts.len() as f64 - params as f64).max(1.0);
    chi2 <= models::chi2_quantile(dof, 3.09)
}

/// Log-log slope of the growing part (cost − a) over the lower and upper
/// half of the points.
pub fn local_exponents(pts: &[Point], a: f64) -> Option<(f64, f64)> {
    let grow: Vec<(f64, f64)> = pts
        .iter()
        .filter(|p| p.0 > 0.0 && p.1 - a > 0.0)
        .map(|p| (p.0.ln(), (p.1 - a).ln()))
        .collect();
    if grow.len() < 6 {
        return None;
    }
    let half = grow.len() / 2;
    let slope = |xs: &[(f64, f64)]| {
        let k = xs.len() as f64;
        let mx = xs.iter().map(|p| p.0).sum::<f64>() / k;
        let my = xs.iter().map(|p| p.1).sum::<f64>() / k;
        let sxx: f64 = xs.iter().map(|p| (p.0 - mx).powi(2)).sum();
        let sxy: f64 = xs.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
        (sxx > 0.0).then(|| sxy / sxx)
    };
    Some((slope(&grow[..half])?, slope(&grow[half..])?))
}

/// The class of a second curve: the best growth class when it rises by
/// the tolerance over its range, else O(1).
fn shadow_class(curve: &[Point], tau: f64) -> Option<Class> {
    let fits: Vec<Fit> = Class::ALL
        .iter()
        .map(|&c| models::fit_class(c, curve))
        .collect();
    let (lo, hi) = (curve.first()?.0, curve.last()?.0);
    let best = fits[1..]
        .iter()
        .filter(|f| f.b > 0.0)
        .min_by(|x, y| x.chi2.total_cmp(&y.chi2))?;
    let rise = (best.at(hi) - best.at(lo)) / best.at(lo);
    let significant = fits[0].chi2 - best.chi2 > 9f64.max(0.1 * best.chi2);
    Some(if significant && rise >= tau {
        best.class
    } else {
        Class::Constant
    })
}

/// Some runs clearly flat (their own ends within τ/2) and others clearly
/// growing or falling (beyond 2τ).
fn runs_disagree(sum: &Summary, tau: f64) -> Option<Flag> {
    let mut per: Vec<(u32, f64)> = sum
        .slot_ends
        .iter()
        .filter(|e| e.1 > 0.0 && e.2 > 0.0)
        .map(|e| (e.0, e.2 / e.1 - 1.0))
        .collect();
    per.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    per.dedup_by(|a, b| a.0 == b.0);
    if per.len() < 2 {
        return None;
    }
    let flat = per.iter().any(|p| p.1.abs() < tau / 2.0);
    let moves = per.iter().any(|p| p.1.abs() > 2.0 * tau);
    (flat && moves).then(|| Flag::RunsDisagree {
        runs: per.iter().map(|p| p.0).collect(),
        rises: per.iter().map(|p| p.1).collect(),
    })
}

use super::buckets::Bucket;
