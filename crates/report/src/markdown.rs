//! Verdicts as a Markdown table, the differences as a list and, with an
//! SVG directory, a chart per benchmark written there and linked.

use super::chart::{self, Chart};
use super::html::{anchor, chart_series};
use super::{EMULATED_MARK, EMULATED_NOTE, Input, Report, flags_counted};
use std::cell::RefCell;
use std::io::Write;
use std::path::PathBuf;

/// The Markdown writer.
pub struct MarkdownReport {
    /// Where chart SVG files go (none: no charts).
    pub svg_dir: Option<PathBuf>,
    /// The charts the report links, made while writing it: the caller
    /// writes them ([`Report::files`]), under the output rules.
    pub charts: RefCell<Vec<(PathBuf, String)>>,
}

impl MarkdownReport {
    /// A writer whose charts go into `svg_dir` (none: no charts).
    pub fn new(svg_dir: Option<PathBuf>) -> MarkdownReport {
        MarkdownReport {
            svg_dir,
            charts: RefCell::new(Vec::new()),
        }
    }

    /// Keeps a chart to be written as `dir/stem.svg` (`stem-2.svg`, … when
    /// another chart of this report has that name); returns its path.
    fn attach(&self, dir: &std::path::Path, stem: &str, svg: String) -> PathBuf {
        let mut charts = self.charts.borrow_mut();
        let mut file = dir.join(format!("{stem}.svg"));
        let mut k = 2;
        while charts.iter().any(|(p, _)| *p == file) {
            file = dir.join(format!("{stem}-{k}.svg"));
            k += 1;
        }
        charts.push((file.clone(), svg));
        file
    }
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

impl MarkdownReport {
    /// Each sweep of a workload table: its verdict and level table, and
    /// (with an SVG directory) its charts.
    fn write_sweeps(
        &self,
        t: &super::WorkTable,
        many: bool,
        out: &mut dyn Write,
    ) -> crate::Result<()> {
        let mut labels: Vec<&str> = Vec::new();
        for l in &t.lines {
            let Some((sw, v)) = l.sweep() else {
                continue;
            };
            writeln!(
                out,
                "\n**{} · {}** — {} against {}: {}\n",
                cell(l.label),
                cell(&l.who(many)),
                cell(&sw.unit),
                cell(&sw.variable),
                cell(&v.words)
            )?;
            let mut heads = super::SWEEP_COLUMNS;
            heads[0] = &sw.variable;
            heads[1] = &sw.unit;
            if sw.knee_on == "figure" {
                heads[2] = "vs base";
            }
            writeln!(out, "| {} |", heads.map(cell).join(" | "))?;
            writeln!(out, "|{}", "---:|".repeat(heads.len()))?;
            for c in super::sweep_levels(sw, v) {
                writeln!(out, "| {} |", c.map(|x| cell(&x)).join(" | "))?;
            }
            if let Some(rows) = super::sweep_failures(sw) {
                writeln!(out)?;
                if rows.len() == 1 {
                    writeln!(out, "{}", cell(&rows[0][0]))?;
                }
                for (i, r) in rows.iter().enumerate().filter(|_| rows.len() > 1) {
                    let cells: Vec<String> = r.iter().map(|x| cell(x)).collect();
                    writeln!(out, "| {} |", cells.join(" | "))?;
                    if i == 0 {
                        writeln!(out, "|---|{}", "---:|".repeat(r.len() - 1))?;
                    }
                }
            }
            if !labels.contains(&l.label) {
                labels.push(l.label);
            }
        }
        let Some(dir) = &self.svg_dir else {
            return Ok(());
        };
        for label in labels {
            for (i, c) in super::sweep_charts(t, label, many).into_iter().enumerate() {
                let id = format!("{}-{}-{}", anchor(t.name), anchor(label), c.key);
                let file = self.attach(
                    dir,
                    &id,
                    c.svg(&id, |k, _| chart::PALETTE[k % chart::PALETTE.len()]),
                );
                writeln!(
                    out,
                    "{}![{}]({})",
                    if i == 0 { "\n" } else { "" },
                    cell(&c.title),
                    file.display()
                )?;
            }
        }
        Ok(())
    }
}

impl Report for MarkdownReport {
    fn write_comparison(
        &self,
        c: &super::compare::Comparison,
        out: &mut dyn Write,
    ) -> crate::Result<()> {
        super::compare::write_markdown(c, out)
    }

    fn write_history(
        &self,
        tracks: &[super::history::Track],
        out: &mut dyn Write,
    ) -> crate::Result<()> {
        super::history::write_markdown(tracks, out)
    }

    fn files(&self) -> Vec<(PathBuf, String)> {
        self.charts.borrow().clone()
    }

    fn write(&self, input: &Input, out: &mut dyn Write) -> crate::Result<()> {
        self.charts.borrow_mut().clear();
        write_system_notes(input, out)?;
        write_verdicts(input, out)?;
        let many = input.systems.len() > 1;
        for t in input.work_tables() {
            write_work_table(t, many, out)?;
            self.write_sweeps(t, many, out)?;
        }
        write_pairs(input, out)?;
        if many {
            write_differences(input, out)?;
        }
        write_profiles(input, out)?;
        if let Some(dir) = &self.svg_dir {
            self.write_charts(input, dir, out)?;
        }
        Ok(())
    }
}

impl MarkdownReport {
    /// With an SVG directory: a chart per benchmark series that has
    /// samples, kept to be written there and linked.
    fn write_charts(
        &self,
        input: &Input,
        dir: &std::path::Path,
        out: &mut dyn Write,
    ) -> crate::Result<()> {
        writeln!(out)?;
        for series in input.series_names() {
            let entries: Vec<_> = input.of_series(series).collect();
            let data = chart_series(input, &entries);
            if !data.iter().any(|s| s.runs.iter().any(|r| !r.is_empty())) {
                continue;
            }
            let x_label = entries
                .iter()
                .find_map(|e| e.bench)
                .map_or_else(|| "n".to_string(), |b| b.n_meaning.clone());
            let svg = chart::svg(
                &Chart {
                    id: series,
                    name: series,
                    x_label: &x_label,
                    log_y: false,
                },
                &data,
            );
            let file = self.attach(dir, &anchor(series), svg);
            writeln!(out, "![{series}]({})\n", file.display())?;
            // A variant with the series it varies, on one chart.
            let pairs = super::pairs::of_series(input, series);
            if !pairs.is_empty() {
                let labels = super::html::pair_labels(&pairs, input.systems.len() > 1);
                let data = super::html::pair_series(input, &pairs, &labels);
                let name = format!("{} with {series}", pairs[0].with);
                let id = format!("{}-with-{}", anchor(series), anchor(&pairs[0].with));
                let svg = chart::svg(
                    &Chart {
                        id: &id,
                        name: &name,
                        x_label: &x_label,
                        log_y: false,
                    },
                    &data,
                );
                let file = self.attach(dir, &id, svg);
                writeln!(out, "![{name}]({})\n", file.display())?;
            }
            let monitors: Vec<(&str, &results::Monitor)> = entries
                .iter()
                .filter_map(|e| Some((e.system, e.bench?.monitor.as_ref()?)))
                .collect();
            self.write_monitors(dir, series, &monitors, input.systems.len() > 1, out)?;
        }
        for t in input.work_tables() {
            self.write_monitors(dir, t.name, &t.monitors, input.systems.len() > 1, out)?;
        }
        Ok(())
    }

    /// The monitor charts of `what`, one per system, kept to be written
    /// in the SVG directory and linked.
    fn write_monitors(
        &self,
        dir: &std::path::Path,
        what: &str,
        monitors: &[(&str, &results::Monitor)],
        many: bool,
        out: &mut dyn Write,
    ) -> crate::Result<()> {
        for (i, (system, m)) in monitors.iter().enumerate() {
            let title = super::monitor::title(what, system, many);
            let stem = format!("{}-monitor-{i}", anchor(what));
            if let Some(svg) = super::monitor::monitor_svg(&stem, &title, m) {
                let file = self.attach(dir, &stem, svg);
                writeln!(out, "![{}]({})\n", title, file.display())?;
            }
        }
        Ok(())
    }
}

/// Per system: a warning when the machine was busy or emulated, and the
/// hosts.
fn write_system_notes(input: &Input, out: &mut dyn Write) -> std::io::Result<()> {
    for (who, w) in super::emulation_warnings(input.systems) {
        writeln!(out, "**Warning, {}:** {}\n", cell(&who), cell(&w))?;
    }
    for s in input.systems {
        if let Some(w) = s.file.system.tuning.busy_warning() {
            writeln!(out, "**Warning, {}:** {}\n", cell(&s.label), cell(&w))?;
        }
        if !s.file.hosts.is_empty() {
            let hosts: Vec<String> = s.file.hosts.iter().map(|h| cell(&h.summary())).collect();
            writeln!(out, "**Hosts, {}:** {}\n", cell(&s.label), hosts.join("; "))?;
        }
    }
    // What the other writers show as notices: a file that could not be
    // read, a variant without its series.
    for n in &input.notices {
        writeln!(out, "**Note:** {}\n", cell(n))?;
    }
    Ok(())
}

/// The verdict table: a row per series of each system (no table when the
/// input has only workloads).
fn write_verdicts(input: &Input, out: &mut dyn Write) -> std::io::Result<()> {
    let only_work = input.entries.is_empty() && !input.work_tables().is_empty();
    if !only_work {
        writeln!(
            out,
            "| system | benchmark | class | exponent | low | high | flags | verdict |"
        )?;
        writeln!(out, "|---|---|---|---|---|---|---|---|")?;
    }
    for e in &input.entries {
        let mark = if e.emulated { EMULATED_MARK } else { "" };
        let (class, exp, low, high, words) = match &e.verdict {
            Ok(v) => (
                v.class.label().to_string(),
                v.exponent.map_or("—".into(), |x| {
                    format!("{:.2} [{:.2}, {:.2}]", x.value, x.lo, x.hi)
                }),
                format!("{}{mark}", e.cost.fmt(v.low.ns)),
                format!("{}{mark}", e.cost.fmt(v.high.ns)),
                v.words_in(e.cost),
            ),
            Err(m) => ("—".into(), "—".into(), "—".into(), "—".into(), m.clone()),
        };
        writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            cell(e.system),
            cell(&e.series),
            cell(&class),
            exp,
            low,
            high,
            cell(&flags_counted(e)),
            cell(
                &[
                    Some(words),
                    e.maxima.as_ref().map(|m| m.summary()),
                    super::why_of(e)
                ]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join("; ")
            )
        )?;
    }
    if let Some(note) = super::emulated_note(input.entries.iter().map(|e| (e.emulated, e.cost))) {
        writeln!(out, "\n{note}")?;
    }
    Ok(())
}

/// A workload's table: a line per row and system, and its messages.
fn write_work_table(t: &super::WorkTable, many: bool, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "\n**{}** — {}\n", cell(t.name), cell(t.what))?;
    write!(out, "| row | {} |", t.who_head(many))?;
    for c in t.columns {
        write!(out, " {c} |")?;
    }
    writeln!(out, "\n|---|---|{}", "---:|".repeat(t.columns.len()))?;
    for l in &t.lines {
        write!(out, "| {} | {} |", cell(l.label), cell(&l.who(many)))?;
        match l.cells() {
            Ok(cells) => {
                for c in cells {
                    write!(out, " {} |", cell(&c))?;
                }
            }
            Err(e) => write!(out, " {} |{}", cell(&e), " |".repeat(t.columns.len() - 1))?,
        }
        writeln!(out)?;
    }
    for m in &t.messages {
        writeln!(out, "\n{}", cell(m))?;
    }
    if t.lines.iter().any(|l| l.emulated) {
        writeln!(out, "\n{EMULATED_MARK} {EMULATED_NOTE}")?;
    }
    Ok(())
}

/// Each variant against the series it varies, a line per system.
fn write_pairs(input: &Input, out: &mut dyn Write) -> std::io::Result<()> {
    if input.pairs.is_empty() {
        return Ok(());
    }
    writeln!(out, "\n### Variants against the series they vary\n")?;
    for p in &input.pairs {
        writeln!(out, "- {}", p.text)?;
    }
    Ok(())
}

/// What differs against the first system, and the settings that differ.
fn write_differences(input: &Input, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "\n**What differs** (against {}):\n",
        cell(&input.systems[0].label)
    )?;
    for b in &input.basis {
        writeln!(out, "> **Note:** {}\n", cell(b))?;
    }
    if input.differences.is_empty() {
        writeln!(out, "- nothing notable")?;
    }
    for d in &input.differences {
        writeln!(out, "- {}", d.text)?;
    }
    let rows = &input.settings;
    if rows.is_empty() && input.kernel_config.is_none() {
        return Ok(());
    }
    writeln!(out, "\n**Settings that differ:**\n")?;
    write!(out, "| setting |")?;
    for s in input.systems {
        write!(out, " {} |", cell(&s.label))?;
    }
    writeln!(out)?;
    writeln!(out, "|---|{}", "---|".repeat(input.systems.len()))?;
    for r in rows {
        write!(out, "| {} |", cell(&r.name))?;
        for v in &r.values {
            write!(out, " {} |", cell(v.as_deref().unwrap_or("—")))?;
        }
        writeln!(out)?;
    }
    if let Some(k) = &input.kernel_config {
        write_config(input, k, out)?;
    }
    Ok(())
}

/// The kernel build options that differ: a count per system, then the
/// first [`super::settings::CONFIG_SHOWN`] by name in the settings table's
/// columns.
fn write_config(
    input: &Input,
    k: &super::settings::ConfigDiff,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let labels: Vec<&str> = input.systems.iter().map(|s| s.label.as_str()).collect();
    writeln!(out, "\n**Kernel build configuration:**\n")?;
    for line in k.summaries(&labels) {
        writeln!(out, "- {}", cell(&line))?;
    }
    let shown = k.options.len().min(super::settings::CONFIG_SHOWN);
    writeln!(
        out,
        "\n{} by name{}:\n",
        if shown < k.options.len() {
            format!("The first {shown} of {} options", k.options.len())
        } else {
            "The options".to_string()
        },
        if shown < k.options.len() {
            " (all of them: `--format html` or `json`)"
        } else {
            ""
        }
    )?;
    write!(out, "| option |")?;
    for l in &labels {
        write!(out, " {} |", cell(l))?;
    }
    writeln!(out, "\n|---|{}", "---|".repeat(labels.len()))?;
    for r in &k.options[..shown] {
        write!(out, "| {} |", cell(&r.name))?;
        for i in 0..labels.len() {
            write!(out, " {} |", cell(k.value(r, i)))?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// Each system's tuning profile and what it changed.
fn write_profiles(input: &Input, out: &mut dyn Write) -> std::io::Result<()> {
    for s in input.systems {
        if let Some(p) = &s.file.profile {
            writeln!(
                out,
                "\n**Profile of {}:** {}\n",
                cell(&s.label),
                cell(&super::settings::summary(p))
            )?;
            for l in p.lines(false) {
                writeln!(out, "- {}", cell(&l))?;
            }
        }
    }
    Ok(())
}
