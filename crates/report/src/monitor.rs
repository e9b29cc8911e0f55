//! The monitor's chart: what the system did while a series or a workload
//! was measured, drawn as strips over one time axis — the CPUs' time by
//! state, stacked, then one strip per counter the monitor read (its own
//! scale, its largest value written beside it), perf's events last.
//! Strips of counters that stayed at zero throughout (errors, drops,
//! blocked threads) are left out and named in a line below.

use super::chart::{esc, num};
use results::{Monitor, MonitorSample};
use std::fmt::Write as _;

/// Width of the chart, as the other charts.
const W: f64 = 760.0;
/// Room for the strip's name on the left.
const LEFT: f64 = 190.0;
/// Room for the largest value on the right.
const RIGHT: f64 = 70.0;
/// Height of the CPU strip.
const CPU_H: f64 = 64.0;
/// Height of a counter's strip.
const STRIP_H: f64 = 26.0;
/// Between strips.
const GAP: f64 = 6.0;
/// Above the first strip (title, legend).
const TOP: f64 = 40.0;
/// Below the last strip (time axis).
const BOTTOM: f64 = 34.0;

/// The CPU states stacked in the CPU strip, bottom up, with colours.
const STATES: [(&str, &str); 5] = [
    ("user", "#4e79a7"),
    ("system", "#e15759"),
    ("irq", "#f28e2b"),
    ("iowait", "#9c9c9c"),
    ("steal", "#b07aa1"),
];

/// One strip: a name, a unit and one value per sample (`None` where
/// the sample lacks it).
struct Strip {
    name: String,
    unit: Unit,
    values: Vec<Option<f64>>,
}

/// How a strip's values are written.
#[derive(Clone, Copy)]
enum Unit {
    /// Per second.
    Rate,
    /// A count.
    Count,
    /// Bytes.
    Bytes,
    /// MHz.
    Mhz,
}

impl Unit {
    fn show(self, v: f64) -> String {
        match self {
            Unit::Rate => format!("{}/s", short(v)),
            Unit::Count => short(v),
            Unit::Bytes => bytes(v),
            Unit::Mhz => format!("{} MHz", num(v)),
        }
    }
}

/// 12.3k, 4.5M: a count in few characters.
fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{}G", num(v / 1e9))
    } else if a >= 1e6 {
        format!("{}M", num(v / 1e6))
    } else if a >= 1e4 {
        format!("{}k", num(v / 1e3))
    } else {
        num(v)
    }
}

/// Bytes in binary units.
fn bytes(v: f64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut x = v;
    let mut i = 0;
    while x.abs() >= 1024.0 && i + 1 < units.len() {
        x /= 1024.0;
        i += 1;
    }
    format!("{} {}", num(x), units[i])
}

/// Every counter's strip, in a fixed order; perf's events after.
fn strips(m: &Monitor) -> Vec<Strip> {
    type Get = fn(&MonitorSample) -> Option<f64>;
    let counters: [(&str, Unit, Get); 15] = [
        ("run queue", Unit::Count, |s| s.run_queue.map(|v| v as f64)),
        ("blocked on I/O", Unit::Count, |s| {
            s.blocked.map(|v| v as f64)
        }),
        ("context switches", Unit::Rate, |s| s.context_switches_per_s),
        ("interrupts", Unit::Rate, |s| s.interrupts_per_s),
        ("forks", Unit::Rate, |s| s.forks_per_s),
        ("page faults", Unit::Rate, |s| s.page_faults_per_s),
        ("major faults", Unit::Rate, |s| s.major_faults_per_s),
        ("packets received", Unit::Rate, |s| s.net_rx_packets_per_s),
        ("packets sent", Unit::Rate, |s| s.net_tx_packets_per_s),
        ("network errors", Unit::Rate, |s| s.net_errors_per_s),
        ("packets dropped", Unit::Rate, |s| s.net_dropped_per_s),
        ("memory free", Unit::Bytes, |s| {
            s.memory_free_bytes.map(|v| v as f64)
        }),
        ("memory cached", Unit::Bytes, |s| {
            s.memory_cached_bytes.map(|v| v as f64)
        }),
        ("memory dirty", Unit::Bytes, |s| {
            s.memory_dirty_bytes.map(|v| v as f64)
        }),
        ("CPU clock (mean)", Unit::Mhz, |s| {
            let m = s.mhz.as_ref().filter(|m| !m.is_empty())?;
            Some(m.iter().sum::<f64>() / m.len() as f64)
        }),
    ];
    let mut v: Vec<Strip> = counters
        .iter()
        .map(|(name, unit, get)| Strip {
            name: name.to_string(),
            unit: *unit,
            values: m.samples.iter().map(get).collect(),
        })
        .collect();
    if let Some(p) = &m.perf {
        for event in &p.events {
            let values: Vec<Option<f64>> = m
                .samples
                .iter()
                .map(|s| {
                    // The perf interval ending nearest this sample's end.
                    p.samples
                        .iter()
                        .min_by(|a, b| (a.t - s.t).abs().total_cmp(&(b.t - s.t).abs()))
                        .and_then(|q| q.per_s.get(event).copied())
                })
                .collect();
            // perf counts the clocks in milliseconds.
            let ms = event.ends_with("-clock");
            v.push(Strip {
                name: format!("perf {event}{}", if ms { ", ms" } else { "" }),
                unit: Unit::Rate,
                values,
            });
        }
    }
    v.retain(|s| s.values.iter().any(Option::is_some));
    v
}

/// The mean share of all CPUs' time in each of [`STATES`] (irq with
/// softirq) over one sample, percent.
fn cpu_stack(s: &MonitorSample) -> Option<[f64; 5]> {
    if s.cpus.is_empty() {
        return None;
    }
    let n = s.cpus.len() as f64;
    let mut v = [0.0; 5];
    for c in &s.cpus {
        v[0] += c.user + c.nice;
        v[1] += c.system;
        v[2] += c.irq + c.softirq.unwrap_or(0.0);
        v[3] += c.iowait.unwrap_or(0.0);
        v[4] += c.steal.unwrap_or(0.0);
    }
    Some(v.map(|x| x / n))
}

/// The title of `what`'s monitor chart on `system`, which it names when
/// the report shows several systems.
pub fn title(what: &str, system: &str, many: bool) -> String {
    if many {
        format!("{what} on {system}: the system meanwhile")
    } else {
        format!("{what}: the system meanwhile")
    }
}

/// The monitor's chart as an `<svg>` element with id `id`; `None` when it
/// has no samples.
pub fn monitor_svg(id: &str, title: &str, m: &Monitor) -> Option<String> {
    if m.samples.is_empty() {
        return None;
    }
    let all = strips(m);
    let (drawn, flat): (Vec<&Strip>, Vec<&Strip>) = all
        .iter()
        .partition(|s| s.values.iter().flatten().any(|&v| v != 0.0));
    let has_cpu = m.samples.iter().any(|s| !s.cpus.is_empty());
    let plot_h = if has_cpu { CPU_H + GAP } else { 0.0 } + drawn.len() as f64 * (STRIP_H + GAP);
    let h = TOP + plot_h + BOTTOM + if flat.is_empty() { 0.0 } else { 14.0 };
    let x_max = m.samples.last().map_or(1.0, |s| s.t).max(1e-3);
    let pw = W - LEFT - RIGHT;
    let sx = |t: f64| LEFT + (t / x_max).clamp(0.0, 1.0) * pw;
    let mut o = String::new();
    let _ = write!(
        o,
        "<svg id=\"{}\" class=\"chart monitor\" viewBox=\"0 0 {W} {h:.0}\" role=\"img\" aria-label=\"{}\" xmlns=\"http://www.w3.org/2000/svg\"><text x=\"8\" y=\"18\" class=\"title\" font-size=\"13\" font-weight=\"bold\">{}</text>",
        esc(id),
        esc(title),
        esc(title)
    );
    let mut y = TOP;
    if has_cpu {
        cpu_strip(&mut o, m, y, &sx);
        y += CPU_H + GAP;
    }
    for s in &drawn {
        counter_strip(&mut o, s, &m.samples, y, &sx);
        y += STRIP_H + GAP;
    }
    time_axis(&mut o, x_max, y, &sx);
    if !flat.is_empty() {
        let names: Vec<&str> = flat.iter().map(|s| s.name.as_str()).collect();
        let _ = write!(
            o,
            "<text x=\"8\" y=\"{:.1}\" font-size=\"10.5\" fill=\"#666\">zero throughout: {}</text>",
            h - 6.0,
            esc(&names.join(", "))
        );
    }
    o.push_str("</svg>");
    Some(o)
}

/// The CPU strip: each state's mean share of all CPUs, stacked, with its
/// legend above.
fn cpu_strip(o: &mut String, m: &Monitor, y: f64, sx: &dyn Fn(f64) -> f64) {
    let cpus = m.samples.iter().map(|s| s.cpus.len()).max().unwrap_or(0);
    let _ = write!(
        o,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"11\">CPU time, {cpus} CPU{}</text><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" fill=\"#666\">100 %</text><rect x=\"{LEFT}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{CPU_H}\" fill=\"#f7f7f7\"/>",
        LEFT - 8.0,
        y + CPU_H / 2.0 + 4.0,
        if cpus == 1 { "" } else { "s" },
        W - RIGHT + 6.0,
        y + 9.0,
        W - LEFT - RIGHT
    );
    for (i, (state, colour)) in STATES.iter().enumerate() {
        let _ = write!(
            o,
            "<rect x=\"{:.1}\" y=\"26\" width=\"10\" height=\"8\" fill=\"{colour}\"/><text x=\"{:.1}\" y=\"34\" font-size=\"10.5\">{state}</text>",
            LEFT + i as f64 * 70.0,
            LEFT + 13.0 + i as f64 * 70.0
        );
    }
    let px = |pct: f64| y + CPU_H - pct.clamp(0.0, 100.0) / 100.0 * CPU_H;
    for s in &m.samples {
        let Some(stack) = cpu_stack(s) else { continue };
        let (x0, x1) = (sx(s.t - s.seconds), sx(s.t));
        let mut base = 0.0;
        for (v, (state, colour)) in stack.iter().zip(STATES) {
            if *v > 0.0 {
                let _ = write!(
                    o,
                    "<rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{colour}\"><title>{state} {}% at {} s</title></rect>",
                    px(base + v),
                    (x1 - x0).max(0.5),
                    px(base) - px(base + v),
                    num(*v),
                    num(s.t)
                );
            }
            base += v;
        }
    }
}

/// A counter's strip: its values as steps over each interval, from 0 to
/// its largest value.
fn counter_strip(
    o: &mut String,
    s: &Strip,
    samples: &[MonitorSample],
    y: f64,
    sx: &dyn Fn(f64) -> f64,
) {
    let top = s.values.iter().flatten().fold(0.0f64, |a, &b| a.max(b));
    let _ = write!(
        o,
        "<g class=\"strip\" data-counter=\"{}\"><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"11\">{}</text><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" fill=\"#666\">{}</text><rect x=\"{LEFT}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{STRIP_H}\" fill=\"#f7f7f7\"/>",
        esc(&s.name),
        LEFT - 8.0,
        y + STRIP_H / 2.0 + 4.0,
        esc(&s.name),
        W - RIGHT + 6.0,
        y + 9.0,
        esc(&s.unit.show(top)),
        W - LEFT - RIGHT
    );
    let py = |v: f64| y + STRIP_H - if top > 0.0 { v / top * STRIP_H } else { 0.0 };
    let mut d = String::new();
    for (sample, v) in samples.iter().zip(&s.values) {
        let Some(v) = v else { continue };
        let _ = write!(
            d,
            "{}{:.1},{:.1} {:.1},{:.1} ",
            if d.is_empty() { "M" } else { "L" },
            sx(sample.t - sample.seconds),
            py(*v),
            sx(sample.t),
            py(*v)
        );
    }
    let _ = write!(
        o,
        "<path d=\"{}\" fill=\"none\" stroke=\"#333\" stroke-width=\"1.2\"/></g>",
        d.trim_end()
    );
}

/// Seconds along the bottom.
fn time_axis(o: &mut String, x_max: f64, y: f64, sx: &dyn Fn(f64) -> f64) {
    for t in super::chart::linear_ticks(x_max, 8) {
        if t > x_max * 1.0001 {
            continue;
        }
        let _ = write!(
            o,
            "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{TOP}\" y2=\"{y:.1}\" stroke=\"#ddd\" stroke-dasharray=\"2 3\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"10.5\">{}</text>",
            sx(t),
            sx(t),
            sx(t),
            y + 10.0,
            num(t)
        );
    }
    let _ = write!(
        o,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\">seconds since the start</text>",
        LEFT + (W - LEFT - RIGHT) / 2.0,
        y + 24.0
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::{CpuShare, PerfCounters, PerfSample};

    fn sample(t: f64, user: f64, ctxt: f64) -> MonitorSample {
        MonitorSample {
            t,
            seconds: 1.0,
            cpus: vec![
                CpuShare {
                    user,
                    system: 10.0,
                    idle: 90.0 - user,
                    ..Default::default()
                };
                2
            ],
            context_switches_per_s: Some(ctxt),
            net_errors_per_s: Some(0.0),
            memory_free_bytes: Some(3 << 30),
            ..Default::default()
        }
    }

    fn monitor() -> Monitor {
        Monitor {
            interval_s: 1.0,
            source: "test".into(),
            unread: vec![],
            samples: vec![sample(1.0, 20.0, 1000.0), sample(2.0, 60.0, 25_000.0)],
            perf: Some(PerfCounters {
                events: vec!["cycles".into(), "page-faults".into()],
                not_counted: vec!["cycles".into()],
                error: None,
                samples: vec![PerfSample {
                    t: 1.01,
                    per_s: [("page-faults".to_string(), 42.0)].into(),
                }],
            }),
        }
    }

    #[test]
    fn every_counter_read_gets_a_strip_and_zero_ones_are_named() {
        let svg = monitor_svg("m1", "socket — the system meanwhile", &monitor()).unwrap();
        assert!(svg.starts_with("<svg id=\"m1\" class=\"chart monitor\""));
        assert!(svg.contains("CPU time, 2 CPUs"));
        assert!(svg.contains("data-counter=\"context switches\""));
        assert!(svg.contains("25k/s"), "the largest rate beside its strip");
        assert!(svg.contains("data-counter=\"memory free\""));
        assert!(svg.contains("3 GiB"));
        assert!(svg.contains("data-counter=\"perf page-faults\""));
        assert!(!svg.contains("perf cycles"), "not counted: no strip");
        assert!(svg.contains("zero throughout: network errors"));
        assert!(
            !svg.contains("data-counter=\"interrupts\""),
            "not read: no strip"
        );
        // User time stacked: 60 % of the strip's height in the second
        // sample (both CPUs alike).
        assert!(svg.contains("<title>user 60% at 2 s</title>"));
        assert!(svg.ends_with("</svg>"));
    }

    #[test]
    fn no_samples_no_chart() {
        let mut m = monitor();
        m.samples.clear();
        assert_eq!(monitor_svg("x", "t", &m), None);
    }

    #[test]
    fn units_are_short() {
        assert_eq!(short(25_000.0), "25k");
        assert_eq!(short(1_500_000.0), "1.5M");
        assert_eq!(short(512.0), "512");
        assert_eq!(bytes(1536.0), "1.5 KiB");
        assert_eq!(bytes(644_816_896.0), "615 MiB");
        assert_eq!(Unit::Rate.show(980.17), "980/s");
    }
}
