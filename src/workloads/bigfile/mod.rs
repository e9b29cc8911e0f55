//! `bigfile`: fefe's large-file download. A large file served by
//! `scalebench serve` (sendfile) is downloaded once, then two files at
//! once, then once beside a second download held to 4 MB/s (the seed's
//! rate-limited download over loopback), each from two contiguous files
//! and from two whose pieces were placed in turns (fragmented), with the
//! caches dropped before each row where permitted: throughput over time,
//! as the pump-and-dump curve is drawn, and the server's CPU time. Each
//! file's extent map is read after it is written, and a file that is not
//! laid out as its layout claims is named ([`layout`]).
//!
//! The downloading client is a plain blocking HTTP/1.1 GET per file, one
//! thread each ([`download`]): what is measured is the server and the disk
//! under it.

mod download;
mod layout;

use super::http::{Server, ServerSpec};
use super::server_path::ServerPath;
use super::{Info, Size, Workload, WorkloadFlag, WorkloadOptions};
use crate::ctx::Ctx;
use crate::harness::phase::{self, DEFAULT_INTERVAL};
use crate::harness::progress::Progress;
use crate::net::load::ItemCounters;
use crate::results::{WorkloadResult, WorkloadRow};
use download::{Pace, download};
use layout::{FileCheck, INTERLEAVE, Layout};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// The `bigfile` workload.
pub struct BigFile;

static INFO: Info = Info {
    name: "bigfile",
    what: "a large file (1 GB; full: larger than RAM where the disk allows) served by scalebench serve and downloaded once, two at once, and once beside a second download held to 4 MB/s, from contiguous files and from two whose pieces were placed in turns (fragmented; extent maps checked), caches dropped before each row where permitted; throughput over time and the server's CPU time",
    quick: false,
    between_hosts: false,
    several_clients: false,
};

/// The default file size.
pub const DEFAULT_BYTES: u64 = 1 << 30;

/// The rate the second download is held to beside the measured one, as
/// the seed's was: 4 MB/s.
pub const COMPANION_RATE: u64 = 4_000_000;

/// The slowest download rate waited for, bytes per second, before a
/// download is given up (with a minute on top).
const SLOWEST: u64 = 1 << 20;

/// The file size: given, or 1 GB; full: 1.1 × RAM where the disk has room
/// for four such files, else what it has room for (at least 1 GB).
fn file_bytes(ctx: &Ctx, opts: &WorkloadOptions, notes: &mut Vec<String>) -> u64 {
    if let Some(b) = opts.own::<BigFileOptions>().bytes {
        return b;
    }
    if opts.size == Size::Quick {
        return DEFAULT_BYTES;
    }
    let Some(ram) = crate::sys::memory_bytes() else {
        notes.push("RAM unknown: 1 GB files".into());
        return DEFAULT_BYTES;
    };
    let want = ram + ram / 10;
    let room = crate::sys::free_bytes(ctx.workdir()).map_or(want, |f| f / 42 * 10);
    if room < want {
        let b = crate::units::fmt_bytes;
        notes.push(if room >= DEFAULT_BYTES {
            format!(
                "the disk has room for four files of {}, not {} (1.1 × RAM): the files are smaller than RAM",
                b(room),
                b(want)
            )
        } else {
            format!(
                "the disk has room for four files of {} only, not {} (1.1 × RAM): files of {}, the smallest it picks by itself (--bigfile-size or --fit go below)",
                b(room),
                b(want),
                b(DEFAULT_BYTES)
            )
        });
        return room.max(DEFAULT_BYTES);
    }
    want
}

/// `--fit`: four files of `bytes` shrunk, where the work directory of
/// `ctx` cannot hold them with 5 % to spare, to the largest whole MiB it
/// can (at least 1 MiB, the smallest `--bigfile-size`); the size and the
/// words of `params.fitted`.
fn fitted(ctx: &Ctx, opts: &WorkloadOptions, bytes: u64) -> Option<(u64, String)> {
    if !opts.fit {
        return None;
    }
    let free = crate::sys::free_bytes(ctx.workdir())?;
    no_room_in(free, bytes)?;
    let fit = (free / 42 * 10) >> 20 << 20;
    let b = crate::units::fmt_bytes;
    (fit >= 1 << 20).then(|| {
        let note = format!(
            "fitted to this machine (--fit): four files of {} asked, four of {} run: the work directory has {} free",
            b(bytes),
            b(fit),
            b(free)
        );
        (fit, note)
    })
}

/// Why four files of `bytes` do not fit in the work directory of `ctx`
/// with 5 % to spare, or `None` where they do (or its space is unknown).
fn no_room(ctx: &Ctx, bytes: u64) -> Option<String> {
    no_room_in(crate::sys::free_bytes(ctx.workdir())?, bytes)
}

/// Why four files of `bytes` do not fit in `free` bytes with 5 % to
/// spare ([`no_room`] of a free space already read).
fn no_room_in(free: u64, bytes: u64) -> Option<String> {
    (free < bytes * 4 + (bytes * 4) / 20).then(|| {
        format!(
            "{} free in the work directory: four files of {} and 5 % to spare do not fit (--bigfile-size)",
            crate::units::fmt_bytes(free),
            crate::units::fmt_bytes(bytes)
        )
    })
}

/// What a row downloads: `k` of its layout's files at once, or the first
/// beside the second held to [`COMPANION_RATE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `k` downloads at once, each as fast as it goes.
    AtOnce(usize),
    /// One measured download beside a second one held to 4 MB/s.
    BesideHeld,
}

impl Shape {
    fn label(self, layout: &str) -> String {
        match self {
            Shape::AtOnce(1) => format!("{layout}, 1 download"),
            Shape::AtOnce(k) => format!("{layout}, {k} downloads at once"),
            Shape::BesideHeld => format!(
                "{layout}, 1 download beside one held to {} MB/s",
                COMPANION_RATE / 1_000_000
            ),
        }
    }

    /// The files it downloads (measured ones first).
    fn files(self) -> usize {
        match self {
            Shape::AtOnce(k) => k,
            Shape::BesideHeld => 2,
        }
    }

    /// The downloads measured in its phase.
    fn measured(self) -> usize {
        match self {
            Shape::AtOnce(k) => k,
            Shape::BesideHeld => 1,
        }
    }
}

/// The rows of each layout, in order.
const SHAPES: [Shape; 3] = [Shape::AtOnce(1), Shape::AtOnce(2), Shape::BesideHeld];

/// One row: `shape`'s downloads of `layout`'s files (laid out as
/// `checks` found) from a fresh server.
fn row(rows: &mut Rows, layout: &Layout, checks: &[FileCheck; 2], shape: Shape) -> WorkloadRow {
    let (ctx, dir, bytes, path) = (rows.ctx, rows.dir, rows.bytes, rows.path);
    let cold = &mut *rows.cold;
    let mut params: BTreeMap<String, serde_json::Value> = BTreeMap::new();
    params.insert("layout".into(), json!(layout.name));
    params.insert("downloads".into(), json!(shape.measured()));
    params.insert("file_bytes".into(), json!(bytes));
    let used = &checks[..shape.files()];
    params.insert(
        "layout_check".into(),
        json!(used.iter().map(FileCheck::json).collect::<Vec<_>>()),
    );
    let claimed: Vec<Option<bool>> = used.iter().map(|c| c.as_claimed).collect();
    params.insert(
        "layout_as_claimed".into(),
        json!(if claimed.contains(&Some(false)) {
            Some(false)
        } else if claimed.contains(&None) {
            None
        } else {
            Some(true)
        }),
    );
    let mut out = WorkloadRow {
        label: shape.label(layout.name),
        target: None,
        params,
        load: None,
        phase: None,
        sweep: None,
        error: None,
    };
    if cold.is_none()
        && let Err(e) = crate::sys::drop_caches()
    {
        *cold = Some(format!(
            "caches not dropped ({e}): warm where the files fit in memory"
        ));
    }
    out.params.insert("cold".into(), json!(cold.is_none()));
    let server = match Server::start(
        &ctx.hosts().client,
        dir,
        &[],
        1,
        false,
        false,
        ServerSpec::scalebench(path),
    ) {
        Ok(s) => s,
        Err(e) => {
            out.error = Some(e);
            return out;
        }
    };
    let addr = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    out.params.insert("server_info".into(), server.info());
    let cpu_before = server.cpu_seconds();
    let deadline = Instant::now() + Duration::from_secs(60 + bytes / SLOWEST);
    let names: Vec<String> = layout.files[..shape.files()]
        .iter()
        .map(|p| layout::file_name(p))
        .collect();
    let (stats, errors) = match shape {
        Shape::AtOnce(_) => at_once(&addr, &names, deadline),
        Shape::BesideHeld => {
            let (stats, errors, companion) = beside_held(&addr, &names, deadline);
            out.params.insert("companion".into(), companion);
            (stats, errors)
        }
    };
    if let (Some(a), Some(b)) = (cpu_before, server.cpu_seconds()) {
        out.params.insert("server_cpu_s".into(), json!(b - a));
    }
    drop(server);
    if !errors.is_empty() {
        out.error = Some(errors.join("; "));
    }
    out.phase = Some(stats);
    out
}

/// `names` downloaded at once from `addr` as one timed phase; the errors
/// of those that failed.
fn at_once(
    addr: &str,
    names: &[String],
    deadline: Instant,
) -> (crate::results::PhaseStats, Vec<String>) {
    let (stats, results) = phase::run("downloads", DEFAULT_INTERVAL, |c: &Arc<ItemCounters>| {
        std::thread::scope(|s| {
            let handles: Vec<_> = names
                .iter()
                .map(|n| {
                    let c = c.clone();
                    s.spawn(move || download(addr, n, &c, deadline, None))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err("download thread panicked".into()))
                })
                .collect::<Vec<_>>()
        })
    });
    (stats, results.into_iter().filter_map(Result::err).collect())
}

/// `names[0]` downloaded from `addr` as the timed phase while `names[1]`
/// is downloaded beside it held to [`COMPANION_RATE`]: the companion
/// starts first, the measured download once the companion's bytes flow,
/// and the companion stops when the measured one is done. Returns the
/// phase, the errors, and the companion's figures (`companion` in the
/// row's params).
fn beside_held(
    addr: &str,
    names: &[String],
    deadline: Instant,
) -> (crate::results::PhaseStats, Vec<String>, serde_json::Value) {
    let stop = AtomicBool::new(false);
    let held = ItemCounters::default();
    let pace = Pace {
        bytes_per_s: COMPANION_RATE,
        stop: &stop,
    };
    std::thread::scope(|s| {
        let began = Instant::now();
        let companion = s.spawn(|| download(addr, &names[1], &held, deadline, Some(&pace)));
        // Its first bytes, or its end (an error), within 30 s.
        let flowing = began + Duration::from_secs(30);
        while held.get().1 == 0 && !companion.is_finished() && Instant::now() < flowing {
            std::thread::sleep(Duration::from_millis(2));
        }
        let (t0, b0) = (Instant::now(), held.get().1);
        let (stats, measured) = phase::run("downloads", DEFAULT_INTERVAL, |c| {
            download(addr, &names[0], c, deadline, None)
        });
        let (t1, b1) = (Instant::now(), held.get().1);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let got = companion
            .join()
            .unwrap_or_else(|_| Err("download thread panicked".into()));
        let ended = Instant::now();
        let during = (t1 - t0).as_secs_f64();
        let total = held.get().1;
        let mut errors: Vec<String> = measured.err().into_iter().collect();
        let whole = match got {
            Ok(g) => g.whole,
            Err(e) => {
                errors.push(format!("the download held to 4 MB/s: {e}"));
                false
            }
        };
        let figures = json!({
            "file": names[1],
            "limit_bytes_per_s": COMPANION_RATE,
            "held_by": "the client: reads paced, 128 KiB receive buffer (TCP flow control holds the server)",
            "bytes_during": b1 - b0,
            "bytes_per_s_during": if during > 0.0 { json!((b1 - b0) as f64 / during) } else { json!(null) },
            "bytes": total,
            "seconds": (ended - began).as_secs_f64(),
            "bytes_per_s": total as f64 / (ended - began).as_secs_f64().max(1e-9),
            "started_before_s": (t0 - began).as_secs_f64(),
            "whole": whole,
        });
        (stats, errors, figures)
    })
}

/// The bigfile workload's options.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BigFileOptions {
    /// The size of each file (default 1 GB; full: larger than RAM).
    pub bytes: Option<u64>,
    /// How the server answers.
    pub(crate) path: crate::workloads::server_path::ServerPath,
}

/// `--bigfile-size`: at least 1M.
fn file_size(s: &str) -> Result<u64, String> {
    match crate::values::bytes(s)? {
        b if b >= 1 << 20 => Ok(b),
        _ => Err("at least 1M".into()),
    }
}

/// The flags of the bigfile workload.
static FLAGS: &[WorkloadFlag] = &[
    WorkloadFlag::value(
        "bigfile-size",
        "SIZE",
        "Large files",
        "bigfile: the size of each of its four files (default 1G; `full`: 1.1 × RAM where the disk has room).",
    ),
    super::server_path::FILES_FLAG,
    super::server_path::LOOP_FLAG,
];

impl Workload for BigFile {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn flags(&self) -> &'static [WorkloadFlag] {
        FLAGS
    }

    fn options(&self, asked: &super::Asked) -> Result<Option<super::Own>, super::FlagError> {
        Ok(Some(std::sync::Arc::new(BigFileOptions {
            bytes: asked.given.parsed("bigfile-size", file_size)?,
            // Its server runs beside scalebench, on this OS.
            path: super::server_path::ServerPath::of(asked.given, true)?,
        })))
    }

    fn size_words(&self, opts: &WorkloadOptions, here: Option<&Ctx>) -> Option<String> {
        if let Some(ctx) = here {
            let mut notes = Vec::new();
            let bytes = file_bytes(ctx, opts, &mut notes);
            let (bytes, fit) = match fitted(ctx, opts, bytes) {
                Some((b, note)) => (b, Some(note)),
                None => (bytes, None),
            };
            notes.extend(fit);
            let mut words = format!("four files of {}", units::fmt_bytes(bytes));
            let asked = opts.own::<BigFileOptions>().bytes.is_some();
            if notes.is_empty() && !asked && opts.size == Size::Full {
                words.push_str(" (1.1 × RAM; the disk has room for four)");
            }
            notes.extend(no_room(ctx, bytes).map(|n| format!("{n}: the run measures nothing")));
            for n in notes {
                words = format!("{words}; {n}");
            }
            return Some(words);
        }
        if let Some(b) = opts.own::<BigFileOptions>().bytes {
            return Some(format!("four files of {}", units::fmt_bytes(b)));
        }
        if opts.size == Size::Quick {
            return Some(format!("four files of {}", units::fmt_bytes(DEFAULT_BYTES)));
        }
        Some(match crate::sys::memory_bytes() {
            Some(ram) => format!(
                "four files of 1.1 × RAM ({}) where the disk has room, else smaller (said in the result)",
                units::fmt_bytes(ram + ram / 10)
            ),
            None => "four files of 1 GiB (RAM unknown)".into(),
        })
    }

    fn run(&self, ctx: &Ctx, opts: &WorkloadOptions, progress: &mut Progress) -> WorkloadResult {
        let mut notes = Vec::new();
        let bytes = file_bytes(ctx, opts, &mut notes);
        let mut params: BTreeMap<String, serde_json::Value> = BTreeMap::new();
        let bytes = match fitted(ctx, opts, bytes) {
            Some((b, note)) => {
                params.insert("fitted".into(), json!(note));
                notes.push(note);
                b
            }
            None => bytes,
        };
        params.insert("file_bytes".into(), json!(bytes));
        params.insert("interleave_bytes".into(), json!(INTERLEAVE));
        opts.own::<BigFileOptions>().path.record(&mut params, true);
        let dir = ctx.workdir().join("bigfile");
        let mut rows = Vec::new();
        let layouts = [
            Layout {
                name: "contiguous",
                files: [dir.join("c1"), dir.join("c2")],
            },
            Layout {
                name: "fragmented",
                files: [dir.join("f1"), dir.join("f2")],
            },
        ];
        let mut cold: Option<String> = None;
        if let Some(full) = no_room(ctx, bytes) {
            notes.push(full);
            return super::finish(&INFO, params, rows, notes);
        }
        if let Err(e) = std::fs::create_dir_all(&dir) {
            notes.push(format!("cannot create {}: {e}", dir.display()));
            return super::finish(&INFO, params, rows, notes);
        }
        let mut checked = serde_json::Map::new();
        for layout in &layouts {
            if crate::stop::interrupted() {
                break;
            }
            let mut r = Rows {
                ctx,
                dir: &dir,
                bytes,
                path: opts.own::<BigFileOptions>().path,
                cold: &mut cold,
                notes: &mut notes,
                progress,
            };
            if let Some(v) = r.layout(layout, &mut rows) {
                checked.insert(layout.name.into(), v);
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        params.insert("layouts".into(), serde_json::Value::Object(checked));
        params.insert("cold".into(), json!(cold.is_none()));
        notes.extend(cold);
        super::finish(&INFO, params, rows, notes)
    }
}

/// What the rows of one run share.
struct Rows<'a> {
    ctx: &'a Ctx<'a>,
    dir: &'a Path,
    bytes: u64,
    path: ServerPath,
    cold: &'a mut Option<String>,
    notes: &'a mut Vec<String>,
    progress: &'a mut Progress,
}

impl Rows<'_> {
    /// `layout`'s files written and checked, then its rows into `rows`;
    /// returns what the workload's `layouts` records of it (`None` when
    /// its files could not be written: a note says why).
    fn layout(
        &mut self,
        layout: &Layout,
        rows: &mut Vec<WorkloadRow>,
    ) -> Option<serde_json::Value> {
        self.progress.phase(&format!(
            "bigfile: writing two {} MB files, {}",
            self.bytes >> 20,
            layout.name
        ));
        let placing = match layout::write_files(&layout.files, self.bytes, layout.fragmented()) {
            Ok(p) => p,
            Err(e) => {
                self.notes
                    .push(format!("writing the {} files: {e}", layout.name));
                return None;
            }
        };
        let checks = layout::check(layout, self.bytes);
        let unknown: Vec<&str> = checks
            .iter()
            .filter(|c| c.as_claimed.is_none())
            .filter_map(|c| c.map.as_ref().err().map(String::as_str))
            .collect();
        if let Some(why) = unknown.first() {
            // One note for both files: the reason is the filesystem's.
            self.notes.push(format!("{} layout {why}", layout.name));
        }
        self.notes.extend(
            checks
                .iter()
                .filter(|c| c.as_claimed == Some(false))
                .filter_map(|c| c.note.clone()),
        );
        for shape in SHAPES {
            if crate::stop::interrupted() {
                break;
            }
            self.progress
                .phase(&format!("bigfile: {}", shape.label(layout.name)));
            rows.push(row(self, layout, &checks, shape));
        }
        Some(json!({
            "placing": placing.words(),
            "files": checks.iter().map(FileCheck::json).collect::<Vec<_>>(),
        }))
    }
}
