//! What the store indexes of a result file: one row for the run, one per
//! benchmark series (its verdict: class and cost), one per workload row
//! (its figure and, for a sweep, its verdict). The verdicts are those a
//! report gives ([`analysis::recorded::judge_all`], reusing a
//! verdict the file keeps); the figures those `history` follows.

use analysis::{self, Options};
use results::{ResultFile, Status};

/// The run's row (`runs`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunRow {
    /// The content hash of the file (SHA-256, hex).
    pub id: String,
    /// When it was added to the store, RFC 3339 UTC.
    pub added: String,
    /// The path it was added from.
    pub source: String,
    /// The file's size, bytes.
    pub bytes: i64,
    /// The run's label.
    pub label: String,
    /// The host name.
    pub host: String,
    /// The OS (`Linux`, `FreeBSD`).
    pub os: String,
    /// The kernel release.
    pub kernel: String,
    /// The kernel version string.
    pub kernel_version: String,
    /// The architecture.
    pub arch: String,
    /// The CPU model, when recorded.
    pub cpu_model: Option<String>,
    /// Logical CPUs.
    pub cpu_count: i64,
    /// `native`, `kvm`, `tcg`; `None` before schema 7.
    pub virtualization: Option<String>,
    /// Whether the CPU was emulated.
    pub emulated: bool,
    /// What its costs count: `time`, or `instructions` (a guest whose
    /// clock QEMU advanced by them).
    pub counts: String,
    /// Start of the run.
    pub started: String,
    /// End of the run.
    pub finished: Option<String>,
    /// The scalebench version that ran it.
    pub tool_version: String,
    /// The file's schema version.
    pub schema_version: i64,
    /// The command line of the run.
    pub command_line: Vec<String>,
    /// The tuning profile, when one was applied.
    pub profile: Option<String>,
    /// The analysis that judged the indexed verdicts.
    pub analysis: String,
}

/// A benchmark series' row (`benchmarks`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BenchRow {
    /// Its place in the file, from 0.
    pub position: i64,
    /// The benchmark (`connect`).
    pub name: String,
    /// The series (`connect[epoll]`).
    pub series: String,
    /// How it ended (`ok`, `capped`, `failed`, …).
    pub status: String,
    /// The n it aimed at.
    pub n: i64,
    /// Runs recorded.
    pub runs: i64,
    /// The growth class (`O(1)`, `undecided`, …); `None` without a verdict.
    pub class: Option<String>,
    /// The verdict's confidence (share of resampled runs).
    pub confidence: Option<f64>,
    /// The cost at low n: its n and ns (the verdict's `low`).
    pub low: Option<(f64, f64)>,
    /// The cost at high n: its n and ns (the verdict's `high`).
    pub high: Option<(f64, f64)>,
    /// Why there is no verdict.
    pub note: Option<String>,
}

/// A workload row's row (`workload_rows`); a workload without rows
/// (failed, unsupported) has one with an empty `row_label`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WorkRow {
    /// Its place among the run's workload rows, from 0.
    pub position: i64,
    /// The workload (`http-ipstack`).
    pub workload: String,
    /// How the workload ended.
    pub status: String,
    /// The row's label (`4 processes, IPv6`).
    pub row_label: String,
    /// Where it ran, when the workload has targets.
    pub target: Option<String>,
    /// Its figure ([`results::WorkloadRow::figure`]).
    pub figure: Option<f64>,
    /// The figure's unit.
    pub unit: Option<String>,
    /// A sweep's peak level.
    pub peak_level: Option<f64>,
    /// A sweep's knee.
    pub knee: Option<f64>,
    /// A sweep's verdict in words.
    pub verdict: Option<String>,
    /// Why the row (or the workload) failed.
    pub error: Option<String>,
    /// What its workload measured at, in words (`files 500, bytes …`:
    /// [`results::WorkloadResult::sizes_words`]); `None` for a workload
    /// without sizes.
    pub sizes: Option<String>,
}

/// Everything the store keeps of one file but the file itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Indexed {
    /// The run.
    pub run: RunRow,
    /// Its benchmark series, in file order.
    pub benchmarks: Vec<BenchRow>,
    /// Its workload rows, in file order.
    pub workloads: Vec<WorkRow>,
    /// What judging it found to say: each series whose kept verdict
    /// disagreed with its samples (indexed as judged again).
    pub notes: Vec<String>,
}

/// The first 12 hex digits of a run's id, as runs are shown.
pub fn short(id: &str) -> &str {
    // By characters: an id read from a damaged store may not be hex.
    id.char_indices().nth(12).map_or(id, |(i, _)| &id[..i])
}

/// The hex SHA-256 of `bytes`: a run's id.
pub fn content_id(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The index of `file`, whose bytes are `bytes` (read from `source`).
pub fn index(file: &ResultFile, bytes: &[u8], source: &str) -> Indexed {
    let s = &file.system;
    let run = RunRow {
        id: content_id(bytes),
        added: results::now_rfc3339(),
        source: source.to_string(),
        bytes: bytes.len() as i64,
        label: file.label.clone(),
        host: s.hostname.clone(),
        os: s.os.clone(),
        kernel: s.os_release.clone(),
        kernel_version: s.os_version.clone(),
        arch: s.arch.clone(),
        cpu_model: s.cpu.model.clone(),
        cpu_count: s.cpu.count as i64,
        virtualization: s.virtualization.as_ref().map(|v| v.kind.clone()),
        emulated: s.emulated(),
        counts: counts_of(s).to_string(),
        started: file.started.clone(),
        finished: file.finished.clone(),
        tool_version: file.tool.version.clone(),
        schema_version: i64::from(file.schema_version),
        command_line: file.command_line.clone(),
        profile: file.profile.as_ref().map(|p| p.name.clone()),
        analysis: analysis::recorded::ANALYSIS.to_string(),
    };
    let (benchmarks, notes) = bench_rows(file);
    Indexed {
        run,
        benchmarks,
        workloads: work_rows(file),
        notes,
    }
}

/// One row per benchmark series, judged as a report judges it, and a
/// note for each kept verdict judged again because it disagreed.
fn bench_rows(file: &ResultFile) -> (Vec<BenchRow>, Vec<String>) {
    let benches: Vec<_> = file.benchmarks.iter().collect();
    let judged = analysis::recorded::judge_all(&benches, &Options::default());
    let notes = judged
        .disagreed
        .iter()
        .map(|(i, why)| {
            format!(
                "the verdict kept for {} disagrees with its samples ({why}); it was indexed as judged again from them",
                file.benchmarks[*i].series
            )
        })
        .collect();
    let rows = file
        .benchmarks
        .iter()
        .zip(judged.verdicts)
        .enumerate()
        .map(|(i, (b, v))| {
            let v = v.as_ref();
            BenchRow {
                position: i as i64,
                name: b.name.clone(),
                series: b.series.clone(),
                status: b.status.as_str().to_string(),
                n: b.params.n as i64,
                runs: b.runs.len() as i64,
                class: v.ok().map(|v| v.class.to_string()),
                confidence: v.ok().and_then(|v| v.confidence),
                low: v.ok().map(|v| (v.low.n, v.low.ns)),
                high: v.ok().map(|v| (v.high.n, v.high.ns)),
                note: v.err().cloned(),
            }
        })
        .collect();
    (rows, notes)
}

/// One row per workload row, a sweep judged as a report judges it.
pub(crate) fn work_rows(file: &ResultFile) -> Vec<WorkRow> {
    let mut out = Vec::new();
    for w in &file.workloads {
        let failed = (w.status != Status::Ok)
            .then(|| w.message.clone())
            .flatten();
        if w.rows.is_empty() {
            out.push(WorkRow {
                position: out.len() as i64,
                workload: w.name.clone(),
                status: w.status.as_str().to_string(),
                row_label: String::new(),
                target: None,
                figure: None,
                unit: None,
                peak_level: None,
                knee: None,
                verdict: None,
                error: failed.clone(),
                sizes: w.sizes_words(),
            });
        }
        for r in &w.rows {
            let judged = r
                .sweep
                .as_ref()
                .map(|sw| analysis::sweep::judge(sw, analysis::sweep::KNEE_SHARE));
            let figure = r.figure();
            out.push(WorkRow {
                position: out.len() as i64,
                workload: w.name.clone(),
                status: w.status.as_str().to_string(),
                row_label: r.label.clone(),
                target: r.target.clone(),
                figure: figure.as_ref().map(|f| f.0),
                unit: figure.map(|f| f.1),
                peak_level: judged
                    .as_ref()
                    .and_then(|j| j.peak.as_ref().map(|p| p.level)),
                knee: judged.as_ref().and_then(|j| j.knee),
                verdict: judged.map(|j| j.words),
                error: r.error.clone().or_else(|| failed.clone()),
                sizes: w.sizes_words(),
            });
        }
    }
    out
}

/// What the costs of a run on system `s` count: `time` or `instructions`.
pub fn counts_of(s: &results::SystemInfo) -> &'static str {
    match &s.virtualization {
        Some(v) if v.counts_instructions() => "instructions",
        _ => "time",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> (ResultFile, Vec<u8>) {
        let path = format!(
            "{}/tests/fixtures/{name}",
            concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
        );
        let bytes = std::fs::read(&path).unwrap();
        let f = results::parse(std::str::from_utf8(&bytes).unwrap(), path.as_ref()).unwrap();
        (f, bytes)
    }

    #[test]
    fn a_short_id_is_twelve_characters_whatever_they_are() {
        assert_eq!(short(&"ab".repeat(32)), "abababababab");
        assert_eq!(short("abc"), "abc");
        assert_eq!(short("ééééééééééééé"), "éééééééééééé");
    }

    #[test]
    fn a_file_is_indexed_with_the_verdicts_a_report_gives() {
        let (f, bytes) = fixture("tuned.json");
        let ix = index(&f, &bytes, "tuned.json");
        assert_eq!(ix.run.id.len(), 64);
        assert_eq!(ix.run.id, content_id(&bytes));
        assert_ne!(ix.run.id, content_id(&fixture("default.json").1));
        assert_eq!(
            (ix.run.label.as_str(), ix.run.host.as_str()),
            ("tuned", "vm")
        );
        assert_eq!(ix.run.bytes, bytes.len() as i64);
        let series: Vec<&str> = ix.benchmarks.iter().map(|b| b.series.as_str()).collect();
        assert_eq!(series, ["socket", "bind", "mmap", "fork-static"]);
        let verdicts = analysis::recorded::judge_all(
            &f.benchmarks.iter().collect::<Vec<_>>(),
            &Options::default(),
        )
        .verdicts;
        for (row, v) in ix.benchmarks.iter().zip(&verdicts) {
            match v {
                Ok(v) => {
                    assert_eq!(row.class.as_deref(), Some(v.class.to_string().as_str()));
                    assert_eq!(row.high, Some((v.high.n, v.high.ns)));
                    assert!(row.note.is_none());
                }
                Err(e) => {
                    assert!(row.class.is_none() && row.high.is_none());
                    assert_eq!(row.note.as_ref(), Some(e));
                }
            }
        }
        assert_eq!(ix.benchmarks[3].status, "failed");
        assert!(ix.benchmarks[3].note.is_some());
        assert!(ix.workloads.is_empty());
    }

    #[test]
    fn a_workload_row_is_indexed_with_its_figure_and_a_failed_workload_once() {
        let (mut f, bytes) = fixture("default.json");
        let level = |l: f64, v: Option<f64>| {
            serde_json::json!({"level": l, "value": v, "cpu_busy": null, "busy_mhz": null,
                "error": null, "samples": []})
        };
        let w = serde_json::json!([
            {"name": "pgbench", "what": "", "status": "ok", "message": null, "params": {},
             "rows": [{"label": "select-only", "params": {}, "load": null, "error": null,
                       "sweep": {"variable": "clients", "unit": "TPS", "baseline": 1.0,
                                 "heat_up_s": 0.0, "sample_s": 1.0, "samples": 1,
                                 "figure_of_last": 1, "cpus": 2,
                                 "levels": [level(1.0, Some(500.0)), level(2.0, Some(900.0)),
                                            level(4.0, None)]}}]},
            {"name": "mail", "what": "", "status": "unsupported",
             "message": "no SMTP here", "params": {}, "rows": []}
        ]);
        f.workloads = serde_json::from_value(w).unwrap();
        let ix = index(&f, &bytes, "r.json");
        let [sweep, mail] = &ix.workloads[..] else {
            panic!("{:?}", ix.workloads)
        };
        assert_eq!((sweep.position, mail.position), (0, 1));
        assert_eq!(sweep.figure, Some(900.0));
        assert_eq!(sweep.unit.as_deref(), Some("TPS"));
        assert_eq!(sweep.peak_level, Some(2.0));
        let judged = analysis::sweep::judge(
            f.workloads[0].rows[0].sweep.as_ref().unwrap(),
            analysis::sweep::KNEE_SHARE,
        );
        assert_eq!(sweep.verdict.as_deref(), Some(judged.words.as_str()));
        assert_eq!(sweep.knee, judged.knee);
        assert_eq!(
            (mail.status.as_str(), mail.row_label.as_str(), mail.figure),
            ("unsupported", "", None)
        );
        assert_eq!(mail.error.as_deref(), Some("no SMTP here"));
    }
}
