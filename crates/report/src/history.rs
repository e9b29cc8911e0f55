//! `scalebench history FILES…`: one figure followed across many result
//! files — a benchmark's cost at a chosen n and its class, a workload
//! row's throughput — as a table and a chart, each point compared with the
//! one before by the test of `compare` ([`super::compare::judge_pair`])
//! and marked where it changed.

use super::compare::{judge_classes, judge_pair};
use super::diff::cost_at;
use super::{Input, System};
use analysis::Options;
use analysis::compare::{Outcome, SINGLE_THRESHOLD, judge_throughput};
use serde::Serialize;
use std::io::Write;
use units::fmt_n;

/// One file's point of a track.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    /// The file's label.
    pub label: String,
    /// When its run started.
    pub started: String,
    /// The figure (ns for a cost, per second for a throughput); `None`
    /// when the file does not have it.
    pub value: Option<f64>,
    /// The class (benchmarks).
    pub class: Option<String>,
    /// What the comparison with the point before with a figure found
    /// (`unchanged` included); `None` where it was not compared (the first
    /// point, a point without a figure, across emulation for a cost).
    pub change: Option<Outcome>,
    /// The change in words.
    pub note: String,
    /// Whether the file was measured under emulation: its figure is not
    /// the speed of any machine, and against a native neighbour only the
    /// class is compared.
    pub emulated: bool,
    /// What a cost counts: `time` (ns), or `instructions` for a guest
    /// whose clock QEMU advanced by them.
    pub counts: &'static str,
    /// The same, to show the figure in its unit.
    #[serde(skip)]
    pub cost: units::Cost,
}

/// A figure followed across the files.
#[derive(Debug, Clone, Serialize)]
pub struct Track {
    /// The series, or `workload: row`.
    pub name: String,
    /// What the figure is (`cost at n = 9 500`, `requests/s`).
    pub figure: String,
    /// Whether higher is better (throughput) or worse (cost).
    pub higher_is_better: bool,
    /// One point per file, in the files' order.
    pub points: Vec<Point>,
}

/// The n a verdict's samples span: its first bucket's smallest n to its
/// last bucket's largest.
pub fn measured_range(v: &analysis::Verdict) -> Option<(f64, f64)> {
    Some((v.buckets.first()?.n_lo, v.buckets.last()?.n_hi))
}

fn benchmark_tracks(input: &Input, only: Option<&str>, at: Option<f64>) -> Vec<Track> {
    let mut out = Vec::new();
    for series in input.series_names() {
        if let Some(o) = only
            && series != o
            && !series.starts_with(&format!("{o}["))
        {
            continue;
        }
        let entries: Vec<_> = input
            .systems
            .iter()
            .map(|s| input.of_series(series).find(|e| e.system == s.label))
            .collect();
        // The largest n every file measured (its verdict's high end); a
        // series no file has a verdict of (each failed) is followed still,
        // each point saying why it has no figure.
        let n = at.unwrap_or_else(|| {
            entries
                .iter()
                .flatten()
                .filter_map(|e| e.verdict.as_ref().ok().map(|v| v.high.n))
                .fold(f64::INFINITY, f64::min)
        });
        let mut points: Vec<Point> = Vec::new();
        let mut prev: Option<usize> = None;
        for (i, (s, e)) in input.systems.iter().zip(&entries).enumerate() {
            let v = e.and_then(|e| e.verdict.as_ref().ok());
            // A cost is read only where the file measured: never
            // extrapolated past its n.
            let range = v.and_then(measured_range);
            let inside = range.is_some_and(|(lo, hi)| (lo..=hi).contains(&n));
            let mut p = Point {
                label: s.label.clone(),
                started: s.file.started.clone(),
                value: v.filter(|_| inside).map(|v| cost_at(v, n)),
                class: v.map(|v| v.class.to_string()),
                change: None,
                emulated: input.emulated[i],
                counts: e.map_or(units::Cost::Time, |e| e.cost).name(),
                cost: e.map_or(units::Cost::Time, |e| e.cost),
                note: match (range, e) {
                    (Some((lo, hi)), _) if !inside => format!(
                        "no cost at n = {}: this file measured n = {}–{} (not extrapolated)",
                        fmt_n(n),
                        fmt_n(lo),
                        fmt_n(hi)
                    ),
                    (_, None) => "not in this file".into(),
                    (None, Some(e)) => unmeasured(e),
                    _ => String::new(),
                },
            };
            if let (true, Some(j), Some(e), Some(cur)) = (inside, prev, *e, e.and_then(|e| e.bench))
                && let Some(before) = entries[j]
                && let Some(bb) = before.bench
            {
                let basis = super::Basis::of(
                    input.measured_of(&s.label),
                    input.measured_of(&input.systems[j].label),
                );
                let (o, evidence) = if basis == super::Basis::Mixed {
                    judge_classes(before, e)
                } else {
                    let j = judge_pair(before, bb, e, cur, None);
                    (j.outcome, j.evidence)
                };
                // `unchanged` too: no change means compared and held;
                // none, not compared (the first point, no figure).
                if o != Outcome::NotComparable {
                    p.change = Some(o);
                }
                if !matches!(o, Outcome::Unchanged | Outcome::NotComparable) {
                    p.note = evidence;
                }
            }
            // Measured before and broken now: a regression, as `compare`
            // judges it.
            if prev.is_some() && e.is_some_and(|e| e.status == Some(results::Status::Failed)) {
                p.change = Some(Outcome::Regressed);
            }
            if p.value.is_some() {
                prev = Some(i);
            }
            points.push(p);
        }
        out.push(Track {
            name: series.to_string(),
            figure: if n.is_finite() {
                format!("cost at n = {}", fmt_n(n))
            } else {
                "cost: no file has a verdict of it".into()
            },
            higher_is_better: false,
            points,
        });
    }
    out
}

/// Why an entry has no verdict to read a cost from: its status and
/// message (`failed: fork() failed with EAGAIN at n = 0`), or the
/// analysis' reason.
fn unmeasured(e: &super::Entry) -> String {
    let status = e
        .status
        .filter(|s| !matches!(s, results::Status::Ok | results::Status::Capped));
    match (
        status,
        e.bench.and_then(|b| b.message.as_deref()),
        &e.verdict,
    ) {
        (Some(s), Some(m), _) => format!("{}: {m}", s.as_str()),
        (Some(s), None, _) => s.as_str().to_string(),
        (None, _, Err(why)) => format!("no verdict: {why}"),
        _ => String::new(),
    }
}

fn workload_tracks(input: &Input, only: Option<&str>) -> Vec<Track> {
    let systems = input.systems;
    let mut names: Vec<(String, String, Option<String>)> = Vec::new();
    for s in systems {
        for w in &s.file.workloads {
            if only.is_some_and(|o| o != w.name) {
                continue;
            }
            for r in &w.rows {
                let k = (w.name.clone(), r.label.clone(), r.target.clone());
                if !names.contains(&k) {
                    names.push(k);
                }
            }
        }
    }
    names
        .into_iter()
        .map(|(w, label, target)| {
            let mut points: Vec<Point> = Vec::new();
            let mut prev: Option<(f64, bool, &results::WorkloadResult)> = None;
            for (s, &emulated) in systems.iter().zip(&input.emulated) {
                let workload = s.file.workloads.iter().find(|x| x.name == w);
                let row = workload.and_then(|x| {
                    x.rows
                        .iter()
                        .find(|r| r.label == label && r.target == target)
                });
                // Another size measured another thing (as `compare` says).
                let resized = match (prev, workload) {
                    (Some((_, _, before)), Some(now)) => before.size_changes(now),
                    _ => None,
                };
                let value = row.and_then(|r| r.figure()).map(|(v, _)| v);
                let mut p = Point {
                    label: s.label.clone(),
                    started: s.file.started.clone(),
                    value,
                    class: None,
                    change: None,
                    note: String::new(),
                    emulated,
                    counts: units::Cost::Time.name(),
                    cost: units::Cost::Time,
                };
                if let (Some((_, was, _)), Some(_)) = (prev, value)
                    && was != emulated
                {
                    p.note = format!(
                        "not compared with the file before: {} was measured under emulation (TCG)",
                        if emulated { "this one" } else { "that one" }
                    );
                } else if let (Some(changes), Some(_)) = (&resized, value) {
                    p.note = format!(
                        "not compared with the file before: measured at other sizes ({changes})"
                    );
                } else if let (Some((a, _, _)), Some(b)) = (prev, value)
                    && a > 0.0
                {
                    let o = judge_throughput(b / a, SINGLE_THRESHOLD);
                    p.change = Some(o);
                    if o != Outcome::Unchanged {
                        p.note = format!(
                            "{:+.0} % against ±{:.0} %",
                            (b / a - 1.0) * 100.0,
                            SINGLE_THRESHOLD * 100.0
                        );
                    }
                }
                if let (Some(v), Some(now)) = (value, workload) {
                    prev = Some((v, emulated, now));
                }
                points.push(p);
            }
            Track {
                name: format!(
                    "{w}: {label}{}",
                    target.map_or(String::new(), |t| format!(" · {t}"))
                ),
                figure: "per second (a sweep: its peak)".into(),
                higher_is_better: true,
                points,
            }
        })
        .collect()
}

/// Every track of `systems` (in the order given), or those of one
/// benchmark or workload; benchmark costs at `at` (default: the largest n
/// every file measured).
pub fn tracks(systems: &[System], only: Option<&str>, at: Option<f64>) -> Vec<Track> {
    tracks_of(&Input::new(systems, &Options::default()), only, at)
}

/// [`tracks`] of systems already judged (whose notices the caller shows).
pub fn tracks_of(input: &Input, only: Option<&str>, at: Option<f64>) -> Vec<Track> {
    let mut v = benchmark_tracks(input, only, at);
    v.extend(workload_tracks(input, only));
    v
}

fn show(t: &Track, p: &Point) -> String {
    let mark = if p.emulated { super::EMULATED_MARK } else { "" };
    match p.value {
        None => "—".into(),
        Some(x) if t.higher_is_better => format!("{x:.0}/s{mark}"),
        Some(x) => format!("{}{mark}", p.cost.fmt(x)),
    }
}

/// The footnote under a track with an emulated point.
fn footnote(t: &Track) -> Option<String> {
    super::emulated_note(t.points.iter().map(|p| (p.emulated, p.cost)))
}

fn mark(p: &Point) -> &'static str {
    match p.change {
        Some(Outcome::Regressed) => "▲ regressed",
        Some(Outcome::Improved) => "▼ improved",
        Some(Outcome::ClassChanged) => "◆ class changed",
        _ => "",
    }
}

/// The tracks as JSON.
pub fn write_json(tracks: &[Track], out: &mut dyn Write) -> crate::Result<()> {
    serde_json::to_writer_pretty(
        &mut *out,
        &serde_json::json!({
            "schema": "scalebench-history",
            "schema_version": 1,
            "tracks": tracks,
        }),
    )?;
    writeln!(out)?;
    Ok(())
}

/// The tracks in Markdown.
pub fn write_markdown(tracks: &[Track], out: &mut dyn Write) -> crate::Result<()> {
    for t in tracks {
        writeln!(out, "\n**{}** — {}\n", t.name, t.figure)?;
        writeln!(out, "| # | file | started | value | class | change |")?;
        writeln!(out, "|---|---|---|---|---|---|")?;
        for (i, p) in t.points.iter().enumerate() {
            writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} {} |",
                i + 1,
                p.label.replace('|', "\\|"),
                p.started,
                show(t, p),
                p.class.as_deref().unwrap_or(""),
                mark(p),
                p.note
            )?;
        }
        if let Some(f) = footnote(t) {
            writeln!(out, "\n{f}")?;
        }
    }
    Ok(())
}

/// The chart line of a track's native (or emulated) points.
fn line<'a>(
    t: &Track,
    emulated: bool,
    label: &'a str,
    colour: &'static str,
) -> super::curve::Curve<'a> {
    super::curve::Curve {
        label,
        colour,
        dots: Vec::new(),
        dashed: false,
        points: t
            .points
            .iter()
            .enumerate()
            .filter(|(_, p)| p.emulated == emulated)
            .filter_map(|(i, p)| Some(((i + 1) as f64, p.value?)))
            .collect(),
    }
}

/// The tracks as an HTML page, a chart per figure.
pub fn write_html(tracks: &[Track], out: &mut dyn Write) -> crate::Result<()> {
    writeln!(
        out,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>scalebench history</title><style>body{{font:14px system-ui,sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{padding:2px 8px;border-bottom:1px solid #ddd;text-align:left}}.regressed{{color:#b00}}.improved{{color:#070}}.class-changed{{color:#a60}}</style></head><body><h1>scalebench history</h1>"
    )?;
    for (k, t) in tracks.iter().enumerate() {
        // Emulated points are a line of their own: joined to native ones,
        // the line would draw the emulator's cost as a change of speed.
        let emulated = format!("{} {} (emulated)", t.name, super::EMULATED_MARK);
        let lines: Vec<_> = [
            line(t, false, &t.name, super::chart::PALETTE[0]),
            line(t, true, &emulated, super::chart::PALETTE[1]),
        ]
        .into_iter()
        .filter(|l| !l.points.is_empty())
        .collect();
        writeln!(
            out,
            "<section><h2>{}</h2><figure class=\"history\">{}</figure><table><tr><th>#</th><th>file</th><th>started</th><th>{}</th><th>class</th><th>change</th></tr>",
            super::chart::esc(&t.name),
            super::curve::curve_svg(
                &format!("h{k}"),
                &format!("{} — {}", t.name, t.figure),
                (
                    "file, in order",
                    if t.higher_is_better {
                        "per second"
                    } else {
                        "ns"
                    }
                ),
                "",
                &lines
            ),
            super::chart::esc(&t.figure)
        )?;
        for (i, p) in t.points.iter().enumerate() {
            writeln!(
                out,
                "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} {}</td></tr>",
                p.change.map_or("", |c| c.name()),
                i + 1,
                super::chart::esc(&p.label),
                super::chart::esc(&p.started),
                show(t, p),
                super::chart::esc(p.class.as_deref().unwrap_or("")),
                mark(p),
                super::chart::esc(&p.note)
            )?;
        }
        writeln!(out, "</table>")?;
        if let Some(f) = footnote(t) {
            writeln!(out, "<p>{}</p>", super::chart::esc(&f))?;
        }
        writeln!(out, "</section>")?;
    }
    writeln!(out, "</body></html>")?;
    Ok(())
}

/// The tracks for a terminal.
pub fn write_terminal(tracks: &[Track], out: &mut dyn Write) -> crate::Result<()> {
    for t in tracks {
        writeln!(out, "\n{} — {}", t.name, t.figure)?;
        for (i, p) in t.points.iter().enumerate() {
            writeln!(
                out,
                "{:>3}  {:<24} {:<21} {:>10}  {:<10} {} {}",
                i + 1,
                p.label,
                p.started,
                show(t, p),
                p.class.as_deref().unwrap_or(""),
                mark(p),
                p.note
            )?;
        }
        if let Some(f) = footnote(t) {
            writeln!(out, "     {f}")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{series_mut, system};

    fn track<'t>(tracks: &'t [Track], name: &str) -> &'t Track {
        tracks.iter().find(|t| t.name == name).unwrap()
    }

    #[test]
    fn a_series_that_failed_is_followed_with_why_it_has_no_figure() {
        let mut failed = system("b", false, 1.0, false);
        let bind = series_mut(&mut failed, "bind");
        bind.status = results::Status::Failed;
        bind.message = Some("bind() failed with EADDRINUSE at n = 0".into());
        bind.runs.clear();
        let systems = [failed.clone()];
        let all = tracks(&systems, Some("bind"), None);
        let t = track(&all, "bind");
        assert_eq!(t.figure, "cost: no file has a verdict of it");
        assert_eq!(t.points[0].value, None);
        assert_eq!(
            t.points[0].note,
            "failed: bind() failed with EADDRINUSE at n = 0"
        );
        // After a file that measured it: a regression.
        let systems = [system("a", false, 1.0, false), failed];
        let all = tracks(&systems, Some("bind"), None);
        let t = track(&all, "bind");
        assert_eq!(t.points[1].change, Some(Outcome::Regressed));
        assert!(
            t.points[1].note.starts_with("failed: "),
            "{:?}",
            t.points[1]
        );
    }

    #[test]
    fn a_workload_at_other_sizes_is_not_judged_against_the_file_before() {
        let fs = |label: &str, rps: f64, files: u64| {
            let mut s = system(label, false, 1.0, false);
            s.file.workloads = vec![
                serde_json::from_value(serde_json::json!({
                    "name": "fs", "what": "w", "status": "ok", "message": null,
                    "params": {"files": files}, "rows": [{"label": "replay", "params": {},
                    "load": {"requests": 1000, "seconds": 1.0, "requests_per_s": rps,
                      "mb_per_s": 1.0, "body_bytes": 1000, "connections": 10,
                      "latency_ns": {"p50": 1, "p90": 1, "p99": 1, "p999": 1, "max": 1, "mean": 1.0},
                      "errors": {"connect": 0, "reset": 0, "timeout": 0, "status": 0, "short_body": 0},
                      "retries": 0, "failed": 0, "statuses": {}}}]
                }))
                .unwrap(),
            ];
            s
        };
        let systems = [
            fs("a", 5000.0, 500),
            fs("b", 500.0, 300),
            fs("c", 250.0, 300),
        ];
        let all = tracks(&systems, Some("fs"), None);
        let t = track(&all, "fs: replay");
        assert_eq!(t.points[1].change, None, "{:?}", t.points[1]);
        assert_eq!(
            t.points[1].note,
            "not compared with the file before: measured at other sizes (files 500 → 300)"
        );
        // At the same size again, a change is judged.
        assert_eq!(
            t.points[2].change,
            Some(Outcome::Regressed),
            "{:?}",
            t.points[2]
        );
    }

    #[test]
    fn an_emulated_file_between_native_ones_is_marked_and_judged_by_class_only() {
        let systems = [
            system("native-1", false, 1.0, false),
            system("guest", true, 10.0, false),
            system("native-2", false, 1.0, false),
            system("guest-bind-linear", true, 10.0, true),
        ];
        let all = tracks(&systems, None, None);
        let mmap = track(&all, "mmap");
        let emulated: Vec<bool> = mmap.points.iter().map(|p| p.emulated).collect();
        assert_eq!(emulated, [false, true, false, true]);
        // Ten times slower under emulation, yet no cost change is judged
        // across the boundary, either way: the class held.
        let changes: Vec<Option<Outcome>> = mmap.points.iter().map(|p| p.change).collect();
        let held = Some(Outcome::Unchanged);
        assert_eq!(changes, [None, held, held, held], "{mmap:?}");
        let bind = track(&all, "bind");
        assert_eq!(bind.points[3].change, Some(Outcome::ClassChanged));
        assert!(
            bind.points[3]
                .note
                .contains("costs not compared: guest-bind-linear was measured under emulation"),
            "{}",
            bind.points[3].note
        );
        let mut text = Vec::new();
        write_terminal(&all, &mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(
            text.contains(&format!("† {}", crate::EMULATED_NOTE)),
            "{text}"
        );
        let mut html = Vec::new();
        write_html(&all, &mut html).unwrap();
        let html = String::from_utf8(html).unwrap();
        assert!(
            html.contains("mmap † (emulated)"),
            "the emulated points are a line of their own"
        );
        // The x axis: a tick at each of the four files, none between.
        assert!(html.contains("data-scale=\"linear\" data-levels=\"4\""));
        // Two native files ten times apart are a regression as before.
        let native = [
            system("a", false, 1.0, false),
            system("b", false, 10.0, false),
        ];
        let t = tracks(&native, None, None);
        assert_eq!(track(&t, "mmap").points[1].change, Some(Outcome::Regressed));
    }
}
