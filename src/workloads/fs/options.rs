//! The filesystem workloads' options (`fs`, `fs-sizes`): their flags,
//! defaults and checks.

use super::cold::ColdBy;
use super::target::{Place, parse_mkfs};
use crate::ctx::Ctx;
use crate::values::bytes as parse_bytes;
use crate::workloads::FlagError;
use crate::workloads::{Asked, Mounting, Own, WorkloadFlag};
use std::path::PathBuf;

/// Options of the filesystem workloads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsOptions {
    /// Where to run: directories and filesystems to make, in order; empty
    /// means the run's work directory.
    pub places: Vec<Place>,
    /// Size of each loop-device filesystem.
    pub fs_size: Option<u64>,
    /// Mount options for made filesystems that name none of their own.
    pub mount_opts: Option<String>,
    /// Files in the site (default: quick 20 000, full 1 000 000).
    pub files: Option<u64>,
    /// Bytes in the site (default: quick 200 MB, full 10 GB).
    pub bytes: Option<u64>,
    /// Requests in the log (default 10 000, the seeds' count).
    pub requests: Option<u64>,
    /// Generator seed (default 1).
    pub seed: u64,
    /// File sizes of `fs-sizes` (default 8 KB, 16 KB, 128 KB).
    pub sizes: Vec<u64>,
    /// Files per size in `fs-sizes` (default: quick 2 000, full 10 000).
    pub size_files: Option<u64>,
    /// `fs`: walk the site's directories (as `find` does) before each
    /// cold replay, timed as a phase of its own.
    pub preload: bool,
    /// How the cold rows make the caches cold.
    pub cold: ColdBy,
    /// How the replays' server answers.
    pub(crate) path: crate::workloads::server_path::ServerPath,
}

impl Default for FsOptions {
    fn default() -> FsOptions {
        FsOptions {
            places: Vec::new(),
            fs_size: None,
            mount_opts: None,
            files: None,
            bytes: None,
            requests: None,
            seed: 1,
            sizes: Vec::new(),
            size_files: None,
            preload: false,
            cold: ColdBy::Auto,
            path: Default::default(),
        }
    }
}

const HEADING: &str = "Filesystem workloads";

/// `--dir`: the places the filesystem workloads run in.
const DIR: WorkloadFlag = WorkloadFlag {
    many: true,
    ..WorkloadFlag::value(
        "dir",
        "DIR",
        HEADING,
        "Filesystem workloads (fs, fs-sizes): run in this directory, on whatever filesystem holds it (scalebench works in a subdirectory it makes and removes); repeatable. Default: the work directory.",
    )
};

/// `--mkfs`: filesystems made on loop devices.
const MKFS: WorkloadFlag = WorkloadFlag {
    many: true,
    ..WorkloadFlag::value(
        "mkfs",
        "TYPE[:OPTS],…",
        HEADING,
        "Make these filesystems on loop devices over files in the work directory and run on each (Linux, root): ext2, ext3, ext4, xfs, btrfs, jfs, reiserfs (`ext4,xfs,btrfs`); after a colon mount options (`ext4:noatime,data=writeback`) or mkfs options, which start with `-` and are split at spaces into arguments (`ext4:-O ^has_journal`, `xfs:-i size=512:noatime`); mkfs checks them with its dry run before anything is measured.",
    )
};

/// `--fs-size`: the size of each made filesystem.
const FS_SIZE: WorkloadFlag = WorkloadFlag {
    check: Some(|s| parse_bytes(s).map(drop)),
    // Of made filesystems only: alone it would change nothing.
    requires: &["mkfs"],
    ..WorkloadFlag::value(
        "fs-size",
        "SIZE",
        HEADING,
        "Size of each made filesystem (`4G`; with --mkfs).",
    )
};

/// `--mount-opts`: mount options of made filesystems.
const MOUNT_OPTS: WorkloadFlag = WorkloadFlag {
    requires: &["mkfs"],
    ..WorkloadFlag::value(
        "mount-opts",
        "OPTS",
        HEADING,
        "Mount options for made filesystems that name none (`noatime`; with --mkfs).",
    )
};

/// `--files`: the image site's files (fs).
const FILES: WorkloadFlag = WorkloadFlag {
    check: Some(|s| files(s).map(drop)),
    ..WorkloadFlag::value(
        "files",
        "N",
        HEADING,
        "Files in the image site (default: 20 000; `full`: 1 000 000; at most 100 million).",
    )
};

/// `--bytes`: the image site's bytes (fs).
const BYTES: WorkloadFlag = WorkloadFlag {
    check: Some(|s| parse_bytes(s).map(drop)),
    ..WorkloadFlag::value(
        "bytes",
        "SIZE",
        HEADING,
        "Bytes in the image site (`200M`; `full`: `10G`).",
    )
};

/// `--requests`: the image site's log length (fs).
const REQUESTS: WorkloadFlag = WorkloadFlag {
    check: Some(|s| requests(s).map(drop)),
    ..WorkloadFlag::value(
        "requests",
        "N",
        HEADING,
        "Requests in the image site's log (default 10 000; at most 100 million).",
    )
};

/// `--seed`: the image site generator's seed (fs).
const SEED: WorkloadFlag = WorkloadFlag {
    check: Some(|s| seed(s).map(drop)),
    ..WorkloadFlag::value(
        "seed",
        "SEED",
        HEADING,
        "Seed of the image site generator (same seed, same site; default 1).",
    )
};

/// `--sizes`: the file sizes of fs-sizes.
const SIZES: WorkloadFlag = WorkloadFlag {
    many: true,
    split: true,
    check: Some(|s| file_size(s).map(drop)),
    ..WorkloadFlag::value(
        "sizes",
        "SIZE,…",
        HEADING,
        "File sizes of fs-sizes (default `8K,16K,128K`).",
    )
};

/// `--fs-preload`: a directory walk before each cold replay (fs).
const FS_PRELOAD: WorkloadFlag = WorkloadFlag::switch(
    "fs-preload",
    HEADING,
    "fs: before each cold replay, walk the site's directories as `find` does (the entries, not the files' data), timed as a row of its own, as the seed tried.",
);

/// `--fs-cold`: how cold rows make the caches cold.
const FS_COLD: WorkloadFlag = WorkloadFlag {
    choices: &[
        (
            "auto",
            "drop the caches where permitted (root on Linux), else evict them (default)",
        ),
        (
            "drop",
            "drop the caches; where that is not permitted the cold rows are not run",
        ),
        (
            "evict",
            "evict them: write and read a file as large as the memory the cache can hold (MemTotal, or the memory cgroup's limit) in the work directory, as the seed's 2 GB from /dev/zero",
        ),
    ],
    ..WorkloadFlag::value(
        "fs-cold",
        "HOW",
        HEADING,
        "fs, fs-sizes: how the cold rows make the caches cold.",
    )
};

/// `--size-files`: files per size (fs-sizes).
const SIZE_FILES: WorkloadFlag = WorkloadFlag {
    check: Some(|s| size_files(s).map(drop)),
    ..WorkloadFlag::value(
        "size-files",
        "N",
        HEADING,
        "Files per size in fs-sizes (default 2 000; `full`: 10 000; at most 10 million).",
    )
};

/// The flags of `fs`: the places, and the image site's sizes and server.
pub static FS_FLAGS: &[WorkloadFlag] = &[
    DIR,
    MKFS,
    FS_SIZE,
    MOUNT_OPTS,
    FILES,
    BYTES,
    REQUESTS,
    SEED,
    FS_PRELOAD,
    FS_COLD,
    crate::workloads::server_path::FILES_FLAG,
    crate::workloads::server_path::LOOP_FLAG,
];

/// The flags of `fs-sizes`: the places, and its sizes (it serves nothing
/// and makes no image site, so the site's flags are not its own).
pub static SIZES_FLAGS: &[WorkloadFlag] =
    &[DIR, MKFS, FS_SIZE, MOUNT_OPTS, FS_COLD, SIZES, SIZE_FILES];

/// One file size of `fs-sizes`: at most 1G.
fn file_size(s: &str) -> Result<u64, String> {
    match parse_bytes(s)? {
        b if b > 1 << 30 => Err(format!("`{s}` is over the 1G a file of fs-sizes may have")),
        b => Ok(b),
    }
}

/// Whether a program is on the PATH (or in the sbin directories root has).
fn have_program(name: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/sbin", "/usr/sbin", "/usr/local/sbin"].map(PathBuf::from))
        .any(|d| d.join(name).is_file())
}

/// The filesystems of `--mkfs`, refused where they cannot be made here
/// (not Linux, not root, a program missing) or where mkfs refuses their
/// options (checked with its dry run on a scratch image of `fs_size`).
fn made_filesystems(
    given: &[String],
    fs_size: Option<u64>,
    here: bool,
) -> Result<Vec<Place>, FlagError> {
    let specs = parse_mkfs(given).map_err(|e| FlagError::of("mkfs", e))?;
    if specs.is_empty() {
        return Ok(Vec::new());
    }
    if !cfg!(target_os = "linux") {
        return Err(FlagError::of(
            "mkfs",
            "--mkfs: making filesystems on loop devices is implemented for Linux only; use --dir on a mounted filesystem",
        ));
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(FlagError::of(
            "mkfs",
            "--mkfs needs root (it runs losetup, mkfs and mount); use --dir on a mounted filesystem instead",
        ));
    }
    for s in &specs {
        let prog = format!("mkfs.{}", s.kind);
        if !have_program(&prog) {
            let pkg = match s.kind.as_str() {
                "xfs" => "xfsprogs",
                "btrfs" => "btrfs-progs",
                "jfs" => "jfsutils",
                "reiserfs" => "reiserfsprogs",
                _ => "e2fsprogs",
            };
            return Err(FlagError::of(
                "mkfs",
                format!(
                    "--mkfs {}: {prog} is not installed (Debian: apt-get install {pkg})",
                    s.kind
                ),
            )
            .failed());
        }
    }
    // The kernel that mounts them: this one's, unless the run's systems
    // are others (each checks its own).
    for s in specs.iter().filter(|_| here) {
        if crate::sys::storage::kernel_has_fs(&s.kind) == Some(false) {
            let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
            return Err(FlagError::of(
                "mkfs",
                format!(
                    "--mkfs {0}: this kernel ({1}) cannot mount {0}: not in /proc/filesystems, and no {0} module under /lib/modules/{1}",
                    s.kind,
                    release.trim()
                ),
            )
            .failed());
        }
    }
    for prog in ["losetup", "mount", "umount"] {
        if !have_program(prog) {
            return Err(FlagError::of(
                "mkfs",
                format!("--mkfs: {prog} is not installed (Debian: apt-get install mount)"),
            )
            .failed());
        }
    }
    // mkfs options are checked by mkfs's own dry run now, before anything
    // is measured (btrfs, jfs and reiserfs have none: theirs are checked
    // when each is made).
    let size = fs_size.unwrap_or(super::DEFAULT_FS_SIZE);
    for s in specs.iter().filter(|s| !s.mkfs.is_empty()) {
        crate::sys::storage::check_mkfs_options(&s.kind, &s.mkfs, size, &std::env::temp_dir())
            .map_err(|e| FlagError::of("mkfs", format!("--mkfs {}: {e}", s.label(""))).failed())?;
    }
    Ok(specs.into_iter().map(Place::Mkfs).collect())
}

impl FsOptions {
    /// The options from the flags given, checked before anything is
    /// measured.
    pub fn of(asked: &Asked) -> Result<FsOptions, FlagError> {
        let g = asked.given;
        let mut places = Vec::new();
        for d in g.values("dir") {
            let d = PathBuf::from(d);
            if !d.is_dir() {
                return Err(FlagError::of(
                    "dir",
                    format!("--dir {}: not a directory", d.display()),
                )
                .failed());
            }
            places.push(Place::Dir(d));
        }
        let fs_size = g.parsed("fs-size", parse_bytes)?;
        places.extend(made_filesystems(g.values("mkfs"), fs_size, asked.here)?);
        let files = g.parsed("files", files)?;
        let bytes = g.parsed("bytes", parse_bytes)?;
        if let (Some(b), Some(f)) = (bytes, files)
            && b / f > 1 << 30
        {
            return Err(FlagError::of(
                "bytes",
                format!(
                    "--bytes {b} over --files {f}: the site's files would average over 1G each"
                ),
            ));
        }
        Ok(FsOptions {
            places,
            fs_size,
            mount_opts: g
                .value("mount-opts")
                .filter(|o| !o.is_empty())
                .map(String::from),
            files,
            bytes,
            requests: g.parsed("requests", requests)?,
            seed: g.parsed("seed", seed)?.unwrap_or(1),
            sizes: g
                .values("sizes")
                .iter()
                .map(|s| file_size(s).map_err(|e| FlagError::of("sizes", format!("--sizes: {e}"))))
                .collect::<Result<_, _>>()?,
            size_files: g.parsed("size-files", size_files)?,
            preload: g.has("fs-preload"),
            cold: match g.value("fs-cold") {
                None | Some("auto") => ColdBy::Auto,
                Some("drop") => ColdBy::Drop,
                Some("evict") => ColdBy::Evict,
                Some(other) => {
                    return Err(FlagError::of(
                        "fs-cold",
                        format!("--fs-cold {other}: auto, drop or evict"),
                    ));
                }
            },
            // The replays' server runs beside scalebench, on this OS.
            path: crate::workloads::server_path::ServerPath::of(g, true)?,
        })
    }

    /// [`FsOptions::of`] as a workload's own options.
    pub fn own(asked: &Asked) -> Result<Option<Own>, FlagError> {
        Ok(Some(std::sync::Arc::new(FsOptions::of(asked)?)))
    }

    /// Where the workloads run: the places asked for, or the work
    /// directory.
    pub fn places(&self, ctx: &Ctx) -> Vec<Place> {
        if self.places.is_empty() {
            vec![Place::WorkDir(ctx.workdir().to_path_buf())]
        } else {
            self.places.clone()
        }
    }

    /// The directories of `--dir`.
    pub fn dirs(&self) -> Vec<PathBuf> {
        self.places
            .iter()
            .filter_map(|p| match p {
                Place::Dir(d) => Some(d.clone()),
                _ => None,
            })
            .collect()
    }

    /// The existing directories the workloads run in: `--dir`'s, or the
    /// work directory `workdir` when no place was given.
    pub fn existing(&self, workdir: &std::path::Path) -> Vec<PathBuf> {
        if self.places.is_empty() {
            return vec![workdir.to_path_buf()];
        }
        self.dirs()
    }

    /// Whether filesystems are made, with whose mount options.
    pub fn mounting(&self) -> Mounting {
        if !self.places.iter().any(|p| matches!(p, Place::Mkfs(_))) {
            Mounting::None
        } else if self.mount_opts.is_some() {
            Mounting::OwnOptions
        } else {
            Mounting::ProfileOptions
        }
    }
}

/// `--files`, as both its check and its reading parse it.
fn files(s: &str) -> Result<u64, String> {
    crate::values::whole::<u64>(2, 100_000_000)(s)
}

/// `--requests`, as both its check and its reading parse it.
fn requests(s: &str) -> Result<u64, String> {
    crate::values::whole::<u64>(1, 100_000_000)(s)
}

/// `--seed`, as both its check and its reading parse it.
fn seed(s: &str) -> Result<u64, String> {
    crate::values::whole::<u64>(0, u64::MAX)(s)
}

/// `--size-files`, as both its check and its reading parse it.
fn size_files(s: &str) -> Result<u64, String> {
    crate::values::whole::<u64>(1, 10_000_000)(s)
}
