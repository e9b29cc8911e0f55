//! `scalebench results show` in words: a stored run's facts and the
//! verdict rows the store keeps of it.

use std::io::Write;

/// Writes stored run `run` and its rows as `results show` prints them.
pub fn write_run(
    w: &mut dyn Write,
    run: &store::RunRow,
    benches: &[store::BenchRow],
    work: &[store::WorkRow],
) -> crate::Result<()> {
    writeln!(w, "run {}", run.id)?;
    writeln!(w, "label     {}", run.label)?;
    writeln!(w, "host      {}", run.host)?;
    writeln!(
        w,
        "system    {} {} ({}), {} on {} CPUs{}",
        run.os,
        run.kernel,
        run.arch,
        run.cpu_model.as_deref().unwrap_or("unknown CPU"),
        run.cpu_count,
        run.virtualization
            .as_deref()
            .map_or(String::new(), |v| format!(", {v}"))
    )?;
    writeln!(
        w,
        "ran       {} to {}",
        run.started,
        run.finished.as_deref().unwrap_or("?")
    )?;
    writeln!(
        w,
        "tool      scalebench {} (schema {})",
        run.tool_version, run.schema_version
    )?;
    writeln!(
        w,
        "command   {}",
        shlex::try_join(run.command_line.iter().map(String::as_str)).unwrap_or_default()
    )?;
    writeln!(
        w,
        "added     {} from {} ({} bytes)",
        run.added, run.source, run.bytes
    )?;
    write_rows(w, benches, work)
}

/// The verdict rows of `results show`.
fn write_rows(
    w: &mut dyn Write,
    benches: &[store::BenchRow],
    work: &[store::WorkRow],
) -> crate::Result<()> {
    use units::{fmt_n, fmt_ns};
    if !benches.is_empty() {
        let rows: Vec<Vec<String>> = benches
            .iter()
            .map(|b| {
                let at = |l: Option<(f64, f64)>| {
                    l.map_or("—".into(), |(n, ns)| {
                        format!("{} at {}", fmt_ns(ns), fmt_n(n))
                    })
                };
                vec![
                    b.series.clone(),
                    b.status.clone(),
                    b.class.clone().unwrap_or_else(|| "—".into()),
                    at(b.low),
                    at(b.high),
                    b.note.clone().unwrap_or_default(),
                ]
            })
            .collect();
        writeln!(w)?;
        let head = [
            "series",
            "status",
            "class",
            "cost at low n",
            "cost at high n",
            "note",
        ];
        writeln!(w, "{}", crate::table::render(&head, &rows, &[], &[0]))?;
    }
    if !work.is_empty() {
        let rows: Vec<Vec<String>> = work
            .iter()
            .map(|r| {
                vec![
                    r.workload.clone(),
                    format!(
                        "{}{}",
                        r.row_label,
                        r.target
                            .as_deref()
                            .map_or(String::new(), |t| format!(" · {t}"))
                    ),
                    r.figure.map_or("—".into(), |f| {
                        format!("{f:.0} {}", r.unit.as_deref().unwrap_or(""))
                    }),
                    r.verdict
                        .clone()
                        .or_else(|| r.error.clone())
                        .unwrap_or_default(),
                ]
            })
            .collect();
        writeln!(w)?;
        let head = ["workload", "row", "figure", "verdict"];
        writeln!(w, "{}", crate::table::render(&head, &rows, &[2], &[0]))?;
    }
    Ok(())
}
