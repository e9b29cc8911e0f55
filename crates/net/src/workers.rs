//! Serving with several worker processes, as the seeds' server did: either
//! one listening socket shared by all workers (bound before they are
//! forked; epoll wakes one worker per connection), or one socket per worker
//! on the same port with SO_REUSEPORT. Workers die with their parent; the
//! parent stops them (SIGTERM) and reaps them when it stops serving.

use super::engine;
use super::server::{Config, Handler, Stats};
use super::sock;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

/// Where and how to listen.
#[derive(Debug, Clone, Copy)]
pub struct Listen {
    /// Address (port 0: any free port).
    pub addr: SocketAddr,
    /// Worker processes, at least 1 (the calling process is the first).
    pub workers: usize,
    /// One SO_REUSEPORT socket per worker instead of one shared socket.
    pub reuseport: bool,
    /// Listen backlog.
    pub backlog: i32,
}

/// The listening sockets for `l` and the address they are bound to.
pub fn bind(l: &Listen) -> io::Result<(Vec<OwnedFd>, SocketAddr)> {
    let first = sock::listen_with(&l.addr, l.backlog, l.reuseport)?;
    let bound = sock::local_addr(first.as_raw_fd())?;
    let mut all = vec![first];
    if l.reuseport {
        for _ in 1..l.workers.max(1) {
            all.push(sock::listen_with(&bound, l.backlog, true)?);
        }
    }
    Ok((all, bound))
}

/// Forks the extra workers and serves in all of them until `control`
/// reports end of input; returns the calling process's stats.
pub fn serve_all(
    listeners: Vec<OwnedFd>,
    workers: usize,
    mut cfg: Config,
    control: Option<RawFd>,
    mut handler: impl FnMut() -> Box<dyn Handler>,
) -> io::Result<Stats> {
    let workers = workers.max(1);
    cfg.shared_listener = listeners.len() == 1 && workers > 1;
    let mut children = Vec::new();
    for w in 1..workers {
        // SAFETY: the process is single-threaded here; the child only runs
        // the serve loop and exits without returning.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            let e = io::Error::last_os_error();
            stop(&children);
            return Err(e);
        }
        if pid == 0 {
            sys::die_with_parent(libc::SIGTERM);
            let fd = listeners.get(w).unwrap_or(&listeners[0]).as_raw_fd();
            let mut h = handler();
            let code = match engine::serve(fd, control, cfg, h.as_mut()) {
                Ok(_) => 0,
                Err(_) => 1,
            };
            // SAFETY: ends the worker without running the parent's destructors.
            unsafe { libc::_exit(code) };
        }
        children.push(pid);
    }
    let mut h = handler();
    let r = engine::serve(listeners[0].as_raw_fd(), control, cfg, h.as_mut());
    stop(&children);
    r
}

/// SIGTERM to each worker, then reap them.
fn stop(children: &[i32]) {
    for &pid in children {
        // SAFETY: signalling our own children.
        unsafe { libc::kill(pid, libc::SIGTERM) };
    }
    for &pid in children {
        reap(pid);
    }
}

/// Waits for child `pid` to end (through EINTR); its wait status.
pub(crate) fn reap(pid: i32) -> i32 {
    let mut st = 0;
    // SAFETY: reaping our own child.
    while unsafe { libc::waitpid(pid, &mut st, 0) } < 0
        && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
    {}
    st
}

/// Standard input as a control descriptor, if it is a pipe or socket (a
/// terminal is left alone: the user stops the server with ^C), made
/// non-blocking.
pub fn stdin_control() -> Option<RawFd> {
    // SAFETY: fstat on fd 0 into a plain struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(0, &mut st) } != 0 {
        return None;
    }
    let kind = st.st_mode & libc::S_IFMT;
    if kind != libc::S_IFIFO && kind != libc::S_IFSOCK {
        return None;
    }
    // Non-blocking: every worker process watches it, and the one woken
    // for a line another has read must not wait in read().
    // SAFETY: fcntl on fd 0, which exists (fstat above).
    unsafe {
        let fl = libc::fcntl(0, libc::F_GETFL);
        if fl >= 0 {
            libc::fcntl(0, libc::F_SETFL, fl | libc::O_NONBLOCK);
        }
    }
    Some(0)
}
