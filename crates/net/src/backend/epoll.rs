//! epoll(7), level-triggered.

use super::{Event, Interest, Poller, waited};
use std::io;
use std::os::fd::RawFd;

/// An epoll instance.
pub struct Epoll {
    epfd: RawFd,
    buf: Vec<libc::epoll_event>,
}

/// The events for `i`. A peer's half-close (EPOLLRDHUP) is asked for only
/// with reading: it is level-triggered, and a connection not being read
/// (its answers too far ahead of its reader) would be reported on every
/// wait.
fn mask(i: Interest) -> u32 {
    let mut m = 0;
    if i.read {
        m |= (libc::EPOLLIN | libc::EPOLLRDHUP) as u32;
    }
    if i.write {
        m |= libc::EPOLLOUT as u32;
    }
    m
}

impl Epoll {
    /// A new, empty epoll instance.
    pub fn new() -> io::Result<Epoll> {
        // SAFETY: plain syscall.
        let epfd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if epfd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Epoll {
            epfd,
            buf: vec![libc::epoll_event { events: 0, u64: 0 }; 1024],
        })
    }

    fn ctl(&mut self, op: libc::c_int, fd: RawFd, i: Interest) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: mask(i),
            u64: fd as u64,
        };
        // SAFETY: `ev` is a valid epoll_event.
        if unsafe { libc::epoll_ctl(self.epfd, op, fd, &mut ev) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

impl Poller for Epoll {
    fn add(&mut self, fd: RawFd, i: Interest) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_ADD, fd, i)
    }

    fn add_shared(&mut self, fd: RawFd) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: (libc::EPOLLIN | libc::EPOLLEXCLUSIVE) as u32,
            u64: fd as u64,
        };
        // SAFETY: `ev` is a valid epoll_event.
        if unsafe { libc::epoll_ctl(self.epfd, libc::EPOLL_CTL_ADD, fd, &mut ev) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    fn modify(&mut self, fd: RawFd, i: Interest) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_MOD, fd, i)
    }

    fn delete(&mut self, fd: RawFd) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_DEL, fd, Interest::default())
    }

    fn forget(&mut self, _fd: RawFd) -> io::Result<()> {
        // Closing the descriptor removes it (it is never shared).
        Ok(())
    }

    fn wait(&mut self, out: &mut Vec<Event>, timeout_ms: i32) -> io::Result<()> {
        // SAFETY: `buf` has room for `len` events.
        let n = unsafe {
            libc::epoll_wait(
                self.epfd,
                self.buf.as_mut_ptr(),
                self.buf.len() as libc::c_int,
                timeout_ms,
            )
        };
        let Some(n) = waited(n as libc::c_int)? else {
            return Ok(());
        };
        for e in &self.buf[..n] {
            let bits = e.events;
            out.push(Event {
                fd: e.u64 as RawFd,
                read: bits & (libc::EPOLLIN | libc::EPOLLRDHUP) as u32 != 0,
                write: bits & libc::EPOLLOUT as u32 != 0,
                hangup: bits & (libc::EPOLLHUP | libc::EPOLLERR) as u32 != 0,
            });
        }
        Ok(())
    }
}

impl Drop for Epoll {
    fn drop(&mut self) {
        // SAFETY: closing our own descriptor.
        unsafe { libc::close(self.epfd) };
    }
}
