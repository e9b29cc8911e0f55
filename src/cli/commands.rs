//! The commands other than `run`.

use super::output::{result_files, to_stdout, with_output};
use super::stored::{self, Source};
use super::{
    AnalyzeArgs, CompareArgs, ExportArgs, ExportFormat, FailOn, HistoryArgs, HistoryOrder,
    ReportArgs, SysinfoArgs,
};
use crate::analysis::{self, Options};
use crate::bench::REGISTRY;
use crate::report::{self, Input, System, export};
use crate::results::{output, sysinfo};
use crate::sys::values::Usage;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `scalebench list`.
pub fn list(json: bool) -> anyhow::Result<ExitCode> {
    if json {
        return list_json();
    }
    to_stdout(|w| -> anyhow::Result<()> {
        let rows: Vec<Vec<String>> = REGISTRY
            .iter()
            .map(|b| {
                let i = b.info();
                let timed = match b.pairs_with() {
                    Some(w) => format!("{}; a variant of {w}, drawn and compared with it", i.timed),
                    None => i.timed.to_string(),
                };
                vec![i.name.to_string(), i.n_meaning.to_string(), timed]
            })
            .collect();
        let table = report::table::render(&["benchmark", "n", "timed"], &rows, &[], &[0]);
        writeln!(w, "{table}")?;
        writeln!(w)?;
        let rows: Vec<Vec<String>> = crate::workloads::WORKLOADS
            .iter()
            .map(|wl| {
                let i = wl.info();
                vec![i.name.to_string(), i.what.to_string()]
            })
            .collect();
        writeln!(
            w,
            "{}",
            report::table::render(&["workload", "what"], &rows, &[], &[0])
        )?;
        writeln!(w)?;
        let rows: Vec<Vec<String>> = crate::run::suite::BUILT_IN
            .iter()
            .filter_map(|(n, _)| crate::run::suite::Suite::built_in(n))
            .map(|s| vec![s.name, s.description])
            .collect();
        writeln!(
            w,
            "{}",
            report::table::render(&["suite", "what"], &rows, &[], &[0])
        )?;
        writeln!(
            w,
            "\n`run` runs quick by default; a suite of your own is a file: `scalebench run\nFILE.toml` (docs/suites.md)."
        )?;
        Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// `scalebench list --json`: every benchmark and workload with what the
/// table shows and the sizes of the suites.
fn list_json() -> anyhow::Result<ExitCode> {
    let benchmarks: Vec<serde_json::Value> = REGISTRY
        .iter()
        .map(|b| {
            let i = b.info();
            serde_json::json!({
                "name": i.name,
                "n": i.n_meaning,
                "timed": i.timed,
                "quick_n": i.quick_n,
                "full_n": i.full_n,
                "pairs_with": b.pairs_with(),
            })
        })
        .collect();
    let workloads: Vec<serde_json::Value> = crate::workloads::WORKLOADS
        .iter()
        .map(|wl| {
            let i = wl.info();
            serde_json::json!({
                "name": i.name,
                "what": i.what,
                "quick": i.quick,
                "between_hosts": i.between_hosts,
                "several_clients": i.several_clients,
            })
        })
        .collect();
    let doc = serde_json::json!({
        "benchmarks": benchmarks,
        "workloads": workloads,
        "suites": crate::run::suite::BUILT_IN.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
    });
    to_stdout(|w| -> anyhow::Result<()> {
        serde_json::to_writer_pretty(&mut *w, &doc)?;
        writeln!(w)?;
        Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Loads result files, labelled by their own `label` field unless one is
/// given; a label seen twice gets the file name added. When some cannot
/// be read, each is named: all but the last on standard error, the last
/// as the error returned.
pub(crate) fn load_systems(files: &[(Option<String>, Source)]) -> anyhow::Result<Vec<System>> {
    let (systems, mut problems) = load_what_can_be_loaded(files);
    match problems.pop() {
        Some(last) => {
            for p in &problems {
                sys::say!("error: {}", super::error_words(p));
            }
            Err(last)
        }
        None => Ok(systems),
    }
}

/// The notices of judged inputs (a series twice in a file, a kept verdict
/// judged again), on stderr, for the commands whose output has no place
/// for them.
fn say_notices(input: &Input) {
    for n in &input.notices {
        sys::say!("note: {n}");
    }
}

/// `scalebench compare BASE NEW`; with `--bisect`, its exit status is
/// `git bisect run`'s.
pub fn compare(a: CompareArgs) -> anyhow::Result<ExitCode> {
    if !a.bisect {
        return compare_files(a);
    }
    // Any error is git bisect's 128 (stop), but NEW unreadable: 125.
    let new = match compare_pair(&a) {
        Ok((_, new)) => new,
        Err(e) => {
            sys::say!("error: {}", super::error_words(&e));
            sys::say!("compare --bisect: stop: the command line is wrong (exit 128)");
            return Ok(ExitCode::from(128));
        }
    };
    let new =
        stored::one_source(&new, &a.store, "NEW").and_then(|new| load_systems(&[(None, new)]));
    if let Err(e) = new {
        sys::say!("error: {}", super::error_words(&e));
        sys::say!("compare --bisect: skip: NEW cannot be read (exit 125)");
        return Ok(ExitCode::from(125));
    }
    match compare_files(a) {
        Ok(code) => Ok(code),
        Err(e) => {
            sys::say!("error: {}", super::error_words(&e));
            sys::say!("compare --bisect: stop: the comparison itself failed (exit 128)");
            Ok(ExitCode::from(128))
        }
    }
}

/// `compare` of two files: the comparison written, the exit status from
/// `--fail-on` or `--bisect`.
fn compare_files(a: CompareArgs) -> anyhow::Result<ExitCode> {
    let format = super::choices::chosen_format(
        a.format,
        a.output.as_deref(),
        super::CompareFormat::Terminal,
    )?;
    let (base, new) = compare_pair(&a)?;
    let base = stored::one_source(&base, &a.store, "BASE")?;
    let new = stored::one_source(&new, &a.store, "NEW")?;
    let systems = load_systems(&[(None, base.clone()), (None, new.clone())])?;
    let input = Input::new(&systems, &Options::default());
    say_notices(&input);
    let c = report::compare::Comparison::of(&input, a.threshold);
    let store = a.store.file();
    let inputs = not_outputs([&base, &new].into_iter(), store.as_deref());
    let existing = output::Existing::forced(a.force);
    let writer = report::writer(report::Format::from(format), None);
    with_output("--output", a.output.as_deref(), existing, &inputs, |w| {
        writer.write_comparison(&c, w)
    })?;
    let rows = &c.rows;
    if a.bisect {
        let b = report::compare::Bisect::of(rows);
        sys::say!("compare --bisect: {}", b.words());
        return Ok(ExitCode::from(b.status()));
    }
    let failing = rows
        .iter()
        .filter(|r| match a.fail_on {
            Some(FailOn::Regression) => report::compare::is_regression(r),
            Some(FailOn::ClassChange) => {
                r.outcome == crate::analysis::compare::Outcome::ClassChanged
            }
            None => false,
        })
        .count();
    if failing > 0 {
        sys::say!(
            "compare: {failing} row{} fail --fail-on",
            if failing == 1 { "" } else { "s" }
        );
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}

/// `compare`'s BASE and NEW: `--base` and `--new` where given, the
/// arguments in order for the others.
pub(crate) fn compare_pair(a: &CompareArgs) -> anyhow::Result<(PathBuf, PathBuf)> {
    let mut args = [&a.base, &a.new].into_iter().flatten().cloned();
    let base = a.base_opt.clone().or_else(|| args.next());
    let new = a.new_opt.clone().or_else(|| args.next());
    if let Some(extra) = args.next() {
        refuse!(
            "compare {}: BASE and NEW are given already (--base and --new)",
            extra.display()
        );
    }
    match (base, new) {
        (Some(b), Some(n)) => Ok((b, n)),
        _ => refuse!("compare needs BASE and NEW (as arguments, or --base and --new)"),
    }
}

/// `scalebench history FILES…`.
pub fn history(a: HistoryArgs) -> anyhow::Result<ExitCode> {
    let given = stored::sources(&a.files, &a.store)?;
    if given.len() < 2 {
        refuse!(
            "history follows a figure across at least two result files; {} given (or selected)",
            given.len()
        );
    }
    let files: Vec<(Option<String>, Source)> = given.iter().map(|f| (None, f.clone())).collect();
    let mut systems = load_systems(&files)?;
    match a.order {
        HistoryOrder::Time => systems.sort_by(|x, y| x.file.started.cmp(&y.file.started)),
        HistoryOrder::Label => systems.sort_by(|x, y| x.label.cmp(&y.label)),
        HistoryOrder::Given => {}
    }
    let input = Input::new(&systems, &Options::default());
    say_notices(&input);
    let tracks = report::history::tracks_of(&input, a.benchmark.as_deref(), a.at.map(|n| n as f64));
    if tracks.is_empty() {
        anyhow::bail!(
            "nothing to follow{}",
            a.benchmark.as_deref().map_or(String::new(), |b| format!(
                ": no benchmark or workload `{b}` in these files"
            ))
        );
    }
    // Costs are never extrapolated: an n no file measured has no figure.
    let costs: Vec<&report::history::Track> =
        tracks.iter().filter(|t| !t.higher_is_better).collect();
    if let Some(n) = a.at
        && !costs.is_empty()
        && costs
            .iter()
            .all(|t| t.points.iter().all(|p| p.value.is_none()))
    {
        let why = costs
            .iter()
            .flat_map(|t| &t.points)
            .find(|p| !p.note.is_empty())
            .map_or(String::new(), |p| format!(": {}: {}", p.label, p.note));
        anyhow::bail!("--at {n}: no file has a cost there{why}");
    }
    let store = a.store.file();
    let inputs = not_outputs(given.iter(), store.as_deref());
    let existing = output::Existing::forced(a.force);
    let format = super::choices::chosen_format(
        a.format,
        a.output.as_deref(),
        super::HistoryFormat::Terminal,
    )?;
    let writer = report::writer(report::Format::from(format), None);
    with_output("--output", a.output.as_deref(), existing, &inputs, |w| {
        writer.write_history(&tracks, w)
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Loads every file that can be loaded; returns the systems and the
/// errors of the others.
pub(crate) fn load_what_can_be_loaded(
    files: &[(Option<String>, Source)],
) -> (Vec<System>, Vec<anyhow::Error>) {
    let mut systems: Vec<System> = Vec::new();
    let mut problems = Vec::new();
    for (given, f) in files {
        match f.load() {
            Ok(file) => {
                let mut label = given.clone().unwrap_or_else(|| file.label.clone());
                if systems.iter().any(|s| s.label == label) {
                    label = format!("{label} ({})", f.name());
                }
                systems.push(System { label, file });
            }
            Err(e) => problems.push(e.into()),
        }
    }
    (systems, problems)
}

/// The files of `report`: positional ones (a directory: the result files
/// in it), then `--relabel NAME=FILE` ones.
fn report_files(a: &ReportArgs) -> anyhow::Result<Vec<(Option<String>, Source)>> {
    let mut files: Vec<(Option<String>, Source)> = stored::sources(&a.files, &a.store)?
        .into_iter()
        .map(|f| (None, f))
        .collect();
    for l in &a.labels {
        let (name, file) = l
            .split_once('=')
            .filter(|(n, f)| !n.is_empty() && !f.is_empty())
            .ok_or_else(|| Usage(format!("--relabel {l}: expected NAME=FILE")))?;
        files.push((Some(name.to_string()), Source::File(PathBuf::from(file))));
    }
    if files.is_empty() {
        refuse!("no result files given (report RESULT.json… or --relabel NAME=FILE)");
    }
    Ok(files)
}

/// What an output of a command must not be: its input files (those on
/// disk) and the store's file.
fn not_outputs<'a>(
    sources: impl Iterator<Item = &'a Source>,
    store: Option<&'a Path>,
) -> Vec<(&'a Path, &'a str)> {
    sources
        .filter_map(|f| f.path())
        .map(|p| (p, "an input of this command"))
        .chain(store.map(|p| (p, "the store")))
        .collect()
}

/// `scalebench report`. Files that cannot be read are named on stderr and
/// in the report, which shows the rest; the exit status is then 1.
pub fn report(a: ReportArgs) -> anyhow::Result<ExitCode> {
    let files = report_files(&a)?;
    let store = a.store.file();
    let inputs = not_outputs(files.iter().map(|(_, f)| f), store.as_deref());
    let (output, what) = match &a.html {
        Some(path) => (Some(path.as_path()), "--html"),
        None => (a.output.as_deref(), "--output"),
    };
    let existing = output::Existing::forced(a.force);
    // An output that is an input, a link or a directory is refused before
    // its name is read for a format.
    if let Some(p) = output {
        output::check(what, p, existing, &inputs)?;
    }
    let chosen =
        super::choices::chosen_format(a.format, a.output.as_deref(), super::Format::Terminal)?;
    let format = match a.html {
        Some(_) => report::Format::Html,
        None => report::Format::from(chosen),
    };
    if a.svg_dir.is_some() && format != report::Format::Markdown {
        refuse!("--svg-dir: only the Markdown report links SVG charts; add --format markdown");
    }
    let (systems, problems) = load_what_can_be_loaded(&files);
    if systems.is_empty() {
        return Err(problems
            .into_iter()
            .next()
            .unwrap_or_else(|| anyhow::anyhow!("no result files could be read")));
    }
    let opts = Options {
        rejudge: a.rejudge,
        ..Options::default()
    };
    let mut input = Input::new(&systems, &opts);
    input.notices.extend(
        problems
            .iter()
            .map(|e| format!("left out: {}", super::error_words(e))),
    );
    // The terminal report on the terminal says its notes itself; any
    // other report is for a file or a program, and the user still hears
    // them here, once.
    if !(format == report::Format::Terminal && output.is_none()) {
        for n in &input.notices {
            if !n.starts_with("left out: ") {
                sys::say!("note: {n}");
            }
        }
    }
    // Everything is made and every output checked before anything is
    // written: a refused chart leaves no report half written, and the
    // reverse.
    let writer = report::writer(format, a.svg_dir.as_deref());
    let mut text = Vec::new();
    writer.write(&input, &mut text)?;
    let charts = writer.files();
    if let Some(p) = output {
        output::check(what, p, existing, &inputs)?;
    }
    write_charts(a.svg_dir.as_deref(), &charts, existing, output, &inputs)?;
    with_output(what, output, existing, &inputs, |w| w.write_all(&text))?;
    if let Some(p) = output
        && format == report::Format::Html
    {
        sys::say!("report: {}", p.display());
    }
    for p in &problems {
        sys::say!("error: {}", super::error_words(p));
    }
    Ok(if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Writes the charts a report links into `dir` (`--svg-dir`, made when
/// only it is missing): each a plain name in it, none an input or the
/// report itself, an existing file only as `existing` allows; all checked
/// before the first is written.
fn write_charts(
    dir: Option<&Path>,
    charts: &[(PathBuf, String)],
    existing: output::Existing,
    report: Option<&Path>,
    inputs: &[(&Path, &str)],
) -> anyhow::Result<()> {
    let Some(dir) = dir else {
        return Ok(());
    };
    output::ensure_dir("--svg-dir", dir)?;
    let mut others: Vec<(&Path, &str)> = inputs.to_vec();
    if let Some(r) = report {
        others.push((r, "the report"));
    }
    for (path, _) in charts {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let in_dir = output::in_dir("--svg-dir", dir, name.as_deref().unwrap_or(""))?;
        output::check("--svg-dir", &in_dir, existing, &others)?;
    }
    for (path, svg) in charts {
        output::write_file_atomic(path, |w| w.write_all(svg.as_bytes()))?;
    }
    Ok(())
}

/// `scalebench export`: the format is `--format`'s, else the one the
/// output's name says ([`super::choices::chosen_format`]: a name saying
/// another, or contradicting `--format`, is refused).
pub fn export(a: ExportArgs) -> anyhow::Result<ExitCode> {
    let given = result_files(&a.files)?;
    let inputs: Vec<(&Path, &str)> = given
        .iter()
        .map(|f| (f.as_path(), "an input of this command"))
        .collect();
    let existing = output::Existing::forced(a.force);
    // An output that is an input, a link or a directory is refused before
    // its name is read for a format.
    if let Some(p) = &a.output {
        output::check("--output", p, existing, &inputs)?;
    }
    let format = super::choices::chosen_format(a.format, a.output.as_deref(), ExportFormat::Csv)?;
    let files: Vec<(Option<String>, Source)> = given
        .iter()
        .map(|f| (None, Source::File(f.clone())))
        .collect();
    let systems = load_systems(&files)?;
    // An export with nothing to export says so (the file still gets its
    // header, so that a script reading it finds the columns).
    let empty = match format {
        ExportFormat::Csv => systems.iter().all(|s| {
            s.file
                .benchmarks
                .iter()
                .all(|b| b.runs.iter().all(|r| r.samples.is_empty()))
        }),
        ExportFormat::SweepCsv => systems.iter().all(|s| {
            s.file
                .workloads
                .iter()
                .all(|w| w.rows.iter().all(|r| r.sweep.is_none()))
        }),
    };
    if empty {
        sys::say!(
            "note: {} in these files: only the header is written",
            match format {
                ExportFormat::Csv => "no benchmark samples",
                ExportFormat::SweepCsv => "no workload sweeps",
            }
        );
    }
    with_output(
        "--output",
        a.output.as_deref(),
        existing,
        &inputs,
        |w| match format {
            ExportFormat::Csv => export::samples_csv(&systems, w),
            ExportFormat::SweepCsv => export::sweeps_csv(&systems, w),
        },
    )?;
    Ok(ExitCode::SUCCESS)
}

/// `scalebench analyze`.
pub fn analyze(a: AnalyzeArgs) -> anyhow::Result<ExitCode> {
    let series = report::csvin::read_series(&a.file)?;
    let named: Vec<(String, &[analysis::Sample])> = series
        .iter()
        .map(|s| {
            let name = match (&s.name, series.len()) {
                (Some(n), _) if !n.is_empty() => n.clone(),
                _ => a.name.clone(),
            };
            (name, s.samples.as_slice())
        })
        .collect();
    let input = Input::external(&named, &Options::default());
    to_stdout(|w| report::writer(report::Format::from(a.format), None).write(&input, w))?;
    // A series without a verdict is something asked for and not done:
    // named, after the report of the rest, and the status says so.
    let unjudged: Vec<(&str, &str)> = input
        .entries
        .iter()
        .filter_map(|e| {
            e.verdict
                .as_ref()
                .err()
                .map(|why| (e.series.as_str(), why.as_str()))
        })
        .collect();
    for (series, why) in &unjudged {
        sys::say!("analyze: {series}: no verdict: {why}");
    }
    Ok(if unjudged.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `scalebench sysinfo`.
pub fn sysinfo(a: SysinfoArgs) -> anyhow::Result<ExitCode> {
    let dir = std::env::temp_dir();
    let extra = sysinfo::Extra {
        sysctls: &a.record_sysctl,
        ..Default::default()
    };
    let steal = sysinfo::StealMeter::start();
    let mut s = sysinfo::collect(Some(&dir), &extra);
    s.tuning.steal_percent = steal.percent();
    to_stdout(|w| -> anyhow::Result<()> {
        if a.json {
            serde_json::to_writer_pretty(&mut *w, &s)?;
            writeln!(w)?;
            return Ok(());
        }
        Ok(report::sysinfo::write_text(&s, w)?)
    })?;
    Ok(ExitCode::SUCCESS)
}
