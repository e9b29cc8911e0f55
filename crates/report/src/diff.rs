//! What differs between systems, in sentences: classes, costs at the same
//! n, structure (steps, shadow curves, slope changes) and what could not be
//! measured. Every other system is compared with the first one given;
//! between an emulated and a native system only by class and structure
//! (an emulated CPU's times are not the speed of any machine: see
//! [`super::Basis`]).

use super::{Basis, Entry, Input};
use analysis::{Class, Flag, Label, Verdict};
use serde::Serialize;
use units::fmt_n;

/// Smallest cost ratio called a difference.
pub const NOTABLE: f64 = 1.2;

/// Kinds of difference, most important first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// The growth classes differ.
    Class,
    /// The cost at the same n differs by at least [`NOTABLE`].
    Cost,
    /// One shows structure (a step, a second curve, …) the other does not.
    Structure,
    /// One could not run it, or has no verdict.
    Availability,
}

/// One difference between the baseline and another system.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    /// The series.
    pub series: String,
    /// What kind of difference.
    pub kind: Kind,
    /// The baseline system.
    pub baseline: String,
    /// The system compared with it.
    pub other: String,
    /// For costs: other / baseline at `at_n` (for workloads: time per
    /// request, other / baseline, with no `at_n`).
    pub ratio: Option<f64>,
    /// For costs: the n compared at.
    pub at_n: Option<f64>,
    /// The difference in a sentence.
    pub text: String,
}

/// The cost of a verdict's bucket medians at `n` (linear interpolation,
/// clamped to the measured range).
pub fn cost_at(v: &Verdict, n: f64) -> f64 {
    let b = &v.buckets;
    if b.is_empty() {
        return f64::NAN;
    }
    if n <= b[0].n {
        return b[0].median;
    }
    for w in b.windows(2) {
        if n <= w[1].n {
            let t = if w[1].n > w[0].n {
                (n - w[0].n) / (w[1].n - w[0].n)
            } else {
                0.0
            };
            return w[0].median + t * (w[1].median - w[0].median);
        }
    }
    b[b.len() - 1].median
}

fn grows(c: Label) -> String {
    match c {
        Label::Class(Class::Constant) => "stays O(1)".into(),
        Label::Class(c) => format!("grows {c}"),
        Label::Undecided => "is undecided (neither flat nor growing can be said)".into(),
        Label::Superlinear => "grows superlinearly".into(),
        Label::NoFit => "grows, no single class fitting".into(),
        l @ Label::Between(Class::Constant, _) => {
            format!("stays within the tolerance yet surely rises ({l})")
        }
        l @ Label::Between(..) => format!("grows {l}"),
    }
}

/// Grows on a machine's time but stays flat counted in instructions: says
/// so in words (what grows is nothing the instructions show), for a pair
/// of a native system's entry and an instruction-counted guest's, in
/// either order.
fn time_grows_instructions_flat(a: (&Entry, &Verdict), b: (&Entry, &Verdict)) -> Option<String> {
    let flat = |v: &Verdict| v.class == Label::Class(Class::Constant);
    let growing = |v: &Verdict| {
        matches!(
            v.class,
            Label::Class(c) if c != Class::Constant
        ) || matches!(v.class, Label::Superlinear | Label::NoFit)
    };
    let timed = |e: &Entry| !e.emulated && !e.cost.counts_instructions();
    let counted = |e: &Entry| e.cost.counts_instructions();
    let ((te, tv), (ce, _)) = [(a, b), (b, a)]
        .into_iter()
        .find(|((te, tv), (ce, cv))| timed(te) && growing(tv) && counted(ce) && flat(cv))?;
    Some(format!(
        "{}'s time {} while {}'s instruction count stays flat: what grows is not the instructions executed but what they cannot show (caches, memory, contention between CPUs)",
        te.system,
        grows(tv.class),
        ce.system
    ))
}

fn times(r: f64) -> String {
    if r >= 1.0 {
        format!("{r:.1}× slower")
    } else {
        format!("{:.1}× faster", 1.0 / r)
    }
}

/// Structure flags worth comparing, by name, with their description.
fn structure(v: &Verdict, cost: units::Cost) -> Vec<(&'static str, String)> {
    v.flags
        .iter()
        .filter(|f| {
            matches!(
                f,
                Flag::Step { .. } | Flag::SlopeChange { .. } | Flag::Bimodal { .. }
            )
        })
        .map(|f| (f.name(), f.describe_in(cost)))
        .collect()
}

/// Whether two growth labels are different classes: not when they are
/// equal, nor when a split holds the other's class (`O(n)–O(n log n)`
/// and `O(n)`) or two splits share one, as `compare` judges them.
fn classes_differ(a: &Label, b: &Label) -> bool {
    a != b && super::compare::same_class_words(a, b).is_empty()
}

fn compare(series: &str, a: &Entry, b: &Entry, basis: Basis, out: &mut Vec<Difference>) {
    let diff = |kind, ratio, at_n, text: String| Difference {
        series: series.to_string(),
        kind,
        baseline: a.system.to_string(),
        other: b.system.to_string(),
        ratio,
        at_n,
        text,
    };
    let (va, vb) = match (&a.verdict, &b.verdict) {
        (Ok(va), Ok(vb)) => (va, vb),
        (Ok(_), Err(m)) => {
            out.push(diff(
                Kind::Availability,
                None,
                None,
                format!("{series}: no verdict on {} ({m})", b.system),
            ));
            return;
        }
        (Err(m), Ok(_)) => {
            out.push(diff(
                Kind::Availability,
                None,
                None,
                format!("{series}: no verdict on {} ({m})", a.system),
            ));
            return;
        }
        (Err(_), Err(_)) => return,
    };
    if classes_differ(&va.class, &vb.class) && super::compare::judged_apart(va, vb) {
        // A class holds for the range it was judged over.
        out.push(diff(
            Kind::Availability,
            None,
            None,
            format!(
                "{series}: classes not compared: judged up to n = {} on {} and {} on {}",
                fmt_n(vb.high.n),
                b.system,
                fmt_n(va.high.n),
                a.system
            ),
        ));
    } else if classes_differ(&va.class, &vb.class) {
        let text = match time_grows_instructions_flat((a, va), (b, vb)) {
            Some(t) => format!("{series}: {t}"),
            None => format!(
                "{series}: {} {} where {} {}",
                b.system,
                grows(vb.class),
                a.system,
                grows(va.class)
            ),
        };
        out.push(diff(Kind::Class, None, None, text));
    }
    // Costs at the largest n both reached, and at the smallest.
    let hi = va.high.n.min(vb.high.n);
    let lo = va.low.n.max(vb.low.n);
    let r_hi = cost_at(vb, hi) / cost_at(va, hi);
    let r_lo = cost_at(vb, lo) / cost_at(va, lo);
    let costs = basis != Basis::Mixed;
    let counted = a.cost.counts_instructions() && a.cost == b.cost;
    if costs && counted {
        // Exact counts: any change compare's test finds, with its interval.
        let at = format!(
            "; {} against {} at n = {}",
            b.cost.fmt(cost_at(vb, hi)),
            a.cost.fmt(cost_at(va, hi)),
            fmt_n(hi)
        );
        out.extend(
            counted_cost(series, a, b).map(|(r, text)| diff(Kind::Cost, Some(r), None, text + &at)),
        );
    } else if costs && r_hi.is_finite() && (r_hi >= NOTABLE || r_hi <= 1.0 / NOTABLE) {
        let low_note = if r_lo.is_finite() && (r_hi / r_lo).ln().abs() > 1.3f64.ln() {
            format!(" ({} at n = {})", times(r_lo), fmt_n(lo))
        } else {
            String::new()
        };
        out.push(diff(
            Kind::Cost,
            Some(r_hi),
            Some(hi),
            format!(
                "{series}: {} is {} than {} at n = {} ({} against {}){low_note}",
                b.system,
                times(r_hi),
                a.system,
                fmt_n(hi),
                b.cost.fmt(cost_at(vb, hi)),
                a.cost.fmt(cost_at(va, hi))
            ),
        ));
    }
    let (sa, sb) = (structure(va, a.cost), structure(vb, b.cost));
    for (name, text) in &sb {
        if !sa.iter().any(|(n, _)| n == name) {
            out.push(diff(
                Kind::Structure,
                None,
                None,
                format!("{series}: {} shows {text}; {} does not", b.system, a.system),
            ));
        }
    }
    for (name, text) in &sa {
        if !sb.iter().any(|(n, _)| n == name) {
            out.push(diff(
                Kind::Structure,
                None,
                None,
                format!("{series}: {} shows {text}; {} does not", a.system, b.system),
            ));
        }
    }
}

/// Between two systems counting instructions at one shift, the change of
/// `series`' cost that `compare`'s test finds (medians and quiet path,
/// [`super::compare::judge_pair`]): the ratio b / a and the sentence, if
/// it regressed or improved.
fn counted_cost(series: &str, a: &Entry, b: &Entry) -> Option<(f64, String)> {
    use analysis::compare::Outcome;
    let j = super::compare::judge_pair(a, a.bench?, b, b.bench?, None);
    if !matches!(j.outcome, Outcome::Regressed | Outcome::Improved) {
        return None;
    }
    let c = j.cost?;
    let pct = |x: f64| super::compare::pct_to(x, analysis::compare::COUNTED_MIN_THRESHOLD);
    let quiet = j.quiet.map_or(String::new(), |q| {
        format!(
            "; its quiet path (each run's {:.0}th percentile) {} ({}..{})",
            analysis::compare::QUIET_QUANTILE * 100.0,
            pct(q.ratio.value),
            pct(q.ratio.lo),
            pct(q.ratio.hi)
        )
    });
    Some((
        c.ratio.value,
        format!(
            "{series}: {} executes {} instructions against {} over n = {}..{} (90 % interval {}..{}){quiet}",
            b.system,
            pct(c.ratio.value),
            a.system,
            fmt_n(c.n_range[0]),
            fmt_n(c.n_range[1]),
            pct(c.ratio.lo),
            pct(c.ratio.hi)
        ),
    ))
}

/// Every difference between the first system and each other one: class
/// changes first, then costs (largest ratio first; none between an
/// emulated and a native system), then structure, then what could not be
/// compared.
pub fn differences(input: &Input) -> Vec<Difference> {
    let mut out = Vec::new();
    let Some(baseline) = input.systems.first() else {
        return out;
    };
    let basis =
        |other: &str| Basis::of(input.measured_of(&baseline.label), input.measured_of(other));
    for series in input.series_names() {
        let base = input.of_series(series).find(|e| e.system == baseline.label);
        for s in &input.systems[1..] {
            let other = input.of_series(series).find(|e| e.system == s.label);
            match (base, other) {
                (Some(a), Some(b)) => compare(series, a, b, basis(&s.label), &mut out),
                (Some(_), None) | (None, Some(_)) => {
                    let (has, lacks) = if base.is_some() {
                        (&baseline.label, &s.label)
                    } else {
                        (&s.label, &baseline.label)
                    };
                    out.push(Difference {
                        series: series.to_string(),
                        kind: Kind::Availability,
                        baseline: baseline.label.clone(),
                        other: s.label.clone(),
                        ratio: None,
                        at_n: None,
                        text: format!("{series}: measured on {has} only, not on {lacks}"),
                    });
                }
                (None, None) => {}
            }
        }
    }
    for t in input.work_tables() {
        let workload_of = |system: &str| {
            let s = input.systems.iter().find(|s| s.label == system)?;
            s.file.workloads.iter().find(|w| w.name == t.name)
        };
        // Another size measured another thing: said once a system, its
        // rows not compared.
        let mut resized: Vec<&str> = Vec::new();
        for s in input.systems.iter().map(|s| s.label.as_str()) {
            if s == baseline.label || basis(s) == Basis::Mixed {
                continue;
            }
            let (Some(a), Some(b)) = (workload_of(&baseline.label), workload_of(s)) else {
                continue;
            };
            if let Some(changes) = a.size_changes(b) {
                resized.push(s);
                out.push(Difference {
                    series: t.name.to_string(),
                    kind: Kind::Availability,
                    baseline: baseline.label.clone(),
                    other: s.to_string(),
                    ratio: None,
                    at_n: None,
                    text: format!(
                        "{}: {s} ran it at other sizes than {} ({changes}): its figures are not compared",
                        t.name, baseline.label
                    ),
                });
            }
        }
        for l in t.lines.iter().filter(|l| {
            l.system != baseline.label
                && basis(l.system) != Basis::Mixed
                && !resized.contains(&l.system)
        }) {
            let base = t
                .lines
                .iter()
                .find(|b| b.label == l.label && b.target == l.target && b.system == baseline.label);
            // (cost, unit, how to show it): time per request for load rows,
            // the phase's time for phases. Ratio other / baseline: > 1 is slower.
            let cost = |line: Option<&super::WorkLine>| -> Option<(f64, String)> {
                let r = line.and_then(|l| l.row)?;
                match (&r.phase, &r.load) {
                    (Some(p), _) if p.seconds > 0.0 => {
                        Some((p.seconds, super::fmt_secs(p.seconds)))
                    }
                    (None, Some(s)) if s.requests_per_s > 0.0 => Some((
                        1.0 / s.requests_per_s,
                        format!("{:.0} req/s", s.requests_per_s),
                    )),
                    _ => None,
                }
            };
            let (Some((a, a_txt)), Some((b, b_txt))) = (cost(base), cost(Some(l))) else {
                continue;
            };
            let r = b / a;
            if r.is_finite() && (r >= NOTABLE || r <= 1.0 / NOTABLE) {
                let row = match l.target {
                    Some(tg) => format!("{}, {tg}", l.label),
                    None => l.label.to_string(),
                };
                out.push(Difference {
                    series: t.name.to_string(),
                    kind: Kind::Cost,
                    baseline: baseline.label.clone(),
                    other: l.system.to_string(),
                    ratio: Some(r),
                    at_n: None,
                    text: format!(
                        "{} ({row}): {} is {} than {} ({b_txt} against {a_txt})",
                        t.name,
                        l.system,
                        times(r),
                        baseline.label,
                    ),
                });
            }
        }
    }
    let weight = |d: &Difference| d.ratio.map_or(0.0, |r| -r.ln().abs());
    out.sort_by(|a, b| a.kind.cmp(&b.kind).then(weight(a).total_cmp(&weight(b))));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{counted, system};

    #[test]
    fn a_range_from_o1_is_said_to_stay_within_the_tolerance() {
        let from_flat = grows(Label::Between(Class::Constant, Class::Log));
        assert_eq!(
            from_flat,
            "stays within the tolerance yet surely rises (O(1)–O(log n))"
        );
        let growth = grows(Label::Between(Class::Log, Class::Linear));
        assert_eq!(growth, "grows O(log n)–O(n)");
    }

    #[test]
    fn a_split_holding_the_other_class_is_no_difference_of_class() {
        let split = Label::Between(Class::Linear, Class::NLogN);
        let one = Label::Class(Class::Linear);
        assert!(!classes_differ(&split, &one));
        assert!(!classes_differ(&one, &split));
        assert!(!classes_differ(&one, &one));
        assert!(classes_differ(&split, &Label::Class(Class::Quadratic)));
        assert!(classes_differ(&one, &Label::Class(Class::Constant)));
    }

    fn kinds(input: &Input) -> Vec<(Kind, String)> {
        input
            .differences
            .iter()
            .map(|d| (d.kind, d.series.clone()))
            .collect()
    }

    #[test]
    fn native_systems_differ_by_cost_and_class() {
        let systems = [
            system("a", false, 1.0, false),
            system("b", false, 10.0, true),
        ];
        let input = Input::new(&systems, &Default::default());
        let k = kinds(&input);
        assert!(k.contains(&(Kind::Class, "bind".into())), "{k:?}");
        assert!(k.contains(&(Kind::Cost, "socket".into())), "{k:?}");
        assert!(input.basis.is_empty(), "{:?}", input.basis);
    }

    #[test]
    fn an_emulated_and_a_native_system_differ_by_class_only() {
        for (base, other) in [(false, true), (true, false)] {
            let systems = [
                system("host", base, 1.0, false),
                system("guest", other, 10.0, true),
            ];
            let input = Input::new(&systems, &Default::default());
            let k = kinds(&input);
            assert!(k.contains(&(Kind::Class, "bind".into())), "{k:?}");
            assert!(!k.iter().any(|(kind, _)| *kind == Kind::Cost), "{k:?}");
            assert!(
                !input.differences.iter().any(|d| d.text.contains("slower")
                    || d.text.contains("faster")
                    || d.ratio.is_some()),
                "{:?}",
                input.differences
            );
            let emu = if base { "host" } else { "guest" };
            assert_eq!(input.basis.len(), 1);
            assert!(
                input.basis[0].starts_with(&format!("{emu} was measured under emulation (TCG)")),
                "{:?}",
                input.basis
            );
            assert!(
                input.basis[0].contains("only their growth classes are compared"),
                "{:?}",
                input.basis
            );
        }
    }

    #[test]
    fn two_emulated_systems_show_cost_ratios_with_a_warning() {
        let systems = [
            system("cloud", true, 1.0, false),
            system("rt", true, 10.0, false),
        ];
        let input = Input::new(&systems, &Default::default());
        let k = kinds(&input);
        assert!(k.contains(&(Kind::Cost, "socket".into())), "{k:?}");
        // Emulated alike: said once, by the emulation warning, not per pair.
        assert!(input.basis.is_empty(), "{:?}", input.basis);
        let warnings = crate::emulation_warnings(&systems);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(warnings[0].0, "cloud and rt");
        let (a, b) = (input.measured_of("cloud"), input.measured_of("rt"));
        assert_eq!(
            Basis::of(a, b).note("cloud", "rt", a, b).unwrap(),
            "cloud and rt were both measured under emulation (TCG): their cost ratios compare two emulations, not the speed of two machines"
        );
    }

    /// Two guests counting instructions at one shift: a change of 15 %,
    /// below [`NOTABLE`], is a difference when compare's test finds it,
    /// with its interval; the same counts are none.
    #[test]
    fn two_counting_guests_differ_by_what_compare_finds_with_its_interval() {
        let counted = |label: &str, scale: f64| counted(system(label, true, scale, false), 0);
        let systems = [counted("v6.1", 1.0), counted("v6.12", 1.15)];
        let input = Input::new(&systems, &Default::default());
        let d = input
            .differences
            .iter()
            .find(|d| d.kind == Kind::Cost && d.series == "bind")
            .unwrap_or_else(|| panic!("{:?}", input.differences));
        assert!(
            d.text
                .starts_with("bind: v6.12 executes +14.9 % instructions against v6.1 over n = ")
                && d.text.contains("(90 % interval +1")
                && d.text
                    .contains("its quiet path (each run's 10th percentile) +1")
                && d.text.contains(" instr against "),
            "{}",
            d.text
        );
        assert!((d.ratio.unwrap() - 1.15).abs() < 0.01, "{d:?}");
        let same = [counted("a", 1.0), counted("b", 1.0)];
        let input = Input::new(&same, &Default::default());
        assert!(
            !input.differences.iter().any(|d| d.kind == Kind::Cost),
            "{:?}",
            input.differences
        );
    }

    #[test]
    fn time_that_grows_where_instructions_stay_flat_is_named() {
        let host = system("host", false, 1.0, true);
        let guest = counted(system("v6.1", true, 1.0, false), 0);
        for systems in [[host.clone(), guest.clone()], [guest, host]] {
            let input = Input::new(&systems, &Default::default());
            let d = input
                .differences
                .iter()
                .find(|d| d.kind == Kind::Class && d.series == "bind")
                .unwrap_or_else(|| panic!("{:?}", input.differences));
            assert!(
                d.text.starts_with("bind: host's time grows O(n) while v6.1's instruction count stays flat: what grows is not the instructions executed"),
                "{}",
                d.text
            );
        }
        // Between two native systems, the plain sentence.
        let systems = [
            system("a", false, 1.0, true),
            system("b", false, 1.0, false),
        ];
        let input = Input::new(&systems, &Default::default());
        let d = input
            .differences
            .iter()
            .find(|d| d.kind == Kind::Class)
            .unwrap();
        assert_eq!(d.text, "bind: b stays O(1) where a grows O(n)");
    }

    #[test]
    fn instruction_counts_compare_by_cost_and_against_host_time_by_class() {
        let a = counted(system("v5.10", true, 1.0, false), 0);
        let b = counted(system("v6.1", true, 10.0, false), 0);
        let systems = [a.clone(), b.clone()];
        let input = Input::new(&systems, &Default::default());
        assert!(kinds(&input).contains(&(Kind::Cost, "socket".into())));
        let d = input
            .differences
            .iter()
            .find(|d| d.kind == Kind::Cost)
            .unwrap();
        assert!(d.text.contains(" instr against "), "{}", d.text);
        assert!(input.basis.is_empty(), "{:?}", input.basis);
        let (x, y) = (input.measured_of("v5.10"), input.measured_of("v6.1"));
        assert_eq!(Basis::of(x, y), Basis::Counted);
        // Against a guest in host time: classes only, and said why.
        let timed = system("t", true, 10.0, false);
        let systems = [a, timed];
        let input = Input::new(&systems, &Default::default());
        assert!(!kinds(&input).iter().any(|(k, _)| *k == Kind::Cost));
        assert_eq!(
            input.basis,
            [
                "v5.10 counted instructions and t host time, both under emulation (TCG): only their growth classes are compared, no costs"
            ]
        );
        assert_eq!(crate::emulation_warnings(&systems).len(), 2);
    }
}
