//! The HTML report: one self-contained file (inline CSS and SVG, the
//! samples of each chart an embedded PNG; no script, no network) with what
//! differs between the systems in sentences, the verdict table, the system
//! table with its differences highlighted, and per benchmark a chart of
//! every sample of every run of every system (see [`super::chart`]),
//! switchable between a linear and a logarithmic time axis (a CSS radio
//! toggle), with each system's verdict in words beside it.

use super::chart::{self, Chart, PALETTE, Series, esc};
use super::diff;
use super::{
    EMULATED_MARK, Entry, Input, Report, WorkLine, WorkTable, emulated_note, flags_counted,
};
use analysis::{Class, Verdict};
use results::{Monitor, ResultFile, Status};
use std::collections::BTreeSet;
use std::io::Write;
use units::fmt_n;

/// The HTML writer.
pub struct HtmlReport;

const STYLE: &str = r#"
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1b1b1b; margin: 0 auto; max-width: 1180px; padding: 0 18px 40px; }
h1 { font-size: 1.6em; margin: 18px 0 4px; } h2 { font-size: 1.25em; margin: 28px 0 8px; border-bottom: 1px solid #ddd; }
h3 { font-size: 1.1em; margin: 0 0 4px; } .sub { color: #555; margin: 0 0 12px; }
table { border-collapse: collapse; font-size: 13.5px; } th, td { border: 1px solid #d8d8d8; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f4f4f4; } td.num { text-align: right; white-space: nowrap; }
tr.differs td { background: #fff4d6; } tr.differs td:first-child { font-weight: 600; }
.notice { background: #fdecea; border: 1px solid #f5c2c0; padding: 8px 12px; border-radius: 4px; }
ul.diffs li { margin: 2px 0; } .class { font-weight: 600; white-space: nowrap; padding: 0 5px; border-radius: 3px; }
.k0 { background: #dff3e4; } .k1 { background: #eef6d8; } .k2 { background: #fdebd0; } .k3, .k4, .k6 { background: #f9d6d5; } .k5 { background: #e8e8e8; } .k7 { background: #f3e0f0; }
.howto { background: #f6f8fa; border: 1px solid #e1e4e8; border-radius: 4px; padding: 8px 12px; font-size: 13.5px; }
.flags { color: #8a4b00; font-size: 12.5px; } .swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; margin-right: 6px; vertical-align: -1px; } .bar { display: inline-block; height: 10px; border-radius: 2px; vertical-align: 0; }
article.bench { border: 1px solid #e2e2e2; border-radius: 6px; padding: 12px 14px; margin: 16px 0; break-inside: avoid; }
.what { color: #555; font-size: 13px; margin: 0 0 6px; }
.scale label { font-size: 13px; margin-right: 12px; cursor: pointer; } .scale input { margin-right: 4px; }
.scale .log-view { display: none; } .scale input.log:checked ~ .log-view { display: block; } .scale input.log:checked ~ .lin-view { display: none; }
.chart { max-width: 100%; height: auto; }
ul.words { list-style: none; padding: 0; margin: 6px 0 0; } ul.words li { margin: 3px 0; } ul.words .detail { color: #444; font-size: 13px; margin-left: 18px; }
@media print { .scale input, .scale label { display: none; } .scale .lin-view { display: block !important; } .scale .log-view { display: none !important; } body { max-width: none; } }
"#;

/// The growing functions of an entry's profile, as a table, and the flame
/// graph of its high-n window with them marked.
fn write_profile(out: &mut dyn Write, e: &Entry, id: &str) -> std::io::Result<()> {
    let Some(p) = e.bench.and_then(|b| b.profile.as_ref()) else {
        return Ok(());
    };
    if p.error.is_some() || p.windows.len() < 2 {
        return Ok(());
    }
    let (lo, hi) = (&p.windows[0], &p.windows[1]);
    writeln!(
        out,
        "<div class=\"profile\" data-system=\"{}\"><p class=\"what\">profile of {}: {} samples at n = {} and {} at n = {} ({}, {} Hz; {:.1} s windows)</p>",
        esc(e.system),
        esc(e.system),
        lo.samples,
        fmt_n(lo.n as f64),
        hi.samples,
        fmt_n(hi.n as f64),
        esc(&p.profiler),
        p.frequency_hz,
        hi.seconds
    )?;
    if !p.growing.is_empty() {
        writeln!(
            out,
            "<table class=\"growing\"><tr><th>growing function</th><th>time</th><th>share at n = {}</th><th>share at n = {}</th><th>{} per op at n = {}</th><th>at n = {}</th></tr>",
            fmt_n(lo.n as f64),
            fmt_n(hi.n as f64),
            if e.cost.counts_instructions() {
                "instructions"
            } else {
                "CPU"
            },
            fmt_n(lo.n as f64),
            fmt_n(hi.n as f64)
        )?;
        for g in &p.growing {
            writeln!(
                out,
                "<tr><td>{}{}</td><td>{}</td><td class=\"num\">{:.1} %</td><td class=\"num\">{:.1} %</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                esc(&g.function),
                if g.kernel { " [k]" } else { "" },
                esc(&g.basis),
                g.low_share * 100.0,
                g.high_share * 100.0,
                e.cost.fmt(g.low_ns_per_op),
                e.cost.fmt(g.high_ns_per_op)
            )?;
        }
        writeln!(out, "</table>")?;
    }
    if let Some(text) = hi.folded_text() {
        let folded = analysis::stacks::unfold(&text);
        let marks: Vec<String> = p
            .growing
            .iter()
            .map(|g| {
                if g.kernel {
                    format!("{} [k]", g.function)
                } else {
                    g.function.clone()
                }
            })
            .collect();
        writeln!(
            out,
            "{}",
            super::flame::svg(
                id,
                &format!(
                    "{} {} at n = {}: where the time goes (growing functions in red)",
                    e.system,
                    e.series,
                    fmt_n(hi.n as f64)
                ),
                &folded,
                &marks
            )
        )?;
    }
    writeln!(out, "</div>")
}

fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// The chart data of the entries of one series, coloured by system.
pub fn chart_series<'a>(input: &Input, entries: &[&'a Entry]) -> Vec<Series<'a>> {
    entries
        .iter()
        .map(|e| {
            let idx = input
                .systems
                .iter()
                .position(|s| s.label == e.system)
                .unwrap_or(0);
            series_of(e, idx)
        })
        .collect()
}

/// The names of a pair chart's lines: each pair's series and its variant,
/// with the system's name where the report has several.
pub fn pair_labels(pairs: &[&super::pairs::Pair], many: bool) -> Vec<String> {
    pairs
        .iter()
        .flat_map(|p| {
            let on = if many {
                format!(" ({})", p.system)
            } else {
                String::new()
            };
            [format!("{}{on}", p.with), format!("{}{on}", p.series)]
        })
        .collect()
}

/// The lines of a pair chart: each pair's series and its variant on the
/// system that measured both, named by `labels` ([`pair_labels`]).
pub fn pair_series<'a>(
    input: &'a Input,
    pairs: &[&'a super::pairs::Pair],
    labels: &'a [String],
) -> Vec<Series<'a>> {
    let mut data = Vec::new();
    for (i, p) in pairs.iter().enumerate() {
        for (j, name) in [&p.with, &p.series].into_iter().enumerate() {
            if let Some(e) = input.of_series(name).find(|e| e.system == p.system) {
                let mut s = series_of(e, 2 * i + j);
                s.label = &labels[2 * i + j];
                data.push(s);
            }
        }
    }
    data
}

/// The chart data of one entry.
fn series_of<'a>(e: &'a Entry, idx: usize) -> Series<'a> {
    let runs: Vec<Vec<(f64, f64)>> = e
        .bench
        .map(|b| {
            b.runs
                .iter()
                .map(|r| {
                    r.samples
                        .iter()
                        .map(|s| (s[0] as f64, s[1] as f64))
                        .collect()
                })
                .collect()
        })
        .unwrap_or_default();
    let p90_max = match &e.verdict {
        Ok(v) => v.buckets.iter().map(|b| b.p90).fold(0.0, f64::max),
        Err(_) => 0.0,
    };
    let (median, fit) = match &e.verdict {
        Ok(v) => {
            let median = v.buckets.iter().map(|b| (b.n, b.median)).collect();
            let hi = v.buckets.last().map_or(0.0, |b| b.n_hi);
            let fit = (0..=60)
                .map(|i| {
                    let n = hi * i as f64 / 60.0;
                    (n, v.curve(n))
                })
                .filter(|p| p.1 > 0.0)
                .collect();
            (median, fit)
        }
        Err(_) => (Vec::new(), Vec::new()),
    };
    Series {
        label: e.system,
        emulated: e.emulated,
        cost: e.cost,
        colour: colour(idx),
        runs,
        median,
        fit,
        max: e
            .maxima
            .as_ref()
            .map_or_else(Vec::new, super::Maxima::points),
        p90_max,
    }
}

fn class_cell(v: &Verdict) -> String {
    let alt = v.alternative.map_or(String::new(), |c: Class| {
        format!(" <span class=\"flags\">(or {c})</span>")
    });
    let conf = v.confidence.map_or("stability unknown".to_string(), |c| {
        format!("{:.0}%", c * 100.0)
    });
    format!(
        "<span class=\"class k{}\">{}</span> <span class=\"sub\">{conf}</span>{alt}",
        v.class.index(),
        esc(v.class.label()),
    )
}

fn verdict_words(e: &Entry, idx: usize) -> String {
    let sw = format!(
        "<span class=\"swatch\" style=\"background:{}\"></span>",
        colour(idx)
    );
    let mark = if e.emulated { EMULATED_MARK } else { "" };
    let mut s = String::new();
    match &e.verdict {
        Ok(v) => {
            s.push_str(&format!(
                "<li>{sw}<b>{}{mark}</b> — <span class=\"class k{}\">{}</span> {}",
                esc(e.system),
                v.class.index(),
                esc(v.class.label()),
                esc(&v.words_in(e.cost))
            ));
            s.push_str(&format!(
                "<div class=\"detail\">{}</div>",
                esc(&super::details(v, e.cost))
            ));
            for f in &v.flags {
                s.push_str(&format!(
                    "<div class=\"detail flags\">{}</div>",
                    esc(&f.describe_in(e.cost))
                ));
            }
            if let Some(m) = &e.maxima {
                s.push_str(&format!(
                    "<div class=\"detail max\">{}</div>",
                    esc(&m.words())
                ));
            }
            if let Some(w) = super::why_of(e) {
                s.push_str(&format!("<div class=\"detail why\">{}</div>", esc(&w)));
            }
        }
        Err(m) => s.push_str(&format!(
            "<li>{sw}<b>{}</b> — no verdict: {}",
            esc(e.system),
            esc(m)
        )),
    }
    for c in e.caps {
        s.push_str(&format!(
            "<div class=\"detail flags\">capped at n = {} of {}: {}</div>",
            fmt_n(c.reached as f64),
            fmt_n(c.requested as f64),
            esc(&c.reason)
        ));
    }
    s.push_str("</li>");
    s
}

/// Rows of the system table: (label, value per system).
fn system_rows(files: &[&ResultFile]) -> Vec<(String, Vec<String>)> {
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    let mut row = |name: &str, f: &dyn Fn(&ResultFile) -> String| {
        rows.push((name.to_string(), files.iter().map(|x| f(x)).collect()));
    };
    row("OS", &|f| {
        format!("{} {}", f.system.os, f.system.os_release)
    });
    if files.iter().any(|f| !f.hosts.is_empty()) {
        for role in ["client", "server"] {
            row(&format!("{role} host"), &|f| {
                f.hosts
                    .iter()
                    .find(|h| h.role == role)
                    .map_or("this machine".to_string(), |h| h.summary())
            });
        }
    }
    if files.iter().any(|f| f.system.kernel_package.is_some()) {
        row("kernel package", &|f| {
            f.system.kernel_package.as_ref().map_or(String::new(), |p| {
                format!("{} {} ({})", p.package, p.version, p.suite)
            })
        });
    }
    row("kernel build", &|f| f.system.os_version.clone());
    row("architecture", &|f| f.system.arch.clone());
    row("CPU", &|f| f.system.cpu.model.clone().unwrap_or_default());
    row("CPUs", &|f| f.system.cpu.count.to_string());
    row("CPU MHz", &|f| {
        f.system
            .cpu
            .mhz
            .map_or(String::new(), |m| format!("{m:.0}"))
    });
    row("memory", &|f| {
        f.system.memory_bytes.map_or(String::new(), units::fmt_gib)
    });
    row("C library", &|f| f.system.libc.clone());
    if files.iter().any(|f| f.system.virtualization.is_some()) {
        row("virtualization", &|f| {
            f.system.virtualization.as_ref().map_or(String::new(), |v| {
                format!(
                    "{}{}{}",
                    v.kind,
                    if v.emulated { " (emulated)" } else { "" },
                    v.hypervisor
                        .as_deref()
                        .map_or(String::new(), |h| format!(", CPU says {h}"))
                )
            })
        });
    }
    if files.iter().any(|f| f.system.kernel_config.is_some()) {
        row("kernel configuration", &|f| {
            f.system.kernel_config.as_ref().map_or(String::new(), |k| {
                format!(
                    "{} options set ({})",
                    fmt_n(k.options.len() as f64),
                    k.source
                )
            })
        });
    }
    row("CPU time stolen", &|f| {
        f.system
            .tuning
            .steal_percent
            .map_or(String::new(), |p| format!("{p:.1} %"))
    });
    row("timer", &|f| match f.timer.tsc_hz {
        Some(hz) => format!("TSC {:.0} MHz", hz / 1e6),
        None => "CLOCK_MONOTONIC".into(),
    });
    row("work directory filesystem", &|f| {
        f.system.workdir.as_ref().map_or(String::new(), |w| {
            format!("{} on {} ({})", w.fs_type, w.mount_point, w.device)
        })
    });
    row("mount options", &|f| {
        f.system
            .workdir
            .as_ref()
            .map_or(String::new(), |w| w.mount_options.clone())
    });
    let limits: BTreeSet<&String> = files.iter().flat_map(|f| f.system.limits.keys()).collect();
    for l in limits {
        row(l, &|f| {
            f.system.limits.get(l).map_or("—".into(), |v| {
                let x = |o: Option<u64>| o.map_or("unlimited".into(), |n| n.to_string());
                format!("{} / {}", x(v.soft), x(v.hard))
            })
        });
    }
    let sysctls: BTreeSet<&String> = files.iter().flat_map(|f| f.system.sysctls.keys()).collect();
    for k in sysctls {
        row(k, &|f| {
            f.system
                .sysctls
                .get(k)
                .cloned()
                .unwrap_or_else(|| "—".into())
        });
    }
    row("scalebench", &|f| f.tool.version.clone());
    row("run started", &|f| f.started.clone());
    row("command", &|f| f.command_line.join(" "));
    rows
}

/// A series name as an HTML id or file name.
pub fn anchor(series: &str) -> String {
    series
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

impl Report for HtmlReport {
    fn write_history(
        &self,
        tracks: &[super::history::Track],
        out: &mut dyn Write,
    ) -> crate::Result<()> {
        super::history::write_html(tracks, out)
    }

    fn write(&self, input: &Input, out: &mut dyn Write) -> crate::Result<()> {
        let page = Page {
            input,
            labels: input.systems.iter().map(|s| s.label.as_str()).collect(),
        };
        page.write_head(out)?;
        page.write_summary(out)?;
        page.write_differences(out)?;
        page.write_settings(out)?;
        page.write_profiles(out)?;
        page.write_verdicts(out)?;
        let work = input.work_tables();
        if !work.is_empty() {
            writeln!(out, "<h2 id=\"workloads\">Workloads</h2>")?;
        }
        for t in work {
            WorkArticle::new(&page, t).write(out)?;
        }
        page.write_systems(out)?;
        if !input.entries.is_empty() {
            writeln!(out, "<h2 id=\"benchmarks\">Benchmarks</h2>")?;
        }
        for (k, series) in input.series_names().into_iter().enumerate() {
            page.write_benchmark(out, k, series)?;
        }
        page.write_footer(out)
    }
}

/// The report being written: its input and the systems' labels, in order
/// (a system's colour is its place among them).
struct Page<'a> {
    /// What the report shows.
    input: &'a Input<'a>,
    /// The systems' labels, in the order given.
    labels: Vec<&'a str>,
}

impl<'a> Page<'a> {
    /// The place of system `sys` among the systems (its colour).
    fn index(&self, sys: &str) -> usize {
        self.labels.iter().position(|l| *l == sys).unwrap_or(0)
    }

    /// The document's head, title, systems, notices, the guide to reading
    /// it, and a notice when there is nothing to show.
    fn write_head(&self, out: &mut dyn Write) -> crate::Result<()> {
        let input = self.input;
        writeln!(
            out,
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>scalebench report: {}</title><style>{STYLE}</style></head><body>",
            esc(&self.labels.join(", "))
        )?;
        writeln!(out, "<h1>scalebench report</h1>")?;
        writeln!(
            out,
            "<p class=\"sub\">{} — does the cost of each operation stay flat as n grows? Every sample of every run is drawn; a verdict names the growth class.</p>",
            self.labels
                .iter()
                .enumerate()
                .map(|(i, l)| format!(
                    "<span class=\"swatch\" style=\"background:{}\"></span>{}",
                    colour(i),
                    esc(l)
                ))
                .collect::<Vec<_>>()
                .join(" &nbsp; ")
        )?;
        for n in &input.notices {
            writeln!(out, "<p class=\"notice\">{}</p>", esc(n))?;
        }
        for s in input.systems {
            if let Some(w) = s.file.system.tuning.busy_warning() {
                writeln!(
                    out,
                    "<p class=\"notice\">{}: {}</p>",
                    esc(&s.label),
                    esc(&w)
                )?;
            }
        }
        for (who, w) in super::emulation_warnings(input.systems) {
            writeln!(out, "<p class=\"notice\">{}: {}</p>", esc(&who), esc(&w))?;
        }
        writeln!(
            out,
            "<p class=\"howto\"><b>How to read it.</b> n is how many resources (descriptors, processes, mappings, connections) were held when an operation was timed. Each chart plots every timed operation: x = n, y = its time; colour = system, and the darker a spot the more operations took that time at that n (every one counts; where they are dense, single ones are a faint pixel, and one far from any other gets a ring; where they are few, each is a small square; where two systems overlap, their colours mix darker); the solid line is the median at each n, the thin dashed ones each run's own median (one that strays is a run that differs), the dark dashed one the fitted model. The <b>class</b> says how the cost grows with n: <span class=\"class k0\">O(1)</span> stays flat, <span class=\"class k1\">O(log n)</span> grows slowly, <span class=\"class k2\">O(n)</span> grows in proportion, <span class=\"class k3\">O(n log n)</span> and <span class=\"class k4\">O(n^2)</span> faster; the percentage is how sure the analysis is. Flags name what a class does not say: a <i>step</i> between plateaus, a <i>bimodal</i> second slower curve, a <i>slope change</i>.</p>"
        )?;
        if input.entries.is_empty() && input.work_tables().is_empty() {
            writeln!(
                out,
                "<p class=\"notice\">No benchmark results in the input.</p>"
            )?;
        }
        Ok(())
    }

    /// What differs between the systems, against the first (with several
    /// systems).
    fn write_differences(&self, out: &mut dyn Write) -> crate::Result<()> {
        if self.input.systems.len() <= 1 {
            return Ok(());
        }
        let diffs = &self.input.differences;
        writeln!(
            out,
            "<h2 id=\"differences\">What differs (against {})</h2>",
            esc(self.labels[0])
        )?;
        for b in &self.input.basis {
            writeln!(out, "<p class=\"notice basis\">{}</p>", esc(b))?;
        }
        if diffs.is_empty() {
            let input = self.input;
            let first = input.measured_of(self.labels[0]);
            let classes_only = input.systems[1..].iter().any(|s| {
                super::Basis::of(first, input.measured_of(&s.label)) == super::Basis::Mixed
            });
            if classes_only {
                writeln!(
                    out,
                    "<p>No notable differences: same classes (costs not compared).</p>"
                )?;
            } else {
                writeln!(
                    out,
                    "<p>No notable differences: same classes, costs within {:.0} %.</p>",
                    (diff::NOTABLE - 1.0) * 100.0
                )?;
            }
            return Ok(());
        }
        writeln!(out, "<ul class=\"diffs\">")?;
        for d in diffs {
            writeln!(
                out,
                "<li data-kind=\"{}\"><a href=\"#{}\">{}</a></li>",
                serde_json::to_value(d.kind)?.as_str().unwrap_or(""),
                anchor(&d.series),
                esc(&d.text)
            )?;
        }
        writeln!(out, "</ul>")?;
        Ok(())
    }

    /// The table of settings whose values differ between the systems.
    fn write_settings(&self, out: &mut dyn Write) -> crate::Result<()> {
        let rows = &self.input.settings;
        if rows.is_empty() && self.input.kernel_config.is_none() {
            return Ok(());
        }
        writeln!(
            out,
            "<h2 id=\"settings\">Settings that differ</h2><table class=\"settings\"><tr><th>setting</th>"
        )?;
        for l in &self.labels {
            write!(out, "<th>{}</th>", esc(l))?;
        }
        writeln!(out, "</tr>")?;
        for r in rows {
            write!(out, "<tr><td>{}</td>", esc(&r.name))?;
            for v in &r.values {
                write!(out, "<td>{}</td>", esc(v.as_deref().unwrap_or("—")))?;
            }
            writeln!(out, "</tr>")?;
        }
        writeln!(out, "</table>")?;
        if let Some(k) = &self.input.kernel_config {
            self.write_config(out, k)?;
        }
        Ok(())
    }

    /// The kernel build options that differ: a count per system, and every
    /// option by name inside a `<details>`.
    fn write_config(
        &self,
        out: &mut dyn Write,
        k: &super::settings::ConfigDiff,
    ) -> crate::Result<()> {
        writeln!(
            out,
            "<h3 id=\"kernel-config\">Kernel build configuration</h3><ul class=\"config\">"
        )?;
        for line in k.summaries(&self.labels) {
            writeln!(out, "<li>{}</li>", esc(&line))?;
        }
        writeln!(
            out,
            "</ul><details class=\"config\"><summary>{} options differ, by name</summary><table class=\"config\"><tr><th>option</th>",
            fmt_n(k.options.len() as f64)
        )?;
        for l in &self.labels {
            write!(out, "<th>{}</th>", esc(l))?;
        }
        writeln!(out, "</tr>")?;
        for r in &k.options {
            write!(out, "<tr><td>{}</td>", esc(&r.name))?;
            for i in 0..self.labels.len() {
                write!(out, "<td>{}</td>", esc(k.value(r, i)))?;
            }
            writeln!(out, "</tr>")?;
        }
        writeln!(out, "</table></details>")?;
        Ok(())
    }

    /// Each system's tuning profile and what became of its changes.
    fn write_profiles(&self, out: &mut dyn Write) -> crate::Result<()> {
        for s in self.input.systems {
            let Some(p) = &s.file.profile else { continue };
            writeln!(
                out,
                "<h3 class=\"profile\">Profile of {}</h3><p>{}</p><ul class=\"profile\">",
                esc(&s.label),
                esc(&super::settings::summary(p))
            )?;
            for (c, line) in p.changes.iter().zip(p.lines(false)) {
                writeln!(
                    out,
                    "<li data-status=\"{}\">{}</li>",
                    serde_json::to_value(c.status)?.as_str().unwrap_or(""),
                    esc(&line)
                )?;
            }
            writeln!(out, "</ul>")?;
        }
        Ok(())
    }

    /// The answer first: per system, how many series stay flat, which grow
    /// and how many differences against the baseline name it.
    fn write_summary(&self, out: &mut dyn Write) -> crate::Result<()> {
        if self.input.entries.is_empty() {
            return Ok(());
        }
        writeln!(out, "<h2 id=\"summary\">Summary</h2><ul class=\"summary\">")?;
        let base = self.labels.first().copied().unwrap_or_default();
        for s in super::summaries(self.input) {
            let against = if s.system == base || self.labels.len() < 2 {
                String::new()
            } else {
                format!(
                    "; <a href=\"#differences\">{} difference{} against {}</a>",
                    s.differences,
                    if s.differences == 1 { "" } else { "s" },
                    esc(base)
                )
            };
            writeln!(out, "<li>{}{against}</li>", esc(&s.sentence()))?;
        }
        writeln!(out, "</ul>")?;
        Ok(())
    }

    /// The verdict table: a row per benchmark series, a column per system.
    fn write_verdicts(&self, out: &mut dyn Write) -> crate::Result<()> {
        let input = self.input;
        if input.entries.is_empty() {
            return Ok(());
        }
        writeln!(
            out,
            "<h2 id=\"verdicts\">Verdicts</h2><table class=\"verdicts\"><tr><th>benchmark</th>"
        )?;
        for l in &self.labels {
            writeln!(out, "<th>{}</th>", esc(l))?;
        }
        writeln!(out, "</tr>")?;
        for series in input.series_names() {
            write!(
                out,
                "<tr class=\"verdict\" data-series=\"{}\"><td><a href=\"#{}\">{}</a></td>",
                esc(series),
                anchor(series),
                esc(series)
            )?;
            for l in &self.labels {
                match input.of_series(series).find(|e| e.system == *l) {
                    Some(e) => verdict_cell(out, e)?,
                    None => write!(out, "<td class=\"sub\">not run</td>")?,
                }
            }
            writeln!(out, "</tr>")?;
        }
        writeln!(out, "</table>")?;
        if let Some(note) = emulated_note(input.entries.iter().map(|e| (e.emulated, e.cost))) {
            writeln!(out, "<p class=\"sub emulated\">{}</p>", esc(&note))?;
        }
        Ok(())
    }

    /// The system table, rows that differ between the systems highlighted.
    fn write_systems(&self, out: &mut dyn Write) -> crate::Result<()> {
        let files: Vec<&ResultFile> = self.input.systems.iter().map(|s| &s.file).collect();
        if files.is_empty() {
            return Ok(());
        }
        writeln!(
            out,
            "<h2 id=\"systems\">Systems</h2><table class=\"systems\"><tr><th></th>"
        )?;
        for l in &self.labels {
            writeln!(out, "<th>{}</th>", esc(l))?;
        }
        writeln!(out, "</tr>")?;
        for (name, vals) in system_rows(&files) {
            let differs = vals.iter().any(|v| v != &vals[0]);
            write!(
                out,
                "<tr{}><td>{}</td>",
                if differs && vals.len() > 1 {
                    " class=\"differs\""
                } else {
                    ""
                },
                esc(&name)
            )?;
            for v in vals {
                write!(out, "<td>{}</td>", esc(&v))?;
            }
            writeln!(out, "</tr>")?;
        }
        writeln!(
            out,
            "</table><p class=\"sub\">Highlighted rows differ between the systems.</p>"
        )?;
        Ok(())
    }

    /// The article of the `k`-th benchmark series: what is timed, its
    /// chart (linear and logarithmic), each system's verdict in words and
    /// call-stack profile.
    fn write_benchmark(&self, out: &mut dyn Write, k: usize, series: &str) -> crate::Result<()> {
        let entries: Vec<&Entry> = self.input.of_series(series).collect();
        let what = entries
            .iter()
            .find_map(|e| e.bench)
            .map(|b| (b.n_meaning.clone(), b.timed.clone()));
        writeln!(
            out,
            "<article class=\"bench\" id=\"{}\" data-series=\"{}\"><h3>{}</h3>",
            anchor(series),
            esc(series),
            esc(series)
        )?;
        if let Some((n, t)) = &what {
            writeln!(
                out,
                "<p class=\"what\">timed: {} · n = {}</p>",
                esc(t),
                esc(n)
            )?;
        }
        let data: Vec<Series> = entries
            .iter()
            .map(|e| series_of(e, self.index(e.system)))
            .collect();
        let has_samples = data.iter().any(|s| s.runs.iter().any(|r| !r.is_empty()));
        if has_samples {
            let x_label = what.as_ref().map_or("n", |w| w.0.as_str());
            write_scales(out, &k.to_string(), series, x_label, &data)?;
            let pairs = super::pairs::of_series(self.input, series);
            if !pairs.is_empty() {
                self.write_pair_chart(out, k, series, x_label, &pairs)?;
            }
        }
        writeln!(out, "<ul class=\"words\">")?;
        for e in &entries {
            writeln!(out, "{}", verdict_words(e, self.index(e.system)))?;
        }
        writeln!(out, "</ul>")?;
        if let Some(note) = emulated_note(entries.iter().map(|e| (e.emulated, e.cost))) {
            writeln!(out, "<p class=\"sub emulated\">{}</p>", esc(&note))?;
        }
        let monitors: Vec<(&str, &Monitor)> = entries
            .iter()
            .filter_map(|e| Some((e.system, e.bench?.monitor.as_ref()?)))
            .collect();
        let many = self.labels.len() > 1;
        write_monitors(out, &format!("m{k}"), series, &monitors, many)?;
        for e in &entries {
            write_profile(out, e, &format!("p{k}-{}", self.index(e.system)))?;
        }
        writeln!(out, "</article>")?;
        Ok(())
    }

    /// A variant and the series it varies on one chart, per system, with
    /// the ratio of their costs in words.
    fn write_pair_chart(
        &self,
        out: &mut dyn Write,
        k: usize,
        series: &str,
        x_label: &str,
        pairs: &[&super::pairs::Pair],
    ) -> crate::Result<()> {
        let labels = pair_labels(pairs, self.labels.len() > 1);
        let data = pair_series(self.input, pairs, &labels);
        writeln!(out, "<ul class=\"words pair\">")?;
        for p in pairs {
            writeln!(out, "<li>{}</li>", esc(&p.text))?;
        }
        writeln!(out, "</ul>")?;
        write_scales(out, &format!("{k}p"), series, x_label, &data)?;
        Ok(())
    }

    /// The closing line: version, files, series and incomplete ones.
    fn write_footer(&self, out: &mut dyn Write) -> crate::Result<()> {
        let input = self.input;
        let failed = input
            .entries
            .iter()
            .filter(|e| {
                matches!(
                    e.status,
                    Some(Status::Failed | Status::Unsupported | Status::Interrupted)
                )
            })
            .count();
        writeln!(
            out,
            "<p class=\"sub\">Generated by scalebench {} from {} result file(s); {} series, {} without a complete run. Method: docs/analysis.md.</p></body></html>",
            env!("CARGO_PKG_VERSION"),
            input.systems.len(),
            input.series_names().len(),
            failed
        )?;
        Ok(())
    }
}

/// A verdict's cost against n in a few pixels: its buckets' medians as a
/// line, n on a linear axis and the cost from zero, so that a flat series
/// draws flat and a growing one rises (the chart below has every sample).
fn sparkline(v: &Verdict) -> String {
    const W: f64 = 80.0;
    const H: f64 = 20.0;
    let b = &v.buckets;
    let (Some(first), Some(last)) = (b.first(), b.last()) else {
        return String::new();
    };
    let top = b.iter().map(|x| x.median).fold(0.0, f64::max);
    let span = (last.n - first.n).max(f64::MIN_POSITIVE);
    if b.len() < 2 || top <= 0.0 {
        return String::new();
    }
    let points: Vec<String> = b
        .iter()
        .map(|x| {
            let px = (x.n - first.n) / span * W;
            let py = H - x.median / top * (H - 1.0);
            format!("{px:.1},{py:.1}")
        })
        .collect();
    format!(
        "<svg class=\"spark\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" role=\"img\" aria-label=\"cost against n\"><polyline fill=\"none\" stroke=\"currentColor\" points=\"{}\"/></svg><br>",
        points.join(" ")
    )
}

/// One system's cell of the verdict table: class, the two ends, the rise
/// and the flags, or why there is no verdict.
fn verdict_cell(out: &mut dyn Write, e: &Entry) -> std::io::Result<()> {
    let mark = if e.emulated { EMULATED_MARK } else { "" };
    match &e.verdict {
        Ok(v) => write!(
            out,
            "<td>{}{}<br>{}{mark} → {}{mark} (×{:.2})<br>rise {}{}</td>",
            sparkline(v),
            class_cell(v),
            e.cost.fmt(v.low.ns),
            e.cost.fmt(v.high.ns),
            v.ratio(),
            esc(&super::terminal::rise_cell(v)),
            match flags_counted(e) {
                f if f.is_empty() => String::new(),
                f => format!("<br><span class=\"flags\">{}</span>", esc(&f)),
            }
        ),
        Err(m) => write!(out, "<td class=\"flags\">{}</td>", esc(m)),
    }
}

/// What the system did while `what` ran, a monitor chart per system
/// (`(system, monitor)`), folded under a heading that says what they are.
fn write_monitors(
    out: &mut dyn Write,
    id: &str,
    what: &str,
    monitors: &[(&str, &Monitor)],
    many: bool,
) -> std::io::Result<()> {
    let charts: Vec<(&str, String)> = monitors
        .iter()
        .enumerate()
        .filter_map(|(i, (system, m))| {
            let title = super::monitor::title(what, system, many);
            Some((
                *system,
                super::monitor::monitor_svg(&format!("{id}-{i}"), &title, m)?,
            ))
        })
        .collect();
    if charts.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "<details class=\"monitor\" open><summary>What the system did meanwhile (sampled every {} s)</summary>",
        chart::num(monitors[0].1.interval_s)
    )?;
    for (system, svg) in charts {
        writeln!(
            out,
            "<figure class=\"monitor\" data-system=\"{}\">{svg}</figure>",
            esc(system)
        )?;
    }
    writeln!(out, "</details>")
}

/// The `k`-th benchmark's chart twice, on a linear and on a logarithmic
/// time axis, with the radio buttons that switch between them.
fn write_scales(
    out: &mut dyn Write,
    k: &str,
    series: &str,
    x_label: &str,
    data: &[Series],
) -> std::io::Result<()> {
    let lin = chart::svg(
        &Chart {
            id: &format!("c{k}l"),
            name: series,
            x_label,
            log_y: false,
        },
        data,
    );
    let log = chart::svg(
        &Chart {
            id: &format!("c{k}g"),
            name: series,
            x_label,
            log_y: true,
        },
        data,
    );
    writeln!(
        out,
        "<div class=\"scale\"><input type=\"radio\" class=\"lin\" name=\"s{k}\" id=\"s{k}l\" checked><label for=\"s{k}l\">linear time axis</label><input type=\"radio\" class=\"log\" name=\"s{k}\" id=\"s{k}g\"><label for=\"s{k}g\">logarithmic</label><div class=\"lin-view\">{lin}</div><div class=\"log-view\">{log}</div></div>"
    )
}

/// The article of one workload: its table, messages, throughput over time
/// per phase, and its sweeps' verdicts and charts.
struct WorkArticle<'a> {
    /// The report it is part of.
    page: &'a Page<'a>,
    /// The workload.
    t: &'a WorkTable<'a>,
    /// Whether there are several systems.
    many: bool,
    /// Who ran each row, in order of first appearance: one colour each
    /// when the workload ran on several targets.
    whos: Vec<String>,
}

impl<'a> WorkArticle<'a> {
    /// The article of `t` in `page`.
    fn new(page: &'a Page<'a>, t: &'a WorkTable<'a>) -> WorkArticle<'a> {
        let many = page.input.systems.len() > 1;
        let mut whos: Vec<String> = Vec::new();
        for l in &t.lines {
            let w = l.who(many);
            if !whos.contains(&w) {
                whos.push(w);
            }
        }
        WorkArticle {
            page,
            t,
            many,
            whos,
        }
    }

    /// The colour of a row: its system's, or its system and target's when
    /// the workload ran on several targets.
    fn tint(&self, l: &WorkLine) -> &'static str {
        if l.target.is_some() {
            colour(
                self.whos
                    .iter()
                    .position(|w| *w == l.who(self.many))
                    .unwrap_or(0),
            )
        } else {
            colour(self.page.index(l.system))
        }
    }

    /// The length of a row's bar, 0 to 1: req/s against the best, or a
    /// phase's time against the slowest of the same phase (longer is
    /// slower).
    fn bar(&self, l: &WorkLine) -> f64 {
        let t = self.t;
        let Some(r) = l.row else { return 0.0 };
        if let Some(p) = &r.phase {
            let worst = t
                .lines
                .iter()
                .filter(|o| o.label == l.label)
                .filter_map(|o| o.row?.phase.as_ref().map(|p| p.seconds))
                .fold(0.0, f64::max);
            return if worst > 0.0 { p.seconds / worst } else { 0.0 };
        }
        let top = t
            .lines
            .iter()
            .filter_map(|l| l.row?.load.as_ref().map(|s| s.requests_per_s))
            .fold(0.0, f64::max);
        r.load.as_ref().map_or(0.0, |s| {
            if top > 0.0 {
                s.requests_per_s / top
            } else {
                0.0
            }
        })
    }

    /// The whole article.
    fn write(&self, out: &mut dyn Write) -> crate::Result<()> {
        self.write_table(out)?;
        for m in &self.t.messages {
            writeln!(out, "<p class=\"flags\">{}</p>", esc(m))?;
        }
        // Throughput of a guest: requests per guest second, which under
        // instruction counting is per 10^9 instructions: the time note.
        let time = units::Cost::Time;
        if let Some(note) = emulated_note(self.t.lines.iter().map(|l| (l.emulated, time))) {
            writeln!(out, "<p class=\"sub emulated\">{}</p>", esc(&note))?;
        }
        self.write_phase_charts(out)?;
        self.write_sweeps(out)?;
        let id = format!("m-{}", anchor(self.t.name));
        write_monitors(out, &id, self.t.name, &self.t.monitors, self.many)?;
        writeln!(out, "</article>")?;
        Ok(())
    }

    /// The article's opening and its table: a line per row and system,
    /// the first figure with its bar.
    fn write_table(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let t = self.t;
        let who_head = t.who_head(self.many);
        writeln!(
            out,
            "<article class=\"workload\" id=\"{}\" data-workload=\"{}\"><h3>{}</h3><p class=\"what\">{}</p><table class=\"workloads\"><tr><th>row</th><th>{who_head}</th>",
            anchor(t.name),
            esc(t.name),
            esc(t.name),
            esc(t.what)
        )?;
        for c in t.columns {
            write!(out, "<th>{}</th>", esc(c))?;
        }
        writeln!(out, "</tr>")?;
        for l in &t.lines {
            let who = l.who(self.many);
            write!(
                out,
                "<tr data-row=\"{}\" data-system=\"{}\"{}><td>{}</td><td><span class=\"swatch\" style=\"background:{}\"></span>{}</td>",
                esc(l.label),
                esc(l.system),
                l.target
                    .map_or(String::new(), |tg| format!(" data-target=\"{}\"", esc(tg))),
                esc(l.label),
                self.tint(l),
                esc(&who)
            )?;
            match l.cells() {
                Ok(cells) => {
                    let width = self.bar(l) * 100.0;
                    for (i, c) in cells.iter().enumerate() {
                        if i == 0 {
                            write!(
                                out,
                                "<td class=\"num\"><span class=\"bar\" style=\"width:{width:.0}px;background:{}\"></span> {}</td>",
                                self.tint(l),
                                esc(c)
                            )?;
                        } else {
                            write!(out, "<td class=\"num\">{}</td>", esc(c))?;
                        }
                    }
                }
                Err(e) => write!(
                    out,
                    "<td colspan=\"{}\" class=\"flags\">{}</td>",
                    t.columns.len(),
                    esc(&e)
                )?,
            }
            writeln!(out, "</tr>")?;
        }
        writeln!(out, "</table>")
    }

    /// Throughput over time, a chart per phase that has a curve.
    fn write_phase_charts(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let t = self.t;
        let mut labels_done: Vec<&str> = Vec::new();
        for l in &t.lines {
            if labels_done.contains(&l.label) {
                continue;
            }
            labels_done.push(l.label);
            let lines: Vec<(String, &WorkLine, &results::PhaseStats)> = t
                .lines
                .iter()
                .filter(|o| o.label == l.label)
                .filter_map(|o| {
                    let p = o.row?.phase.as_ref()?;
                    (!p.throughput.is_empty()).then(|| (o.who(self.many), o, p))
                })
                .collect();
            if lines.is_empty() {
                continue;
            }
            let unit = lines[0].2.unit.clone();
            let chart_lines: Vec<chart::Line> = lines
                .iter()
                .map(|(who, o, p)| chart::Line {
                    label: who,
                    colour: self.tint(o),
                    points: p.throughput.iter().map(|s| (s[0], s[1])).collect(),
                })
                .collect();
            let id = format!("{}-{}", anchor(t.name), anchor(l.label));
            writeln!(
                out,
                "<figure class=\"phase\" data-phase=\"{}\">{}</figure>",
                esc(l.label),
                chart::lines_svg(
                    &id,
                    &format!("{}: {} — {unit} per second over time", t.name, l.label),
                    "seconds since the phase started",
                    &format!("{unit}/s"),
                    &chart_lines
                )
            )?;
        }
        Ok(())
    }

    /// Sweeps: the verdict of each (and its failures), then figure,
    /// per-unit and load × frequency against the level, systems overlaid.
    fn write_sweeps(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let t = self.t;
        let mut sweeps_done: Vec<&str> = Vec::new();
        for l in &t.lines {
            let Some((sw, v)) = l.sweep() else {
                continue;
            };
            writeln!(
                out,
                "<p class=\"sweep\"><b>{}</b> — {} against {}: {}</p>",
                esc(&format!("{} · {}", l.label, l.who(self.many))),
                esc(&sw.unit),
                esc(&sw.variable),
                esc(&v.words)
            )?;
            write_failures(out, sw)?;
            if sweeps_done.contains(&l.label) {
                continue;
            }
            sweeps_done.push(l.label);
        }
        for label in sweeps_done {
            for c in super::sweep_charts(t, label, self.many) {
                let id = format!("{}-{}-{}", anchor(t.name), anchor(label), c.key);
                writeln!(
                    out,
                    "<figure class=\"sweep\" data-sweep=\"{}\">{}</figure>",
                    esc(label),
                    c.svg(&id, |_, system| colour(self.page.index(system)))
                )?;
            }
        }
        Ok(())
    }
}

/// The failures of a sweep: a sentence when there is one kind, else a
/// table by kind and level.
fn write_failures(out: &mut dyn Write, sw: &results::SweepStats) -> std::io::Result<()> {
    match super::sweep_failures(sw) {
        Some(rows) if rows.len() == 1 => {
            writeln!(out, "<p class=\"failures\">{}</p>", esc(&rows[0][0]))?;
        }
        Some(rows) => {
            write!(out, "<table class=\"failures\">")?;
            for (i, r) in rows.iter().enumerate() {
                let tag = if i == 0 { "th" } else { "td" };
                write!(out, "<tr>")?;
                for c in r {
                    write!(out, "<{tag}>{}</{tag}>", esc(c))?;
                }
                write!(out, "</tr>")?;
            }
            writeln!(out, "</table>")?;
        }
        None => {}
    }
    Ok(())
}
