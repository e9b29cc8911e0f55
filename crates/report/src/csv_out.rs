//! Verdicts as CSV: `system,benchmark,class,exponent,low_ns,high_ns,flags`.

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
}

/// The header, also written when there are no rows.
pub const COLUMNS: [&str; 7] = [
    "system",
    "benchmark",
    "class",
    "exponent",
    "low_ns",
    "high_ns",
    "flags",
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
            })?;
        }
        w.flush()?;
        Ok(())
    }
}
