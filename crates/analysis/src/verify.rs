//! A kept verdict checked against its own samples before anything shows it.
//!
//! A result file keeps each series' verdict as a cache, stamped with the
//! analysis, the options and a digest of the runs it was judged from
//! ([`super::recorded`]). The stamps say the verdict *was* made from these
//! runs; they cannot say it was not edited since. So before a kept verdict
//! is reused, everything in it that the data gives without the bootstrap
//! is made again and compared: the per-n summaries, the two ends and the
//! rise between them, the sample and run counts, the model and every fit,
//! the label the data's own judgement gives (or the one the replicas'
//! votes lead to, as [`super::analyze_runs`] chooses), and the confidence
//! those votes give. What needs the replicas (the rise's interval, the
//! votes themselves) is held to its own arithmetic: shares between 0 and
//! 1, votes that add up to one, an interval around its value. This costs
//! one summary and one or two judgements, against the two hundred of a
//! judgement made afresh.

use super::judge::{self, Judgement};
use super::{Label, Options, RunInfo, Sample, Verdict, Vote};
use serde_json::Value;

/// Relative difference within which two figures computed the same way
/// are the same (the same code on another machine's floating point).
const SAME: f64 = 1e-6;

/// Why `v`, kept for a series with these samples, is not what they give;
/// `None` when it agrees.
pub fn disagreement(
    samples: &[Sample],
    runs: &[RunInfo],
    overhead_ns: Option<f64>,
    v: &Verdict,
    opts: &Options,
) -> Option<String> {
    if let Some(why) = shares(v) {
        return Some(why);
    }
    let p = match super::pointwise(samples, runs) {
        Ok(p) => p,
        Err(e) => return Some(format!("its samples give no verdict ({e})")),
    };
    if v.samples != p.samples.len() || v.runs != p.runs_seen {
        return Some(format!(
            "it counts {} samples of {} runs; the series has {} of {}",
            v.samples,
            v.runs,
            p.samples.len(),
            p.runs_seen
        ));
    }
    for (what, kept, made) in [
        ("low end", &v.low, &p.point.low),
        ("high end", &v.high, &p.point.high),
    ] {
        if !same_number(kept.ns, made.ns) || !same_number(kept.n, made.n) {
            return Some(format!(
                "its {what} is {} at n = {}; its samples give {} at n = {}",
                ::units::fmt_ns(kept.ns),
                kept.n,
                ::units::fmt_ns(made.ns),
                made.n
            ));
        }
    }
    let rise = p.point.ratio() - 1.0;
    if !same_number(v.rise.value, rise) {
        return Some(format!(
            "its rise is {:+.1} %; its ends give {:+.1} %",
            v.rise.value * 100.0,
            rise * 100.0
        ));
    }
    if !(v.rise.lo <= v.rise.value && v.rise.value <= v.rise.hi) {
        return Some(format!(
            "its rise {:+.1} % lies outside its own interval {:+.1} % to {:+.1} %",
            v.rise.value * 100.0,
            v.rise.lo * 100.0,
            v.rise.hi * 100.0
        ));
    }
    let figures = [
        ("per-n summaries", json(&v.buckets), json(&p.point.buckets)),
        ("span", json(&v.span_decades), json(&p.span)),
        ("tolerance", json(&v.tolerance), json(&opts.tolerance)),
        ("timer overhead", json(&v.overhead_ns), json(&overhead_ns)),
    ];
    if let Some((what, _, _)) = figures.iter().find(|(_, a, b)| !same(a, b)) {
        return Some(format!("its {what} are not its samples'"));
    }
    let ctx = judge::Context {
        interval: (
            (v.rise.lo + 1.0) / (rise + 1.0),
            (v.rise.hi + 1.0) / (rise + 1.0),
        ),
        span: p.span,
        overhead_ns,
        median_ns: p.median_ns,
        prefer: None,
    };
    let j = judge::judge(&p.point, &ctx, opts);
    let j = match super::bagged_of(j.label, |c| share(&v.votes, Label::Class(c))) {
        Some(c) if p.runs_seen >= 3 => super::rejudged_for(c, &p.point, &ctx, opts).unwrap_or(j),
        _ => j,
    };
    judged_alike(v, &j, &p, runs, opts)
}

/// Whether `v` says what judgement `j` of the data (and the votes `v`
/// keeps) says: its label, confidence, model, fits and flags.
fn judged_alike(
    v: &Verdict,
    j: &Judgement,
    p: &super::Pointwise,
    runs: &[RunInfo],
    opts: &Options,
) -> Option<String> {
    let confidence = (p.runs_seen >= 3 && !v.votes.is_empty()).then(|| share(&v.votes, j.label));
    let (label, confidence) = super::stated(
        j,
        confidence,
        |k| share(&v.votes, Label::Class(k)),
        |k| super::vote_share(&v.held_votes, k),
    );
    if v.class != label {
        return Some(format!(
            "its class is {}; its samples give {}",
            v.class.label(),
            label.label()
        ));
    }
    if !same(&json(&v.confidence), &json(&confidence)) {
        return Some(format!(
            "its confidence is {}; its votes give {}",
            percent(v.confidence),
            percent(confidence)
        ));
    }
    let mut flags = j.flags.clone();
    if let Some(d) = super::flags::drift(&p.measured, runs, opts.tolerance / 2.0) {
        flags.push(d);
    }
    let exponent_ok = match (&v.exponent, j.label.grows(), &j.power) {
        (None, _, _) => true,
        (Some(e), true, Some(pw)) => {
            same_number(e.value, pw.p) && e.lo <= e.value && e.value <= e.hi
        }
        (Some(_), _, _) => false,
    };
    let parts = [
        ("model", json(&v.model), json(&j.model)),
        ("fits", json(&v.fits), json(&j.fits)),
        ("power law", json(&v.power), json(&j.power)),
        (
            "alternative class",
            json(&v.alternative),
            json(&j.alternative),
        ),
        ("local exponents", json(&v.local_exponent), json(&j.local)),
        ("flags", json(&v.flags), json(&flags)),
    ];
    if let Some((what, _, _)) = parts.iter().find(|(_, a, b)| !same(a, b)) {
        return Some(format!("its {what} are not what its samples give"));
    }
    (!exponent_ok).then(|| "its exponent is not its power law's".to_string())
}

/// Shares that are no shares: a confidence or a vote outside 0..1, votes
/// that do not add up to one.
fn shares(v: &Verdict) -> Option<String> {
    if let Some(c) = v.confidence
        && !(0.0..=1.0).contains(&c)
    {
        return Some(format!(
            "its confidence {} is no share (0 to 100 %)",
            percent(Some(c))
        ));
    }
    if let Some(x) = v
        .votes
        .iter()
        .chain(&v.flag_votes)
        .chain(&v.held_votes)
        .find(|x| !(0.0..=1.0).contains(&x.share))
    {
        return Some(format!(
            "its vote for {} ({}) is no share",
            x.what,
            percent(Some(x.share))
        ));
    }
    let total: f64 = v.votes.iter().map(|x| x.share).sum();
    if !v.votes.is_empty() && (total - 1.0).abs() > 1e-6 {
        return Some(format!(
            "its votes add up to {}, not 100 %",
            percent(Some(total))
        ));
    }
    None
}

/// The share of the replicas that named `l`.
fn share(votes: &[Vote], l: Label) -> f64 {
    votes
        .iter()
        .find(|x| x.what == l.label())
        .map_or(0.0, |x| x.share)
}

/// A share in words.
fn percent(x: Option<f64>) -> String {
    x.map_or("unknown".into(), |x| format!("{:.0} %", x * 100.0))
}

/// `x` as JSON, as the file keeps it.
fn json<T: serde::Serialize>(x: &T) -> Value {
    serde_json::to_value(x).unwrap_or(Value::Null)
}

/// Whether two figures are the same within [`SAME`].
fn same_number(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= SAME * a.abs().max(b.abs()) || (a.is_nan() && b.is_nan())
}

/// Whether two JSON values are the same, numbers within [`SAME`].
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => same_number(x, y),
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, a)| y.get(k).is_some_and(|b| same(a, b)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Class, analyze_runs};
    use rand::{RngExt, SeedableRng};

    /// `runs` runs of a series whose cost at n is `cost(n)`, each sample
    /// with multiplicative noise of `noise` (a share) and a slow one now
    /// and then.
    fn series(runs: u32, noise: f64, seed: u64, cost: impl Fn(f64) -> f64) -> Vec<Sample> {
        let mut rng = rand::rngs::Xoshiro256PlusPlus::seed_from_u64(seed);
        (0..runs)
            .flat_map(|run| {
                (0..1500)
                    .map(|i| {
                        let n = (i / 2) as f64 * 4.0;
                        let slow = if rng.random::<f64>() < 0.01 { 3.0 } else { 1.0 };
                        let ns = cost(n) * (1.0 + noise * (rng.random::<f64>() - 0.5)) * slow;
                        Sample { n, ns, run }
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Labelled shapes at several noises and run counts: flat, logarithmic,
    /// linear, n log n, quadratic, a step, a bend.
    fn shapes() -> Vec<(String, Vec<Sample>)> {
        type Shape = (&'static str, fn(f64) -> f64);
        let shapes: [Shape; 7] = [
            ("flat", |_| 1_000.0),
            ("log", |n| 1_000.0 + 120.0 * (n + 1.0).ln()),
            ("linear", |n| 1_000.0 + 2.0 * n),
            ("nlogn", |n| 1_000.0 + 0.2 * n * (n + 1.0).ln()),
            ("quadratic", |n| 1_000.0 + 0.0005 * n * n),
            ("step", |n| if n < 3_000.0 { 1_000.0 } else { 1_600.0 }),
            ("bend", |n| {
                1_000.0
                    + if n < 2_000.0 {
                        0.1 * n
                    } else {
                        200.0 + 3.0 * (n - 2_000.0)
                    }
            }),
        ];
        let mut v = Vec::new();
        for (k, (name, f)) in shapes.iter().enumerate() {
            for (runs, noise) in [(1, 0.05), (3, 0.3), (5, 1.0)] {
                v.push((
                    format!("{name}/{runs} runs/noise {noise}"),
                    series(runs, noise, k as u64, f),
                ));
            }
        }
        v
    }

    #[test]
    fn every_verdict_agrees_with_the_samples_it_was_judged_from() {
        let opts = Options {
            replicas: 60,
            ..Options::default()
        };
        let mut labels = Vec::new();
        for (name, s) in shapes() {
            let v = analyze_runs(&s, &[], Some(20.0), &opts).unwrap();
            labels.push(v.class);
            assert_eq!(
                disagreement(&s, &[], Some(20.0), &v, &opts),
                None,
                "{name}: {}",
                v.class
            );
            // Through the file's JSON and back, too.
            let back: Verdict = serde_json::from_value(serde_json::to_value(&v).unwrap()).unwrap();
            assert_eq!(
                disagreement(&s, &[], Some(20.0), &back, &opts),
                None,
                "{name}"
            );
        }
        // The shapes gave several labels, a growing one among them.
        labels.dedup();
        assert!(labels.len() >= 3, "{labels:?}");
        assert!(labels.iter().any(|l| l.grows()), "{labels:?}");
    }

    #[test]
    fn an_edited_verdict_is_told_by_what_was_edited() {
        let opts = Options {
            replicas: 60,
            ..Options::default()
        };
        let s = series(5, 0.05, 7, |_| 1_000.0);
        let v = analyze_runs(&s, &[], None, &opts).unwrap();
        assert_eq!(v.class, Label::Class(Class::Constant));
        let edited = |f: &dyn Fn(&mut Verdict)| {
            let mut e = v.clone();
            f(&mut e);
            disagreement(&s, &[], None, &e, &opts).unwrap_or_default()
        };
        let says = |why: String, words: &str| assert!(why.contains(words), "{words}: {why:?}");
        says(
            edited(&|e| e.class = Label::Class(Class::Quadratic)),
            "its class is O(n^2); its samples give O(1)",
        );
        says(
            edited(&|e| e.confidence = Some(7.5)),
            "its confidence 750 % is no share",
        );
        says(
            edited(&|e| e.confidence = Some(0.5)),
            "its confidence is 50 %",
        );
        says(edited(&|e| e.low.ns *= 10.0), "its low end is 10");
        says(edited(&|e| e.high.ns *= 10.0), "its high end");
        says(edited(&|e| e.rise.value = 3.0), "its rise is +300.0 %");
        says(edited(&|e| e.samples += 1), "samples of 5 runs");
        says(edited(&|e| e.votes[0].share = 0.5), "its votes add up to");
        says(edited(&|e| e.buckets[3].median *= 2.0), "per-n summaries");
        says(edited(&|e| e.fits[1].b = 99.0), "its fits");
        // A flat series called quadratic with its whole story told the
        // same way (model, fits and votes edited to match) still rises
        // by nothing between its ends.
        let q = edited(&|e| {
            e.class = Label::Class(Class::Quadratic);
            e.votes = vec![Vote {
                what: "O(n^2)".into(),
                share: 1.0,
            }];
        });
        assert!(q.contains("its class is O(n^2)"), "{q}");
        assert_eq!(edited(&|_| {}), "", "the verdict as made agrees");
    }
}
