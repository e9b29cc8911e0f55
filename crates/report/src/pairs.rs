//! Pairs: a series and the one it is a variant of (`fork-static` of
//! `fork`, as its result records in `pairs_with`), on each system that
//! measured both: the ratio of their costs over the n both reached, with
//! its 90 % interval from resampling whole runs (the test of `compare`,
//! [`analysis::compare::cost_ratio`]), and the two drawn on one chart.

use super::{Entry, Input, samples_of};
use analysis::compare::{CostRatio, MIN_THRESHOLD, cost_ratio};
use serde::Serialize;
use units::fmt_n;

/// A series against the one it is a variant of, on one system.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pair {
    /// The system both were measured on.
    pub system: String,
    /// The variant (`fork-static`).
    pub series: String,
    /// The series it is a variant of (`fork`).
    pub with: String,
    /// Its cost over the other's, runs summed up by their medians.
    pub ratio: CostRatio,
    /// The pair in a sentence.
    pub text: String,
}

/// Every pair of `entries`: each entry that names the series it pairs
/// with, where the same system measured that one too and both share n.
pub fn pairs(entries: &[Entry]) -> Vec<Pair> {
    let mut out = Vec::new();
    for e in entries {
        let Some(b) = e.bench else { continue };
        let Some(with) = &b.pairs_with else { continue };
        let Some(o) = entries
            .iter()
            .find(|o| o.system == e.system && &o.series == with)
        else {
            continue;
        };
        let Some(ob) = o.bench else { continue };
        let Some(ratio) = cost_ratio(&samples_of(ob), &samples_of(b), None, MIN_THRESHOLD) else {
            continue;
        };
        let on = if e.system.is_empty() {
            String::new()
        } else {
            format!(" on {}", e.system)
        };
        // Resampling whole runs needs two of each: from one run the
        // interval would be a point, certainty the data do not have.
        let interval = if ratio.runs.iter().any(|&r| r < 2) {
            "no interval from a single run".to_string()
        } else {
            format!("90 % interval {:.2}–{:.2}×", ratio.ratio.lo, ratio.ratio.hi)
        };
        let text = format!(
            "{}{on}: {:.2}× the cost of {} ({interval}, {} and {} runs, over n = {}..{})",
            e.series,
            ratio.ratio.value,
            with,
            ratio.runs[1],
            ratio.runs[0],
            fmt_n(ratio.n_range[0]),
            fmt_n(ratio.n_range[1]),
        );
        out.push(Pair {
            system: e.system.to_string(),
            series: e.series.clone(),
            with: with.clone(),
            ratio,
            text,
        });
    }
    out
}

/// A notice for each variant whose series its system did not measure
/// (`fork-static` run alone, or fork in another file): no ratio and no
/// chart of the two, and how to get them.
pub fn unpaired(entries: &[Entry]) -> Vec<String> {
    let mut out = Vec::new();
    for e in entries {
        let Some(with) = e.bench.and_then(|b| b.pairs_with.as_ref()) else {
            continue;
        };
        if entries
            .iter()
            .any(|o| o.system == e.system && &o.series == with)
        {
            continue;
        }
        let on = if e.system.is_empty() {
            "this run".to_string()
        } else {
            e.system.to_string()
        };
        out.push(format!(
            "{} is a variant of {with}, which {on} did not measure: run both in one run (`scalebench run {with} {}`) for the ratio of their costs and one chart of the two",
            e.series, e.series
        ));
    }
    out
}

/// The pairs of `input` whose variant is `series`.
pub fn of_series<'i>(input: &'i Input, series: &str) -> Vec<&'i Pair> {
    input.pairs.iter().filter(|p| p.series == series).collect()
}

#[cfg(test)]
mod tests {
    use crate::Input;
    use crate::fixtures::system;

    /// `s` with a `bind-fresh` that is `bind` at `scale` times its cost.
    fn with_variant(mut s: crate::System, scale: f64) -> crate::System {
        let mut v = s
            .file
            .benchmarks
            .iter()
            .find(|b| b.series == "bind")
            .unwrap()
            .clone();
        v.name = "bind-fresh".into();
        v.series = "bind-fresh".into();
        v.pairs_with = Some("bind".into());
        for r in &mut v.runs {
            for x in &mut r.samples {
                x[1] = (x[1] as f64 * scale) as u64;
            }
        }
        s.file.benchmarks.push(v);
        s
    }

    #[test]
    fn a_variant_is_given_as_a_ratio_to_its_series_on_each_system() {
        let systems = [
            with_variant(system("a", false, 1.0, false), 0.5),
            with_variant(system("b", false, 1.0, false), 2.0),
        ];
        let input = Input::new(&systems, &Default::default());
        let got: Vec<(&str, &str, &str)> = input
            .pairs
            .iter()
            .map(|p| (p.system.as_str(), p.series.as_str(), p.with.as_str()))
            .collect();
        assert_eq!(
            got,
            [("a", "bind-fresh", "bind"), ("b", "bind-fresh", "bind")]
        );
        let a = &input.pairs[0];
        assert!((a.ratio.ratio.value - 0.5).abs() < 0.01, "{a:?}");
        assert!(a.ratio.ratio.lo <= a.ratio.ratio.value && a.ratio.ratio.value <= a.ratio.ratio.hi);
        assert!(
            a.text
                .starts_with("bind-fresh on a: 0.50× the cost of bind (90 % interval "),
            "{}",
            a.text
        );
        assert!((input.pairs[1].ratio.ratio.value - 2.0).abs() < 0.02);
        // From one run each: the ratio, and no interval (a point would
        // claim a certainty one run cannot give).
        let mut one = with_variant(system("d", false, 1.0, false), 0.5);
        for b in &mut one.file.benchmarks {
            b.runs.truncate(1);
        }
        let systems = [one];
        let input = Input::new(&systems, &Default::default());
        assert_eq!(input.pairs.len(), 1);
        assert!(
            input.pairs[0]
                .text
                .starts_with("bind-fresh on d: 0.50× the cost of bind (no interval from a single run, 1 and 1 runs, "),
            "{}",
            input.pairs[0].text
        );
        // Without the series it varies, no pair.
        let mut lone = with_variant(system("c", false, 1.0, false), 0.5);
        lone.file.benchmarks.retain(|b| b.series != "bind");
        let systems = [lone];
        let input = Input::new(&systems, &Default::default());
        assert!(input.pairs.is_empty());
        // … and a notice saying so, once, and how to get the pair.
        let said: Vec<&String> = input
            .notices
            .iter()
            .filter(|n| n.starts_with("bind-fresh is a variant of bind, which c did not measure"))
            .collect();
        assert_eq!(said.len(), 1, "{:?}", input.notices);
        assert!(said[0].contains("`scalebench run bind bind-fresh`"));
        // Where both were measured, no such notice.
        let systems = [with_variant(system("a", false, 1.0, false), 0.5)];
        let input = Input::new(&systems, &Default::default());
        assert!(input.notices.iter().all(|n| !n.contains("is a variant of")));
    }
}
