//! Reports: verdicts for people (terminal, Markdown) and programs (CSV),
//! and raw-sample export. Every format implements [`Report`] over the same
//! [`Input`], so a new format (HTML) is one more writer.

#![deny(missing_docs)]

pub mod chart;
pub mod compare;
mod csv_out;
pub mod csvin;
pub mod curve;
pub mod diff;
mod error;
pub mod export;
pub mod flame;
pub mod history;
pub mod html;
mod json;
mod markdown;
pub mod monitor;
pub mod pairs;
pub mod settings;
pub mod stored;
pub mod sysinfo;
pub mod table;
mod terminal;
pub mod wrap;

pub use csv_out::CsvReport;
pub use error::{Error, Result};
pub use html::HtmlReport;
pub use json::JsonReport;
pub use markdown::MarkdownReport;
pub use terminal::TerminalReport;

use analysis::{self, Label, Options, Sample, Verdict};
use results::{BenchResult, Cap, ResultFile, Status, WorkloadRow};
use std::io::Write;
use units::{fmt_n, fmt_ns};

/// One system's (or tuning's) result file with its label.
#[derive(Debug, Clone)]
pub struct System {
    /// Label shown in reports.
    pub label: String,
    /// The file's contents.
    pub file: ResultFile,
}

/// One series of one system, judged.
pub struct Entry<'a> {
    /// The system's label.
    pub system: &'a str,
    /// Series name (`socket`, `connect[epoll]`).
    pub series: String,
    /// The n each run aimed at.
    pub n: u64,
    /// How the benchmark ended (`None` for external data).
    pub status: Option<Status>,
    /// Limits that capped n.
    pub caps: &'a [Cap],
    /// The verdict, or why there is none.
    pub verdict: Result<Verdict, String>,
    /// The recorded series (`None` for external data).
    pub bench: Option<&'a BenchResult>,
    /// Whether its system was measured under emulation: its costs are
    /// not the speed of any machine ([`EMULATED_NOTE`]).
    pub emulated: bool,
    /// What its costs count: time, or instructions ([`cost_of`]).
    pub cost: units::Cost,
    /// Its maximum per n, for a series that records why that matters
    /// (`max_matters`); found with the verdict, when the input is read.
    pub maxima: Option<Maxima>,
}

/// The slowest sample of one bucket of n ([`Maxima`]).
#[derive(Debug, Clone, PartialEq)]
pub struct BucketMax {
    /// Smallest n in the bucket.
    pub n_lo: f64,
    /// Largest n in the bucket.
    pub n_hi: f64,
    /// The bucket's median cost, ns.
    pub median: f64,
    /// The n of its slowest sample.
    pub at: f64,
    /// The slowest sample's cost, ns.
    pub max: f64,
}

/// The maximum per n of a series whose worst case matters as much as its
/// median (`socket-threads`: the one call that grows a table): the
/// slowest sample of each bucket of its verdict, every sample kept (runs
/// and re-timings) counted.
#[derive(Debug, Clone, PartialEq)]
pub struct Maxima {
    /// Why it matters, as the series recorded it.
    pub why: String,
    /// One per bucket of the verdict, in order of n (buckets without a
    /// sample left out).
    pub buckets: Vec<BucketMax>,
    /// What the costs count.
    pub cost: units::Cost,
}

impl Maxima {
    /// The maxima of `b` in the buckets of its verdict `v`; `None` when
    /// `b` does not record that its maximum matters.
    pub fn of(b: &BenchResult, v: &Verdict, cost: units::Cost) -> Option<Maxima> {
        let why = b.max_matters.clone()?;
        let mut buckets: Vec<Option<BucketMax>> = vec![None; v.buckets.len()];
        let every = b
            .runs
            .iter()
            .flat_map(|r| r.samples.iter().chain(&r.recheck));
        for &[n, ns] in every {
            let (n, ns) = (n as f64, ns as f64);
            let i = v.buckets.partition_point(|k| k.n_hi < n);
            let Some(k) = v.buckets.get(i).filter(|k| k.n_lo <= n) else {
                continue;
            };
            let m = buckets[i].get_or_insert(BucketMax {
                n_lo: k.n_lo,
                n_hi: k.n_hi,
                median: k.median,
                at: n,
                max: ns,
            });
            if ns > m.max {
                (m.at, m.max) = (n, ns);
            }
        }
        Some(Maxima {
            why,
            buckets: buckets.into_iter().flatten().collect(),
            cost,
        })
    }

    /// The slowest sample of all.
    pub fn slowest(&self) -> Option<&BucketMax> {
        self.buckets.iter().max_by(|a, b| a.max.total_cmp(&b.max))
    }

    /// `(n, ns)` of each bucket's slowest sample, for a chart's line.
    pub fn points(&self) -> Vec<(f64, f64)> {
        self.buckets.iter().map(|m| (m.at, m.max)).collect()
    }

    /// In words: why, then each bucket's n and maximum, then the slowest
    /// sample against the median at its n.
    pub fn words(&self) -> String {
        let per: Vec<String> = self
            .buckets
            .iter()
            .map(|m| format!("{}: {}", m.range(), self.cost.fmt(m.max)))
            .collect();
        let slowest = self.slowest().map_or(String::new(), |m| {
            format!(
                ". Slowest: {} at n = {}, ×{:.0} the median there",
                self.cost.fmt(m.max),
                fmt_n(m.at),
                m.max / m.median.max(1.0)
            )
        });
        format!("max per n ({}) — {}{slowest}", self.why, per.join("; "))
    }

    /// In fewer words, for the terminal: the typical maximum (the median
    /// of the buckets' maxima), then the [`MAX_SHOWN`] largest maxima in
    /// order of n. On a busy machine every bucket has a slow sample or
    /// two; what a series like `socket-threads` is for stands out above
    /// them, at the n where it happens.
    pub fn summary(&self) -> String {
        let mut maxima: Vec<f64> = self.buckets.iter().map(|m| m.max).collect();
        let typical = analysis::buckets::median_of(&mut maxima);
        let mut largest: Vec<&BucketMax> = self.buckets.iter().collect();
        largest.sort_by(|a, b| b.max.total_cmp(&a.max));
        largest.truncate(MAX_SHOWN);
        largest.sort_by(|a, b| a.n_lo.total_cmp(&b.n_lo));
        let named: Vec<String> = largest
            .iter()
            .map(|m| format!("{} at n = {}", self.cost.fmt(m.max), m.range()))
            .collect();
        let total = self.buckets.len();
        let which = if largest.len() < total {
            format!(
                "the {} largest of its {total} buckets' maxima",
                largest.len()
            )
        } else {
            format!("its {total} buckets' maxima")
        };
        format!(
            "max per n ({}): typically {}; {which}, by n: {} (each bucket's: --format html)",
            self.why,
            self.cost.fmt(typical),
            named.join(", ")
        )
    }
}

/// How many bucket maxima the terminal's [`Maxima::summary`] names.
pub const MAX_SHOWN: usize = 8;

impl BucketMax {
    /// Its range of n in words (`57–67`, or `12` when it holds one n).
    pub fn range(&self) -> String {
        if self.n_lo == self.n_hi {
            fmt_n(self.n_lo)
        } else {
            format!("{}–{}", fmt_n(self.n_lo), fmt_n(self.n_hi))
        }
    }
}

/// The mark beside every figure of an emulated system.
pub const EMULATED_MARK: &str = "†";

/// The footnote of [`EMULATED_MARK`].
pub const EMULATED_NOTE: &str =
    "measured under emulation (TCG): not the speed of any machine; its growth class still holds";

/// The footnote of [`EMULATED_MARK`] for a guest that counted
/// instructions.
pub const COUNTED_NOTE: &str = "instructions counted under emulation (TCG): the same on every run, not time (caches, memory and contention between CPUs cost nothing in them); the growth class still holds";

/// The footnote under figures measured as `measured` (emulated, cost),
/// mark included: for time, for instructions, or both; `None` when none
/// was emulated.
pub fn emulated_note(measured: impl IntoIterator<Item = Measured>) -> Option<String> {
    let (mut counted, mut timed) = (false, false);
    for (emulated, cost) in measured {
        counted |= emulated && cost.counts_instructions();
        timed |= emulated && !cost.counts_instructions();
    }
    let note = match (counted, timed) {
        (false, false) => return None,
        (true, false) => COUNTED_NOTE.to_string(),
        (false, true) => EMULATED_NOTE.to_string(),
        (true, true) => format!("{EMULATED_NOTE}; figures in instructions: {COUNTED_NOTE}"),
    };
    Some(format!("{EMULATED_MARK} {note}"))
}

/// What the figures of two systems can be compared by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// Both native (or not recorded: files before schema 7): costs and
    /// classes.
    Native,
    /// One emulated, one native, or two emulated whose costs count
    /// different things (instructions, time): growth classes only.
    Mixed,
    /// Both emulated, both in host time: costs too, with a warning.
    Emulated,
    /// Both emulated counting instructions: costs too, exactly.
    Counted,
}

/// How a system was measured, as a comparison needs it: whether under
/// emulation, and what its costs count.
pub type Measured = (bool, units::Cost);

/// How system `s` was measured.
pub fn measured(s: &results::SystemInfo) -> Measured {
    (s.emulated(), cost_of(s))
}

/// How two emulated systems' clocks differ, in words: `a counted
/// instructions and b host time`, or both counted at different shifts.
pub fn clocks_apart(a: &str, ca: units::Cost, b: &str, cb: units::Cost) -> String {
    match (ca.counts_instructions(), cb.counts_instructions()) {
        (true, true) => format!("{a} and {b} counted instructions at different icount shifts"),
        (true, false) => format!("{a} counted instructions and {b} host time"),
        _ => format!("{b} counted instructions and {a} host time"),
    }
}

impl Basis {
    /// The basis of a system measured as `a` against one measured as `b`.
    pub fn of(a: Measured, b: Measured) -> Basis {
        match (a, b) {
            ((false, _), (false, _)) => Basis::Native,
            ((true, x), (true, y)) if x == y && x.counts_instructions() => Basis::Counted,
            ((true, x), (true, y)) if x == y => Basis::Emulated,
            _ => Basis::Mixed,
        }
    }

    /// Why `base` (measured as `a`) and `other` (as `b`) compare as they
    /// do, in a sentence; `None` between native systems.
    pub fn note(self, base: &str, other: &str, a: Measured, b: Measured) -> Option<String> {
        match self {
            Basis::Native => None,
            Basis::Mixed if a.0 && b.0 => Some(format!(
                "{}, both under emulation (TCG): only their growth classes are compared, no costs",
                clocks_apart(base, a.1, other, b.1)
            )),
            Basis::Mixed => {
                let (emu, native) = if a.0 { (base, other) } else { (other, base) };
                Some(format!(
                    "{emu} was measured under emulation (TCG) and {native} natively: only their growth classes are compared, no costs or throughput (an emulated CPU's times are not the speed of any machine)"
                ))
            }
            Basis::Emulated => Some(format!(
                "{base} and {other} were both measured under emulation (TCG): their cost ratios compare two emulations, not the speed of two machines"
            )),
            Basis::Counted => Some(format!(
                "{base} and {other} both counted instructions under emulation (QEMU's -icount): their costs compare as exact instruction counts, blind to caches, memory and contention between CPUs; not the speed of two machines"
            )),
        }
    }
}

/// What the costs of system `s` count: instructions for a guest whose
/// clock QEMU advanced by them, else time.
pub fn cost_of(s: &results::SystemInfo) -> units::Cost {
    match &s.virtualization {
        Some(v) if v.counts_instructions() => units::Cost::Instructions {
            shift: v.icount_shift.unwrap_or(0),
        },
        _ => units::Cost::Time,
    }
}

/// A system's warning that it was measured under emulation, with the
/// reason recorded; `None` for a system that was not.
pub fn emulation_warning(s: &System) -> Option<String> {
    let v = s
        .file
        .system
        .virtualization
        .as_ref()
        .filter(|v| v.emulated)?;
    let reason = v
        .reason
        .as_deref()
        .map_or(String::new(), |r| format!(", {r}"));
    if v.counts_instructions() {
        let per = 1u64 << v.icount_shift.unwrap_or(0);
        let per = if per == 1 {
            String::new()
        } else {
            format!(", {per} per recorded nanosecond")
        };
        return Some(format!(
            "measured under emulation ({}{reason}) counting instructions (QEMU's -icount{per}): its costs are instructions the guest executed, the same on every run and host but blind to caches, memory and contention between CPUs; they compare with other instruction-counted systems, never with a machine's time; its growth classes still hold",
            v.kind
        ));
    }
    Some(format!(
        "measured under emulation ({}{reason}): its times are not the speed of any machine; its growth classes still hold",
        v.kind
    ))
}

/// The emulation warnings of `systems`, each said once: the systems that
/// share a warning named together (`a, b and c`), with it.
pub fn emulation_warnings(systems: &[System]) -> Vec<(String, String)> {
    let mut out: Vec<(Vec<&str>, String)> = Vec::new();
    for s in systems {
        let Some(w) = emulation_warning(s) else {
            continue;
        };
        match out.iter_mut().find(|(_, x)| *x == w) {
            Some((names, _)) => names.push(&s.label),
            None => out.push((vec![&s.label], w)),
        }
    }
    out.into_iter()
        .map(|(names, w)| (and_list(&names), w))
        .collect()
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => one.to_string(),
        [head @ .., last] => format!("{} and {last}", head.join(", ")),
    }
}

/// Everything a report shows.
pub struct Input<'a> {
    /// The systems, in the order given (empty for external data).
    pub systems: &'a [System],
    /// Every series of every system, in file order.
    pub entries: Vec<Entry<'a>>,
    /// Problems with the input that did not stop the report (a file that
    /// could not be read), shown in it.
    pub notices: Vec<String>,
    /// Every workload of every system with its sweeps judged
    /// ([`Input::work_tables`]).
    work: Vec<WorkTable<'a>>,
    /// Whether each system, in order, was measured under emulation.
    pub emulated: Vec<bool>,
    /// Every difference between the first system and each other one
    /// ([`diff::differences`]).
    pub differences: Vec<diff::Difference>,
    /// What the differences rest on where emulation limits them: one
    /// sentence per other system emulated or compared with an emulated
    /// first one ([`Basis::note`]).
    pub basis: Vec<String>,
    /// The recorded settings whose values differ between the systems
    /// ([`settings::differing`]).
    pub settings: Vec<settings::SettingRow>,
    /// The kernel build options that differ between the systems that
    /// recorded their configuration ([`settings::config_differences`]).
    pub kernel_config: Option<settings::ConfigDiff>,
    /// Each variant against the series it is a variant of, per system
    /// ([`pairs::pairs`]).
    pub pairs: Vec<pairs::Pair>,
}

pub use analysis::recorded::{judge, overhead_of, runs_of, samples_of};

impl<'a> Input<'a> {
    /// Series names in order of first appearance.
    pub fn series_names(&self) -> Vec<&str> {
        let mut order: Vec<&str> = Vec::new();
        for e in &self.entries {
            if !order.contains(&e.series.as_str()) {
                order.push(&e.series);
            }
        }
        order
    }

    /// The entries of one series, in system order.
    pub fn of_series<'s>(&'s self, series: &'s str) -> impl Iterator<Item = &'s Entry<'a>> + 's {
        self.entries.iter().filter(move |e| e.series == series)
    }

    /// Judges every series of every system.
    pub fn new(systems: &'a [System], opts: &Options) -> Input<'a> {
        let benches: Vec<&BenchResult> = systems.iter().flat_map(|s| &s.file.benchmarks).collect();
        let judged = analysis::recorded::judge_all(&benches, opts);
        let entries: Vec<Entry> = systems
            .iter()
            .flat_map(|s| s.file.benchmarks.iter().map(move |b| (s, b)))
            .zip(judged.verdicts)
            .map(|((s, b), verdict)| Entry {
                system: &s.label,
                series: b.series.clone(),
                n: b.params.n,
                status: Some(b.status),
                caps: &b.caps,
                maxima: verdict
                    .as_ref()
                    .ok()
                    .and_then(|v| Maxima::of(b, v, cost_of(&s.file.system))),
                verdict,
                bench: Some(b),
                emulated: s.file.system.emulated(),
                cost: cost_of(&s.file.system),
            })
            .collect();
        // A kept verdict that disagrees with its samples is never shown:
        // judged again, and said so.
        let mut notices: Vec<String> = judged
            .disagreed
            .iter()
            .map(|(i, why)| {
                let (s, b) = systems
                    .iter()
                    .flat_map(|s| s.file.benchmarks.iter().map(move |b| (s, b)))
                    .nth(*i)
                    .expect("an index of the series judged");
                format!(
                    "{}: the verdict kept for {} disagrees with its samples ({why}); it was judged again from them",
                    s.label, b.series
                )
            })
            .collect();
        // A series twice in one file (files put together by hand) is
        // shown twice, and said so.
        for s in systems {
            let mut seen: Vec<&str> = Vec::new();
            for b in &s.file.benchmarks {
                if seen.contains(&b.series.as_str()) {
                    let note = format!(
                        "{}: the series {} appears more than once in this file; each is shown",
                        s.label, b.series
                    );
                    if !notices.contains(&note) {
                        notices.push(note);
                    }
                } else {
                    seen.push(&b.series);
                }
            }
        }
        let emulated: Vec<bool> = systems.iter().map(|s| s.file.system.emulated()).collect();
        // Two systems emulated alike are said once, by the emulation
        // warnings; a pair that compares by classes only is said here.
        let basis = match systems.first() {
            Some(b) => systems[1..]
                .iter()
                .filter_map(|s| {
                    let (x, y) = (measured(&b.file.system), measured(&s.file.system));
                    let basis = Basis::of(x, y);
                    (basis == Basis::Mixed)
                        .then(|| basis.note(&b.label, &s.label, x, y))
                        .flatten()
                })
                .collect(),
            None => Vec::new(),
        };
        let pairs = pairs::pairs(&entries);
        notices.extend(pairs::unpaired(&entries));
        let mut input = Input {
            systems,
            entries,
            pairs,
            notices,
            work: work_tables(systems),
            emulated,
            differences: Vec::new(),
            basis,
            settings: settings::differing(systems),
            kernel_config: settings::config_differences(systems),
        };
        input.differences = diff::differences(&input);
        input
    }

    /// Whether system `label` was measured under emulation.
    pub fn is_emulated(&self, label: &str) -> bool {
        self.systems
            .iter()
            .zip(&self.emulated)
            .any(|(s, &e)| e && s.label == label)
    }

    /// How system `label` was measured (native and in time when there is
    /// no such system: external data).
    pub fn measured_of(&self, label: &str) -> Measured {
        self.systems
            .iter()
            .find(|s| s.label == label)
            .map_or((false, units::Cost::Time), |s| measured(&s.file.system))
    }

    /// External series (from `analyze`), each judged on its own.
    pub fn external(series: &[(String, &[Sample])], opts: &Options) -> Input<'static> {
        Input {
            systems: &[],
            notices: Vec::new(),
            work: Vec::new(),
            emulated: Vec::new(),
            differences: Vec::new(),
            basis: Vec::new(),
            settings: Vec::new(),
            kernel_config: None,
            pairs: Vec::new(),
            entries: series
                .iter()
                .map(|(name, samples)| Entry {
                    system: "",
                    series: name.clone(),
                    n: samples.iter().map(|s| s.n).fold(0.0, f64::max) as u64,
                    status: None,
                    caps: &[],
                    verdict: analysis::analyze(samples, None, opts).map_err(|e| e.to_string()),
                    bench: None,
                    emulated: false,
                    cost: units::Cost::Time,
                    maxima: None,
                })
                .collect(),
        }
    }
}

/// One workload across every system: its rows, each system's measurement
/// of a row next to the others.
pub struct WorkTable<'a> {
    /// Workload name (`http-ipstack`).
    pub name: &'a str,
    /// What it does.
    pub what: &'a str,
    /// Column heads after the row and system: [`WORK_COLUMNS`] for load
    /// rows, [`PHASE_COLUMNS`] when the workload's rows are timed phases,
    /// [`SWEEP_ROW_COLUMNS`] when they are sweeps.
    pub columns: &'static [&'static str],
    /// Row label, then system, then target order.
    pub lines: Vec<WorkLine<'a>>,
    /// `system: message` for systems where the workload did not end well.
    pub messages: Vec<String>,
    /// What each system did while the workload ran: `(system, monitor)`.
    pub monitors: Vec<(&'a str, &'a results::Monitor)>,
}

/// One row of one system (on one target).
pub struct WorkLine<'a> {
    /// The row's label (`4 processes, IPv6`, `unpack`).
    pub label: &'a str,
    /// The system's label.
    pub system: &'a str,
    /// Where the row ran (`ext4`, `xfs`), for workloads run on several
    /// filesystems.
    pub target: Option<&'a str>,
    /// The measurement (`None` where this system lacks the row).
    pub row: Option<&'a WorkloadRow>,
    /// The verdict of its sweep, judged once when the input was read.
    pub verdict: Option<analysis::sweep::SweepVerdict>,
    /// Whether its system was measured under emulation.
    pub emulated: bool,
}

impl WorkLine<'_> {
    /// Its sweep with the sweep's verdict, when it has one.
    pub fn sweep(&self) -> Option<(&results::SweepStats, &analysis::sweep::SweepVerdict)> {
        Some((self.row?.sweep.as_ref()?, self.verdict.as_ref()?))
    }
}

/// Column heads of a load table after the row and system.
pub const WORK_COLUMNS: [&str; 6] = ["req/s", "MB/s", "p50", "p99", "max", "errors"];

/// Column heads of a table of sweeps after the row and system: the peak
/// figure, the level (or range) it is reached at, the efficiency there
/// against the baseline (per unit, or the figure's share for a size
/// sweep), the decline after it, the knee, and errors.
pub const SWEEP_ROW_COLUMNS: [&str; 6] = ["peak", "at", "vs base", "decline", "knee", "errors"];

/// Column heads of a phase table after the row and system: wall time, items
/// per second, MB/s, the sync after the phase, CPU time (user/system) of
/// scalebench, errors.
pub const PHASE_COLUMNS: [&str; 6] = ["time", "rate", "MB/s", "sync", "CPU usr/sys", "errors"];

pub use units::fmt_secs;

/// Errors of a load run in words (`0`, `12 (3 failed)`).
fn load_errors(l: &results::LoadStats) -> String {
    let e = &l.errors;
    let errors = e.connect + e.reset + e.timeout + e.status + e.short_body + e.port_exhausted;
    if l.failed > 0 {
        format!("{errors} ({} failed)", l.failed)
    } else {
        errors.to_string()
    }
}

impl WorkTable<'_> {
    /// The head of the column that says who measured a line.
    pub fn who_head(&self, many_systems: bool) -> &'static str {
        match (self.lines.iter().any(|l| l.target.is_some()), many_systems) {
            (true, true) => "system · target",
            (true, false) => "target",
            (false, _) => "system",
        }
    }
}

impl WorkLine<'_> {
    /// Who measured the line: the system, with the target when there is one
    /// (`host · ext4`); with a single system, the target alone.
    /// An emulated system's line is marked ([`EMULATED_MARK`]).
    pub fn who(&self, many_systems: bool) -> String {
        let who = match (self.target, many_systems) {
            (Some(t), true) => format!("{} · {t}", self.system),
            (Some(t), false) => t.to_string(),
            (None, _) => self.system.to_string(),
        };
        if self.emulated {
            who + EMULATED_MARK
        } else {
            who
        }
    }

    /// The cells under the table's columns; the error in words instead when
    /// the row could not run.
    pub fn cells(&self) -> Result<Vec<String>, String> {
        let Some(r) = self.row else {
            return Err("not run".into());
        };
        if let Some(p) = &r.phase {
            let unit = match p.unit.as_str() {
                "requests" => "req/s".to_string(),
                u => format!("{u}/s"),
            };
            return Ok(vec![
                fmt_secs(p.seconds),
                format!("{:.0} {unit}", p.rate()),
                format!("{:.1}", p.mb_per_s()),
                p.sync_seconds.map_or("—".into(), fmt_secs),
                format!("{:.1}/{:.1} s", p.cpu_user_s, p.cpu_system_s),
                match (&r.load, &r.error) {
                    (_, Some(e)) => e.clone(),
                    (Some(l), None) => load_errors(l),
                    (None, None) => "0".into(),
                },
            ]);
        }
        if let Some((sw, v)) = self.sweep() {
            // The verdict's figures (under SWEEP_ROW_COLUMNS); the words
            // and every level follow the table (see `sweep_levels`).
            let Some(p) = &v.peak else {
                return Err(v.words.clone());
            };
            let errors: u64 = sw
                .levels
                .iter()
                .flat_map(|l| &l.samples)
                .map(|s| s.errors)
                .sum();
            let failed = sw.levels.iter().filter(|l| l.error.is_some()).count();
            let eff = v
                .levels
                .iter()
                .find(|l| l.level == p.level)
                .and_then(|l| l.efficiency);
            return Ok(vec![
                format!("{} {}", fmt_n(p.value.round()), sw.unit),
                if p.range.0 == p.range.1 {
                    analysis::sweep::fmt_level(p.level)
                } else {
                    format!(
                        "{}–{}",
                        analysis::sweep::fmt_level(p.range.0),
                        analysis::sweep::fmt_level(p.range.1)
                    )
                },
                eff.map_or("—".into(), |e| format!("{:.0} %", e * 100.0)),
                v.decline.map_or("—".into(), |(l, f)| {
                    format!(
                        "{}% @{}",
                        analysis::sweep::signed_percent(f),
                        analysis::sweep::fmt_level(l)
                    )
                }),
                v.knee.map_or("—".into(), analysis::sweep::fmt_level),
                if failed > 0 {
                    format!("{errors} ({failed} levels failed)")
                } else {
                    errors.to_string()
                },
            ]);
        }
        let Some(l) = &r.load else {
            return Err(r.error.clone().unwrap_or_else(|| "no measurement".into()));
        };
        Ok(vec![
            format!("{:.0}", l.requests_per_s),
            format!("{:.1}", l.mb_per_s),
            fmt_ns(l.latency_ns.p50 as f64),
            fmt_ns(l.latency_ns.p99 as f64),
            fmt_ns(l.latency_ns.max as f64),
            load_errors(l),
        ])
    }
}

/// The length of a level's samples: the sweep's sample length, or where
/// they took their own time (a fixed delivery each, as the mail
/// workload's `--mail-messages`) the range of their lengths.
fn sample_lengths(samples: &[results::SweepSample], sample_s: f64) -> String {
    let lo = samples
        .iter()
        .map(|x| x.seconds)
        .fold(f64::INFINITY, f64::min);
    let hi = samples.iter().map(|x| x.seconds).fold(0.0, f64::max);
    let off = |x: f64| (x - sample_s).abs() > 0.05 * sample_s;
    if samples.is_empty() || !(off(lo) || off(hi)) {
        fmt_secs(sample_s)
    } else if fmt_secs(lo) == fmt_secs(hi) {
        fmt_secs(lo)
    } else {
        format!("{}–{}", fmt_secs(lo), fmt_secs(hi))
    }
}

/// Column heads of a sweep's level table.
pub const SWEEP_COLUMNS: [&str; 6] = [
    "level", "figure", "per-unit", "CPU busy", "busy MHz", "samples",
];

/// A sweep's levels in ascending order, one line of [`SWEEP_COLUMNS`]
/// cells each: the level, its figure, per-unit efficiency against the
/// baseline, CPU busy share and busy clock, and the range of its samples
/// (or why it failed).
pub fn sweep_levels(
    s: &results::SweepStats,
    v: &analysis::sweep::SweepVerdict,
) -> Vec<[String; 6]> {
    v.levels
        .iter()
        .map(|f| {
            let l = s.levels.iter().find(|l| l.level == f.level);
            let samples = l.map(|l| &l.samples[..]).unwrap_or(&[]);
            let lo = samples
                .iter()
                .map(|x| x.value)
                .fold(f64::INFINITY, f64::min);
            let hi = samples.iter().map(|x| x.value).fold(0.0, f64::max);
            [
                analysis::sweep::fmt_level(f.level),
                f.value.map_or("—".into(), |x| fmt_n(x.round())),
                f.efficiency.map_or("—".into(), |e| format!("{e:.2}")),
                l.and_then(|l| l.cpu_busy)
                    .map_or("—".into(), |b| format!("{:.0} %", b * 100.0)),
                l.and_then(|l| l.busy_mhz)
                    .map_or("—".into(), |m| format!("{m:.0}")),
                match l.and_then(|l| l.error.as_deref()) {
                    Some(e) => format!("failed: {e}"),
                    None if samples.is_empty() => "none".into(),
                    None => format!(
                        "{} × {}: {}–{}",
                        samples.len(),
                        sample_lengths(samples, s.sample_s),
                        fmt_n(lo.round()),
                        fmt_n(hi.round())
                    ),
                },
            ]
        })
        .collect()
}

/// A sweep's failures as a table: the column heads (`failures`, then
/// every level) and one row per kind of failure, most frequent first, its
/// count at each level (`—` for none); a single cell saying none failed
/// when the workload counts failures and none did; `None` when it does
/// not count them.
pub fn sweep_failures(s: &results::SweepStats) -> Option<Vec<Vec<String>>> {
    let mut kinds: std::collections::BTreeMap<&str, u64> = Default::default();
    for l in &s.levels {
        for (k, n) in &l.failures {
            *kinds.entry(k).or_default() += n;
        }
    }
    if kinds.is_empty() {
        return s.counts_failures.then(|| {
            vec![vec![format!(
                "failures by {}: none at any level",
                s.variable
            )]]
        });
    }
    let mut order: Vec<(&str, u64)> = kinds.into_iter().collect();
    order.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let mut levels: Vec<&results::SweepLevel> = s.levels.iter().collect();
    levels.sort_by(|a, b| a.level.total_cmp(&b.level));
    let mut head = vec![format!("failures by {}", s.variable)];
    head.extend(levels.iter().map(|l| analysis::sweep::fmt_level(l.level)));
    let mut rows = vec![head];
    for (kind, _) in order {
        let mut r = vec![kind.to_string()];
        r.extend(levels.iter().map(|l| {
            l.failures
                .get(kind)
                .map_or("—".into(), |&n| fmt_n(n as f64))
        }));
        rows.push(r);
    }
    Some(rows)
}

/// One line of a [`SweepChart`]: who measured it (system, and target where
/// there is one), the system's label, its levels' figures and every
/// sample.
pub struct SweepLine<'a> {
    /// The system (and target) in words, for the legend.
    pub who: String,
    /// The system's label (its colour).
    pub system: &'a str,
    /// `(level, figure)` in ascending level: the line.
    pub points: Vec<(f64, f64)>,
    /// Every sample of every level, each level's in the order taken
    /// (none on charts of a figure the samples do not have).
    pub dots: Vec<curve::Dot>,
    /// Another figure scaled onto this chart, drawn dashed (load ×
    /// frequency on the throughput chart, as DragonFly's pgbench figure
    /// drew it).
    pub overlay: bool,
}

/// One chart of a sweep: a figure against the level, one line per system
/// (and target) that swept the row.
pub struct SweepChart<'a> {
    /// Short name for ids and file names (`figure`, `per-unit`, `load-ghz`).
    pub key: &'static str,
    /// The chart's title.
    pub title: String,
    /// The x axis: the variable.
    pub x_label: String,
    /// The y axis.
    pub y_label: String,
    /// What the dots and the line are, in a line under the title.
    pub note: String,
    /// One line per system (and target) with a point.
    pub lines: Vec<SweepLine<'a>>,
}

impl SweepChart<'_> {
    /// The chart as an `<svg>` element, each line in the colour `colour`
    /// gives its index and system.
    pub fn svg(&self, id: &str, colour: impl Fn(usize, &str) -> &'static str) -> String {
        let curves: Vec<curve::Curve> = self
            .lines
            .iter()
            .enumerate()
            .map(|(k, l)| curve::Curve {
                label: &l.who,
                colour: colour(k, l.system),
                points: l.points.clone(),
                dots: l.dots.clone(),
                dashed: l.overlay,
            })
            .collect();
        curve::curve_svg(
            id,
            &self.title,
            (&self.x_label, &self.y_label),
            &self.note,
            &curves,
        )
    }
}

/// What a chart draws for a level: its figure, from the verdict's level.
type Figure<'p> = &'p dyn Fn(&results::SweepStats, &analysis::sweep::LevelFigure) -> Option<f64>;

/// What a chart draws for a sample: a figure from its level and its
/// value (`None`: not drawn).
type Each<'p> =
    &'p dyn Fn(&results::SweepStats, &analysis::sweep::SweepVerdict, f64, f64) -> Option<f64>;

/// The lines of one sweep chart: per sweep, each level's figure as
/// `figure` gives it, and, with `each`, a dot for every sample of every
/// recorded level (a level recorded twice has both entries' samples),
/// counted in the figure when among its entry's last `figure_of_last`.
fn sweep_lines<'a>(
    sweeps: &[(
        String,
        &'a str,
        &'a results::SweepStats,
        &analysis::sweep::SweepVerdict,
    )],
    figure: Figure,
    each: Option<Each>,
) -> Vec<SweepLine<'a>> {
    sweeps
        .iter()
        .map(|(who, system, s, v)| {
            let points = v
                .levels
                .iter()
                .filter_map(|l| Some((l.level, figure(s, l)?)))
                .collect();
            let mut dots = Vec::new();
            let recorded = if each.is_some() { &s.levels[..] } else { &[] };
            for l in recorded {
                let first_counted = l
                    .samples
                    .len()
                    .saturating_sub(s.figure_of_last.max(1) as usize);
                for (i, x) in l.samples.iter().enumerate() {
                    if let Some(y) = each.and_then(|f| f(s, v, l.level, x.value)) {
                        dots.push(curve::Dot {
                            x: l.level,
                            y,
                            counted: i >= first_counted,
                        });
                    }
                }
            }
            SweepLine {
                who: who.clone(),
                system,
                points,
                dots,
                overlay: false,
            }
        })
        .filter(|l| !l.points.is_empty() || !l.dots.is_empty())
        .collect()
}

/// The recorded level `l` of `s`.
fn sweep_level(s: &results::SweepStats, l: f64) -> Option<&results::SweepLevel> {
    s.levels.iter().find(|x| x.level == l)
}

/// The note of a chart that draws samples: how many, which are not part
/// of their level's figure, and what the line is.
fn samples_note(lines: &[SweepLine], first: &results::SweepStats, line: &str) -> String {
    let n: usize = lines.iter().map(|l| l.dots.len()).sum();
    if n == 0 {
        return format!("the line: {line} (the file has no samples)");
    }
    let last = first.figure_of_last.max(1);
    format!("{n} samples, a dot each (rings: not among a level's last {last}); the line: {line}")
}

/// Each of `load`'s lines scaled onto the `figure` line of the same
/// system, its peak at that line's peak, as DragonFly's pgbench figure
/// drew load × frequency on the TPS graph: dashed lines whose shape, not
/// height, is what they show.
fn scaled_onto<'a>(figure: &[SweepLine<'a>], load: &[SweepLine<'a>]) -> Vec<SweepLine<'a>> {
    let peak = |points: &[(f64, f64)]| points.iter().map(|p| p.1).fold(0.0, f64::max);
    load.iter()
        .filter_map(|l| {
            let f = figure.iter().find(|f| f.who == l.who)?;
            let (top, ltop) = (peak(&f.points), peak(&l.points));
            (top > 0.0 && ltop > 0.0).then(|| SweepLine {
                who: format!("{} load × frequency (scaled)", l.who),
                system: l.system,
                points: l.points.iter().map(|&(x, y)| (x, y * top / ltop)).collect(),
                dots: Vec::new(),
                overlay: true,
            })
        })
        .collect()
}

/// The charts of the sweep rows labelled `label` in `t`: the figure, the
/// per-unit efficiency against each line's own baseline (1.0 = linear
/// scaling), and load × frequency — busy CPUs times their clock, in GHz —
/// against the level. The first two draw every sample as a dot and each
/// level's figure as the line; load × frequency is read over a level's
/// samples together, one figure per level. Charts without data are left
/// out.
pub fn sweep_charts<'a>(t: &WorkTable<'a>, label: &str, many: bool) -> Vec<SweepChart<'a>> {
    // Each line's sweep with its verdict.
    let sweeps: Vec<(String, &'a str, &'a results::SweepStats, _)> = t
        .lines
        .iter()
        .filter(|l| l.label == label)
        .filter_map(|l| {
            let s = l.row?.sweep.as_ref()?;
            Some((l.who(many), l.system, s, l.verdict.as_ref()?))
        })
        .collect();
    let Some((_, _, first, _)) = sweeps.first() else {
        return Vec::new();
    };
    let figure = sweep_lines(&sweeps, &|_, l| l.value, Some(&|_, _, _, y| Some(y)));
    let per_unit = sweep_lines(
        &sweeps,
        &|_, l| l.efficiency,
        Some(&|s, v, level, y| v.efficiency_of(s.baseline, level, y)),
    );
    let load = sweep_lines(
        &sweeps,
        &|s, l| {
            let x = sweep_level(s, l.level)?;
            Some(x.cpu_busy? * s.cpus as f64 * x.busy_mhz? / 1000.0)
        },
        None,
    );
    let mut figure = figure;
    let overlays = scaled_onto(&figure, &load);
    let dashed = if overlays.is_empty() {
        ""
    } else {
        "; dashed: load × frequency, scaled so that its peak is at the peak"
    };
    figure.extend(overlays);
    let by_figure = first.knee_on == "figure";
    let charts = [
        SweepChart {
            key: "figure",
            title: format!(
                "{}: {label} — {} against {}",
                t.name, first.unit, first.variable
            ),
            x_label: first.variable.clone(),
            y_label: first.unit.clone(),
            note: samples_note(
                &figure,
                first,
                &format!(
                    "each level's figure, the mean of its last {}{dashed}",
                    first.figure_of_last.max(1)
                ),
            ),
            lines: figure,
        },
        SweepChart {
            key: "per-unit",
            title: if by_figure {
                format!(
                    "{}: {label} — {} against the baseline's",
                    t.name, first.unit
                )
            } else {
                format!(
                    "{}: {label} — {} per {} against the baseline (1 = linear scaling)",
                    t.name, first.unit, first.variable
                )
            },
            x_label: first.variable.clone(),
            y_label: if by_figure {
                "share of the baseline's".into()
            } else {
                "per-unit efficiency".into()
            },
            note: samples_note(&per_unit, first, "each level's, from its figure"),
            lines: per_unit,
        },
        SweepChart {
            key: "load-ghz",
            title: format!(
                "{}: {label} — load × frequency (busy CPUs × their clock)",
                t.name
            ),
            x_label: first.variable.clone(),
            y_label: "busy GHz".into(),
            note: "one figure per level: the CPUs are read over its samples together".into(),
            lines: load,
        },
    ];
    charts
        .into_iter()
        .filter(|c| {
            c.lines
                .iter()
                .any(|l| !l.points.is_empty() || !l.dots.is_empty())
        })
        .collect()
}

impl<'a> Input<'a> {
    /// Every workload of every system, in order of first appearance, each
    /// sweep judged (once, when the input was read).
    pub fn work_tables(&self) -> &[WorkTable<'a>] {
        &self.work
    }
}

/// Every workload of `systems`, in order of first appearance, each sweep
/// judged.
fn work_tables<'a>(systems: &'a [System]) -> Vec<WorkTable<'a>> {
    let mut names: Vec<(&'a str, &'a str)> = Vec::new();
    for s in systems {
        for w in &s.file.workloads {
            if !names.iter().any(|(n, _)| *n == w.name) {
                names.push((&w.name, &w.what));
            }
        }
    }
    names
        .into_iter()
        .map(|(name, what)| {
            let of = |s: &'a System| s.file.workloads.iter().find(|w| w.name == name);
            let mut labels: Vec<&'a str> = Vec::new();
            let mut messages = Vec::new();
            let mut phased = false;
            let mut swept = false;
            for s in systems {
                if let Some(w) = of(s) {
                    for r in &w.rows {
                        if !labels.contains(&r.label.as_str()) {
                            labels.push(&r.label);
                        }
                        phased |= r.phase.is_some() || r.target.is_some();
                        swept |= r.sweep.is_some();
                    }
                    if w.status != Status::Ok || w.message.is_some() {
                        messages.push(format!(
                            "{}: {}{}",
                            s.label,
                            w.status.as_str(),
                            w.message
                                .as_ref()
                                .map_or(String::new(), |m| format!(", {m}"))
                        ));
                    }
                }
            }
            let mut lines = Vec::new();
            for label in &labels {
                for s in systems {
                    let rows: Vec<&'a WorkloadRow> = of(s)
                        .map(|w| w.rows.iter().filter(|r| r.label == *label).collect())
                        .unwrap_or_default();
                    if rows.is_empty() {
                        lines.push(WorkLine {
                            label,
                            system: &s.label,
                            target: None,
                            row: None,
                            verdict: None,
                            emulated: s.file.system.emulated(),
                        });
                    }
                    for r in rows {
                        lines.push(WorkLine {
                            label,
                            system: &s.label,
                            target: r.target.as_deref(),
                            row: Some(r),
                            verdict: r
                                .sweep
                                .as_ref()
                                .map(|sw| analysis::sweep::judge(sw, analysis::sweep::KNEE_SHARE)),
                            emulated: s.file.system.emulated(),
                        });
                    }
                }
            }
            WorkTable {
                name,
                what,
                columns: if phased {
                    &PHASE_COLUMNS
                } else if swept {
                    &SWEEP_ROW_COLUMNS
                } else {
                    &WORK_COLUMNS
                },
                lines,
                messages,
                monitors: systems
                    .iter()
                    .filter_map(|s| Some((s.label.as_str(), of(s)?.monitor.as_ref()?)))
                    .collect(),
            }
        })
        .collect()
}

/// What the profile windows found for an entry, in one line (`why: …`),
/// or why there is no profile; `None` when none was asked for.
pub fn why_of(e: &Entry) -> Option<String> {
    let p = e.bench?.profile.as_ref()?;
    Some(match (&p.error, &p.explanation) {
        (Some(err), _) => format!("why: no profile ({err})"),
        (None, Some(x)) => format!("why: {x}"),
        (None, None) => "why: no finding".to_string(),
    })
}

/// The evidence behind a verdict in one line: the model, the exponent,
/// how many samples and runs, and how stable the label is under
/// resampling whole runs.
pub fn details(v: &Verdict, cost: units::Cost) -> String {
    let exponent = v.exponent.map_or(String::new(), |e| {
        format!(
            "; exponent of the growing part {:.2} [{:.2}, {:.2}]",
            e.value, e.lo, e.hi
        )
    });
    let share = |x: f64| {
        if x > 0.0 && x < 0.01 {
            "<1 %".to_string()
        } else {
            format!("{:.0} %", x * 100.0)
        }
    };
    let votes = |skip: &str| -> Vec<String> {
        v.votes
            .iter()
            .filter(|x| x.what != skip)
            .map(|x| format!("{} {}", x.what, share(x.share)))
            .collect()
    };
    let stability = match (v.confidence, v.class) {
        (Some(c), Label::Between(a, b)) => format!(
            "; {a} or {b} in {} of resampled runs ({})",
            share(c),
            votes("").join(", ")
        ),
        (Some(c), l) => {
            let others = votes(l.label());
            let also = if others.is_empty() {
                String::new()
            } else {
                format!(" (also {})", others.join(", "))
            };
            format!("; the same label in {} of resampled runs{also}", share(c))
        }
        (None, _) => "; stability unknown (fewer than 3 runs)".to_string(),
    };
    format!(
        "fit {}{exponent}; {} in {}{stability}",
        v.model_in(cost),
        units::fmt_count(v.samples as u64, "sample", "samples"),
        units::fmt_count(v.runs as u64, "run", "runs")
    )
}

/// One system's verdicts at a glance: how many of its series stay flat,
/// which grow and how, how many are undecided or have no verdict, and how
/// many differences against the baseline name it.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// The system.
    pub system: String,
    /// Series judged O(1).
    pub flat: usize,
    /// Series that grow, each with its label (`bind O(n)`).
    pub growing: Vec<String>,
    /// Series judged undecided.
    pub undecided: usize,
    /// Series without a verdict (failed, unsupported, too few samples).
    pub none: usize,
    /// Differences against the baseline naming this system (none for the
    /// baseline itself).
    pub differences: usize,
}

impl Summary {
    /// The summary in one sentence.
    pub fn sentence(&self) -> String {
        let total = self.flat + self.growing.len() + self.undecided + self.none;
        let mut parts = vec![format!("{} of {total} series stay flat", self.flat)];
        if !self.growing.is_empty() {
            parts.push(format!(
                "{} grow{} ({})",
                self.growing.len(),
                if self.growing.len() == 1 { "s" } else { "" },
                self.growing.join(", ")
            ));
        }
        if self.undecided > 0 {
            parts.push(format!("{} undecided", self.undecided));
        }
        if self.none > 0 {
            parts.push(format!("{} without a verdict", self.none));
        }
        format!("{}: {}", self.system, parts.join(", "))
    }
}

/// Every system's [`Summary`], in order, from the verdicts judged once.
pub fn summaries(input: &Input) -> Vec<Summary> {
    input
        .systems
        .iter()
        .map(|s| {
            let mut sum = Summary {
                system: s.label.clone(),
                flat: 0,
                growing: Vec::new(),
                undecided: 0,
                none: 0,
                differences: input
                    .differences
                    .iter()
                    .filter(|d| d.other == s.label)
                    .count(),
            };
            for e in input.entries.iter().filter(|e| e.system == s.label) {
                match &e.verdict {
                    Ok(v) => match v.class {
                        analysis::Label::Class(analysis::Class::Constant) => sum.flat += 1,
                        analysis::Label::Undecided => sum.undecided += 1,
                        ref l => sum.growing.push(format!("{} {}", e.series, l.label())),
                    },
                    Err(_) => sum.none += 1,
                }
            }
            sum
        })
        .collect()
}

/// All flags of an entry, status first, `;`-separated; `emulated` last
/// for a system measured under emulation.
pub fn flags_of(e: &Entry) -> String {
    let mut f: Vec<String> = match e.status {
        Some(s) if s != Status::Ok => vec![s.as_str().to_string()],
        _ => vec![],
    };
    if let Ok(v) = &e.verdict {
        f.extend(v.flags.iter().map(|x| x.name().to_string()));
    }
    if e.emulated {
        f.push("emulated".into());
    }
    f.join(";")
}

/// [`flags_of`] for a reader: a flag raised more than once named once,
/// counted (`slope-change ×2`); the CSV keeps each one.
pub fn flags_counted(e: &Entry) -> String {
    counted(&flags_of(e))
}

/// `;`-separated flags with a flag raised more than once named once,
/// counted: `slope-change;slope-change;bimodal` → `slope-change ×2;bimodal`
/// (the details below the table say where each one is).
pub(crate) fn counted(flags: &str) -> String {
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for f in flags.split(';').filter(|f| !f.is_empty()) {
        match seen.iter_mut().find(|(g, _)| *g == f) {
            Some((_, k)) => *k += 1,
            None => seen.push((f, 1)),
        }
    }
    seen.iter()
        .map(|&(f, k)| {
            if k > 1 {
                format!("{f} ×{k}")
            } else {
                f.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(";")
}

/// A report format.
pub trait Report {
    /// Writes the report of `input` to `out`.
    fn write(&self, input: &Input, out: &mut dyn Write) -> crate::Result<()>;

    /// Writes a comparison of two files (`compare`); a format that shows
    /// none says so.
    fn write_comparison(
        &self,
        _c: &compare::Comparison,
        _out: &mut dyn Write,
    ) -> crate::Result<()> {
        Err(Error::NotShown {
            what: "comparison",
            formats: "terminal, markdown or json",
        })
    }

    /// Writes the figures followed across files (`history`); a format that
    /// shows none says so.
    fn write_history(&self, _tracks: &[history::Track], _out: &mut dyn Write) -> crate::Result<()> {
        Err(Error::NotShown {
            what: "history",
            formats: "terminal, markdown, json or html",
        })
    }

    /// The files the last [`Report::write`] linked (path, contents), for
    /// the caller to write beside the report under the output rules: a
    /// writer formats, it writes no file itself.
    fn files(&self) -> Vec<(std::path::PathBuf, String)> {
        Vec::new()
    }
}

/// The report writer for a format; `svg_dir` is where the Markdown report
/// writes its charts (none: no charts).
pub fn writer(format: Format, svg_dir: Option<&std::path::Path>) -> Box<dyn Report> {
    match format {
        Format::Terminal => Box::new(TerminalReport),
        Format::Csv => Box::new(CsvReport),
        Format::Markdown => Box::new(MarkdownReport::new(
            svg_dir.map(std::path::Path::to_path_buf),
        )),
        Format::Html => Box::new(HtmlReport),
        Format::Json => Box::new(JsonReport),
    }
}

/// Report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A summary table for a terminal (fits 100 columns).
    Terminal,
    /// One verdict row per system and benchmark.
    Csv,
    /// The verdict table in Markdown.
    Markdown,
    /// One self-contained HTML file with every sample charted.
    Html,
    /// Verdicts and differences, machine-readable.
    Json,
}

/// Systems made from the test fixtures, native or emulated, for the
/// report's unit tests.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::System;
    use results::Virtualization;

    /// `tests/fixtures/default.json` (socket, bind, mmap; 3 runs each)
    /// labelled `label`, every sample's time times `scale`, and `bind`
    /// made to grow in proportion to n when `linear_bind`; recorded as a
    /// TCG guest when `emulated`, else as native.
    pub fn system(label: &str, emulated: bool, scale: f64, linear_bind: bool) -> System {
        let mut file: results::ResultFile =
            serde_json::from_str(include_str!("../../../tests/fixtures/default.json")).unwrap();
        for b in &mut file.benchmarks {
            let linear = linear_bind && b.series == "bind";
            for r in &mut b.runs {
                for s in &mut r.samples {
                    let grown = if linear { s[1] + 40 * s[0] } else { s[1] };
                    s[1] = (grown as f64 * scale) as u64;
                }
            }
        }
        file.label = label.into();
        file.system.virtualization = Some(if emulated {
            Virtualization {
                kind: "tcg".into(),
                emulated: true,
                hypervisor: Some("TCGTCGTCGTCG".into()),
                reason: Some("a KVM guest printed no kernel banner within 5s".into()),
                vcpu_pins: vec![0, 1],
                ..Virtualization::default()
            }
        } else {
            results::sysinfo::virtualization(Some("KVMKVMKVM".into()))
        });
        System {
            label: label.into(),
            file,
        }
    }

    /// Series `series` of `s`, to change (panics when it has none).
    pub fn series_mut<'a>(s: &'a mut System, series: &str) -> &'a mut results::BenchResult {
        s.file
            .benchmarks
            .iter_mut()
            .find(|b| b.series == series)
            .unwrap()
    }

    /// `s` as a guest whose clock counted instructions at `shift`.
    pub fn counted(mut s: System, shift: u32) -> System {
        let v = s.file.system.virtualization.as_mut().unwrap();
        v.clock = Some("instructions".into());
        v.icount_shift = Some(shift);
        s
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn an_instruction_counted_guest_says_what_its_figures_count() {
        let s = super::fixtures::system("v6.1", true, 1.0, false);
        let time = super::emulation_warning(&s).unwrap();
        assert!(
            time.contains("its times are not the speed of any machine"),
            "{time}"
        );
        let mut s = super::fixtures::counted(s, 0);
        let counted = super::emulation_warning(&s).unwrap();
        assert!(
            counted.contains("counting instructions (QEMU's -icount): its costs are instructions the guest executed")
                && counted.contains("blind to caches, memory and contention"),
            "{counted}"
        );
        assert_eq!(
            super::cost_of(&s.file.system),
            units::Cost::Instructions { shift: 0 }
        );
        s.file.system.virtualization.as_mut().unwrap().icount_shift = Some(3);
        assert!(
            super::emulation_warning(&s)
                .unwrap()
                .contains("-icount, 8 per recorded nanosecond")
        );
        // Its figures are shown in instructions, in every writer.
        s.file.system.virtualization.as_mut().unwrap().icount_shift = Some(0);
        let systems = [s];
        let input = super::Input::new(&systems, &Default::default());
        for format in [
            super::Format::Terminal,
            super::Format::Markdown,
            super::Format::Html,
        ] {
            let mut out = Vec::new();
            super::writer(format, None).write(&input, &mut out).unwrap();
            let text = String::from_utf8(out).unwrap();
            assert!(text.contains(" instr"), "{format:?}: {text}");
            assert!(!text.contains(" µs"), "{format:?}: {text}");
            // The † note says what the figures count, not "not the speed".
            let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
            let words = words.replace("</p>", "");
            assert!(words.contains(super::COUNTED_NOTE), "{format:?}: {words}");
            assert!(!words.contains(super::EMULATED_NOTE), "{format:?}: {words}");
        }
        // Beside a guest on host time, both notes, once.
        let both = super::emulated_note([
            (true, units::Cost::Instructions { shift: 0 }),
            (true, units::Cost::Time),
            (false, units::Cost::Time),
        ])
        .unwrap();
        assert!(both.starts_with("† measured under emulation"), "{both}");
        assert!(both.ends_with(super::COUNTED_NOTE), "{both}");
        assert_eq!(super::emulated_note([(false, units::Cost::Time)]), None);
        // Two guests counting at different shifts are not said to count time.
        let (x, y) = (
            (true, units::Cost::Instructions { shift: 0 }),
            (true, units::Cost::Instructions { shift: 2 }),
        );
        let note = super::Basis::of(x, y).note("a", "b", x, y).unwrap();
        assert!(
            note.starts_with("a and b counted instructions at different icount shifts, both"),
            "{note}"
        );
        let t = (true, units::Cost::Time);
        let note = super::Basis::of(t, x).note("t", "c", t, x).unwrap();
        assert!(
            note.starts_with("c counted instructions and t host time"),
            "{note}"
        );
    }

    #[test]
    fn a_series_whose_maximum_matters_shows_it_per_n_in_words_and_chart() {
        use super::MAX_SHOWN;
        use super::Report;
        use super::fixtures::{series_mut, system};
        let mut sys = system("a", false, 1.0, false);
        let socket = series_mut(&mut sys, "socket");
        socket.max_matters = Some("a table grows".into());
        let [n, ns] = &mut socket.runs[1].samples[40];
        *ns = 9_000_000;
        let stall = *n as f64;
        let systems = [sys];
        let input = super::Input::new(&systems, &analysis::Options::default());
        for e in &input.entries {
            assert_eq!(e.maxima.is_some(), e.series == "socket", "{}", e.series);
        }
        let e = input.entries.iter().find(|e| e.series == "socket").unwrap();
        let m = e.maxima.as_ref().unwrap();
        let v = e.verdict.as_ref().unwrap();
        assert_eq!(m.buckets.len(), v.buckets.len());
        let slowest = m.slowest().unwrap();
        assert_eq!((slowest.at, slowest.max), (stall, 9e6));
        assert!(slowest.n_lo <= stall && stall <= slowest.n_hi);
        // Every bucket's maximum is at least its median, and is one of its samples.
        for b in &m.buckets {
            assert!(
                b.max >= b.median && b.n_lo <= b.at && b.at <= b.n_hi,
                "{b:?}"
            );
        }
        let words = m.words();
        assert!(words.starts_with("max per n (a table grows) — "), "{words}");
        assert!(words.contains("Slowest: 9.00 ms at n = "), "{words}");
        let summary = m.summary();
        assert!(
            summary.starts_with("max per n (a table grows): typically "),
            "{summary}"
        );
        let named = format!("9.00 ms at n = {}", slowest.range());
        assert!(summary.contains(&named), "{summary}");
        let shown = format!(
            "the 8 largest of its {} buckets' maxima, by n: ",
            m.buckets.len()
        );
        assert!(summary.contains(&shown), "{summary}");
        assert_eq!(summary.matches(" at n = ").count(), MAX_SHOWN, "{summary}");
        let mut out = Vec::new();
        super::TerminalReport.write(&input, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text.matches("max per n (a table grows): typically").count(),
            1,
            "{text}"
        );
        let mut out = Vec::new();
        super::HtmlReport.write(&input, &mut out).unwrap();
        let html = String::from_utf8(out).unwrap();
        // Once per chart (linear and logarithmic) and once in words.
        assert_eq!(html.matches("<polyline class=\"max\"").count(), 2);
        assert_eq!(html.matches("max per n (a table grows)").count(), 1);
    }

    #[test]
    fn samples_of_their_own_length_show_the_range_of_lengths() {
        let sample = |seconds: f64| results::SweepSample {
            t: seconds,
            seconds,
            value: 1.0,
            latency_ns: None,
            mean_latency_ns: None,
            errors: 0,
        };
        // Timed samples: the sweep's length.
        assert_eq!(
            super::sample_lengths(&[sample(1.0), sample(0.99)], 1.0),
            "1.00 s"
        );
        assert_eq!(super::sample_lengths(&[], 1.0), "1.00 s");
        // Fixed deliveries bounded by 10 minutes: what they took.
        let d = [sample(12.5), sample(14.0)];
        assert_eq!(super::sample_lengths(&d, 600.0), "12.50 s–14.00 s");
        assert_eq!(super::sample_lengths(&d[..1], 600.0), "12.50 s");
    }

    #[test]
    fn the_summary_counts_each_systems_flat_and_growing_series_first() {
        use super::fixtures::system;
        let systems = [
            system("a", false, 1.0, false),
            system("b", false, 1.0, true),
        ];
        let input = super::Input::new(&systems, &analysis::Options::default());
        let s = super::summaries(&input);
        assert_eq!(s.len(), 2);
        assert!(
            s[1].growing.iter().any(|g| g.starts_with("bind O(")),
            "{s:?}"
        );
        assert_eq!(s[0].differences, 0, "the baseline is named by none");
        assert!(s[1].differences >= 1, "{s:?}");
        let total = |x: &super::Summary| x.flat + x.growing.len() + x.undecided + x.none;
        assert_eq!(total(&s[0]), 3);
        assert!(s[1].sentence().starts_with("b: "), "{}", s[1].sentence());
        // The HTML report opens with it, before the differences.
        let (_, html) = reports_of(&systems)
            .into_iter()
            .find(|(f, _)| *f == super::Format::Html)
            .unwrap();
        let (sum, diff) = (
            html.find("id=\"summary\"").unwrap(),
            html.find("id=\"differences\"").unwrap(),
        );
        assert!(sum < diff);
        assert!(
            html.contains(&super::chart::esc(&s[1].sentence())),
            "the sentence is there"
        );
        // Each verdict cell has its small curve: three series on two systems.
        assert_eq!(html.matches("<svg class=\"spark\"").count(), 6);
    }

    use results::{SweepLevel, SweepStats};

    /// Every report but CSV and JSON, of the empty fixture run with
    /// `steal` percent of CPU time stolen.
    fn reports_with_steal(steal: Option<f64>) -> Vec<(super::Format, String)> {
        let mut file: results::ResultFile =
            serde_json::from_str(include_str!("../../../tests/fixtures/empty.json")).unwrap();
        file.system.tuning.steal_percent = steal;
        let systems = [super::System {
            label: "vm".into(),
            file,
        }];
        reports_of(&systems)
            .into_iter()
            .filter(|(f, _)| !matches!(f, super::Format::Csv | super::Format::Json))
            .collect()
    }

    #[test]
    fn every_report_says_the_machine_was_busy_when_much_time_was_stolen() {
        let words =
            "the machine was busy: 7.3 % of CPU time stolen by the hypervisor during the run";
        for (f, text) in reports_with_steal(Some(7.31)) {
            // The terminal keeps a number with its unit (a no-break space).
            let text = text.replace('\u{a0}', " ");
            assert!(text.contains(words), "{f:?}:\n{text}");
        }
        let (_, terminal) = &reports_with_steal(Some(7.31))[0];
        let lines: Vec<&str> = terminal.lines().collect();
        assert!(lines[0].starts_with("vm: "), "{terminal}");
        assert!(
            lines[1].starts_with("    warning: the machine was busy"),
            "{terminal}"
        );
        for steal in [Some(5.0), Some(0.4), None] {
            for (f, text) in reports_with_steal(steal) {
                assert!(
                    !text.contains("machine was busy"),
                    "{steal:?} {f:?}:\n{text}"
                );
            }
        }
        let (_, html) = &reports_with_steal(Some(0.4))[1];
        assert!(
            html.contains("<td>CPU time stolen</td><td>0.4 %</td>"),
            "{html}"
        );
    }

    /// Every report of `systems`, by format.
    fn reports_of(systems: &[super::System]) -> Vec<(super::Format, String)> {
        let input = super::Input::new(systems, &Default::default());
        [
            super::Format::Terminal,
            super::Format::Html,
            super::Format::Markdown,
            super::Format::Csv,
            super::Format::Json,
        ]
        .into_iter()
        .map(|f| {
            let mut out = Vec::new();
            super::writer(f, None).write(&input, &mut out).unwrap();
            (f, String::from_utf8(out).unwrap())
        })
        .collect()
    }

    #[test]
    fn every_report_marks_the_figures_of_an_emulated_system() {
        use super::fixtures::system;
        use super::{EMULATED_MARK, EMULATED_NOTE, Format};
        let mut systems = [
            system("host", false, 1.0, false),
            system("guest", true, 10.0, false),
        ];
        systems[1].file.system.kernel_package = Some(results::KernelPackage {
            package: "linux-image-6.1.0-57-cloud-amd64".into(),
            version: "6.1.192-3".into(),
            suite: "bookworm-security".into(),
            ..Default::default()
        });
        for (f, text) in reports_of(&systems) {
            let text = text.replace('\u{a0}', " ");
            match f {
                Format::Csv => {
                    let guest: Vec<&str> =
                        text.lines().filter(|l| l.starts_with("guest,")).collect();
                    assert_eq!(guest.len(), 3, "{text}");
                    assert!(
                        guest.iter().all(|l| l.ends_with("emulated,,time")),
                        "{text}"
                    );
                    assert!(
                        !text
                            .lines()
                            .any(|l| l.starts_with("host,") && l.contains("emulated"))
                    );
                }
                Format::Json => {
                    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
                    assert_eq!(v["systems"][1]["emulated"], true);
                    assert!(v["systems"][0].get("emulated").is_none());
                    for r in v["verdicts"].as_array().unwrap() {
                        assert_eq!(r.get("emulated").is_some(), r["system"] == "guest", "{r}");
                    }
                    assert_eq!(v["basis"].as_array().unwrap().len(), 1);
                }
                _ => {
                    // Words as a reader sees them, whatever the wrapping.
                    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
                    assert!(text.contains(EMULATED_NOTE), "{f:?}:\n{text}");
                    assert!(
                        text.contains("guest was measured under emulation (TCG) and host natively"),
                        "{f:?}:\n{text}"
                    );
                    assert!(
                        text.contains("measured under emulation (tcg, a KVM guest printed no kernel banner within 5s)"),
                        "{f:?}:\n{text}"
                    );
                    // No cost sentence between them.
                    assert!(
                        !text.contains("slower than") && !text.contains("faster than"),
                        "{f:?}:\n{text}"
                    );
                }
            }
        }
        let reports = reports_of(&systems);
        let terminal = &reports[0].1;
        // In the verdict table, the guest's two costs are marked, the host's not.
        for line in terminal
            .lines()
            .filter(|l| l.contains(" → ") && !l.contains(" — "))
        {
            let marks = line.matches(EMULATED_MARK).count();
            assert_eq!(
                marks,
                if line.starts_with("guest") { 2 } else { 0 },
                "{line}"
            );
        }
        let html = &reports[1].1;
        assert!(
            html.contains(&format!("guest {EMULATED_MARK} emulated</text>")),
            "chart legend"
        );
        assert!(html.contains("<td>virtualization</td><td>native, CPU says KVMKVMKVM</td><td>tcg (emulated), CPU says TCGTCGTCGTCG</td>"), "system table");
        assert!(
            html.contains("<td>kernel package</td><td></td><td>linux-image-6.1.0-57-cloud-amd64 6.1.192-3 (bookworm-security)</td>"),
            "the guest's kernel package in the system table"
        );
        // Native systems: no mark anywhere.
        let native = [
            system("a", false, 1.0, false),
            system("b", false, 10.0, false),
        ];
        for (f, text) in reports_of(&native) {
            assert!(
                !text.contains(EMULATED_MARK) && !text.contains("emulat"),
                "{f:?}:\n{text}"
            );
        }
    }

    #[test]
    fn kernel_options_are_counted_in_text_and_listed_whole_in_html() {
        use super::fixtures::system;
        let with = |label: &str, value: &str| {
            let mut s = system(label, false, 1.0, false);
            s.file.system.kernel_config = Some(results::KernelConfig {
                source: "/proc/config.gz".into(),
                options: (0..30)
                    .map(|i| (format!("CONFIG_OPT_{i:02}"), value.to_string()))
                    .chain([("CONFIG_SAME".to_string(), "y".to_string())])
                    .collect(),
            });
            s
        };
        let systems = [with("cloud", "y"), with("rt", "m")];
        let reports = reports_of(&systems);
        let count = "rt (/proc/config.gz) against cloud (/proc/config.gz): 30 options differ — 0 added, 0 removed, 30 changed";
        for (f, text) in &reports[..3] {
            let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(words.contains(count), "{f:?}:\n{text}");
            assert!(!text.contains("CONFIG_SAME"), "{f:?}");
        }
        let (terminal, html, markdown) = (&reports[0].1, &reports[1].1, &reports[2].1);
        for text in [terminal, markdown] {
            assert!(text.contains("CONFIG_OPT_11"), "{text}");
            assert!(!text.contains("CONFIG_OPT_12"), "{text}");
            assert!(text.contains("first 12 of 30"), "{text}");
        }
        assert!(
            terminal.contains("CONFIG_OPT_00: cloud: y; rt: m"),
            "{terminal}"
        );
        assert!(
            html.contains("<details class=\"config\"><summary>30 options differ"),
            "{html}"
        );
        assert!(
            html.contains("<td>CONFIG_OPT_29</td><td>y</td><td>m</td>"),
            "{html}"
        );
        let json: serde_json::Value = serde_json::from_str(&reports[4].1).unwrap();
        assert_eq!(
            json["kernel_config_differ"]["options"]
                .as_array()
                .unwrap()
                .len(),
            30
        );
    }

    fn sweep(failures: &[(f64, &[(&str, u64)])], counts: bool) -> SweepStats {
        SweepStats {
            variable: "sessions".into(),
            unit: "msg/s".into(),
            baseline: 100.0,
            knee_on: "per-unit".into(),
            heat_up_s: 1.0,
            sample_s: 1.0,
            samples: 3,
            figure_of_last: 3,
            cpus: 2,
            counts_failures: counts,
            levels: failures
                .iter()
                .map(|(level, f)| SweepLevel {
                    level: *level,
                    value: Some(1.0),
                    samples: Vec::new(),
                    cpu_busy: None,
                    busy_mhz: None,
                    params: Default::default(),
                    error: None,
                    failures: f.iter().map(|(k, n)| (k.to_string(), *n)).collect(),
                })
                .collect(),
        }
    }

    #[test]
    fn sweep_charts_draw_every_sample_and_each_levels_figure() {
        // Levels 1, 2, 4 with five samples each (the figure: the mean of
        // the last three); 8 as an old file might have it: a figure, no
        // samples; the CPUs read at 1 and 2 only.
        let mut s = sweep(&[(1.0, &[]), (2.0, &[]), (4.0, &[]), (8.0, &[])], false);
        s.baseline = 1.0;
        for l in &mut s.levels {
            let vals: Vec<f64> = if l.level == 8.0 {
                Vec::new()
            } else {
                (0..5).map(|i| l.level * 100.0 + i as f64 * 10.0).collect()
            };
            l.value = Some(match vals.len() {
                0 => 700.0,
                n => vals[n - 3..].iter().sum::<f64>() / 3.0,
            });
            l.samples = samples(&vals);
            if l.level <= 2.0 {
                (l.cpu_busy, l.busy_mhz) = (Some(0.5), Some(2000.0));
            }
        }
        let row = results::WorkloadRow {
            label: "select-only".into(),
            target: None,
            params: Default::default(),
            load: None,
            phase: None,
            sweep: Some(s.clone()),
            error: None,
        };
        let v = analysis::sweep::judge(&s, analysis::sweep::KNEE_SHARE);
        let t = super::WorkTable {
            name: "pgbench",
            what: "",
            columns: &super::SWEEP_ROW_COLUMNS,
            lines: vec![super::WorkLine {
                label: "select-only",
                system: "box",
                target: None,
                row: Some(&row),
                verdict: Some(v.clone()),
                emulated: false,
            }],
            messages: Vec::new(),
            monitors: Vec::new(),
        };
        let charts = super::sweep_charts(&t, "select-only", false);
        let keys: Vec<&str> = charts.iter().map(|c| c.key).collect();
        assert_eq!(keys, ["figure", "per-unit", "load-ghz"]);
        let (fig, per, load) = (
            &charts[0].lines[0],
            &charts[1].lines[0],
            &charts[2].lines[0],
        );
        assert_eq!(fig.points.len(), 4, "every level's figure, 8 too");
        assert_eq!(fig.dots.len(), 15, "every sample");
        let counted: Vec<bool> = fig.dots[..5].iter().map(|d| d.counted).collect();
        assert_eq!(counted, [false, false, true, true, true], "the last three");
        assert_eq!(fig.dots[6].y, 210.0);
        assert!(
            charts[0].note.starts_with("15 samples, a dot each"),
            "{}",
            charts[0].note
        );
        // Each sample's efficiency is its figure's: at 2 clients against
        // 1 client's figure (130, the mean of 120, 130, 140), 210 / 2 / 130.
        assert_eq!(per.dots.len(), 15);
        assert!((per.dots[6].y - 210.0 / 2.0 / 130.0).abs() < 1e-12);
        let lvl2 = v.levels.iter().find(|l| l.level == 2.0).unwrap();
        assert_eq!(per.points[1], (2.0, lvl2.efficiency.unwrap()));
        // Load × frequency: one figure per level, where read.
        assert_eq!(load.points, [(1.0, 2.0), (2.0, 2.0)]);
        assert!(load.dots.is_empty());
        let svg = charts[0].svg("x", |_, _| "#000000");
        assert_eq!(svg.matches("<circle class=\"sample").count(), 15);
        assert!(svg.contains("data-scale=\"log\" data-levels=\"4\""));
        // A level recorded twice (a repeat) has both entries' samples, once.
        let mut twice = row.clone();
        let sw = twice.sweep.as_mut().unwrap();
        sw.levels.push(sw.levels[1].clone());
        let lines = super::sweep_lines(
            &[("box".into(), "box", sw, &v)],
            &|_, l| l.value,
            Some(&|_, _, _, y| Some(y)),
        );
        assert_eq!(lines[0].dots.len(), 20);
        assert_eq!(lines[0].dots.iter().filter(|d| d.x == 2.0).count(), 10);
    }

    fn samples(values: &[f64]) -> Vec<results::SweepSample> {
        values
            .iter()
            .enumerate()
            .map(|(i, &value)| results::SweepSample {
                t: i as f64 + 1.0,
                seconds: 1.0,
                value,
                latency_ns: None,
                mean_latency_ns: None,
                errors: 0,
            })
            .collect()
    }

    #[test]
    fn failures_are_tabled_by_kind_and_level_most_first() {
        let s = sweep(
            &[
                (
                    1000.0,
                    &[
                        ("bind EADDRINUSE", 1200),
                        ("timeout waiting for the greeting", 3),
                    ],
                ),
                (100.0, &[]),
                (500.0, &[("timeout waiting for the greeting", 1)]),
            ],
            true,
        );
        let t = super::sweep_failures(&s).unwrap();
        assert_eq!(t[0], ["failures by sessions", "100", "500", "1 000"]);
        assert_eq!(t[1], ["bind EADDRINUSE", "—", "—", "1 200"]);
        assert_eq!(t[2], ["timeout waiting for the greeting", "—", "1", "3"]);
        assert_eq!(t.len(), 3);
        let none = sweep(&[(100.0, &[]), (500.0, &[])], true);
        assert_eq!(
            super::sweep_failures(&none).unwrap(),
            [["failures by sessions: none at any level"]]
        );
        assert!(super::sweep_failures(&sweep(&[(100.0, &[])], false)).is_none());
    }
}
