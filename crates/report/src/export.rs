//! Raw samples as CSV: `system,benchmark,run,n,ns,emulated,counts`, one
//! row per sample; and the samples of every sweep, one row per sample.
//! `emulated` is `true` for a system measured under emulation (its times
//! are not the speed of any machine), `false` otherwise (and for files
//! before schema 7); `counts` is what `ns` counts: `time`, or
//! `instructions` for a guest whose clock QEMU advanced by them (each
//! recorded nanosecond one instruction at the default shift).

use super::System;
use serde::Serialize;
use std::io::Write;

#[derive(Serialize)]
struct Row<'a> {
    system: &'a str,
    benchmark: &'a str,
    run: u32,
    n: u64,
    ns: u64,
    emulated: bool,
    counts: &'static str,
}

/// The header, also written when there are no samples.
pub const COLUMNS: [&str; 7] = [
    "system",
    "benchmark",
    "run",
    "n",
    "ns",
    "emulated",
    "counts",
];

/// Writes every sample of every series of `systems`.
pub fn samples_csv(systems: &[System], out: &mut dyn Write) -> crate::Result<()> {
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(out);
    w.write_record(COLUMNS)?;
    for s in systems {
        for b in &s.file.benchmarks {
            for r in &b.runs {
                for &[n, ns] in &r.samples {
                    w.serialize(Row {
                        system: &s.label,
                        benchmark: &b.series,
                        run: r.index,
                        n,
                        ns,
                        emulated: s.file.system.emulated(),
                        counts: super::cost_of(&s.file.system).name(),
                    })?;
                }
            }
        }
    }
    w.flush()?;
    Ok(())
}

#[derive(Serialize)]
struct SweepRow<'a> {
    system: &'a str,
    workload: &'a str,
    row: &'a str,
    target: &'a str,
    variable: &'a str,
    unit: &'a str,
    level: f64,
    sample: usize,
    t: f64,
    seconds: f64,
    value: f64,
    errors: u64,
    p50_ns: Option<u64>,
    p99_ns: Option<u64>,
    mean_latency_ns: Option<f64>,
    level_value: Option<f64>,
    cpu_busy: Option<f64>,
    busy_mhz: Option<f64>,
    emulated: bool,
}

/// The header of [`sweeps_csv`], also written when there are no sweeps.
pub const SWEEP_COLUMNS: [&str; 19] = [
    "system",
    "workload",
    "row",
    "target",
    "variable",
    "unit",
    "level",
    "sample",
    "t",
    "seconds",
    "value",
    "errors",
    "p50_ns",
    "p99_ns",
    "mean_latency_ns",
    "level_value",
    "cpu_busy",
    "busy_mhz",
    "emulated",
];

/// Writes every sample of every sweep of `systems`, with its level's
/// figure and CPU readings repeated on each of the level's rows.
pub fn sweeps_csv(systems: &[System], out: &mut dyn Write) -> crate::Result<()> {
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(out);
    w.write_record(SWEEP_COLUMNS)?;
    for s in systems {
        for wl in &s.file.workloads {
            for r in &wl.rows {
                let Some(sw) = &r.sweep else { continue };
                for l in &sw.levels {
                    for (i, x) in l.samples.iter().enumerate() {
                        w.serialize(SweepRow {
                            system: &s.label,
                            workload: &wl.name,
                            row: &r.label,
                            target: r.target.as_deref().unwrap_or(""),
                            variable: &sw.variable,
                            unit: &sw.unit,
                            level: l.level,
                            sample: i + 1,
                            t: x.t,
                            seconds: x.seconds,
                            value: x.value,
                            errors: x.errors,
                            p50_ns: x.latency_ns.map(|l| l.p50),
                            p99_ns: x.latency_ns.map(|l| l.p99),
                            mean_latency_ns: x.mean_latency_ns,
                            level_value: l.value,
                            cpu_busy: l.cpu_busy,
                            busy_mhz: l.busy_mhz,
                            emulated: s.file.system.emulated(),
                        })?;
                    }
                }
            }
        }
    }
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::fixtures::system;

    #[test]
    fn every_sample_says_whether_its_system_was_emulated() {
        let systems = [
            system("host", false, 1.0, false),
            system("guest", true, 10.0, false),
        ];
        let mut out = Vec::new();
        super::samples_csv(&systems, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let rows: Vec<&str> = text.lines().skip(1).collect();
        assert!(!rows.is_empty());
        for r in rows {
            let emulated = r.starts_with("guest,");
            assert!(
                r.ends_with(if emulated {
                    ",true,time"
                } else {
                    ",false,time"
                }),
                "{r}"
            );
        }
        // A guest that counted instructions says so in every row.
        let counted = crate::fixtures::counted(system("v6.1", true, 10.0, false), 0);
        let mut out = Vec::new();
        super::samples_csv(&[counted], &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("system,benchmark,run,n,ns,emulated,counts\n"));
        assert!(
            text.lines()
                .skip(1)
                .all(|r| r.ends_with(",true,instructions")),
            "{text}"
        );
    }
}
