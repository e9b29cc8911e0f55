//! Where a filesystem workload runs: a directory on a mounted filesystem
//! (`--dir`), or a filesystem made for the run on a loop device over a file
//! in the work directory (`--mkfs`, root only), unmounted and detached on
//! every path out (errors, ^C, panics) by the guard's `Drop`.

use crate::sys;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A filesystem to make: its type, mkfs options and mount options.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FsSpec {
    /// `ext2`, `ext4`, `xfs`, `btrfs`, …
    pub kind: String,
    /// Options for `mkfs.KIND`, one argument each (`-O`, `^has_journal`).
    pub mkfs: Vec<String>,
    /// Mount options (`noatime`), or `None` for the defaults.
    pub options: Option<String>,
}

impl FsSpec {
    /// Its label in results: the type, then the mkfs options and the
    /// mount options as given (`ext4 -O ^has_journal noatime`).
    pub fn label(&self, mount_opts: &str) -> String {
        let mut l = self.kind.clone();
        for w in &self.mkfs {
            l.push(' ');
            l.push_str(w);
        }
        if !mount_opts.is_empty() {
            l.push(' ');
            l.push_str(mount_opts);
        }
        l
    }

    /// Whether its mkfs options set the inode count or ratio themselves
    /// (`-N`, `-i` of mke2fs): then scalebench adds none.
    fn sets_inodes(&self) -> bool {
        self.kind.starts_with("ext")
            && self
                .mkfs
                .iter()
                .any(|w| w.starts_with("-N") || w.starts_with("-i"))
    }
}

/// Filesystem types `--mkfs` knows; an item of the list that is not one of
/// these continues the previous item's options.
pub const FS_KINDS: [&str; 7] = ["ext2", "ext3", "ext4", "xfs", "btrfs", "jfs", "reiserfs"];

/// Parses `--mkfs` values. Each filesystem is `TYPE[:OPTS[:OPTS]]`, where
/// an `OPTS` starting with `-` is mkfs options (split into arguments at
/// white space, no shell: `-O ^has_journal`, `-i size=512`) and any other
/// is mount options (`noatime,data=writeback`). The list is comma
/// separated, and a piece that is not a filesystem type belongs to the
/// options before it: `ext4,xfs:-i size=512,ext4:-E stride=16,stripe_width=64:noatime`
/// is three filesystems.
pub fn parse_mkfs(values: &[String]) -> Result<Vec<FsSpec>, String> {
    let mut raw: Vec<(String, Option<String>)> = Vec::new();
    for v in values {
        let mut fresh = true;
        for piece in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (kind, opts) = match piece.split_once(':') {
                Some((k, o)) => (k, Some(o)),
                None => (piece, None),
            };
            if FS_KINDS.contains(&kind) {
                raw.push((kind.to_string(), opts.map(String::from)));
                fresh = false;
            } else if let (Some((_, Some(o))), false) = (raw.last_mut(), fresh) {
                o.push(',');
                o.push_str(piece);
            } else if !fresh {
                return Err(format!(
                    "--mkfs: `{piece}` is not a filesystem type ({}); options follow a type and a colon, as in ext4:noatime or ext4:-O ^has_journal",
                    FS_KINDS.join(", ")
                ));
            } else {
                return Err(format!(
                    "--mkfs: `{kind}` is not a filesystem type scalebench can make ({})",
                    FS_KINDS.join(", ")
                ));
            }
        }
    }
    raw.into_iter()
        .map(|(kind, opts)| spec(kind, opts.as_deref().unwrap_or("")))
        .collect()
}

/// One filesystem of `--mkfs`: `kind` with `opts` (what followed its
/// colon) split into mkfs options and mount options.
fn spec(kind: String, opts: &str) -> Result<FsSpec, String> {
    let mut s = FsSpec {
        kind,
        ..FsSpec::default()
    };
    for part in opts.split(':').map(str::trim).filter(|p| !p.is_empty()) {
        if part.starts_with('-') {
            if !s.mkfs.is_empty() {
                return Err(format!(
                    "--mkfs {}: two sets of mkfs options; give them in one (`{}:-O ^has_journal -b 4096`)",
                    s.kind, s.kind
                ));
            }
            s.mkfs = part.split_whitespace().map(String::from).collect();
        } else if s.options.is_some() {
            return Err(format!(
                "--mkfs {}: two sets of mount options (`{part}`); give them in one, comma separated",
                s.kind
            ));
        } else {
            s.options = Some(part.to_string());
        }
    }
    Ok(s)
}

/// Where to run, as the user asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A subdirectory made (and removed) under this directory.
    Dir(PathBuf),
    /// The same in the run's work directory (the default): labelled by
    /// its filesystem and mount point rather than by its temporary name.
    WorkDir(PathBuf),
    /// A filesystem made on a loop device.
    Mkfs(FsSpec),
}

/// A prepared place to run in.
pub struct Target {
    /// Its label in results and reports (`ext4`, `ext4 noatime`, `tmpfs /tmp`).
    pub label: String,
    /// The empty directory to work in.
    pub root: PathBuf,
    /// What the result records about it.
    pub info: serde_json::Value,
    /// The image file under a loop device's filesystem: its pages in the
    /// page cache are data read from memory below the filesystem.
    pub image: Option<PathBuf>,
    _guard: Guard,
}

#[allow(dead_code)] // the guards are held for their Drop
enum Guard {
    Dir(tempfile::TempDir),
    Loop(LoopDisk),
}

/// A loop device with a filesystem, mounted: unmounted, detached and its
/// image removed when dropped.
struct LoopDisk {
    image: PathBuf,
    dev: Option<String>,
    mnt: PathBuf,
    mounted: bool,
}

impl Drop for LoopDisk {
    fn drop(&mut self) {
        if self.mounted {
            // A server that has just exited may still hold a file open for
            // a moment: retry for a few seconds.
            let mut ok = false;
            for _ in 0..25 {
                if sys::unmount_fs(&self.mnt).is_ok() {
                    ok = true;
                    break;
                }
                std::thread::sleep(Duration::from_millis(200));
            }
            if !ok {
                sys::say!(
                    "scalebench: could not unmount {}; run `umount {}` and `losetup -d {}`",
                    self.mnt.display(),
                    self.mnt.display(),
                    self.dev.as_deref().unwrap_or("?")
                );
                return;
            }
        }
        if let Some(dev) = &self.dev
            && let Err(e) = sys::disk_detach(dev)
        {
            sys::say!("scalebench: could not detach {dev}: {e}");
        }
        let _ = std::fs::remove_dir(&self.mnt);
        let _ = std::fs::remove_file(&self.image);
    }
}

/// What a corpus takes on the filesystem it is written to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Need {
    /// Bytes, with room for block rounding and metadata.
    pub bytes: u64,
    /// Inodes: the files, their directories and a margin.
    pub inodes: u64,
    /// The options that make the workload smaller, for a message that it
    /// does not fit (`--files/--bytes`; fs-sizes: `--size-files`).
    pub smaller: &'static str,
    /// The options that make it fewer files (`--files`).
    pub fewer: &'static str,
}

/// What a corpus of `files` files and `bytes` bytes takes on disk: room for
/// block rounding and metadata (4 KiB blocks, an inode and a directory
/// entry per file), and an inode per file plus one per 16 files for the
/// directories (the corpora here hold 40 or more files per directory).
pub fn disk_need(files: u64, bytes: u64) -> Need {
    Need {
        bytes: bytes
            .saturating_add(files.saturating_mul(4096 + 512))
            .saturating_add(64 << 20),
        inodes: files.saturating_add(files / 16).saturating_add(1024),
        smaller: "--files/--bytes",
        fewer: "--files",
    }
}

/// The inodes `mkfs` of `kind` makes on `fs_size` bytes by default, where
/// the count is fixed when the filesystem is made (ext2/3/4: one per 16 KiB,
/// one per 4 KiB below 512 MiB, as mke2fs.conf ships); `None` where inodes
/// are allocated as files are made (xfs, btrfs).
fn default_inodes(kind: &str, fs_size: u64) -> Option<u64> {
    match kind {
        "ext2" | "ext3" | "ext4" => {
            let ratio = if fs_size >= 512 << 20 { 16384 } else { 4096 };
            Some(fs_size / ratio)
        }
        _ => None,
    }
}

/// The `mkfs` arguments that give a filesystem of `kind` and `fs_size`
/// bytes room for `inodes` inodes: none when the default has room.
pub fn inode_args(kind: &str, fs_size: u64, inodes: u64) -> Vec<String> {
    match default_inodes(kind, fs_size) {
        Some(d) if d < inodes => vec!["-N".into(), inodes.to_string()],
        _ => Vec::new(),
    }
}

fn thousands(n: u64) -> String {
    crate::units::fmt_n(n as f64)
}

/// Bytes in words for a message (`128 MiB`, `2.00 GiB`), as every
/// workload writes them.
pub(super) fn human(b: u64) -> String {
    crate::units::fmt_bytes(b)
}

fn describe(path: &Path) -> serde_json::Value {
    let m = sys::mount_of(path).unwrap_or_default();
    let mut info = json!({
        "fs_type": m.fs_type,
        "mount_point": m.mount_point,
        "device": m.device,
        "mount_options": m.options,
        "free_bytes": sys::free_bytes(path),
    });
    // The block device under it, as the system record's filesystems have
    // it: for a filesystem `--mkfs` made, its loop device and the image
    // behind it.
    if let Ok(b) = sys::hardware::block_device(&m.device) {
        info["block"] = json!(b);
    }
    info
}

/// Makes `place` ready for a workload that needs `need` (see
/// [`disk_need`]); `index` keeps loop images of one run apart. Refuses
/// clearly when the space or the inodes are not there; a filesystem it
/// makes gets the inodes the corpus needs (`mkfs_args` in its info).
pub fn prepare(
    place: &Place,
    workdir: &Path,
    index: usize,
    fs_size: u64,
    default_opts: Option<&str>,
    need: Need,
) -> Result<Target, String> {
    match place {
        Place::Dir(dir) | Place::WorkDir(dir) => in_dir(place, dir, need),
        Place::Mkfs(spec) => on_loop(spec, workdir, index, fs_size, default_opts, need),
    }
}

/// A new directory under `dir` (the `place` asked for), once `dir` has the
/// room and the inodes `need` asks for; labelled by its filesystem and,
/// for the work directory, its mount point.
fn in_dir(place: &Place, dir: &Path, need: Need) -> Result<Target, String> {
    dir_has_room(dir, need)?;
    let t = tempfile::Builder::new()
        .prefix("scalebench-fs-")
        .tempdir_in(dir)
        .map_err(|e| {
            format!(
                "--dir {}: cannot make a directory in it: {e}",
                dir.display()
            )
        })?;
    let mut info = describe(t.path());
    info["path"] = json!(dir.display().to_string());
    info["made"] = json!(false);
    let fs_type = info["fs_type"].as_str().unwrap_or("?").to_string();
    let label = match place {
        Place::WorkDir(_) => {
            format!("{fs_type} {}", info["mount_point"].as_str().unwrap_or("?"))
        }
        _ => format!("{fs_type} {}", dir.display()),
    };
    Ok(Target {
        label,
        root: t.path().to_path_buf(),
        info,
        image: None,
        _guard: Guard::Dir(t),
    })
}

/// The room a corpus has at `place`: free bytes and free inodes (`None`:
/// not known, or made to measure as on a filesystem `--mkfs` makes). A
/// loop image takes its blocks from the work directory `workdir` as they
/// are written, within `fs_size` when given (less a fifth for the
/// filesystem's own).
pub fn room(place: &Place, workdir: &Path, fs_size: Option<u64>) -> Room {
    match place {
        Place::Dir(d) | Place::WorkDir(d) => Room {
            bytes: sys::free_bytes(d),
            inodes: sys::free_inodes(d),
        },
        Place::Mkfs(_) => {
            let free = sys::free_bytes(workdir);
            let within = fs_size.map(|s| s / 5 * 4);
            let bytes = match (free, within) {
                (Some(f), Some(w)) => Some(f.min(w)),
                (f, w) => f.or(w),
            };
            Room {
                bytes,
                inodes: None,
            }
        }
    }
}

/// What a place has free for a corpus ([`room`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Room {
    /// Free bytes, where known.
    pub bytes: Option<u64>,
    /// Free inodes, where known and limited.
    pub inodes: Option<u64>,
}

/// Whether `dir` has the free bytes and inodes `need` asks for; if not,
/// the error says which and what to do.
fn dir_has_room(dir: &Path, need: Need) -> Result<(), String> {
    let free = sys::free_bytes(dir).ok_or_else(|| {
        format!(
            "--dir {}: not a directory scalebench can use",
            dir.display()
        )
    })?;
    if free < need.bytes {
        return Err(format!(
            "--dir {}: {} free, the workload needs about {}; use fewer {} or another directory",
            dir.display(),
            human(free),
            human(need.bytes),
            need.smaller
        ));
    }
    if let Some(inodes) = sys::free_inodes(dir)
        && inodes < need.inodes
    {
        return Err(format!(
            "--dir {}: {} inodes free, the workload makes about {} files and directories; use fewer {} or another directory",
            dir.display(),
            thousands(inodes),
            thousands(need.inodes),
            need.fewer
        ));
    }
    Ok(())
}

/// A filesystem made as `spec` asks on a loop device over an image of
/// `fs_size` bytes in `workdir`, mounted with its options (or
/// `default_opts`), once the size and the work directory's room suffice
/// for `need`; refused if mkfs made too few inodes.
fn on_loop(
    spec: &FsSpec,
    workdir: &Path,
    index: usize,
    fs_size: u64,
    default_opts: Option<&str>,
    need: Need,
) -> Result<Target, String> {
    loop_has_room(workdir, fs_size, need)?;
    let mkfs_args = if spec.sets_inodes() {
        Vec::new()
    } else {
        inode_args(&spec.kind, fs_size, need.inodes)
    };
    let requested = spec.options.as_deref().or(default_opts).unwrap_or("");
    let all: Vec<String> = spec.mkfs.iter().chain(&mkfs_args).cloned().collect();
    // A profile's options (the spec names none of its own) that this
    // filesystem refuses are left out by name; the spec's own must mount.
    let profiles = spec.options.is_none() && !requested.is_empty();
    let (disk, mounted, refused) =
        LoopDisk::make(spec, workdir, index, fs_size, &all, requested, profiles)?;
    let opts = mounted.as_str();
    if let Some(inodes) = sys::free_inodes(&disk.mnt)
        && inodes < need.inodes
    {
        return Err(format!(
            "--fs-size {}: mkfs.{} made room for {} files and directories, the workload makes about {}; raise --fs-size or use fewer {}",
            human(fs_size),
            spec.kind,
            thousands(inodes),
            thousands(need.inodes),
            need.fewer
        ));
    }
    let root = disk.mnt.join("scalebench-fs");
    std::fs::create_dir(&root).map_err(|e| format!("{}: {e}", root.display()))?;
    let mut info = describe(&root);
    info["made"] = json!(true);
    info["fs_size"] = json!(fs_size);
    info["mkfs"] = json!(spec.kind);
    info["mkfs_args"] = json!(mkfs_args);
    info["mkfs_options"] = json!(spec.mkfs);
    info["requested_mount_options"] = json!(requested);
    if !refused.is_empty() {
        info["refused_mount_options"] = refused
            .iter()
            .map(|(o, why)| json!({ "option": o, "reason": why }))
            .collect();
    }
    let label = spec.label(opts);
    Ok(Target {
        label,
        root,
        info,
        image: Some(disk.image.clone()),
        _guard: Guard::Loop(disk),
    })
}

/// Whether a filesystem of `fs_size` bytes holds `need` with the
/// filesystem's overhead, and `workdir` has the room for its (sparse)
/// image to fill up to `need`.
fn loop_has_room(workdir: &Path, fs_size: u64, need: Need) -> Result<(), String> {
    let with_overhead = need.bytes.saturating_add(need.bytes / 4);
    if fs_size < with_overhead {
        return Err(format!(
            "--fs-size {}: too small for the corpus (about {} with filesystem overhead); raise it or use fewer {}",
            human(fs_size),
            human(with_overhead),
            need.smaller
        ));
    }
    // The image is sparse: blocks are taken as the workload writes.
    let free = sys::free_bytes(workdir).unwrap_or(0);
    if free < need.bytes {
        return Err(format!(
            "{}: {} free for the loop image, the workload needs about {}",
            workdir.display(),
            human(free),
            human(need.bytes)
        ));
    }
    Ok(())
}

impl LoopDisk {
    /// A new image of `fs_size` bytes in `workdir` (`index` and the kind
    /// name it), attached to a loop device, made a filesystem of `spec`'s
    /// kind with `mkfs_args` and mounted with `opts` on a new directory
    /// beside it. What was made so far is undone when a step fails. With
    /// `leave_out`, options the filesystem will not mount with are each
    /// found and left out: the disk, the options it was mounted with, and
    /// those left out, each with the mount's words.
    #[allow(clippy::too_many_arguments)]
    fn make(
        spec: &FsSpec,
        workdir: &Path,
        index: usize,
        fs_size: u64,
        mkfs_args: &[String],
        opts: &str,
        leave_out: bool,
    ) -> Result<(LoopDisk, String, Refused), String> {
        let image = workdir.join(format!("fs-{index}-{}.img", spec.kind));
        let mnt = workdir.join(format!("mnt-{index}-{}", spec.kind));
        // Both new: nothing that was there before is ever truncated or
        // removed by the guard.
        std::fs::create_dir(&mnt).map_err(|e| format!("{}: {e}", mnt.display()))?;
        let f = std::fs::File::create_new(&image).map_err(|e| {
            let _ = std::fs::remove_dir(&mnt);
            format!("{}: {e}", image.display())
        })?;
        let mut disk = LoopDisk {
            image: image.clone(),
            dev: None,
            mnt: mnt.clone(),
            mounted: false,
        };
        f.set_len(fs_size)
            .map_err(|e| format!("{}: {e}", image.display()))?;
        drop(f);
        let dev = sys::disk_attach(&image).map_err(|e| format!("loop device: {e}"))?;
        disk.dev = Some(dev.clone());
        sys::make_fs(&spec.kind, &dev, mkfs_args).map_err(|e| format!("mkfs: {e}"))?;
        let mut refused = Vec::new();
        let mut mounted = opts.to_string();
        if let Err(e) = sys::mount_fs(&dev, &mnt, &spec.kind, opts) {
            if !leave_out {
                return Err(format!("mount: {e}"));
            }
            refused = refused_options(&dev, &mnt, &spec.kind, opts).inspect_err(|_| {
                // Still mounted: the guard unmounts it.
                disk.mounted = true;
            })?;
            if refused.is_empty() {
                return Err(format!("mount: {e}"));
            }
            let rest: Vec<&str> = opts
                .split(',')
                .filter(|o| !o.is_empty() && !refused.iter().any(|(r, _)| r == o))
                .collect();
            mounted = rest.join(",");
            sys::mount_fs(&dev, &mnt, &spec.kind, &mounted).map_err(|e| format!("mount: {e}"))?;
        }
        disk.mounted = true;
        Ok((disk, mounted, refused))
    }
}

/// Mount options a filesystem would not mount with, each with the
/// mount's words.
type Refused = Vec<(String, String)>;

/// The options of `opts` a filesystem of `kind` on `dev` will not mount
/// with, each tried alone on `mnt` (and unmounted at once), with the
/// mount's words; `Err` when a trial mount could not be unmounted.
fn refused_options(dev: &str, mnt: &Path, kind: &str, opts: &str) -> Result<Refused, String> {
    let mut refused = Vec::new();
    for o in opts.split(',').filter(|o| !o.is_empty()) {
        match sys::mount_fs(dev, mnt, kind, o) {
            Ok(()) => sys::unmount_fs(mnt)
                .map_err(|e| format!("mount: trying `{o}` alone: not unmounted: {e}"))?,
            Err(e) => refused.push((o.to_string(), e.to_string())),
        }
    }
    Ok(refused)
}

pub use crate::values::bytes as parse_bytes;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mkfs_lists() {
        let v = parse_mkfs(&[
            "ext4,xfs,ext4:noatime,data=writeback".into(),
            "btrfs".into(),
        ])
        .unwrap();
        let plain = |k: &str| FsSpec {
            kind: k.into(),
            ..FsSpec::default()
        };
        assert_eq!(
            v,
            vec![
                plain("ext4"),
                plain("xfs"),
                FsSpec {
                    options: Some("noatime,data=writeback".into()),
                    ..plain("ext4")
                },
                plain("btrfs"),
            ]
        );
        let e = parse_mkfs(&["zfs".into()]).unwrap_err();
        assert!(e.contains("`zfs`"), "{e}");
        let e = parse_mkfs(&["ext4,noatime".into()]).unwrap_err();
        assert!(e.contains("ext4:noatime"), "{e}");
    }

    #[test]
    fn mkfs_options_are_separate_arguments_beside_mount_options() {
        let words = |v: &[&str]| v.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        let v = parse_mkfs(&[
            "ext4:-O^has_journal".into(),
            "xfs:-i size=512:noatime".into(),
            "ext4:-E stride=16,stripe_width=64:noatime,data=writeback".into(),
            "ext4:nodiratime:-b 4096".into(),
        ])
        .unwrap();
        assert_eq!(v[0].mkfs, words(&["-O^has_journal"]));
        assert_eq!(v[0].options, None);
        assert_eq!(v[1].mkfs, words(&["-i", "size=512"]));
        assert_eq!(v[1].options.as_deref(), Some("noatime"));
        // A comma inside mkfs options stays in them.
        assert_eq!(v[2].mkfs, words(&["-E", "stride=16,stripe_width=64"]));
        assert_eq!(v[2].options.as_deref(), Some("noatime,data=writeback"));
        assert_eq!(
            (v[3].mkfs.len(), v[3].options.as_deref()),
            (2, Some("nodiratime"))
        );
        assert_eq!(v[1].label("noatime"), "xfs -i size=512 noatime");
        assert_eq!(v[0].label(""), "ext4 -O^has_journal");
        // Scalebench's own -N stays out when the options count inodes.
        assert!(!v[0].sets_inodes());
        assert!(parse_mkfs(&["ext4:-i 8192".into()]).unwrap()[0].sets_inodes());
        assert!(!parse_mkfs(&["xfs:-i size=512".into()]).unwrap()[0].sets_inodes());
        for (bad, want) in [
            ("ext4:-O a:-b 1024", "two sets of mkfs options"),
            ("ext4:noatime:sync", "two sets of mount options"),
        ] {
            let e = parse_mkfs(&[bad.into()]).unwrap_err();
            assert!(e.contains(want), "{bad}: {e}");
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_bytes("8K").unwrap(), 8192);
        assert_eq!(parse_bytes("128k").unwrap(), 131072);
        assert_eq!(parse_bytes("4G").unwrap(), 4 << 30);
        assert_eq!(parse_bytes("1.5M").unwrap(), 1_572_864);
        assert_eq!(parse_bytes("100").unwrap(), 100);
        assert!(parse_bytes("lots").unwrap_err().contains("`lots`"));
        assert!(parse_bytes("-1K").is_err());
        assert!(parse_bytes("0.3").unwrap_err().contains("less than a byte"));
    }

    #[test]
    fn filesystems_get_the_inodes_the_corpus_needs() {
        let need = disk_need(200_000, 1 << 30);
        assert!(need.inodes > 200_000 + 200_000 / 40, "{need:?}");
        // ext4 on 3 GiB makes 196 608 inodes: fewer than 200 000 files.
        assert_eq!(
            inode_args("ext4", 3 << 30, need.inodes),
            ["-N".to_string(), need.inodes.to_string()]
        );
        // Room by default: nothing asked; below 512 MiB one per 4 KiB.
        assert!(inode_args("ext4", 8 << 30, need.inodes).is_empty());
        assert!(inode_args("ext2", 256 << 20, 60_000).is_empty());
        assert_eq!(inode_args("ext2", 256 << 20, 70_000).len(), 2);
        // xfs and btrfs make inodes as files are made.
        assert!(inode_args("xfs", 1 << 30, u64::MAX).is_empty());
        assert!(inode_args("btrfs", 1 << 30, u64::MAX).is_empty());
    }

    #[test]
    fn a_dir_without_room_is_refused_by_name() {
        let t = tempfile::tempdir().unwrap();
        let e = match prepare(
            &Place::Dir(t.path().into()),
            t.path(),
            0,
            0,
            None,
            Need {
                bytes: u64::MAX / 2,
                inodes: 1,
                smaller: "--size-files",
                fewer: "--files",
            },
        ) {
            Err(e) => e,
            Ok(_) => panic!("accepted"),
        };
        assert!(
            e.contains(&t.path().display().to_string())
                && e.contains("free")
                && e.contains("use fewer --size-files"),
            "{e}"
        );
        // With room: a fresh subdirectory, removed with the target.
        // Room for the bytes but not the inodes: refused by name where the
        // filesystem counts inodes, accepted where it makes them freely.
        let many = Need {
            bytes: 1,
            inodes: u64::MAX / 2,
            ..disk_need(0, 0)
        };
        match (
            sys::free_inodes(t.path()),
            prepare(&Place::Dir(t.path().into()), t.path(), 0, 0, None, many),
        ) {
            (Some(_), Err(e)) => assert!(e.contains("inodes free"), "{e}"),
            (None, Ok(_)) => {}
            (counted, got) => panic!("{counted:?}: {:?}", got.err()),
        }
        let little = Need {
            bytes: 1,
            inodes: 1,
            ..disk_need(0, 0)
        };
        let got = prepare(&Place::Dir(t.path().into()), t.path(), 0, 0, None, little).unwrap();
        let root = got.root.clone();
        assert!(root.starts_with(t.path()) && root.is_dir());
        assert!(got.info["fs_type"].as_str().is_some_and(|s| !s.is_empty()));
        drop(got);
        assert!(!root.exists());
    }
}
