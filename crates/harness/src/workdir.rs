//! The work directory: a fresh directory (`scalebench-XXXXXX`) under the
//! directory the user names (or the system temp dir), the only place
//! benchmarks create files; removed with everything in it when dropped.
//!
//! A process killed with SIGKILL cannot remove its work directory, so each
//! one holds an owner file ([`OWNER`]) locked with `flock` for as long as
//! the run lives: the kernel drops the lock when the process dies. Before
//! creating its own directory, a run looks at the `scalebench-*`
//! directories beside it and removes those whose owner file it can lock
//! (their run is gone), after unmounting whatever a filesystem workload
//! left mounted inside; [`WorkDir::swept`] says what it removed. A
//! directory without an owner file (another program's, or one being made
//! this instant) is never touched.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// The owner file inside a work directory, locked while its run lives.
pub const OWNER: &str = ".scalebench-owner";

/// The prefix of every work directory's name.
const PREFIX: &str = "scalebench-";

/// Why the work directory could not be made.
#[derive(Debug, thiserror::Error)]
pub enum WorkDirError {
    /// The directory could not be made under its base.
    #[error("cannot create a work directory in {}", base.display())]
    Create {
        /// Where it was to go.
        base: PathBuf,
        /// The file system's error.
        #[source]
        source: std::io::Error,
    },
    /// Its owner file could not be made or locked.
    #[error("cannot lock the owner file of {}", dir.display())]
    Lock {
        /// The work directory.
        dir: PathBuf,
        /// The file system's error.
        #[source]
        source: std::io::Error,
    },
}

/// The run's private directory.
pub struct WorkDir {
    dir: tempfile::TempDir,
    _owner: File,
    swept: Vec<String>,
    _pending: sys::stop::Pending,
}

impl WorkDir {
    /// Creates `scalebench-XXXXXX` under `base` (default: the temp dir),
    /// after removing the work directories of runs that are gone.
    pub fn create(base: Option<&Path>) -> Result<WorkDir, WorkDirError> {
        WorkDir::create_with(base, |_| Vec::new())
    }

    /// The same, with `release` called on each dead run's directory before
    /// it is removed, to free what files do not hold (a database's shared
    /// memory); it returns what it did, in words.
    pub fn create_with(
        base: Option<&Path>,
        release: fn(&Path) -> Vec<String>,
    ) -> Result<WorkDir, WorkDirError> {
        let base: PathBuf = base.map_or_else(std::env::temp_dir, Path::to_path_buf);
        let swept = sweep(&base, release);
        let dir = match tempfile::Builder::new().prefix(PREFIX).tempdir_in(&base) {
            Ok(d) => d,
            Err(source) => return Err(WorkDirError::Create { base, source }),
        };
        let owner = claim(dir.path()).map_err(|source| WorkDirError::Lock {
            dir: dir.path().to_path_buf(),
            source,
        })?;
        Ok(WorkDir {
            dir,
            _owner: owner,
            swept,
            _pending: sys::stop::pending(sys::stop::Task::WorkDir),
        })
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// What was removed before this directory was made: one line per work
    /// directory of a run that had died (and anything unmounted in it), or
    /// why it could not be removed.
    pub fn swept(&self) -> &[String] {
        &self.swept
    }
}

impl Drop for WorkDir {
    /// Removes the directory with everything in it (as the `TempDir`
    /// would, silently); after a stop signal, says so
    /// ([`sys::stop::did`]), or why it could not.
    fn drop(&mut self) {
        if !sys::stop::interrupted() {
            return;
        }
        let p = self.dir.path();
        match std::fs::remove_dir_all(p) {
            Ok(()) => sys::stop::did(format!("removed the work directory {}", p.display())),
            Err(e) => sys::stop::did(format!(
                "could not remove the work directory {}: {e} (the next run or `scalebench restore` removes it)",
                p.display()
            )),
        }
    }
}

/// Removes the work directories under `base` (default: the temp dir) whose
/// run is gone, with `release` called on each first, without making one;
/// returns what it did, in words.
pub fn sweep_dead(base: Option<&Path>, release: fn(&Path) -> Vec<String>) -> Vec<String> {
    let base: PathBuf = base.map_or_else(std::env::temp_dir, Path::to_path_buf);
    sweep(&base, release)
}

/// Takes an exclusive lock; `false` when another open file holds one.
fn try_lock(f: &File) -> bool {
    // SAFETY: flock on a descriptor we own.
    unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// Creates the owner file of `dir` already locked: it is locked under a
/// temporary name and then renamed, so a sweeper never finds it unlocked.
fn claim(dir: &Path) -> std::io::Result<File> {
    let tmp = dir.join(format!("{OWNER}.new"));
    // std opens with O_CLOEXEC: children started with exec do not hold the lock.
    let f = File::create(&tmp)?;
    if !try_lock(&f) {
        return Err(std::io::Error::other("the new owner file is locked"));
    }
    std::fs::write(&tmp, format!("{}\n", std::process::id()))?;
    std::fs::rename(&tmp, dir.join(OWNER))?;
    Ok(f)
}

/// Removes the work directories under `base` whose run is gone; returns
/// what it did, in words.
fn sweep(base: &Path, release: fn(&Path) -> Vec<String>) -> Vec<String> {
    let mut notes = Vec::new();
    let Ok(entries) = std::fs::read_dir(base) else {
        return notes;
    };
    // SAFETY: getuid cannot fail.
    let me = unsafe { libc::getuid() };
    for e in entries.flatten() {
        let name = e.file_name();
        if !name.to_string_lossy().starts_with(PREFIX) {
            continue;
        }
        let path = e.path();
        // Only real directories of ours; never through a symbolic link.
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        use std::os::unix::fs::MetadataExt;
        if !meta.is_dir() || meta.uid() != me {
            continue;
        }
        let Ok(owner) = File::open(path.join(OWNER)) else {
            continue;
        };
        if !try_lock(&owner) {
            continue; // its run is alive
        }
        let pid = std::fs::read_to_string(path.join(OWNER))
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
            .map_or_else(|| "a run".to_string(), |p| format!("run {p}"));
        let mut released = release(&path);
        released.extend(sys::release_mounts_under(&path));
        match std::fs::remove_dir_all(&path) {
            Ok(()) => notes.push(format!(
                "removed {} left by {pid}, which is gone{}",
                path.display(),
                if released.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", released.join("; "))
                }
            )),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                released.push(e.to_string());
                notes.push(format!(
                    "could not remove {} left by {pid}, which is gone: {}",
                    path.display(),
                    released.join("; ")
                ));
            }
        }
        drop(owner);
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_inside_base_and_removed_on_drop() {
        let base = tempfile::tempdir().unwrap();
        let w = WorkDir::create(Some(base.path())).unwrap();
        let p = w.path().to_path_buf();
        assert!(p.starts_with(base.path()) && p.is_dir());
        assert!(p.join(OWNER).is_file());
        std::fs::write(p.join("f"), b"x").unwrap();
        drop(w);
        assert!(!p.exists());
    }

    #[test]
    fn bad_base_names_the_directory() {
        let err = WorkDir::create(Some(Path::new("/nonexistent/dir")))
            .err()
            .unwrap();
        assert!(format!("{err:#}").contains("/nonexistent/dir"));
    }

    #[test]
    fn a_live_runs_directory_is_kept_and_a_dead_ones_removed() {
        let base = tempfile::tempdir().unwrap();
        let live = WorkDir::create(Some(base.path())).unwrap();
        // A dead run's directory: an unlocked owner file and some files.
        let dead = base.path().join("scalebench-dead01");
        std::fs::create_dir_all(dead.join("sub")).unwrap();
        std::fs::write(dead.join(OWNER), "4242\n").unwrap();
        std::fs::write(dead.join("sub/f"), b"x").unwrap();
        // Not ours to judge: no owner file, or not a directory.
        let foreign = base.path().join("scalebench-foreign");
        std::fs::create_dir(&foreign).unwrap();
        let file = base.path().join("scalebench-file");
        std::fs::write(&file, b"x").unwrap();
        let link = base.path().join("scalebench-link");
        std::os::unix::fs::symlink(&dead, &link).unwrap();

        let next = WorkDir::create(Some(base.path())).unwrap();
        assert!(!dead.exists(), "the dead run's directory is removed");
        assert_eq!(next.swept().len(), 1, "{:?}", next.swept());
        assert!(
            next.swept()[0].contains("scalebench-dead01") && next.swept()[0].contains("run 4242"),
            "{:?}",
            next.swept()
        );
        assert!(live.path().join(OWNER).is_file(), "the live run is kept");
        assert!(foreign.is_dir() && file.is_file());
        assert!(std::fs::symlink_metadata(&link).is_ok());
    }
}
