//! One item of a plan (a benchmark with all its series, or a workload) as
//! the command line that measures it on another system: `scalebench run
//! NAME …` with every option that shapes what is measured and none that
//! says where this machine's files go. The other system writes a result
//! file of its own; the run here keeps its items in that system's file.

use super::RunOptions;
use super::plan::{Target, WorkTarget};
use crate::results::TimerKind;
use crate::values::Runs;
use crate::workloads::{self, Size};

/// One item of a plan, in the order the plan runs them.
#[derive(Clone, Copy)]
pub enum RemoteItem<'a> {
    /// A benchmark, every series of it (its variants).
    Bench(&'a Target),
    /// A workload.
    Work(&'a WorkTarget),
}

impl RemoteItem<'_> {
    /// Its name as `scalebench list` shows it.
    pub fn name(&self) -> &'static str {
        match self {
            RemoteItem::Bench(t) => t.bench.info().name,
            RemoteItem::Work(w) => w.workload.info().name,
        }
    }
}

/// `flag` and its value, as two arguments.
fn pair(v: &mut Vec<String>, flag: &str, value: impl ToString) {
    v.push(flag.to_string());
    v.push(value.to_string());
}

/// The options of `o` that shape every item: runs, warm-up, the timer,
/// pinning, the network benchmarks' backends and address family, the
/// sysctls to record and `--why`.
fn common(o: &RunOptions, v: &mut Vec<String>) {
    let m = &o.measure;
    match m.runs {
        Some(Runs::Fixed(r)) => pair(v, "--runs", r),
        Some(Runs::Auto) => pair(v, "--runs", "auto"),
        None => {}
    }
    if let Some(r) = m.runs_max {
        pair(v, "--runs-max", r);
    }
    if let Some(t) = m.runs_target {
        pair(v, "--runs-target", t * 100.0);
    }
    if let Some(w) = m.warmup {
        pair(v, "--warmup", w);
    }
    if o.timer == TimerKind::Tsc {
        pair(v, "--timer", "tsc");
    }
    if let Some(c) = o.pin {
        pair(v, "--pin", c);
    }
    if o.no_pin {
        v.push("--no-pin".into());
    }
    if !o.backends.is_empty() {
        pair(v, "--backend", o.backends.join(","));
    }
    if o.ipv6 {
        v.push("--ipv6".into());
    }
    if !o.record_sysctl.is_empty() {
        pair(v, "--record-sysctl", o.record_sysctl.join(","));
    }
    monitor_flags(m.monitor.as_ref(), v);
    if let Some(w) = &m.why {
        v.push("--why".into());
        pair(v, "--why-seconds", w.seconds);
        if let Some(p) = &w.profiler_cmd {
            pair(v, "--profiler", p);
        }
    }
}

/// The monitor's flags, only where they differ from the defaults (an
/// older scalebench elsewhere may not know them).
fn monitor_flags(m: Option<&crate::harness::monitor::Settings>, v: &mut Vec<String>) {
    let Some(m) = m else {
        pair(v, "--monitor", "off");
        return;
    };
    if !m.perf_events.is_empty() {
        pair(v, "--monitor", "perf");
        pair(v, "--perf-events", m.perf_events.join(","));
    }
    if m.interval != crate::harness::monitor::Settings::default().interval {
        pair(
            v,
            "--monitor-interval",
            humantime::format_duration(m.interval),
        );
    }
}

/// The sweep's options and the workloads' own flags as given.
fn workload_flags(o: &RunOptions, v: &mut Vec<String>) {
    let s = &o.measure.sweep;
    if let Some((var, levels)) = &s.levels {
        let l: Vec<String> = levels.iter().map(f64::to_string).collect();
        pair(v, "--sweep", format!("{var}={}", l.join(",")));
    }
    let d = |d: std::time::Duration| humantime::format_duration(d).to_string();
    if let Some(h) = s.heat_up {
        pair(v, "--heat-up", d(h));
    }
    if let Some(t) = s.sample {
        pair(v, "--sample-time", d(t));
    }
    if let Some(k) = s.samples {
        pair(v, "--samples", k);
    }
    if let Some(b) = s.baseline {
        pair(v, "--baseline", b);
    }
    let given = &o.measure.given;
    for (f, _) in workloads::flags() {
        if !given.has(f.name) {
            continue;
        }
        let flag = format!("--{}", f.name);
        let values = given.values(f.name);
        if f.value.is_none() {
            v.push(flag);
        } else if f.split {
            pair(v, &flag, values.join(","));
        } else {
            for x in values {
                pair(v, &flag, x);
            }
        }
    }
}

/// `scalebench`'s arguments (without the program) that measure `item` of
/// `o`'s plan on another system, its result file written to `out` there:
/// a benchmark at the n this plan gives it, a workload at its size, with
/// every option that shapes what is measured; quiet, with no HTML report.
pub fn item_args(o: &RunOptions, item: RemoteItem, out: &str) -> Vec<String> {
    let mut v = vec!["run".to_string(), item.name().to_string()];
    match item {
        RemoteItem::Bench(t) => pair(&mut v, "--max", t.n),
        RemoteItem::Work(w) => {
            if w.size == Size::Full {
                v.push("--full".into());
            }
        }
    }
    common(o, &mut v);
    if let RemoteItem::Work(_) = item {
        workload_flags(o, &mut v);
    }
    pair(&mut v, "--out", out);
    v.extend(["--no-report".into(), "--quiet".into()]);
    v
}
