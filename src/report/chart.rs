//! Self-contained SVG scatter charts: every sample (thinned for display
//! only when there are too many, keeping the per-n envelope and every
//! outlier), the per-n median and the fitted curve of each system, axes
//! with units chosen by range, a legend. Colours are the Okabe–Ito palette
//! (safe for colour-blind readers); runs differ by marker shape.

use crate::analysis::units::fmt_n;
use std::fmt::Write;

/// Okabe–Ito colours, one per system.
pub const PALETTE: [&str; 7] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
];

/// Marker names of the runs, in order (cycled).
pub const RUN_MARKERS: [&str; 5] = ["dot", "square", "cross", "plus", "diamond"];

/// One system's data in a chart.
pub struct Series<'a> {
    /// Legend label.
    pub label: &'a str,
    /// Colour.
    pub colour: &'static str,
    /// Samples per run, `(n, ns)`.
    pub runs: Vec<Vec<(f64, f64)>>,
    /// Per-n medians, `(n, ns)`, ascending n.
    pub median: Vec<(f64, f64)>,
    /// The fitted curve, `(n, ns)`, ascending n (empty: none).
    pub fit: Vec<(f64, f64)>,
    /// The largest per-n 90th percentile (0: unknown); the linear axis
    /// reaches a little above it, so that rare slow samples do not flatten
    /// the curves.
    pub p90_max: f64,
}

/// A chart to draw.
pub struct Chart<'a> {
    /// Element id prefix, unique in the document.
    pub id: &'a str,
    /// Series name (for the data attribute).
    pub name: &'a str,
    /// What n counts, for the x axis.
    pub x_label: &'a str,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// Samples shown per system at most before thinning.
    pub budget: usize,
}

const W: f64 = 760.0;
const H: f64 = 400.0;
const LEFT: f64 = 72.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 46.0;

/// A unit for durations chosen by the largest value shown.
fn unit(max_ns: f64) -> (&'static str, f64) {
    if max_ns < 1e3 {
        ("ns", 1.0)
    } else if max_ns < 1e6 {
        ("µs", 1e3)
    } else if max_ns < 1e9 {
        ("ms", 1e6)
    } else {
        ("s", 1e9)
    }
}

/// A "nice" step (1, 2 or 5 × 10^k) at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if raw.is_nan() || raw <= 0.0 {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if m * p >= raw {
            return m * p;
        }
    }
    10.0 * p
}

/// Linear ticks from 0 to at least `max`, about `count` of them.
pub fn linear_ticks(max: f64, count: usize) -> Vec<f64> {
    let step = nice_step(max / count.max(1) as f64);
    let mut t = Vec::new();
    let mut v = 0.0;
    while v <= max * 1.000_001 + step * 1e-9 {
        t.push(v);
        v += step;
    }
    if t.last().is_some_and(|&l| l < max) {
        t.push(v);
    }
    t
}

/// Logarithmic ticks covering [lo, hi]: decades, with 2× and 5× when the
/// range spans fewer than three decades.
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (a, b) = (
        lo.max(1e-9).log10().floor() as i32,
        hi.max(1e-9).log10().ceil() as i32,
    );
    let fine = b - a < 3;
    let mut t = Vec::new();
    for e in a..=b {
        let d = 10f64.powi(e);
        for m in if fine {
            &[1.0, 2.0, 5.0][..]
        } else {
            &[1.0][..]
        } {
            let v = m * d;
            if v >= lo / 1.0001 && v <= hi * 1.0001 {
                t.push(v);
            }
        }
    }
    t
}

/// A number in a unit, without trailing zeros ("2.5", "120").
fn num(v: f64) -> String {
    let s = if v.abs() >= 100.0 || v == 0.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Which samples to draw: all when they fit the budget, else the per-n
/// envelope (each run's extremes in each of 300 columns along n), the far
/// outliers (beyond 3 IQR from the column's quartiles; the farthest first
/// when they alone would fill half the budget) and an even subsample of
/// the rest, so the bulk keeps its shape. Returns a keep flag per sample
/// of each run.
pub fn thin(runs: &[Vec<(f64, f64)>], x_max: f64, budget: usize) -> Vec<Vec<bool>> {
    let total: usize = runs.iter().map(Vec::len).sum();
    if total <= budget {
        return runs.iter().map(|r| vec![true; r.len()]).collect();
    }
    const COLS: usize = 300;
    let col = |x: f64| (((x / x_max.max(1.0)) * (COLS - 1) as f64).round() as usize).min(COLS - 1);
    let mut per_col: Vec<Vec<f64>> = vec![Vec::new(); COLS];
    for r in runs {
        for &(x, y) in r {
            per_col[col(x)].push(y);
        }
    }
    let fences: Vec<(f64, f64)> = per_col
        .iter_mut()
        .map(|v| {
            if v.is_empty() {
                return (f64::NEG_INFINITY, f64::INFINITY);
            }
            v.sort_by(f64::total_cmp);
            let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
            let (q1, q3) = (q(0.25), q(0.75));
            (q1 - 3.0 * (q3 - q1), q3 + 3.0 * (q3 - q1))
        })
        .collect();
    let mut keep: Vec<Vec<bool>> = runs.iter().map(|r| vec![false; r.len()]).collect();
    // Far outliers, by how far beyond the fence (in IQRs); the farthest
    // half-budget of them when there are more.
    let mut far: Vec<(f64, usize, usize)> = Vec::new();
    for (ri, r) in runs.iter().enumerate() {
        for (i, &(x, y)) in r.iter().enumerate() {
            let (lo, hi) = fences[col(x)];
            let span = ((hi - lo) / 7.0).max(1e-9); // one IQR
            if y > hi {
                far.push(((y - hi) / span, ri, i));
            } else if y < lo {
                far.push(((lo - y) / span, ri, i));
            }
        }
    }
    far.sort_by(|a, b| b.0.total_cmp(&a.0));
    far.truncate(budget / 2);
    for &(_, ri, i) in &far {
        keep[ri][i] = true;
    }
    let mut kept = 0;
    for (ri, r) in runs.iter().enumerate() {
        // Extremes of this run per column.
        let mut lo = vec![usize::MAX; COLS];
        let mut hi = vec![usize::MAX; COLS];
        for (i, &(x, y)) in r.iter().enumerate() {
            let c = col(x);
            if lo[c] == usize::MAX || y < r[lo[c]].1 {
                lo[c] = i;
            }
            if hi[c] == usize::MAX || y > r[hi[c]].1 {
                hi[c] = i;
            }
        }
        for i in lo.into_iter().chain(hi).filter(|&i| i != usize::MAX) {
            keep[ri][i] = true;
        }
        kept += keep[ri].iter().filter(|&&k| k).count();
    }
    let rest = budget.saturating_sub(kept);
    let others = total - kept;
    if rest > 0 && others > 0 {
        let stride = (others as f64 / rest as f64).max(1.0);
        let mut next = 0.0;
        let mut idx = 0usize;
        for k in keep.iter_mut() {
            for flag in k.iter_mut() {
                if !*flag {
                    if idx as f64 >= next {
                        *flag = true;
                        next += stride;
                    }
                    idx += 1;
                }
            }
        }
    }
    keep
}

/// The marker of one point, as path data.
fn marker(shape: &str, x: f64, y: f64, out: &mut String) {
    let _ = match shape {
        "dot" | "square" => write!(out, "M{x:.1} {y:.1}h0"),
        "cross" => write!(out, "M{:.1} {:.1}l4 4m0-4l-4 4", x - 2.0, y - 2.0),
        "plus" => write!(out, "M{:.1} {y:.1}h5m-2.5-2.5v5", x - 2.5),
        _ => write!(out, "M{x:.1} {:.1}l3 3-3 3-3-3z", y - 3.0),
    };
}

fn marker_style(shape: &str, colour: &str) -> String {
    match shape {
        "dot" => {
            format!(r#"stroke="{colour}" stroke-width="4.5" stroke-linecap="round" fill="none""#)
        }
        "square" => {
            format!(r#"stroke="{colour}" stroke-width="4" stroke-linecap="square" fill="none""#)
        }
        "diamond" => format!(r#"fill="{colour}" stroke="none""#),
        _ => format!(r#"stroke="{colour}" stroke-width="1.3" fill="none""#),
    }
}

/// Escapes text for XML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Draws the chart as an `<svg>` element.
pub fn svg(chart: &Chart, series: &[Series]) -> String {
    let all = || series.iter().flat_map(|s| s.runs.iter().flatten());
    let x_max = all().map(|p| p.0).fold(0.0, f64::max).max(1.0);
    let total: usize = series
        .iter()
        .map(|s| s.runs.iter().map(Vec::len).sum::<usize>())
        .sum();
    // y range: all of it on a log axis; on a linear one a little above the
    // largest per-n 90th percentile and median (or the 99.5th percentile of
    // everything, when those are unknown), so that rare outliers do not
    // flatten the curves; those above are drawn on the top edge.
    let mut ys: Vec<f64> = all().map(|p| p.1).filter(|y| *y > 0.0).collect();
    ys.sort_by(f64::total_cmp);
    let (y_lo, y_hi) = if ys.is_empty() {
        (1.0, 10.0)
    } else if chart.log_y {
        (ys[0] / 1.2, ys[ys.len() - 1] * 1.2)
    } else {
        let p90 = series.iter().map(|s| s.p90_max).fold(0.0, f64::max);
        let med_max = series
            .iter()
            .flat_map(|s| s.median.iter().map(|p| p.1))
            .fold(0.0, f64::max);
        let top = if p90 > 0.0 {
            (p90 * 1.3).max(med_max * 1.15)
        } else {
            ys[((ys.len() - 1) as f64 * 0.995) as usize].max(med_max) * 1.08
        };
        (0.0, top.min(ys[ys.len() - 1] * 1.02))
    };
    let (uname, udiv) = unit(y_hi);
    let pw = W - LEFT - RIGHT;
    let ph = H - TOP - BOTTOM;
    let sx = |x: f64| LEFT + x / x_max * pw;
    let sy = |y: f64| {
        let t = if chart.log_y {
            (y.max(y_lo).ln() - y_lo.ln()) / (y_hi.ln() - y_lo.ln())
        } else {
            y / y_hi
        };
        TOP + ph - t.clamp(0.0, 1.0) * ph
    };
    let scale = if chart.log_y { "log" } else { "linear" };
    let mut o = String::with_capacity(64 * 1024);
    let _ = write!(
        o,
        r#"<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" data-series="{}" data-scale="{scale}" data-systems="{}" font-family="sans-serif" font-size="12">"#,
        esc(chart.name),
        series.len()
    );
    let _ = write!(
        o,
        r##"<title>{} — every sample against n ({scale} scale)</title><rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="#fff" stroke="#999"/>"##,
        esc(chart.name)
    );
    // Y axis.
    let yticks = if chart.log_y {
        log_ticks(y_lo, y_hi)
    } else {
        linear_ticks(y_hi, ((ph / 40.0) as usize).max(2))
    };
    for t in yticks.iter().filter(|&&t| t <= y_hi * 1.0001) {
        let y = sy(*t);
        let _ = write!(
            o,
            r##"<line x1="{LEFT}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" stroke="#e4e4e4"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            LEFT + pw,
            LEFT - 6.0,
            y + 4.0,
            num(t / udiv)
        );
    }
    let _ = write!(
        o,
        r#"<text x="14" y="{:.1}" transform="rotate(-90 14 {:.1})" text-anchor="middle">time per operation ({uname}{})</text>"#,
        TOP + ph / 2.0,
        TOP + ph / 2.0,
        if chart.log_y { ", log scale" } else { "" }
    );
    // X axis: ticks at least 70 px apart so labels never overlap.
    let xticks = linear_ticks(x_max, ((pw / 90.0) as usize).max(2));
    for t in xticks.iter().filter(|&&t| t <= x_max * 1.0001) {
        let x = sx(*t);
        let _ = write!(
            o,
            r##"<line x1="{x:.1}" x2="{x:.1}" y1="{TOP}" y2="{:.1}" stroke="#f0f0f0"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            TOP + ph,
            TOP + ph + 16.0,
            fmt_n(*t)
        );
    }
    let _ = write!(
        o,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">n = {}</text>"#,
        LEFT + pw / 2.0,
        H - 8.0,
        esc(chart.x_label)
    );
    // Points, per system and run.
    let mut shown = 0;
    let mut above = 0;
    for (si, s) in series.iter().enumerate() {
        let keep = thin(&s.runs, x_max, chart.budget);
        let _ = write!(
            o,
            r#"<g class="system" data-system="{}" data-index="{si}" opacity="0.55">"#,
            esc(s.label)
        );
        for (ri, (run, k)) in s.runs.iter().zip(&keep).enumerate() {
            let shape = RUN_MARKERS[ri % RUN_MARKERS.len()];
            let mut d = String::new();
            for (&(x, y), &kp) in run.iter().zip(k) {
                if !kp {
                    continue;
                }
                shown += 1;
                if !chart.log_y && y > y_hi {
                    above += 1;
                }
                marker(shape, sx(x), sy(y), &mut d);
            }
            if !d.is_empty() {
                let _ = write!(
                    o,
                    r#"<path class="run" data-run="{}" d="{d}" {}/>"#,
                    ri + 1,
                    marker_style(shape, s.colour)
                );
            }
        }
        o.push_str("</g>");
    }
    // Medians and fits on top.
    for s in series {
        if s.median.len() > 1 {
            let pts: Vec<String> = s
                .median
                .iter()
                .map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y)))
                .collect();
            let _ = write!(
                o,
                r#"<polyline class="median" points="{}" fill="none" stroke="{}" stroke-width="2.2"/>"#,
                pts.join(" "),
                s.colour
            );
        }
        if s.fit.len() > 1 {
            let pts: Vec<String> = s
                .fit
                .iter()
                .map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y)))
                .collect();
            let _ = write!(
                o,
                r##"<polyline class="fit" points="{}" fill="none" stroke="#222" stroke-width="1.4" stroke-dasharray="5 4"/>"##,
                pts.join(" ")
            );
        }
    }
    // Legend: systems, then run markers, then the line styles.
    let mut lx = LEFT;
    for s in series {
        let _ = write!(
            o,
            r#"<rect x="{lx:.1}" y="8" width="14" height="10" fill="{}"/><text x="{:.1}" y="17">{}</text>"#,
            s.colour,
            lx + 18.0,
            esc(s.label)
        );
        lx += 28.0 + 7.0 * s.label.chars().count() as f64;
    }
    let runs = series.iter().map(|s| s.runs.len()).max().unwrap_or(0);
    let mut rx = W - RIGHT - 64.0 * runs.min(5) as f64 - 150.0;
    for (ri, shape) in RUN_MARKERS.iter().enumerate().take(runs.min(5)) {
        let mut d = String::new();
        marker(shape, rx + 4.0, 13.0, &mut d);
        let _ = write!(
            o,
            r##"<path d="{d}" {}/><text x="{:.1}" y="17" fill="#555">run {}</text>"##,
            marker_style(shape, "#555"),
            rx + 11.0,
            ri + 1
        );
        rx += 64.0;
    }
    let _ = write!(
        o,
        r##"<line x1="{:.1}" x2="{:.1}" y1="13" y2="13" stroke="#555" stroke-width="2.2"/><text x="{:.1}" y="17" fill="#555">median</text><line x1="{:.1}" x2="{:.1}" y1="13" y2="13" stroke="#222" stroke-dasharray="5 4"/><text x="{:.1}" y="17" fill="#555">fit</text>"##,
        rx,
        rx + 16.0,
        rx + 20.0,
        rx + 72.0,
        rx + 88.0,
        rx + 92.0
    );
    // Notes: thinning and clipping.
    let mut notes = Vec::new();
    if shown < total {
        notes.push(format!(
            "thinned for display: {} of {} samples drawn (far outliers and each run's per-n extremes kept)",
            fmt_n(shown as f64),
            fmt_n(total as f64)
        ));
    }
    if above > 0 {
        notes.push(format!(
            "{} above the top, drawn on its edge",
            fmt_n(above as f64)
        ));
    }
    if !notes.is_empty() {
        let _ = write!(
            o,
            r##"<text class="note" x="{LEFT}" y="38" fill="#666" font-size="10.5">{}</text>"##,
            esc(&notes.join("; "))
        );
    }
    o.push_str("</svg>");
    o
}

/// One line of a [`lines_svg`] chart.
pub struct Line<'a> {
    /// Legend label.
    pub label: &'a str,
    /// Colour.
    pub colour: &'static str,
    /// Points `(x, y)`, ascending x.
    pub points: Vec<(f64, f64)>,
}

/// A line chart of throughput over time (x from 0, y from 0; one polyline
/// per line, drawn as steps ending at each sample), as an `<svg>` element.
pub fn lines_svg(id: &str, title: &str, x_label: &str, y_label: &str, lines: &[Line]) -> String {
    let x_max = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .fold(0.0, f64::max)
        .max(1e-3);
    let y_max = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .fold(0.0, f64::max)
        .max(1e-9);
    let xt = linear_ticks(x_max, 8);
    let yt = linear_ticks(y_max, 5);
    let (x_top, y_top) = (*xt.last().unwrap_or(&x_max), *yt.last().unwrap_or(&y_max));
    let pw = W - LEFT - RIGHT;
    let ph = H - TOP - BOTTOM;
    let sx = |x: f64| LEFT + x / x_top * pw;
    let sy = |y: f64| TOP + ph - y / y_top * ph;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg id=\"{}\" class=\"chart lines\" viewBox=\"0 0 {W} {H}\" role=\"img\" aria-label=\"{}\" xmlns=\"http://www.w3.org/2000/svg\">",
        esc(id),
        esc(title)
    );
    let _ = write!(
        s,
        "<text x=\"{LEFT}\" y=\"18\" class=\"title\" font-size=\"14\" font-weight=\"bold\">{}</text>",
        esc(title)
    );
    for &t in &yt {
        let y = sy(t);
        let _ = write!(
            s,
            "<line x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"11\">{}</text>",
            W - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            num(t)
        );
    }
    for &t in &xt {
        let x = sx(t);
        let _ = write!(
            s,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{TOP}\" y2=\"{:.1}\" stroke=\"#eee\"/><text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\">{}</text>",
            TOP + ph,
            TOP + ph + 16.0,
            num(t)
        );
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"12\">{}</text><text x=\"14\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"12\" transform=\"rotate(-90 14 {:.1})\">{}</text>",
        LEFT + pw / 2.0,
        H - 8.0,
        esc(x_label),
        TOP + ph / 2.0,
        TOP + ph / 2.0,
        esc(y_label)
    );
    for l in lines {
        let mut d = String::new();
        let mut prev_x = 0.0;
        for (i, &(x, y)) in l.points.iter().enumerate() {
            let _ = write!(
                d,
                "{}{:.1},{:.1} {:.1},{:.1} ",
                if i == 0 { "M" } else { "L" },
                sx(prev_x),
                sy(y),
                sx(x),
                sy(y)
            );
            prev_x = x;
        }
        let _ = write!(
            s,
            "<path class=\"line\" data-label=\"{}\" d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\"/>",
            esc(l.label),
            d.trim_end(),
            l.colour
        );
    }
    for (i, l) in lines.iter().enumerate() {
        let y = TOP + 14.0 + i as f64 * 16.0;
        let x = W - RIGHT - 190.0;
        let _ = write!(
            s,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"12\" height=\"4\" fill=\"{}\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\">{}</text>",
            y - 4.0,
            l.colour,
            x + 16.0,
            y,
            esc(l.label)
        );
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_nice_and_cover_the_range() {
        assert_eq!(linear_ticks(10.0, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        let t = linear_ticks(9_843.0, 6);
        assert_eq!(t[1], 2000.0);
        assert!(*t.last().unwrap() >= 9_843.0);
        assert_eq!(
            log_ticks(1.0, 100.0),
            vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]
        );
        assert_eq!(log_ticks(1.0, 1000.0), vec![1.0, 10.0, 100.0, 1000.0]);
        assert_eq!(log_ticks(5.0, 5e6).first(), Some(&10.0));
    }

    #[test]
    fn units_follow_the_range() {
        assert_eq!(unit(900.0).0, "ns");
        assert_eq!(unit(2_500.0).0, "µs");
        assert_eq!(unit(3e7).0, "ms");
        assert_eq!(num(2.50), "2.5");
        assert_eq!(num(120.0), "120");
    }

    #[test]
    fn thinning_keeps_outliers_and_extremes_and_fits_the_budget() {
        let mut run: Vec<(f64, f64)> = (0..20_000)
            .map(|i| (i as f64, 1000.0 + (i % 7) as f64))
            .collect();
        run[12_345].1 = 1e6; // an outlier
        let keep = thin(&[run.clone()], 20_000.0, 2_000);
        let kept: usize = keep[0].iter().filter(|&&k| k).count();
        assert!(keep[0][12_345], "the outlier is kept");
        assert!((1_500..=2_600).contains(&kept), "{kept}");
        let all = thin(&[run[..100].to_vec()], 100.0, 2_000);
        assert!(all[0].iter().all(|&k| k), "under budget: everything");
    }

    #[test]
    fn svg_has_the_parts() {
        let s = Series {
            label: "box <a>",
            colour: PALETTE[0],
            runs: vec![
                vec![(0.0, 100.0), (10.0, 120.0)],
                vec![(0.0, 90.0), (10.0, 5000.0)],
            ],
            median: vec![(0.0, 95.0), (10.0, 125.0)],
            fit: vec![(0.0, 96.0), (10.0, 118.0)],
            p90_max: 130.0,
        };
        let c = Chart {
            id: "c1",
            name: "socket",
            x_label: "open descriptors",
            log_y: false,
            budget: 10_000,
        };
        let out = svg(&c, &[s]);
        assert!(out.starts_with("<svg class=\"chart\""));
        assert!(out.contains("data-series=\"socket\"") && out.contains("data-systems=\"1\""));
        assert!(out.contains("box &lt;a&gt;"), "labels escaped");
        assert_eq!(out.matches("class=\"run\"").count(), 2);
        assert!(out.contains("class=\"median\"") && out.contains("class=\"fit\""));
        assert!(out.contains("time per operation (ns)"));
        assert!(out.ends_with("</svg>"));
    }
}
