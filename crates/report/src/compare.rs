//! `scalebench compare BASE NEW`: one row per benchmark series and per
//! workload row, each improved, unchanged, regressed, class-changed or
//! not comparable, with the evidence in words (the test is in
//! [`analysis::compare`]); written for a terminal, a pull-request
//! comment (Markdown) or a program (JSON). An emulated file and a native
//! one are compared by growth class only; two emulated ones as two native
//! ones, with a warning ([`super::Basis`]).

use super::{Basis, Input, samples_of};
use analysis::Label;
use analysis::compare::{
    self, CostRatio, Outcome, SINGLE_THRESHOLD, cost_ratio, judge_cost, judge_throughput,
};
use results::{Status, WorkloadRow};
use serde::Serialize;
use std::io::Write;
use units::fmt_n;

/// One compared series or workload row.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// `benchmark` or `workload`.
    pub kind: &'static str,
    /// The series (`connect[epoll]`) or `workload: row` (with its target
    /// and, for a sweep, nothing more: levels are summed up).
    pub name: String,
    /// What the comparison found.
    pub outcome: Outcome,
    /// The base's class, for benchmarks with a verdict.
    pub base_class: Option<String>,
    /// The new file's class.
    pub new_class: Option<String>,
    /// The cost test of the runs' medians, for benchmarks.
    pub cost: Option<CostRatio>,
    /// The cost test of the runs' quiet path, between two guests counting
    /// instructions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quiet_cost: Option<CostRatio>,
    /// Throughput of base and new and their ratio new / base, for
    /// workload rows (a sweep: the geometric mean of its levels' ratios).
    pub throughput: Option<[f64; 3]>,
    /// The evidence in a sentence.
    pub evidence: String,
}

impl Row {
    /// A row of `kind` named `name`, not yet judged: not comparable,
    /// with no figures and no evidence.
    fn blank(kind: &'static str, name: String) -> Row {
        Row {
            kind,
            name,
            outcome: Outcome::NotComparable,
            base_class: None,
            new_class: None,
            cost: None,
            quiet_cost: None,
            throughput: None,
            evidence: String::new(),
        }
    }
}

/// The class a label names; of a split, the lower one (the verdicts
/// count as near either side: see [`classes`]).
fn class_of(l: &Label) -> Option<analysis::Class> {
    match l {
        Label::Class(c) | Label::Between(c, _) => Some(*c),
        _ => None,
    }
}

/// The share of a verdict's resampled runs giving another class above
/// which that class is not called a change.
pub const CLASS_VOTE: f64 = 0.25;

fn pct(x: f64) -> String {
    pct_to(x, compare::MIN_THRESHOLD)
}

/// A ratio as a change in percent, to a tenth where the threshold it is
/// judged against is below 5 % (instruction counts).
pub(crate) fn pct_to(x: f64, floor: f64) -> String {
    if floor < 0.05 {
        format!("{:+.1} %", (x - 1.0) * 100.0)
    } else {
        format!("{:+.0} %", (x - 1.0) * 100.0)
    }
}

/// Compares the benchmark series of the first two systems of `input`
/// (by class only on a `Mixed` basis).
fn benchmarks(input: &Input, threshold: Option<f64>, basis: Basis) -> Vec<Row> {
    let (base, new) = (&input.systems[0].label, &input.systems[1].label);
    let mut rows = Vec::new();
    for series in input.series_names() {
        let of = |sys: &str| input.of_series(series).find(|e| e.system == sys);
        let (b, n) = (of(base), of(new));
        let mut row = Row::blank("benchmark", series.to_string());
        let (Some(b), Some(n)) = (b, n) else {
            row.evidence = format!("only in {}", if b.is_some() { base } else { new });
            rows.push(row);
            continue;
        };
        let ok = |e: &super::Entry| matches!(e.status, Some(Status::Ok | Status::Capped));
        if let (Some(was), Some(is)) = (b.status, n.status)
            && broke(was, is)
        {
            row.outcome = Outcome::Regressed;
            row.evidence = broke_words(n.bench.and_then(|x| x.message.as_deref()));
            rows.push(row);
            continue;
        }
        if !ok(b) || !ok(n) {
            row.evidence = format!(
                "not measured in both: {} in the base, {} in the new one",
                b.status.map_or("—", |s| s.as_str()),
                n.status.map_or("—", |s| s.as_str())
            );
            rows.push(row);
            continue;
        }
        let (Some(bb), Some(nb)) = (b.bench, n.bench) else {
            rows.push(row);
            continue;
        };
        row.base_class = b.verdict.as_ref().ok().map(|v| v.class.to_string());
        row.new_class = n.verdict.as_ref().ok().map(|v| v.class.to_string());
        if basis == Basis::Mixed {
            (row.outcome, row.evidence) = judge_classes(b, n);
        } else {
            let j = judge_pair(b, bb, n, nb, threshold);
            (row.outcome, row.evidence, row.cost, row.quiet_cost) =
                (j.outcome, j.evidence, j.cost, j.quiet);
        }
        rows.push(row);
    }
    rows
}

/// What [`judge_pair`] found for one series of two files.
#[derive(Debug, Clone)]
pub struct Judged {
    /// The outcome: a change of class, else the worse of the cost tests.
    pub outcome: Outcome,
    /// The cost test of the runs' medians.
    pub cost: Option<CostRatio>,
    /// Between two guests counting instructions, the cost test of the
    /// runs' quiet path ([`compare::QUIET_QUANTILE`]).
    pub quiet: Option<CostRatio>,
    /// The evidence in words.
    pub evidence: String,
}

/// Judges one series of two files (`b`, `n` with their recorded series):
/// a change of class, else the cost test — between two guests counting
/// instructions, of the runs' medians and of their quiet path, the worse
/// of the two counting (a change in the calls' slow part moves the
/// medians only, and is still seen against their noise). `compare` and
/// `history` both judge by it.
pub fn judge_pair(
    b: &super::Entry,
    bb: &results::BenchResult,
    n: &super::Entry,
    nb: &results::BenchResult,
    threshold: Option<f64>,
) -> Judged {
    // Two instruction counts are exact from one invocation to the next:
    // only their own noise widens the threshold.
    let counted = b.cost.counts_instructions() && n.cost.counts_instructions();
    let floor = if counted {
        compare::COUNTED_MIN_THRESHOLD
    } else {
        compare::MIN_THRESHOLD
    };
    let (sb, sn) = (samples_of(bb), samples_of(nb));
    let cost = cost_ratio(&sb, &sn, threshold, floor);
    let quiet = counted
        .then(|| compare::cost_ratio_at(&sb, &sn, threshold, floor, compare::QUIET_QUANTILE))
        .flatten();
    let pct = |x: f64| pct_to(x, floor);
    let (classes, both_near) = classes(b, n);
    let apart = ranges_apart(b, n);
    let (outcome, evidence) = match (&cost, classes) {
        (_, (Some(x), Some(y))) if x != y && !both_near && apart.is_none() => {
            let mut evidence = format!(
                "{} → {}: the cost grows {} with n",
                label_of(b),
                label_of(n),
                if y > x { "faster" } else { "slower" }
            );
            if let Some(c) = &cost {
                evidence.push_str(&format!(
                    "; cost over n = {}..{} {} ({}..{})",
                    fmt_n(c.n_range[0]),
                    fmt_n(c.n_range[1]),
                    pct(c.ratio.value),
                    pct(c.ratio.lo),
                    pct(c.ratio.hi)
                ));
            }
            (Outcome::ClassChanged, evidence)
        }
        (Some(c), _) => {
            let unsure = match classes {
                (Some(x), Some(y)) if x != y && apart.is_some() => {
                    format!("{}; ", apart.as_deref().unwrap_or_default())
                }
                (Some(x), Some(y)) if x != y => format!(
                    "{} and {}, which the verdicts do not tell apart; ",
                    x.label(),
                    y.label()
                ),
                _ => split_words(b, n),
            };
            let how = match (threshold.is_some(), counted) {
                (true, _) => "given".to_string(),
                (false, true) => format!(
                    "twice the larger noise, {}–{:.0} % between instruction counts",
                    compare::COUNTED_MIN_THRESHOLD * 100.0,
                    compare::MAX_THRESHOLD * 100.0
                ),
                (false, false) => format!(
                    "twice the larger noise, {:.0}–{:.0} %",
                    compare::MIN_THRESHOLD * 100.0,
                    compare::MAX_THRESHOLD * 100.0
                ),
            };
            let mut evidence = unsure + &cost_words("cost", c, &how, floor);
            let mut outcome = judge_cost(c);
            if let Some(q) = &quiet {
                evidence.push_str(&format!(
                    "; {}",
                    cost_words(
                        &format!(
                            "its quiet path (each run's {:.0}th percentile)",
                            compare::QUIET_QUANTILE * 100.0
                        ),
                        q,
                        &how,
                        floor
                    )
                ));
                outcome = worse(outcome, judge_cost(q));
            }
            (outcome, evidence)
        }
        (None, _) => (Outcome::NotComparable, "no common n".into()),
    };
    Judged {
        outcome,
        cost,
        quiet,
        evidence,
    }
}

/// When one verdict is a split between two classes that holds the
/// other's single class (`O(n)–O(n^2)` and `O(n)`), that they are the
/// same class, in words; else nothing.
fn split_words(b: &super::Entry, n: &super::Entry) -> String {
    match (&b.verdict, &n.verdict) {
        (Ok(vb), Ok(vn)) => same_class_words(&vb.class, &vn.class),
        _ => String::new(),
    }
}

/// [`split_words`] of two labels: a range that holds the other's class,
/// or two ranges that share one.
pub(crate) fn same_class_words(b: &Label, n: &Label) -> String {
    let said = |split: &Label, one: &Label| match (split, one) {
        (Label::Between(..), Label::Class(c)) if split.names(*c) => Some(format!(
            "{} holds {}: the same class, not a change; ",
            split.label(),
            c.label()
        )),
        _ => None,
    };
    let shared = match (b, n) {
        (Label::Between(..), Label::Between(..)) if b != n => analysis::Class::ALL
            .iter()
            .find(|&&c| b.names(c) && n.names(c))
            .map(|c| {
                format!(
                    "{} and {} share {}: the same class, not a change; ",
                    b.label(),
                    n.label(),
                    c.label()
                )
            }),
        _ => None,
    };
    said(b, n)
        .or_else(|| said(n, b))
        .or(shared)
        .unwrap_or_default()
}

/// The cost test `c` of `what` in words, its threshold set `how`.
fn cost_words(what: &str, c: &CostRatio, how: &str, floor: f64) -> String {
    let pct = |x: f64| pct_to(x, floor);
    // From a single run there is nothing to resample or to spread: a
    // point interval and a noise of 0 would claim a certainty it lacks.
    let single = c.runs.iter().any(|&r| r < 2);
    let interval = if single {
        format!(
            "no interval from a single run: {} and {} runs",
            c.runs[0], c.runs[1]
        )
    } else {
        format!(
            "90 % interval {}..{}, resampling {} and {} runs",
            pct(c.ratio.lo),
            pct(c.ratio.hi),
            c.runs[0],
            c.runs[1]
        )
    };
    let noise = |k: usize| {
        if c.runs[k] < 2 {
            "unknown (one run)".to_string()
        } else {
            format!("{:.1} %", c.noise[k] * 100.0)
        }
    };
    format!(
        "{what} over n = {}..{} {} ({interval}) against ±{} % ({how}); run-to-run noise {} and {}",
        fmt_n(c.n_range[0]),
        fmt_n(c.n_range[1]),
        pct(c.ratio.value),
        if c.threshold < 0.05 {
            format!("{:.1}", c.threshold * 100.0)
        } else {
            format!("{:.0}", c.threshold * 100.0)
        },
        noise(0),
        noise(1)
    )
}

/// The worse of two cost outcomes: a regression in either, else an
/// improvement in either, else unchanged.
fn worse(a: Outcome, b: Outcome) -> Outcome {
    match (a, b) {
        (Outcome::Regressed, _) | (_, Outcome::Regressed) => Outcome::Regressed,
        (Outcome::Improved, _) | (_, Outcome::Improved) => Outcome::Improved,
        _ => a,
    }
}

/// Whether what ran in the base (`was`) broke in the new file (`is`):
/// measured there, failed here — a regression, whatever its figures.
fn broke(was: Status, is: Status) -> bool {
    matches!(was, Status::Ok | Status::Capped) && is == Status::Failed
}

/// The evidence of what [`broke`], with its failure's `message`.
fn broke_words(message: Option<&str>) -> String {
    format!(
        "ok in the base, failed in the new one{}",
        message.map_or(String::new(), |m| format!(": {m}"))
    )
}

/// Whether two verdicts were judged over ranges of n whose highest ends
/// differ by more than [`RANGE_APART`]: their classes are claims about
/// other ranges, not to be compared.
pub(crate) fn judged_apart(a: &analysis::Verdict, b: &analysis::Verdict) -> bool {
    let (lo, hi) = (a.high.n.min(b.high.n), a.high.n.max(b.high.n));
    lo > 0.0 && hi / lo > RANGE_APART
}

/// A verdict's label as judged (`O(n)–O(n^2)`), or `no verdict`.
fn label_of(e: &super::Entry) -> String {
    e.verdict
        .as_ref()
        .map_or_else(|_| "no verdict".into(), |v| v.class.label().to_string())
}

/// The most the highest n two verdicts were judged up to may differ by
/// before their classes are not compared: a class holds for the range it
/// was judged over, and a cost that is flat to 2 000 may grow by 10 000.
const RANGE_APART: f64 = 1.25;

/// Why two entries' classes are not compared, when their verdicts were
/// judged over ranges of n whose highest ends differ by more than
/// [`RANGE_APART`]; `None` when alike (or either has no verdict).
fn ranges_apart(b: &super::Entry, n: &super::Entry) -> Option<String> {
    let (vb, vn) = (b.verdict.as_ref().ok()?, n.verdict.as_ref().ok()?);
    judged_apart(vb, vn).then(|| {
        format!(
            "{} and {} not compared: judged up to n = {} in the base and {} in the new one (a class holds for the range it was judged over; run both to the same --max)",
            label_of(b),
            label_of(n),
            fmt_n(vb.high.n),
            fmt_n(vn.high.n)
        )
    })
}

/// The growth classes of two entries, and whether they are near: one
/// verdict found the other's class about as good (its `alternative`), or
/// its resampled runs gave it a quarter of their votes or more — which is
/// not a change of class.
#[allow(clippy::type_complexity)]
fn classes(
    b: &super::Entry,
    n: &super::Entry,
) -> ((Option<analysis::Class>, Option<analysis::Class>), bool) {
    let classes = (
        b.verdict.as_ref().ok().and_then(|v| class_of(&v.class)),
        n.verdict.as_ref().ok().and_then(|v| class_of(&v.class)),
    );
    let near = |e: &super::Entry, c: analysis::Class| {
        e.verdict.as_ref().is_ok_and(|v| {
            v.alternative == Some(c)
                || v.class.names(c)
                || v.votes
                    .iter()
                    .any(|x| x.what == c.label() && x.share >= CLASS_VOTE)
        })
    };
    let both_near = matches!(classes, (Some(x), Some(y)) if near(b, y) || near(n, x));
    (classes, both_near)
}

/// Judges one series of an emulated and a native file by its growth
/// classes alone: a change of class, the same class, or no class to
/// compare; never a cost (an emulated CPU's times are not the speed of
/// any machine).
pub fn judge_classes(b: &super::Entry, n: &super::Entry) -> (Outcome, String) {
    let why = if b.emulated && n.emulated {
        super::clocks_apart(b.system, b.cost, n.system, n.cost)
    } else {
        let emu = if b.emulated { b.system } else { n.system };
        format!("{emu} was measured under emulation (TCG)")
    };
    let why = format!("costs not compared: {why}");
    let apart = ranges_apart(b, n);
    match classes(b, n) {
        ((Some(x), Some(y)), _) if x != y && apart.is_some() => (
            Outcome::NotComparable,
            format!("{}; {why}", apart.unwrap_or_default()),
        ),
        ((Some(x), Some(y)), false) if x != y => (
            Outcome::ClassChanged,
            format!(
                "{} → {}: the cost grows {} with n; {why}",
                label_of(b),
                label_of(n),
                if y > x { "faster" } else { "slower" }
            ),
        ),
        ((Some(x), Some(y)), _) if x == y => (
            Outcome::Unchanged,
            format!("the same growth class on both, {}; {why}", x.label()),
        ),
        ((Some(x), Some(y)), _) => (
            Outcome::Unchanged,
            format!(
                "{} and {}, which the verdicts do not tell apart; {why}",
                x.label(),
                y.label()
            ),
        ),
        _ => {
            let label = |e: &super::Entry| match &e.verdict {
                Ok(v) => v.class.label().to_string(),
                Err(_) => "no verdict".into(),
            };
            (
                Outcome::NotComparable,
                format!(
                    "no growth class on both ({} in the base, {} in the new one); {why}",
                    label(b),
                    label(n)
                ),
            )
        }
    }
}

/// A workload row's throughput: requests/s, a phase's rate, or (sweeps)
/// each level's figure.
fn figures(r: &WorkloadRow) -> Vec<(Option<f64>, f64)> {
    if let Some(s) = &r.sweep {
        return s
            .levels
            .iter()
            .filter_map(|l| Some((Some(l.level), l.value?)))
            .collect();
    }
    if let Some(l) = &r.load {
        return vec![(None, l.requests_per_s)];
    }
    if let Some(p) = &r.phase {
        return vec![(None, p.rate())];
    }
    Vec::new()
}

/// Compares the workload rows of the first two systems (none of their
/// figures on a `Mixed` basis, nor of a workload the two ran at other
/// sizes: [`super::settings::size_changes`]); a workload that failed in
/// the new file where it ran in the base is a regression; a row of one
/// file only is said so.
fn workloads(input: &Input, threshold: Option<f64>, basis: Basis) -> Vec<Row> {
    let t = threshold.unwrap_or(SINGLE_THRESHOLD);
    let (bf, nf) = (&input.systems[0].file, &input.systems[1].file);
    let mut rows = Vec::new();
    for w in &bf.workloads {
        let other = nf.workloads.iter().find(|x| x.name == w.name);
        let resized = other.and_then(|o| w.size_changes(o));
        let broken = other.filter(|o| broke(w.status, o.status));
        for r in &w.rows {
            let mut row = work_row(w, r);
            if let Some(o) = broken {
                row.outcome = Outcome::Regressed;
                row.evidence = broke_words(o.message.as_deref());
                rows.push(row);
                continue;
            }
            let Some(o) = other.and_then(|o| {
                o.rows
                    .iter()
                    .find(|x| x.label == r.label && x.target == r.target)
            }) else {
                row.evidence = "only in the base".into();
                rows.push(row);
                continue;
            };
            if let Some(changes) = &resized {
                row.evidence = format!("measured at other sizes ({changes}): not compared");
            } else if basis == Basis::Mixed {
                let emu = if input.emulated[0] {
                    &input.systems[0].label
                } else {
                    &input.systems[1].label
                };
                row.evidence =
                    format!("throughput not compared: {emu} was measured under emulation (TCG)");
            } else {
                judge_rows(&mut row, r, o, t);
            }
            rows.push(row);
        }
    }
    // What the new file alone has: said, not dropped.
    for w in &nf.workloads {
        let base = bf.workloads.iter().find(|x| x.name == w.name);
        for r in &w.rows {
            let in_base = base.is_some_and(|b| {
                b.rows
                    .iter()
                    .any(|x| x.label == r.label && x.target == r.target)
            });
            if !in_base {
                let mut row = work_row(w, r);
                row.evidence = "only in the new one".into();
                rows.push(row);
            }
        }
    }
    rows
}

/// A workload row's comparison, not yet judged (`fs: unpack · ext4`).
fn work_row(w: &results::WorkloadResult, r: &results::WorkloadRow) -> Row {
    let target = r
        .target
        .as_deref()
        .map_or(String::new(), |t| format!(" · {t}"));
    Row::blank("workload", format!("{}: {}{target}", w.name, r.label))
}

/// Judges the throughput of a workload row in the base (`r`) and the new
/// file (`o`) against threshold `t`: over the levels both measured (the
/// geometric mean of their ratios, the worst named), or the one figure.
fn judge_rows(row: &mut Row, r: &results::WorkloadRow, o: &results::WorkloadRow, t: f64) {
    let (fb, fnew) = (figures(r), figures(o));
    let pairs: Vec<(Option<f64>, f64, f64)> = fb
        .iter()
        .filter_map(|(lv, b)| {
            let n = fnew.iter().find(|(l2, _)| l2 == lv)?.1;
            (*b > 0.0).then_some((*lv, *b, n))
        })
        .collect();
    if pairs.is_empty() {
        row.evidence = "no figure measured in both".into();
        return;
    }
    let ratio =
        (pairs.iter().map(|(_, b, n)| (n / b).ln()).sum::<f64>() / pairs.len() as f64).exp();
    let (b, n) = (
        pairs.iter().map(|p| p.1).sum::<f64>() / pairs.len() as f64,
        pairs.iter().map(|p| p.2).sum::<f64>() / pairs.len() as f64,
    );
    row.outcome = judge_throughput(ratio, t);
    row.throughput = Some([b, n, ratio]);
    row.evidence = if pairs.len() > 1 {
        let worst = pairs
            .iter()
            .min_by(|x, y| (x.2 / x.1).total_cmp(&(y.2 / y.1)))
            .unwrap();
        format!(
            "throughput {} over {} levels (geometric mean; worst {} at {}) against ±{:.0} %",
            pct(ratio),
            pairs.len(),
            pct(worst.2 / worst.1),
            fmt_n(worst.0.unwrap_or(0.0)),
            t * 100.0
        )
    } else {
        format!(
            "throughput {:.0} → {:.0}/s, {} against ±{:.0} % (measured once: no run-to-run noise to judge by)",
            b,
            n,
            pct(ratio),
            t * 100.0
        )
    };
}

/// Every comparison of the first two systems of `input` (base, new):
/// benchmarks, then workload rows.
pub fn compare(input: &Input, threshold: Option<f64>) -> Vec<Row> {
    if input.systems.len() < 2 {
        return Vec::new();
    }
    let (a, b) = (&input.systems[0].label, &input.systems[1].label);
    let basis = Basis::of(input.measured_of(a), input.measured_of(b));
    let mut rows = benchmarks(input, threshold, basis);
    rows.extend(workloads(input, threshold, basis));
    rows
}

/// Why the two files' figures may not compare: one or both measured under
/// emulation, another process busy (over half a CPU) when a run started,
/// or the hypervisor stealing over 5 % of the CPU time during it. (Not the
/// load average: a run's own forks and the one before it raise it for a
/// minute.)
pub fn warnings(input: &Input) -> Vec<String> {
    let (base, new) = (&input.systems[0].label, &input.systems[1].label);
    let (a, b) = (input.measured_of(base), input.measured_of(new));
    let emulation = Basis::of(a, b).note(base, new, a, b);
    let cut_short = input.systems[..2]
        .iter()
        .filter(|s| !s.file.complete)
        .map(|s| {
            format!(
                "{} is incomplete (its run was interrupted or died): what it lacks is not compared",
                s.label
            )
        });
    emulation
        .into_iter()
        .chain(cut_short)
        .chain(measured_otherwise(input))
        .chain(busy(input))
        .collect()
}

/// The warning of two files whose figures came by different paths: the
/// benchmarks' run order (`--order`) or a workload's server (which files
/// path, which loop) differ, so that a change may be the method's.
fn measured_otherwise(input: &Input) -> Option<String> {
    // The settings the input found differing (base and new first); both
    // files must say: a file written before the order was recorded is not
    // another path.
    let what: Vec<String> = input
        .settings
        .iter()
        .filter(|r| r.name == "benchmark run order" || r.name.ends_with(" server"))
        .filter_map(|r| match (&r.values[0], &r.values[1]) {
            (Some(a), Some(b)) => Some(format!("{} {a} → {b}", r.name)),
            _ => None,
        })
        .collect();
    (!what.is_empty()).then(|| {
        format!(
            "measured by different paths ({}): a change may be the method's, not the system's",
            what.join("; ")
        )
    })
}

/// The warnings of a busy machine, per file.
fn busy(input: &Input) -> Vec<String> {
    input.systems[..2]
        .iter()
        .filter_map(|s| {
            let sys = &s.file.system;
            let mut why: Vec<String> = sys
                .tuning
                .busiest
                .iter()
                .flatten()
                .filter(|p| p.percent > 50.0)
                .map(|p| format!("{} at {:.0} % of a CPU", p.name, p.percent))
                .collect();
            if let Some(p) = sys
                .tuning
                .steal_percent
                .filter(|&p| p > sys::tuning::STEAL_WARN_PERCENT)
            {
                why.push(format!("{p:.1} % of CPU time stolen by the hypervisor"));
            }
            (!why.is_empty()).then(|| {
                format!(
                    "the machine was busy when {} started ({}): its figures may not compare",
                    s.label,
                    why.join(", ")
                )
            })
        })
        .collect()
}

/// Whether a row is a regression: slower, less throughput, or a growth
/// class that grows faster.
pub fn is_regression(r: &Row) -> bool {
    match r.outcome {
        Outcome::Regressed => true,
        Outcome::ClassChanged => {
            // Ranked as judged: a split label by its lower class (`class_of`).
            let rank = |c: &Option<String>| {
                let lower = c.as_deref()?.split('–').next()?;
                analysis::Class::ALL.iter().position(|k| k.label() == lower)
            };
            matches!((rank(&r.base_class), rank(&r.new_class)), (Some(b), Some(n)) if n > b)
        }
        _ => false,
    }
}

/// What a comparison says of NEW for `git bisect run` (`compare
/// --bisect`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bisect {
    /// No row regressed, and every row could be judged: exit 0.
    Good,
    /// These rows regressed (slower, or a class that grows faster): exit 1.
    Bad(Vec<String>),
    /// Nothing regressed, but these rows could not be judged (missing or
    /// failed in NEW, or NEW's verdict undecided or split where BASE's was
    /// a class): exit 125, so that the commit is skipped.
    Skip(Vec<String>),
}

impl Bisect {
    /// The verdict on `rows`.
    pub fn of(rows: &[Row]) -> Bisect {
        let bad: Vec<String> = rows
            .iter()
            .filter(|r| is_regression(r))
            .map(|r| r.name.clone())
            .collect();
        if !bad.is_empty() {
            return Bisect::Bad(bad);
        }
        let decided = |c: &Option<String>| {
            analysis::Class::ALL
                .iter()
                .any(|k| Some(k.label()) == c.as_deref())
        };
        let unsure: Vec<String> = rows
            .iter()
            .filter(|r| {
                r.outcome == Outcome::NotComparable
                    || (r.kind == "benchmark" && decided(&r.base_class) && !decided(&r.new_class))
            })
            .map(|r| r.name.clone())
            .collect();
        if unsure.is_empty() {
            Bisect::Good
        } else {
            Bisect::Skip(unsure)
        }
    }

    /// The exit status `git bisect run` reads: 0 good, 1 bad, 125 skip.
    pub fn status(&self) -> u8 {
        match self {
            Bisect::Good => 0,
            Bisect::Bad(_) => 1,
            Bisect::Skip(_) => 125,
        }
    }

    /// In words, for standard error.
    pub fn words(&self) -> String {
        match self {
            Bisect::Good => "good: nothing regressed (exit 0)".into(),
            Bisect::Bad(r) => format!("bad: {} regressed (exit 1)", r.join(", ")),
            Bisect::Skip(r) => format!(
                "skip: {} cannot be judged, nothing regressed (exit 125)",
                r.join(", ")
            ),
        }
    }
}

/// The JSON document of `compare --format json`.
#[derive(Serialize)]
struct Doc<'a> {
    schema: &'static str,
    schema_version: u32,
    base: &'a str,
    new: &'a str,
    counts: std::collections::BTreeMap<&'static str, usize>,
    warnings: Vec<String>,
    rows: &'a [Row],
}

/// A comparison of two result files, judged (every row decided before any
/// writer runs): what the writers of [`super::Report`] show.
pub struct Comparison<'i, 'a> {
    /// The two systems, base first, with their verdicts.
    pub input: &'i Input<'a>,
    /// One row per series and workload figure.
    pub rows: Vec<Row>,
    /// Why the figures may not compare ([`warnings`]).
    pub warnings: Vec<String>,
}

impl<'i, 'a> Comparison<'i, 'a> {
    /// Compares the two systems of `input` (base first), with the
    /// threshold given or the default one.
    pub fn of(input: &'i Input<'a>, threshold: Option<f64>) -> Comparison<'i, 'a> {
        Comparison {
            input,
            rows: compare(input, threshold),
            warnings: warnings(input),
        }
    }

    /// The labels of base and new.
    fn labels(&self) -> (&str, &str) {
        (&self.input.systems[0].label, &self.input.systems[1].label)
    }

    /// How many rows had each outcome, by outcome name.
    fn counts(&self) -> std::collections::BTreeMap<&'static str, usize> {
        let mut counts = std::collections::BTreeMap::new();
        for r in &self.rows {
            *counts.entry(r.outcome.name()).or_insert(0) += 1;
        }
        counts
    }

    /// The counts in words: `3 unchanged, 1 regressed`.
    fn summary(&self) -> String {
        self.counts()
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The comparison as JSON.
pub fn write_json(c: &Comparison, out: &mut dyn Write) -> crate::Result<()> {
    let (base, new) = c.labels();
    serde_json::to_writer_pretty(
        &mut *out,
        &Doc {
            schema: "scalebench-compare",
            schema_version: 1,
            base,
            new,
            counts: c.counts(),
            warnings: c.warnings.clone(),
            rows: &c.rows,
        },
    )?;
    writeln!(out)?;
    Ok(())
}

/// The comparison in Markdown (for a pull-request comment).
pub fn write_markdown(c: &Comparison, out: &mut dyn Write) -> crate::Result<()> {
    let (base, new) = c.labels();
    writeln!(
        out,
        "**scalebench compare** {base} → {new}: {}\n",
        c.summary()
    )?;
    for w in &c.warnings {
        writeln!(out, "> ⚠️ {w}\n")?;
    }
    writeln!(out, "| | series | outcome | evidence |")?;
    writeln!(out, "|---|---|---|---|")?;
    for r in &c.rows {
        let mark = match r.outcome {
            Outcome::Regressed | Outcome::ClassChanged if is_regression(r) => "❌",
            Outcome::Improved => "✅",
            Outcome::ClassChanged => "⚠️",
            _ => "",
        };
        writeln!(
            out,
            "| {mark} | {} | {} | {} |",
            r.name.replace('|', "\\|"),
            r.outcome.name(),
            r.evidence.replace('|', "\\|")
        )?;
    }
    Ok(())
}

/// The comparison for a terminal.
pub fn write_terminal(c: &Comparison, out: &mut dyn Write) -> crate::Result<()> {
    let (base, new) = c.labels();
    writeln!(out, "{base} → {new}: {}", c.summary())?;
    for w in &c.warnings {
        super::wrap::wrapped(out, "warning: ", w)?;
    }
    writeln!(out)?;
    for r in &c.rows {
        writeln!(out, "{:<15} {}", r.outcome.name(), r.name)?;
        super::wrap::wrapped(out, "                ", &r.evidence)?;
    }
    Ok(())
}

/// The test's constants, for the docs and the CLI's help.
pub fn rule() -> String {
    format!(
        "benchmarks: cost ratio new/base over the common n, 90 % interval from resampling whole runs, against twice the larger run-to-run noise ({:.0}–{:.0} %; from {} % between two guests counting instructions, whose runs' {:.0}th percentiles are compared too); workloads: throughput ratio against ±{:.0} %",
        compare::MIN_THRESHOLD * 100.0,
        compare::MAX_THRESHOLD * 100.0,
        compare::COUNTED_MIN_THRESHOLD * 100.0,
        compare::QUIET_QUANTILE * 100.0,
        SINGLE_THRESHOLD * 100.0
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::System;
    use results::BusyProcess;

    fn system(label: &str, busy: Option<f64>) -> System {
        let mut file: results::ResultFile =
            serde_json::from_str(include_str!("../../../tests/fixtures/empty.json")).unwrap();
        file.system.tuning.busiest = Some(
            busy.map(|percent| BusyProcess {
                pid: 7,
                name: "cc1".into(),
                percent,
            })
            .into_iter()
            .collect(),
        );
        file.system.tuning.load_average = Some([0.1, 0.1, 0.1]);
        // (The fixture is a run interrupted before its first benchmark.)
        file.complete = true;
        System {
            label: label.into(),
            file,
        }
    }

    #[test]
    fn a_busy_machine_is_named_and_a_quiet_one_is_not() {
        let systems = [system("a", None), system("b", Some(180.0))];
        let input = Input::new(&systems, &analysis::Options::default());
        let w = warnings(&input);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("when b started (cc1 at 180 % of a CPU)"),
            "{w:?}"
        );
        let quiet = [system("a", Some(10.0)), system("b", None)];
        let input = Input::new(&quiet, &analysis::Options::default());
        assert!(warnings(&input).is_empty());
    }

    #[test]
    fn a_split_that_holds_the_other_class_is_said_to_be_the_same_class() {
        use analysis::Class;
        let split = Label::Between(Class::Linear, Class::Quadratic);
        let one = Label::Class(Class::Linear);
        let said = "O(n)–O(n^2) holds O(n): the same class, not a change; ";
        assert_eq!(same_class_words(&split, &one), said);
        assert_eq!(same_class_words(&one, &split), said);
        assert_eq!(same_class_words(&one, &one), "");
        // A split that does not hold it is no such thing.
        assert_eq!(same_class_words(&split, &Label::Class(Class::Constant)), "");
        // A range holds every class between its ends; two that overlap
        // share one.
        let wide = Label::Between(Class::Log, Class::NLogN);
        assert_eq!(
            same_class_words(&wide, &one),
            "O(log n)–O(n log n) holds O(n): the same class, not a change; "
        );
        assert_eq!(
            same_class_words(&Label::Between(Class::Log, Class::Linear), &split),
            "O(log n)–O(n) and O(n)–O(n^2) share O(n): the same class, not a change; "
        );
        let apart = Label::Between(Class::NLogN, Class::Quadratic);
        assert_eq!(
            same_class_words(&Label::Between(Class::Log, Class::Linear), &apart),
            ""
        );
        // Flat within τ yet rising holds O(1) and its shape.
        let rising = Label::Between(Class::Constant, Class::Log);
        assert_eq!(
            same_class_words(&Label::Class(Class::Constant), &rising),
            "O(1)–O(log n) holds O(1): the same class, not a change; "
        );
        assert_eq!(
            same_class_words(&rising, &Label::Class(Class::Log)),
            "O(1)–O(log n) holds O(log n): the same class, not a change; "
        );
    }

    #[test]
    fn a_class_change_from_a_split_label_is_a_regression_only_when_it_grows_faster() {
        let row = |base: &str, new: &str| Row {
            kind: "benchmark",
            name: "mmap".into(),
            outcome: Outcome::ClassChanged,
            base_class: Some(base.into()),
            new_class: Some(new.into()),
            cost: None,
            quiet_cost: None,
            throughput: None,
            evidence: String::new(),
        };
        // Seen under load: two alike runs, O(log n)–O(n) then O(1).
        assert!(!is_regression(&row("O(log n)–O(n)", "O(1)")));
        assert!(is_regression(&row("O(1)", "O(log n)–O(n)")));
        assert!(is_regression(&row("O(log n)–O(n)", "O(n^2)")));
        assert!(!is_regression(&row("O(n)", "O(log n)")));
        assert!(is_regression(&row("O(1)", "O(n)")));
        assert!(!is_regression(&row("undecided", "O(n)")));
        // Flat, then flat yet surely rising: ranked by O(1), no regression.
        assert!(!is_regression(&row("O(1)", "O(1)–O(log n)")));
        assert!(is_regression(&row("O(1)–O(log n)", "O(n)")));
    }
}

#[cfg(test)]
mod emulation_tests {
    use super::*;
    use crate::fixtures::{series_mut, system};

    fn row<'r>(rows: &'r [Row], name: &str) -> &'r Row {
        rows.iter().find(|r| r.name == name).unwrap()
    }

    /// A load workload of one row at `rps` requests per second.
    fn with_workload(mut s: crate::System, rps: f64) -> crate::System {
        let w: results::WorkloadResult = serde_json::from_value(serde_json::json!({
            "name": "http", "what": "static files", "status": "ok", "message": null,
            "params": {}, "rows": [{"label": "1 process", "params": {}, "error": null,
            "load": {"requests": 1000, "seconds": 1.0, "requests_per_s": rps, "mb_per_s": 1.0,
              "body_bytes": 1000, "connections": 10,
              "latency_ns": {"p50": 1, "p90": 1, "p99": 1, "p999": 1, "max": 1, "mean": 1.0},
              "errors": {"connect": 0, "reset": 0, "timeout": 0, "status": 0, "short_body": 0},
              "retries": 0, "failed": 0, "statuses": {}}}]
        }))
        .unwrap();
        s.file.workloads.push(w);
        s
    }

    #[test]
    fn an_emulated_file_against_a_native_one_is_judged_by_class_only() {
        let systems = [
            with_workload(system("host", false, 1.0, false), 5000.0),
            with_workload(system("guest", true, 10.0, true), 500.0),
        ];
        let input = Input::new(&systems, &Default::default());
        let c = Comparison::of(&input, None);
        // Ten times slower everywhere, yet nothing regressed: no cost is compared.
        assert!(
            c.rows
                .iter()
                .all(|r| r.cost.is_none() && r.throughput.is_none())
        );
        assert!(!c.rows.iter().any(|r| r.outcome == Outcome::Regressed));
        let mmap = row(&c.rows, "mmap");
        assert_eq!(mmap.outcome, Outcome::Unchanged, "{}", mmap.evidence);
        assert_eq!(
            mmap.evidence,
            "the same growth class on both, O(1); costs not compared: guest was measured under emulation (TCG)"
        );
        // `socket` is undecided in the fixture: no class to compare.
        let socket = row(&c.rows, "socket");
        assert_eq!(
            socket.outcome,
            Outcome::NotComparable,
            "{}",
            socket.evidence
        );
        assert!(
            socket.evidence.starts_with(
                "no growth class on both (undecided in the base, undecided in the new one)"
            ),
            "{}",
            socket.evidence
        );
        let bind = row(&c.rows, "bind");
        assert_eq!(bind.outcome, Outcome::ClassChanged, "{}", bind.evidence);
        assert!(is_regression(bind));
        assert!(!bind.evidence.contains('%'), "{}", bind.evidence);
        let http = row(&c.rows, "http: 1 process");
        assert_eq!(http.outcome, Outcome::NotComparable);
        assert_eq!(
            http.evidence,
            "throughput not compared: guest was measured under emulation (TCG)"
        );
        assert!(
            c.warnings[0].starts_with("guest was measured under emulation (TCG) and host natively"),
            "{:?}",
            c.warnings
        );
        let mut md = Vec::new();
        write_markdown(&c, &mut md).unwrap();
        let md = String::from_utf8(md).unwrap();
        assert!(
            md.contains("> ⚠️ guest was measured under emulation"),
            "{md}"
        );
    }

    #[test]
    fn two_emulated_files_are_compared_by_cost_with_a_warning() {
        let systems = [
            with_workload(system("cloud", true, 1.0, false), 5000.0),
            with_workload(system("rt", true, 10.0, false), 500.0),
        ];
        let input = Input::new(&systems, &Default::default());
        let c = Comparison::of(&input, None);
        let socket = row(&c.rows, "socket");
        assert_eq!(socket.outcome, Outcome::Regressed, "{}", socket.evidence);
        assert!(socket.cost.is_some());
        assert_eq!(row(&c.rows, "http: 1 process").outcome, Outcome::Regressed);
        assert_eq!(
            c.warnings,
            [
                "cloud and rt were both measured under emulation (TCG): their cost ratios compare two emulations, not the speed of two machines"
            ]
        );
        // Native files: no such warning.
        let native = [
            system("a", false, 1.0, false),
            system("b", false, 1.0, false),
        ];
        let input = Input::new(&native, &Default::default());
        assert!(Comparison::of(&input, None).warnings.is_empty());
    }

    #[test]
    fn classes_judged_over_other_ranges_of_n_are_not_compared() {
        // The base measured to a fifth of the new one's n, bind flat there
        // and linear in the new one: no class change, the cost judged
        // over the n both measured.
        let mut short = system("a", false, 1.0, false);
        for b in &mut short.file.benchmarks {
            let top = b
                .runs
                .iter()
                .flat_map(|r| &r.samples)
                .map(|s| s[0])
                .max()
                .unwrap_or(0);
            for r in &mut b.runs {
                r.samples.retain(|s| s[0] * 5 < top);
            }
        }
        let systems = [short, system("b", false, 1.0, true)];
        let input = Input::new(&systems, &Default::default());
        let c = Comparison::of(&input, None);
        let bind = row(&c.rows, "bind");
        assert_ne!(bind.outcome, Outcome::ClassChanged, "{}", bind.evidence);
        assert!(
            bind.evidence.contains("not compared: judged up to n = ")
                && bind.evidence.contains("run both to the same --max"),
            "{}",
            bind.evidence
        );
        assert!(!is_regression(bind) || bind.outcome == Outcome::Regressed);
        // At the same range the change of class is one.
        let systems = [
            system("a", false, 1.0, false),
            system("b", false, 1.0, true),
        ];
        let input = Input::new(&systems, &Default::default());
        let c = Comparison::of(&input, None);
        assert_eq!(row(&c.rows, "bind").outcome, Outcome::ClassChanged);
    }

    #[test]
    fn what_broke_in_the_new_file_regressed_and_what_it_alone_has_is_said() {
        let mut new = with_workload(system("b", false, 1.0, false), 5000.0);
        let bind = series_mut(&mut new, "bind");
        bind.status = Status::Failed;
        bind.message = Some("bind() failed with EADDRINUSE".into());
        let mut extra = new.file.workloads[0].clone();
        extra.name = "mail".into();
        new.file.workloads.push(extra);
        new.file.complete = false;
        let systems = [with_workload(system("a", false, 1.0, false), 5000.0), new];
        let input = Input::new(&systems, &Default::default());
        let c = Comparison::of(&input, None);
        let bind = row(&c.rows, "bind");
        assert_eq!(bind.outcome, Outcome::Regressed);
        assert!(is_regression(bind));
        assert_eq!(
            bind.evidence,
            "ok in the base, failed in the new one: bind() failed with EADDRINUSE"
        );
        let mail = row(&c.rows, "mail: 1 process");
        assert_eq!(
            (mail.outcome, mail.evidence.as_str()),
            (Outcome::NotComparable, "only in the new one")
        );
        assert!(
            c.warnings
                .iter()
                .any(|w| w.starts_with("b is incomplete (its run was interrupted or died)")),
            "{:?}",
            c.warnings
        );
        // A workload that failed where it ran in the base regressed too.
        let mut new = with_workload(system("b", false, 1.0, false), 5000.0);
        new.file.workloads[0].status = Status::Failed;
        let systems = [with_workload(system("a", false, 1.0, false), 5000.0), new];
        let input = Input::new(&systems, &Default::default());
        let c = Comparison::of(&input, None);
        assert_eq!(row(&c.rows, "http: 1 process").outcome, Outcome::Regressed);
    }

    #[test]
    fn a_single_run_gives_no_interval_and_no_noise() {
        let one = |label: &str, scale: f64| {
            let mut s = system(label, false, scale, false);
            for b in &mut s.file.benchmarks {
                b.runs.truncate(1);
            }
            s
        };
        let systems = [one("a", 1.0), one("b", 2.0)];
        let input = Input::new(&systems, &Default::default());
        let c = Comparison::of(&input, None);
        let socket = row(&c.rows, "socket");
        assert!(
            socket
                .evidence
                .contains("(no interval from a single run: 1 and 1 runs)")
                && socket
                    .evidence
                    .ends_with("run-to-run noise unknown (one run) and unknown (one run)"),
            "{}",
            socket.evidence
        );
    }

    /// [`with_workload`] as the fs workload of `files` files.
    fn fs_of(s: crate::System, rps: f64, files: u64) -> crate::System {
        let mut s = with_workload(s, rps);
        let w = s.file.workloads.last_mut().unwrap();
        w.name = "fs".into();
        w.params.insert("files".into(), files.into());
        s
    }

    #[test]
    fn a_workload_run_at_other_sizes_is_not_compared_and_says_why() {
        let fast = || fs_of(system("a", false, 1.0, false), 5000.0, 500);
        let systems = [fast(), fs_of(system("b", false, 1.0, false), 500.0, 300)];
        let input = Input::new(&systems, &Default::default());
        let c = Comparison::of(&input, None);
        let fs = row(&c.rows, "fs: 1 process");
        assert_eq!(fs.outcome, Outcome::NotComparable, "{}", fs.evidence);
        assert_eq!(
            fs.evidence,
            "measured at other sizes (files 500 → 300): not compared"
        );
        assert!(!is_regression(fs));
        // The report says so once instead of "10× slower".
        let fs_said: Vec<&str> = input
            .differences
            .iter()
            .filter(|d| d.series == "fs")
            .map(|d| d.text.as_str())
            .collect();
        assert_eq!(
            fs_said,
            ["fs: b ran it at other sizes than a (files 500 → 300): its figures are not compared"]
        );
        // At the same size the same figures are a regression.
        let systems = [fast(), fs_of(system("b", false, 1.0, false), 500.0, 500)];
        let input = Input::new(&systems, &Default::default());
        let c = Comparison::of(&input, None);
        assert_eq!(row(&c.rows, "fs: 1 process").outcome, Outcome::Regressed);
        assert!(
            input
                .differences
                .iter()
                .any(|d| d.series == "fs" && d.text.contains("slower"))
        );
    }

    use crate::fixtures::counted;

    #[test]
    fn a_counted_guest_against_a_timed_one_is_judged_by_class_naming_both_clocks() {
        let systems = [
            counted(system("exact", true, 1.0, false), 0),
            system("timed", true, 10.0, false),
        ];
        let input = Input::new(&systems, &Default::default());
        let c = Comparison::of(&input, None);
        assert!(c.rows.iter().all(|r| r.cost.is_none()));
        let mmap = row(&c.rows, "mmap");
        assert_eq!(mmap.outcome, Outcome::Unchanged, "{}", mmap.evidence);
        assert!(
            mmap.evidence
                .ends_with("costs not compared: exact counted instructions and timed host time"),
            "{}",
            mmap.evidence
        );
        // Both counted, at different shifts: still classes only, said so.
        let shifts = [
            counted(system("a", true, 1.0, false), 0),
            counted(system("b", true, 1.0, false), 2),
        ];
        let input = Input::new(&shifts, &Default::default());
        let c = Comparison::of(&input, None);
        let mmap = row(&c.rows, "mmap");
        assert!(
            mmap.evidence
                .ends_with("a and b counted instructions at different icount shifts"),
            "{}",
            mmap.evidence
        );
        // Both counted at one shift: costs compared.
        let same = [
            counted(system("a", true, 1.0, false), 0),
            counted(system("b", true, 1.0, false), 0),
        ];
        let input = Input::new(&same, &Default::default());
        assert!(
            row(&Comparison::of(&input, None).rows, "mmap")
                .cost
                .is_some()
        );
    }

    /// `s` with mmap's runs a mixture, as fork's are in a counting guest:
    /// run r has `shares[r]` of its calls in a sharp mode of exactly
    /// `sharp` instructions, the rest in a broad one from `broad` up.
    fn mixture(mut s: crate::System, shares: &[f64], sharp: u64, broad: u64) -> crate::System {
        for (r, run) in crate::fixtures::series_mut(&mut s, "mmap")
            .runs
            .iter_mut()
            .enumerate()
        {
            let share = shares[r % shares.len()];
            for (i, x) in run.samples.iter_mut().enumerate() {
                let quiet = (((i * 7919) % 1000) as f64) < share * 1000.0;
                x[1] = if quiet {
                    sharp
                } else {
                    broad + (i as u64 * 31) % 500
                };
            }
        }
        s
    }

    #[test]
    fn two_counting_guests_are_judged_by_the_median_and_the_quiet_path_both() {
        let guest = |label: &str, shares: &[f64], sharp: u64, broad: u64| {
            counted(
                mixture(system(label, true, 1.0, false), shares, sharp, broad),
                0,
            )
        };
        let judge = |base: crate::System, new: crate::System| {
            let systems = [base, new];
            let input = Input::new(&systems, &Default::default());
            row(&Comparison::of(&input, None).rows, "mmap").clone()
        };
        // The share in the sharp mode moves the medians from run to run;
        // the quiet path stays exact: unchanged, and its threshold 0.5 %.
        let same = judge(
            guest("a", &[0.3, 0.6, 0.45], 10_000, 13_000),
            guest("b", &[0.55, 0.35, 0.7], 10_000, 13_000),
        );
        assert_eq!(same.outcome, Outcome::Unchanged, "{}", same.evidence);
        let q = same
            .quiet_cost
            .as_ref()
            .expect("a quiet path between counts");
        assert_eq!(q.quantile, compare::QUIET_QUANTILE);
        assert_eq!((q.noise, q.threshold), ([0.0, 0.0], 0.005), "{q:?}");
        assert_eq!(q.ratio.value, 1.0);
        let median = same.cost.as_ref().unwrap();
        assert_eq!(median.quantile, 0.5);
        // ... while the medians' interval is wide.
        assert!(median.ratio.hi - median.ratio.lo > 0.1, "{median:?}");
        assert!(
            same.evidence
                .contains("its quiet path (each run's 10th percentile) over n = "),
            "{}",
            same.evidence
        );
        // The sharp mode 1.5 % dearer: within the medians' noise, but the
        // quiet path sees it.
        let sharp = judge(
            guest("a", &[0.3, 0.6, 0.45], 10_000, 13_000),
            guest("b", &[0.55, 0.35, 0.7], 10_150, 13_000),
        );
        assert_eq!(sharp.outcome, Outcome::Regressed, "{}", sharp.evidence);
        assert_eq!(judge_cost(sharp.cost.as_ref().unwrap()), Outcome::Unchanged);
        assert!((sharp.quiet_cost.unwrap().ratio.value - 1.015).abs() < 1e-9);
        // Only the slow calls twice as dear: the quiet path is the same,
        // the medians are not, and that is a regression too.
        let slow = judge(
            guest("a", &[0.3, 0.6, 0.45], 10_000, 13_000),
            guest("b", &[0.3, 0.6, 0.45], 10_000, 26_000),
        );
        assert_eq!(slow.outcome, Outcome::Regressed, "{}", slow.evidence);
        assert_eq!(
            judge_cost(slow.quiet_cost.as_ref().unwrap()),
            Outcome::Unchanged
        );
        // Timed files have no quiet path.
        let timed = judge(
            mixture(system("a", false, 1.0, false), &[0.3], 10_000, 13_000),
            mixture(system("b", false, 1.0, false), &[0.3], 10_000, 13_000),
        );
        assert!(timed.quiet_cost.is_none() && timed.cost.is_some());
    }
}
