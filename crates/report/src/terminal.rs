//! The terminal summary: a verdict table that fits 100 columns, then one
//! line of words per series and its flags and caps.

use super::wrap::wrapped;
use super::{EMULATED_MARK, EMULATED_NOTE, Entry, Input, Report, flags_counted};
use analysis::Verdict;
use std::io::Write;
use units::fmt_n;

/// The terminal writer.
pub struct TerminalReport;

/// `s` for a column `w` wide: itself when it fits; else it is written
/// whole on a line of its own (after `indent`) and the column stays empty,
/// so that nothing is ever cut.
fn lead(out: &mut dyn Write, indent: &str, s: &str, w: usize) -> std::io::Result<String> {
    if s.chars().count() <= w {
        return Ok(s.to_string());
    }
    writeln!(out, "{indent}{s}")?;
    Ok(String::new())
}

/// Writes `line` with `text` after it, `text` wrapped at words to `width`
/// and its further lines starting at column `at`.
fn with_words(
    out: &mut dyn Write,
    line: &str,
    text: &str,
    at: usize,
    width: usize,
) -> std::io::Result<()> {
    let words = word_lines(text, " ", width);
    writeln!(
        out,
        "{}",
        format!("{line} {}", words.first().map_or("", String::as_str)).trim_end()
    )?;
    for w in words.iter().skip(1) {
        writeln!(out, "{:at$}{w}", "")?;
    }
    Ok(())
}

/// The column where a verdict row's flags start.
const FLAGS_AT: usize = 86;

/// The column where a verdict row's class starts.
const CLASS_AT: usize = 51;

/// Words (or `;`-separated flags) in lines of at most `width` characters,
/// never cutting one: a word longer than the width has a line to itself.
fn word_lines(text: &str, sep: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for w in text.split(sep).map(str::trim).filter(|w| !w.is_empty()) {
        match lines.last_mut() {
            Some(l) if l.chars().count() + sep.len() + w.chars().count() <= width => {
                l.push_str(sep);
                l.push_str(w);
            }
            _ => lines.push(w.to_string()),
        }
    }
    lines
}

/// A series' verdict row: one line, or more where its name, flags or
/// message need them (nothing is cut: a long name has a line of its own,
/// flags and messages go on under their column).
fn row(e: &Entry, show_system: bool) -> String {
    let name = if show_system {
        format!("{} {}", e.system, e.series)
    } else {
        e.series.clone()
    };
    let mut lines = Vec::new();
    let shown = if name.chars().count() > 20 {
        lines.push(name);
        String::new()
    } else {
        name
    };
    let n = fmt_n(e.n as f64);
    // An emulated system's costs are marked (the footnote follows the table).
    let mark = if e.emulated { EMULATED_MARK } else { "" };
    match &e.verdict {
        Ok(v) => {
            let flags = word_lines(&flags_counted(e), ";", 100 - FLAGS_AT);
            // A split label too wide for its column goes on under it at
            // its dash: "O(log n)–" then "O(n)".
            let label = v.class.label();
            let class: Vec<&str> = match label.find('–') {
                Some(at) if label.chars().count() > 11 => {
                    let cut = at + '–'.len_utf8();
                    vec![&label[..cut], &label[cut..]]
                }
                _ => vec![label],
            };
            lines.push(format!(
                "{:<20} {:>7} {:>9} → {:<9} {:<11} {:>4} {:<17} {}",
                shown,
                n,
                format!("{}{mark}", e.cost.fmt_short(v.low.ns)),
                format!("{}{mark}", e.cost.fmt_short(v.high.ns)),
                class[0],
                v.confidence
                    .map_or("?".to_string(), |c| format!("{:.0}%", c * 100.0)),
                rise_cell(v),
                flags.first().map_or("", String::as_str)
            ));
            for i in 1..flags.len().max(class.len()) {
                let f = flags.get(i).map_or("", String::as_str);
                match class.get(i) {
                    Some(c) => lines.push(format!(
                        "{:CLASS_AT$}{c:<w$}{f}",
                        "",
                        w = FLAGS_AT - CLASS_AT
                    )),
                    None => lines.push(format!("{:FLAGS_AT$}{f}", "")),
                }
            }
        }
        Err(m) => {
            let words = word_lines(m, " ", 71);
            lines.push(format!(
                "{:<20} {:>7} {}",
                shown,
                n,
                words.first().map_or("", String::as_str)
            ));
            for w in words.iter().skip(1) {
                lines.push(format!("{:29}{w}", ""));
            }
        }
    }
    lines
        .iter()
        .map(|l| l.trim_end())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The rise between the ends with its interval, compactly: `+8% [-4,+19]`,
/// or as factors when it is large: `×40 [×21,×55]`.
pub fn rise_cell(v: &Verdict) -> String {
    let r = v.rise;
    if r.hi >= 1.0 {
        let f = |x: f64| {
            let x = 1.0 + x;
            if x >= 10.0 {
                format!("×{x:.0}")
            } else {
                format!("×{x:.1}")
            }
        };
        format!("{} [{},{}]", f(r.value), f(r.lo), f(r.hi))
    } else {
        format!(
            "{:+.0}% [{:+.0},{:+.0}]",
            r.value * 100.0,
            r.lo * 100.0,
            r.hi * 100.0
        )
    }
}

/// A table of timed phases on several targets: phase and target in their
/// own columns, the cells sized for times and rates.
fn write_phases(out: &mut dyn Write, t: &super::WorkTable, many: bool) -> std::io::Result<()> {
    const W: [usize; 6] = [8, 15, 7, 7, 11, 8];
    let head = t.who_head(many);
    let mut h = format!("{:<26} {head:<18}", "phase");
    for (c, w) in t.columns.iter().zip(W) {
        h.push_str(&format!(" {c:>w$}"));
    }
    writeln!(out, "{}", h.trim_end())?;
    writeln!(out, "{}", "─".repeat(99))?;
    for l in &t.lines {
        let who = l.who(many);
        let (label, who) = if l.label.chars().count() > 26 || who.chars().count() > 18 {
            writeln!(out, "{} · {who}", l.label)?;
            (String::new(), String::new())
        } else {
            (l.label.to_string(), who)
        };
        let mut line = format!("{label:<26} {who:<18}");
        match l.cells() {
            Ok(cells) => {
                for (c, w) in cells.iter().zip(W) {
                    line.push_str(&format!(" {c:>w$}"));
                }
                writeln!(out, "{}", line.trim_end())?;
            }
            Err(e) => with_words(out, &line, &e, 46, 54)?,
        }
    }
    Ok(())
}

/// The workload tables: one line per row (and system), throughput and
/// latency in columns.
fn write_work(out: &mut dyn Write, input: &Input, many: bool) -> std::io::Result<()> {
    for t in input.work_tables() {
        writeln!(out)?;
        wrapped(out, "", &format!("{} — {}", t.name, t.what))?;
        if t.lines.iter().any(|l| l.target.is_some()) {
            write_phases(out, t, many)?;
        } else {
            let head = if many { "row / system" } else { "row" };
            let mut h = format!("{head:<34}");
            for c in t.columns {
                h.push_str(&format!(" {c:>9}"));
            }
            writeln!(out, "{}", h.trim_end())?;
            writeln!(out, "{}", "─".repeat(99))?;
            for l in &t.lines {
                let name = if many {
                    format!("{} · {}", l.label, l.who(many))
                } else {
                    l.label.to_string()
                };
                let mut line = format!("{:<34}", lead(out, "", &name, 34)?);
                match l.cells() {
                    Ok(cells) => {
                        for c in cells {
                            line.push_str(&format!(" {c:>9}"));
                        }
                        writeln!(out, "{}", line.trim_end())?;
                    }
                    Err(e) => with_words(out, &line, &e, 35, 64)?,
                }
            }
        }
        for l in &t.lines {
            if let Some(sw) = l.row.and_then(|r| r.sweep.as_ref()) {
                write_sweep(out, l, sw, many)?;
            }
        }
        for m in &t.messages {
            wrapped(out, "    ", m)?;
        }
        if t.lines.iter().any(|l| l.emulated) {
            wrapped(out, &format!("{EMULATED_MARK} "), EMULATED_NOTE)?;
        }
    }
    Ok(())
}

/// A sweep under its workload's table: the verdict in words, then one line
/// per level.
fn write_sweep(
    out: &mut dyn Write,
    l: &super::WorkLine,
    sw: &results::SweepStats,
    many: bool,
) -> std::io::Result<()> {
    let Some(v) = &l.verdict else {
        return Ok(());
    };
    let who = if many {
        format!("{} · {}", l.label, l.who(many))
    } else {
        l.label.to_string()
    };
    writeln!(out)?;
    wrapped(
        out,
        "  ",
        &format!("{who} — {} against {}: {}", sw.unit, sw.variable, v.words),
    )?;
    let mut cols = super::SWEEP_COLUMNS;
    cols[0] = &sw.variable;
    cols[1] = &sw.unit;
    if sw.knee_on == "figure" {
        cols[2] = "vs base";
    }
    writeln!(
        out,
        "    {:>11} {:>9} {:>8} {:>8} {:>8}  {}",
        cols[0], cols[1], cols[2], cols[3], cols[4], cols[5]
    )?;
    for c in super::sweep_levels(sw, v) {
        let line = format!(
            "    {:>11} {:>9} {:>8} {:>8} {:>8} ",
            c[0], c[1], c[2], c[3], c[4]
        );
        with_words(out, &line, &c[5], 54, 45)?;
    }
    if let Some(rows) = super::sweep_failures(sw) {
        writeln!(out)?;
        if rows.len() == 1 {
            writeln!(out, "    {}", rows[0][0])?;
        }
        for r in rows.iter().filter(|_| rows.len() > 1) {
            let mut line = format!("    {:<36}", lead(out, "    ", &r[0], 36)?);
            for c in &r[1..] {
                line.push_str(&format!(" {c:>9}"));
            }
            writeln!(out, "{}", line.trim_end())?;
        }
    }
    Ok(())
}

impl Report for TerminalReport {
    fn write_comparison(
        &self,
        c: &super::compare::Comparison,
        out: &mut dyn Write,
    ) -> crate::Result<()> {
        super::compare::write_terminal(c, out)
    }

    fn write_history(
        &self,
        tracks: &[super::history::Track],
        out: &mut dyn Write,
    ) -> crate::Result<()> {
        super::history::write_terminal(tracks, out)
    }

    fn write(&self, input: &Input, out: &mut dyn Write) -> crate::Result<()> {
        let many = input.systems.len() > 1;
        for s in input.systems {
            write_system(out, s)?;
        }
        for (who, w) in super::emulation_warnings(input.systems) {
            wrapped(out, "warning: ", &format!("{who}: {w}"))?;
        }
        writeln!(out)?;
        if input.entries.is_empty() && !input.systems.iter().all(|s| s.file.workloads.is_empty()) {
            write_work(out, input, many)?;
            return write_tail(out, input, many);
        }
        // Group by series so that systems sit next to each other.
        let mut order: Vec<&str> = Vec::new();
        for e in &input.entries {
            if !order.contains(&e.series.as_str()) {
                order.push(&e.series);
            }
        }
        let grouped = || {
            order
                .iter()
                .flat_map(|series| input.entries.iter().filter(move |e| e.series == *series))
        };
        write_table(out, grouped(), many)?;
        writeln!(out)?;
        for s in super::summaries(input) {
            wrapped(out, "", &s.sentence())?;
        }
        writeln!(out)?;
        for e in grouped() {
            write_words(out, e, many)?;
        }
        write_work(out, input, many)?;
        write_tail(out, input, many)
    }
}

/// A system's head line (OS, CPU, C library, timer), its hosts, a warning
/// when the machine was busy, and its tuning profile with the changes
/// refused.
fn write_system(out: &mut dyn Write, s: &super::System) -> std::io::Result<()> {
    let sys = &s.file.system;
    let head = format!(
        "{}: {} {} on {} ({} CPUs), {}, timer {}",
        s.label,
        sys.os,
        sys.os_release,
        sys.cpu.model.as_deref().unwrap_or("unknown CPU"),
        sys.cpu.count,
        sys.libc,
        match s.file.timer.kind {
            results::TimerKind::Monotonic => "CLOCK_MONOTONIC".to_string(),
            results::TimerKind::Tsc =>
                format!("TSC {:.0} MHz", s.file.timer.tsc_hz.unwrap_or(0.0) / 1e6),
        }
    );
    wrapped(out, "", &head)?;
    for h in &s.file.hosts {
        wrapped(out, "    ", &h.summary())?;
    }
    if let Some(w) = sys.tuning.busy_warning() {
        wrapped(out, "    warning: ", &w)?;
    }
    if let Some(p) = &s.file.profile {
        wrapped(
            out,
            "    ",
            &format!("profile {}", super::settings::summary(p)),
        )?;
        for c in p
            .changes
            .iter()
            .filter(|c| c.status == results::ChangeStatus::Refused)
        {
            wrapped(
                out,
                "      ",
                &format!(
                    "refused: {} {} — {}",
                    c.kind,
                    c.name,
                    c.reason.as_deref().unwrap_or("")
                ),
            )?;
        }
    }
    Ok(())
}

/// The verdict table: its head, then a row per entry.
fn write_table<'e, 'a: 'e>(
    out: &mut dyn Write,
    entries: impl Iterator<Item = &'e Entry<'a>>,
    many: bool,
) -> std::io::Result<()> {
    writeln!(
        out,
        "{:<20} {:>7} {:>9}   {:<9} {:<11} {:>4} {:<17} flags",
        if many {
            "system benchmark"
        } else {
            "benchmark"
        },
        "n",
        "low n",
        "high n",
        "class",
        "conf",
        "rise [90% CI]"
    )?;
    writeln!(out, "{}", "─".repeat(99))?;
    let mut measured = Vec::new();
    for e in entries {
        writeln!(out, "{}", row(e, many))?;
        measured.push((e.emulated, e.cost));
    }
    if let Some(note) = super::emulated_note(measured) {
        let (mark, words) = note.split_once(' ').unwrap_or((EMULATED_MARK, &note));
        wrapped(out, &format!("{mark} "), words)?;
    }
    Ok(())
}

/// An entry's verdict in words, with its details, flags, why it grows,
/// and the limits that capped it.
fn write_words(out: &mut dyn Write, e: &Entry, many: bool) -> std::io::Result<()> {
    let who = if many {
        format!("{} {}", e.system, e.series)
    } else {
        e.series.clone()
    };
    let who = if e.emulated { who + EMULATED_MARK } else { who };
    match &e.verdict {
        Ok(v) => {
            let alt = v
                .alternative
                .map_or(String::new(), |c| format!(" ({c} fits about as well)"));
            wrapped(out, "", &format!("{who} — {}{alt}", v.words_in(e.cost)))?;
            wrapped(out, "    ", &super::details(v, e.cost))?;
            for f in &v.flags {
                wrapped(out, "    ", &f.describe_in(e.cost))?;
            }
            if let Some(m) = &e.maxima {
                wrapped(out, "    ", &m.summary())?;
            }
            if let Some(w) = super::why_of(e) {
                wrapped(out, "    ", &w)?;
            }
        }
        Err(m) => wrapped(out, "", &format!("{who} — no verdict: {m}"))?,
    }
    for c in e.caps {
        wrapped(
            out,
            "    ",
            &format!(
                "capped: n = {} of {} requested, by {}",
                fmt_n(c.reached as f64),
                fmt_n(c.requested as f64),
                c.reason
            ),
        )?;
    }
    Ok(())
}

/// The variants against the series they vary, what differs (with
/// several systems), then the notices.
fn write_tail(out: &mut dyn Write, input: &Input, many: bool) -> crate::Result<()> {
    if !input.pairs.is_empty() {
        writeln!(out)?;
        writeln!(out, "Variants against the series they vary:")?;
        for p in &input.pairs {
            wrapped(out, "  - ", &p.text)?;
        }
    }
    if many {
        writeln!(out)?;
        writeln!(out, "What differs (against {}):", input.systems[0].label)?;
        for b in &input.basis {
            wrapped(out, "  note: ", b)?;
        }
        if input.differences.is_empty() {
            writeln!(out, "    nothing notable")?;
        }
        for d in &input.differences {
            wrapped(out, "  - ", &d.text)?;
        }
        let rows = &input.settings;
        if !rows.is_empty() || input.kernel_config.is_some() {
            writeln!(out)?;
            writeln!(out, "Settings that differ:")?;
            for r in rows {
                let values: Vec<String> = r
                    .values
                    .iter()
                    .zip(input.systems)
                    .map(|(v, s)| format!("{}: {}", s.label, v.as_deref().unwrap_or("—")))
                    .collect();
                wrapped(out, "  - ", &format!("{}: {}", r.name, values.join("; ")))?;
            }
            if let Some(k) = &input.kernel_config {
                write_config(out, input, k)?;
            }
        }
    }
    for n in &input.notices {
        wrapped(out, "note: ", n)?;
    }
    Ok(())
}

/// The kernel build options that differ: a count per system, then the
/// first [`super::settings::CONFIG_SHOWN`] by name.
fn write_config(
    out: &mut dyn Write,
    input: &Input,
    k: &super::settings::ConfigDiff,
) -> std::io::Result<()> {
    let labels: Vec<&str> = input.systems.iter().map(|s| s.label.as_str()).collect();
    for line in k.summaries(&labels) {
        wrapped(out, "  - kernel build configuration: ", &line)?;
    }
    let shown = k.options.len().min(super::settings::CONFIG_SHOWN);
    if shown < k.options.len() {
        writeln!(
            out,
            "    the first {shown} of {} by name (all of them: --format html or json):",
            k.options.len()
        )?;
    }
    for r in &k.options[..shown] {
        let values: Vec<String> = labels
            .iter()
            .enumerate()
            .map(|(i, l)| format!("{l}: {}", k.value(r, i)))
            .collect();
        wrapped(out, "      ", &format!("{}: {}", r.name, values.join("; ")))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use analysis::{Class, Label, Options, Sample, analyze};

    #[test]
    fn a_flag_raised_twice_is_named_once_with_its_count() {
        assert_eq!(
            crate::counted("slope-change;bimodal;slope-change"),
            "slope-change ×2;bimodal"
        );
        assert_eq!(crate::counted("warm-up"), "warm-up");
        assert_eq!(crate::counted(""), "");
    }

    #[test]
    fn a_split_label_too_wide_for_its_column_goes_on_under_it() {
        let samples: Vec<Sample> = (0..3u32)
            .flat_map(|run| {
                (0..1000).map(move |i| Sample {
                    n: f64::from(i),
                    ns: 1000.0 + f64::from(i) + f64::from((i * 7 + run) % 13),
                    run,
                })
            })
            .collect();
        let mut v = analyze(&samples, None, &Options::default()).unwrap();
        v.class = Label::Between(Class::Log, Class::NLogN);
        let e = Entry {
            system: "vm",
            series: "bind".into(),
            n: 1000,
            status: None,
            caps: &[],
            verdict: Ok(v),
            bench: None,
            emulated: false,
            cost: units::Cost::Time,
            maxima: None,
        };
        let text = row(&e, false);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        let at = |l: &str, what: &str| l.find(what).map(|b| l[..b].chars().count());
        assert_eq!(at(lines[0], "O(log n)–"), Some(CLASS_AT), "{text}");
        assert_eq!(at(lines[1], "O(n log n)"), Some(CLASS_AT), "{text}");
        assert!(lines.iter().all(|l| l.chars().count() <= 100), "{text}");
        // The rest of the first line keeps its columns: the confidence
        // ends where the header's "conf" does.
        assert_eq!(lines[0].chars().nth(CLASS_AT + 11 + 4), Some('%'), "{text}");
    }
}
