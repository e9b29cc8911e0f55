//! Advisory locks on whole files (`flock(2)`, on every OS scalebench
//! runs on), for the rust-version this workspace keeps (`File::lock`
//! is newer). A lock goes with the open file: closed, it is released.

use std::fs::File;
use std::os::fd::AsRawFd;

/// How a file is locked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// One holder only.
    Exclusive,
    /// Any number of shared holders, no exclusive one.
    Shared,
}

/// Locks `f`, waiting while another open file holds a conflicting lock
/// (a signal interrupting the wait ends it with `Interrupted`).
pub fn lock(f: &File, kind: Kind) -> std::io::Result<()> {
    flock(f, op(kind))
}

/// Locks `f` if no other open file holds a conflicting lock: `false`
/// when one does.
pub fn try_lock(f: &File, kind: Kind) -> std::io::Result<bool> {
    match flock(f, op(kind) | libc::LOCK_NB) {
        Ok(()) => Ok(true),
        Err(e) if e.raw_os_error() == Some(libc::EWOULDBLOCK) => Ok(false),
        Err(e) => Err(e),
    }
}

fn op(kind: Kind) -> libc::c_int {
    match kind {
        Kind::Exclusive => libc::LOCK_EX,
        Kind::Shared => libc::LOCK_SH,
    }
}

fn flock(f: &File, op: libc::c_int) -> std::io::Result<()> {
    // SAFETY: flock on a descriptor `f` owns, open for its lifetime.
    if unsafe { libc::flock(f.as_raw_fd(), op) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exclusive_lock_keeps_others_out_until_it_is_closed() {
        let t = tempfile::NamedTempFile::new().unwrap();
        let open = || File::open(t.path()).unwrap();
        let (a, b) = (open(), open());
        assert!(try_lock(&a, Kind::Shared).unwrap());
        assert!(try_lock(&b, Kind::Shared).unwrap(), "shared by two");
        let c = open();
        assert!(!try_lock(&c, Kind::Exclusive).unwrap());
        drop((a, b));
        assert!(try_lock(&c, Kind::Exclusive).unwrap());
        assert!(!try_lock(&open(), Kind::Shared).unwrap());
        drop(c);
        lock(&open(), Kind::Exclusive).unwrap();
    }
}
