//! Raw samples as CSV: `system,benchmark,run,n,ns`, one row per sample.

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
}

/// The header, also written when there are no samples.
pub const COLUMNS: [&str; 5] = ["system", "benchmark", "run", "n", "ns"];

/// Writes every sample of every series of `systems`.
pub fn samples_csv(systems: &[System], out: &mut dyn Write) -> anyhow::Result<()> {
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
                    })?;
                }
            }
        }
    }
    w.flush()?;
    Ok(())
}
