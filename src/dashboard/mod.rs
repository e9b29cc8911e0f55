//! `scalebench dashboard`: a static site drawn from the results store.
//! For each benchmark series, its cost at the highest n over time, a line
//! per system (label), each point naming its growth class; for each
//! workload row, its figure over time likewise. A point is a link to the
//! full HTML report of its run (`runs/ID.html`, written beside), and a
//! point that regressed against the same system's previous run is ringed
//! in red and listed at the top.
//!
//! The rule for "regressed" is stated on the page: the class grew (O(1)
//! to O(n), …), or the cost rose — the figure fell — by more than the
//! threshold (10 % unless told). It is a pointer, not `compare`'s test:
//! the page gives the `compare` command for the two runs.

mod chart;

use crate::report::{self, Format, System};
use crate::results::output;
use crate::store::{BenchRow, Listed, Store, WorkRow};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One point of a track: a run of one system.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The run's id.
    pub run: String,
    /// When it started, seconds since the epoch.
    pub at: f64,
    /// When it started, as recorded.
    pub started: String,
    /// The figure: ns at the highest n, or the workload row's figure.
    pub value: f64,
    /// The growth class, for a benchmark.
    pub class: Option<String>,
    /// Whether it regressed against the previous point, and why.
    pub regressed: Option<String>,
    /// Whether its run was measured under emulation.
    pub emulated: bool,
    /// Whether its figure counts instructions (a guest under QEMU's
    /// `-icount`), not time.
    pub instructions: bool,
    /// What it was measured at: a point is compared only with one before
    /// it measured alike.
    pub basis: Basis,
    /// Why it was not compared with the point before it, when measured
    /// otherwise (`measured at other sizes (files 500 → 300)`).
    pub apart: Option<String>,
}

/// What a point was measured at.
#[derive(Debug, Clone, PartialEq)]
pub enum Basis {
    /// A benchmark series: the highest n it was judged up to (its figure
    /// is the cost there; 0 when unknown).
    HighestN(f64),
    /// A workload row: its workload's sizes in words, as the store
    /// indexes them (`None`: a workload without sizes, or a run stored
    /// before sizes were).
    Sizes(Option<String>),
}

/// The most two points' highest n may differ by (as a ratio) for their
/// costs there, and their classes, to be compared: a cost at n = 2 000 is
/// not a cost at n = 10 000, and a series capped lower by a time goal
/// would read as faster.
const SAME_N: f64 = 1.05;

/// Why two points are not compared, when measured otherwise; `None` when
/// alike or when either does not say.
fn apart(before: &Basis, now: &Basis) -> Option<String> {
    match (before, now) {
        (Basis::HighestN(a), Basis::HighestN(b)) => {
            let (lo, hi) = (a.min(*b), a.max(*b));
            (lo > 0.0 && hi / lo > SAME_N)
                .then(|| format!("measured to another n (n = {a:.0} → {b:.0})"))
        }
        (Basis::Sizes(Some(a)), Basis::Sizes(Some(b))) => {
            crate::results::size_changes_in_words(a, b)
                .map(|c| format!("measured at other sizes ({c})"))
        }
        _ => None,
    }
}

/// The unit of a benchmark's track whose every point counted instructions.
pub const COUNTED_UNIT: &str = "instructions at the highest n";

/// Something followed over time: a benchmark series or a workload row.
#[derive(Debug, Clone, PartialEq)]
pub struct Track {
    /// `socket`, or `http-ipstack: 4 processes, IPv4`.
    pub name: String,
    /// `ns at high n`, `req/s`, `s`.
    pub unit: String,
    /// Whether a larger figure is better (throughput).
    pub higher_is_better: bool,
    /// Each system's points, in time order.
    pub systems: BTreeMap<String, Vec<Point>>,
}

/// The rank of a growth class for "grew": `None` for undecided ones.
fn class_rank(class: &str) -> Option<u8> {
    match class {
        "O(1)" => Some(0),
        "O(log n)" => Some(1),
        "O(n)" => Some(2),
        "O(n log n)" => Some(3),
        "O(n^2)" => Some(4),
        _ => None,
    }
}

/// Marks each point that regressed against the one before it.
pub fn mark_regressions(points: &mut [Point], higher_is_better: bool, threshold: f64) {
    for i in 1..points.len() {
        let (before, now) = (&points[i - 1], &points[i]);
        if let Some(why) = apart(&before.basis, &now.basis) {
            points[i].regressed = None;
            points[i].apart = Some(why);
            continue;
        }
        let grew = match (
            before.class.as_deref().and_then(class_rank),
            now.class.as_deref().and_then(class_rank),
        ) {
            (Some(a), Some(b)) if b > a => Some(format!(
                "class grew: {} → {}",
                before.class.as_deref().unwrap_or("?"),
                now.class.as_deref().unwrap_or("?")
            )),
            _ => None,
        };
        let change = if before.value > 0.0 {
            now.value / before.value - 1.0
        } else {
            0.0
        };
        let worse = if higher_is_better { -change } else { change };
        let alike = before.emulated == now.emulated && before.instructions == now.instructions;
        let moved = (worse > threshold && alike).then(|| {
            format!(
                "{} {:.0} %",
                if higher_is_better { "fell" } else { "rose" },
                change.abs() * 100.0
            )
        });
        points[i].regressed = match (grew, moved) {
            (Some(g), Some(m)) => Some(format!("{g}; {m}")),
            (g, m) => g.or(m),
        };
    }
}

/// Seconds since the epoch of an RFC 3339 time.
fn epoch(s: &str) -> f64 {
    crate::store::query::parse_time(s)
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The tracks of `runs` (each with its indexed rows), regressions marked.
pub fn tracks(runs: &[(Listed, Vec<BenchRow>, Vec<WorkRow>)], threshold: f64) -> Vec<Track> {
    let mut by_name: BTreeMap<String, Track> = BTreeMap::new();
    for (l, benches, works) in runs {
        let r = &l.run;
        let point = |value: f64, class: Option<String>, basis: Basis| Point {
            run: r.id.clone(),
            at: epoch(&r.started),
            started: r.started.clone(),
            value,
            class,
            regressed: None,
            emulated: r.emulated,
            // A workload's figure is a rate or a phase's time, whatever
            // the guest's clock counted.
            instructions: matches!(basis, Basis::HighestN(_)) && r.counts == "instructions",
            basis,
            apart: None,
        };
        for b in benches {
            let Some((high_n, ns)) = b.high else { continue };
            let t = by_name.entry(format!("b {}", b.series)).or_insert(Track {
                name: b.series.clone(),
                unit: "ns at the highest n".into(),
                higher_is_better: false,
                systems: BTreeMap::new(),
            });
            let p = point(ns, b.class.clone(), Basis::HighestN(high_n));
            t.systems.entry(r.label.clone()).or_default().push(p);
        }
        for w in works {
            let (Some(v), Some(unit)) = (w.figure, w.unit.as_ref()) else {
                continue;
            };
            let name = match &w.target {
                Some(t) => format!("{}: {} ({t})", w.workload, w.row_label),
                None => format!("{}: {}", w.workload, w.row_label),
            };
            let t = by_name.entry(format!("w {name}")).or_insert(Track {
                name,
                unit: unit.clone(),
                // Seconds are a phase's time; everything else a rate.
                higher_is_better: unit != "s",
                systems: BTreeMap::new(),
            });
            let p = point(v, None, Basis::Sizes(w.sizes.clone()));
            t.systems.entry(r.label.clone()).or_default().push(p);
        }
    }
    let mut v: Vec<Track> = by_name.into_values().collect();
    for t in &mut v {
        for points in t.systems.values_mut() {
            points.sort_by(|a, b| a.at.total_cmp(&b.at));
            mark_regressions(points, t.higher_is_better, threshold);
        }
    }
    v
}

/// What [`write`] made.
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    /// The runs drawn.
    pub runs: usize,
    /// Their pages found current (this build's, of the same run) and
    /// kept as they were.
    pub pages_kept: usize,
    /// The tracks drawn.
    pub tracks: usize,
    /// Points that regressed.
    pub regressions: usize,
    /// The site's front page.
    pub index: PathBuf,
}

/// The option the site's directory is given by, as messages name it.
const OUT: &str = "--out";

/// Writes the site for `runs` of `store` into `dir`: `index.html` and
/// `runs/ID.html` for each run. `dir` must be new (its parent existing)
/// or empty unless `force`, which replaces only the files the site has.
/// Every output follows the output rule ([`output`]): `dir` and `runs`
/// are directories, not links or files; no file is written through a
/// link, over a directory or over the store; all is checked before the
/// first file is written, and each file is written atomically.
pub fn write(
    store: &mut Store,
    runs: &[Listed],
    dir: &Path,
    force: bool,
    threshold: f64,
) -> anyhow::Result<Written> {
    let runs_dir = dir.join("runs");
    let index = dir.join("index.html");
    let pages: Vec<PathBuf> = runs
        .iter()
        .map(|l| runs_dir.join(format!("{}.html", short(&l.run.id))))
        .collect();
    check_site(dir, &index, &pages, force, store.path())?;
    output::ensure_dir(OUT, dir)?;
    output::ensure_dir(OUT, &runs_dir)?;
    let ids: Vec<String> = runs.iter().map(|l| l.run.id.clone()).collect();
    let rows = store.rows_of_many(&ids)?;
    let (mut indexed, mut kept) = (Vec::with_capacity(runs.len()), 0);
    for ((l, page), (b, w)) in runs.iter().zip(&pages).zip(rows) {
        if page_is_current(page, &l.run.id) {
            kept += 1;
        } else {
            write_run_report(store, l, page)?;
        }
        indexed.push((l.clone(), b, w));
    }
    let tracks = tracks(&indexed, threshold);
    let page = index_page(store.name(), runs, &tracks, threshold);
    output::write_file_atomic(&index, |w| w.write_all(page.as_bytes()))?;
    Ok(Written {
        runs: runs.len(),
        pages_kept: kept,
        tracks: tracks.len(),
        regressions: tracks
            .iter()
            .flat_map(|t| t.systems.values().flatten())
            .filter(|p| p.regressed.is_some())
            .count(),
        index,
    })
}

/// Checks every output of the site before anything is written: `dir` a
/// directory or a new name in an existing one, empty unless `force`;
/// `runs` in it a directory if it exists; `index` and `pages` new, or
/// regular files replaced only with `force`, none the store's file.
fn check_site(
    dir: &Path,
    index: &Path,
    pages: &[PathBuf],
    force: bool,
    store: Option<&Path>,
) -> anyhow::Result<()> {
    if !output::check_dir(OUT, dir)? {
        return Ok(());
    }
    let not_empty = std::fs::read_dir(dir)
        .map_err(|source| output::OutputError::Io {
            what: OUT.into(),
            path: dir.into(),
            source,
        })?
        .next()
        .is_some();
    if not_empty && !force {
        anyhow::bail!(
            "{OUT} {}: the directory is not empty; use --force to write the site over it (only index.html and runs/*.html are replaced), or choose another",
            dir.display()
        );
    }
    let others: Vec<(&Path, &str)> = store.map(|s| (s, "the store")).into_iter().collect();
    let existing = output::Existing::forced(force);
    output::check(OUT, index, existing, &others)?;
    if output::check_dir(OUT, &dir.join("runs"))? {
        for p in pages {
            output::check(OUT, p, existing, &others)?;
        }
    }
    Ok(())
}

pub use crate::store::index::short;

/// The first line of a run's page: the build that wrote it and the run
/// (a run's id is its file's SHA-256, so the same build writes the same
/// page for it again).
fn page_mark(id: &str) -> String {
    format!(
        "<!-- scalebench {} (commit {}) run {id} -->\n",
        env!("CARGO_PKG_VERSION"),
        env!("SCALEBENCH_COMMIT")
    )
}

/// The last line of a run's page: a page cut short lacks it.
fn page_end(id: &str) -> String {
    format!("<!-- end of run {id} -->\n")
}

/// Whether `page` is a page this build wrote for run `id`, whole: its
/// first line [`page_mark`], its last [`page_end`]. Kept, not written
/// again.
fn page_is_current(page: &Path, id: &str) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let (mark, end) = (page_mark(id), page_end(id));
    let Ok(mut f) = std::fs::File::open(page) else {
        return false;
    };
    let mut head = vec![0u8; mark.len()];
    let mut tail = vec![0u8; end.len()];
    f.read_exact(&mut head).is_ok()
        && head == mark.as_bytes()
        && f.seek(SeekFrom::End(-(end.len() as i64))).is_ok()
        && f.read_exact(&mut tail).is_ok()
        && tail == end.as_bytes()
}

/// The full HTML report of one stored run, as `scalebench report` writes
/// it, into `path`, after its [`page_mark`].
fn write_run_report(store: &mut Store, l: &Listed, path: &Path) -> anyhow::Result<()> {
    let bytes = store.file(&l.run.id)?;
    let text = String::from_utf8_lossy(&bytes);
    // Named as `report` names a stored run: the store is at fault, not
    // the page.
    let name = PathBuf::from(format!("store:{}", short(&l.run.id)));
    let file = crate::results::parse(&text, &name)?;
    let systems = [System {
        label: file.label.clone(),
        file,
    }];
    let input = report::Input::new(&systems, &Default::default());
    let mut out = page_mark(&l.run.id).into_bytes();
    report::writer(Format::Html, None).write(&input, &mut out)?;
    if !out.ends_with(b"\n") {
        out.push(b'\n');
    }
    out.extend_from_slice(page_end(&l.run.id).as_bytes());
    Ok(output::write_file_atomic(path, |w| w.write_all(&out))?)
}

/// The front page: what is drawn and how to read it, the regressions,
/// a chart per track, the runs.
fn index_page(store: &str, runs: &[Listed], tracks: &[Track], threshold: f64) -> String {
    use crate::report::chart::esc;
    let mut o = String::new();
    let labels: Vec<&str> = {
        let mut v: Vec<&str> = runs.iter().map(|l| l.run.label.as_str()).collect();
        v.sort();
        v.dedup();
        v
    };
    let _ = write!(
        o,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>scalebench dashboard</title><style>{}</style></head><body><h1>scalebench dashboard</h1><p class=\"sub\">{} runs of {} systems from the store {}. Each chart follows one benchmark series (its cost at the highest n) or one workload row (its figure) over time, a line per system; each point is a run — click it for the run's full report. A point ringed in red regressed against the same system's run before it: its class grew, or its cost rose (its figure fell) by more than {:.0} %. A point measured otherwise than the run before it (a benchmark to another highest n, a workload at other sizes) is not compared with it; its tooltip says so. That is a pointer, not a test: <code>scalebench compare</code> on the two runs says whether it holds.</p>",
        chart::STYLE,
        runs.len(),
        labels.len(),
        esc(store),
        threshold * 100.0
    );
    write_regressions(&mut o, tracks, store);
    for (i, t) in tracks.iter().enumerate() {
        let _ = write!(
            o,
            "<section class=\"track\" id=\"t{i}\" data-track=\"{}\"><h2>{}</h2>{}</section>",
            esc(&t.name),
            esc(&t.name),
            chart::track_svg(&format!("c{i}"), t, &labels)
        );
    }
    write_runs(&mut o, runs);
    o.push_str("</body></html>\n");
    o
}

/// The list of regressions, each linking to its run and its chart.
fn write_regressions(o: &mut String, tracks: &[Track], store: &str) {
    use crate::report::chart::esc;
    let mut items = String::new();
    for (i, t) in tracks.iter().enumerate() {
        for (system, points) in &t.systems {
            for w in points.windows(2) {
                if let Some(why) = &w[1].regressed {
                    let _ = write!(
                        items,
                        "<li><a href=\"#t{i}\">{}</a> on {}: {} (<a href=\"runs/{}.html\">{}</a> against <a href=\"runs/{}.html\">{}</a>; <code>scalebench compare --store {} --base id={} --new id={}</code>)</li>",
                        esc(&t.name),
                        esc(system),
                        esc(why),
                        short(&w[1].run),
                        esc(&w[1].started),
                        short(&w[0].run),
                        esc(&w[0].started),
                        esc(store),
                        short(&w[0].run),
                        short(&w[1].run),
                    );
                }
            }
        }
    }
    if items.is_empty() {
        o.push_str("<p class=\"ok\" id=\"regressions\">No regressions between consecutive runs of a system.</p>");
    } else {
        let _ = write!(
            o,
            "<h2>Regressions</h2><ul class=\"regressions\" id=\"regressions\">{items}</ul>"
        );
    }
}

/// Every run drawn, newest first, each linking to its report.
fn write_runs(o: &mut String, runs: &[Listed]) {
    use crate::report::chart::esc;
    o.push_str("<h2>Runs</h2><table class=\"runs\"><tr><th>id</th><th>started</th><th>label</th><th>host</th><th>kernel</th><th>holds</th></tr>");
    for l in runs.iter().rev() {
        let r = &l.run;
        let mut holds: Vec<String> = l.series.clone();
        holds.extend(l.workloads.iter().cloned());
        let _ = write!(
            o,
            "<tr><td><a href=\"runs/{0}.html\">{0}</a></td><td>{1}</td><td>{2}</td><td>{3}</td><td>{4}</td><td>{5}</td></tr>",
            short(&r.id),
            esc(&r.started),
            esc(&r.label),
            esc(&r.host),
            esc(&r.kernel),
            esc(&holds.join(", "))
        );
    }
    o.push_str("</table>");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(at: f64, value: f64, class: Option<&str>) -> Point {
        Point {
            run: format!("{at:064}"),
            at,
            started: format!("t{at}"),
            value,
            class: class.map(str::to_string),
            regressed: None,
            emulated: false,
            instructions: false,
            basis: Basis::HighestN(10_000.0),
            apart: None,
        }
    }

    #[test]
    fn points_measured_otherwise_are_not_compared_and_say_why() {
        // A benchmark run to n = 2 000 after one to 10 000: its cost there
        // is lower and its class may be another; neither is compared.
        let mut v = vec![
            p(1.0, 100.0, Some("O(n)")),
            p(2.0, 20.0, Some("O(1)")),
            p(3.0, 100.0, Some("O(n)")),
        ];
        v[1].basis = Basis::HighestN(2_000.0);
        v[2].basis = Basis::HighestN(9_950.0);
        mark_regressions(&mut v, false, 0.10);
        assert_eq!(v[1].regressed, None);
        assert_eq!(
            v[1].apart.as_deref(),
            Some("measured to another n (n = 10000 → 2000)")
        );
        assert_eq!(
            v[2].regressed, None,
            "back at 10 000: apart from the point at 2 000"
        );
        // Bucket centres a little apart are the same n.
        let mut v = vec![p(1.0, 100.0, Some("O(1)")), p(2.0, 130.0, Some("O(1)"))];
        v[1].basis = Basis::HighestN(9_800.0);
        mark_regressions(&mut v, false, 0.10);
        assert_eq!(
            (v[1].regressed.as_deref(), &v[1].apart),
            (Some("rose 30 %"), &None)
        );
        // A workload row at other sizes; one stored before sizes were, alike.
        let sized = |at, value, sizes: Option<&str>| Point {
            basis: Basis::Sizes(sizes.map(str::to_string)),
            ..p(at, value, None)
        };
        let mut w = vec![
            sized(1.0, 1000.0, Some("files 500, bytes 10")),
            sized(2.0, 500.0, Some("files 300, bytes 10")),
            sized(3.0, 400.0, None),
            sized(4.0, 300.0, Some("files 300, bytes 10")),
        ];
        mark_regressions(&mut w, true, 0.10);
        assert_eq!(w[1].regressed, None);
        assert_eq!(
            w[1].apart.as_deref(),
            Some("measured at other sizes (files 500 → 300)")
        );
        assert_eq!(w[2].regressed.as_deref(), Some("fell 20 %"));
        assert_eq!(w[3].regressed.as_deref(), Some("fell 25 %"));
    }

    #[test]
    fn a_grown_class_or_a_rise_past_the_threshold_is_a_regression() {
        let mut v = vec![
            p(1.0, 100.0, Some("O(1)")),
            p(2.0, 105.0, Some("O(1)")),
            p(3.0, 130.0, Some("O(1)")),
            p(4.0, 131.0, Some("O(n)")),
            p(5.0, 90.0, Some("undecided")),
            p(6.0, 91.0, Some("O(n)")),
        ];
        mark_regressions(&mut v, false, 0.10);
        let got: Vec<Option<&str>> = v.iter().map(|p| p.regressed.as_deref()).collect();
        assert_eq!(
            got,
            [
                None,
                None,
                Some("rose 24 %"),
                Some("class grew: O(1) → O(n)"),
                None,
                None
            ]
        );
        // Throughput: a fall is the regression.
        let mut w = vec![
            p(1.0, 1000.0, None),
            p(2.0, 850.0, None),
            p(3.0, 2000.0, None),
        ];
        mark_regressions(&mut w, true, 0.10);
        assert_eq!(w[1].regressed.as_deref(), Some("fell 15 %"));
        assert_eq!(w[2].regressed, None);
    }

    #[test]
    fn an_emulated_run_is_not_compared_by_speed_with_a_native_one() {
        let mut v = vec![p(1.0, 100.0, Some("O(1)")), p(2.0, 1000.0, Some("O(1)"))];
        v[1].emulated = true;
        mark_regressions(&mut v, false, 0.10);
        assert_eq!(v[1].regressed, None);
    }

    #[test]
    fn instructions_are_compared_with_instructions_only() {
        let counted = |at, value| Point {
            emulated: true,
            instructions: true,
            ..p(at, value, Some("O(1)"))
        };
        let mut timed = p(2.0, 100.0, Some("O(1)"));
        timed.emulated = true;
        let mut v = vec![counted(1.0, 4214.0), timed, counted(3.0, 8000.0)];
        mark_regressions(&mut v, false, 0.10);
        assert_eq!((&v[1].regressed, &v[2].regressed), (&None, &None));
        let mut v = vec![counted(1.0, 4214.0), counted(2.0, 8000.0)];
        mark_regressions(&mut v, false, 0.10);
        assert_eq!(v[1].regressed.as_deref(), Some("rose 90 %"));
    }
}
