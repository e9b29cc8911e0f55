//! Cold caches for the cold rows of `fs` and `fs-sizes` (`--fs-cold`).
//!
//! Dropping them (`/proc/sys/vm/drop_caches`, root on Linux) is the
//! cleanest. Where that is not permitted, they are evicted as the seed
//! did ("prime buffer cache by copying 2 GB from /dev/zero to a file", on
//! a machine with 2 GB): a file as large as the memory the page cache can
//! hold is written, synced and read back in the work directory, then
//! removed. The size is the cache's capacity for this process: physical
//! memory (MemTotal), or the memory cgroup's limit when it runs in one
//! that is lower — the pages its processes read are charged there, and
//! the cgroup's own reclaim pushes them out. Writing pushes out what was
//! read once; reading it back makes the new pages the recently used
//! ones, so that what was read twice goes too.
//!
//! Whether it worked is measured, not assumed: a sample of the files the
//! row reads is looked up with `mincore` afterwards, and the share of
//! their pages still in memory is recorded (`resident_after`).

use crate::stop::interrupted;
use crate::sys::storage;
use serde_json::json;
use std::collections::BTreeMap;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// How the cold rows make the caches cold (`--fs-cold`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColdBy {
    /// Drop them where permitted, else evict them.
    Auto,
    /// Drop them; where not permitted the cold rows are not run.
    Drop,
    /// Evict them, even where they could be dropped.
    Evict,
}

/// The piece the eviction file is written and read in.
const CHUNK: usize = 1 << 20;

/// Files sampled for `resident_after`.
pub const SAMPLE: usize = 200;

/// How the caches were made cold before a row.
#[derive(Debug, Clone, PartialEq)]
pub struct Cold {
    /// The row's params: `cold_by` (`drop_caches` or `eviction`),
    /// `resident_after`, `drop_refused` (why the caches were not dropped,
    /// when evicted instead), `evict_bytes`, `evict_basis`,
    /// `evict_passes`, `evict_seconds`.
    pub params: BTreeMap<String, serde_json::Value>,
    /// Evicted rather than dropped, and why not dropped: for the
    /// target's `cache`.
    pub evicted: Option<String>,
    /// The share of the sample's pages in memory afterwards
    /// (`resident_after`).
    pub share: Option<f64>,
}

/// Eviction passes at most before a cold row: a pass whose file leaves
/// over [`STILL_WARM`] of the sample in memory is followed by another.
pub const MOST_PASSES: u32 = 2;

/// The share of the sample in memory over which a row is not cold.
pub const STILL_WARM: f64 = 0.1;

/// Makes the caches cold as `by` asks, then measures how cold: `sample`
/// (files the row will read) looked up with `mincore` (`resident_after`).
/// An eviction file is written in `workdir`; when a pass leaves over a
/// tenth of the sample in memory (pages read twice are protected from a
/// single stream of new ones), another follows, [`MOST_PASSES`] at most.
/// `Err` says why the caches could not be made cold.
pub fn make_cold(by: ColdBy, workdir: &Path, sample: &[PathBuf]) -> Result<Cold, String> {
    let mut params = BTreeMap::new();
    let refused = match by {
        ColdBy::Evict => "--fs-cold evict".to_string(),
        ColdBy::Auto | ColdBy::Drop => match crate::sys::drop_caches() {
            Ok(()) => {
                params.insert("cold_by".into(), json!("drop_caches"));
                let share = resident(sample);
                params.insert("resident_after".into(), json!(share));
                return Ok(Cold {
                    params,
                    evicted: None,
                    share,
                });
            }
            Err(e) if by == ColdBy::Drop => {
                return Err(format!("the caches cannot be dropped ({e})"));
            }
            Err(e) => format!("the caches cannot be dropped ({e})"),
        },
    };
    let cap = storage::cache_capacity()
        .ok_or_else(|| format!("{refused}, and the memory to evict is unknown"))?;
    let (mut seconds, mut passes, mut share) = (0.0, 0, None);
    while passes < MOST_PASSES {
        seconds += evict(workdir, cap.bytes).map_err(|e| format!("{refused}, nor evicted: {e}"))?;
        passes += 1;
        share = resident(sample);
        if share.is_none_or(|s| s <= STILL_WARM) || interrupted() {
            break;
        }
    }
    params.insert("cold_by".into(), json!("eviction"));
    if by != ColdBy::Evict {
        params.insert("drop_refused".into(), json!(refused));
    }
    params.insert("evict_bytes".into(), json!(cap.bytes));
    params.insert("evict_basis".into(), json!(cap.basis));
    params.insert("evict_passes".into(), json!(passes));
    params.insert("evict_seconds".into(), json!(seconds));
    params.insert("resident_after".into(), json!(share));
    Ok(Cold {
        params,
        evicted: Some(format!(
            "evicted ({refused}): a file of {} ({}) written and read before each cold row, up to {MOST_PASSES} while over a tenth of a sample of the files to read stayed in memory",
            crate::units::fmt_bytes(cap.bytes),
            cap.basis
        )),
        share,
    })
}

/// Removes a file when dropped.
struct Remove(PathBuf);

impl Drop for Remove {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Writes a file of `bytes` in `dir`, syncs it, reads it back and removes
/// it; returns the seconds it took. Refused on a filesystem that keeps
/// files in memory, and where `dir` lacks the room (with 5 % to spare).
pub fn evict(dir: &Path, bytes: u64) -> Result<f64, String> {
    if let Some(fs_type) = storage::memory_filesystem(dir) {
        return Err(format!(
            "the work directory {} is on {fs_type}, which keeps files in memory: a file written there fills the memory instead of emptying the cache (--workdir on a disk)",
            dir.display(),
        ));
    }
    let free = crate::sys::free_bytes(dir).unwrap_or(0);
    if free < bytes.saturating_add(bytes / 20) {
        return Err(format!(
            "evicting needs {} free in {} (a file as large as the cache, 5 % to spare), {} are",
            crate::units::fmt_bytes(bytes + bytes / 20),
            dir.display(),
            crate::units::fmt_bytes(free)
        ));
    }
    let path = dir.join(format!("scalebench-evict-{}", std::process::id()));
    let started = Instant::now();
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let _gone = Remove(path.clone());
    let named = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut buf = vec![0u8; CHUNK];
    let mut r = super::corpus::Rng::new(bytes, 11);
    buf.iter_mut().for_each(|b| *b = r.next_u64() as u8);
    let chunks = bytes.div_ceil(CHUNK as u64);
    for i in 0..chunks {
        if interrupted() {
            return Err("interrupted".into());
        }
        // Pieces differ (no deduplication or compression to nothing).
        buf[..8].copy_from_slice(&i.to_ne_bytes());
        let len = (bytes - i * CHUNK as u64).min(CHUNK as u64) as usize;
        f.write_all(&buf[..len]).map_err(named)?;
    }
    f.sync_all().map_err(named)?;
    f.rewind().map_err(named)?;
    for _ in 0..=chunks {
        if interrupted() {
            return Err("interrupted".into());
        }
        if f.read(&mut buf).map_err(named)? == 0 {
            break;
        }
    }
    Ok(started.elapsed().as_secs_f64())
}

/// The mean share of the pages of `files` that are in memory (empty
/// files and those that cannot be looked at left out); `None` when no
/// file could be.
pub fn resident(files: &[PathBuf]) -> Option<f64> {
    let shares: Vec<f64> = files
        .iter()
        .take(SAMPLE)
        .filter_map(|p| storage::resident_share(p).ok().flatten())
        .collect();
    (!shares.is_empty()).then(|| shares.iter().sum::<f64>() / shares.len() as f64)
}

/// The share of the sampled `files`' data that is in memory one level
/// down, in the page cache of the loop device image `image` their
/// filesystem lies on (each file's extents, FIEMAP, are its places in the
/// image): data a cold row may read from memory below an empty cache. A
/// memory cgroup's eviction does not reach these pages (the loop device's
/// reads are charged elsewhere); dropping the caches does. An image on a
/// filesystem that keeps files in memory (tmpfs: a guest's `/tmp`) is
/// wholly there, whatever its files' extents. `None` when no file's
/// extents could be read (JFS and ReiserFS have no FIEMAP).
pub fn image_resident(image: &Path, files: &[PathBuf]) -> Option<f64> {
    if storage::memory_filesystem(image.parent().unwrap_or(image)).is_some() {
        return Some(1.0);
    }
    let ranges: Vec<(u64, u64)> = files
        .iter()
        .take(SAMPLE)
        .filter_map(|p| storage::extents(p).ok())
        .flatten()
        .collect();
    if ranges.is_empty() {
        return None;
    }
    storage::resident_share_of(image, Some(&ranges)).ok()?
}

/// The note for a target whose loop device image held `share` of the
/// sampled files' data in memory after the caches were made cold for
/// `what`, if over a tenth.
pub fn image_resident_note(target: &str, what: &str, share: Option<f64>) -> Option<String> {
    let s = share?;
    (s > 0.1).then(|| {
        format!(
            "{target}: {:.0} % of a sample of the files' data was still in memory in the loop device's image after the caches were made cold for {what} (an eviction in a memory cgroup does not reach it): that row read from memory below the filesystem",
            s * 100.0
        )
    })
}

/// The note for a target whose cold rows found `share` of a sample of
/// their files' pages still in memory, if that is over a tenth.
pub fn still_warm_note(target: &str, what: &str, share: Option<f64>) -> Option<String> {
    let s = share?;
    (s > STILL_WARM).then(|| {
        format!(
            "{target}: {:.0} % of a sample of the files' pages were still in memory after the caches were made cold for {what}: that row is not cold",
            s * 100.0
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_on_tmpfs_is_wholly_in_memory() {
        let shm = tempfile::tempdir_in("/dev/shm").expect("/dev/shm (tmpfs) is there");
        let img = shm.path().join("fs.img");
        std::fs::write(&img, b"x").unwrap();
        // No file of it has extents to read: the answer is the tmpfs's.
        assert_eq!(image_resident(&img, &[]), Some(1.0));
        let d = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let img = d.path().join("fs.img");
        std::fs::write(&img, b"x").unwrap();
        assert_eq!(image_resident(&img, &[]), None, "no extents, not tmpfs");
    }

    #[test]
    fn an_eviction_file_is_written_read_and_removed() {
        let d = tempfile::tempdir().unwrap();
        let s = evict(d.path(), 3 * CHUNK as u64 + 17).unwrap();
        assert!(s >= 0.0);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0, "removed");
    }

    #[test]
    fn an_eviction_that_does_not_fit_or_cannot_work_is_refused_by_name() {
        let d = tempfile::tempdir().unwrap();
        let e = evict(d.path(), u64::MAX / 4).unwrap_err();
        assert!(e.contains("evicting needs") && e.contains("free in"), "{e}");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
        if cfg!(target_os = "linux") {
            let shm = tempfile::tempdir_in("/dev/shm").expect("/dev/shm (tmpfs) is there");
            let e = evict(shm.path(), 1 << 20).unwrap_err();
            assert!(
                e.contains("is on tmpfs, which keeps files in memory"),
                "{e}"
            );
        }
    }

    #[test]
    fn residency_of_a_sample_and_the_note_when_it_stayed_warm() {
        let d = tempfile::tempdir().unwrap();
        let files: Vec<PathBuf> = (0..3).map(|i| d.path().join(format!("f{i}"))).collect();
        for f in &files {
            std::fs::write(f, vec![1u8; 8192]).unwrap();
        }
        let s = resident(&files).unwrap();
        assert!((0.0..=1.0).contains(&s), "{s}");
        assert_eq!(resident(&[d.path().join("none")]), None);
        assert_eq!(still_warm_note("ext4", "x", Some(0.05)), None);
        let n = still_warm_note("tmpfs /dev/shm", "replay cold, 1 process", Some(1.0)).unwrap();
        assert!(n.starts_with("tmpfs /dev/shm: 100 % of a sample"), "{n}");
        // A loop device's image: the share of the files' places in it.
        let img = d.path().join("img");
        std::fs::write(&img, vec![2u8; 1 << 20]).unwrap();
        // The sample's places lie anywhere on the disk, maybe past this
        // small image's end: then no page is asked about.
        if let Some(s) = image_resident(&img, &files) {
            assert!((0.0..=1.0).contains(&s), "{s}");
        }
        assert_eq!(image_resident(&img, &[d.path().join("none")]), None);
        assert_eq!(image_resident_note("ext4", "x", Some(0.05)), None);
        let n = image_resident_note("ext4", "8 KB read", Some(0.5)).unwrap();
        assert!(
            n.starts_with("ext4: 50 % of a sample of the files' data"),
            "{n}"
        );
    }
}
