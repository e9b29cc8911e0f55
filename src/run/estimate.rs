//! What a run will take: its items in the order they run (each series of
//! each benchmark, each workload, on every profile or system) with an
//! estimate of each, printed by `run --dry-run` and counted down by the
//! whole run's progress line ("series 5 of 17, about 40 s left").
//!
//! The estimates come from the quick suite as measured on this project's
//! machine ([`QUICK_SECONDS`]), scaled by n and runs: an estimate of how
//! long, never a figure of speed. While a run goes on, what it has taken
//! so far against what was expected of the same items corrects the rest.

use super::plan::{RunPlan, Target, WorkTarget};
use crate::ctx::Ctx;
use crate::workloads::Size;
use std::time::Duration;

/// Seconds each benchmark series and workload of the quick suite took on
/// this project's machine, with the runs each series made (how and when:
/// docs/measurements.md, "Figures behind the code's choices"). A
/// series not here (another event backend) takes its benchmark's slowest
/// series. A workload's runs are given as 1 (not scaled).
pub const QUICK_SECONDS: &[(&str, f64, u32)] = &[
    ("socket", 1.6, 3),
    ("socket-threads", 1.6, 3),
    ("bind", 1.7, 5),
    ("bind-fresh", 4.4, 5),
    ("bind-port", 1.8, 3),
    ("fork", 3.4, 3),
    ("fork-static", 2.8, 3),
    ("fork-cleanup", 4.1, 3),
    ("fork-maps", 2.2, 3),
    ("mmap", 1.1, 3),
    ("mmap-touch", 1.3, 3),
    ("manymap-open", 1.8, 3),
    ("manymap-mmap", 1.1, 3),
    ("manymap-touch", 1.3, 3),
    ("connect[epoll]", 1.2, 3),
    ("connect[poll]", 1.9, 3),
    ("connect[select]", 1.2, 3),
    ("connect-ports", 1.2, 3),
    ("httpreq[epoll]", 1.5, 3),
    ("httpreq[poll]", 2.4, 3),
    ("httpreq[select]", 1.4, 3),
    ("pthread", 1.6, 3),
    ("http-ipstack", 1.7, 1),
    ("http-shortconn", 3.6, 1),
    ("mail", 5.9, 1),
];

/// Seconds of a time goal (`run --within`) kept for what follows the
/// last item: removing the work directory (the end of a quick run took
/// 2.5 to 4.4 s on a 2-vCPU VM, 2026-12-06, most of it unlinking the
/// manymap series' 10 500 files), the result files and the report.
pub const END_RESERVE: f64 = 5.0;

/// How much longer than their estimates the workloads left are taken to
/// run when a time goal sets their time aside: their sizes are times,
/// not counts, yet the quick ones took 19.6 s against 17.7 s estimated
/// on a slower machine (docs/measurements.md).
pub const WORK_MARGIN: f64 = 1.15;

/// One item of a run, in order.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PlannedItem {
    /// The series (`connect[poll]`) or workload (`http-shortconn`).
    pub name: String,
    /// `benchmark` or `workload`.
    pub kind: &'static str,
    /// The n of a benchmark series.
    pub n: Option<u64>,
    /// A workload's size in words (`20 000 files, 191 MiB, 10 000
    /// requests`), where it says more than its size's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<String>,
    /// Where it runs when the run has several profiles or systems.
    pub on: Option<String>,
    /// The estimate; `None` where nothing was measured to scale from (a
    /// full-size workload, a benchmark or workload not in the table).
    pub seconds: Option<f64>,
}

/// The quick suite's time of series or workload `name` and the runs it
/// made; a series of another variant takes its benchmark's slowest.
fn quick(name: &str) -> Option<(f64, u32)> {
    let exact = QUICK_SECONDS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|&(_, s, r)| (s, r));
    exact.or_else(|| {
        let bench = name.split('[').next()?;
        QUICK_SECONDS
            .iter()
            .filter(|(n, _, _)| n.split('[').next() == Some(bench))
            .map(|&(_, s, r)| (s, r))
            .reduce(|a, b| if b.0 > a.0 { b } else { a })
    })
}

/// The estimate of series `name` of `t` under `plan`: the quick suite's
/// time scaled by n and by the runs `plan` makes (as many as the quick
/// suite made when they stop once decided, at most `plan.runs`).
fn series_seconds(t: &Target, name: &str, plan: &RunPlan) -> Option<f64> {
    let i = t.bench.info();
    let (per, made) = quick(name)?;
    let scale = t.n as f64 / i.quick_n.max(1) as f64;
    let runs = if plan.decide {
        made.min(plan.runs)
    } else {
        plan.runs
    };
    Some(per * scale * f64::from(runs.max(1)) / f64::from(made.max(1)))
}

/// The estimate of workload `w`: the quick suite's time, for the quick
/// size without a sweep only (nothing was measured to scale the rest from).
fn work_seconds(plan: &RunPlan, w: &WorkTarget) -> Option<f64> {
    (w.size == Size::Quick && plan.sweep.is_none())
        .then(|| quick(w.workload.info().name).map(|q| q.0))
        .flatten()
}

/// A series' name: `connect[poll]`, or the benchmark's.
fn series_name(t: &Target, variant: Option<&str>) -> String {
    match variant {
        Some(v) => format!("{}[{v}]", t.bench.info().name),
        None => t.bench.info().name.to_string(),
    }
}

/// Every item of `plan` in the order it runs, each benchmark series and
/// workload once per profile, with its estimate; with several systems, or
/// one that is not this machine, each benchmark (all its series) and
/// workload once per system.
pub fn items(plan: &RunPlan, ctx: &Ctx) -> Vec<PlannedItem> {
    let elsewhere = plan
        .systems
        .iter()
        .any(|s| s.kind != crate::systems::spec::Kind::Local);
    if plan.systems.len() > 1 || elsewhere {
        return system_items(plan, ctx);
    }
    let parts = plan.parts();
    let on: Vec<Option<String>> = if parts.is_empty() {
        vec![None]
    } else {
        parts.into_iter().map(Some).collect()
    };
    let mut out = Vec::new();
    for (t, variant) in super::plan::all_series(plan, ctx) {
        let name = series_name(t, variant.as_deref());
        for o in &on {
            out.push(PlannedItem {
                name: name.clone(),
                kind: "benchmark",
                n: Some(t.n),
                size: None,
                on: o.clone(),
                seconds: series_seconds(t, &name, plan),
            });
        }
    }
    for w in &plan.work {
        let name = w.workload.info().name;
        let seconds = work_seconds(plan, w);
        for o in &on {
            out.push(PlannedItem {
                name: name.to_string(),
                kind: "workload",
                n: None,
                size: None,
                on: o.clone(),
                seconds,
            });
        }
    }
    out
}

/// `items` with each workload's size in words (`run --dry-run`): for a
/// workload on this machine, what `--fit` would make of it, read from
/// `here` (a context in the directory the work directory will be made
/// in); the words without the machine's free space otherwise.
pub fn with_sizes(items: Vec<PlannedItem>, plan: &RunPlan, here: &Ctx) -> Vec<PlannedItem> {
    let local = |on: &Option<String>| {
        on.as_ref().is_none_or(|name| {
            plan.systems
                .iter()
                .find(|s| &s.name == name)
                .is_none_or(|s| s.kind == crate::systems::spec::Kind::Local)
        })
    };
    let mut words: Vec<((&str, bool), Option<String>)> = Vec::new();
    items
        .into_iter()
        .map(|mut it| {
            let Some(w) = plan
                .work
                .iter()
                .find(|w| it.kind == "workload" && w.workload.info().name == it.name)
            else {
                return it;
            };
            let key = (w.workload.info().name, local(&it.on));
            it.size = match words.iter().find(|(k, _)| *k == key) {
                Some((_, s)) => s.clone(),
                None => {
                    let s = w
                        .workload
                        .size_words(&plan.work_options(w, None), Some(here).filter(|_| key.1));
                    words.push((key, s.clone()));
                    s
                }
            };
            it
        })
        .collect()
}

/// The items of a run on several systems: each benchmark and workload on
/// every system in turn. Only this machine's have an estimate: a guest or
/// another machine runs at a speed nothing here tells.
fn system_items(plan: &RunPlan, ctx: &Ctx) -> Vec<PlannedItem> {
    let series = super::plan::all_series(plan, ctx);
    let mut out = Vec::new();
    for t in &plan.targets {
        let here: Option<f64> = series
            .iter()
            .filter(|(x, _)| std::ptr::eq(*x, t))
            .map(|(x, v)| series_seconds(x, &series_name(x, v.as_deref()), plan))
            .sum();
        for s in &plan.systems {
            out.push(PlannedItem {
                name: t.bench.info().name.to_string(),
                kind: "benchmark",
                n: Some(t.n),
                size: None,
                on: Some(s.name.clone()),
                seconds: here.filter(|_| s.kind == crate::systems::spec::Kind::Local),
            });
        }
    }
    for w in &plan.work {
        let name = w.workload.info().name;
        let here = work_seconds(plan, w);
        for s in &plan.systems {
            out.push(PlannedItem {
                name: name.to_string(),
                kind: "workload",
                n: None,
                size: None,
                on: Some(s.name.clone()),
                seconds: here.filter(|_| s.kind == crate::systems::spec::Kind::Local),
            });
        }
    }
    out
}

/// The run's progress as a whole: which item of how many, and about how
/// long is left.
pub struct Countdown {
    items: Vec<PlannedItem>,
    done: usize,
    /// Time taken by the items done, and what was expected of those of
    /// them that had an estimate (the ratio corrects the rest).
    taken: Duration,
    expected_done: f64,
    taken_estimated: f64,
    started: Option<std::time::Instant>,
    /// The run's time goal and when the run began (`run --within`): what
    /// is left of it bounds the time left.
    goal: Option<(Duration, std::time::Instant)>,
}

impl Countdown {
    /// A countdown over `items`.
    pub fn new(items: Vec<PlannedItem>) -> Countdown {
        Countdown {
            items,
            done: 0,
            taken: Duration::ZERO,
            expected_done: 0.0,
            taken_estimated: 0.0,
            started: None,
            goal: None,
        }
    }

    /// The same countdown under a run's time goal (`run --within`): the
    /// time left is never more than what is left of the goal.
    pub fn within(mut self, goal: Option<(Duration, std::time::Instant)>) -> Countdown {
        self.goal = goal;
        self
    }

    /// The next item starts: its line ("[5/17] bind — about 40 s left").
    pub fn begin(&mut self) -> String {
        self.started = Some(std::time::Instant::now());
        let total = self.items.len();
        let Some(item) = self.items.get(self.done) else {
            return format!("[{}/{total}]", self.done + 1);
        };
        let on = item
            .on
            .as_ref()
            .map_or(String::new(), |o| format!(" on {o}"));
        format!(
            "[{}/{total}] {} {}{on}{}",
            self.done + 1,
            item.kind,
            item.name,
            self.left()
                .map_or(String::new(), |s| format!(" — about {} left", words(s)))
        )
    }

    /// The item that began with [`Countdown::begin`] is done.
    pub fn done(&mut self) {
        let took = self.started.take().map_or(Duration::ZERO, |s| s.elapsed());
        self.taken += took;
        if let Some(e) = self.items.get(self.done).and_then(|i| i.seconds) {
            self.expected_done += e;
            self.taken_estimated += took.as_secs_f64();
        }
        self.done += 1;
    }

    /// The share of a time goal of `goal`, `elapsed` of it gone, that the
    /// item about to run may take (a benchmark series): what is left once
    /// the workloads still to run (which keep their own time) and
    /// [`END_RESERVE`] are set aside, split among the series left in
    /// proportion to their estimates. `None` for a workload or an item
    /// without an estimate.
    pub fn share(&self, goal: Duration, elapsed: Duration) -> Option<Duration> {
        let rest = self.items.get(self.done..)?;
        let mine = rest.first().filter(|i| i.kind == "benchmark")?.seconds?;
        let of = |kind: &str| -> f64 {
            rest.iter()
                .filter(|i| i.kind == kind)
                .filter_map(|i| i.seconds)
                .sum()
        };
        let work = of("workload") * WORK_MARGIN;
        let left = goal.as_secs_f64() - elapsed.as_secs_f64() - work - END_RESERVE;
        Some(Duration::from_secs_f64(
            left.max(0.0) * mine / of("benchmark").max(mine),
        ))
    }

    /// Seconds left, from this item on: the estimates of the items left,
    /// scaled by how the items done so far compared with theirs; `None`
    /// when an item left has no estimate.
    pub fn left(&self) -> Option<f64> {
        let rest: Option<f64> = self.items[self.done.min(self.items.len())..]
            .iter()
            .map(|i| i.seconds)
            .sum();
        let ratio = if self.expected_done > 0.0 {
            self.taken_estimated / self.expected_done
        } else {
            1.0
        };
        let goal_left = self
            .goal
            .map(|(g, from)| g.as_secs_f64() - from.elapsed().as_secs_f64());
        match (rest.map(|r| r * ratio), goal_left) {
            (Some(r), Some(g)) => Some(r.min(g.max(0.0))),
            (r, _) => r,
        }
    }
}

/// Seconds in words: `40 s`, `3 min`, `1 h 5 min`.
pub fn words(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match s {
        0..90 => format!("{s} s"),
        90..3600 => format!("{} min", (s + 30) / 60),
        _ => format!("{} h {} min", s / 3600, (s % 3600 + 30) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(name: &str, seconds: Option<f64>) -> PlannedItem {
        PlannedItem {
            name: name.into(),
            kind: "benchmark",
            n: Some(100),
            size: None,
            on: None,
            seconds,
        }
    }

    #[test]
    fn a_time_goal_is_shared_by_the_series_left_after_the_workloads() {
        let work = PlannedItem {
            kind: "workload",
            ..item("mail", Some(10.0))
        };
        let mut c = Countdown::new(vec![
            item("a", Some(1.0)),
            item("b", Some(3.0)),
            work.clone(),
        ]);
        let goal = Duration::from_secs(30);
        // 30 s − 10 s of workload (and its margin) − the reserve, a
        // quarter of it for a.
        let work = 10.0 * WORK_MARGIN;
        let a = c.share(goal, Duration::ZERO).unwrap().as_secs_f64();
        assert!((a - (30.0 - work - END_RESERVE) / 4.0).abs() < 1e-9, "{a}");
        c.begin();
        c.done();
        // b gets all that is left when it begins, 12 s into the run.
        let b = c
            .share(goal, Duration::from_secs(12))
            .unwrap()
            .as_secs_f64();
        assert!((b - (30.0 - 12.0 - work - END_RESERVE)).abs() < 1e-9, "{b}");
        // A goal already spent leaves nothing; a workload has no share.
        assert_eq!(c.share(goal, Duration::from_secs(40)), Some(Duration::ZERO));
        c.begin();
        c.done();
        assert_eq!(c.share(goal, Duration::ZERO), None);
        // A series without an estimate has none either.
        let u = Countdown::new(vec![item("x", None)]);
        assert_eq!(u.share(goal, Duration::ZERO), None);
        // Under a goal, the time left is never more than the goal's.
        let long = Countdown::new(vec![item("a", Some(500.0))]);
        let bounded = Countdown::new(vec![item("a", Some(500.0))])
            .within(Some((goal, std::time::Instant::now())));
        assert_eq!(long.left(), Some(500.0));
        assert!(bounded.left().unwrap() <= 30.0, "{:?}", bounded.left());
    }

    #[test]
    fn the_countdown_counts_items_and_corrects_its_estimate_by_what_was_seen() {
        let mut c = Countdown::new(vec![
            item("a", Some(10.0)),
            item("b", Some(20.0)),
            item("c", Some(30.0)),
        ]);
        assert_eq!(c.begin(), "[1/3] benchmark a — about 60 s left");
        // The first item took twice its estimate (simulated: 20 s).
        c.started = None;
        c.taken_estimated = 20.0;
        c.expected_done = 10.0;
        c.done = 1;
        assert_eq!(c.left(), Some(100.0));
        assert_eq!(c.begin(), "[2/3] benchmark b — about 2 min left");
        // An item without an estimate: no figure, but the count goes on.
        let mut u = Countdown::new(vec![item("a", Some(1.0)), item("b", None)]);
        assert_eq!(u.begin(), "[1/2] benchmark a");
        u.done();
        assert_eq!(u.begin(), "[2/2] benchmark b");
    }

    #[test]
    fn seconds_read_as_words() {
        assert_eq!(words(40.2), "40 s");
        assert_eq!(words(150.0), "3 min");
        assert_eq!(words(3900.0), "1 h 5 min");
    }

    #[test]
    fn every_benchmark_and_quick_workload_has_an_estimate() {
        for b in crate::bench::REGISTRY {
            let n = b.info().name;
            assert!(quick(n).is_some(), "{n}: no quick-suite time");
            // Another backend's series takes the slowest measured one.
            if n == "connect" {
                let slowest = QUICK_SECONDS
                    .iter()
                    .filter(|(n, _, _)| n.starts_with("connect["))
                    .map(|&(_, s, r)| (s, r))
                    .max_by(|a, b| a.0.total_cmp(&b.0));
                assert_eq!(quick("connect[kqueue]"), slowest);
                assert!(slowest.is_some_and(|s| s.0 > quick("connect[epoll]").unwrap().0));
            }
        }
        for w in crate::workloads::WORKLOADS {
            let i = w.info();
            if i.quick {
                assert!(quick(i.name).is_some(), "{}: no quick-suite time", i.name);
            }
        }
    }
}
