//! Judging a recorded series (`benchmarks[]` of a result file), and the
//! verdict kept with it (`benchmarks[].verdict`).
//!
//! A run judges each series as it ends and keeps the verdict in the file,
//! stamped with the analysis that made it ([`ANALYSIS`], a digest of this
//! folder's source made by the build), the options it judged with and a
//! digest of the runs it judged. A report reuses a kept verdict only when
//! all three are the same as its own; anything else (an older file, another
//! build's analysis, runs edited by hand, `--rejudge`) is judged again, many
//! series at once across the CPUs.

use super::buckets::Sample;
use super::{Options, RunInfo, Verdict};
use results::{BenchResult, Direction, RecheckWhen, StoredVerdict, VerdictOptions};
use std::hash::Hasher;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The identity of this build's analysis: FNV-1a over every file of
/// `crates/analysis/src/` (see build.rs).
pub const ANALYSIS: &str = env!("SCALEBENCH_ANALYSIS");

/// The samples of a recorded series, for analysis.
pub fn samples_of(b: &BenchResult) -> Vec<Sample> {
    b.runs
        .iter()
        .flat_map(|r| {
            r.samples.iter().map(move |s| Sample {
                n: s[0] as f64,
                ns: s[1] as f64,
                run: r.index,
            })
        })
        .collect()
}

/// What is known of each run of a recorded series beyond its samples:
/// the direction it visited n and its re-timing at low n.
pub fn runs_of(b: &BenchResult) -> Vec<RunInfo> {
    b.runs
        .iter()
        .map(|r| RunInfo {
            run: r.index,
            downwards: matches!(r.direction, Direction::Down | Direction::DownUp),
            recheck: r
                .recheck
                .iter()
                .map(|s| (s[0] as f64, s[1] as f64))
                .collect(),
            recheck_after: r.recheck_when != Some(RecheckWhen::Before),
        })
        .collect()
}

/// Median timer overhead over a series' runs.
pub fn overhead_of(b: &BenchResult) -> Option<f64> {
    let mut o: Vec<f64> = b.runs.iter().map(|r| r.timer_overhead.median_ns).collect();
    o.sort_by(f64::total_cmp);
    (!o.is_empty()).then(|| o[o.len() / 2])
}

/// Judges one recorded series from its runs, whatever verdict it keeps.
pub fn judge_fresh(b: &BenchResult, opts: &Options) -> Result<Verdict, String> {
    if b.runs.is_empty() {
        return Err(match (&b.status, &b.message) {
            (s, Some(m)) => format!("{}: {m}", s.as_str()),
            (s, None) => format!("{}: no runs", s.as_str()),
        });
    }
    super::analyze_runs(&samples_of(b), &runs_of(b), overhead_of(b), opts)
        .map_err(|e| e.to_string())
}

/// The options as a kept verdict records them (the threads it used do not
/// change a verdict, and are not kept).
fn kept_options(opts: &Options) -> VerdictOptions {
    VerdictOptions {
        tolerance: opts.tolerance,
        level: opts.level,
        min_decades: opts.min_decades,
        replicas: opts.replicas,
        seed: opts.seed,
    }
}

/// A digest (FNV-1a, 64 bits, hex) of everything the analysis reads of a
/// series: each run's index, direction, samples, re-timings and timer
/// overhead.
pub fn inputs_digest(b: &BenchResult) -> String {
    let mut h = fnv::FnvHasher::default();
    for r in &b.runs {
        h.write_u32(r.index);
        h.write_u8(r.direction as u8);
        h.write_u8(match r.recheck_when {
            None => 0,
            Some(RecheckWhen::Before) => 1,
            Some(RecheckWhen::After) => 2,
        });
        h.write_u64(r.timer_overhead.median_ns.to_bits());
        for list in [&r.samples, &r.recheck] {
            h.write_usize(list.len());
            for s in list.iter() {
                h.write_u64(s[0]);
                h.write_u64(s[1]);
            }
        }
    }
    format!("{:016x}", h.finish())
}

/// What a series keeps, as this analysis sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum Kept {
    /// A verdict this analysis made with these options from these very
    /// runs, which agrees with them: shown as kept.
    Agrees(Box<Verdict>),
    /// None, or one another analysis or other options made, or from other
    /// runs, or `--rejudge`: judged again, as a matter of course.
    Stale,
    /// One whose stamps say it is current but which does not agree with
    /// its own samples (edited by hand, or damaged): judged again, and
    /// said so, with why ([`super::verify`]).
    Disagrees(String),
}

/// The verdict kept with `b`, checked: see [`Kept`].
pub fn kept_checked(b: &BenchResult, opts: &Options) -> Kept {
    let Some(s) = b.verdict.as_ref() else {
        return Kept::Stale;
    };
    if opts.rejudge
        || s.analysis != ANALYSIS
        || s.options != kept_options(opts)
        || s.inputs != inputs_digest(b)
    {
        return Kept::Stale;
    }
    let v: Verdict = match serde_json::from_value(s.verdict.clone()) {
        Ok(v) => v,
        Err(e) => return Kept::Disagrees(format!("it cannot be read ({e})")),
    };
    match super::verify::disagreement(&samples_of(b), &runs_of(b), overhead_of(b), &v, opts) {
        None => Kept::Agrees(Box::new(v)),
        Some(why) => Kept::Disagrees(why),
    }
}

/// The verdict kept with `b`, when this analysis made it with these
/// options from these very runs and it agrees with them.
pub fn kept(b: &BenchResult, opts: &Options) -> Option<Verdict> {
    match kept_checked(b, opts) {
        Kept::Agrees(v) => Some(*v),
        _ => None,
    }
}

/// Keeps `v` with `b`, stamped; keeps nothing (and drops an older verdict)
/// when `v` would not read back as itself (a figure JSON cannot hold).
pub fn keep(b: &mut BenchResult, v: &Verdict, opts: &Options) {
    b.verdict = serde_json::to_value(v)
        .ok()
        .filter(|json| serde_json::from_value::<Verdict>(json.clone()).is_ok_and(|r| &r == v))
        .map(|verdict| StoredVerdict {
            analysis: ANALYSIS.into(),
            options: kept_options(opts),
            inputs: inputs_digest(b),
            verdict,
        });
}

/// Judges a recorded series: its kept verdict when [`kept`] allows, else
/// from its runs.
pub fn judge(b: &BenchResult, opts: &Options) -> Result<Verdict, String> {
    match kept(b, opts) {
        Some(v) => Ok(v),
        None => judge_fresh(b, opts),
    }
}

/// Many series judged: each one's verdict, in order, and which of them
/// kept a verdict that disagreed with its samples, with why.
#[derive(Debug, Default)]
pub struct Judged {
    /// Each series' verdict, or why it has none.
    pub verdicts: Vec<Result<Verdict, String>>,
    /// `(index, why)` of each series whose kept verdict was judged again
    /// because it disagreed with its samples ([`Kept::Disagrees`]).
    pub disagreed: Vec<(usize, String)>,
}

/// Judges many series, in order: kept verdicts that agree with their
/// samples are read, the rest judged on up to `opts.threads` threads, one
/// series per thread at a time (each series' replicas on one thread then;
/// the verdicts do not depend on it).
pub fn judge_all(bs: &[&BenchResult], opts: &Options) -> Judged {
    let mut disagreed = Vec::new();
    let mut out: Vec<Option<Result<Verdict, String>>> = Vec::with_capacity(bs.len());
    for (i, b) in bs.iter().enumerate() {
        out.push(match kept_checked(b, opts) {
            Kept::Agrees(v) => Some(Ok(*v)),
            Kept::Stale => None,
            Kept::Disagrees(why) => {
                disagreed.push((i, why));
                None
            }
        });
    }
    let todo: Vec<usize> = (0..bs.len()).filter(|&i| out[i].is_none()).collect();
    for (i, v) in judge_many(bs, &todo, opts) {
        out[i] = Some(v);
    }
    Judged {
        verdicts: out
            .into_iter()
            .map(|v| v.unwrap_or_else(|| Err("not judged".into())))
            .collect(),
        disagreed,
    }
}

/// Judges the series `todo` of `bs` afresh, on up to `opts.threads`
/// threads.
fn judge_many(
    bs: &[&BenchResult],
    todo: &[usize],
    opts: &Options,
) -> Vec<(usize, Result<Verdict, String>)> {
    if todo.is_empty() {
        return Vec::new();
    }
    let workers = opts.threads.clamp(1, todo.len());
    let inner = Options {
        threads: if workers > 1 { 1 } else { opts.threads },
        ..*opts
    };
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    while let Some(&i) = todo.get(next.fetch_add(1, Ordering::Relaxed)) {
                        mine.push((i, judge_fresh(bs[i], &inner)));
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::{Overhead, Params, RunRecord, Status};

    /// A series of `runs` runs whose cost grows as `ns(n)`, with a little
    /// deterministic noise.
    fn series(name: &str, runs: u32, ns: impl Fn(u64) -> u64) -> BenchResult {
        let runs = (0..runs)
            .map(|r| RunRecord {
                index: r,
                started: "2026-11-26T00:00:00Z".into(),
                duration_ms: 1.0,
                timer_overhead: Overhead {
                    min_ns: 15.0,
                    median_ns: 20.0,
                },
                samples: (0..2_000u64)
                    .map(|i| {
                        let n = i / 2;
                        [n, ns(n) + (i * 7 + u64::from(r) * 13) % 17]
                    })
                    .collect(),
                direction: if r % 2 == 0 {
                    Direction::Up
                } else {
                    Direction::Down
                },
                crossings: None,
                primed: false,
                recheck: Vec::new(),
                recheck_when: None,
            })
            .collect();
        BenchResult {
            name: name.into(),
            series: name.into(),
            n_meaning: "items".into(),
            timed: "one op".into(),
            max_matters: None,
            pairs_with: None,
            status: Status::Ok,
            message: None,
            params: Params {
                requested_n: 1_000,
                n: 1_000,
                runs: 3,
                warmup_ops: 0,
                extra: Default::default(),
            },
            caps: Vec::new(),
            environment: Default::default(),
            runs,
            profile: None,
            verdict: None,
            monitor: None,
        }
    }

    #[test]
    fn a_kept_verdict_is_the_one_judged_and_is_reused_only_while_nothing_changed() {
        let opts = Options::default();
        let mut b = series("lin", 3, |n| 1_000 + n);
        let fresh = judge_fresh(&b, &opts).unwrap();
        keep(&mut b, &fresh, &opts);
        let stored = b.verdict.clone().expect("a verdict is kept");
        assert_eq!(stored.analysis, ANALYSIS);
        // Through the file's JSON and back, it is the same verdict.
        let text = serde_json::to_string(&b).unwrap();
        let back: BenchResult = serde_json::from_str(&text).unwrap();
        assert_eq!(kept(&back, &opts).as_ref(), Some(&fresh));
        // Another analysis, other options, other runs, --rejudge: not reused.
        let mut other = back.clone();
        other.verdict.as_mut().unwrap().analysis = "0000000000000000".into();
        assert!(kept(&other, &opts).is_none());
        let tighter = Options {
            tolerance: 0.1,
            ..opts
        };
        assert!(kept(&back, &tighter).is_none());
        assert!(
            kept(
                &back,
                &Options {
                    rejudge: true,
                    ..opts
                }
            )
            .is_none()
        );
        let mut edited = back.clone();
        edited.runs[1].samples[5][1] += 1;
        assert!(kept(&edited, &opts).is_none());
        // The number of threads is not part of it.
        assert!(kept(&back, &Options { threads: 7, ..opts }).is_some());
    }

    #[test]
    fn judging_many_at_once_gives_each_its_own_verdict_in_order() {
        let opts = Options::default();
        let flat = series("flat", 3, |_| 1_000);
        let lin = series("lin", 3, |n| 1_000 + 4 * n);
        let none = BenchResult {
            runs: Vec::new(),
            status: Status::Unsupported,
            message: Some("no such call".into()),
            ..series("none", 0, |_| 0)
        };
        let mut kept_lin = lin.clone();
        let v = judge_fresh(&lin, &opts).unwrap();
        keep(&mut kept_lin, &v, &opts);
        let all = judge_all(&[&flat, &lin, &none, &kept_lin], &opts).verdicts;
        assert_eq!(all[0], judge_fresh(&flat, &Options { threads: 1, ..opts }));
        assert_eq!(all[1].as_ref().unwrap(), &v);
        assert_eq!(all[2], Err("unsupported: no such call".into()));
        assert_eq!(all[3].as_ref().unwrap(), &v);
        assert_ne!(all[0].as_ref().unwrap().class, v.class);
    }
}
