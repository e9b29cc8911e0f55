//! kqueue(2) on the BSDs and macOS: one read and one write filter per
//! descriptor, the write filter enabled only while asked for.

use super::{Event, Interest, Poller, waited};
use std::io;
use std::os::fd::RawFd;

/// A kqueue.
pub struct Kqueue {
    kq: RawFd,
    buf: Vec<libc::kevent>,
}

fn kev(fd: RawFd, filter: i32, flags: u32) -> libc::kevent {
    // SAFETY: kevent is plain data; the fields that matter are set below.
    let mut k: libc::kevent = unsafe { std::mem::zeroed() };
    k.ident = fd as _;
    k.filter = filter as _;
    k.flags = flags as _;
    k
}

impl Kqueue {
    /// A new, empty kqueue.
    pub fn new() -> io::Result<Kqueue> {
        // SAFETY: plain syscall.
        let kq = unsafe { libc::kqueue() };
        if kq < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Kqueue {
            kq,
            // SAFETY: kevent is plain data.
            buf: vec![unsafe { std::mem::zeroed() }; 1024],
        })
    }

    fn apply(&mut self, changes: &[libc::kevent]) -> io::Result<()> {
        // SAFETY: `changes` is a valid array; no events are returned.
        let r = unsafe {
            libc::kevent(
                self.kq,
                changes.as_ptr(),
                changes.len() as _,
                std::ptr::null_mut(),
                0,
                std::ptr::null(),
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    fn set(&mut self, fd: RawFd, i: Interest, add: bool) -> io::Result<()> {
        let base = if add { libc::EV_ADD as u32 } else { 0 };
        let on = |b: bool| {
            if b {
                libc::EV_ENABLE as u32
            } else {
                libc::EV_DISABLE as u32
            }
        };
        let changes = [
            kev(
                fd,
                libc::EVFILT_READ as i32,
                libc::EV_ADD as u32 | on(i.read),
            ),
            kev(
                fd,
                libc::EVFILT_WRITE as i32,
                base | libc::EV_ADD as u32 | on(i.write),
            ),
        ];
        self.apply(&changes)
    }
}

impl Poller for Kqueue {
    fn add(&mut self, fd: RawFd, i: Interest) -> io::Result<()> {
        self.set(fd, i, true)
    }

    fn modify(&mut self, fd: RawFd, i: Interest) -> io::Result<()> {
        self.set(fd, i, false)
    }

    fn delete(&mut self, fd: RawFd) -> io::Result<()> {
        let changes = [
            kev(fd, libc::EVFILT_READ as i32, libc::EV_DELETE as u32),
            kev(fd, libc::EVFILT_WRITE as i32, libc::EV_DELETE as u32),
        ];
        self.apply(&changes)
    }

    fn forget(&mut self, _fd: RawFd) -> io::Result<()> {
        // Closing the descriptor removes it (it is never shared).
        Ok(())
    }

    fn wait(&mut self, out: &mut Vec<Event>, timeout_ms: i32) -> io::Result<()> {
        let ts = libc::timespec {
            tv_sec: (timeout_ms.max(0) / 1000) as _,
            tv_nsec: ((timeout_ms.max(0) % 1000) as i64 * 1_000_000) as _,
        };
        let tsp = if timeout_ms < 0 {
            std::ptr::null()
        } else {
            &ts as *const libc::timespec
        };
        // SAFETY: `buf` has room for `len` events.
        let n = unsafe {
            libc::kevent(
                self.kq,
                std::ptr::null(),
                0,
                self.buf.as_mut_ptr(),
                self.buf.len() as _,
                tsp,
            )
        };
        let Some(n) = waited(n as libc::c_int)? else {
            return Ok(());
        };
        for k in &self.buf[..n] {
            let filter = k.filter as i32;
            let flags = k.flags as u32;
            out.push(Event {
                fd: k.ident as RawFd,
                read: filter == libc::EVFILT_READ as i32,
                write: filter == libc::EVFILT_WRITE as i32,
                hangup: flags & (libc::EV_EOF as u32 | libc::EV_ERROR as u32) != 0,
            });
        }
        Ok(())
    }
}

impl Drop for Kqueue {
    fn drop(&mut self) {
        // SAFETY: closing our own descriptor.
        unsafe { libc::close(self.kq) };
    }
}
