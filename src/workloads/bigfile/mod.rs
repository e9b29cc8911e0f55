//! `bigfile`: fefe's large-file download. A large file served by
//! `scalebench serve` (sendfile) is downloaded once, then two files at
//! once, each from a contiguous file and from files written interleaved
//! (in 64 KB pieces, so each is fragmented), with the caches dropped before
//! each row where permitted: throughput over time, as the pump-and-dump
//! curve is drawn, and the server's CPU time.
//!
//! The downloading client is a plain blocking HTTP/1.1 GET per file, one
//! thread each, reading 256 KB at a time: what is measured is the server
//! and the disk under it.

use super::http::Server;
use super::{Flag, Info, Options, Size, Workload};
use crate::ctx::Ctx;
use crate::harness::phase::{self, DEFAULT_INTERVAL};
use crate::harness::progress::Progress;
use crate::net::load::Counters;
use crate::results::{WorkloadResult, WorkloadRow};
use serde_json::json;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The `bigfile` workload.
pub struct BigFile;

static INFO: Info = Info {
    name: "bigfile",
    what: "a large file (1 GB; full: larger than RAM where the disk allows) served by scalebench serve and downloaded once, then two at once, from contiguous files and from two written interleaved (fragmented), caches dropped before each row where permitted; throughput over time and the server's CPU time",
    quick: false,
    between_hosts: false,
};

/// The default file size.
pub const DEFAULT_BYTES: u64 = 1 << 30;

/// The piece size files are written interleaved in.
const INTERLEAVE: usize = 64 << 10;

/// The slowest download rate waited for, bytes per second, before a
/// download is given up (with a minute on top).
const SLOWEST: u64 = 1 << 20;

/// The files of one layout.
struct Layout {
    name: &'static str,
    files: [PathBuf; 2],
}

/// Writes `bytes` of incompressible data to each of `paths`: one after
/// the other (contiguous), or in turns of [`INTERLEAVE`] bytes
/// (fragmented), then syncs them.
fn write_files(paths: &[PathBuf; 2], bytes: u64, interleaved: bool) -> std::io::Result<()> {
    use rand::RngExt;
    let mut piece = vec![0u8; INTERLEAVE];
    rand::rng().fill(&mut piece[..]);
    let mut files = [
        std::fs::File::create(&paths[0])?,
        std::fs::File::create(&paths[1])?,
    ];
    let pieces = bytes.div_ceil(INTERLEAVE as u64);
    let mut write = |f: &mut std::fs::File, i: u64| -> std::io::Result<()> {
        let len = (bytes - i * INTERLEAVE as u64).min(INTERLEAVE as u64) as usize;
        // Vary the piece so that no two are alike (no deduplication).
        piece[..8].copy_from_slice(&i.to_ne_bytes());
        f.write_all(&piece[..len])
    };
    if interleaved {
        for i in 0..pieces {
            for f in files.iter_mut() {
                write(f, i)?;
            }
        }
    } else {
        for f in files.iter_mut() {
            for i in 0..pieces {
                write(f, i)?;
            }
        }
    }
    for f in &files {
        f.sync_all()?;
    }
    Ok(())
}

/// Downloads `name` from `addr` (`127.0.0.1:PORT`) with one GET, counting
/// body bytes into `c` as they arrive and one item at the end; gives up
/// at `deadline`. Returns the body's length.
fn download(addr: &str, name: &str, c: &Counters, deadline: Instant) -> Result<u64, String> {
    let mut s =
        std::net::TcpStream::connect(addr).map_err(|e| format!("connect to {addr}: {e}"))?;
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(|e| e.to_string())?;
    write!(
        s,
        "GET /{name} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| format!("sending the request: {e}"))?;
    let mut buf = vec![0u8; 256 << 10];
    let mut head: Vec<u8> = Vec::new();
    let mut body = 0u64;
    let mut length: Option<u64> = None;
    loop {
        if Instant::now() > deadline {
            return Err(format!("{name}: not done in time ({body} bytes)"));
        }
        let n = match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("{name}: reading after {body} bytes: {e}")),
        };
        let mut data = &buf[..n];
        if length.is_none() {
            head.extend_from_slice(data);
            let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") else {
                if head.len() > 16 << 10 {
                    return Err(format!("{name}: no end of the response header"));
                }
                continue;
            };
            let text = String::from_utf8_lossy(&head[..end]).into_owned();
            if !text.starts_with("HTTP/1.1 200") && !text.starts_with("HTTP/1.0 200") {
                return Err(format!(
                    "{name}: {}",
                    text.lines().next().unwrap_or("no status line")
                ));
            }
            length = Some(
                text.lines()
                    .find_map(|l| {
                        let (k, v) = l.split_once(':')?;
                        k.eq_ignore_ascii_case("content-length")
                            .then(|| v.trim().parse().ok())?
                    })
                    .ok_or_else(|| format!("{name}: no Content-Length"))?,
            );
            let rest = head.len() - (end + 4);
            data = &buf[n - rest..n];
        }
        body += data.len() as u64;
        c.add_bytes(data.len() as u64);
        if length.is_some_and(|l| body >= l) {
            break;
        }
    }
    match length {
        Some(l) if body == l => {
            c.add(1, 0);
            Ok(body)
        }
        Some(l) => Err(format!("{name}: {body} of {l} bytes")),
        None => Err(format!("{name}: closed before the response header ended")),
    }
}

/// The file size: given, or 1 GB; full: 1.1 × RAM where the disk has room
/// for four such files, else what it has room for (at least 1 GB).
fn file_bytes(ctx: &Ctx, opts: &Options, notes: &mut Vec<String>) -> u64 {
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
        notes.push(format!(
            "the disk has room for four files of {} MB, not {} MB (1.1 × RAM): the files are smaller than RAM",
            room.max(DEFAULT_BYTES) >> 20,
            want >> 20
        ));
        return room.max(DEFAULT_BYTES);
    }
    want
}

/// One row: `k` downloads at once of `layout`'s files from a fresh server.
fn row(
    ctx: &Ctx,
    dir: &Path,
    layout: &Layout,
    k: usize,
    bytes: u64,
    cold: &mut Option<String>,
) -> WorkloadRow {
    let label = format!(
        "{}, {k} download{}",
        layout.name,
        if k == 1 { "" } else { "s at once" }
    );
    let mut params: BTreeMap<String, serde_json::Value> = BTreeMap::new();
    params.insert("layout".into(), json!(layout.name));
    params.insert("downloads".into(), json!(k));
    params.insert("file_bytes".into(), json!(bytes));
    let mut out = WorkloadRow {
        label,
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
    let server = match Server::start(&ctx.hosts().client, dir, &[], 1, false, false) {
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
    let cpu_before = server.cpu_seconds();
    let deadline = Instant::now() + Duration::from_secs(60 + bytes / SLOWEST);
    let names: Vec<String> = layout.files[..k]
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let (stats, results) = phase::run("downloads", DEFAULT_INTERVAL, |c: &Arc<Counters>| {
        std::thread::scope(|s| {
            let handles: Vec<_> = names
                .iter()
                .map(|n| {
                    let (c, addr) = (c.clone(), addr.as_str());
                    s.spawn(move || download(addr, n, &c, deadline))
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
    if let (Some(a), Some(b)) = (cpu_before, server.cpu_seconds()) {
        out.params.insert("server_cpu_s".into(), json!(b - a));
    }
    drop(server);
    let errors: Vec<String> = results.into_iter().filter_map(Result::err).collect();
    if !errors.is_empty() {
        out.error = Some(errors.join("; "));
    }
    out.phase = Some(stats);
    out
}

/// The bigfile workload's options.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BigFileOptions {
    /// The size of each file (default 1 GB; full: larger than RAM).
    pub bytes: Option<u64>,
}

/// `--bigfile-size`: at least 1M.
fn file_size(s: &str) -> Result<u64, String> {
    match crate::values::bytes(s)? {
        b if b >= 1 << 20 => Ok(b),
        _ => Err("at least 1M".into()),
    }
}

/// The flags of the bigfile workload.
static FLAGS: &[Flag] = &[Flag::value(
    "bigfile-size",
    "SIZE",
    "Large files",
    "bigfile: the size of each of its four files (default 1G; `full`: 1.1 × RAM where the disk has room).",
)];

impl Workload for BigFile {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn flags(&self) -> &'static [Flag] {
        FLAGS
    }

    fn options(&self, asked: &super::Asked) -> Result<Option<super::Own>, String> {
        Ok(Some(std::sync::Arc::new(BigFileOptions {
            bytes: asked.given.parsed("bigfile-size", file_size)?,
        })))
    }

    fn run(&self, ctx: &Ctx, opts: &Options, progress: &mut Progress) -> WorkloadResult {
        let mut notes = Vec::new();
        let bytes = file_bytes(ctx, opts, &mut notes);
        let mut params: BTreeMap<String, serde_json::Value> = BTreeMap::new();
        params.insert("file_bytes".into(), json!(bytes));
        params.insert("interleave_bytes".into(), json!(INTERLEAVE));
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
        if let Some(free) = crate::sys::free_bytes(ctx.workdir())
            && free < bytes * 4 + (bytes * 4) / 20
        {
            notes.push(format!(
                "{} free in the work directory: four files of {} and 5 % to spare do not fit (--bigfile-size)",
                crate::analysis::units::fmt_bytes(free),
                crate::analysis::units::fmt_bytes(bytes)
            ));
            return super::finish(&INFO, params, rows, notes);
        }
        if let Err(e) = std::fs::create_dir_all(&dir) {
            notes.push(format!("cannot create {}: {e}", dir.display()));
            return super::finish(&INFO, params, rows, notes);
        }
        for layout in &layouts {
            if crate::stop::interrupted() {
                break;
            }
            progress.phase(&format!(
                "bigfile: writing two {} MB files, {}",
                bytes >> 20,
                layout.name
            ));
            if let Err(e) = write_files(&layout.files, bytes, layout.name == "fragmented") {
                notes.push(format!("writing the {} files: {e}", layout.name));
                continue;
            }
            for k in [1, 2] {
                if crate::stop::interrupted() {
                    break;
                }
                progress.phase(&format!("bigfile: {}, {k} at once", layout.name));
                rows.push(row(ctx, &dir, layout, k, bytes, &mut cold));
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        params.insert("cold".into(), json!(cold.is_none()));
        notes.extend(cold);
        super::finish(&INFO, params, rows, notes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaved_files_hold_the_same_bytes_as_contiguous_ones() {
        let d = tempfile::tempdir().unwrap();
        let c = [d.path().join("a"), d.path().join("b")];
        let f = [d.path().join("c"), d.path().join("e")];
        let bytes = 3 * INTERLEAVE as u64 + 1000;
        write_files(&c, bytes, false).unwrap();
        write_files(&f, bytes, true).unwrap();
        for p in c.iter().chain(&f) {
            assert_eq!(std::fs::metadata(p).unwrap().len(), bytes);
        }
        // Pieces differ from one another (their first bytes count them).
        let a = std::fs::read(&c[0]).unwrap();
        assert_ne!(a[..INTERLEAVE], a[INTERLEAVE..2 * INTERLEAVE]);
    }
}
