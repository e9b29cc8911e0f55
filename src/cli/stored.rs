//! `scalebench results add|list|show|prune`, and store queries where
//! `report`, `compare` and `history` take result files: a query resolves
//! to stored files, which then go through the same code as files on disk.

use super::output::{result_files, to_stdout, with_output};
use crate::results::output;
pub use crate::store::source::Source;
use crate::store::source::{one_selected, parse};
use crate::store::{Access, Added, Listed, Location, Query, Store};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `--store`, shared by every command that reads or writes the store.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct StoreArg {
    /// The store: an SQLite file, or `postgres://USER@HOST[:PORT]/DB`
    /// [default: $SCALEBENCH_STORE, else
    /// $XDG_DATA_HOME/scalebench/results.sqlite].
    #[arg(long = "store", value_name = "PATH|URL")]
    pub store: Option<String>,
}

impl StoreArg {
    /// Opens the store to read it (`Access::Read`), write it, or — for
    /// `results add` — make it where nothing is yet (`Access::Create`: an
    /// SQLite file and, unless `--store` names it, its directory; the
    /// `make_dir` given is not looked at).
    pub fn open(&self, access: Access) -> crate::store::Result<Store> {
        let (at, from) = Location::chosen(self.store.as_deref())?;
        let access = match access {
            Access::Create { .. } => Access::Create {
                make_dir: from != "--store",
            },
            other => other,
        };
        Store::open(&at, access)
    }

    /// The SQLite file of the store this names, if it names one (no
    /// output may be written over it); nothing is opened.
    pub fn file(&self) -> Option<PathBuf> {
        match Location::chosen(self.store.as_deref()) {
            Ok((Location::Sqlite(p), _)) => Some(p),
            _ => None,
        }
    }
}

/// The `results` commands.
#[derive(Debug, clap::Subcommand)]
pub enum ResultsCommand {
    /// Add finished runs' result files to the store (a directory: the
    /// result files in it); a file stored already is left as it is.
    #[command(after_help = super::help::RESULTS_ADD)]
    Add(AddArgs),
    /// One line per stored run the query selects (all without one).
    #[command(after_help = super::help::RESULTS_LIST)]
    List(ListArgs),
    /// A stored run's summary, or (`--json`) its result file.
    #[command(after_help = super::help::RESULTS_SHOW)]
    Show(ShowArgs),
    /// Remove stored runs: all but the latest N per label, or those
    /// started before a day.
    #[command(after_help = super::help::RESULTS_PRUNE)]
    Prune(PruneArgs),
}

/// Options of `results add`.
#[derive(Debug, clap::Args)]
pub struct AddArgs {
    /// Result files of finished runs; a directory stands for the result
    /// files in it.
    #[arg(value_name = "RESULT.json|DIR", required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// The store.
    #[command(flatten)]
    pub store: StoreArg,
}

/// Options of `results list`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Which runs (docs/store.md: `label=NAME host=H kernel=6.1* since=DAY
    /// latest last=N …`); all when none is given.
    #[arg(value_name = "QUERY")]
    pub query: Vec<String>,
    /// Print JSON: every indexed field of each run.
    #[arg(long)]
    pub json: bool,
    /// The store.
    #[command(flatten)]
    pub store: StoreArg,
}

/// Options of `results show`.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// A run's id (a prefix is enough) or a query selecting one run.
    #[arg(value_name = "ID|QUERY", required = true, num_args = 1..)]
    pub query: Vec<String>,
    /// Write the stored result file itself, as it was added.
    #[arg(long)]
    pub json: bool,
    /// With --json: write it to this file instead of standard output.
    #[arg(long, short, value_name = "FILE", requires = "json")]
    pub output: Option<PathBuf>,
    /// Replace an existing file.
    #[arg(long, requires = "output")]
    pub force: bool,
    /// The store.
    #[command(flatten)]
    pub store: StoreArg,
}

/// Options of `results prune`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("rule").required(true).multiple(true).args(["keep_last", "before"])))]
pub struct PruneArgs {
    /// Only among the runs this query selects (all without one).
    #[arg(value_name = "QUERY")]
    pub query: Vec<String>,
    /// Keep the latest N runs of each label, remove the older ones.
    #[arg(long, value_name = "N", value_parser = crate::values::whole::<usize>(1, usize::MAX))]
    pub keep_last: Option<usize>,
    /// Remove runs started before this day (`2026-11-01`, UTC) or time.
    #[arg(long, value_name = "DAY")]
    pub before: Option<String>,
    /// Print what would be removed, remove nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The store.
    #[command(flatten)]
    pub store: StoreArg,
}

/// Runs a `results` command.
pub fn run(c: ResultsCommand) -> anyhow::Result<ExitCode> {
    match c {
        ResultsCommand::Add(a) => add(&a),
        ResultsCommand::List(a) => list(&a),
        ResultsCommand::Show(a) => show(&a),
        ResultsCommand::Prune(a) => prune(&a),
    }
}

pub use crate::store::index::short;

/// `results add`: every file is checked and stored, or refused by name;
/// the status is 1 when any was refused.
fn add(a: &AddArgs) -> anyhow::Result<ExitCode> {
    let files = result_files(&a.files)?;
    let mut store = a.store.open(Access::Create { make_dir: false })?;
    let mut refused = 0;
    for f in &files {
        let added = std::fs::read(f)
            .map_err(|e| anyhow::anyhow!("{}: cannot read: {e}", f.display()))
            .and_then(|bytes| Ok(store.add(&bytes, f)?));
        match added {
            Ok(Added::New(id, notes)) => {
                sys::out!("added {} {}", short(&id), f.display());
                for n in notes {
                    sys::say!("note: {}: {n}", f.display());
                }
            }
            Ok(Added::Already(id)) => sys::out!(
                "already stored {} {} (the same file: nothing added)",
                short(&id),
                f.display()
            ),
            Err(e) => {
                refused += 1;
                sys::say!("error: {}", super::error_words(&e));
            }
        }
    }
    sys::say!(
        "store {}: {} file{} given, {refused} refused",
        store.name(),
        files.len(),
        if files.len() == 1 { "" } else { "s" }
    );
    Ok(if refused > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// What a run holds, in words: `3 series: socket bind mmap; 1 workload:
/// pgbench`.
pub fn holds(r: &Listed) -> String {
    let mut names: Vec<&str> = Vec::new();
    for s in &r.series {
        let b = s.split('[').next().unwrap_or(s);
        if !names.contains(&b) {
            names.push(b);
        }
    }
    let mut parts = Vec::new();
    if !r.series.is_empty() {
        // A benchmark's variants (`connect[epoll]`, `connect[poll]`) are
        // series of one name: the count says both.
        let of = if names.len() == r.series.len() {
            String::new()
        } else {
            format!(
                " of {}",
                units::fmt_count(names.len() as u64, "benchmark", "benchmarks")
            )
        };
        parts.push(format!(
            "{} series{of}: {}",
            r.series.len(),
            names.join(" ")
        ));
    }
    if !r.workloads.is_empty() {
        parts.push(format!(
            "{} workload{}: {}",
            r.workloads.len(),
            if r.workloads.len() == 1 { "" } else { "s" },
            r.workloads.join(" ")
        ));
    }
    if parts.is_empty() {
        "nothing measured".into()
    } else {
        parts.join("; ")
    }
}

/// A query's words read, before the store is opened: a wrong word is
/// told (a usage error) whether or not the store is there.
fn query(words: &[String]) -> anyhow::Result<Query> {
    Ok(Query::parse(&words.join(" ")).map_err(crate::sys::values::Usage)?)
}

/// Options of `dashboard`.
#[derive(Debug, clap::Args)]
pub struct DashboardArgs {
    /// Which runs to draw (docs/store.md); all when none is given.
    #[arg(value_name = "QUERY")]
    pub query: Vec<String>,
    /// The site's directory: new or empty, or any with --force.
    #[arg(short, long, value_name = "DIR")]
    pub out: PathBuf,
    /// Write over a directory that is not empty (only the site's own
    /// files are replaced).
    #[arg(long)]
    pub force: bool,
    /// Mark a point as regressed when its cost rose (its figure fell) by
    /// more than this many percent against the same system's run before
    /// it, or its class grew.
    #[arg(long, value_name = "PERCENT", default_value_t = 10.0, value_parser = crate::values::percent)]
    pub threshold: f64,
    /// The store.
    #[command(flatten)]
    pub store: StoreArg,
}

/// `dashboard`.
pub fn dashboard(a: DashboardArgs) -> anyhow::Result<ExitCode> {
    let q = query(&a.query)?;
    let mut store = a.store.open(Access::Read)?;
    let runs = store.select(&q)?;
    if runs.is_empty() {
        anyhow::bail!(
            "store {}: no stored run{} (`scalebench results add FILE…` adds them)",
            store.name(),
            if a.query.is_empty() {
                String::new()
            } else {
                format!(" matches `{}`", a.query.join(" "))
            }
        );
    }
    let w = crate::dashboard::write(&mut store, &runs, &a.out, a.force, a.threshold)?;
    sys::out!(
        "dashboard: {} ({} runs{}, {} series and workload rows, {} regression{})",
        w.index.display(),
        w.runs,
        if w.pages_kept > 0 {
            format!(", {} of their pages current and kept", w.pages_kept)
        } else {
            String::new()
        },
        w.tracks,
        w.regressions,
        if w.regressions == 1 { "" } else { "s" }
    );
    Ok(ExitCode::SUCCESS)
}

/// `results list`.
fn list(a: &ListArgs) -> anyhow::Result<ExitCode> {
    let q = query(&a.query)?;
    let mut store = a.store.open(Access::Read)?;
    let runs = store.select(&q)?;
    if a.json {
        let doc: Vec<serde_json::Value> = runs
            .iter()
            .map(|r| {
                let mut v = serde_json::to_value(&r.run).unwrap_or_default();
                v["series"] = serde_json::json!(r.series);
                v["workloads"] = serde_json::json!(r.workloads);
                v
            })
            .collect();
        to_stdout(|w| -> anyhow::Result<()> {
            serde_json::to_writer_pretty(&mut *w, &doc)?;
            writeln!(w)?;
            Ok(())
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            vec![
                short(&r.run.id).to_string(),
                r.run.started.clone(),
                r.run.label.clone(),
                r.run.host.clone(),
                format!("{} {}", r.run.os, r.run.kernel),
                holds(r),
            ]
        })
        .collect();
    to_stdout(|w| -> anyhow::Result<()> {
        if rows.is_empty() {
            writeln!(w, "no stored run matches")?;
            return Ok(());
        }
        let t = crate::report::table::render(
            &["id", "started", "label", "host", "kernel", "holds"],
            &rows,
            &[],
            &[0, 1, 3, 4],
        );
        writeln!(w, "{t}")?;
        Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// `results show`.
fn show(a: &ShowArgs) -> anyhow::Result<ExitCode> {
    let q = parse(&a.query.join(" "), "results show")?;
    let mut store = a.store.open(Access::Read)?;
    let r = one_selected(&mut store, &q, "results show")?;
    let bytes = store.file(&r.run.id)?;
    if a.json {
        let existing = output::Existing::forced(a.force);
        let stored: Vec<(&Path, &str)> =
            store.path().map(|p| (p, "the store")).into_iter().collect();
        with_output("--output", a.output.as_deref(), existing, &stored, |w| {
            w.write_all(&bytes)
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let (benches, work) = store.rows_of(&r.run.id)?;
    let run = &r.run;
    to_stdout(|w| crate::report::stored::write_run(w, run, &benches, &work))?;
    Ok(ExitCode::SUCCESS)
}

/// The runs `prune` removes among `runs` (in the order they started).
fn to_prune(
    runs: &[Listed],
    keep_last: Option<usize>,
    before: Option<std::time::SystemTime>,
) -> Vec<&Listed> {
    runs.iter()
        .enumerate()
        .filter(|(i, r)| {
            let newer_of_label = runs[i + 1..]
                .iter()
                .filter(|o| o.run.label == r.run.label)
                .count();
            let old = keep_last.is_none_or(|n| newer_of_label >= n);
            let early = before.is_none_or(|t| {
                crate::store::query::parse_time(&r.run.started).is_some_and(|s| s < t)
            });
            old && early
        })
        .map(|(_, r)| r)
        .collect()
}

/// `results prune`.
fn prune(a: &PruneArgs) -> anyhow::Result<ExitCode> {
    let before = match &a.before {
        Some(b) => Some(crate::store::query::parse_time(b).ok_or_else(|| {
            crate::sys::values::Usage(format!(
                "--before {b}: expected a day (2026-11-01) or a UTC time (2026-11-01T12:00:00Z)"
            ))
        })?),
        None => None,
    };
    let q = query(&a.query)?;
    let access = if a.dry_run {
        Access::Read
    } else {
        Access::Write
    };
    let mut store = a.store.open(access)?;
    let runs = store.select(&q)?;
    let gone = to_prune(&runs, a.keep_last, before);
    let verb = if a.dry_run { "would remove" } else { "removed" };
    if !a.dry_run {
        let ids: Vec<String> = gone.iter().map(|r| r.run.id.clone()).collect();
        store.remove(&ids)?;
    }
    for r in &gone {
        sys::out!(
            "{verb} {} {} {} {}",
            short(&r.run.id),
            r.run.started,
            r.run.label,
            r.run.host
        );
    }
    sys::say!(
        "store {}: {verb} {} of {} run{} selected",
        store.name(),
        gone.len(),
        runs.len(),
        if runs.len() == 1 { "" } else { "s" }
    );
    Ok(ExitCode::SUCCESS)
}

/// The sources `given` names ([`crate::store::source::sources`]), the
/// store opened from `--store` only if a query needs it.
pub fn sources(given: &[PathBuf], store: &StoreArg) -> anyhow::Result<Vec<Source>> {
    Ok(crate::store::source::sources(
        given,
        &mut || store.open(Access::Read),
        &mut super::output::say_skipped,
    )?)
}

/// One source for `compare`'s `what` (`BASE`): a file, or a query
/// selecting exactly one stored run in the `--store`.
pub fn one_source(given: &Path, store: &StoreArg, what: &str) -> anyhow::Result<Source> {
    Ok(crate::store::source::one_source(
        given,
        &mut || store.open(Access::Read),
        what,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(id: &str, label: &str, started: &str) -> Listed {
        let mut l = crate::store::Listed {
            run: crate::store::index::index(
                &results::parse(
                    include_str!("../../tests/fixtures/empty.json"),
                    Path::new("e.json"),
                )
                .unwrap(),
                b"",
                "",
            )
            .run,
            series: vec![
                "connect[epoll]".into(),
                "connect[poll]".into(),
                "socket".into(),
            ],
            workloads: vec!["pgbench".into()],
        };
        l.run.id = id.into();
        l.run.label = label.into();
        l.run.started = started.into();
        l
    }

    #[test]
    fn prune_keeps_the_latest_of_each_label_and_what_is_recent() {
        let runs = [
            listed("a1", "a", "2026-11-01T00:00:00Z"),
            listed("b1", "b", "2026-11-02T00:00:00Z"),
            listed("a2", "a", "2026-11-03T00:00:00Z"),
            listed("a3", "a", "2026-11-04T00:00:00Z"),
        ];
        let ids = |v: Vec<&Listed>| v.iter().map(|r| r.run.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(to_prune(&runs, Some(1), None)), ["a1", "a2"]);
        assert_eq!(ids(to_prune(&runs, Some(2), None)), ["a1"]);
        let day = crate::store::query::parse_time("2026-11-03");
        assert_eq!(ids(to_prune(&runs, None, day)), ["a1", "b1"]);
        assert_eq!(ids(to_prune(&runs, Some(1), day)), ["a1"], "both rules");
    }

    #[test]
    fn what_a_run_holds_is_said_in_one_line() {
        let l = listed("a", "a", "");
        assert_eq!(
            holds(&l),
            "3 series of 2 benchmarks: connect socket; 1 workload: pgbench"
        );
    }
}
