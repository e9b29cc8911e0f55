//! The dashboard's chart: a track's figure over time, a line per system,
//! each point a link to its run's report.

use super::{Track, short};
use crate::report::chart::{PALETTE, esc, linear_ticks};
use std::fmt::Write as _;

/// The page's style sheet.
pub const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:980px;color:#222;padding:0 12px}h1{font-size:22px}h2{font-size:16px;margin-top:28px}.sub{color:#444}.ok{color:#1a7f37}.regressions li{color:#a40000}svg.track{width:100%;height:auto;border:1px solid #eee}table.runs{border-collapse:collapse;font-size:12.5px}table.runs td,table.runs th{border-bottom:1px solid #eee;padding:3px 8px;text-align:left;vertical-align:top}code{font-size:12px;background:#f5f5f5;padding:1px 3px}";

const W: f64 = 900.0;
const H: f64 = 260.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 150.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 40.0;

/// A number in few characters: 1.2 µs for ns, 45.3k for rates.
fn figure(v: f64, unit: &str) -> String {
    if unit.starts_with("ns") {
        crate::units::fmt_ns(v)
    } else {
        let s = if v.abs() >= 1e6 {
            format!("{:.2}M", v / 1e6)
        } else if v.abs() >= 1e4 {
            format!("{:.1}k", v / 1e3)
        } else if v.abs() >= 100.0 {
            format!("{v:.0}")
        } else {
            format!("{v:.2}")
        };
        format!("{s} {unit}")
    }
}

/// The date and minute of a time in seconds since the epoch (UTC).
fn when(at: f64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(at.max(0.0));
    let s = humantime::format_rfc3339_seconds(t).to_string();
    s.get(..16).unwrap_or(&s).replace('T', " ")
}

/// The chart of `t` as an `<svg>` with id `id`; `labels` gives each
/// system its colour, the same on every chart of the page.
pub fn track_svg(id: &str, t: &Track, labels: &[&str]) -> String {
    let points = t.systems.values().flatten();
    let (lo, hi) = points
        .clone()
        .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.at), b.max(p.at)));
    let span = (hi - lo).max(1.0);
    let y_max = points
        .clone()
        .map(|p| p.value)
        .fold(0.0, f64::max)
        .max(1e-9);
    // A track whose every point counts instructions is drawn in them.
    let counted = points.clone().all(|p| p.instructions);
    let tick = |v: f64| {
        if counted {
            crate::units::fmt_instructions(v)
        } else {
            figure(v, &t.unit)
        }
    };
    let yt = linear_ticks(y_max, 4);
    let y_top = *yt.last().unwrap_or(&y_max);
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let sx = |at: f64| LEFT + 10.0 + (at - lo) / span * (pw - 20.0);
    let sy = |v: f64| TOP + ph - v / y_top * ph;
    let mut o = String::new();
    let _ = write!(
        o,
        "<svg id=\"{}\" class=\"track\" viewBox=\"0 0 {W} {H}\" role=\"img\" aria-label=\"{} over time\" xmlns=\"http://www.w3.org/2000/svg\">",
        esc(id),
        esc(&t.name)
    );
    for v in &yt {
        let _ = write!(
            o,
            "<line x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#eee\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"11\">{}</text>",
            W - RIGHT,
            LEFT - 6.0,
            sy(*v) + 4.0,
            esc(&tick(*v)),
            y = sy(*v)
        );
    }
    for at in [lo, lo + span / 2.0, hi] {
        let _ = write!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\">{}</text>",
            sx(at),
            H - BOTTOM + 16.0,
            esc(&when(at))
        );
    }
    let _ = write!(
        o,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\" fill=\"#555\">when the run started (UTC) · {}</text>",
        LEFT + pw / 2.0,
        H - 6.0,
        esc(if counted {
            super::COUNTED_UNIT
        } else {
            &t.unit
        })
    );
    for (k, (system, pts)) in t.systems.iter().enumerate() {
        // Class names above the first system's points, below the next's,
        // so that two close lines do not write over each other.
        let label_dy = if k % 2 == 0 { -8.0 } else { 15.0 };
        let colour = PALETTE[labels.iter().position(|l| l == system).unwrap_or(0) % PALETTE.len()];
        let line: Vec<String> = pts
            .iter()
            .map(|p| format!("{:.1},{:.1}", sx(p.at), sy(p.value)))
            .collect();
        let _ = write!(
            o,
            "<g class=\"system\" data-system=\"{}\"><polyline points=\"{}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.5\"/>",
            esc(system),
            line.join(" ")
        );
        for p in pts {
            let (x, y) = (sx(p.at), sy(p.value));
            let tip = format!(
                "{system}, {}: {}{}{}{}",
                p.started,
                if p.instructions {
                    crate::units::Cost::Instructions { shift: 0 }.fmt(p.value)
                } else {
                    figure(p.value, &t.unit)
                },
                p.class
                    .as_deref()
                    .map_or(String::new(), |c| format!(", {c}")),
                if p.emulated { ", emulated" } else { "" },
                match (&p.regressed, &p.apart) {
                    (Some(r), _) => format!(" — regressed: {r}"),
                    (None, Some(a)) => format!(" — not compared with the run before: {a}"),
                    (None, None) => String::new(),
                }
            );
            let _ = write!(
                o,
                "<a href=\"runs/{}.html\" class=\"point{}\" data-run=\"{}\"><circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"4\" fill=\"{colour}\"{}><title>{}</title></circle>",
                short(&p.run),
                if p.regressed.is_some() {
                    " regressed"
                } else {
                    ""
                },
                short(&p.run),
                if p.emulated {
                    " fill-opacity=\"0.35\""
                } else {
                    ""
                },
                esc(&tip)
            );
            if p.regressed.is_some() {
                let _ = write!(
                    o,
                    "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"8\" fill=\"none\" stroke=\"#d00\" stroke-width=\"2\"/>"
                );
            }
            if let Some(c) = &p.class {
                let _ = write!(
                    o,
                    "<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"9.5\" fill=\"#555\">{}</text>",
                    y + label_dy,
                    esc(c)
                );
            }
            o.push_str("</a>");
        }
        o.push_str("</g>");
    }
    for (i, system) in t.systems.keys().enumerate() {
        let colour = PALETTE[labels.iter().position(|l| l == system).unwrap_or(0) % PALETTE.len()];
        let y = TOP + 10.0 + i as f64 * 16.0;
        let _ = write!(
            o,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"12\" height=\"4\" fill=\"{colour}\"/><text x=\"{:.1}\" y=\"{y:.1}\" font-size=\"11\">{}</text>",
            W - RIGHT + 12.0,
            y - 4.0,
            W - RIGHT + 28.0,
            esc(system)
        );
    }
    o.push_str("</svg>");
    o
}
