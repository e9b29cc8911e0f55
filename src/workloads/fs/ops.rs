//! The timed file operations of the filesystem workloads, as plain system
//! calls: writing and reading whole files, removing a tree, syncing.

use crate::net::load::ItemCounters;
use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Instant;

/// A path as a C string (a NUL inside is an error).
pub(super) fn c_path(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path with a NUL byte"))
}

fn named(p: &Path) -> impl FnOnce(io::Error) -> io::Error + '_ {
    move |e| io::Error::new(e.kind(), format!("{}: {e}", p.display()))
}

fn last(p: &Path) -> io::Error {
    named(p)(io::Error::last_os_error())
}

/// Writes `data` to a new file `p` (open, write, optionally fsync, close).
pub fn write_file(p: &Path, data: &[u8], fsync: bool) -> io::Result<()> {
    let c = c_path(p)?;
    // SAFETY: open with a NUL-terminated path; closed below.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC,
            0o644 as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(last(p));
    }
    let mut res = Ok(());
    let mut off = 0;
    while off < data.len() {
        // SAFETY: writing our buffer to our descriptor.
        let w = unsafe { libc::write(fd, data[off..].as_ptr().cast(), data.len() - off) };
        if w < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            res = Err(named(p)(e));
            break;
        }
        off += w as usize;
    }
    // SAFETY: fsync and close on our descriptor.
    if res.is_ok() && fsync && unsafe { libc::fsync(fd) } != 0 {
        res = Err(last(p));
    }
    if unsafe { libc::close(fd) } != 0 && res.is_ok() {
        res = Err(last(p));
    }
    res
}

/// Reads file `p` whole into `buf` (open, read to the end, close); returns
/// its length.
pub fn read_file(p: &Path, buf: &mut [u8]) -> io::Result<u64> {
    let c = c_path(p)?;
    // SAFETY: open with a NUL-terminated path; closed below.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(last(p));
    }
    let mut total = 0u64;
    let res = loop {
        // SAFETY: reading into our buffer from our descriptor.
        let r = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            break Err(named(p)(e));
        }
        if r == 0 {
            break Ok(total);
        }
        total += r as u64;
    };
    // SAFETY: closing our descriptor.
    unsafe { libc::close(fd) };
    res
}

/// Removes everything below `root` (not `root` itself): `unlink` for every
/// file, `rmdir` for every directory, deepest first, counting each file in
/// `counters` (no bytes: that would take a stat per file). Stops on ^C.
pub fn remove_tree(root: &Path, counters: &ItemCounters) -> io::Result<()> {
    // Depth-first with an explicit stack: (directory, children listed).
    let mut stack: Vec<(std::path::PathBuf, bool)> = vec![(root.to_path_buf(), false)];
    while let Some((dir, listed)) = stack.pop() {
        if listed {
            if dir != root {
                let c = c_path(&dir)?;
                // SAFETY: rmdir with a NUL-terminated path.
                if unsafe { libc::rmdir(c.as_ptr()) } != 0 {
                    return Err(last(&dir));
                }
            }
            continue;
        }
        if crate::stop::interrupted() {
            return Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"));
        }
        stack.push((dir.clone(), true));
        for e in std::fs::read_dir(&dir).map_err(named(&dir))? {
            let e = e.map_err(named(&dir))?;
            let p = e.path();
            let ft = e.file_type().map_err(named(&p))?;
            if ft.is_dir() {
                stack.push((p, false));
            } else {
                let c = c_path(&p)?;
                // SAFETY: unlink with a NUL-terminated path.
                if unsafe { libc::unlink(c.as_ptr()) } != 0 {
                    return Err(last(&p));
                }
                counters.add(1, 0);
            }
        }
    }
    Ok(())
}

/// Walks every directory below `root` as `find` does: each directory read
/// to its end (the entries' types from the directory itself where the
/// filesystem gives them, no file opened or read), counting each directory
/// in `counters`. Returns the entries seen. Stops on ^C.
pub fn walk_dirs(root: &Path, counters: &ItemCounters) -> io::Result<u64> {
    let mut entries = 0u64;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        if crate::stop::interrupted() {
            return Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"));
        }
        for e in std::fs::read_dir(&dir).map_err(named(&dir))? {
            let e = e.map_err(named(&dir))?;
            entries += 1;
            if e.file_type().map_err(named(&e.path()))?.is_dir() {
                stack.push(e.path());
            }
        }
        counters.add(1, 0);
    }
    Ok(entries)
}

/// Flushes the filesystem holding `dir` to disk; returns the seconds it took.
pub fn sync_dir(dir: &Path) -> io::Result<f64> {
    let f = std::fs::File::open(dir).map_err(named(dir))?;
    let t = Instant::now();
    use std::os::fd::AsRawFd;
    crate::sys::sync_fs(f.as_raw_fd()).map_err(named(dir))?;
    Ok(t.elapsed().as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_read_remove() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("a/b");
        std::fs::create_dir_all(&d).unwrap();
        for i in 0..10 {
            write_file(&d.join(format!("f{i}")), &[i as u8; 3000], i % 2 == 0).unwrap();
        }
        let mut buf = vec![0u8; 1024];
        assert_eq!(read_file(&d.join("f3"), &mut buf).unwrap(), 3000);
        // find: three directories (the root, a, a/b), 2 + 10 entries below.
        let walked = ItemCounters::default();
        assert_eq!(walk_dirs(t.path(), &walked).unwrap(), 12);
        assert_eq!(walked.get(), (3, 0));
        assert_eq!(std::fs::read(d.join("f3")).unwrap(), vec![3u8; 3000]);
        let c = ItemCounters::default();
        remove_tree(t.path(), &c).unwrap();
        assert_eq!(c.get(), (10, 0));
        assert!(t.path().is_dir());
        assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
        assert!(sync_dir(t.path()).unwrap() >= 0.0);
        let e = read_file(&d.join("f3"), &mut buf).unwrap_err();
        assert!(e.to_string().contains("f3"), "{e}");
    }
}
