//! The headline figure of a workload row: what `history` follows and the
//! store indexes.

use super::WorkloadRow;

impl WorkloadRow {
    /// The row's figure and its unit: a sweep's peak (its highest level
    /// figure, in the sweep's unit), else the load generator's requests
    /// per second, else a phase's items per second; `None` when the row
    /// has none of them.
    pub fn figure(&self) -> Option<(f64, String)> {
        if let Some(sw) = &self.sweep {
            return sw
                .levels
                .iter()
                .filter_map(|l| l.value)
                .reduce(f64::max)
                .map(|v| (v, sw.unit.clone()));
        }
        if let Some(l) = &self.load {
            return Some((l.requests_per_s, "req/s".into()));
        }
        self.phase
            .as_ref()
            .map(|p| (p.rate(), format!("{}/s", p.unit)))
    }
}
