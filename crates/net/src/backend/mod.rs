//! Event backends: one small interface ([`Poller`]) over epoll, poll,
//! select and kqueue, each written with raw `libc` calls because the
//! backend is what the network benchmarks measure.
//!
//! All backends are level-triggered: an fd that stays readable is reported
//! on every wait, the way poll and select behave, so the server above them
//! is written once.

#[cfg(any(target_os = "linux", target_os = "android"))]
mod epoll;
#[cfg(any(
    target_os = "freebsd",
    target_os = "netbsd",
    target_os = "openbsd",
    target_os = "dragonfly",
    target_vendor = "apple"
))]
mod kqueue;
mod poll;
mod select;

use std::os::fd::RawFd;

/// What to be told about for one descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Interest {
    /// Readable (or a connection to accept, or end of input).
    pub read: bool,
    /// Writable.
    pub write: bool,
}

impl Interest {
    /// Readable only.
    pub const READ: Interest = Interest {
        read: true,
        write: false,
    };
    /// Readable and writable.
    pub const BOTH: Interest = Interest {
        read: true,
        write: true,
    };
}

/// One readiness report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// The descriptor.
    pub fd: RawFd,
    /// It can be read (or accepted on) without blocking.
    pub read: bool,
    /// It can be written without blocking.
    pub write: bool,
    /// The peer hung up or the descriptor is in error.
    pub hangup: bool,
}

/// A readiness-notification mechanism.
pub trait Poller {
    /// Starts watching `fd`.
    fn add(&mut self, fd: RawFd, interest: Interest) -> std::io::Result<()>;
    /// Starts watching a listening socket that other processes wait on
    /// too; where the backend can (epoll's EPOLLEXCLUSIVE), only one of
    /// them is woken per connection.
    fn add_shared(&mut self, fd: RawFd) -> std::io::Result<()> {
        self.add(fd, Interest::READ)
    }

    /// Changes what is watched for `fd`.
    fn modify(&mut self, fd: RawFd, interest: Interest) -> std::io::Result<()>;
    /// Stops watching `fd` (call before closing it).
    fn delete(&mut self, fd: RawFd) -> std::io::Result<()>;

    /// Forgets `fd`, which is about to be closed. Backends whose kernel
    /// drops a descriptor by itself when it is closed (epoll, kqueue) skip
    /// the system call.
    fn forget(&mut self, fd: RawFd) -> std::io::Result<()> {
        self.delete(fd)
    }
    /// Waits up to `timeout_ms` (-1: forever) and appends what is ready to
    /// `out`. An interrupted wait (EINTR) returns `Ok` with nothing added.
    fn wait(&mut self, out: &mut Vec<Event>, timeout_ms: i32) -> std::io::Result<()>;
}

/// The event backends scalebench knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Backend {
    /// Linux epoll(7).
    Epoll,
    /// BSD and macOS kqueue(2).
    Kqueue,
    /// poll(2): every wait passes every descriptor.
    Poll,
    /// select(2): every wait passes bitmaps up to the highest descriptor;
    /// descriptors at or above FD_SETSIZE cannot be watched.
    Select,
}

impl Backend {
    /// Every backend, the scalable ones first.
    pub const ALL: [Backend; 4] = [
        Backend::Epoll,
        Backend::Kqueue,
        Backend::Poll,
        Backend::Select,
    ];

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Epoll => "epoll",
            Backend::Kqueue => "kqueue",
            Backend::Poll => "poll",
            Backend::Select => "select",
        }
    }

    /// Parses [`Backend::name`].
    pub fn parse(s: &str) -> Option<Backend> {
        Backend::ALL.into_iter().find(|b| b.name() == s)
    }

    /// Whether this OS has it.
    pub fn available(self) -> bool {
        match self {
            Backend::Epoll => cfg!(any(target_os = "linux", target_os = "android")),
            Backend::Kqueue => cfg!(any(
                target_os = "freebsd",
                target_os = "netbsd",
                target_os = "openbsd",
                target_os = "dragonfly",
                target_vendor = "apple"
            )),
            Backend::Poll | Backend::Select => true,
        }
    }

    /// Every backend this OS has.
    pub fn available_all() -> Vec<Backend> {
        Backend::ALL.into_iter().filter(|b| b.available()).collect()
    }

    /// The highest descriptor number + 1 the backend can watch, when it
    /// has such a limit (select: FD_SETSIZE).
    pub fn fd_ceiling(self) -> Option<usize> {
        match self {
            Backend::Select => Some(libc::FD_SETSIZE),
            _ => None,
        }
    }

    /// Creates a poller of this kind.
    pub fn create(self) -> std::io::Result<Box<dyn Poller>> {
        match self {
            #[cfg(any(target_os = "linux", target_os = "android"))]
            Backend::Epoll => Ok(Box::new(epoll::Epoll::new()?)),
            #[cfg(any(
                target_os = "freebsd",
                target_os = "netbsd",
                target_os = "openbsd",
                target_os = "dragonfly",
                target_vendor = "apple"
            ))]
            Backend::Kqueue => Ok(Box::new(kqueue::Kqueue::new()?)),
            Backend::Poll => Ok(Box::new(poll::Poll::new())),
            Backend::Select => Ok(Box::new(select::Select::new())),
            #[allow(unreachable_patterns)]
            other => Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                format!("the {} backend does not exist on this OS", other.name()),
            )),
        }
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The result of a wait call: `Ok(Some(count))`, `Ok(None)` when a signal
/// interrupted it (EINTR: nothing is ready), or the error.
pub(crate) fn waited(r: libc::c_int) -> std::io::Result<Option<usize>> {
    if r >= 0 {
        return Ok(Some(r as usize));
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EINTR) {
        Ok(None)
    } else {
        Err(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    fn wait_for(p: &mut dyn Poller, fd: RawFd) -> Vec<Event> {
        let mut ev = Vec::new();
        for _ in 0..50 {
            p.wait(&mut ev, 100).unwrap();
            if ev.iter().any(|e| e.fd == fd) {
                break;
            }
        }
        ev.into_iter().filter(|e| e.fd == fd).collect()
    }

    #[test]
    fn every_backend_reports_read_write_and_hangup() {
        for b in Backend::available_all() {
            let mut p = b.create().unwrap();
            let (mut a, mut c) = UnixStream::pair().unwrap();
            let fd = a.as_raw_fd();
            p.add(fd, Interest::READ).unwrap();
            let mut ev = Vec::new();
            p.wait(&mut ev, 0).unwrap();
            assert!(ev.is_empty(), "{b}: nothing ready yet: {ev:?}");
            c.write_all(b"x").unwrap();
            let e = wait_for(p.as_mut(), fd);
            assert!(e.iter().any(|e| e.read), "{b}: readable");
            // Level-triggered: still reported until read.
            let e = wait_for(p.as_mut(), fd);
            assert!(e.iter().any(|e| e.read), "{b}: still readable");
            let mut buf = [0u8; 8];
            assert_eq!(a.read(&mut buf).unwrap(), 1);
            p.modify(fd, Interest::BOTH).unwrap();
            let e = wait_for(p.as_mut(), fd);
            assert!(e.iter().any(|e| e.write), "{b}: writable");
            p.modify(fd, Interest::READ).unwrap();
            drop(c);
            let e = wait_for(p.as_mut(), fd);
            assert!(e.iter().any(|e| e.read || e.hangup), "{b}: hang-up seen");
            p.delete(fd).unwrap();
            let mut ev = Vec::new();
            p.wait(&mut ev, 0).unwrap();
            assert!(
                ev.iter().all(|e| e.fd != fd),
                "{b}: deleted fd not reported"
            );
        }
    }

    #[test]
    fn many_descriptors_are_reported_exactly() {
        let _turn = crate::many_descriptors();
        for b in Backend::available_all() {
            let mut p = b.create().unwrap();
            let pairs: Vec<(UnixStream, UnixStream)> =
                (0..200).map(|_| UnixStream::pair().unwrap()).collect();
            for (a, _) in &pairs {
                p.add(a.as_raw_fd(), Interest::READ).unwrap();
            }
            for (_, c) in pairs.iter().step_by(7) {
                (&*c).write_all(b"y").unwrap();
            }
            let want: Vec<RawFd> = pairs
                .iter()
                .step_by(7)
                .map(|(a, _)| a.as_raw_fd())
                .collect();
            let mut ev = Vec::new();
            for _ in 0..20 {
                ev.clear();
                p.wait(&mut ev, 100).unwrap();
                if ev.len() >= want.len() {
                    break;
                }
            }
            let mut got: Vec<RawFd> = ev.iter().filter(|e| e.read).map(|e| e.fd).collect();
            got.sort_unstable();
            let mut want = want;
            want.sort_unstable();
            assert_eq!(got, want, "{b}");
        }
    }

    #[test]
    fn select_refuses_descriptors_beyond_fd_setsize() {
        let mut p = Backend::Select.create().unwrap();
        let err = p
            .add(libc::FD_SETSIZE as RawFd, Interest::READ)
            .unwrap_err();
        assert!(err.to_string().contains("FD_SETSIZE"), "{err}");
    }
}
