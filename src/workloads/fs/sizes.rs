//! `fs-sizes`, the Rothman–Buckman file-size test: for each size (8 KB,
//! 16 KB, 128 KB by default) write N files, sync, read them back (cold when
//! the caches can be made cold: `--fs-cold`), then write N more with an
//! fsync after each file. Every step is a timed phase; a `total` row per
//! size adds them up, and a `total run time` row per target adds the sizes
//! up: the figure Rothman and Buckman compared systems by ("Linux: 542
//! seconds, Windows 2000: 613 seconds …").

use super::{
    Info, Size, Workload, WorkloadOptions, finish, ops, phase_row, prepare_place, target,
    warm_only_note,
};
use crate::ctx::Ctx;
use crate::harness::phase::{self, DEFAULT_INTERVAL};
use crate::harness::progress::Progress;
use crate::results::{PhaseStats, WorkloadResult, WorkloadRow};
use crate::stop::interrupted;
use crate::workloads::FlagError;
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
    several_clients: false,
};

/// The seeds' sizes.
pub const DEFAULT_SIZES: [u64; 3] = [8 << 10, 16 << 10, 128 << 10];

/// What a run of `n` files of each of `sizes` takes in each place (the
/// largest size's files twice over: written, then fsynced), told to be
/// made smaller by `--size-files`.
fn need_of(n: u64, sizes: &[u64]) -> target::Need {
    let largest = sizes.iter().max().copied().unwrap_or(0);
    target::Need {
        smaller: "--size-files",
        fewer: "--size-files",
        ..target::disk_need(2 * n, (2 * n).saturating_mul(largest))
    }
}

/// The places of the run in `ctx` whose free bytes or inodes fall short of
/// `need`, each with what it has (`/mnt/x has 2.00 GiB free`).
fn short_places(opts: &WorkloadOptions, ctx: &Ctx, need: target::Need) -> Vec<String> {
    let fs: super::FsOptions = opts.own();
    fs.places(ctx)
        .iter()
        .filter_map(|p| {
            let room = target::room(p, ctx.workdir(), fs.fs_size);
            let name = super::place_name(p, ctx);
            match (room.bytes, room.inodes) {
                (Some(b), _) if b < need.bytes => {
                    Some(format!("{name} has {} free", crate::units::fmt_bytes(b)))
                }
                (_, Some(i)) if i < need.inodes => Some(format!(
                    "{name} has {} inodes free",
                    crate::units::fmt_n(i as f64)
                )),
                _ => None,
            }
        })
        .collect()
}

/// The files of each size and the sizes a run makes: `--size-files` and
/// `--sizes`, or the size's.
fn files_and_sizes(opts: &WorkloadOptions) -> (u64, Vec<u64>) {
    let fs: super::FsOptions = opts.own();
    let n = fs.size_files.unwrap_or(match opts.size {
        Size::Quick => 2_000,
        Size::Full => 10_000,
    });
    let sizes = if fs.sizes.is_empty() {
        DEFAULT_SIZES.to_vec()
    } else {
        fs.sizes.clone()
    };
    (n, sizes)
}

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

/// What the steps of one size on one target share.
struct OneSize<'a, 'c> {
    ctx: &'a Ctx<'c>,
    fs: &'a super::FsOptions,
    t: &'a target::Target,
    /// Files per step.
    n: u64,
    /// The target's info (its `cache` set here).
    info: &'a mut serde_json::Value,
    notes: &'a mut Vec<String>,
    progress: &'a mut Progress,
}

impl OneSize<'_, '_> {
    /// The caches made cold before reading the files of `plain` (size
    /// `size`): the read row's params, or why not.
    fn cold(
        &mut self,
        plain: &Path,
        size: u64,
    ) -> Result<BTreeMap<String, serde_json::Value>, String> {
        let sample: Vec<_> = (0..self.n.min(super::cold::SAMPLE as u64))
            .map(|i| plain.join(format!("f{i:07}")))
            .collect();
        let c = super::cold::make_cold(self.fs.cold, self.ctx.workdir(), &sample);
        let c = c.inspect_err(|e| self.info["cache"] = json!(format!("warm only: {e}")))?;
        let mut p = c.params;
        if let Some(ev) = c.evicted {
            self.info["cache"] = json!(ev);
        }
        let share = c.share;
        let what = format!("{} read", kb(size));
        let label = &self.t.label;
        self.notes
            .extend(super::cold::still_warm_note(label, &what, share));
        if let Some(img) = &self.t.image {
            let below = super::cold::image_resident(img, &sample);
            p.insert("image_resident_after".into(), json!(below));
            self.notes
                .extend(super::cold::image_resident_note(label, &what, below));
        }
        Ok(p)
    }

    /// The steps of files of `size`: their four rows, and their total
    /// when every step ran.
    fn run(&mut self, size: u64) -> (Vec<WorkloadRow>, Option<PhaseStats>) {
        let (n, label) = (self.n, self.t.label.clone());
        let data: Vec<u8> = {
            let mut r = super::corpus::Rng::new(size, 9);
            (0..size).map(|_| r.next_u64() as u8).collect()
        };
        let mut p = BTreeMap::new();
        p.insert("file_bytes".into(), json!(size));
        p.insert("files".into(), json!(n));
        let plain = self.t.root.join(format!("w{size}"));
        let synced = self.t.root.join(format!("s{size}"));
        self.progress.phase(&format!("{label}: {} write", kb(size)));
        let w = write_all(&plain, n, &data, false);
        self.progress.advance(1);
        let cold = self.cold(&plain, size);
        let read_label = if cold.is_ok() {
            "read (cold)"
        } else {
            "read (warm)"
        };
        let mut read_params = p.clone();
        read_params.extend(cold.unwrap_or_default());
        self.progress
            .phase(&format!("{label}: {} {read_label}", kb(size)));
        let r = match &w {
            Ok(_) => read_all(&plain, n, size),
            Err(_) => Err("not run: the write failed".into()),
        };
        self.progress.advance(1);
        self.progress
            .phase(&format!("{label}: {} write + fsync", kb(size)));
        let f = write_all(&synced, n, &data, true);
        self.progress.advance(1);
        let tot = match (&w, &r, &f) {
            (Ok(a), Ok(b), Ok(c)) => Ok(total(&[a, b, c])),
            _ => Err("not every step ran".into()),
        };
        let sum = tot.as_ref().ok().cloned();
        let mut rows = Vec::new();
        for (what, res) in [
            ("write", w),
            (read_label, r),
            ("write + fsync", f),
            ("total", tot),
        ] {
            let params = if what == read_label { &read_params } else { &p };
            rows.push(row(
                format!("{} {what}", kb(size)),
                &label,
                params.clone(),
                res,
            ));
        }
        let _ = ops::remove_tree(&self.t.root, &crate::net::load::ItemCounters::default());
        self.progress.advance(1);
        (rows, sum)
    }
}

/// The disk test's total run time on one target, as Rothman and Buckman
/// compared systems by it: every size's `total` added up; an error when
/// not every size finished.
fn total_row(target: &str, sizes: &[u64], totals: &[PhaseStats]) -> WorkloadRow {
    let mut p = BTreeMap::new();
    p.insert("sizes".into(), json!(sizes));
    let r = if totals.len() == sizes.len() && !totals.is_empty() {
        Ok(total(&totals.iter().collect::<Vec<_>>()))
    } else {
        Err(format!(
            "{} of {} sizes finished: no total run time",
            totals.len(),
            sizes.len()
        ))
    };
    row(TOTAL_RUN.into(), target, p, r)
}

/// The label of the row of the whole test's run time.
pub const TOTAL_RUN: &str = "total run time";

impl Workload for FsSizes {
    fn info(&self) -> &'static Info {
        &FS_SIZES
    }

    fn flags(&self) -> &'static [crate::workloads::WorkloadFlag] {
        super::options::SIZES_FLAGS
    }

    fn options(
        &self,
        asked: &crate::workloads::Asked,
    ) -> Result<Option<crate::workloads::Own>, FlagError> {
        super::FsOptions::own(asked)
    }

    fn dirs(&self, opts: &WorkloadOptions) -> Vec<std::path::PathBuf> {
        opts.own::<super::FsOptions>().dirs()
    }

    fn mounting(&self, opts: &WorkloadOptions) -> crate::workloads::Mounting {
        opts.own::<super::FsOptions>().mounting()
    }

    fn measured_dirs(
        &self,
        opts: &WorkloadOptions,
        workdir: &std::path::Path,
    ) -> Vec<std::path::PathBuf> {
        opts.own::<super::FsOptions>().existing(workdir)
    }

    fn size_words(&self, opts: &WorkloadOptions, here: Option<&Ctx>) -> Option<String> {
        let (n, sizes) = files_and_sizes(opts);
        let names: Vec<String> = sizes.iter().map(|&s| kb(s)).collect();
        let mut words = format!(
            "{} of each size ({}) written, read back, then {} more each fsynced, in each place",
            crate::units::fmt_count(n, "file", "files"),
            names.join(", "),
            crate::units::fmt_n(n as f64),
        );
        // The need its run checks, which --fit does not change.
        let need = need_of(n, &sizes);
        let unfit = if opts.fit {
            ", which --fit does not shrink"
        } else {
            ""
        };
        match here.map(|ctx| short_places(opts, ctx, need)) {
            Some(short) if !short.is_empty() => words.push_str(&format!(
                "; about {} and {} inodes free needed in each place{unfit}: {}, too little (it fails there; fewer --size-files or another place)",
                crate::units::fmt_bytes(need.bytes),
                crate::units::fmt_n(need.inodes as f64),
                short.join(", ")
            )),
            Some(_) => words.push_str(&format!(
                "; about {} free needed in each place, which each has",
                crate::units::fmt_bytes(need.bytes)
            )),
            None if opts.fit => words.push_str(&format!(
                "; about {} free needed in each place{unfit}",
                crate::units::fmt_bytes(need.bytes)
            )),
            None => {}
        }
        Some(words)
    }

    fn run(&self, ctx: &Ctx, opts: &WorkloadOptions, progress: &mut Progress) -> WorkloadResult {
        let fs: super::FsOptions = opts.own();
        let (n, sizes) = files_and_sizes(opts);
        let places = fs.places(ctx);
        let need = need_of(n, &sizes);
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
            let mut totals: Vec<PhaseStats> = Vec::new();
            for &size in &sizes {
                if interrupted() {
                    break;
                }
                let mut one = OneSize {
                    ctx,
                    fs: &fs,
                    t: &t,
                    n,
                    info: &mut info,
                    notes: &mut notes,
                    progress,
                };
                let (r, tot) = one.run(size);
                rows.extend(r);
                totals.extend(tot);
            }
            rows.push(total_row(&label, &sizes, &totals));
            infos.push(info);
        }
        notes.extend(warm_only_note(&infos, ", reads are warm"));
        params.insert("targets".into(), json!(infos));
        progress.finish(&format!("{} rows", rows.len()));
        finish(&FS_SIZES, params, rows, notes)
    }
}
