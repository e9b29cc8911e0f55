//! The two layouts of `bigfile`'s files and the check that each file is
//! laid out on disk as its layout claims.
//!
//! Contiguous: two files each preallocated whole where the system allows
//! (`fallocate`), written and synced one after the other (written back
//! together, their allocations would alternate in 8 MiB pieces on ext4).
//! Fragmented: two
//! files whose 64 KB pieces are allocated in turns — preallocated piece by
//! piece (`fallocate`, Linux) so that the filesystem places each piece
//! when asked; written in turns alone, delayed allocation (ext4, xfs)
//! would place each file whole at write-back and make them contiguous.
//!
//! The check reads each file's extent map (FIEMAP) and counts its
//! fragments (runs of physically contiguous data; each further one is a
//! seek for a sequential reader):
//!
//! - a contiguous file may have at most one fragment per
//!   [`CONTIGUOUS_RUN`] (32 MiB) of its size, rounded up: a seek per
//!   32 MiB costs a disk reading 150 MB/s with 10 ms seeks under 5 %;
//! - a fragmented file needs at least one per [`FRAGMENTED_RUN`] (1 MiB),
//!   and two at least: a seek per MiB costs that disk about 60 %, the
//!   order of what the seed saw (25 MB/s sequential, 4 MB/s fragmented).
//!
//! A file between the two, or on the wrong side, is named in the result;
//! where the extent map cannot be read (tmpfs, other systems than Linux)
//! the layout is "unknown".

use crate::sys::storage::{self, ExtentMap};
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The piece size files are written interleaved in.
pub const INTERLEAVE: usize = 64 << 10;

/// A contiguous file has at most one fragment per this many bytes.
pub const CONTIGUOUS_RUN: u64 = 32 << 20;

/// A fragmented file has at least one fragment per this many bytes.
pub const FRAGMENTED_RUN: u64 = 1 << 20;

/// The files of one layout.
pub struct Layout {
    /// `contiguous` or `fragmented`.
    pub name: &'static str,
    /// Its two files.
    pub files: [PathBuf; 2],
}

impl Layout {
    /// Whether its files are to be fragmented.
    pub fn fragmented(&self) -> bool {
        self.name == "fragmented"
    }
}

/// How the fragmented files' pieces were placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placing {
    /// One file after the other, each synced before the next (the
    /// contiguous layout where preallocation is not to be had).
    OneAfterTheOther,
    /// Each preallocated whole, then written and synced before the next.
    PreallocatedWhole,
    /// Each 64 KB piece preallocated in turns, then written.
    PreallocatedInTurns,
    /// Written in turns only (no preallocation here): delayed allocation
    /// may still make the files contiguous; the check says.
    WrittenInTurns,
}

impl Placing {
    /// In words, for the result.
    pub fn words(self) -> &'static str {
        match self {
            Placing::OneAfterTheOther => "written and synced one after the other",
            Placing::PreallocatedWhole => {
                "each preallocated whole (fallocate), written and synced one after the other"
            }
            Placing::PreallocatedInTurns => {
                "64 KB pieces preallocated in turns (fallocate), then written"
            }
            Placing::WrittenInTurns => "64 KB pieces written in turns (no fallocate here)",
        }
    }
}

/// Writes `bytes` of incompressible data to each of `paths`: each
/// preallocated whole, written and synced before the next (contiguous), or
/// with their [`INTERLEAVE`]-byte pieces preallocated in turns and written
/// in turns, then synced (fragmented). Returns how they were placed.
pub fn write_files(
    paths: &[PathBuf; 2],
    bytes: u64,
    interleaved: bool,
) -> std::io::Result<Placing> {
    let mut files = [
        std::fs::File::create(&paths[0])?,
        std::fs::File::create(&paths[1])?,
    ];
    let mut pieces = Pieces::new(bytes);
    if !interleaved {
        // Each asked for whole, then written and synced before the next:
        // written back together, their allocations would alternate.
        let mut placing = Placing::OneAfterTheOther;
        for f in files.iter_mut() {
            match storage::preallocate(f, 0, bytes) {
                Ok(()) => placing = Placing::PreallocatedWhole,
                Err(e) if is_unsupported(&e) => {}
                Err(e) => return Err(e),
            }
            for i in 0..pieces.count {
                pieces.write(f, i)?;
            }
            f.sync_all()?;
        }
        return Ok(placing);
    }
    let mut placing = Placing::PreallocatedInTurns;
    'pieces: for i in 0..pieces.count {
        for f in &files {
            match storage::preallocate(f, i * INTERLEAVE as u64, pieces.len(i)) {
                Ok(()) => {}
                Err(e) if i == 0 && is_unsupported(&e) => {
                    placing = Placing::WrittenInTurns;
                    break 'pieces;
                }
                Err(e) => return Err(e),
            }
        }
    }
    for i in 0..pieces.count {
        for f in files.iter_mut() {
            pieces.write(f, i)?;
        }
    }
    for f in &files {
        f.sync_all()?;
    }
    Ok(placing)
}

/// A file of `bytes` as [`INTERLEAVE`]-byte pieces of incompressible data.
struct Pieces {
    bytes: u64,
    count: u64,
    data: Vec<u8>,
}

impl Pieces {
    fn new(bytes: u64) -> Pieces {
        use rand::RngExt;
        let mut data = vec![0u8; INTERLEAVE];
        rand::rng().fill(&mut data[..]);
        Pieces {
            bytes,
            count: bytes.div_ceil(INTERLEAVE as u64),
            data,
        }
    }

    /// The length of piece `i`.
    fn len(&self, i: u64) -> u64 {
        (self.bytes - i * INTERLEAVE as u64).min(INTERLEAVE as u64)
    }

    /// Appends piece `i` to `f`.
    fn write(&mut self, f: &mut std::fs::File, i: u64) -> std::io::Result<()> {
        // Vary the piece so that no two are alike (no deduplication).
        self.data[..8].copy_from_slice(&i.to_ne_bytes());
        let len = self.len(i) as usize;
        f.write_all(&self.data[..len])
    }
}

/// Whether preallocation is not to be had here (the OS or the
/// filesystem lacks it), rather than failing.
fn is_unsupported(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::Unsupported
        || matches!(
            e.raw_os_error(),
            Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS)
        )
}

/// One file's layout as its extent map shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct FileCheck {
    /// The file's name (`c1`, `f2`).
    pub file: String,
    /// Its extent map, or why it is unknown.
    pub map: Result<ExtentMap, String>,
    /// Whether it is laid out as its layout claims; `None`: unknown.
    pub as_claimed: Option<bool>,
    /// What is wrong, naming the file (or why it is unknown).
    pub note: Option<String>,
}

impl FileCheck {
    /// The check as the result records it.
    pub fn json(&self) -> serde_json::Value {
        let m = self.map.as_ref().ok();
        json!({
            "file": self.file,
            "extents": m.map(|m| m.extents),
            "fragments": m.map(|m| m.fragments),
            "mean_fragment_bytes": m.filter(|m| m.fragments > 0).map(|m| m.mapped_bytes / m.fragments),
            "as_claimed": self.as_claimed,
            "note": self.note,
        })
    }
}

/// The most fragments a contiguous file of `bytes` may have.
pub fn most_contiguous(bytes: u64) -> u64 {
    bytes.div_ceil(CONTIGUOUS_RUN).max(1)
}

/// The fewest fragments a fragmented file of `bytes` must have.
pub fn least_fragmented(bytes: u64) -> u64 {
    (bytes / FRAGMENTED_RUN).max(2)
}

fn mib(b: u64) -> String {
    crate::units::fmt_bytes(b)
}

/// Judges file `name` of `bytes` bytes, meant to be fragmented or not,
/// by its extent map.
pub fn judge(
    name: &str,
    fragmented: bool,
    bytes: u64,
    map: Result<ExtentMap, String>,
) -> FileCheck {
    let (as_claimed, note) = match &map {
        Err(e) => (None, Some(format!("{name}: layout {e}"))),
        Ok(m) if fragmented && m.fragments < least_fragmented(bytes) => (
            Some(false),
            Some(format!(
                "{name} is not fragmented: {} fragment{} in {} (a fragmented file here has at least one per {}, {}); the filesystem placed its pieces together",
                m.fragments,
                if m.fragments == 1 { "" } else { "s" },
                mib(bytes),
                mib(FRAGMENTED_RUN),
                least_fragmented(bytes)
            )),
        ),
        Ok(m) if !fragmented && m.fragments > most_contiguous(bytes) => (
            Some(false),
            Some(format!(
                "{name} is not contiguous: {} fragments in {} (a contiguous file here has at most one per {}, {}); the free space is fragmented",
                m.fragments,
                mib(bytes),
                mib(CONTIGUOUS_RUN),
                most_contiguous(bytes)
            )),
        ),
        Ok(_) => (Some(true), None),
    };
    FileCheck {
        file: name.to_string(),
        map,
        as_claimed,
        note,
    }
}

/// Checks both files of `layout`, each `bytes` long.
pub fn check(layout: &Layout, bytes: u64) -> [FileCheck; 2] {
    layout.files.clone().map(|p| {
        judge(
            &file_name(&p),
            layout.fragmented(),
            bytes,
            storage::extent_map(&p),
        )
    })
}

/// A file's name as served (`c1`).
pub fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(fragments: u64, bytes: u64) -> Result<ExtentMap, String> {
        Ok(ExtentMap {
            extents: fragments,
            fragments,
            mapped_bytes: bytes,
        })
    }

    #[test]
    fn thresholds_scale_with_the_size() {
        assert_eq!(most_contiguous(24 << 20), 1);
        assert_eq!(most_contiguous(1 << 30), 32);
        assert_eq!(least_fragmented(1 << 20), 2);
        assert_eq!(least_fragmented(24 << 20), 24);
        // Perfect interleaving in 64 KB pieces is far over the line.
        assert!((1u64 << 30) / INTERLEAVE as u64 > least_fragmented(1 << 30) * 10);
    }

    #[test]
    fn files_that_are_not_what_they_claim_are_named() {
        let b = 64 << 20;
        // The fragmented file that delayed allocation made contiguous.
        let c = judge("f1", true, b, map(3, b));
        assert_eq!(c.as_claimed, Some(false));
        let n = c.note.unwrap();
        assert!(
            n.starts_with("f1 is not fragmented: 3 fragments in 64"),
            "{n}"
        );
        // A contiguous file in pieces.
        let c = judge("c2", false, b, map(40, b));
        assert_eq!(c.as_claimed, Some(false));
        assert!(
            c.note
                .unwrap()
                .starts_with("c2 is not contiguous: 40 fragments")
        );
        // As claimed: no note.
        for (frag, n) in [(true, 1024), (false, 1), (false, 2)] {
            let c = judge("x", frag, b, map(n, b));
            assert_eq!((c.as_claimed, c.note), (Some(true), None), "{frag} {n}");
        }
        // Unknown: said, not guessed.
        let c = judge("f2", true, b, Err("unknown: tmpfs".into()));
        assert_eq!(c.as_claimed, None);
        assert_eq!(c.note.as_deref(), Some("f2: layout unknown: tmpfs"));
        let j = c.json();
        assert!(j["fragments"].is_null() && j["as_claimed"].is_null());
    }

    #[test]
    fn interleaved_files_hold_the_same_bytes_as_contiguous_ones() {
        let d = tempfile::tempdir().unwrap();
        let c = [d.path().join("a"), d.path().join("b")];
        let f = [d.path().join("c"), d.path().join("e")];
        let bytes = 3 * INTERLEAVE as u64 + 1000;
        let whole = write_files(&c, bytes, false).unwrap();
        let placed = write_files(&f, bytes, true).unwrap();
        if cfg!(target_os = "linux") {
            assert_eq!(whole, Placing::PreallocatedWhole);
            assert_eq!(placed, Placing::PreallocatedInTurns);
        }
        for p in c.iter().chain(&f) {
            assert_eq!(std::fs::metadata(p).unwrap().len(), bytes);
        }
        // Pieces differ from one another (their first bytes count them).
        for p in [&c[0], &f[1]] {
            let a = std::fs::read(p).unwrap();
            assert_ne!(a[..INTERLEAVE], a[INTERLEAVE..2 * INTERLEAVE]);
        }
    }
}
