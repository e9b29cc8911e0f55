//! Self-contained SVG scatter charts in which every sample counts. Each
//! system's samples are binned into the pixels of the plot area (x by n, y
//! by time on the chart's linear or logarithmic axis, through the same
//! mapping as the lines drawn over them) and the counts drawn as a raster
//! embedded in the SVG as a base64 PNG `<image>` (so it needs no script and
//! works in the HTML report and in the Markdown report's SVG files alike):
//! the system's colour with an opacity that grows with the logarithm of the
//! count, from faint but visible for one sample to nearly opaque for the
//! densest pixel. The dense band where most samples lie is drawn as dense
//! as it is; nothing is chosen, for being extreme or otherwise, and nothing
//! is dropped. Before, at most 4 000 samples a system were drawn, chosen to
//! keep the per-n envelope and the outliers, and the band looked thinner
//! than it was, below its own median.
//!
//! Sparse samples stay visible: when a system has fewer samples than a
//! tenth of the plot's pixels, each is drawn as a 3 × 3 square rather than
//! a single pixel; with more, a sample far from any other (no more than two
//! within 8 pixels) gets a ring on top, so that an outlier is not a lone
//! faint pixel. Several systems are separate layers, each in its own
//! Okabe–Ito colour (safe for colour-blind readers), multiplied where they
//! overlap so that one does not hide another.
//!
//! Over the samples, as before: each system's per-n median (solid) and
//! fitted curve (dashed) from the analysis, axes with units chosen by
//! range, a legend that names the shading. Runs: with all of a system's
//! runs in one density, a run that differs could no longer be told by its
//! marker shape, so each run of a system with several gets its own thin
//! dashed median line (medians of 40 equal-width columns of n, from that
//! run's samples alone). Runs that agree lie under the system's median;
//! one that does not stands apart from it, and hovering it names it. A
//! toggle per run was the other choice, but it needs a script or one image
//! per run, and the Markdown SVGs could not offer it. A linear axis that
//! stops short of rare slow samples counts them in its top row and says
//! how many.

use base64::Engine;
use std::fmt::Write;
use units::fmt_n;

/// Okabe–Ito colours, one per system.
pub const PALETTE: [&str; 7] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
];

/// One system's data in a chart.
pub struct Series<'a> {
    /// Legend label.
    pub label: &'a str,
    /// Whether the system was measured under emulation: its legend entry
    /// says so ([`super::EMULATED_MARK`]).
    pub emulated: bool,
    /// What its costs count: time, or instructions (the y axis says
    /// which).
    pub cost: units::Cost,
    /// Colour.
    pub colour: &'static str,
    /// Samples per run, `(n, ns)`.
    pub runs: Vec<Vec<(f64, f64)>>,
    /// Per-n medians, `(n, ns)`, ascending n.
    pub median: Vec<(f64, f64)>,
    /// The fitted curve, `(n, ns)`, ascending n (empty: none).
    pub fit: Vec<(f64, f64)>,
    /// The slowest sample of each bucket of n, `(n, ns)`, ascending n, for
    /// a series whose maximum per n matters (empty: none drawn).
    pub max: Vec<(f64, f64)>,
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
}

pub(super) const W: f64 = 760.0;
pub(super) const H: f64 = 400.0;
pub(super) const LEFT: f64 = 72.0;
pub(super) const RIGHT: f64 = 16.0;
pub(super) const TOP: f64 = 50.0;
pub(super) const BOTTOM: f64 = 46.0;

/// The y axis's unit chosen by the largest value shown: of time, or of
/// instructions when every series counts them.
fn axis_unit(max: f64, instructions: bool) -> (&'static str, f64) {
    if !instructions {
        return unit(max);
    }
    if max < 1e4 {
        ("", 1.0)
    } else if max < 1e6 {
        ("thousands", 1e3)
    } else if max < 1e9 {
        ("millions", 1e6)
    } else {
        ("billions", 1e9)
    }
}

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
pub(super) fn num(v: f64) -> String {
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

/// How the plot area maps data to pixels: x from 0 to `x_max` over
/// `width` pixels, y from `y_lo` to `y_hi` (linear: from 0) over `height`
/// pixels, top row first. The SVG coordinates of the median and fit lines
/// and the pixels of the density come from the same mapping, so that a
/// sample drawn in pixel (c, r) lies where a line through its value would.
#[derive(Clone, Copy, Debug)]
pub struct Axes {
    /// The largest n, at the right edge.
    pub x_max: f64,
    /// The time at the bottom edge (a log axis; a linear one starts at 0).
    pub y_lo: f64,
    /// The time at the top edge.
    pub y_hi: f64,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// Plot-area width in pixels.
    pub width: usize,
    /// Plot-area height in pixels.
    pub height: usize,
}

/// Where a sample falls against the plot area's y range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Inside.
    In,
    /// Above the top (a linear axis stops short of rare slow samples):
    /// counted in the top row.
    Above,
    /// Below the bottom (zero or less on a log axis): counted in the
    /// bottom row.
    Below,
}

impl Axes {
    /// How far up the axis `y` lies, 0 at the bottom and 1 at the top (not
    /// clamped; minus infinity for a non-positive value on a log axis).
    fn ty(&self, y: f64) -> f64 {
        if self.log_y {
            if y <= 0.0 {
                return f64::NEG_INFINITY;
            }
            (y.ln() - self.y_lo.ln()) / (self.y_hi.ln() - self.y_lo.ln())
        } else {
            y / self.y_hi
        }
    }

    /// The x offset of `x` in the plot area, in pixels from its left edge.
    pub fn px(&self, x: f64) -> f64 {
        x / self.x_max * self.width as f64
    }

    /// The y offset of `y` in the plot area, in pixels from its top edge,
    /// clamped to the area.
    pub fn py(&self, y: f64) -> f64 {
        let t = if self.log_y {
            self.ty(y.max(self.y_lo))
        } else {
            self.ty(y)
        };
        let h = self.height as f64;
        h - t.clamp(0.0, 1.0) * h
    }

    /// The pixel `(column, row)` a sample falls in, row 0 at the top, and
    /// whether it was inside the y range; `None` for a non-finite one (or
    /// an empty plot area).
    pub fn pixel(&self, x: f64, y: f64) -> Option<(usize, usize, Place)> {
        if !x.is_finite() || !y.is_finite() || self.width == 0 || self.height == 0 {
            return None;
        }
        let (w, h) = (self.width, self.height);
        let col = (self.px(x).floor().max(0.0) as usize).min(w - 1);
        let t = self.ty(y);
        let (row, place) = if t > 1.0 {
            (0, Place::Above)
        } else if t < 0.0 || t.is_nan() {
            (h - 1, Place::Below)
        } else {
            (
                (((1.0 - t) * h as f64).floor() as usize).min(h - 1),
                Place::In,
            )
        };
        Some((col, row, place))
    }
}

/// Samples per pixel of the plot area, for one system.
pub struct Density {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// Sample counts, row by row from the top.
    pub counts: Vec<u32>,
    /// Samples counted (every finite one).
    pub counted: usize,
    /// Of them, above the top and counted in the top row.
    pub above: usize,
    /// Of them, below the bottom and counted in the bottom row.
    pub below: usize,
    /// Non-finite samples, which have no place.
    pub skipped: usize,
    /// The radius of the square each sample is drawn as: 1 when the
    /// samples are few (see [`SPREAD_BELOW`]), else 0.
    pub spread: usize,
}

/// When a system has fewer samples than this fraction of the plot's
/// pixels (a tenth: 20 000 in a 672 × 304 plot), each sample is drawn as a
/// 3 × 3 square around its pixel rather than as the pixel alone, so that
/// samples spread thinly are still seen (the drawn density is then the
/// sum of the counts within one pixel); with more, the dense band would
/// be smeared and single pixels are enough, with lone ones ringed.
pub const SPREAD_BELOW: f64 = 0.1;
/// A pixel is lone when its neighbourhood of this radius (17 × 17 pixels)
/// holds at most [`LONE_MAX`] samples: an outlier far from anything else.
/// Lone pixels get a ring on top when samples are drawn as single pixels.
pub const LONE_RADIUS: usize = 8;
/// See [`LONE_RADIUS`].
pub const LONE_MAX: u64 = 2;
/// Opacity of a drawn pixel with one sample in reach, and of the densest.
pub const ALPHA: (f64, f64) = (0.4, 0.92);
/// Opacity levels of the density image (palette entries after the
/// transparent one).
const LEVELS: u32 = 48;

/// Bins every sample of every run into the pixels of the plot area.
pub fn density(runs: &[Vec<(f64, f64)>], axes: &Axes) -> Density {
    let (w, h) = (axes.width, axes.height);
    let mut d = Density {
        width: w,
        height: h,
        counts: vec![0; w * h],
        counted: 0,
        above: 0,
        below: 0,
        skipped: 0,
        spread: 0,
    };
    for &(x, y) in runs.iter().flatten() {
        let Some((c, r, place)) = axes.pixel(x, y) else {
            d.skipped += 1;
            continue;
        };
        d.counts[r * w + c] += 1;
        d.counted += 1;
        match place {
            Place::Above => d.above += 1,
            Place::Below => d.below += 1,
            Place::In => {}
        }
    }
    if (d.counted as f64) < SPREAD_BELOW * (w * h) as f64 {
        d.spread = 1;
    }
    d
}

impl Density {
    /// The count of pixel `(col, row)`.
    pub fn at(&self, col: usize, row: usize) -> u32 {
        self.counts[row * self.width + col]
    }

    /// The largest count.
    pub fn max(&self) -> u32 {
        self.counts.iter().copied().max().unwrap_or(0)
    }

    /// The sum of the counts within `radius` pixels of each pixel (a
    /// square of side 2 × radius + 1, cut at the edges), row by row.
    pub fn window_sums(&self, radius: usize) -> Vec<u64> {
        let (w, h) = (self.width, self.height);
        // Summed-area table, one row and column of zeros ahead.
        let mut sat = vec![0u64; (w + 1) * (h + 1)];
        for r in 0..h {
            let mut row = 0u64;
            for c in 0..w {
                row += self.counts[r * w + c] as u64;
                sat[(r + 1) * (w + 1) + c + 1] = sat[r * (w + 1) + c + 1] + row;
            }
        }
        let mut out = vec![0u64; w * h];
        for r in 0..h {
            let (r0, r1) = (r.saturating_sub(radius), (r + radius + 1).min(h));
            for c in 0..w {
                let (c0, c1) = (c.saturating_sub(radius), (c + radius + 1).min(w));
                out[r * w + c] = sat[r1 * (w + 1) + c1] + sat[r0 * (w + 1) + c0]
                    - sat[r0 * (w + 1) + c1]
                    - sat[r1 * (w + 1) + c0];
            }
        }
        out
    }

    /// The lone pixels `(col, row)`: holding samples, with at most
    /// [`LONE_MAX`] samples within [`LONE_RADIUS`] pixels (themselves
    /// included). Row by row from the top.
    pub fn lone(&self) -> Vec<(usize, usize)> {
        let sums = self.window_sums(LONE_RADIUS);
        (0..self.counts.len())
            .filter(|&i| self.counts[i] > 0 && sums[i] <= LONE_MAX)
            .map(|i| (i % self.width, i / self.width))
            .collect()
    }

    /// The density as drawn: an indexed PNG of `width` × `height` pixels,
    /// each sample spread over the pixels within `spread` of its own,
    /// every pixel `rgb` with an opacity from [`ALPHA`] by the
    /// logarithm of its sum against that of the largest (transparent where
    /// no sample is in reach).
    pub fn png(&self, rgb: [u8; 3]) -> Vec<u8> {
        let sums = self.window_sums(self.spread);
        let max = sums.iter().copied().max().unwrap_or(0);
        let log_max = (max as f64).ln();
        let pixels: Vec<u8> = sums
            .iter()
            .map(|&v| {
                if v == 0 {
                    return 0;
                }
                let f = if max <= 1 {
                    1.0
                } else {
                    (v as f64).ln() / log_max
                };
                (1 + (f * (LEVELS - 1) as f64).round() as u32) as u8
            })
            .collect();
        let mut palette = vec![255u8, 255, 255];
        let mut trns = vec![0u8];
        for l in 1..=LEVELS {
            palette.extend_from_slice(&rgb);
            let f = (l - 1) as f64 / (LEVELS - 1) as f64;
            trns.push(((ALPHA.0 + (ALPHA.1 - ALPHA.0) * f) * 255.0).round() as u8);
        }
        let mut out = Vec::new();
        let mut enc = png::Encoder::new(&mut out, self.width as u32, self.height as u32);
        enc.set_color(png::ColorType::Indexed);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_palette(palette);
        enc.set_trns(trns);
        enc.set_compression(png::Compression::Balanced);
        // Writing to a Vec fails only on a bad header, which these sizes
        // and palette cannot make.
        let mut w = enc.write_header().expect("PNG header");
        w.write_image_data(&pixels).expect("PNG data");
        w.finish().expect("PNG end");
        out
    }
}

/// `#rrggbb` as bytes (black when malformed).
pub fn rgb(colour: &str) -> [u8; 3] {
    let h = colour.trim_start_matches('#');
    let byte = |i: usize| {
        h.get(i..i + 2)
            .and_then(|b| u8::from_str_radix(b, 16).ok())
            .unwrap_or(0)
    };
    [byte(0), byte(2), byte(4)]
}

/// One run's own median line: the median n and median time of each of
/// 40 equal-width columns of n holding at least 3 of its samples.
pub fn run_median(run: &[(f64, f64)], x_max: f64) -> Vec<(f64, f64)> {
    const COLS: usize = 40;
    let mut cols: Vec<(Vec<f64>, Vec<f64>)> = vec![(Vec::new(), Vec::new()); COLS];
    for &(x, y) in run {
        if x.is_finite() && y.is_finite() {
            let c = ((x / x_max.max(1e-9) * COLS as f64).floor().max(0.0) as usize).min(COLS - 1);
            cols[c].0.push(x);
            cols[c].1.push(y);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let m = v.len() / 2;
        if v.len() % 2 == 1 {
            v[m]
        } else {
            (v[m - 1] + v[m]) / 2.0
        }
    };
    cols.iter_mut()
        .filter(|(xs, _)| xs.len() >= 3)
        .map(|(xs, ys)| (median(xs), median(ys)))
        .collect()
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
    let plot = Plot::new(chart, series);
    let mut o = String::with_capacity(64 * 1024);
    plot.write_open(&mut o);
    plot.write_y_axis(&mut o);
    plot.write_x_axis(&mut o);
    let densities = plot.write_densities(&mut o);
    let lone_total = plot.write_lone(&mut o, &densities);
    plot.write_run_medians(&mut o);
    plot.write_medians_and_fits(&mut o);
    plot.write_legend(&mut o, lone_total);
    write_notes(&mut o, &densities, lone_total);
    o.push_str("</svg>");
    o
}

/// Width of the plot area of an [`svg`] chart.
const PLOT_W: f64 = W - LEFT - RIGHT;
/// Height of the plot area of an [`svg`] chart.
const PLOT_H: f64 = H - TOP - BOTTOM;

/// A scatter chart being drawn: what it shows, and how data map to its
/// pixels.
struct Plot<'a> {
    /// The chart.
    chart: &'a Chart<'a>,
    /// Its systems' data.
    series: &'a [Series<'a>],
    /// The mapping of the plot area.
    axes: Axes,
}

impl<'a> Plot<'a> {
    /// The plot of `series`: x from 0 to the largest n; y over every
    /// sample on a log axis, on a linear one from 0 to a little above the
    /// largest per-n 90th percentile and median (or the 99.5th percentile
    /// of everything, when those are unknown), so that rare outliers do
    /// not flatten the curves; those above are counted in the top row.
    fn new(chart: &'a Chart<'a>, series: &'a [Series<'a>]) -> Plot<'a> {
        let all = || series.iter().flat_map(|s| s.runs.iter().flatten());
        let x_max = all()
            .map(|p| p.0)
            .filter(|x| x.is_finite())
            .fold(0.0, f64::max)
            .max(1.0);
        let mut ys: Vec<f64> = all()
            .map(|p| p.1)
            .filter(|y| *y > 0.0 && y.is_finite())
            .collect();
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
        let axes = Axes {
            x_max,
            y_lo,
            y_hi,
            log_y: chart.log_y,
            width: PLOT_W as usize,
            height: PLOT_H as usize,
        };
        Plot {
            chart,
            series,
            axes,
        }
    }

    /// The SVG x of `x`.
    fn sx(&self, x: f64) -> f64 {
        LEFT + self.axes.px(x)
    }

    /// The SVG y of `y`.
    fn sy(&self, y: f64) -> f64 {
        TOP + self.axes.py(y)
    }

    /// `x,y` SVG coordinates of `points`, separated by spaces (a
    /// polyline's `points`).
    fn coordinates(&self, points: &[(f64, f64)]) -> String {
        let pts: Vec<String> = points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", self.sx(x), self.sy(y)))
            .collect();
        pts.join(" ")
    }

    /// `log` or `linear`.
    fn scale(&self) -> &'static str {
        if self.chart.log_y { "log" } else { "linear" }
    }

    /// The `<svg>` element's opening, its title and the plot area's frame.
    fn write_open(&self, o: &mut String) {
        let (name, scale) = (self.chart.name, self.scale());
        let _ = write!(
            o,
            r#"<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" data-series="{}" data-scale="{scale}" data-systems="{}" font-family="sans-serif" font-size="12">"#,
            esc(name),
            self.series.len()
        );
        let _ = write!(
            o,
            r##"<title>{} — every sample against n ({scale} scale)</title><rect x="{LEFT}" y="{TOP}" width="{PLOT_W}" height="{PLOT_H}" fill="#fff" stroke="#999"/>"##,
            esc(name)
        );
    }

    /// The time axis: grid lines, tick labels in a unit chosen by the
    /// range, and its label.
    fn write_y_axis(&self, o: &mut String) {
        let (y_lo, y_hi) = (self.axes.y_lo, self.axes.y_hi);
        let counted: Vec<&str> = self
            .series
            .iter()
            .filter(|s| s.cost.counts_instructions())
            .map(|s| s.label)
            .collect();
        let all_counted = !self.series.is_empty() && counted.len() == self.series.len();
        let (uname, udiv) = axis_unit(y_hi, all_counted);
        let yticks = if self.chart.log_y {
            log_ticks(y_lo, y_hi)
        } else {
            linear_ticks(y_hi, ((PLOT_H / 40.0) as usize).max(2))
        };
        for t in yticks.iter().filter(|&&t| t <= y_hi * 1.0001) {
            let y = self.sy(*t);
            let _ = write!(
                o,
                r##"<line x1="{LEFT}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" stroke="#e4e4e4"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                LEFT + PLOT_W,
                LEFT - 6.0,
                y + 4.0,
                num(t / udiv)
            );
        }
        // Series of both kinds share the axis: one recorded nanosecond
        // is one instruction at QEMU's default shift, and the axis says so.
        let what = if all_counted {
            "instructions per operation".to_string()
        } else if counted.is_empty() {
            "time per operation".to_string()
        } else {
            format!("time per operation; {}: instructions", counted.join(", "))
        };
        let how: Vec<&str> = [uname, if self.chart.log_y { "log scale" } else { "" }]
            .into_iter()
            .filter(|w| !w.is_empty())
            .collect();
        let how = if how.is_empty() {
            String::new()
        } else {
            format!(" ({})", how.join(", "))
        };
        let _ = write!(
            o,
            r#"<text x="14" y="{:.1}" transform="rotate(-90 14 {:.1})" text-anchor="middle">{}{how}</text>"#,
            TOP + PLOT_H / 2.0,
            TOP + PLOT_H / 2.0,
            esc(&what),
        );
    }

    /// The n axis: ticks at least 70 px apart so labels never overlap,
    /// and its label.
    fn write_x_axis(&self, o: &mut String) {
        let x_max = self.axes.x_max;
        let xticks = linear_ticks(x_max, ((PLOT_W / 90.0) as usize).max(2));
        for t in xticks.iter().filter(|&&t| t <= x_max * 1.0001) {
            let x = self.sx(*t);
            let _ = write!(
                o,
                r##"<line x1="{x:.1}" x2="{x:.1}" y1="{TOP}" y2="{:.1}" stroke="#f0f0f0"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                TOP + PLOT_H,
                TOP + PLOT_H + 16.0,
                fmt_n(*t)
            );
        }
        let _ = write!(
            o,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">n = {}</text>"#,
            LEFT + PLOT_W / 2.0,
            H - 8.0,
            esc(self.chart.x_label)
        );
    }

    /// Every sample, as one density layer per system; several systems
    /// multiply, so that where they overlap both stay visible. Returns
    /// each system's density.
    fn write_densities(&self, o: &mut String) -> Vec<Density> {
        let blend = if self.series.len() > 1 {
            ";mix-blend-mode:multiply"
        } else {
            ""
        };
        let mut densities = Vec::with_capacity(self.series.len());
        for (si, s) in self.series.iter().enumerate() {
            let d = density(&s.runs, &self.axes);
            let _ = write!(
                o,
                r#"<g class="system" data-system="{}" data-index="{si}" data-samples="{}">"#,
                esc(s.label),
                d.counted
            );
            if d.counted > 0 {
                let png = base64::engine::general_purpose::STANDARD.encode(d.png(rgb(s.colour)));
                let _ = write!(
                    o,
                    r#"<image class="density" x="{LEFT}" y="{TOP}" width="{PLOT_W}" height="{PLOT_H}" preserveAspectRatio="none" style="image-rendering:pixelated{blend}" href="data:image/png;base64,{png}"/>"#
                );
            }
            o.push_str("</g>");
            densities.push(d);
        }
        densities
    }

    /// Lone samples, ringed over every layer, where samples are single
    /// pixels. Returns how many samples were ringed.
    fn write_lone(&self, o: &mut String, densities: &[Density]) -> usize {
        let mut lone_total = 0;
        for (s, d) in self
            .series
            .iter()
            .zip(densities)
            .filter(|(_, d)| d.spread == 0)
        {
            let lone = d.lone();
            if lone.is_empty() {
                continue;
            }
            lone_total += lone
                .iter()
                .map(|&(c, r)| d.at(c, r) as usize)
                .sum::<usize>();
            let mut path = String::with_capacity(lone.len() * 30);
            for (c, r) in lone {
                let _ = write!(
                    path,
                    "M{:.1} {:.1}a3 3 0 1 0 6 0a3 3 0 1 0-6 0",
                    LEFT + c as f64 - 2.5,
                    TOP + r as f64 + 0.5
                );
            }
            let _ = write!(
                o,
                r#"<path class="lone" data-system="{}" d="{path}" stroke="{}" stroke-width="1.2" fill="none"/>"#,
                esc(s.label),
                s.colour
            );
        }
        lone_total
    }

    /// Each run's own median, when a system has several runs.
    fn write_run_medians(&self, o: &mut String) {
        for s in self.series.iter().filter(|s| s.runs.len() > 1) {
            for (ri, run) in s.runs.iter().enumerate() {
                let m = run_median(run, self.axes.x_max);
                if m.len() < 2 {
                    continue;
                }
                let _ = write!(
                    o,
                    r#"<polyline class="run" data-system="{}" data-run="{}" points="{}" fill="none" stroke="{}" stroke-width="0.9" stroke-dasharray="3 2" opacity="0.8"><title>{}: run {}</title></polyline>"#,
                    esc(s.label),
                    ri + 1,
                    self.coordinates(&m),
                    s.colour,
                    esc(s.label),
                    ri + 1
                );
            }
        }
    }

    /// Each system's median and fitted curve, on top.
    fn write_medians_and_fits(&self, o: &mut String) {
        for s in self.series {
            if s.median.len() > 1 {
                let _ = write!(
                    o,
                    r#"<polyline class="median" points="{}" fill="none" stroke="{}" stroke-width="2.2"/>"#,
                    self.coordinates(&s.median),
                    s.colour
                );
            }
            if s.fit.len() > 1 {
                let _ = write!(
                    o,
                    r##"<polyline class="fit" points="{}" fill="none" stroke="#222" stroke-width="1.4" stroke-dasharray="5 4"/>"##,
                    self.coordinates(&s.fit)
                );
            }
            if s.max.len() > 1 {
                let _ = write!(
                    o,
                    r#"<polyline class="max" data-system="{}" points="{}" fill="none" stroke="{}" stroke-width="1.2" stroke-dasharray="1 3"><title>{}: slowest sample at each n</title></polyline>"#,
                    esc(s.label),
                    self.coordinates(&s.max),
                    s.colour,
                    esc(s.label)
                );
            }
        }
    }

    /// The legend: the systems from the left, then the key from the right
    /// (see [`write_key`]).
    fn write_legend(&self, o: &mut String, lone_total: usize) {
        let mut lx = LEFT;
        for s in self.series {
            let text = if s.emulated {
                format!("{} {} emulated", s.label, super::EMULATED_MARK)
            } else {
                s.label.to_string()
            };
            let _ = write!(
                o,
                r#"<rect x="{lx:.1}" y="8" width="14" height="10" fill="{}"/><text x="{:.1}" y="17">{}</text>"#,
                s.colour,
                lx + 18.0,
                esc(&text)
            );
            lx += 28.0 + 7.0 * text.chars().count() as f64;
        }
        let many_runs = self.series.iter().any(|s| s.runs.len() > 1);
        let max = self.series.iter().any(|s| s.max.len() > 1);
        write_key(o, many_runs, max, lone_total);
    }
}

/// The key, from the right: density, lone samples (when `lone_total`),
/// run medians (when any system has several runs), the maximum per n
/// (when `max`), median, fit.
fn write_key(o: &mut String, many_runs: bool, max: bool, lone_total: usize) {
    let mut rx = W
        - RIGHT
        - 262.0
        - if many_runs { 54.0 } else { 0.0 }
        - if max { 48.0 } else { 0.0 }
        - if lone_total > 0 { 42.0 } else { 0.0 };
    let _ = write!(
        o,
        r##"<rect x="{rx:.1}" y="8" width="5" height="10" fill="#555" opacity="{}"/><rect x="{:.1}" y="8" width="5" height="10" fill="#555" opacity="{}"/><rect x="{:.1}" y="8" width="5" height="10" fill="#555" opacity="{}"/><text x="{:.1}" y="17" fill="#555">samples (darker: more)</text>"##,
        ALPHA.0,
        rx + 5.0,
        (ALPHA.0 + ALPHA.1) / 2.0,
        rx + 10.0,
        ALPHA.1,
        rx + 19.0
    );
    rx += 148.0;
    if lone_total > 0 {
        let _ = write!(
            o,
            r##"<circle cx="{:.1}" cy="13" r="3" stroke="#555" stroke-width="1.2" fill="none"/><text x="{:.1}" y="17" fill="#555">lone</text>"##,
            rx + 3.5,
            rx + 10.0
        );
        rx += 42.0;
    }
    // A dashed line and its word: (stroke width, dashes, word, room).
    let dashed: [(bool, &str, &str, &str, f64); 2] = [
        (many_runs, "1", "3 2", "a run", 54.0),
        (max, "1.2", "1 3", "max", 48.0),
    ];
    for (shown, width, dashes, word, room) in dashed {
        if shown {
            let _ = write!(
                o,
                r##"<line x1="{rx:.1}" x2="{:.1}" y1="13" y2="13" stroke="#555" stroke-width="{width}" stroke-dasharray="{dashes}"/><text x="{:.1}" y="17" fill="#555">{word}</text>"##,
                rx + 16.0,
                rx + 20.0
            );
            rx += room;
        }
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
}

/// The note above the plot: what was drawn, and what was clipped.
fn write_notes(o: &mut String, densities: &[Density], lone_total: usize) {
    let counted: usize = densities.iter().map(|d| d.counted).sum();
    let above: usize = densities.iter().map(|d| d.above).sum();
    let below: usize = densities.iter().map(|d| d.below).sum();
    let skipped: usize = densities.iter().map(|d| d.skipped).sum();
    let mut notes = Vec::new();
    if counted > 0 {
        notes.push(format!(
            "all {} samples drawn, shaded by how many share a pixel{}",
            fmt_n(counted as f64),
            if lone_total > 0 {
                format!("; {} lone ones ringed", fmt_n(lone_total as f64))
            } else {
                String::new()
            }
        ));
    }
    if above > 0 {
        notes.push(format!(
            "{} above the top, counted in its top row",
            fmt_n(above as f64)
        ));
    }
    if below > 0 {
        notes.push(format!(
            "{} at or below zero, counted in the bottom row",
            fmt_n(below as f64)
        ));
    }
    if skipped > 0 {
        notes.push(format!("{} not finite, not drawn", fmt_n(skipped as f64)));
    }
    if !notes.is_empty() {
        let _ = write!(
            o,
            r##"<text class="note" x="{LEFT}" y="38" fill="#666" font-size="10.5">{}</text>"##,
            esc(&notes.join("; "))
        );
    }
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

/// Opens a chart's `<svg>` with its title, grid, tick labels and axis
/// labels; ticks are `(pixel, label)`.
pub(super) fn frame(
    id: &str,
    class: &str,
    title: &str,
    labels: (&str, &str),
    xt: &[(f64, String)],
    yt: &[(f64, String)],
) -> String {
    let pw = W - LEFT - RIGHT;
    let ph = H - TOP - BOTTOM;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg id=\"{}\" class=\"chart {class}\" viewBox=\"0 0 {W} {H}\" role=\"img\" aria-label=\"{}\" xmlns=\"http://www.w3.org/2000/svg\">",
        esc(id),
        esc(title)
    );
    let _ = write!(
        s,
        "<text x=\"{LEFT}\" y=\"18\" class=\"title\" font-size=\"14\" font-weight=\"bold\">{}</text>",
        esc(title)
    );
    for (y, label) in yt {
        let _ = write!(
            s,
            "<line x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"11\">{label}</text>",
            W - RIGHT,
            LEFT - 6.0,
            y + 4.0,
        );
    }
    for (x, label) in xt {
        let _ = write!(
            s,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{TOP}\" y2=\"{:.1}\" stroke=\"#eee\"/>",
            TOP + ph,
        );
        // A tick without a label: a grid line only (its label would
        // overlap a neighbour's).
        if !label.is_empty() {
            let _ = write!(
                s,
                "<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\">{}</text>",
                TOP + ph + 16.0,
                esc(label)
            );
        }
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"12\">{}</text><text x=\"14\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"12\" transform=\"rotate(-90 14 {:.1})\">{}</text>",
        LEFT + pw / 2.0,
        H - 8.0,
        esc(labels.0),
        TOP + ph / 2.0,
        TOP + ph / 2.0,
        esc(labels.1)
    );
    s
}

/// The legend of `lines`, top right, and the end of the `<svg>`.
fn legend_and_close(s: &mut String, lines: &[Line]) {
    legend_entries_and_close(s, lines.iter().map(|l| (l.label, l.colour)));
}

/// A legend of `(label, colour)` entries, top right, and the end of the
/// `<svg>`.
pub(super) fn legend_entries_and_close<'a>(
    s: &mut String,
    entries: impl Iterator<Item = (&'a str, &'a str)>,
) {
    for (i, (label, colour)) in entries.enumerate() {
        let y = TOP + 14.0 + i as f64 * 16.0;
        let x = W - RIGHT - 190.0;
        let _ = write!(
            s,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"12\" height=\"4\" fill=\"{}\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\">{}</text>",
            y - 4.0,
            colour,
            x + 16.0,
            y,
            esc(label)
        );
    }
    s.push_str("</svg>");
}

/// The largest y of `lines` (at least a tiny positive number).
fn y_max_of(lines: &[Line]) -> f64 {
    lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .fold(0.0, f64::max)
        .max(1e-9)
}

/// A line chart of throughput over time (x from 0, y from 0; one polyline
/// per line, drawn as steps ending at each sample), as an `<svg>` element.
pub fn lines_svg(id: &str, title: &str, x_label: &str, y_label: &str, lines: &[Line]) -> String {
    let x_max = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .fold(0.0, f64::max)
        .max(1e-3);
    let xt = linear_ticks(x_max, 8);
    let yt = linear_ticks(y_max_of(lines), 5);
    let (x_top, y_top) = (*xt.last().unwrap_or(&x_max), *yt.last().unwrap_or(&1.0));
    let pw = W - LEFT - RIGHT;
    let ph = H - TOP - BOTTOM;
    let sx = |x: f64| LEFT + x / x_top * pw;
    let sy = |y: f64| TOP + ph - y / y_top * ph;
    let mut s = frame(
        id,
        "lines",
        title,
        (x_label, y_label),
        &xt.iter().map(|&t| (sx(t), num(t))).collect::<Vec<_>>(),
        &yt.iter().map(|&t| (sy(t), num(t))).collect::<Vec<_>>(),
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
    legend_and_close(&mut s, lines);
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

    /// A plot-area mapping like the charts': 672 × 304 pixels.
    fn axes(log_y: bool, y_lo: f64, y_hi: f64, x_max: f64) -> Axes {
        Axes {
            x_max,
            y_lo,
            y_hi,
            log_y,
            width: (W - LEFT - RIGHT) as usize,
            height: (H - TOP - BOTTOM) as usize,
        }
    }

    /// A band of `n` samples around `level` (±10 %, densest in the middle,
    /// deterministic), n from 0 to 10 000.
    fn band(n: usize, level: f64) -> Vec<(f64, f64)> {
        (0..n)
            .map(|i| {
                let u = ((i * 7919) % 1000) as f64 / 1000.0;
                let v = ((i * 104_729) % 997) as f64 / 997.0;
                let jitter = (u + v) / 2.0 - 0.5;
                ((i % 10_000) as f64, level * (1.0 + 0.2 * jitter))
            })
            .collect()
    }

    /// Decodes a PNG into (width, height, RGBA bytes), the palette
    /// expanded.
    fn decode(png_bytes: &[u8]) -> (u32, u32, Vec<u8>) {
        let mut d = png::Decoder::new(std::io::Cursor::new(png_bytes));
        d.set_transformations(png::Transformations::EXPAND);
        let mut r = d.read_info().expect("a PNG");
        let mut buf = vec![0; r.output_buffer_size().unwrap()];
        let info = r.next_frame(&mut buf).unwrap();
        assert_eq!(info.color_type, png::ColorType::Rgba);
        buf.truncate(info.buffer_size());
        (info.width, info.height, buf)
    }

    #[test]
    fn axes_map_linear_and_log_values_to_the_pixel_under_the_lines() {
        let lin = axes(false, 0.0, 100.0, 1000.0);
        assert_eq!(lin.pixel(0.0, 50.0), Some((0, 152, Place::In)));
        assert_eq!(lin.pixel(500.0, 100.0), Some((336, 0, Place::In)));
        assert_eq!(lin.pixel(1000.0, 0.0), Some((671, 303, Place::In)));
        assert_eq!(lin.pixel(999.0, 25.0), Some((671, 228, Place::In)));
        assert_eq!(lin.pixel(10.0, 150.0), Some((6, 0, Place::Above)));
        assert_eq!(lin.pixel(10.0, -1.0), Some((6, 303, Place::Below)));
        assert_eq!(lin.pixel(f64::NAN, 1.0), None);
        let log = axes(true, 1.0, 1000.0, 1000.0);
        // 10 is a third of the way up three decades: 2/3 of 304 = 202.7.
        assert_eq!(log.pixel(0.0, 10.0), Some((0, 202, Place::In)));
        assert_eq!(log.pixel(0.0, 100.0), Some((0, 101, Place::In)));
        assert_eq!(log.pixel(0.0, 1000.0), Some((0, 0, Place::In)));
        assert_eq!(log.pixel(0.0, 1.0), Some((0, 303, Place::In)));
        assert_eq!(log.pixel(0.0, 0.0), Some((0, 303, Place::Below)));
        assert_eq!(log.pixel(0.0, 0.5), Some((0, 303, Place::Below)));
        // The pixel a sample is counted in is the one the median and fit
        // lines pass through at its value.
        for a in [lin, log] {
            for i in 1..500 {
                let (x, y) = (i as f64 * 1.99, 1.0 + i as f64 * 0.197);
                let (c, r, _) = a.pixel(x, y).unwrap();
                let (px, py) = (a.px(x), a.py(y));
                assert!(c as f64 <= px && px < c as f64 + 1.0, "{x}: {px} in {c}");
                assert!(r as f64 <= py && py < r as f64 + 1.0, "{y}: {py} in {r}");
            }
        }
    }

    #[test]
    fn every_finite_sample_is_counted_in_the_density() {
        let mut runs = vec![band(20_000, 1000.0), band(15_000, 3000.0)];
        runs[0].extend([
            (5.0, 1e9),           // far above a linear axis
            (5.0, 0.0),           // zero
            (-3.0, 1000.0),       // left of the axis
            (50_000.0, 1000.0),   // right of it
            (f64::NAN, 10.0),     // no place
            (7.0, f64::INFINITY), // no place
        ]);
        runs.push(Vec::new());
        let finite = runs
            .iter()
            .flatten()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .count();
        for a in [
            axes(false, 0.0, 4000.0, 10_000.0),
            axes(true, 500.0, 5000.0, 10_000.0),
        ] {
            let d = density(&runs, &a);
            let sum: u64 = d.counts.iter().map(|&c| c as u64).sum();
            assert_eq!(sum as usize, finite, "log {}", a.log_y);
            assert_eq!(d.counted, finite);
            assert_eq!(d.skipped, 2);
            assert_eq!(d.counts.len(), 672 * 304);
            // 1e9 is above both; 0 is below the log axis only.
            assert_eq!((d.above, d.below), (1, usize::from(a.log_y)));
            assert_eq!(d.spread, 0, "35 000 samples: single pixels");
        }
        let few = density(&[band(300, 1000.0)], &axes(false, 0.0, 2000.0, 10_000.0));
        assert_eq!((few.counted, few.spread), (300, 1), "few samples: 3 × 3");
    }

    #[test]
    fn an_isolated_outlier_is_still_drawn() {
        let mut runs: Vec<Vec<(f64, f64)>> = (0..5).map(|_| band(10_000, 2000.0)).collect();
        runs[3][4321] = (4321.0, 2e6); // a thousand times slower
        let s = Series {
            label: "box",
            emulated: false,
            cost: units::Cost::Time,
            colour: PALETTE[0],
            runs: runs.clone(),
            median: vec![(0.0, 2000.0), (10_000.0, 2000.0)],
            fit: Vec::new(),
            max: Vec::new(),
            p90_max: 2200.0,
        };
        let c = Chart {
            id: "c",
            name: "socket",
            x_label: "open descriptors",
            log_y: true,
        };
        let out = svg(&c, &[s]);
        // The axis reaches it; its pixel holds it alone, and is drawn.
        let a = axes(true, 2000.0 * 0.9 / 1.2, 2e6 * 1.2, 9999.0);
        let (col, row, place) = a.pixel(4321.0, 2e6).unwrap();
        assert_eq!(place, Place::In);
        let d = density(&runs, &a);
        assert_eq!(d.at(col, row), 1);
        assert!(d.lone().contains(&(col, row)), "ringed");
        let (_, _, rgba) = decode(&d.png(rgb(PALETTE[0])));
        let alpha = rgba[(row * 672 + col) * 4 + 3];
        assert!(alpha as f64 >= ALPHA.0 * 255.0 - 1.0, "opacity {alpha}");
        assert!(out.contains("1 lone ones ringed"), "{out}");
        assert_eq!(out.matches("class=\"lone\"").count(), 1);
        // Nothing else is ringed: the band is dense.
        assert_eq!(d.lone().len(), 1);
    }

    #[test]
    fn the_density_image_is_a_png_of_the_plot_area() {
        let a = axes(false, 0.0, 4000.0, 10_000.0);
        let d = density(&[band(30_000, 1000.0)], &a);
        let (w, h, rgba) = decode(&d.png(rgb("#D55E00")));
        assert_eq!((w, h), (672, 304));
        for (i, px) in rgba.chunks(4).enumerate() {
            if d.counts[i] > 0 {
                assert_eq!(px[..3], [0xD5, 0x5E, 0x00], "the system's colour");
                assert!(px[3] as f64 >= ALPHA.0 * 255.0 - 1.0);
            } else {
                assert_eq!(px[3], 0, "transparent where there is no sample");
            }
        }
        // Denser is more opaque: the band's middle against its edge.
        let (c, mid, _) = a.pixel(5000.0, 1000.0).unwrap();
        let (_, edge, _) = a.pixel(5000.0, 1095.0).unwrap();
        let alpha = |r: usize| rgba[(r * 672 + c) * 4 + 3];
        assert!(d.at(c, mid) > d.at(c, edge));
        assert!(
            alpha(mid) >= alpha(edge),
            "{} < {}",
            alpha(mid),
            alpha(edge)
        );
        // The SVG embeds it at the plot area's place and size.
        let s = Series {
            label: "box",
            emulated: false,
            cost: units::Cost::Time,
            colour: PALETTE[1],
            runs: vec![band(30_000, 1000.0)],
            median: Vec::new(),
            fit: Vec::new(),
            max: Vec::new(),
            p90_max: 0.0,
        };
        let c = Chart {
            id: "c",
            name: "socket",
            x_label: "n",
            log_y: false,
        };
        let out = svg(&c, &[s]);
        assert!(out.contains(r#"<image class="density" x="72" y="50" width="672" height="304""#));
        let b64 = out
            .split("href=\"data:image/png;base64,")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .unwrap();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap();
        let (w, h, _) = decode(&bytes);
        assert_eq!((w, h), (672, 304));
    }

    #[test]
    fn a_run_median_follows_its_own_samples() {
        let run: Vec<(f64, f64)> = (0..4000)
            .map(|i| (i as f64, if i < 2000 { 100.0 } else { 300.0 }))
            .collect();
        let m = run_median(&run, 4000.0);
        assert_eq!(m.len(), 40);
        assert!(m[..20].iter().all(|p| p.1 == 100.0));
        assert!(m[20..].iter().all(|p| p.1 == 300.0));
        assert!(run_median(&run[..2], 4000.0).is_empty(), "too few");
    }

    #[test]
    fn svg_has_the_parts() {
        let run = |k: f64| -> Vec<(f64, f64)> {
            (0..200)
                .map(|i| (i as f64 / 20.0, 100.0 + k * i as f64))
                .collect()
        };
        let mut odd = run(0.5);
        odd[7].1 = 5000.0;
        let s = Series {
            label: "box <a>",
            emulated: false,
            cost: units::Cost::Time,
            colour: PALETTE[0],
            runs: vec![run(0.1), odd],
            median: vec![(0.0, 95.0), (10.0, 125.0)],
            fit: vec![(0.0, 96.0), (10.0, 118.0)],
            max: Vec::new(),
            p90_max: 130.0,
        };
        let c = Chart {
            id: "c1",
            name: "socket",
            x_label: "open descriptors",
            log_y: false,
        };
        let out = svg(&c, &[s]);
        assert!(out.starts_with("<svg class=\"chart\""));
        assert!(out.contains("data-series=\"socket\"") && out.contains("data-systems=\"1\""));
        assert!(out.contains("box &lt;a&gt;"), "labels escaped");
        assert!(out.contains("data-samples=\"400\""));
        assert_eq!(out.matches("<image class=\"density\"").count(), 1);
        assert_eq!(out.matches("class=\"run\"").count(), 2, "a line per run");
        assert!(out.contains("<title>box &lt;a&gt;: run 2</title>"));
        assert!(out.contains("class=\"median\"") && out.contains("class=\"fit\""));
        assert!(out.contains("all 400 samples drawn"));
        assert!(out.contains("above the top, counted in its top row"));
        assert!(out.contains("time per operation (ns)"));
        assert!(!out.contains("mix-blend-mode"), "one system: no blending");
        assert!(out.ends_with("</svg>"));
    }

    #[test]
    fn several_systems_are_separate_layers() {
        let series: Vec<Series> = (0..3)
            .map(|i| Series {
                label: ["a", "b", "c"][i],
                emulated: false,
                cost: units::Cost::Time,
                colour: PALETTE[i],
                runs: vec![band(5000, 1000.0 * (i + 1) as f64)],
                median: Vec::new(),
                fit: Vec::new(),
                max: Vec::new(),
                p90_max: 0.0,
            })
            .collect();
        let c = Chart {
            id: "c",
            name: "socket",
            x_label: "n",
            log_y: true,
        };
        let out = svg(&c, &series);
        assert_eq!(out.matches("<g class=\"system\"").count(), 3);
        assert_eq!(out.matches("mix-blend-mode:multiply").count(), 3);
        assert!(out.contains("all 15 000 samples drawn"));
        assert_eq!(out.matches("class=\"run\"").count(), 0, "one run each");
    }
}
