//! Verdicts as CSV:
//! `system,benchmark,class,exponent,low_ns,high_ns,flags,max_ns,counts`:
//! `max_ns` the slowest sample of a series whose maximum matters (empty
//! for the others), `counts` what the costs count (`time`, or
//! `instructions` for a guest under QEMU's `-icount`).

use super::{Input, Report, flags_of};
use serde::Serialize;
use std::io::Write;

/// The CSV verdict writer.
pub struct CsvReport;

/// One row; field order is the column order.
#[derive(Serialize)]
struct Row<'a> {
    system: &'a str,
    benchmark: &'a str,
    class: String,
    exponent: String,
    low_ns: String,
    high_ns: String,
    flags: String,
    max_ns: String,
    counts: &'static str,
}

/// The header, also written when there are no rows.
pub const COLUMNS: [&str; 9] = [
    "system",
    "benchmark",
    "class",
    "exponent",
    "low_ns",
    "high_ns",
    "flags",
    "max_ns",
    "counts",
];

impl Report for CsvReport {
    fn write(&self, input: &Input, out: &mut dyn Write) -> crate::Result<()> {
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(out);
        w.write_record(COLUMNS)?;
        for e in &input.entries {
            let (class, exponent, low_ns, high_ns) = match &e.verdict {
                Ok(v) => (
                    v.class.label().to_string(),
                    v.exponent
                        .map_or(String::new(), |e| format!("{:.3}", e.value)),
                    format!("{:.0}", v.low.ns),
                    format!("{:.0}", v.high.ns),
                ),
                Err(_) => Default::default(),
            };
            w.serialize(Row {
                system: e.system,
                benchmark: &e.series,
                class,
                exponent,
                low_ns,
                high_ns,
                flags: flags_of(e),
                max_ns: e
                    .maxima
                    .as_ref()
                    .and_then(|m| m.slowest())
                    .map_or(String::new(), |m| format!("{:.0}", m.max)),
                counts: e.cost.name(),
            })?;
        }
        w.flush()?;
        Ok(())
    }
}
