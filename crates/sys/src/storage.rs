//! Where a file's data lies and whether it is in memory: a file's extent
//! map (Linux `FIEMAP`), preallocating pieces of a file (`fallocate`),
//! which pages of a file are in the page cache (`mincore`), how much file
//! data the page cache can hold here (memory, or the memory cgroup's
//! limit), and a dry run of `mkfs` options. Elsewhere each says what it
//! does not know rather than guessing.

use std::path::Path;

/// What a file's extent map says about its layout on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExtentMap {
    /// Extents as the filesystem lists them (`filefrag -v` rows): a
    /// filesystem may split physically contiguous data into several
    /// (ext4 extents hold at most 128 MiB).
    pub extents: u64,
    /// Runs of physically contiguous data: a new one wherever an extent
    /// does not start where the one before it ended on disk, i.e. each
    /// seek a sequential read of the file makes, plus one.
    pub fragments: u64,
    /// Bytes the extents cover.
    pub mapped_bytes: u64,
}

impl ExtentMap {
    /// Adds one extent (`physical` and `length` in bytes) in file order.
    pub fn add(&mut self, physical: u64, length: u64, last_end: &mut Option<u64>) {
        self.extents += 1;
        self.mapped_bytes += length;
        if *last_end != Some(physical) {
            self.fragments += 1;
        }
        *last_end = Some(physical.saturating_add(length));
    }
}

/// The extent map of the file at `path` (its dirty data written out
/// first, so that delayed allocation has placed it); `Err` says why it
/// is unknown (tmpfs has no extents; other systems than Linux have no
/// `FIEMAP`).
pub fn extent_map(path: &Path) -> Result<ExtentMap, String> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        fiemap::map(&f).map_err(|e| match e.raw_os_error() {
            Some(libc::EOPNOTSUPP) | Some(libc::ENOTTY) => format!(
                "unknown: {} keeps no extent map (FIEMAP: {})",
                super::mount_of(path).map_or_else(|| "the filesystem".into(), |m| m.fs_type),
                super::errno_name(e.raw_os_error().unwrap_or(0))
            ),
            _ => format!("unknown: FIEMAP on {}: {e}", path.display()),
        })
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = path;
        Err("unknown: extent maps are read with Linux's FIEMAP, which this OS does not have".into())
    }
}

/// Where the data of the file at `path` lies on its filesystem's device:
/// `(offset, length)` in bytes, in file order; `Err` as for
/// [`extent_map`].
pub fn extents(path: &Path) -> Result<Vec<(u64, u64)>, String> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut out = Vec::new();
        fiemap::walk(&f, &mut |p, l| out.push((p, l)))
            .map_err(|e| format!("unknown: FIEMAP on {}: {e}", path.display()))?;
        Ok(out)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = path;
        Err("unknown: extent maps are read with Linux's FIEMAP, which this OS does not have".into())
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
mod fiemap {
    //! `ioctl(FS_IOC_FIEMAP)` (linux/fiemap.h), read in batches.
    use super::ExtentMap;
    use std::os::fd::AsRawFd;

    /// `_IOWR('f', 11, struct fiemap)`.
    const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B;
    const FIEMAP_FLAG_SYNC: u32 = 0x1;
    const FIEMAP_EXTENT_LAST: u32 = 0x1;
    /// Extents asked for per call.
    const BATCH: usize = 512;
    /// Calls at most (512 × 20 000 extents: 10 million, a 640 GB file
    /// in 64 KB pieces).
    const MOST_CALLS: usize = 20_000;

    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct Extent {
        logical: u64,
        physical: u64,
        length: u64,
        reserved64: [u64; 2],
        flags: u32,
        reserved: [u32; 3],
    }

    #[repr(C)]
    struct Request {
        start: u64,
        length: u64,
        flags: u32,
        mapped_extents: u32,
        extent_count: u32,
        reserved: u32,
        extents: [Extent; BATCH],
    }

    /// The extent map of open file `f`.
    pub(super) fn map(f: &std::fs::File) -> std::io::Result<ExtentMap> {
        let mut out = ExtentMap::default();
        let mut last_end = None;
        walk(f, &mut |physical, length| {
            out.add(physical, length, &mut last_end)
        })?;
        Ok(out)
    }

    /// Calls `each(physical, length)` for every extent of open file `f`,
    /// in file order.
    pub(super) fn walk(f: &std::fs::File, each: &mut dyn FnMut(u64, u64)) -> std::io::Result<()> {
        let mut req = Box::new(Request {
            start: 0,
            length: u64::MAX,
            flags: FIEMAP_FLAG_SYNC,
            mapped_extents: 0,
            extent_count: BATCH as u32,
            reserved: 0,
            extents: [Extent::default(); BATCH],
        });
        for _ in 0..MOST_CALLS {
            req.length = u64::MAX - req.start;
            req.mapped_extents = 0;
            // SAFETY: FS_IOC_FIEMAP reads and fills a struct fiemap whose
            // extent array holds extent_count entries; ours is that
            // layout (repr(C)) and lives for the call.
            let r = unsafe {
                libc::ioctl(f.as_raw_fd(), FS_IOC_FIEMAP as _, &mut *req as *mut Request)
            };
            if r != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let n = (req.mapped_extents as usize).min(BATCH);
            if n == 0 {
                return Ok(());
            }
            for e in &req.extents[..n] {
                each(e.physical, e.length);
            }
            let e = req.extents[n - 1];
            if e.flags & FIEMAP_EXTENT_LAST != 0 {
                return Ok(());
            }
            req.start = e.logical.saturating_add(e.length);
            // Later batches need no second sync.
            req.flags = 0;
        }
        Ok(())
    }
}

/// Allocates `len` bytes of `file` from `offset` on without writing them
/// (Linux `fallocate`): the filesystem places exactly that piece now
/// instead of at write-back, where it would place the whole file at once.
/// Elsewhere `Unsupported`.
pub fn preallocate(file: &std::fs::File, offset: u64, len: u64) -> std::io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: fallocate on a descriptor we own, mode 0 (allocate).
        let r = unsafe { libc::fallocate(file.as_raw_fd(), 0, offset as _, len as _) };
        if r == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = (file, offset, len);
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "preallocating pieces of a file (fallocate) is used on Linux only",
        ))
    }
}

/// The share of the pages of the file at `path` that are in memory
/// (`mmap` and `mincore`, nothing read); `None` for an empty file.
pub fn resident_share(path: &Path) -> std::io::Result<Option<f64>> {
    resident_share_of(path, None)
}

/// The share of the pages of the file at `path` within `ranges`
/// (`(offset, length)` in bytes; all of it when `None`) that are in
/// memory; `None` when that is no page.
pub fn resident_share_of(
    path: &Path,
    ranges: Option<&[(u64, u64)]>,
) -> std::io::Result<Option<f64>> {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(path)?;
    let len = f.metadata()?.len() as usize;
    if len == 0 {
        return Ok(None);
    }
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
    let pages = len.div_ceil(page);
    // SAFETY: a fresh read-only shared mapping of our open file, unmapped
    // below; nothing reads through it.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        )
    };
    if addr == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    // Only the pages of each range are asked about: a sample of files in
    // a 4 GiB loop image is a few hundred of its million pages (the whole
    // image's mincore was a quarter of a small fs run's time here).
    let whole = [(0u64, len as u64)];
    let (mut asked, mut resident) = (0usize, 0usize);
    let mut vec = Vec::new();
    let mut r = Ok(());
    for &(off, l) in ranges.unwrap_or(&whole) {
        let first = (off as usize / page).min(pages);
        let end = (off.saturating_add(l) as usize).div_ceil(page).min(pages);
        if end <= first {
            continue;
        }
        vec.clear();
        vec.resize(end - first, 0u8);
        // SAFETY: pages first..end lie within the mapping of `len` bytes.
        let at = unsafe { addr.cast::<u8>().add(first * page) };
        r = in_memory(at.cast(), (end - first) * page, &mut vec);
        if r.is_err() {
            break;
        }
        asked += end - first;
        resident += vec.iter().filter(|&&b| b & 1 != 0).count();
    }
    // SAFETY: unmapping the mapping made above.
    unsafe { libc::munmap(addr, len) };
    r?;
    Ok((asked > 0).then(|| resident as f64 / asked as f64))
}

/// `mincore(2)`: one byte per page of the mapping at `addr` (`len`
/// bytes) into `vec` (a byte per page), bit 0 set where it is in memory.
#[cfg(not(target_os = "openbsd"))]
fn in_memory(addr: *mut libc::c_void, len: usize, vec: &mut [u8]) -> std::io::Result<()> {
    // SAFETY: mincore over the caller's mapping of `len` bytes fills one
    // byte per page into `vec`, which has a byte for each.
    if unsafe { libc::mincore(addr as _, len, vec.as_mut_ptr().cast()) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// OpenBSD removed `mincore(2)` in 6.5: unknown there.
#[cfg(target_os = "openbsd")]
fn in_memory(addr: *mut libc::c_void, len: usize, vec: &mut [u8]) -> std::io::Result<()> {
    let _ = (addr, len, vec);
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "OpenBSD removed mincore(2) in 6.5: which pages are in memory is unknown",
    ))
}

/// How much file data the page cache can hold here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheCapacity {
    /// Bytes.
    pub bytes: u64,
    /// Where the figure comes from: `MemTotal` (physical memory), or the
    /// memory cgroup's limit when this process is in one that is lower
    /// (the cache pages its processes read are charged to it).
    pub basis: String,
}

/// The page cache's capacity for this process: physical memory, or the
/// memory limit of its cgroup if that is lower.
pub fn cache_capacity() -> Option<CacheCapacity> {
    let ram = super::memory_bytes()?;
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if let Some(limit) = super::cgroups::cgroup_limits().and_then(|l| l.memory_bytes)
        && limit < ram
    {
        return Some(CacheCapacity {
            bytes: limit,
            basis: "memory cgroup limit".into(),
        });
    }
    Some(CacheCapacity {
        bytes: ram,
        basis: if cfg!(any(target_os = "linux", target_os = "android")) {
            "MemTotal".into()
        } else {
            "physical memory".into()
        },
    })
}

/// Filesystem types that hold their files in memory: writing to them
/// cannot push anything out of the page cache.
pub const MEMORY_FILESYSTEMS: [&str; 4] = ["tmpfs", "ramfs", "mfs", "devfs"];

/// The type of the filesystem `path` is on when that is one of
/// [`MEMORY_FILESYSTEMS`] (`tmpfs`), else `None` (or when not known).
pub fn memory_filesystem(path: &Path) -> Option<String> {
    super::mount_of(path)
        .map(|m| m.fs_type)
        .filter(|t| MEMORY_FILESYSTEMS.contains(&t.as_str()))
}

/// Whether the running kernel can mount filesystems of `kind`: listed in
/// /proc/filesystems, or a module of that name built in or under
/// /lib/modules/RELEASE (mount loads it). `None` where the OS does not
/// say (not Linux).
pub fn kernel_has_fs(kind: &str) -> Option<bool> {
    kernel_has_fs_in(kind, Path::new("/proc/filesystems"), &modules_dir()?)
}

/// This kernel's module directory, `/lib/modules/RELEASE` (Linux).
fn modules_dir() -> Option<std::path::PathBuf> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").ok()?;
    Some(Path::new("/lib/modules").join(release.trim()))
}

/// [`kernel_has_fs`] over a /proc/filesystems file and a module directory.
fn kernel_has_fs_in(kind: &str, filesystems: &Path, modules: &Path) -> Option<bool> {
    let listed = std::fs::read_to_string(filesystems).ok()?;
    if listed
        .lines()
        .any(|l| l.split_whitespace().last() == Some(kind))
    {
        return Some(true);
    }
    let module = |name: &str| {
        let p = Path::new(name);
        p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
            n.split('.').next() == Some(kind) && p.parent().is_some_and(|d| d.ends_with(kind))
        })
    };
    // ext2 and ext3 are served by ext4's module: the kernel asks for
    // `fs-KIND`, which modules.alias maps.
    let alias = format!("alias fs-{kind} ");
    if std::fs::read_to_string(modules.join("modules.alias"))
        .is_ok_and(|a| a.lines().any(|l| l.starts_with(&alias)))
    {
        return Some(true);
    }
    for list in ["modules.builtin", "modules.dep"] {
        if let Ok(text) = std::fs::read_to_string(modules.join(list))
            && text
                .lines()
                .any(|l| module(l.split(':').next().unwrap_or("")))
        {
            return Some(true);
        }
    }
    Some(false)
}

/// Checks options for `mkfs.KIND` with the program's own dry run, on a
/// sparse scratch image of `size` bytes in a new directory under `scratch`
/// (removed): `mkfs.ext2/3/4 -n`, `mkfs.xfs -N`. `Ok(false)` when the kind
/// has no dry run (btrfs, jfs: its options are checked when it is made);
/// `Err` holds mkfs's complaint.
pub fn check_mkfs_options(
    kind: &str,
    options: &[String],
    size: u64,
    scratch: &Path,
) -> Result<bool, String> {
    let dry = match kind {
        "ext2" | "ext3" | "ext4" => ["-n", "-F"],
        "xfs" => ["-N", "-f"],
        _ => return Ok(false),
    };
    let dir = tempfile::Builder::new()
        .prefix("scalebench-mkfs-")
        .tempdir_in(scratch)
        .map_err(|e| format!("{}: {e}", scratch.display()))?;
    let image = dir.path().join("check.img");
    std::fs::File::create(&image)
        .and_then(|f| f.set_len(size))
        .map_err(|e| format!("{}: {e}", image.display()))?;
    let program = format!("mkfs.{kind}");
    let out = std::process::Command::new(&program)
        .args(dry)
        .args(options)
        .arg(&image)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    if out.status.success() {
        return Ok(true);
    }
    let text = String::from_utf8_lossy(&out.stderr);
    let text = if text.trim().is_empty() {
        String::from_utf8_lossy(&out.stdout)
    } else {
        text
    };
    // The complaint, without the usage text some print after it.
    let said: Vec<&str> = text
        .lines()
        .map(str::trim)
        .take_while(|l| !l.to_ascii_lowercase().starts_with("usage:"))
        .filter(|l| !l.is_empty())
        .collect();
    Err(format!(
        "{program} {} refused them ({}): {}",
        options.join(" "),
        out.status,
        said.iter().take(6).copied().collect::<Vec<_>>().join(" / ")
    ))
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_filesystem_is_known_by_proc_filesystems_or_by_its_module() {
        let d = tempfile::tempdir().unwrap();
        let fss = d.path().join("filesystems");
        std::fs::write(&fss, "nodev\tsysfs\n\text4\nnodev\ttmpfs\n").unwrap();
        let m = d.path().join("modules");
        std::fs::create_dir(&m).unwrap();
        std::fs::write(
            m.join("modules.dep"),
            "kernel/fs/xfs/xfs.ko.xz: kernel/lib/libcrc32c.ko.xz\nkernel/fs/jfs_extra/other.ko:\n",
        )
        .unwrap();
        std::fs::write(m.join("modules.builtin"), "kernel/fs/btrfs/btrfs.ko\n").unwrap();
        std::fs::write(
            m.join("modules.alias"),
            "alias fs-ext3 ext4\nalias fs-ext2 ext4\n",
        )
        .unwrap();
        let has = |k: &str| kernel_has_fs_in(k, &fss, &m);
        assert_eq!(has("ext4"), Some(true), "listed");
        assert_eq!(has("tmpfs"), Some(true), "listed, nodev");
        assert_eq!(has("xfs"), Some(true), "a module");
        assert_eq!(has("btrfs"), Some(true), "built in");
        assert_eq!(has("ext3"), Some(true), "ext4's module serves it");
        assert_eq!(has("jfs"), Some(false), "not listed, no jfs/jfs.ko");
        assert_eq!(has("ext"), Some(false), "names are whole");
        assert_eq!(kernel_has_fs_in("ext4", &d.path().join("none"), &m), None);
    }
    use super::*;

    #[test]
    fn fragments_count_the_breaks_on_disk_not_the_extents() {
        let mut m = ExtentMap::default();
        let mut end = None;
        // Two extents that follow each other on disk: one fragment.
        m.add(1000, 100, &mut end);
        m.add(1100, 50, &mut end);
        assert_eq!((m.extents, m.fragments, m.mapped_bytes), (2, 1, 150));
        // A jump, then data right after it: two fragments.
        m.add(5000, 10, &mut end);
        m.add(5010, 10, &mut end);
        assert_eq!((m.extents, m.fragments), (4, 2));
        // Back to before: a seek again.
        m.add(1150, 10, &mut end);
        assert_eq!(m.fragments, 3);
    }

    #[test]
    fn a_written_file_has_a_map_where_the_filesystem_keeps_one() {
        use std::io::Write;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let mut f = std::fs::File::create(&p).unwrap();
        f.write_all(&vec![7u8; 256 << 10]).unwrap();
        f.sync_all().unwrap();
        let fs = super::super::mount_of(d.path()).map(|m| m.fs_type);
        match extent_map(&p) {
            Ok(m) => {
                assert!(m.extents >= 1 && m.fragments >= 1, "{m:?}");
                assert!(m.fragments <= m.extents, "{m:?}");
                assert!(m.mapped_bytes >= 256 << 10, "{m:?}");
            }
            Err(e) => {
                assert!(e.starts_with("unknown: "), "{e}");
                // Only where no map is kept, or no FIEMAP exists.
                assert!(
                    !cfg!(target_os = "linux")
                        || fs
                            .as_deref()
                            .is_some_and(|t| MEMORY_FILESYSTEMS.contains(&t)),
                    "{fs:?}: {e}"
                );
            }
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn tmpfs_has_no_extent_map_and_says_so() {
        let Ok(d) = tempfile::tempdir_in("/dev/shm") else {
            panic!("/dev/shm is where Linux keeps a tmpfs: it is missing");
        };
        let p = d.path().join("f");
        std::fs::write(&p, b"x").unwrap();
        let e = extent_map(&p).unwrap_err();
        assert!(e.starts_with("unknown: tmpfs keeps no extent map"), "{e}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn pieces_preallocated_in_turns_are_mapped() {
        let d = tempfile::tempdir().unwrap();
        let f = std::fs::File::create(d.path().join("p")).unwrap();
        preallocate(&f, 0, 64 << 10).unwrap();
        preallocate(&f, 64 << 10, 64 << 10).unwrap();
        assert_eq!(f.metadata().unwrap().len(), 128 << 10);
    }

    #[test]
    fn a_file_just_written_is_in_memory_and_an_empty_one_has_no_share() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r");
        std::fs::write(&p, vec![1u8; 64 << 10]).unwrap();
        let s = resident_share(&p).unwrap().unwrap();
        assert!((0.0..=1.0).contains(&s), "{s}");
        let e = d.path().join("e");
        std::fs::write(&e, b"").unwrap();
        assert_eq!(resident_share(&e).unwrap(), None);
        // Ranges: a share of the pages asked for; none past the end.
        let part = resident_share_of(&p, Some(&[(0, 4096), (8192, 100)])).unwrap();
        assert!(part.is_some_and(|s| (0.0..=1.0).contains(&s)), "{part:?}");
        assert_eq!(
            resident_share_of(&p, Some(&[(1 << 30, 4096)])).unwrap(),
            None
        );
    }

    /// The shares of ranges, each asked of mincore alone, are those a
    /// mincore of the whole file gives for the same pages, with some of
    /// its pages dropped from memory where the filesystem lets them go.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_ranges_share_is_the_whole_files_mincore_of_its_pages() {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::FileExt;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r");
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64;
        std::fs::write(&p, vec![7u8; 32 * page as usize]).unwrap();
        let f = std::fs::File::open(&p).unwrap();
        f.sync_all().unwrap();
        // SAFETY: advice on our open file; no memory is touched.
        unsafe {
            libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
            libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_RANDOM);
        }
        for n in [3u64, 4, 17, 30] {
            f.read_exact_at(&mut [0u8; 1], n * page).unwrap();
        }
        let whole = {
            let len = 32 * page as usize;
            // SAFETY: a read-only mapping of our file, unmapped below.
            let addr = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ,
                    libc::MAP_SHARED,
                    f.as_raw_fd(),
                    0,
                )
            };
            assert_ne!(addr, libc::MAP_FAILED);
            let mut v = vec![0u8; 32];
            in_memory(addr, len, &mut v).unwrap();
            // SAFETY: the mapping made above.
            unsafe { libc::munmap(addr, len) };
            v
        };
        let ranges = [
            (3 * page, 2 * page),
            (10 * page, 100),
            (16 * page, 15 * page),
        ];
        let pages = [3..5, 10..11, 16..31];
        let want: usize = pages
            .iter()
            .map(|r| whole[r.clone()].iter().filter(|&&b| b & 1 != 0).count())
            .sum();
        let asked: usize = pages.iter().map(|r| r.len()).sum();
        let got = resident_share_of(&p, Some(&ranges)).unwrap().unwrap();
        assert_eq!(got, want as f64 / asked as f64, "{whole:?}");
        // A range past the end adds nothing; one over the end is cut.
        let got = resident_share_of(&p, Some(&[(30 * page, 10 * page), (1 << 30, 1)]));
        let tail = whole[30..32].iter().filter(|&&b| b & 1 != 0).count();
        assert_eq!(got.unwrap(), Some(tail as f64 / 2.0));
    }

    #[test]
    fn the_cache_capacity_is_at_most_memory() {
        let c = cache_capacity().expect("memory is known here");
        assert!(c.bytes > 0 && c.bytes <= super::super::memory_bytes().unwrap());
        assert!(!c.basis.is_empty());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn mkfs_options_are_checked_by_the_program_itself() {
        let d = tempfile::tempdir().unwrap();
        let have = |p: &str| {
            ["/sbin", "/usr/sbin", "/usr/bin", "/bin"]
                .iter()
                .any(|d| Path::new(d).join(p).is_file())
        };
        assert!(
            have("mkfs.ext4"),
            "mkfs.ext4 is missing: scripts/test installs e2fsprogs"
        );
        let ok = check_mkfs_options(
            "ext4",
            &["-O".into(), "^has_journal".into()],
            64 << 20,
            d.path(),
        );
        assert_eq!(ok, Ok(true));
        let e = check_mkfs_options("ext4", &["-O".into(), "^bogus".into()], 64 << 20, d.path())
            .unwrap_err();
        assert!(e.starts_with("mkfs.ext4 -O ^bogus refused them"), "{e}");
        assert!(e.contains("bogus"), "{e}");
        assert_eq!(
            check_mkfs_options("btrfs", &[], 64 << 20, d.path()),
            Ok(false)
        );
        // The scratch image is gone.
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }
}
