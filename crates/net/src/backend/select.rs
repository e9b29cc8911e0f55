//! select(2): two bitmaps up to the highest descriptor are copied to the
//! kernel on every wait and scanned on return — O(highest fd) per wait.
//! Descriptors at or above FD_SETSIZE cannot be watched at all.

use super::{Event, Interest, Poller, waited};
use std::io;
use std::os::fd::RawFd;

/// FD_SETSIZE as a usize (its C type differs between systems).
#[allow(clippy::unnecessary_cast)]
const SETSIZE: usize = libc::FD_SETSIZE as usize;

/// The watched sets.
pub struct Select {
    read: libc::fd_set,
    write: libc::fd_set,
    watched: Vec<bool>,
    max: RawFd,
}

fn empty() -> libc::fd_set {
    // SAFETY: fd_set is plain data; FD_ZERO initialises it.
    unsafe {
        let mut s: libc::fd_set = std::mem::zeroed();
        libc::FD_ZERO(&mut s);
        s
    }
}

impl Select {
    /// Nothing watched yet.
    pub fn new() -> Select {
        Select {
            read: empty(),
            write: empty(),
            watched: vec![false; libc::FD_SETSIZE],
            max: -1,
        }
    }

    fn set(&mut self, fd: RawFd, i: Interest) {
        // SAFETY: 0 <= fd < FD_SETSIZE, checked by the callers.
        unsafe {
            if i.read {
                libc::FD_SET(fd, &mut self.read);
            } else {
                libc::FD_CLR(fd, &mut self.read);
            }
            if i.write {
                libc::FD_SET(fd, &mut self.write);
            } else {
                libc::FD_CLR(fd, &mut self.write);
            }
        }
    }

    fn check(&self, fd: RawFd) -> io::Result<()> {
        if fd < 0 || fd as usize >= libc::FD_SETSIZE {
            return Err(io::Error::other(format!(
                "select() cannot watch fd {fd}: descriptors must be below FD_SETSIZE = {SETSIZE}"
            )));
        }
        Ok(())
    }
}

impl Poller for Select {
    fn add(&mut self, fd: RawFd, i: Interest) -> io::Result<()> {
        self.check(fd)?;
        if self.watched[fd as usize] {
            return Err(io::Error::from_raw_os_error(libc::EEXIST));
        }
        self.watched[fd as usize] = true;
        self.set(fd, i);
        self.max = self.max.max(fd);
        Ok(())
    }

    fn modify(&mut self, fd: RawFd, i: Interest) -> io::Result<()> {
        self.check(fd)?;
        if !self.watched[fd as usize] {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("fd {fd} is not watched"),
            ));
        }
        self.set(fd, i);
        Ok(())
    }

    fn delete(&mut self, fd: RawFd) -> io::Result<()> {
        self.modify(fd, Interest::default())?;
        self.watched[fd as usize] = false;
        while self.max >= 0 && !self.watched[self.max as usize] {
            self.max -= 1;
        }
        Ok(())
    }

    fn wait(&mut self, out: &mut Vec<Event>, timeout_ms: i32) -> io::Result<()> {
        let mut r = self.read;
        let mut w = self.write;
        let mut tv = libc::timeval {
            tv_sec: (timeout_ms.max(0) / 1000) as _,
            tv_usec: ((timeout_ms.max(0) % 1000) * 1000) as _,
        };
        let tvp = if timeout_ms < 0 {
            std::ptr::null_mut()
        } else {
            &mut tv as *mut libc::timeval
        };
        // SAFETY: the sets are valid fd_sets covering max + 1 descriptors.
        let n = unsafe { libc::select(self.max + 1, &mut r, &mut w, std::ptr::null_mut(), tvp) };
        let Some(n) = waited(n as libc::c_int)? else {
            return Ok(());
        };
        if n == 0 {
            return Ok(());
        }
        for fd in 0..=self.max {
            // SAFETY: fd < FD_SETSIZE.
            let (rd, wr) = unsafe { (libc::FD_ISSET(fd, &r), libc::FD_ISSET(fd, &w)) };
            if rd || wr {
                out.push(Event {
                    fd,
                    read: rd,
                    write: wr,
                    hangup: false,
                });
            }
        }
        Ok(())
    }
}
