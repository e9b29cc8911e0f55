//! `fs-sizes`, the Rothman–Buckman file-size test: for each size (8 KB,
//! 16 KB, 128 KB by default) write N files, sync, read them back (cold when
//! the caches can be dropped), then write N more with an fsync after each
//! file. Every step is a timed phase; a `total` row per size adds them up.

use super::{
    Info, Options, Size, Workload, finish, ops, phase_row, prepare_place, target, warm_only_note,
};
use crate::ctx::Ctx;
use crate::harness::phase::{self, DEFAULT_INTERVAL};
use crate::harness::progress::Progress;
use crate::results::{PhaseStats, WorkloadResult, WorkloadRow};
use crate::stop::interrupted;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;

/// The `fs-sizes` workload.
pub struct FsSizes;

static FS_SIZES: Info = Info {
    name: "fs-sizes",
    what: "write then read many files of 8 KB, 16 KB and 128 KB (--sizes), without and with an fsync per file; time per size and per file",
    quick: false,
    between_hosts: false,
};

/// The seeds' sizes.
pub const DEFAULT_SIZES: [u64; 3] = [8 << 10, 16 << 10, 128 << 10];

fn kb(size: u64) -> String {
    if size.is_multiple_of(1024) {
        format!("{} KB", size / 1024)
    } else {
        format!("{size} B")
    }
}

fn row(
    label: String,
    target: &str,
    params: BTreeMap<String, serde_json::Value>,
    r: Result<PhaseStats, String>,
) -> WorkloadRow {
    let (phase, error) = match r {
        Ok(s) => (Some(s), None),
        Err(e) => (None, Some(e)),
    };
    phase_row(&label, target, params, phase, None, error)
}

/// Writes `n` files of `data` into `dir` as a timed phase.
fn write_all(dir: &Path, n: u64, data: &[u8], fsync: bool) -> Result<PhaseStats, String> {
    std::fs::create_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let (mut s, r) = phase::run("files", DEFAULT_INTERVAL, |c| -> std::io::Result<()> {
        for i in 0..n {
            if interrupted() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::Interrupted,
                    "interrupted",
                ));
            }
            ops::write_file(&dir.join(format!("f{i:07}")), data, fsync)?;
            c.add(1, data.len() as u64);
        }
        Ok(())
    });
    r.map_err(|e| e.to_string())?;
    s.sync_seconds = Some(ops::sync_dir(dir).map_err(|e| e.to_string())?);
    Ok(s)
}

/// Reads the `n` files of `dir` as a timed phase.
fn read_all(dir: &Path, n: u64, size: u64) -> Result<PhaseStats, String> {
    let mut buf = vec![0u8; 64 << 10];
    let (s, r) = phase::run("files", DEFAULT_INTERVAL, |c| -> std::io::Result<()> {
        for i in 0..n {
            if interrupted() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::Interrupted,
                    "interrupted",
                ));
            }
            let got = ops::read_file(&dir.join(format!("f{i:07}")), &mut buf)?;
            if got != size {
                return Err(std::io::Error::other(format!(
                    "f{i:07}: read {got} bytes, wrote {size}"
                )));
            }
            c.add(1, got);
        }
        Ok(())
    });
    r.map_err(|e| e.to_string())?;
    Ok(s)
}

/// Adds phases up into a `total` row (no throughput curve).
fn total(parts: &[&PhaseStats]) -> PhaseStats {
    PhaseStats {
        unit: "files".into(),
        seconds: parts
            .iter()
            .map(|p| p.seconds + p.sync_seconds.unwrap_or(0.0))
            .sum(),
        items: parts.iter().map(|p| p.items).sum(),
        bytes: parts.iter().map(|p| p.bytes).sum(),
        sync_seconds: None,
        cpu_user_s: parts.iter().map(|p| p.cpu_user_s).sum(),
        cpu_system_s: parts.iter().map(|p| p.cpu_system_s).sum(),
        interval_ms: 0,
        throughput: Vec::new(),
    }
}

impl Workload for FsSizes {
    fn info(&self) -> &'static Info {
        &FS_SIZES
    }

    fn flags(&self) -> &'static [crate::workloads::Flag] {
        super::options::FLAGS
    }

    fn options(
        &self,
        asked: &crate::workloads::Asked,
    ) -> Result<Option<crate::workloads::Own>, String> {
        super::FsOptions::own(asked)
    }

    fn dirs(&self, opts: &Options) -> Vec<std::path::PathBuf> {
        opts.own::<super::FsOptions>().dirs()
    }

    fn mounting(&self, opts: &Options) -> crate::workloads::Mounting {
        opts.own::<super::FsOptions>().mounting()
    }

    fn run(&self, ctx: &Ctx, opts: &Options, progress: &mut Progress) -> WorkloadResult {
        let fs: super::FsOptions = opts.own();
        let n = fs.size_files.unwrap_or(match opts.size {
            Size::Quick => 2_000,
            Size::Full => 10_000,
        });
        let sizes: Vec<u64> = if fs.sizes.is_empty() {
            DEFAULT_SIZES.to_vec()
        } else {
            fs.sizes.clone()
        };
        let places = fs.places(ctx);
        let need = target::disk_need(
            2 * n,
            (2 * n).saturating_mul(sizes.iter().max().copied().unwrap_or(0)),
        );
        let mut params = BTreeMap::new();
        params.insert("files_per_size".into(), json!(n));
        params.insert("sizes".into(), json!(sizes));
        let steps = 4 * sizes.len() as u64;
        progress.begin(FS_SIZES.name, steps * places.len() as u64);
        let mut rows = Vec::new();
        let mut infos = Vec::new();
        let mut notes = Vec::new();
        for (i, place) in places.iter().enumerate() {
            if interrupted() {
                break;
            }
            let t = match prepare_place(place, i, ctx, opts, need) {
                Ok(t) => t,
                Err(row) => {
                    rows.push(*row);
                    progress.advance(steps);
                    continue;
                }
            };
            let mut info = t.info.clone();
            info["label"] = json!(t.label);
            let label = t.label.clone();
            for &size in &sizes {
                if interrupted() {
                    break;
                }
                let data: Vec<u8> = {
                    let mut r = super::corpus::Rng::new(size, 9);
                    (0..size).map(|_| r.next_u64() as u8).collect()
                };
                let mut p = BTreeMap::new();
                p.insert("file_bytes".into(), json!(size));
                p.insert("files".into(), json!(n));
                let plain = t.root.join(format!("w{size}"));
                let synced = t.root.join(format!("s{size}"));
                progress.phase(&format!("{label}: {} write", kb(size)));
                let w = write_all(&plain, n, &data, false);
                progress.advance(1);
                let cold = crate::sys::drop_caches();
                if let Err(e) = &cold {
                    info["cache"] = json!(format!("warm only: {e}"));
                }
                let read_label = if cold.is_ok() {
                    "read (cold)"
                } else {
                    "read (warm)"
                };
                progress.phase(&format!("{label}: {} {read_label}", kb(size)));
                let r = match &w {
                    Ok(_) => read_all(&plain, n, size),
                    Err(_) => Err("not run: the write failed".into()),
                };
                progress.advance(1);
                progress.phase(&format!("{label}: {} write + fsync", kb(size)));
                let f = write_all(&synced, n, &data, true);
                progress.advance(1);
                let tot = match (&w, &r, &f) {
                    (Ok(a), Ok(b), Ok(c)) => Ok(total(&[a, b, c])),
                    _ => Err("not every step ran".into()),
                };
                for (what, res) in [
                    ("write", w),
                    (read_label, r),
                    ("write + fsync", f),
                    ("total", tot),
                ] {
                    rows.push(row(format!("{} {what}", kb(size)), &label, p.clone(), res));
                }
                let _ = ops::remove_tree(&t.root, &crate::net::load::Counters::default());
                progress.advance(1);
            }
            infos.push(info);
        }
        notes.extend(warm_only_note(&infos, ", reads are warm"));
        params.insert("targets".into(), json!(infos));
        progress.finish(&format!("{} rows", rows.len()));
        finish(&FS_SIZES, params, rows, notes)
    }
}
