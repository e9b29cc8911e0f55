//! The cache of fetched kernels: a directory (`--cache DIR`, else
//! `$SCALEBENCH_KERNEL_CACHE`, else `$XDG_CACHE_HOME/scalebench/kernels`,
//! else `~/.cache/scalebench/kernels`) marked as scalebench's by its
//! `CACHEDIR.TAG`, holding
//!
//! ```text
//! CACHEDIR.TAG                      what the directory is (never removed)
//! lock                              held while apt runs, a kernel is fetched or pruned
//! apt/RELEASE/                      apt's private configuration, indices and cache
//! PACKAGE_VERSION/entry.json        one kernel: what it is (Entry)
//! PACKAGE_VERSION/root/             its packages unpacked, modules.dep made
//! .partial-PACKAGE_VERSION/         a fetch under way (renamed when done)
//! ```
//!
//! A kernel's directory appears whole or not at all: it is made under
//! `.partial-…` and renamed once complete, all under the lock, so two
//! runs never fetch into one place and one never sees half of another's.
//! A run booting a kernel holds a shared lock on its `entry.json`, which
//! `prune` leaves alone.

use super::{Asked, Want};
use crate::sys::filelock::{self, Kind};
use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::path::{Path, PathBuf};

/// The environment variable naming the cache.
pub const CACHE_ENV: &str = "SCALEBENCH_KERNEL_CACHE";
/// The mark of a cache directory (bford.info/cachedir), with ours below.
const TAG: &str = "Signature: 8a477f597d28d172789f06886806bc55\n\
                   # This directory is scalebench's cache of Linux kernels fetched from Debian's\n\
                   # archive (scalebench kernels list|fetch|prune).\n";
/// The line of [`TAG`] that says the directory is ours.
const TAG_OURS: &str = "# This directory is scalebench's cache of Linux kernels";

/// One kernel in the cache, as its `entry.json` says.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Entry {
    /// The archive: `debian`.
    pub archive: String,
    /// The release whose archive it came from (`bookworm`).
    pub dist: String,
    /// Its line (`6.1`): the first two numbers of its version.
    pub line: String,
    /// The package that holds the kernel.
    pub package: String,
    /// Its version.
    pub version: String,
    /// The suite it came from.
    pub suite: String,
    /// The kernel's release (`uname -r`).
    pub release: String,
    /// Every package unpacked.
    pub debs: Vec<crate::results::DebFile>,
    /// The kernel image, under `root/`.
    pub kernel: String,
    /// The module tree, under `root/`.
    pub modules: String,
    /// The configuration file, as its package has it.
    pub config: Option<crate::results::ConfigFile>,
    /// When it was fetched (RFC 3339).
    pub fetched: String,
    /// Bytes downloaded (the `.deb`s).
    pub download_bytes: u64,
    /// Seconds the download took.
    pub download_seconds: f64,
    /// Bytes it takes in the cache, unpacked.
    pub bytes: u64,
}

impl Entry {
    /// The name of its directory: `PACKAGE_VERSION` (an epoch's `:` as
    /// `%3a`).
    pub fn dir_name(package: &str, version: &str) -> String {
        format!("{package}_{}", version.replace(':', "%3a"))
    }

    /// Whether `asked` names it: its line of its release (`6.12` is
    /// trixie's, not bookworm's backport, which its package name names),
    /// or sid, of the flavour asked; or its package.
    pub fn matches(&self, asked: &Asked) -> bool {
        let flavour = super::Flavour::of_package(&self.package) == Some(asked.flavour);
        match &asked.want {
            Want::Line(l) => self.line == *l && self.dist == asked.dist.name && flavour,
            Want::Newest => self.dist == asked.dist.name && flavour,
            Want::Package(p) => self.package == *p,
        }
    }

    /// What a result file records of it, for a system that asked for
    /// `asked`.
    pub fn record(&self, asked: &str) -> crate::results::KernelPackage {
        crate::results::KernelPackage {
            archive: self.archive.clone(),
            asked: asked.to_string(),
            package: self.package.clone(),
            version: self.version.clone(),
            suite: self.suite.clone(),
            release: self.release.clone(),
            debs: self.debs.clone(),
            config: self.config.clone(),
            fetched: self.fetched.clone(),
            index_stale: None,
            archive_unreachable: None,
        }
    }
}

/// A kernel of the cache held for use: its directory and entry, with a
/// shared lock on its `entry.json` that keeps `prune` away until dropped.
#[derive(Debug)]
pub struct Held {
    /// Its directory.
    pub dir: PathBuf,
    /// What it is.
    pub entry: Entry,
    _lock: File,
}

impl Held {
    /// The kernel image.
    pub fn kernel(&self) -> PathBuf {
        self.dir.join("root").join(&self.entry.kernel)
    }

    /// The module tree (`…/lib/modules/RELEASE`).
    pub fn modules(&self) -> PathBuf {
        self.dir.join("root").join(&self.entry.modules)
    }

    /// The configuration file, where the package put it.
    pub fn config(&self) -> Option<PathBuf> {
        let c = self.entry.config.as_ref()?;
        Some(self.dir.join("root").join(c.path.trim_start_matches('/')))
    }
}

/// A directory of the cache as listed: a kernel, or one whose
/// `entry.json` cannot be read (a damaged entry, removed by `prune
/// --all`).
#[derive(Debug)]
pub struct Listed {
    /// Its directory.
    pub dir: PathBuf,
    /// What it is, or why that cannot be told.
    pub entry: Result<Entry, String>,
}

/// The exclusive lock of the cache (its `lock` file), released on drop.
#[derive(Debug)]
pub struct Lock(#[allow(dead_code)] File);

/// The cache: a directory.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    /// The cache `given` (`--cache`), else [`CACHE_ENV`]'s, else the
    /// default under `$XDG_CACHE_HOME` or `$HOME/.cache`.
    pub fn locate(given: Option<&Path>) -> anyhow::Result<Cache> {
        let var = |n: &str| std::env::var_os(n).filter(|v| !v.is_empty());
        let dir = match (given, var(CACHE_ENV)) {
            (Some(g), _) => g.to_path_buf(),
            (None, Some(e)) => PathBuf::from(e),
            (None, None) => match (var("XDG_CACHE_HOME"), var("HOME")) {
                (Some(x), _) => PathBuf::from(x).join("scalebench/kernels"),
                (None, Some(h)) => PathBuf::from(h).join(".cache/scalebench/kernels"),
                (None, None) => bail!(
                    "no kernel cache: neither ${CACHE_ENV}, $XDG_CACHE_HOME nor $HOME is set (give --cache DIR or set {CACHE_ENV})"
                ),
            },
        };
        let dir = std::path::absolute(&dir).with_context(|| dir.display().to_string())?;
        let text = dir.to_str().ok_or_else(|| {
            anyhow::anyhow!(
                "kernel cache {}: not UTF-8, which apt's configuration cannot hold",
                dir.display()
            )
        })?;
        if text.contains(['"', '\n', '\r', '\\']) {
            bail!(
                "kernel cache {text}: a path with a quote, a backslash or a line break cannot be given to apt"
            );
        }
        Ok(Cache { dir })
    }

    /// Its directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether the directory is a cache of ours (its `CACHEDIR.TAG` says
    /// so): `false` when it does not exist, an error when something else
    /// is there.
    pub fn exists(&self) -> anyhow::Result<bool> {
        match std::fs::symlink_metadata(&self.dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(e).with_context(|| self.dir.display().to_string()),
            Ok(m) if !m.is_dir() => bail!("kernel cache {}: not a directory", self.dir.display()),
            Ok(_) => {}
        }
        let tag = std::fs::read_to_string(self.dir.join("CACHEDIR.TAG")).unwrap_or_default();
        if tag.contains(TAG_OURS) {
            Ok(true)
        } else {
            bail!(
                "kernel cache {}: a directory that is not scalebench's kernel cache (no CACHEDIR.TAG of scalebench's in it): nothing there is used or removed",
                self.dir.display()
            )
        }
    }

    /// Makes the cache (its directories and `CACHEDIR.TAG`) where nothing
    /// is, or where an empty directory is; checks an existing one is ours.
    pub fn make(&self) -> anyhow::Result<()> {
        let empty = std::fs::read_dir(&self.dir).is_ok_and(|mut d| d.next().is_none());
        if !empty && self.exists()? {
            return Ok(());
        }
        std::fs::create_dir_all(&self.dir).with_context(|| self.dir.display().to_string())?;
        // Written beside the cache and renamed in, whole: another
        // scalebench making the same cache at this moment never reads a
        // tag half written (it would take the cache for someone else's).
        let tag = self.dir.join("CACHEDIR.TAG");
        let parent = self.dir.parent().unwrap_or(Path::new("."));
        let mut tmp = tempfile::Builder::new()
            .prefix(".scalebench-cachedir-tag-")
            .tempfile_in(parent)
            .with_context(|| format!("a file in {}", parent.display()))?;
        std::io::Write::write_all(&mut tmp, TAG.as_bytes())
            .with_context(|| tmp.path().display().to_string())?;
        tmp.persist(&tag)
            .map_err(|e| e.error)
            .with_context(|| tag.display().to_string())?;
        Ok(())
    }

    /// Takes the cache's lock, waiting (and saying so through `say`)
    /// while another scalebench holds it.
    pub fn lock(&self, say: &mut dyn FnMut(&str)) -> anyhow::Result<Lock> {
        let p = self.dir.join("lock");
        let f = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&p)
            .with_context(|| p.display().to_string())?;
        let locked = filelock::try_lock(&f, Kind::Exclusive)
            .with_context(|| format!("locking {}", p.display()))?;
        if !locked {
            say(&format!(
                "waiting for another scalebench using the kernel cache {}",
                self.dir.display()
            ));
            filelock::lock(&f, Kind::Exclusive)
                .with_context(|| format!("locking {}", p.display()))?;
        }
        Ok(Lock(f))
    }

    /// apt's state directory for release `dist`.
    pub fn apt_dir(&self, dist: &str) -> PathBuf {
        self.dir.join("apt").join(dist)
    }

    /// The directory of a kernel package at a version.
    pub fn entry_dir(&self, package: &str, version: &str) -> PathBuf {
        self.dir.join(Entry::dir_name(package, version))
    }

    /// Where a kernel is fetched before it is renamed into place.
    pub fn partial_dir(&self, package: &str, version: &str) -> PathBuf {
        self.dir
            .join(format!(".partial-{}", Entry::dir_name(package, version)))
    }

    /// Every kernel directory of the cache (those with an `entry.json`,
    /// readable or not), by name.
    pub fn list(&self) -> anyhow::Result<Vec<Listed>> {
        if !self.exists()? {
            return Ok(Vec::new());
        }
        let mut v = Vec::new();
        for e in std::fs::read_dir(&self.dir).with_context(|| self.dir.display().to_string())? {
            let e = e?;
            let name = e.file_name().to_string_lossy().into_owned();
            let json = e.path().join("entry.json");
            if name.starts_with('.') || !e.file_type()?.is_dir() || !json.exists() {
                continue;
            }
            let entry = std::fs::read_to_string(&json)
                .map_err(|e| e.to_string())
                .and_then(|t| serde_json::from_str::<Entry>(&t).map_err(|e| e.to_string()))
                .map_err(|e| format!("{}: {e}", json.display()));
            v.push(Listed {
                dir: e.path(),
                entry,
            });
        }
        v.sort_by(|a, b| a.dir.cmp(&b.dir));
        Ok(v)
    }

    /// The kernel at `dir`, held: its entry read, a shared lock taken on
    /// its `entry.json`.
    pub fn hold(&self, dir: &Path) -> anyhow::Result<Held> {
        let json = dir.join("entry.json");
        let f = File::open(&json).with_context(|| json.display().to_string())?;
        filelock::lock(&f, Kind::Shared).with_context(|| format!("locking {}", json.display()))?;
        let text = std::fs::read_to_string(&json).with_context(|| json.display().to_string())?;
        let entry: Entry =
            serde_json::from_str(&text).with_context(|| json.display().to_string())?;
        Ok(Held {
            dir: dir.to_path_buf(),
            entry,
            _lock: f,
        })
    }

    /// The most recently fetched kernel that `asked` names, if any.
    pub fn newest(&self, asked: &Asked) -> anyhow::Result<Option<PathBuf>> {
        let mut found: Vec<(String, PathBuf)> = self
            .list()?
            .into_iter()
            .filter_map(|l| match l.entry {
                Ok(e) if e.matches(asked) => Some((e.fetched, l.dir)),
                _ => None,
            })
            .collect();
        found.sort();
        Ok(found.pop().map(|(_, d)| d))
    }

    /// Removes the `.partial-…` directories fetches that were stopped
    /// left (under the lock, so none is under way).
    pub fn sweep(&self, _lock: &Lock) -> Vec<String> {
        let mut swept = Vec::new();
        for e in std::fs::read_dir(&self.dir).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with(".partial-") && std::fs::remove_dir_all(e.path()).is_ok() {
                swept.push(name);
            }
        }
        swept
    }
}

/// What `prune` did with one directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pruned {
    /// The directory.
    pub dir: PathBuf,
    /// The kernel in words (`6.1 linux-image-… 6.1.192-3`), or the
    /// directory's name when its entry cannot be read.
    pub what: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Why it was kept, when it was (in use by a running scalebench).
    pub kept: Option<String>,
}

impl Cache {
    /// Removes the kernels `asked` names (every kernel, every damaged
    /// entry and apt's state with `all`), or only says what would go
    /// with `dry_run`. A kernel a run is using is kept and said so.
    /// Nothing outside the cache directory is touched: only its own
    /// entries, never through a symbolic link.
    pub fn prune(&self, asked: &[Asked], all: bool, dry_run: bool) -> anyhow::Result<Vec<Pruned>> {
        if !self.exists()? {
            return Ok(Vec::new());
        }
        let lock = self.lock(&mut |s| sys::say!("{s}"))?;
        if !dry_run {
            self.sweep(&lock);
        }
        let mut out = Vec::new();
        for l in self.list()? {
            let (what, chosen) = match &l.entry {
                Ok(e) => (
                    format!("{} {} {} ({})", e.line, e.package, e.version, e.release),
                    all || asked.iter().any(|a| e.matches(a)),
                ),
                Err(why) => (format!("{} (damaged: {why})", l.dir.display()), all),
            };
            if !chosen {
                continue;
            }
            let bytes = size_of(&l.dir);
            let kept = if dry_run { None } else { remove_entry(&l.dir)? };
            out.push(Pruned {
                dir: l.dir,
                what,
                bytes,
                kept,
            });
        }
        let apt = self.dir.join("apt");
        if all && apt.is_dir() && !apt.is_symlink() {
            let bytes = size_of(&apt);
            if !dry_run {
                std::fs::remove_dir_all(&apt).with_context(|| apt.display().to_string())?;
            }
            out.push(Pruned {
                dir: apt,
                what: "apt's indices of Debian's archive".into(),
                bytes,
                kept: None,
            });
        }
        Ok(out)
    }
}

/// Removes a kernel's directory unless a run holds it: why it was kept,
/// if it was.
fn remove_entry(dir: &Path) -> anyhow::Result<Option<String>> {
    let json = dir.join("entry.json");
    let f = File::open(&json).with_context(|| json.display().to_string())?;
    if !filelock::try_lock(&f, Kind::Exclusive)
        .with_context(|| format!("locking {}", json.display()))?
    {
        return Ok(Some("in use by a running scalebench".into()));
    }
    if dir.is_symlink() {
        bail!("{}: a symbolic link, not removed", dir.display());
    }
    // Renamed first, so that a removal stopped half-way leaves a
    // `.partial-…` directory (swept later), never a kernel with files
    // missing.
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    let gone = dir.with_file_name(format!(".partial-{name}"));
    std::fs::rename(dir, &gone).with_context(|| dir.display().to_string())?;
    drop(f);
    std::fs::remove_dir_all(&gone).with_context(|| gone.display().to_string())?;
    Ok(None)
}

/// The bytes of every file under `dir`, links not followed.
pub fn size_of(dir: &Path) -> u64 {
    let mut total = 0;
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => todo.push(e.path()),
                Ok(t) if t.is_file() => total += e.metadata().map_or(0, |m| m.len()),
                _ => {}
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(line: &str, dist: &str, package: &str, fetched: &str) -> Entry {
        Entry {
            archive: "debian".into(),
            dist: dist.into(),
            line: line.into(),
            package: package.into(),
            version: format!("{line}.1-1"),
            suite: dist.into(),
            release: format!("{line}.0-1-cloud-amd64"),
            debs: Vec::new(),
            kernel: "boot/vmlinuz".into(),
            modules: "lib/modules/x".into(),
            config: None,
            fetched: fetched.into(),
            download_bytes: 1,
            download_seconds: 0.5,
            bytes: 2,
        }
    }

    /// A cache in `t` with `entries` written (no files beside them).
    fn cache_with(t: &Path, entries: &[Entry]) -> Cache {
        let c = Cache::locate(Some(&t.join("c"))).unwrap();
        c.make().unwrap();
        for e in entries {
            let d = c.entry_dir(&e.package, &e.version);
            std::fs::create_dir_all(d.join("root")).unwrap();
            std::fs::write(d.join("root/f"), "12345").unwrap();
            std::fs::write(d.join("entry.json"), serde_json::to_string(e).unwrap()).unwrap();
        }
        c
    }

    #[test]
    fn prune_removes_what_is_named_and_keeps_what_is_in_use() {
        let t = tempfile::tempdir().unwrap();
        let a = entry(
            "6.1",
            "bookworm",
            "linux-image-6.1.0-1-cloud-amd64",
            "2026-12-01T00:00:00Z",
        );
        let b = entry(
            "6.12",
            "trixie",
            "linux-image-6.12.1+deb13-cloud-amd64",
            "2026-12-02T00:00:00Z",
        );
        let c = cache_with(t.path(), &[a.clone(), b.clone()]);
        std::fs::write(t.path().join("beside"), "not the cache's").unwrap();
        assert_eq!(c.list().unwrap().len(), 2);
        let six_one: Asked = "6.1".parse().unwrap();
        assert_eq!(
            c.newest(&six_one).unwrap(),
            Some(c.entry_dir(&a.package, &a.version))
        );
        // Held by a run: kept.
        let held = c.hold(&c.entry_dir(&a.package, &a.version)).unwrap();
        let p = c
            .prune(std::slice::from_ref(&six_one), false, false)
            .unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].kept.as_deref(), Some("in use by a running scalebench"));
        drop(held);
        // A dry run removes nothing.
        let p = c
            .prune(std::slice::from_ref(&six_one), false, true)
            .unwrap();
        assert_eq!((p.len(), p[0].bytes > 0), (1, true));
        assert_eq!(c.list().unwrap().len(), 2);
        let p = c.prune(&[six_one], false, false).unwrap();
        assert_eq!((p.len(), p[0].kept.clone()), (1, None));
        assert!(p[0].what.starts_with("6.1 linux-image-6.1.0-1-cloud-amd64"));
        let left: Vec<String> = c
            .list()
            .unwrap()
            .into_iter()
            .map(|l| l.entry.unwrap().package)
            .collect();
        assert_eq!(left, std::slice::from_ref(&b.package));
        // --all: the rest, and apt's state; the tag and the lock stay, and
        // nothing beside the cache is touched.
        std::fs::create_dir_all(c.apt_dir("trixie").join("lists")).unwrap();
        let p = c.prune(&[], true, false).unwrap();
        assert_eq!(p.len(), 2);
        let mut names: Vec<String> = std::fs::read_dir(c.dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["CACHEDIR.TAG", "lock"]);
        assert!(t.path().join("beside").exists());
    }

    #[test]
    fn a_directory_that_is_not_a_cache_is_left_alone() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("mine"), "x").unwrap();
        let c = Cache::locate(Some(t.path())).unwrap();
        let e = c.make().unwrap_err().to_string();
        assert!(e.contains("not scalebench's kernel cache"), "{e}");
        assert!(c.prune(&[], true, false).is_err());
        assert!(t.path().join("mine").exists());
        // No directory: nothing cached, nothing made by looking.
        let none = Cache::locate(Some(&t.path().join("none"))).unwrap();
        assert!(none.list().unwrap().is_empty());
        assert!(!t.path().join("none").exists());
        let e = Cache::locate(Some(Path::new("/tmp/a\"b")))
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot be given to apt"), "{e}");
    }
}
