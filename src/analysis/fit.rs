//! Growth models `cost(n) = a + b·g(n)` fitted to bucket medians by
//! weighted least squares (weight 1/se²), and the rule that picks a class.

use super::buckets::Bucket;
use serde::{Deserialize, Serialize};

/// A growth class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Class {
    /// Constant.
    #[serde(rename = "O(1)")]
    Constant,
    /// Logarithmic.
    #[serde(rename = "O(log n)")]
    Log,
    /// Linear.
    #[serde(rename = "O(n)")]
    Linear,
    /// Linearithmic.
    #[serde(rename = "O(n log n)")]
    NLogN,
    /// Quadratic.
    #[serde(rename = "O(n^2)")]
    Quadratic,
}

impl Class {
    /// Every class, simplest first.
    pub const ALL: [Class; 5] = [
        Class::Constant,
        Class::Log,
        Class::Linear,
        Class::NLogN,
        Class::Quadratic,
    ];

    /// The usual notation (`O(n log n)`).
    pub fn label(self) -> &'static str {
        match self {
            Class::Constant => "O(1)",
            Class::Log => "O(log n)",
            Class::Linear => "O(n)",
            Class::NLogN => "O(n log n)",
            Class::Quadratic => "O(n^2)",
        }
    }

    /// Parses [`Class::label`].
    pub fn parse(s: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.label() == s)
    }

    /// g(n) of the model `a + b·g(n)`; logs are natural, of n+1 so that
    /// n = 0 is defined.
    pub fn g(self, n: f64) -> f64 {
        let n = n.max(0.0);
        match self {
            Class::Constant => 0.0,
            Class::Log => (n + 1.0).ln(),
            Class::Linear => n,
            Class::NLogN => n * (n + 1.0).ln(),
            Class::Quadratic => n * n,
        }
    }
}

impl std::fmt::Display for Class {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// A fitted model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Fit {
    /// The model's class.
    pub class: Class,
    /// Intercept a, ns.
    pub a: f64,
    /// Coefficient b, ns per unit of g(n).
    pub b: f64,
    /// Weighted sum of squared residuals (χ² when the weights are right).
    pub chi2: f64,
}

impl Fit {
    /// The model's cost at n.
    pub fn at(&self, n: f64) -> f64 {
        self.a + self.b * self.class.g(n)
    }
}

/// Fits `a + b·g(n)` to (n, y, se) points.
pub fn fit(class: Class, pts: &[(f64, f64, f64)]) -> Fit {
    let (mut sw, mut sx, mut sy, mut sxx, mut sxy) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(n, y, se) in pts {
        let w = 1.0 / (se * se);
        let x = class.g(n);
        sw += w;
        sx += w * x;
        sy += w * y;
        sxx += w * x * x;
        sxy += w * x * y;
    }
    let det = sw * sxx - sx * sx;
    let (a, b) = if class == Class::Constant || det.abs() <= 1e-12 * sw * sxx.max(1e-300) {
        (sy / sw, 0.0)
    } else {
        ((sxx * sy - sx * sxy) / det, (sw * sxy - sx * sy) / det)
    };
    let chi2 = pts
        .iter()
        .map(|&(n, y, se)| {
            let r = (y - (a + b * class.g(n))) / se;
            r * r
        })
        .sum();
    Fit { class, a, b, chi2 }
}

/// Thresholds of the class rule.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// Growth over the measured range, relative to the cost at the low
    /// end, below which a series counts as flat (O(1)).
    pub flat: f64,
}

impl Default for Rule {
    fn default() -> Self {
        Rule { flat: 0.10 }
    }
}

/// What the class rule decided.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    /// The class.
    pub class: Class,
    /// The fit of that class.
    pub fit: Fit,
    /// Fits of every class, simplest first.
    pub fits: Vec<Fit>,
    /// Rise over the range predicted by the best growth model, relative to
    /// its value at the low end (0 when nothing grows).
    pub rise: f64,
    /// Whether a growth model beats the constant one significantly.
    pub significant: bool,
    /// A higher growth class whose χ² is within the tie tolerance of the
    /// chosen one (only when a growth class was chosen).
    pub alternative: Option<Class>,
}

/// The class rule (documented in `docs/analysis.md`):
/// 1. fit every class; growth models with b ≤ 0 are out;
/// 2. among the rest take the lowest class whose χ² is within
///    max(4, 10 %) of the best one (simpler wins ties);
/// 3. it counts as growth when it beats O(1) by Δχ² > max(9, 10 % of its
///    χ²) and its predicted rise over the measured n range is at least
///    `rule.flat` of its low-end cost; otherwise the class is O(1).
pub fn choose(pts: &[(f64, f64, f64)], rule: Rule) -> Choice {
    let fits: Vec<Fit> = Class::ALL.iter().map(|&c| fit(c, pts)).collect();
    let constant = fits[0];
    let (n_lo, n_hi) = pts
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
            (lo.min(p.0), hi.max(p.0))
        });
    let growth: Vec<&Fit> = fits[1..].iter().filter(|f| f.b > 0.0).collect();
    let flat = Choice {
        class: Class::Constant,
        fit: constant,
        fits: fits.clone(),
        rise: 0.0,
        significant: false,
        alternative: None,
    };
    let Some(best) = growth.iter().map(|f| f.chi2).min_by(f64::total_cmp) else {
        return flat;
    };
    let tolerance = 4f64.max(0.10 * best);
    let pick = **growth
        .iter()
        .find(|f| f.chi2 <= best + tolerance)
        .expect("the best one qualifies");
    let low = pick.at(n_lo);
    let rise = if low > 0.0 {
        (pick.at(n_hi) - low) / low
    } else {
        f64::INFINITY
    };
    let significant = constant.chi2 - pick.chi2 > 9f64.max(0.10 * pick.chi2);
    if significant && rise >= rule.flat {
        let alternative = growth
            .iter()
            .filter(|f| f.class != pick.class && f.chi2 <= pick.chi2 + tolerance)
            .min_by(|a, b| a.chi2.total_cmp(&b.chi2))
            .map(|f| f.class);
        Choice {
            class: pick.class,
            fit: pick,
            fits,
            rise,
            significant,
            alternative,
        }
    } else {
        Choice {
            rise,
            significant,
            ..flat
        }
    }
}

/// Bucket medians as fit points.
pub fn points(buckets: &[Bucket]) -> Vec<(f64, f64, f64)> {
    buckets.iter().map(|b| (b.n, b.median, b.se)).collect()
}

/// Ordinary least-squares slope of ln(y) on ln(n+1): the growth exponent.
pub fn loglog_slope(pts: &[(f64, f64)]) -> f64 {
    let xs: Vec<(f64, f64)> = pts
        .iter()
        .filter(|p| p.1 > 0.0)
        .map(|&(n, y)| ((n.max(0.0) + 1.0).ln(), y.ln()))
        .collect();
    let k = xs.len() as f64;
    if k < 2.0 {
        return f64::NAN;
    }
    let mx = xs.iter().map(|p| p.0).sum::<f64>() / k;
    let my = xs.iter().map(|p| p.1).sum::<f64>() / k;
    let sxx: f64 = xs.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = xs.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    if sxx == 0.0 { f64::NAN } else { sxy / sxx }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(class: Class, a: f64, b: f64) -> Vec<(f64, f64, f64)> {
        (1..=30)
            .map(|i| {
                let n = i as f64 * 300.0;
                (n, a + b * class.g(n), 0.01 * a)
            })
            .collect()
    }

    #[test]
    fn exact_curves_fit_exactly() {
        for c in Class::ALL {
            let f = fit(c, &exact(c, 1000.0, 0.5));
            assert!((f.a - 1000.0).abs() < 1e-6 * 1000.0, "{c}: {f:?}");
            if c != Class::Constant {
                assert!((f.b - 0.5).abs() < 1e-6, "{c}: {f:?}");
            }
            assert!(f.chi2 < 1e-6);
        }
    }

    #[test]
    fn rule_picks_each_exact_class() {
        // b chosen so each curve rises ~100 % over the range.
        for (c, b) in [
            (Class::Log, 110.0),
            (Class::Linear, 0.11),
            (Class::NLogN, 0.012),
            (Class::Quadratic, 1.2e-5),
        ] {
            assert_eq!(choose(&exact(c, 1000.0, b), Rule::default()).class, c);
        }
        assert_eq!(
            choose(&exact(Class::Constant, 1000.0, 0.0), Rule::default()).class,
            Class::Constant
        );
    }

    #[test]
    fn tiny_rise_is_flat_but_significant() {
        let pts: Vec<(f64, f64, f64)> = exact(Class::Linear, 1000.0, 0.002)
            .into_iter()
            .map(|(n, y, _)| (n, y, 1.0))
            .collect();
        let c = choose(&pts, Rule::default());
        assert_eq!(c.class, Class::Constant);
        assert!(c.significant && c.rise > 0.0 && c.rise < 0.10, "{c:?}");
    }

    #[test]
    fn loglog_slope_of_powers() {
        let pts: Vec<(f64, f64)> = (1..50)
            .map(|i| (i as f64 * 100.0, (i as f64 * 100.0 + 1.0).powf(1.5)))
            .collect();
        assert!((loglog_slope(&pts) - 1.5).abs() < 1e-9);
        assert!(loglog_slope(&[(1.0, 1.0)]).is_nan());
    }

    #[test]
    fn class_labels_round_trip() {
        for c in Class::ALL {
            assert_eq!(Class::parse(c.label()), Some(c));
        }
    }
}
