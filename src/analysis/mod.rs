//! From samples to a verdict: per-n buckets, the growth class with its
//! fit and confidence, the growth exponent with an interval, the cost at
//! low and high n in words, and flags for structure a class misses
//! (steps, a second curve, runs that disagree). The method is described in
//! `docs/analysis.md`; every threshold is named there.

pub mod buckets;
pub mod csvin;
pub mod fit;
pub mod flags;
pub mod profile;
pub mod units;

pub use buckets::{Bucket, Sample};
pub use fit::{Class, Fit, Rule};

use rand::SeedableRng;
use rand_distr::{Distribution, Normal};
use serde::Serialize;
use units::{fmt_n, fmt_ns};

/// Analysis settings.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Buckets along n for the fits.
    pub buckets: usize,
    /// The class rule's thresholds.
    pub rule: Rule,
    /// Bootstrap replicas for the confidence and the exponent interval.
    pub replicas: usize,
    /// Seed of the bootstrap (verdicts are reproducible).
    pub seed: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            buckets: 30,
            rule: Rule::default(),
            replicas: 200,
            seed: 0x5ca1ab1e,
        }
    }
}

/// An estimate with a 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    /// Point estimate.
    pub value: f64,
    /// Lower end of the interval.
    pub lo: f64,
    /// Upper end of the interval.
    pub hi: f64,
}

/// A cost at one n.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Level {
    /// n (median n of the bucket).
    pub n: f64,
    /// Median cost, ns.
    pub ns: f64,
}

/// Something about a series its class does not say.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "flag", rename_all = "kebab-case")]
pub enum Flag {
    /// A jump between two plateaus.
    Step {
        /// Where it jumps.
        at_n: f64,
        /// Level before, ns.
        from_ns: f64,
        /// Level after, ns.
        to_ns: f64,
    },
    /// Linear cost whose slope rises at one n (a structure leaving a cache).
    SlopeChange {
        /// Where.
        at_n: f64,
        /// ns per item before.
        before_ns: f64,
        /// ns per item after.
        after_ns: f64,
    },
    /// A share of samples on a second, slower curve.
    Bimodal {
        /// Share of samples on it (where it shows).
        share: f64,
        /// Its cost relative to the main curve at low n.
        ratio_low: f64,
        /// … and at high n.
        ratio_high: f64,
        /// Its own growth class, if it can be told.
        class: Option<Class>,
    },
    /// Runs classify differently: some flat, some growing.
    RunsDisagree {
        /// Class of each run, in run order.
        classes: Vec<Class>,
    },
    /// Significant growth, but below the flat threshold.
    SlightGrowth {
        /// Rise over the range, relative.
        rise: f64,
    },
    /// The cost falls as n grows.
    Falls {
        /// Cost at high n over cost at low n.
        ratio: f64,
    },
    /// The timer's own cost is a large part of what is measured.
    TimerBound {
        /// Median timer overhead, ns.
        overhead_ns: f64,
        /// Overhead over the median sample.
        share: f64,
    },
    /// The spread within buckets is as large as the cost itself.
    Noisy {
        /// Median over buckets of (p90 − p10) / median.
        spread: f64,
    },
}

impl Flag {
    /// The flag's short name (`step`, `bimodal`, …).
    pub fn name(&self) -> &'static str {
        match self {
            Flag::Step { .. } => "step",
            Flag::SlopeChange { .. } => "slope-change",
            Flag::Bimodal { .. } => "bimodal",
            Flag::RunsDisagree { .. } => "runs-disagree",
            Flag::SlightGrowth { .. } => "slight-growth",
            Flag::Falls { .. } => "falls",
            Flag::TimerBound { .. } => "timer-bound",
            Flag::Noisy { .. } => "noisy",
        }
    }

    /// The flag in words.
    pub fn describe(&self) -> String {
        match self {
            Flag::Step {
                at_n,
                from_ns,
                to_ns,
            } => format!(
                "step at n ≈ {}: {} → {} (a jump between plateaus)",
                fmt_n(*at_n),
                fmt_ns(*from_ns),
                fmt_ns(*to_ns)
            ),
            Flag::SlopeChange {
                at_n,
                before_ns,
                after_ns,
            } => format!(
                "slope change at n ≈ {}: {} per item before, {} after (a structure outgrowing a cache?)",
                fmt_n(*at_n),
                fmt_ns(*before_ns),
                fmt_ns(*after_ns)
            ),
            Flag::Bimodal {
                share,
                ratio_low,
                ratio_high,
                class,
            } => {
                let ratio = if (ratio_high / ratio_low - 1.0).abs() < 0.2 {
                    format!("{ratio_low:.1}× slower")
                } else {
                    format!("{ratio_low:.1}× slower at low n, {ratio_high:.1}× at high n")
                };
                let grows = class.map_or(String::new(), |c| format!(", growing {c}"));
                format!(
                    "bimodal: {:.0} % of samples on a second curve {ratio}{grows}",
                    share * 100.0
                )
            }
            Flag::RunsDisagree { classes } => {
                let per: Vec<String> = classes
                    .iter()
                    .enumerate()
                    .map(|(i, c)| format!("run {}: {c}", i + 1))
                    .collect();
                format!("runs disagree: {}", per.join(", "))
            }
            Flag::SlightGrowth { rise } => format!(
                "slight growth: +{:.1} % over the range (significant, but below the flat threshold)",
                rise * 100.0
            ),
            Flag::Falls { ratio } => format!("falls: high-n cost is ×{ratio:.2} the low-n cost"),
            Flag::TimerBound { overhead_ns, share } => format!(
                "timer-bound: the timer's own cost ({}) is {:.0} % of the median sample",
                fmt_ns(*overhead_ns),
                share * 100.0
            ),
            Flag::Noisy { spread } => format!(
                "noisy: p10–p90 spans {:.0} % of the median within buckets",
                spread * 100.0
            ),
        }
    }
}

/// The verdict on one series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// The growth class.
    pub class: Class,
    /// Share of bootstrap replicas that chose the same class (0–1).
    pub confidence: f64,
    /// Fit of the chosen class.
    pub fit: Fit,
    /// Fits of every class, simplest first.
    pub fits: Vec<Fit>,
    /// Another growth class that fits about as well (within the rule's
    /// tie tolerance): the data cannot tell the two apart.
    pub alternative: Option<Class>,
    /// Rise over the n range predicted by the best growth model, relative.
    pub rise: f64,
    /// Log-log slope of the bucket medians, with a 95 % bootstrap interval.
    pub exponent: Estimate,
    /// Median cost (and median n) of the 10 % of samples with the
    /// smallest n.
    pub low: Level,
    /// … and of the 10 % with the largest n.
    pub high: Level,
    /// Samples analysed.
    pub samples: usize,
    /// Runs they came from.
    pub runs: usize,
    /// Median timer overhead, ns, when known.
    pub overhead_ns: Option<f64>,
    /// Per-n summaries.
    pub buckets: Vec<Bucket>,
    /// Structure the class does not describe.
    pub flags: Vec<Flag>,
}

impl Verdict {
    /// high / low cost.
    pub fn ratio(&self) -> f64 {
        self.high.ns / self.low.ns
    }

    /// "3.10 µs at n = 10 → 3.20 µs at n = 10 000: flat (×1.03)".
    pub fn words(&self) -> String {
        let r = self.ratio();
        let how = if r < 0.67 {
            "falls"
        } else if r < 0.9 {
            "falls slightly"
        } else if r < 1.1 {
            "flat"
        } else if r < 1.5 {
            "grows slightly"
        } else if r < 3.0 {
            "grows"
        } else {
            "grows steeply"
        };
        format!(
            "{} at n = {} → {} at n = {}: {how} (×{r:.2})",
            fmt_ns(self.low.ns),
            fmt_n(self.low.n),
            fmt_ns(self.high.ns),
            fmt_n(self.high.n)
        )
    }

    /// The fitted model in words ("1.80 µs + 0.13 ns·n").
    pub fn model(&self) -> String {
        let f = &self.fit;
        let term = match f.class {
            Class::Constant => return fmt_ns(f.a),
            Class::Log => "ln(n+1)",
            Class::Linear => "n",
            Class::NLogN => "n·ln(n+1)",
            Class::Quadratic => "n²",
        };
        let b = if f.b.abs() >= 0.01 {
            format!("{:.3} ns", f.b)
        } else {
            format!("{:.3e} ns", f.b)
        };
        format!("{} + {b}·{term}", fmt_ns(f.a))
    }

    /// Flag names joined by `;` (for tables).
    pub fn flag_names(&self) -> String {
        self.flags
            .iter()
            .map(|f| f.name())
            .collect::<Vec<_>>()
            .join(";")
    }
}

/// Why a series cannot be judged.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Insufficient {
    /// Not enough samples.
    #[error("only {0} samples (at least 10 are needed)")]
    TooFewSamples(usize),
    /// n does not vary enough.
    #[error("n takes only {0} distinct values (at least 3 are needed)")]
    TooFewN(usize),
}

/// Judges a series. `overhead_ns` is the median timer overhead, if known.
pub fn analyze(
    samples: &[Sample],
    overhead_ns: Option<f64>,
    opts: &Options,
) -> Result<Verdict, Insufficient> {
    if samples.len() < 10 {
        return Err(Insufficient::TooFewSamples(samples.len()));
    }
    let buckets = buckets::bucketize(samples, opts.buckets);
    if buckets.len() < 3 {
        return Err(Insufficient::TooFewN(buckets.len()));
    }
    let pts = fit::points(&buckets);
    let point = decide(&buckets, opts.rule);
    let choice = point.choice.clone();
    let slope = |p: &[(f64, f64, f64)]| {
        fit::loglog_slope(&p.iter().map(|x| (x.0, x.1)).collect::<Vec<_>>())
    };

    // Parametric bootstrap: perturb each bucket median by its standard
    // error; each replica votes for a class.
    let mut rng = rand::rngs::StdRng::seed_from_u64(opts.seed);
    let z = Normal::new(0.0, 1.0).expect("valid normal");
    let mut votes = [0usize; Class::ALL.len()];
    let mut slopes = Vec::with_capacity(opts.replicas);
    let mut replica = buckets.clone();
    for _ in 0..opts.replicas {
        for (r, b) in replica.iter_mut().zip(&buckets) {
            r.median = b.median + b.se * z.sample(&mut rng);
        }
        votes[decide(&replica, opts.rule).class as usize] += 1;
        slopes.push(slope(&fit::points(&replica)));
    }
    // The verdict is the class most replicas chose (the point estimate
    // wins ties), so that one lucky or unlucky bucket cannot decide it.
    let point_class = point.class as usize;
    let modal = (0..votes.len())
        .max_by_key(|&i| (votes[i], i == point_class))
        .expect("five classes");
    let class = Class::ALL[modal];
    slopes.retain(|s| s.is_finite());
    slopes.sort_by(f64::total_cmp);
    let exponent = Estimate {
        value: slope(&pts),
        lo: buckets::quantile(&slopes, 0.025),
        hi: buckets::quantile(&slopes, 0.975),
    };
    let (class, confidence) = if opts.replicas == 0 {
        (point.class, f64::NAN)
    } else {
        (class, votes[modal] as f64 / opts.replicas as f64)
    };

    let (low, high) = ends(samples);
    let mut v = Verdict {
        class,
        confidence,
        fit: choice.fits[class as usize],
        fits: choice.fits.clone(),
        alternative: if class == point.class {
            point.alternative()
        } else {
            Some(point.class)
        },
        rise: choice.rise,
        exponent,
        low,
        high,
        samples: samples.len(),
        runs: {
            let mut r: Vec<u32> = samples.iter().map(|s| s.run).collect();
            r.sort_unstable();
            r.dedup();
            r.len()
        },
        overhead_ns,
        buckets: Vec::new(),
        flags: Vec::new(),
    };

    // Flags.
    if class == point.class && !point.steps.is_empty() {
        for s in &point.steps {
            v.flags.push(Flag::Step {
                at_n: s.at_n,
                from_ns: s.from_ns,
                to_ns: s.to_ns,
            });
        }
    } else if class == point.class
        && let Some(k) = &point.kink
    {
        v.flags.push(Flag::SlopeChange {
            at_n: k.at_n,
            before_ns: k.slope_before,
            after_ns: k.slope_after,
        });
    } else if v.class == Class::Constant
        && choice.significant
        && choice.rise > 0.0
        && choice.rise < opts.rule.flat
    {
        v.flags.push(Flag::SlightGrowth { rise: choice.rise });
    }
    let lin = choice.fits[2];
    if lin.b < 0.0 && v.ratio() < 1.0 - opts.rule.flat {
        let drop_chi2 = choice.fits[0].chi2 - lin.chi2;
        if drop_chi2 > 9f64.max(0.1 * lin.chi2) {
            v.flags.push(Flag::Falls { ratio: v.ratio() });
        }
    }
    if let Some(sh) = flags::find_shadow(samples) {
        let class = (sh.curve.len() >= 3).then(|| fit::choose(&sh.curve, opts.rule).class);
        v.flags.push(Flag::Bimodal {
            share: sh.share,
            ratio_low: sh.ratio_low,
            ratio_high: sh.ratio_high,
            class,
        });
    }
    if let Some(f) = runs_disagree(samples, opts) {
        v.flags.push(f);
    }
    let mut all: Vec<f64> = samples.iter().map(|s| s.ns).collect();
    all.sort_by(f64::total_cmp);
    let median = buckets::quantile(&all, 0.5);
    if let Some(o) = overhead_ns
        && median > 0.0
        && o / median > 0.05
    {
        v.flags.push(Flag::TimerBound {
            overhead_ns: o,
            share: o / median,
        });
    }
    let mut spreads: Vec<f64> = buckets
        .iter()
        .filter(|b| b.median > 0.0)
        .map(|b| (b.p90 - b.p10) / b.median)
        .collect();
    spreads.sort_by(f64::total_cmp);
    let spread = buckets::quantile(&spreads, 0.5);
    if spread > 1.0 {
        v.flags.push(Flag::Noisy { spread });
    }
    v.buckets = buckets;
    Ok(v)
}

/// The class rule applied to one set of buckets, with the structure that
/// overrides a smooth class: plateaus joined by steps are O(1); a line
/// whose slope rises at one point is O(n).
#[derive(Debug, Clone)]
struct Decision {
    class: Class,
    choice: fit::Choice,
    steps: Vec<flags::Step>,
    kink: Option<flags::Kink>,
}

impl Decision {
    fn alternative(&self) -> Option<Class> {
        if self.steps.is_empty() && self.kink.is_none() {
            self.choice.alternative
        } else {
            None
        }
    }
}

fn decide(buckets: &[Bucket], rule: Rule) -> Decision {
    let choice = fit::choose(&fit::points(buckets), rule);
    let best_smooth = choice.fits[1..]
        .iter()
        .filter(|f| f.b > 0.0)
        .map(|f| f.chi2)
        .fold(choice.fits[0].chi2, f64::min);
    let steps = flags::find_steps(buckets, best_smooth);
    if !steps.is_empty() {
        return Decision {
            class: Class::Constant,
            choice,
            steps,
            kink: None,
        };
    }
    let superlinear = matches!(
        choice.class,
        Class::Linear | Class::NLogN | Class::Quadratic
    );
    let mut kink = superlinear
        .then(|| flags::find_kink(buckets, best_smooth))
        .flatten();
    if kink.is_none() && choice.class == Class::Quadratic && linear_at_high_n(buckets, rule) {
        // Quadratic over the whole range, but a straight line over its
        // upper half: a convex start (a structure leaving a cache) then
        // linear growth.
        kink = flags::best_kink(buckets).map(|(_, k)| k);
    }
    Decision {
        class: if kink.is_some() {
            Class::Linear
        } else {
            choice.class
        },
        choice,
        steps: Vec::new(),
        kink,
    }
}

/// Whether a line fits the upper half of the buckets about as well as a
/// parabola (within the rule's tie tolerance) with a rising slope.
fn linear_at_high_n(buckets: &[Bucket], _rule: Rule) -> bool {
    let upper = fit::points(&buckets[buckets.len() / 2..]);
    if upper.len() < 5 {
        return false;
    }
    let line = fit::fit(Class::Linear, &upper);
    let parabola = fit::fit(Class::Quadratic, &upper);
    line.b > 0.0 && line.chi2 <= parabola.chi2 + 4f64.max(0.10 * parabola.chi2)
}

/// Median n and cost of the 10 % of samples with the smallest n, and of
/// the 10 % with the largest (at least one sample each).
fn ends(samples: &[Sample]) -> (Level, Level) {
    let mut s = samples.to_vec();
    s.sort_by(|a, b| a.n.total_cmp(&b.n));
    let k = (s.len() / 10).max(1);
    let level = |part: &[Sample]| {
        let mut n: Vec<f64> = part.iter().map(|x| x.n).collect();
        let mut y: Vec<f64> = part.iter().map(|x| x.ns).collect();
        n.sort_by(f64::total_cmp);
        y.sort_by(f64::total_cmp);
        Level {
            n: buckets::quantile(&n, 0.5),
            ns: buckets::quantile(&y, 0.5),
        }
    };
    (level(&s[..k]), level(&s[s.len() - k..]))
}

/// Classifies each run on its own; flags the series when some runs are
/// clearly flat (their best growth model rises less than the flat
/// threshold) and others clearly grow (a growth class rising at least
/// three times the threshold, Δχ² over O(1) above 25).
fn runs_disagree(samples: &[Sample], opts: &Options) -> Option<Flag> {
    let mut runs: Vec<u32> = samples.iter().map(|s| s.run).collect();
    runs.sort_unstable();
    runs.dedup();
    if runs.len() < 2 {
        return None;
    }
    let mut per = Vec::new();
    for r in runs {
        let s: Vec<Sample> = samples.iter().filter(|s| s.run == r).copied().collect();
        if s.len() < 50 {
            return None;
        }
        let b = buckets::bucketize(&s, opts.buckets);
        if b.len() < 3 {
            return None;
        }
        per.push(fit::choose(&fit::points(&b), opts.rule));
    }
    let flat = per.iter().any(|c| c.rise < opts.rule.flat);
    let grows = per.iter().any(|c| {
        c.class != Class::Constant
            && c.rise >= 3.0 * opts.rule.flat
            && c.fits[0].chi2 - c.fit.chi2 > 25.0
    });
    (flat && grows).then(|| Flag::RunsDisagree {
        classes: per.into_iter().map(|c| c.class).collect(),
    })
}
