//! The verdict of a sweep (throughput against a level): where it peaks,
//! where per-unit efficiency falls off (the knee), how far it declines
//! after the peak, and which levels failed. docs/analysis.md §10.
//!
//! - **Per-unit efficiency** at level L: (value(L) / L) / (value(B) / B),
//!   B the baseline level: 1.0 is ideal linear scaling from the baseline.
//! - **Peak**: the highest figure; the neighbouring levels (without a
//!   gap) whose figure is within [`PLATEAU`] of it, or within half the
//!   spread of the peak level's samples where that is wider, form its
//!   range ("peaks at 1 000–1 500").
//! - **Knee**: the first level above the baseline whose efficiency is below
//!   the stated share (default [`KNEE_SHARE`]).
//! - **Decline**: the figure at the highest level measured against the
//!   peak, when the peak lies below that level and the fall exceeds the
//!   plateau.

use ::units::fmt_n;
use results::SweepStats;
use serde::Serialize;

/// Figures within this share of the peak belong to the peak's range.
pub const PLATEAU: f64 = 0.03;

/// The default share of the baseline's per-unit efficiency below which a
/// level is past the knee.
pub const KNEE_SHARE: f64 = 0.8;

/// One level as the verdict sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LevelFigure {
    /// The level.
    pub level: f64,
    /// Its figure, if it has one.
    pub value: Option<f64>,
    /// Per-unit efficiency against the baseline (1.0 = linear scaling).
    pub efficiency: Option<f64>,
}

/// The peak of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Peak {
    /// The level with the highest figure.
    pub level: f64,
    /// That figure.
    pub value: f64,
    /// The lowest and highest level of the run of neighbours within
    /// [`PLATEAU`] (or the peak's sample spread) of the peak.
    pub range: (f64, f64),
}

/// What a sweep shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepVerdict {
    /// Every level in ascending order.
    pub levels: Vec<LevelFigure>,
    /// The peak, when any level has a figure above 0.
    pub peak: Option<Peak>,
    /// The first level past the knee, if any.
    pub knee: Option<f64>,
    /// The share the knee is judged against.
    pub knee_share: f64,
    /// The highest level with a figure and its fall from the peak (a
    /// negative share), when it fell by more than the plateau.
    pub decline: Option<(f64, f64)>,
    /// The baseline's figure was missing: no efficiencies.
    pub baseline_missing: bool,
    /// Efficiency is per level unit (else the figure against the
    /// baseline's figure).
    pub per_unit: bool,
    /// Levels that did not finish, with why.
    pub failed: Vec<(f64, String)>,
    /// The verdict in one sentence.
    pub words: String,
}

/// Judges a sweep; `knee_share` is the share of the baseline's per-unit
/// efficiency that marks the knee.
pub fn judge(s: &SweepStats, knee_share: f64) -> SweepVerdict {
    // Per level unit (clients, connections), or the figure itself (size
    // against memory), against the baseline's.
    let per_unit = s.knee_on != "figure";
    let mut lv: Vec<&results::SweepLevel> = s.levels.iter().collect();
    lv.sort_by(|a, b| a.level.total_cmp(&b.level));
    let base = lv
        .iter()
        .find(|l| l.level == s.baseline)
        .and_then(|l| l.value)
        .filter(|v| *v > 0.0);
    let levels: Vec<LevelFigure> = lv
        .iter()
        .map(|l| LevelFigure {
            level: l.level,
            value: l.value,
            efficiency: base
                .zip(l.value)
                .map(|(b, v)| efficiency(per_unit, s.baseline, b, l.level, v)),
        })
        .collect();
    let peak = levels
        .iter()
        .enumerate()
        .filter_map(|(i, l)| Some((i, l.level, l.value?)))
        // A peak of nothing is no peak: every level at 0 has none.
        .filter(|(_, _, v)| *v > 0.0)
        .max_by(|a, b| a.2.total_cmp(&b.2))
        .map(|(i, level, value)| {
            // The neighbours, on either side without a gap, whose figure is
            // within the plateau — or within the peak level's own sample
            // spread, where that is wider: what noise cannot tell apart.
            let spread = lv[i]
                .samples
                .iter()
                .rev()
                .take(s.figure_of_last.max(1) as usize)
                .map(|x| x.value)
                .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
                    (lo.min(v), hi.max(v))
                });
            let half = if spread.1 >= spread.0 {
                (spread.1 - spread.0) / 2.0 / value
            } else {
                0.0
            };
            let near = |l: &LevelFigure| {
                l.value
                    .is_some_and(|v| v >= value * (1.0 - PLATEAU.max(half)))
            };
            let lo = levels[..i].iter().rev().take_while(|l| near(l)).count();
            let hi = levels[i + 1..].iter().take_while(|l| near(l)).count();
            Peak {
                level,
                value,
                range: (levels[i - lo].level, levels[i + hi].level),
            }
        });
    let knee = levels
        .iter()
        .filter(|l| l.level > s.baseline)
        .find(|l| l.efficiency.is_some_and(|e| e < knee_share))
        .map(|l| l.level);
    let decline = peak.as_ref().and_then(|p| {
        let last = levels.iter().rev().find(|l| l.value.is_some())?;
        let fall = last.value? / p.value - 1.0;
        (last.level > p.range.1 && fall < -PLATEAU).then_some((last.level, fall))
    });
    let failed: Vec<(f64, String)> = lv
        .iter()
        .filter_map(|l| Some((l.level, l.error.clone()?)))
        .collect();
    let mut v = SweepVerdict {
        levels,
        peak,
        knee,
        knee_share,
        decline,
        baseline_missing: base.is_none(),
        per_unit,
        failed,
        words: String::new(),
    };
    v.words = words(&v, s);
    v
}

/// The efficiency of a figure `value` at `level` against the baseline's
/// figure `base` (at level `baseline`): per level unit, (value / level) /
/// (base / baseline), or the figure itself, value / base.
fn efficiency(per_unit: bool, baseline: f64, base: f64, level: f64, value: f64) -> f64 {
    if per_unit {
        value / level / (base / baseline)
    } else {
        value / base
    }
}

impl SweepVerdict {
    /// The efficiency a figure `value` measured at `level` has against
    /// this verdict's baseline, as [`LevelFigure::efficiency`] is for the
    /// level's own figure: how a single sample is drawn beside its level.
    /// `None` when the baseline had no figure.
    pub fn efficiency_of(&self, baseline: f64, level: f64, value: f64) -> Option<f64> {
        let base = self
            .levels
            .iter()
            .find(|l| l.level == baseline)
            .and_then(|l| l.value)
            .filter(|v| *v > 0.0)?;
        Some(efficiency(self.per_unit, baseline, base, level, value))
    }
}

/// A level in words: whole numbers with thin grouping (`1 000`), others
/// as they are (`0.5`).
pub fn fmt_level(x: f64) -> String {
    if x.fract() == 0.0 {
        fmt_n(x)
    } else {
        format!("{}", (x * 1000.0).round() / 1000.0)
    }
}

/// A share as a signed whole percentage with a true minus (`−18`, `+4`).
pub fn signed_percent(share: f64) -> String {
    format!("{:+.0}", share * 100.0).replace('-', "−")
}

/// "1 000" or "1 000–1 500".
fn range(a: f64, b: f64) -> String {
    if a == b {
        fmt_level(a)
    } else {
        format!("{}–{}", fmt_level(a), fmt_level(b))
    }
}

fn words(v: &SweepVerdict, s: &SweepStats) -> String {
    let Some(p) = &v.peak else {
        if v.levels.iter().any(|l| l.value.is_some()) {
            return format!("0 {} at every level that finished", s.unit);
        }
        return format!(
            "no level finished{}",
            v.failed.first().map_or(String::new(), |(l, e)| format!(
                " ({} {}: {e})",
                s.variable,
                fmt_level(*l)
            ))
        );
    };
    let mut parts = vec![format!(
        "peaks at {} {} ({} {})",
        range(p.range.0, p.range.1),
        s.variable,
        fmt_n(p.value.round()),
        s.unit
    )];
    if let Some((level, fall)) = v.decline {
        parts.push(format!(
            "{} % by {}",
            signed_percent(fall),
            fmt_level(level)
        ));
    }
    if v.baseline_missing {
        parts.push(format!(
            "no per-unit efficiency (the baseline {} has no figure)",
            fmt_level(s.baseline)
        ));
    } else {
        let at_peak = v
            .levels
            .iter()
            .find(|l| l.level == p.level)
            .and_then(|l| l.efficiency);
        if let Some(e) = at_peak
            && p.level != s.baseline
            && v.per_unit
        {
            parts.push(format!(
                "{:.0} % of linear scaling from {} at the peak",
                e * 100.0,
                fmt_level(s.baseline)
            ));
        }
        let what = if v.per_unit {
            "per-unit efficiency"
        } else {
            s.unit.as_str()
        };
        match v.knee {
            Some(k) => parts.push(format!(
                "{what} below {:.0} % of {}'s from {}",
                v.knee_share * 100.0,
                fmt_level(s.baseline),
                fmt_level(k)
            )),
            None => parts.push(format!(
                "{what} at least {:.0} % of {}'s at every level",
                v.knee_share * 100.0,
                fmt_level(s.baseline)
            )),
        }
    }
    for (l, e) in &v.failed {
        parts.push(format!("{} {} failed: {e}", s.variable, fmt_level(*l)));
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::{SweepLevel, SweepStats};

    fn sweep(points: &[(f64, Option<f64>)]) -> SweepStats {
        SweepStats {
            variable: "sends".into(),
            unit: "msg/s".into(),
            baseline: points[0].0,
            knee_on: "per-unit".into(),
            heat_up_s: 0.0,
            sample_s: 1.0,
            samples: 3,
            figure_of_last: 3,
            cpus: 2,
            counts_failures: false,
            levels: points
                .iter()
                .map(|&(level, value)| SweepLevel {
                    level,
                    value,
                    samples: Vec::new(),
                    cpu_busy: None,
                    busy_mhz: None,
                    params: Default::default(),
                    error: value.is_none().then(|| "bind: EAGAIN".to_string()),
                    failures: Default::default(),
                })
                .collect(),
        }
    }

    #[test]
    fn rothman_and_buckmans_shape_peak_range_and_decline() {
        // Rises to a plateau at 1 000–1 500, then falls steadily; 5 000 failed.
        let s = sweep(&[
            (500.0, Some(400.0)),
            (1000.0, Some(600.0)),
            (1500.0, Some(590.0)),
            (2000.0, Some(560.0)),
            (3000.0, Some(492.0)),
            (5000.0, None),
        ]);
        let v = judge(&s, KNEE_SHARE);
        let p = v.peak.as_ref().unwrap();
        assert_eq!(
            (p.level, p.value, p.range),
            (1000.0, 600.0, (1000.0, 1500.0))
        );
        let (at, fall) = v.decline.unwrap();
        assert_eq!(at, 3000.0);
        assert!((fall + 0.18).abs() < 1e-9);
        // Efficiency at 1 000: (600/1000)/(400/500) = 0.75 < 0.8: the knee.
        assert_eq!(v.knee, Some(1000.0));
        assert_eq!(v.failed, vec![(5000.0, "bind: EAGAIN".to_string())]);
        assert!(
            v.words
                .starts_with("peaks at 1 000–1 500 sends (600 msg/s); −18 % by 3 000"),
            "{}",
            v.words
        );
        assert!(
            v.words.contains("sends 5 000 failed: bind: EAGAIN"),
            "{}",
            v.words
        );
    }

    #[test]
    fn a_size_sweep_judges_its_knee_on_the_figure() {
        // TPS against database size / memory: flat, then falling past 1.
        let mut s = sweep(&[
            (0.5, Some(75_000.0)),
            (1.0, Some(70_000.0)),
            (1.5, Some(30_000.0)),
            (2.0, Some(10_000.0)),
        ]);
        s.knee_on = "figure".into();
        s.unit = "TPS".into();
        s.variable = "size/memory".into();
        let v = judge(&s, KNEE_SHARE);
        assert_eq!(v.knee, Some(1.5));
        assert!((v.levels[1].efficiency.unwrap() - 70.0 / 75.0).abs() < 1e-9);
        assert!(
            v.words.contains("TPS below 80 % of 0.5's from 1.5"),
            "{}",
            v.words
        );
        assert!(!v.words.contains("linear"), "{}", v.words);
    }

    #[test]
    fn the_peak_range_has_no_gaps() {
        // 1 024 comes back near the peak, but 8–256 lie well below it.
        let s = sweep(&[
            (1.0, Some(5_700.0)),
            (2.0, Some(13_190.0)),
            (4.0, Some(13_813.0)),
            (8.0, Some(12_187.0)),
            (256.0, Some(11_412.0)),
            (1024.0, Some(13_443.0)),
        ]);
        let v = judge(&s, KNEE_SHARE);
        assert_eq!(v.peak.unwrap().range, (4.0, 4.0));
    }

    #[test]
    fn a_samples_efficiency_is_as_its_levels_would_be_with_its_figure() {
        let s = sweep(&[(1.0, Some(100.0)), (2.0, Some(150.0)), (4.0, Some(200.0))]);
        let v = judge(&s, KNEE_SHARE);
        for l in &v.levels {
            let e = v.efficiency_of(s.baseline, l.level, l.value.unwrap());
            assert_eq!(e, l.efficiency, "{l:?}");
        }
        assert_eq!(v.efficiency_of(1.0, 2.0, 300.0), Some(1.5));
        let mut f = s.clone();
        f.knee_on = "figure".into();
        let v = judge(&f, KNEE_SHARE);
        assert_eq!(
            v.efficiency_of(1.0, 4.0, 50.0),
            Some(0.5),
            "against the figure"
        );
        let none = judge(&sweep(&[(1.0, None), (2.0, Some(5.0))]), KNEE_SHARE);
        assert_eq!(
            none.efficiency_of(1.0, 2.0, 5.0),
            None,
            "no baseline figure"
        );
    }

    #[test]
    fn linear_scaling_has_no_knee_and_no_decline() {
        let s = sweep(&[(1.0, Some(100.0)), (2.0, Some(199.0)), (4.0, Some(396.0))]);
        let v = judge(&s, KNEE_SHARE);
        assert_eq!(v.knee, None);
        assert_eq!(v.decline, None);
        assert_eq!(v.peak.as_ref().unwrap().range, (4.0, 4.0));
        let e = v.levels[2].efficiency.unwrap();
        assert!((e - 0.99).abs() < 1e-9, "{e}");
        assert!(
            v.words
                .contains("99 % of linear scaling from 1 at the peak"),
            "{}",
            v.words
        );
        assert!(v.words.contains("at least 80 %"), "{}", v.words);
    }

    #[test]
    fn levels_are_judged_in_ascending_order_and_a_missing_baseline_is_said() {
        let mut s = sweep(&[(4.0, Some(300.0)), (1.0, None), (2.0, Some(250.0))]);
        s.baseline = 1.0;
        let v = judge(&s, KNEE_SHARE);
        assert_eq!(
            v.levels.iter().map(|l| l.level).collect::<Vec<_>>(),
            vec![1.0, 2.0, 4.0]
        );
        assert!(v.baseline_missing && v.knee.is_none());
        assert!(v.words.contains("baseline 1 has no figure"), "{}", v.words);
        let none = judge(&sweep(&[(1.0, None)]), KNEE_SHARE);
        assert!(none.peak.is_none());
        assert!(
            none.words.starts_with("no level finished (sends 1: bind"),
            "{}",
            none.words
        );
    }

    #[test]
    fn nothing_at_every_level_is_no_peak() {
        let zero = judge(&sweep(&[(5.0, Some(0.0)), (10.0, Some(0.0))]), KNEE_SHARE);
        assert!(zero.peak.is_none());
        assert_eq!(zero.words, "0 msg/s at every level that finished");
        let mut l = sweep(&[(5.0, Some(0.0))]).levels.remove(0);
        assert!(!l.failed(), "a 0 with nothing failing is a figure");
        l.failures.insert("connect ECONNREFUSED".into(), 100);
        assert!(l.failed(), "a 0 with failures is a failed level");
    }
}
