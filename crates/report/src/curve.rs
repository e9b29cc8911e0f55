//! Curve charts of a figure against a level (a sweep; `history`'s files
//! in order), in which every sample is drawn.
//!
//! Each line is a system's figure per level (for a sweep the level's
//! figure, the mean of its last samples: docs/analysis.md §10), drawn as a
//! polyline with a marker at each level. Under it, every sample the figure
//! sums up is a dot at its level: semi-transparent, so that stacked dots
//! darken, and spread sideways in a narrow band in the order they were
//! taken (a level's first sample on the left), each system in its own
//! part of the band so that two systems' samples at one level do not
//! cover each other. Samples that are not part of the figure (those
//! before the last few) are hollow rings. A level whose samples are not
//! in the file (or that has none) shows its figure alone.
//!
//! The x axis has ticks only at the levels that exist — no "1.5 clients" —
//! and a label at each that does not overlap its neighbour (the others
//! keep their grid line). It is logarithmic when every level is above 0,
//! the levels are not evenly spaced, and either the largest is more than
//! [`LOG_SPAN`] times the smallest or there are three or more and each is
//! the smallest times a power of two (1, 2, 4, 8 …); otherwise linear.

use super::chart::{BOTTOM, H, LEFT, RIGHT, TOP, W, esc, frame, linear_ticks, num};
use analysis::sweep::fmt_level;
use std::fmt::Write;

/// Levels spanning more than this factor go on a logarithmic axis.
pub const LOG_SPAN: f64 = 10.0;

/// The widest band, in pixels, a level's samples are spread over.
pub const BAND_MAX: f64 = 18.0;

/// The radius of a sample's dot, in pixels.
const DOT_R: f64 = 2.5;

/// The opacity of a sample's dot: stacked ones darken.
const DOT_OPACITY: f64 = 0.45;

/// One sample on a [`curve_svg`] chart.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dot {
    /// Its level (x).
    pub x: f64,
    /// Its figure (y).
    pub y: f64,
    /// Whether it is one of the samples the level's figure is made of
    /// (filled); the others are hollow.
    pub counted: bool,
}

/// One system's line of a [`curve_svg`] chart.
#[derive(Clone)]
pub struct Curve<'a> {
    /// Legend label.
    pub label: &'a str,
    /// Colour.
    pub colour: &'static str,
    /// The figure at each level `(x, y)`, ascending x: the line.
    pub points: Vec<(f64, f64)>,
    /// Every sample, each level's in the order taken (empty: the figures
    /// are all there is).
    pub dots: Vec<Dot>,
    /// Drawn dashed, without markers: another figure scaled onto this
    /// chart (load × frequency on the throughput chart).
    pub dashed: bool,
}

/// Whether `levels` (distinct, ascending) go on a logarithmic axis: see
/// the module's documentation.
pub fn log_levels(levels: &[f64]) -> bool {
    let (Some(&lo), Some(&hi)) = (levels.first(), levels.last()) else {
        return false;
    };
    if lo <= 0.0 || levels.len() < 2 {
        return false;
    }
    let step = levels[1] - levels[0];
    let even = levels.len() >= 3
        && levels
            .windows(2)
            .all(|w| ((w[1] - w[0]) - step).abs() <= 1e-9 * (hi - lo));
    let doubling = levels.len() >= 3
        && levels.iter().all(|&l| {
            let e = (l / lo).log2();
            (e - e.round()).abs() < 1e-9
        });
    !even && (hi / lo > LOG_SPAN || doubling)
}

/// The x axis of a curve chart: the levels that exist and how they map to
/// the plot area.
#[derive(Clone, Debug, PartialEq)]
pub struct LevelAxis {
    /// Every distinct finite level, ascending.
    pub levels: Vec<f64>,
    /// Logarithmic (else linear).
    pub log: bool,
    /// The left and right edges of the plot area, on the axis's scale
    /// (log10 of the level when logarithmic).
    edges: (f64, f64),
}

impl LevelAxis {
    /// The axis over `xs` (any order, repeats allowed): a little room
    /// either side of the outer levels for their samples' band.
    pub fn new(xs: impl Iterator<Item = f64>) -> LevelAxis {
        let mut levels: Vec<f64> = xs.filter(|x| x.is_finite()).collect();
        levels.sort_by(f64::total_cmp);
        levels.dedup();
        let log = log_levels(&levels);
        let scaled: Vec<f64> = levels
            .iter()
            .map(|&l| if log { l.log10() } else { l })
            .collect();
        let (lo, hi) = match (scaled.first(), scaled.last()) {
            (Some(&a), Some(&b)) => (a, b),
            _ => (0.0, 1.0),
        };
        let pad = if hi > lo {
            (hi - lo) * 0.05
        } else if log {
            0.3
        } else {
            lo.abs().max(1.0) * 0.5
        };
        LevelAxis {
            levels,
            log,
            edges: (lo - pad, hi + pad),
        }
    }

    /// The SVG x of level `x`.
    pub fn sx(&self, x: f64) -> f64 {
        let v = if self.log { x.max(1e-300).log10() } else { x };
        let (a, b) = self.edges;
        LEFT + (v - a) / (b - a) * (W - LEFT - RIGHT)
    }

    /// The ticks `(SVG x, label)`, one per level; a label that would
    /// overlap the one before is left empty (the last level's label is
    /// kept before its neighbour's).
    pub fn ticks(&self) -> Vec<(f64, String)> {
        let labels: Vec<String> = self.levels.iter().map(|&l| fmt_level(l)).collect();
        let xs: Vec<f64> = self.levels.iter().map(|&l| self.sx(l)).collect();
        // About 6.5 pixels a character at 11 px, and a gap.
        let half = |i: usize| labels[i].chars().count() as f64 * 3.25;
        let fits = |a: usize, b: usize| xs[b] - xs[a] >= half(a) + half(b) + 6.0;
        let mut kept: Vec<usize> = Vec::new();
        for i in 0..labels.len() {
            if kept.last().is_none_or(|&j| fits(j, i)) {
                kept.push(i);
            } else if i + 1 == labels.len() && kept.len() > 1 {
                kept.pop();
                if kept.last().is_none_or(|&j| fits(j, i)) {
                    kept.push(i);
                }
            }
        }
        xs.into_iter()
            .zip(labels)
            .enumerate()
            .map(|(i, (x, l))| (x, if kept.contains(&i) { l } else { String::new() }))
            .collect()
    }

    /// How wide a level's band of samples is: at most [`BAND_MAX`], and
    /// at most half the narrowest gap between two levels.
    pub fn band(&self) -> f64 {
        self.levels
            .windows(2)
            .map(|w| self.sx(w[1]) - self.sx(w[0]))
            .fold(BAND_MAX * 2.0, f64::min)
            / 2.0
    }
}

/// Each dot's place among its level's: `(index, count)`, index 0 the
/// first taken.
fn places(dots: &[Dot]) -> Vec<(usize, usize)> {
    let mut counts: Vec<(f64, usize)> = Vec::new();
    let index: Vec<usize> = dots
        .iter()
        .map(|d| match counts.iter_mut().find(|(x, _)| *x == d.x) {
            Some((_, k)) => {
                *k += 1;
                *k - 1
            }
            None => {
                counts.push((d.x, 1));
                0
            }
        })
        .collect();
    dots.iter()
        .zip(index)
        .map(|(d, i)| (i, counts.iter().find(|(x, _)| *x == d.x).map_or(1, |c| c.1)))
        .collect()
}

/// Where each of `curves`' dots is drawn: its SVG x, spread within its
/// curve's part of its level's band in the order given.
pub fn dot_xs(axis: &LevelAxis, curves: &[Curve]) -> Vec<Vec<f64>> {
    let band = axis.band();
    let slot = band / curves.len().max(1) as f64;
    curves
        .iter()
        .enumerate()
        .map(|(c, curve)| {
            let left = -band / 2.0 + c as f64 * slot;
            curve
                .dots
                .iter()
                .zip(places(&curve.dots))
                .map(|(d, (i, k))| axis.sx(d.x) + left + (i as f64 + 0.5) * slot / k as f64)
                .collect()
        })
        .collect()
}

/// A curve chart of a figure against a level, as an `<svg>` element:
/// every sample a dot, each line through its levels' figures, y from 0;
/// `note` (if not empty) says what is drawn, under the title.
pub fn curve_svg(
    id: &str,
    title: &str,
    labels: (&str, &str),
    note: &str,
    curves: &[Curve],
) -> String {
    let axis = LevelAxis::new(curves.iter().flat_map(|c| {
        c.points
            .iter()
            .map(|p| p.0)
            .chain(c.dots.iter().map(|d| d.x))
    }));
    let y_max = curves
        .iter()
        .flat_map(|c| {
            c.points
                .iter()
                .map(|p| p.1)
                .chain(c.dots.iter().map(|d| d.y))
        })
        .filter(|y| y.is_finite())
        .fold(0.0, f64::max)
        .max(1e-9);
    let ph = H - TOP - BOTTOM;
    let yt = linear_ticks(y_max, 5);
    let y_top = *yt.last().unwrap_or(&1.0);
    let sy = |y: f64| TOP + ph - y / y_top * ph;
    let mut s = frame(
        id,
        "curve",
        title,
        labels,
        &axis.ticks(),
        &yt.iter().map(|&t| (sy(t), num(t))).collect::<Vec<_>>(),
    );
    let _ = write!(
        s,
        "<g class=\"levels\" data-scale=\"{}\" data-levels=\"{}\"></g>",
        if axis.log { "log" } else { "linear" },
        axis.levels.len()
    );
    if !note.is_empty() {
        let _ = write!(
            s,
            r##"<text class="note" x="{LEFT}" y="38" fill="#666" font-size="10.5">{}</text>"##,
            esc(note)
        );
    }
    for (c, xs) in curves.iter().zip(dot_xs(&axis, curves)) {
        write_dots(&mut s, c, &xs, &sy);
    }
    for c in curves {
        write_line(&mut s, c, &axis, &sy);
    }
    super::chart::legend_entries_and_close(&mut s, curves.iter().map(|c| (c.label, c.colour)));
    s
}

/// A curve's samples: filled dots for those in the figure, rings for the
/// others, each titled with its level, its place and its figure.
fn write_dots(s: &mut String, c: &Curve, xs: &[f64], sy: &dyn Fn(f64) -> f64) {
    let _ = write!(s, "<g class=\"samples\" data-label=\"{}\">", esc(c.label));
    for ((d, &x), (i, _)) in c.dots.iter().zip(xs).zip(places(&c.dots)) {
        if !d.y.is_finite() {
            continue;
        }
        let nth = i + 1;
        let paint = if d.counted {
            format!(
                "class=\"sample\" fill=\"{}\" fill-opacity=\"{DOT_OPACITY}\"",
                c.colour
            )
        } else {
            format!(
                "class=\"sample early\" fill=\"none\" stroke=\"{}\" stroke-opacity=\"0.7\"",
                c.colour
            )
        };
        let _ = write!(
            s,
            "<circle {paint} cx=\"{x:.1}\" cy=\"{:.1}\" r=\"{DOT_R}\"><title>{}: {} — sample {nth}{}: {}</title></circle>",
            sy(d.y),
            esc(c.label),
            fmt_level(d.x),
            if d.counted {
                ""
            } else {
                " (not in the figure)"
            },
            num(d.y)
        );
    }
    s.push_str("</g>");
}

/// A curve's line through its levels' figures, with a marker at each.
fn write_line(s: &mut String, c: &Curve, axis: &LevelAxis, sy: &dyn Fn(f64) -> f64) {
    let d: Vec<String> = c
        .points
        .iter()
        .enumerate()
        .map(|(i, &(x, y))| {
            format!(
                "{}{:.1},{:.1}",
                if i == 0 { "M" } else { "L" },
                axis.sx(x),
                sy(y)
            )
        })
        .collect();
    let _ = write!(
        s,
        "<path class=\"line{}\" data-label=\"{}\" d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\"{}/>",
        if c.dashed { " overlay" } else { "" },
        esc(c.label),
        d.join(" "),
        c.colour,
        if c.dashed {
            " stroke-dasharray=\"6,4\""
        } else {
            ""
        }
    );
    if c.dashed {
        return;
    }
    for &(x, y) in &c.points {
        let _ = write!(
            s,
            "<circle class=\"point\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\" fill=\"{}\" stroke=\"#fff\"><title>{}: {} → {}</title></circle>",
            axis.sx(x),
            sy(y),
            c.colour,
            esc(c.label),
            fmt_level(x),
            num(y)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dots(levels: &[f64], per_level: usize, counted_last: usize) -> Vec<Dot> {
        levels
            .iter()
            .flat_map(|&x| {
                (0..per_level).map(move |i| Dot {
                    x,
                    y: 100.0 * x + i as f64 * 7.0,
                    counted: i + counted_last >= per_level,
                })
            })
            .collect()
    }

    fn curve<'a>(label: &'a str, levels: &[f64], per_level: usize) -> Curve<'a> {
        Curve {
            label,
            colour: super::super::chart::PALETTE[0],
            points: levels.iter().map(|&x| (x, 100.0 * x + 10.0)).collect(),
            dots: dots(levels, per_level, 3),
            dashed: false,
        }
    }

    /// The tick labels shown, in order.
    fn labels(levels: &[f64]) -> Vec<String> {
        LevelAxis::new(levels.iter().copied())
            .ticks()
            .into_iter()
            .map(|t| t.1)
            .filter(|l| !l.is_empty())
            .collect()
    }

    #[test]
    fn levels_growing_by_a_factor_go_on_a_log_axis_evenly_spaced_ones_do_not() {
        let log = |l: &[f64]| log_levels(l);
        assert!(log(&[1.0, 2.0, 4.0]), "powers of two");
        assert!(log(&[2.0, 4.0, 8.0, 16.0, 64.0]), "powers of two, a gap");
        assert!(log(&[1.0, 10.0, 100.0, 1000.0]));
        assert!(log(&[1.0, 1000.0]), "two levels far apart");
        assert!(log(&[50e3, 100e3, 150e3, 262_500.0, 300e3, 1e6]));
        assert!(!log(&[1.0, 2.0]), "two levels close together");
        assert!(!log(&[1.0, 2.0, 3.0]), "even steps");
        assert!(
            !log(&(1..=16).map(f64::from).collect::<Vec<_>>()),
            "even steps"
        );
        assert!(!log(&[500.0, 1000.0, 1500.0, 2000.0, 3000.0]));
        assert!(!log(&[0.25, 0.5, 0.75, 1.0, 1.5, 2.0]), "a size sweep");
        assert!(!log(&[4.0]) && !log(&[]));
        assert!(!log(&[0.0, 1.0, 100.0]), "0 has no logarithm");
    }

    #[test]
    fn ticks_are_the_levels_only_never_a_fraction_between_them() {
        for levels in [
            &[1.0, 2.0][..],
            &[1.0, 2.0, 3.0],
            &[1.0, 2.0, 4.0],
            &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0],
            &[3.0],
        ] {
            let a = LevelAxis::new(levels.iter().copied());
            let t = a.ticks();
            assert_eq!(t.len(), levels.len(), "{levels:?}");
            let shown: Vec<String> = levels.iter().map(|&l| fmt_level(l)).collect();
            assert_eq!(labels(levels), shown, "{levels:?}");
            assert!(t.iter().all(|(_, l)| !l.contains('.')), "{t:?}");
            // Each tick at its level's place, left to right, in the plot.
            for (&l, (x, _)) in levels.iter().zip(&t) {
                assert_eq!(*x, a.sx(l));
                assert!((LEFT..=W - RIGHT).contains(x), "{x}");
            }
            assert!(t.windows(2).all(|w| w[0].0 < w[1].0));
        }
        // The same levels in any order, repeated, are one tick each.
        assert_eq!(labels(&[4.0, 1.0, 2.0, 1.0, 4.0]), ["1", "2", "4"]);
        // A size sweep keeps its fractions: they are the levels.
        assert_eq!(labels(&[0.5, 1.0, 1.5]), ["0.5", "1", "1.5"]);
        // On a log axis powers of two are evenly spaced.
        let a = LevelAxis::new([1.0, 2.0, 4.0, 8.0].into_iter());
        let d = (a.sx(2.0) - a.sx(1.0), a.sx(8.0) - a.sx(4.0));
        assert!(a.log && (d.0 - d.1).abs() < 1e-9, "{d:?}");
    }

    #[test]
    fn crowded_labels_make_room_but_keep_both_ends() {
        // forward's sweep and its binary search's levels near 250 000.
        let levels = [
            50e3, 100e3, 150e3, 200e3, 250e3, 256_250.0, 262_500.0, 275e3, 300e3, 1e6,
        ];
        let a = LevelAxis::new(levels.into_iter());
        let t = a.ticks();
        assert_eq!(t.len(), levels.len(), "a grid line at every level");
        let shown: Vec<&(f64, String)> = t.iter().filter(|(_, l)| !l.is_empty()).collect();
        assert!(shown.len() < levels.len() && shown.len() >= 4, "{t:?}");
        assert_eq!(shown[0].1, fmt_level(50e3));
        assert_eq!(shown[shown.len() - 1].1, fmt_level(1e6));
        for w in shown.windows(2) {
            let room = (w[0].1.chars().count() + w[1].1.chars().count()) as f64 * 3.25;
            assert!(w[1].0 - w[0].0 >= room, "{w:?} overlap");
        }
    }

    #[test]
    fn every_sample_is_a_dot_in_its_levels_band_in_the_order_taken() {
        let levels = [1.0, 2.0, 4.0, 8.0];
        let curves = [curve("a", &levels, 5), curve("b", &levels, 4)];
        let a = LevelAxis::new(levels.into_iter());
        let xs = dot_xs(&a, &curves);
        let band = a.band();
        assert!(band > 4.0 && band <= BAND_MAX, "{band}");
        for (c, x) in curves.iter().zip(&xs) {
            assert_eq!(x.len(), c.dots.len());
            for (d, &x) in c.dots.iter().zip(x) {
                assert!((x - a.sx(d.x)).abs() < band / 2.0, "{x} off {}", d.x);
            }
            // Within a level, left to right in the order taken.
            for (w, p) in c.dots.windows(2).zip(x.windows(2)) {
                if w[0].x == w[1].x {
                    assert!(p[0] < p[1], "{p:?}");
                }
            }
        }
        // The two systems' samples at one level do not overlap.
        let at = |k: usize, l: f64| -> Vec<f64> {
            curves[k]
                .dots
                .iter()
                .zip(&xs[k])
                .filter(|(d, _)| d.x == l)
                .map(|(_, &x)| x)
                .collect()
        };
        for l in levels {
            let (a0, b0) = (at(0, l), at(1, l));
            assert!(a0.iter().fold(0.0, |m: f64, &x| m.max(x)) < b0[0], "{l}");
        }
        let svg = curve_svg("c", "t", ("clients", "TPS"), "note <x>", &curves);
        assert_eq!(svg.matches("<circle class=\"sample").count(), 5 * 4 + 4 * 4);
        assert_eq!(svg.matches("class=\"sample early\"").count(), 2 * 4 + 4);
        assert_eq!(svg.matches("class=\"point\"").count(), 8);
        assert_eq!(svg.matches("class=\"line\"").count(), 2);
        assert!(svg.contains("data-scale=\"log\" data-levels=\"4\""));
        assert!(svg.contains("note &lt;x&gt;"), "the note, escaped");
        assert!(svg.contains("<title>a: 2 — sample 5: 228</title>"), "{svg}");
        assert!(svg.contains("<title>b: 2 — sample 1 (not in the figure): 200</title>"));
        assert!(!svg.contains(">1.5<") && !svg.contains(">0.5<"));
    }

    #[test]
    fn the_y_axis_reaches_the_highest_sample_and_a_line_without_samples_is_drawn() {
        // Samples spread ±30 % around the figure (pgbench, 1 client).
        let c = Curve {
            label: "pg",
            colour: "#000000",
            points: vec![(1.0, 20_000.0), (2.0, 30_000.0)],
            dots: [15_603.0, 29_604.0, 20_000.0]
                .iter()
                .map(|&y| Dot {
                    x: 1.0,
                    y,
                    counted: true,
                })
                .collect(),
            dashed: false,
        };
        let old = Curve {
            label: "old file",
            colour: "#0072B2",
            points: vec![(1.0, 18_000.0), (2.0, 41_000.0)],
            dots: Vec::new(),
            dashed: false,
        };
        let scaled = Curve {
            label: "pg load × frequency",
            points: vec![(1.0, 10_000.0), (2.0, 30_000.0)],
            dashed: true,
            ..old.clone()
        };
        let svg = curve_svg("c", "t", ("clients", "TPS"), "", &[c, old, scaled]);
        assert_eq!(svg.matches("class=\"sample\"").count(), 3);
        // The overlay is a dashed line without markers.
        assert_eq!(svg.matches("class=\"point\"").count(), 4);
        assert_eq!(svg.matches("class=\"line overlay\"").count(), 1);
        assert!(svg.contains("stroke-dasharray"));
        assert!(svg.contains(">50000</text>"), "y up to 41 000: {svg}");
        assert!(!svg.contains("class=\"note\""));
        assert!(!svg.contains(">1.5<"), "two clients: no 1.5");
    }
}
