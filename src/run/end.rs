//! The end of a run: the HTML report written, the terminal report
//! printed, what an interrupted run kept said, and the exit status.

use super::files::Recording;
use crate::analysis::Options;
use crate::report::{self, Input, System};
use crate::results::{ResultFile, Status, output};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What an interrupted run says at the end, on standard error: the
/// signal, what each result file kept (the finished series and workloads,
/// and the complete runs of the one interrupted), and what the cleanup did
/// ([`crate::stop::record`]: processes stopped, settings restored, the
/// work directory removed …).
pub fn interrupted_summary(files: &[(&std::path::Path, &ResultFile)]) -> String {
    let (sig, n) = crate::stop::signals();
    let mut parts: Vec<String> = files
        .iter()
        .map(|(path, f)| format!("kept {} in {}", kept(f), path.display()))
        .collect();
    parts.extend(crate::stop::record());
    format!(
        "interrupted by {}{}: {}",
        crate::stop::signal_name(sig),
        if n > 1 {
            format!(" ({n} signals)")
        } else {
            String::new()
        },
        parts.join("; ")
    )
}

/// What a result file holds, in words, for [`interrupted_summary`].
fn kept(f: &ResultFile) -> String {
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut v = Vec::new();
    let done = f
        .benchmarks
        .iter()
        .filter(|b| b.status != Status::Interrupted)
        .count()
        + f.workloads
            .iter()
            .filter(|w| w.status != Status::Interrupted)
            .count();
    if done > 0 {
        v.push(format!(
            "{} that finished",
            plural(done, "series or workload", "series and workloads")
        ));
    }
    for b in f
        .benchmarks
        .iter()
        .filter(|b| b.status == Status::Interrupted)
    {
        v.push(format!(
            "{} of {} (interrupted)",
            plural(b.runs.len(), "complete run", "complete runs"),
            b.series
        ));
    }
    for w in f
        .workloads
        .iter()
        .filter(|w| w.status == Status::Interrupted)
    {
        // A sweep's levels, or the other rows (phases, loads) measured.
        let sweeps = w.rows.iter().any(|r| r.sweep.is_some());
        let measured: usize = w
            .rows
            .iter()
            .map(|r| match &r.sweep {
                Some(s) => s.levels.iter().filter(|l| l.value.is_some()).count(),
                None => usize::from(r.phase.is_some() || r.load.is_some()),
            })
            .sum();
        let (one, many) = if sweeps {
            ("measured level", "measured levels")
        } else {
            ("measured row", "measured rows")
        };
        v.push(format!(
            "{} of {} (interrupted)",
            plural(measured, one, many),
            w.name
        ));
    }
    if v.is_empty() {
        "nothing measured yet".into()
    } else {
        v.join(", ")
    }
}

/// The series and workloads that failed, each with why (at most 5
/// reasons), under their profile's name when the run had several.
fn failures(recs: &[Recording]) -> Vec<(String, Vec<String>)> {
    recs.iter()
        .flat_map(|r| {
            let f = &r.file;
            f.benchmarks
                .iter()
                .filter(|b| b.status == Status::Failed)
                .map(|b| (b.series.clone(), b.message.iter().cloned().collect()))
                .chain(
                    f.workloads
                        .iter()
                        .filter(|w| w.status == Status::Failed)
                        .map(|w| (w.name.clone(), why_failed(w))),
                )
                .map(move |(s, why)| match &f.profile {
                    Some(p) => (format!("{s} ({})", p.name), why),
                    None => (s, why),
                })
        })
        .collect()
}

/// Writes the HTML report to `html` and prints the terminal one; the exit
/// code says whether the run was interrupted or something failed.
pub fn report_and_exit(recs: Vec<Recording>, html: Option<&Path>) -> anyhow::Result<ExitCode> {
    let failed = failures(&recs);
    let paths: Vec<PathBuf> = recs.iter().map(|r| r.path.clone()).collect();
    let systems: Vec<System> = recs
        .into_iter()
        .map(|r| System {
            label: r.file.label.clone(),
            file: r.file,
        })
        .collect();
    let input = Input::new(&systems, &Options::default());
    if let Some(h) = html {
        output::write_file_atomic(h, |w| {
            report::writer(report::Format::Html, None).write(&input, w)
        })?;
    }
    let shown = output::to_stdout(|w| -> anyhow::Result<()> {
        report::writer(report::Format::Terminal, None).write(&input, w)?;
        writeln!(w)?;
        for p in &paths {
            writeln!(w, "result file: {}", p.display())?;
        }
        if let Some(h) = html {
            writeln!(w, "report:      {}", h.display())?;
        }
        Ok(())
    });
    if crate::stop::interrupted()
        && let Err(e) = &shown
    {
        crate::stop::say(&format!("the terminal report could not be shown: {e:#}"));
    }
    let files: Vec<(&Path, &ResultFile)> = paths
        .iter()
        .map(|p| p.as_path())
        .zip(systems.iter().map(|s| &s.file))
        .collect();
    if !crate::stop::interrupted() {
        shown?;
    }
    Ok(exit_status(&files, &failed))
}

/// Ends a run for the system that asked for it (`__run`) without a
/// report: the asker reads the result file, and judges and reports it
/// itself. The exit code as [`report_and_exit`]'s.
pub fn exit_unreported(recs: &[Recording]) -> ExitCode {
    let files: Vec<(&Path, &ResultFile)> =
        recs.iter().map(|r| (r.path.as_path(), &r.file)).collect();
    exit_status(&files, &failures(recs))
}

/// The exit code of a run whose files are written: 130 when it was
/// interrupted (what each file kept said on standard error), 1 when
/// something failed (each with why, on standard error: the report may
/// have gone to a file or nowhere), else 0.
fn exit_status(files: &[(&Path, &ResultFile)], failed: &[(String, Vec<String>)]) -> ExitCode {
    if crate::stop::interrupted() {
        crate::stop::say(&interrupted_summary(files));
        return ExitCode::from(130);
    }
    if failed.is_empty() {
        return ExitCode::SUCCESS;
    }
    let names: Vec<&str> = failed.iter().map(|(n, _)| n.as_str()).collect();
    sys::say!("error: failed: {}", names.join(", "));
    for (name, why) in failed {
        for w in why {
            sys::say!("  {name}: {w}");
        }
    }
    ExitCode::FAILURE
}

/// Why a failed workload failed: its message, then each failed row's
/// error under the row's target and label that the message does not
/// already say (it holds them as notes: the cause once), at most 5.
fn why_failed(w: &crate::results::WorkloadResult) -> Vec<String> {
    let said = w.message.as_deref().unwrap_or_default();
    let rows = w.rows.iter().filter_map(|r| {
        let e = r.error.as_deref()?;
        let line = match &r.target {
            Some(t) => format!("{t}, {}: {e}", r.label),
            None => format!("{}: {e}", r.label),
        };
        (!said.contains(&line)).then_some(line)
    });
    w.message.iter().cloned().chain(rows).take(5).collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The default fixture's result file.
    pub(crate) fn fixture() -> ResultFile {
        serde_json::from_str(include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/default.json"
        )))
        .unwrap()
    }

    #[test]
    fn a_failed_workload_s_cause_is_said_once() {
        let row = |label: &str, error: &str| crate::results::WorkloadRow {
            label: label.into(),
            target: None,
            params: Default::default(),
            load: None,
            phase: None,
            sweep: None,
            error: Some(error.into()),
        };
        let mut w = crate::results::WorkloadResult {
            name: "pgbench".into(),
            what: "w".into(),
            status: Status::Failed,
            message: Some("setup: /w has 64 MiB free".into()),
            params: Default::default(),
            rows: vec![row("setup", "/w has 64 MiB free")],
            monitor: None,
        };
        assert_eq!(why_failed(&w), ["setup: /w has 64 MiB free"]);
        // A row the message does not hold is said after it.
        w.rows.push(row("clients 2", "psql: refused"));
        assert_eq!(
            why_failed(&w),
            ["setup: /w has 64 MiB free", "clients 2: psql: refused"]
        );
    }

    #[test]
    fn what_an_interrupted_file_kept_is_said_in_words() {
        let mut f = fixture();
        assert!(f.benchmarks.len() >= 2, "the fixture has benchmarks");
        let done = f.benchmarks.len() - 1 + f.workloads.len();
        let last = f.benchmarks.last_mut().unwrap();
        last.status = Status::Interrupted;
        last.runs.truncate(2);
        let series = last.series.clone();
        let words = kept(&f);
        assert!(
            words.starts_with(&format!("{done} series and workloads that finished")),
            "{words}"
        );
        assert!(
            words.ends_with(&format!("2 complete runs of {series} (interrupted)")),
            "{words}"
        );
        f.benchmarks.clear();
        f.workloads.clear();
        assert_eq!(kept(&f), "nothing measured yet");
    }
}
