//! Verdicts as a Markdown table.

use super::{Input, Report, flags_of};
use crate::analysis::units::fmt_ns;
use std::io::Write;

/// The Markdown verdict writer.
pub struct MarkdownReport;

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

impl Report for MarkdownReport {
    fn write(&self, input: &Input, out: &mut dyn Write) -> anyhow::Result<()> {
        writeln!(
            out,
            "| system | benchmark | class | exponent | low | high | flags | verdict |"
        )?;
        writeln!(out, "|---|---|---|---|---|---|---|---|")?;
        for e in &input.entries {
            let (class, exp, low, high, words) = match &e.verdict {
                Ok(v) => (
                    v.class.label().to_string(),
                    format!(
                        "{:.2} [{:.2}, {:.2}]",
                        v.exponent.value, v.exponent.lo, v.exponent.hi
                    ),
                    fmt_ns(v.low.ns),
                    fmt_ns(v.high.ns),
                    v.words(),
                ),
                Err(m) => ("—".into(), "—".into(), "—".into(), "—".into(), m.clone()),
            };
            writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                cell(e.system),
                cell(&e.series),
                cell(&class),
                exp,
                low,
                high,
                cell(&flags_of(e)),
                cell(&words)
            )?;
        }
        Ok(())
    }
}
