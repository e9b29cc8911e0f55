//! A swap file made for a run and taken away after it: the second tier of
//! memory that stands in for DragonFly's swapcache SSD in the pgbench
//! memory sweep. Linux only here (`mkswap`, then swapon(2) at the highest
//! priority so that it is used before any other swap; swapoff(2) and the
//! file removed when dropped). Elsewhere [`SwapFile::create`] says why
//! not.
//!
//! A swap area is the whole machine's while it is on: any process under
//! memory pressure may be swapped to it, which is why it lives no longer
//! than the rows that use it. One left on by a killed run (its file in
//! that run's work directory) is switched off by the next run's
//! [`release_stale`] before the directory is removed.

use std::path::{Path, PathBuf};

/// The name of every swap file made here (in the directory given).
pub const FILE_NAME: &str = "scalebench-swap";

/// The file in a run's work directory naming its swap file.
const WHERE: &str = "scalebench-swap.where";

/// A swap file in use.
#[derive(Debug)]
pub struct SwapFile {
    path: PathBuf,
    /// Its size, bytes.
    pub bytes: u64,
}

impl SwapFile {
    /// Writes a file of `bytes` (zeros: a swap file must have no holes)
    /// in `dir`, makes it a swap area with `format` (given the file: it
    /// runs `mkswap`, bounded in time, as the caller's process tools do)
    /// and switches it on. Its path is first written down in the run's
    /// work directory `workdir`, so that [`release_stale`] finds it
    /// wherever it is.
    pub fn create(
        dir: &Path,
        bytes: u64,
        workdir: &Path,
        format: impl FnOnce(&Path) -> Result<(), String>,
    ) -> Result<SwapFile, String> {
        if !cfg!(target_os = "linux") {
            return Err("swap files are made only on Linux here".into());
        }
        let path = dir.join(FILE_NAME);
        let note = workdir.join(WHERE);
        std::fs::write(&note, path.as_os_str().as_encoded_bytes())
            .map_err(|e| format!("cannot write {}: {e}", note.display()))?;
        write_zeros(&path, bytes)
            .map_err(|e| format!("cannot write the swap file {}: {e}", path.display()))?;
        // From here on the file is removed when `swap` is dropped.
        let swap = SwapFile { path, bytes };
        format(&swap.path)?;
        on(&swap.path).map_err(|e| format!("swapon {}: {e}", swap.path.display()))?;
        Ok(swap)
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes of it in use now (from /proc/swaps), if it is listed.
    pub fn used(&self) -> Option<u64> {
        listed()
            .into_iter()
            .find(|(p, _)| Path::new(p) == self.path)
            .map(|(_, used)| used)
    }
}

impl Drop for SwapFile {
    fn drop(&mut self) {
        // swapoff brings every page back into memory first, which takes
        // as long as reading them; the file can go only after.
        let _ = off(&self.path);
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Writes `bytes` zero bytes to a new file at `path` (mode 0600), synced.
fn write_zeros(path: &Path, bytes: u64) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    let chunk = vec![0u8; 1 << 20];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        f.write_all(&chunk[..n])?;
        left -= n as u64;
    }
    f.sync_all()
}

/// The swap areas the kernel lists: (path, bytes used).
fn listed() -> Vec<(String, u64)> {
    std::fs::read_to_string("/proc/swaps")
        .unwrap_or_default()
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            // Filename Type Size Used Priority; a path with spaces is
            // written with \040.
            let used = f.get(3)?.parse::<u64>().ok()? * 1024;
            Some((f.first()?.replace("\\040", " "), used))
        })
        .collect()
}

/// Switches off the swap files a killed run left on — in its work
/// directory `dir`, or where a note there says — and removes the one the
/// note names; says what it did.
pub fn release_stale(dir: &Path) -> Vec<String> {
    let noted = std::fs::read(dir.join(WHERE))
        .ok()
        .map(|b| PathBuf::from(String::from_utf8_lossy(&b).into_owned()))
        .filter(|p| p.file_name().is_some_and(|n| n == FILE_NAME));
    let mut said: Vec<String> = listed()
        .into_iter()
        .filter(|(p, _)| Path::new(p).starts_with(dir) || noted.as_deref() == Some(Path::new(p)))
        .map(|(p, _)| match off(Path::new(&p)) {
            Ok(()) => format!("switched off the swap file {p}"),
            Err(e) => format!("could not switch off the swap file {p}: {e}"),
        })
        .collect();
    if let Some(p) = noted.filter(|p| p.exists()) {
        said.push(match std::fs::remove_file(&p) {
            Ok(()) => format!("removed {}", p.display()),
            Err(e) => format!("could not remove {}: {e}", p.display()),
        });
    }
    said
}

#[cfg(target_os = "linux")]
fn c_path(path: &Path) -> std::io::Result<std::ffi::CString> {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(std::io::Error::other)
}

/// swapon(2) at the highest priority.
#[cfg(target_os = "linux")]
fn on(path: &Path) -> std::io::Result<()> {
    const PREFER: libc::c_int = 0x8000;
    const HIGHEST: libc::c_int = 0x7fff;
    let p = c_path(path)?;
    // SAFETY: a NUL-terminated path that outlives the call.
    if unsafe { libc::swapon(p.as_ptr(), PREFER | HIGHEST) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// swapoff(2).
#[cfg(target_os = "linux")]
fn off(path: &Path) -> std::io::Result<()> {
    let p = c_path(path)?;
    // SAFETY: a NUL-terminated path that outlives the call.
    if unsafe { libc::swapoff(p.as_ptr()) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn on(_: &Path) -> std::io::Result<()> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

#[cfg(not(target_os = "linux"))]
fn off(_: &Path) -> std::io::Result<()> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// `mkswap` run plainly (the harness bounds it in a run).
    fn mkswap(file: &Path) -> Result<(), String> {
        let s = std::process::Command::new("mkswap").arg(file).output();
        match s {
            Ok(o) if o.status.success() => Ok(()),
            Ok(o) => Err(String::from_utf8_lossy(&o.stderr).into_owned()),
            Err(e) => Err(format!("mkswap: {e}")),
        }
    }

    #[test]
    fn a_swap_file_is_on_while_held_and_gone_after() {
        if unsafe { libc::geteuid() } != 0 {
            // swapon needs root: CI runs as root; scripts/test says so.
            panic!("this test needs root (swapon)");
        }
        // The swap file elsewhere than the work directory, as swap:DIR.
        let (dir, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let s = SwapFile::create(dir.path(), 16 << 20, work.path(), mkswap).unwrap();
        assert_eq!(s.used(), Some(0), "listed in /proc/swaps");
        // A second one in the same place is refused by name.
        let e = SwapFile::create(dir.path(), 16 << 20, work.path(), mkswap).unwrap_err();
        assert!(e.contains(FILE_NAME), "{e}");
        // What a killed run leaves is switched off and removed by the
        // next, found by the note in its work directory.
        let said = release_stale(work.path());
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(said[0].starts_with("switched off"), "{said:?}");
        assert!(said[1].starts_with("removed"), "{said:?}");
        assert_eq!(s.used(), None);
        let path = s.path().to_path_buf();
        assert!(!path.exists());
        drop(s);
        assert!(
            listed()
                .iter()
                .all(|(p, _)| !Path::new(p).starts_with(dir.path()))
        );
        // Dropped while on: switched off and removed.
        let s = SwapFile::create(work.path(), 16 << 20, work.path(), mkswap).unwrap();
        let path = s.path().to_path_buf();
        assert!(s.used().is_some());
        drop(s);
        assert!(!path.exists());
        assert!(listed().iter().all(|(p, _)| Path::new(p) != path));
    }
}
