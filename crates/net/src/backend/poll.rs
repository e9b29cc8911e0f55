//! poll(2): the whole descriptor array goes to the kernel on every wait, and
//! the answer is scanned in full — O(n) per wait by design.

use super::{Event, Interest, Poller, waited};
use std::io;
use std::os::fd::RawFd;

/// The array of watched descriptors.
pub struct Poll {
    fds: Vec<libc::pollfd>,
    /// Slot of each fd in `fds`, indexed by fd (usize::MAX: not watched).
    slot: Vec<usize>,
}

fn events(i: Interest) -> libc::c_short {
    let mut e = 0;
    if i.read {
        e |= libc::POLLIN;
    }
    if i.write {
        e |= libc::POLLOUT;
    }
    e
}

impl Poll {
    /// Nothing watched yet.
    pub fn new() -> Poll {
        Poll {
            fds: Vec::new(),
            slot: Vec::new(),
        }
    }

    fn slot_of(&self, fd: RawFd) -> Option<usize> {
        self.slot
            .get(fd as usize)
            .copied()
            .filter(|&s| s != usize::MAX)
    }
}

fn not_watched(fd: RawFd) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, format!("fd {fd} is not watched"))
}

impl Poller for Poll {
    fn add(&mut self, fd: RawFd, i: Interest) -> io::Result<()> {
        if fd < 0 {
            return Err(io::Error::from_raw_os_error(libc::EBADF));
        }
        if self.slot_of(fd).is_some() {
            return Err(io::Error::from_raw_os_error(libc::EEXIST));
        }
        let idx = fd as usize;
        if self.slot.len() <= idx {
            self.slot.resize(idx + 1, usize::MAX);
        }
        self.slot[idx] = self.fds.len();
        self.fds.push(libc::pollfd {
            fd,
            events: events(i),
            revents: 0,
        });
        Ok(())
    }

    fn modify(&mut self, fd: RawFd, i: Interest) -> io::Result<()> {
        let s = self.slot_of(fd).ok_or_else(|| not_watched(fd))?;
        self.fds[s].events = events(i);
        Ok(())
    }

    fn delete(&mut self, fd: RawFd) -> io::Result<()> {
        let s = self.slot_of(fd).ok_or_else(|| not_watched(fd))?;
        self.fds.swap_remove(s);
        if let Some(moved) = self.fds.get(s) {
            self.slot[moved.fd as usize] = s;
        }
        self.slot[fd as usize] = usize::MAX;
        Ok(())
    }

    fn wait(&mut self, out: &mut Vec<Event>, timeout_ms: i32) -> io::Result<()> {
        // SAFETY: `fds` is a valid array of `len` pollfd structs.
        let n = unsafe {
            libc::poll(
                self.fds.as_mut_ptr(),
                self.fds.len() as libc::nfds_t,
                timeout_ms,
            )
        };
        let Some(n) = waited(n as libc::c_int)? else {
            return Ok(());
        };
        if n == 0 {
            return Ok(());
        }
        for p in &self.fds {
            let r = p.revents;
            if r != 0 {
                out.push(Event {
                    fd: p.fd,
                    read: r & libc::POLLIN != 0,
                    write: r & libc::POLLOUT != 0,
                    hangup: r & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0,
                });
            }
        }
        Ok(())
    }
}
