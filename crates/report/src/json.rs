//! The report as JSON, for CI and other programs: the systems, every
//! verdict and every difference. Schema `scalebench-report`, version 1
//! (documented in docs/results-format.md).

use super::diff::Difference;
use super::{Input, Report};
use analysis::{Class, Estimate, Flag, Label, Model, Vote};
use results::LoadStats;
use serde::Serialize;
use std::io::Write;

/// The JSON writer.
pub struct JsonReport;

#[derive(Serialize)]
struct Doc<'a> {
    schema: &'static str,
    schema_version: u32,
    systems: Vec<SystemRow<'a>>,
    verdicts: Vec<VerdictRow<'a>>,
    /// What the differences rest on where emulation limits them.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    basis: &'a [String],
    differences: &'a [Difference],
    /// Each variant against the series it varies, per system.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pairs: &'a [super::pairs::Pair],
    /// Recorded settings whose values differ between the systems.
    settings_differ: &'a [super::settings::SettingRow],
    /// Kernel build options that differ between the systems.
    #[serde(skip_serializing_if = "Option::is_none")]
    kernel_config_differ: Option<&'a super::settings::ConfigDiff>,
    workloads: Vec<WorkRow<'a>>,
    notices: &'a [String],
}

#[derive(Serialize)]
struct SystemRow<'a> {
    label: &'a str,
    os: &'a str,
    os_release: &'a str,
    cpu: Option<&'a str>,
    started: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    profile: Option<&'a results::TuningRecord>,
    /// Measured under emulation: its figures are not the speed of any
    /// machine (absent when not).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    emulated: bool,
    /// `instructions` when its costs count them (absent for time).
    #[serde(skip_serializing_if = "Option::is_none")]
    counts: Option<&'static str>,
}

#[derive(Serialize)]
struct VerdictRow<'a> {
    system: &'a str,
    series: &'a str,
    n: u64,
    status: Option<&'static str>,
    class: Option<Label>,
    confidence: Option<f64>,
    votes: Vec<&'a Vote>,
    flag_votes: Vec<&'a Vote>,
    held_votes: Vec<&'a Vote>,
    alternative: Option<Class>,
    rise: Option<Estimate>,
    tolerance: Option<f64>,
    span_decades: Option<f64>,
    model: Option<&'a Model>,
    model_words: Option<String>,
    exponent: Option<Estimate>,
    local_exponent: Option<(f64, f64)>,
    low_n: Option<f64>,
    low_ns: Option<f64>,
    high_n: Option<f64>,
    high_ns: Option<f64>,
    words: Option<String>,
    flags: Vec<&'a Flag>,
    error: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    emulated: bool,
    /// `instructions` when `low_ns`/`high_ns` count them (absent for time).
    #[serde(skip_serializing_if = "Option::is_none")]
    counts: Option<&'static str>,
}

#[derive(Serialize)]
struct WorkRow<'a> {
    workload: &'a str,
    row: &'a str,
    system: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    target: Option<&'a str>,
    load: Option<&'a LoadStats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    phase: Option<&'a results::PhaseStats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sweep: Option<&'a results::SweepStats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sweep_verdict: Option<analysis::sweep::SweepVerdict>,
    error: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    emulated: bool,
}

/// `Some("instructions")` for costs that count them.
fn counts(c: units::Cost) -> Option<&'static str> {
    c.counts_instructions().then_some(c.name())
}

impl Report for JsonReport {
    fn write_comparison(
        &self,
        c: &super::compare::Comparison,
        out: &mut dyn Write,
    ) -> crate::Result<()> {
        super::compare::write_json(c, out)
    }

    fn write_history(
        &self,
        tracks: &[super::history::Track],
        out: &mut dyn Write,
    ) -> crate::Result<()> {
        super::history::write_json(tracks, out)
    }

    fn write(&self, input: &Input, out: &mut dyn Write) -> crate::Result<()> {
        let doc = Doc {
            schema: "scalebench-report",
            schema_version: 2,
            systems: input
                .systems
                .iter()
                .map(|s| SystemRow {
                    label: &s.label,
                    os: &s.file.system.os,
                    os_release: &s.file.system.os_release,
                    cpu: s.file.system.cpu.model.as_deref(),
                    started: &s.file.started,
                    profile: s.file.profile.as_ref(),
                    emulated: s.file.system.emulated(),
                    counts: counts(super::cost_of(&s.file.system)),
                })
                .collect(),
            verdicts: input
                .entries
                .iter()
                .map(|e| {
                    let v = e.verdict.as_ref().ok();
                    VerdictRow {
                        system: e.system,
                        series: &e.series,
                        n: e.n,
                        status: e.status.map(|s| s.as_str()),
                        class: v.map(|v| v.class),
                        confidence: v.and_then(|v| v.confidence),
                        votes: v.map(|v| v.votes.iter().collect()).unwrap_or_default(),
                        flag_votes: v.map(|v| v.flag_votes.iter().collect()).unwrap_or_default(),
                        held_votes: v.map(|v| v.held_votes.iter().collect()).unwrap_or_default(),
                        alternative: v.and_then(|v| v.alternative),
                        rise: v.map(|v| v.rise),
                        tolerance: v.map(|v| v.tolerance),
                        span_decades: v.map(|v| v.span_decades),
                        model: v.map(|v| &v.model),
                        model_words: v.map(|v| v.model_in(e.cost)),
                        exponent: v.and_then(|v| v.exponent),
                        local_exponent: v.and_then(|v| v.local_exponent),
                        low_n: v.map(|v| v.low.n),
                        low_ns: v.map(|v| v.low.ns),
                        high_n: v.map(|v| v.high.n),
                        high_ns: v.map(|v| v.high.ns),
                        words: v.map(|v| v.words_in(e.cost)),
                        flags: v.map(|v| v.flags.iter().collect()).unwrap_or_default(),
                        error: e.verdict.as_ref().err().map(String::as_str),
                        emulated: e.emulated,
                        counts: counts(e.cost),
                    }
                })
                .collect(),
            basis: &input.basis,
            differences: &input.differences,
            pairs: &input.pairs,
            settings_differ: &input.settings,
            kernel_config_differ: input.kernel_config.as_ref(),
            workloads: input
                .work_tables()
                .iter()
                .flat_map(|t| {
                    t.lines.iter().map(|l| WorkRow {
                        workload: t.name,
                        row: l.label,
                        system: l.system,
                        target: l.target,
                        load: l.row.and_then(|r| r.load.as_ref()),
                        phase: l.row.and_then(|r| r.phase.as_ref()),
                        sweep: l.row.and_then(|r| r.sweep.as_ref()),
                        sweep_verdict: l.verdict.clone(),
                        error: l.cells().err(),
                        emulated: l.emulated,
                    })
                })
                .collect(),
            notices: &input.notices,
        };
        serde_json::to_writer_pretty(&mut *out, &doc)?;
        writeln!(out)?;
        Ok(())
    }
}
