//! The five growth classes, `cost(n) = a + b·g(n)`, and their fits.

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::fit_class;

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
            let f = fit_class(c, &exact(c, 1000.0, 0.5));
            assert!((f.a - 1000.0).abs() < 1e-6 * 1000.0, "{c}: {f:?}");
            if c != Class::Constant {
                assert!((f.b - 0.5).abs() < 1e-6, "{c}: {f:?}");
            }
            assert!(f.chi2 < 1e-6);
        }
    }

    #[test]
    fn class_labels_round_trip() {
        for c in Class::ALL {
            assert_eq!(Class::parse(c.label()), Some(c));
        }
    }
}
