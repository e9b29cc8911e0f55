//! A process per connection, as the seeds' fnord ran under tcpserver: the
//! parent accepts, forks a child for each connection, and the child serves
//! that connection alone with blocking reads and writes until it closes,
//! then exits. The cost of a fork (and of reaping it) is in every
//! connection — what the seeds compared event-driven servers against.

use super::errcount::listener_broken;
use super::output::Flushed;
use super::server::{Config, Exchange, Handler, Stats, count_accept_error};
use super::sock;
use std::io;
use std::os::fd::RawFd;
use std::time::Duration;

/// How long a connection's child waits for a request before it closes
/// (the config's idle timeout, if it has one).
const IDLE: Duration = Duration::from_secs(10);

/// Most children alive at once; beyond, accepting waits for one to end.
const MOST_CHILDREN: usize = 10_000;

/// Serves on `listener` (non-blocking) with a child process per
/// connection until `control` reports end of input (or `cfg.stop` says
/// so); every child is ended and reaped before it returns. `handler`
/// answers in the children (each has its own copy).
pub fn serve(
    listener: RawFd,
    control: Option<RawFd>,
    cfg: Config,
    handler: &mut dyn Handler,
) -> io::Result<Stats> {
    let mut stats = Stats::default();
    let mut children: Vec<i32> = Vec::new();
    let result = accept_loop(listener, control, &cfg, handler, &mut stats, &mut children);
    for &pid in &children {
        // SAFETY: signalling our own child, not yet reaped.
        unsafe { libc::kill(pid, libc::SIGTERM) };
    }
    for &pid in &children {
        super::workers::reap(pid);
        stats.closed += 1;
    }
    result.map(|()| stats)
}

/// The parent's loop: waits for connections and for the control input,
/// forks a child per connection, reaps the children that ended.
fn accept_loop(
    listener: RawFd,
    control: Option<RawFd>,
    cfg: &Config,
    handler: &mut dyn Handler,
    stats: &mut Stats,
    children: &mut Vec<i32>,
) -> io::Result<()> {
    loop {
        reap_ended(children, stats);
        if cfg.stop.is_some_and(|f| f()) {
            return Ok(());
        }
        let mut fds = vec![libc::pollfd {
            fd: listener,
            events: if children.len() < MOST_CHILDREN {
                libc::POLLIN
            } else {
                0
            },
            revents: 0,
        }];
        if let Some(c) = control {
            fds.push(libc::pollfd {
                fd: c,
                events: libc::POLLIN,
                revents: 0,
            });
        }
        // SAFETY: polling our own array of pollfds.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 100) };
        if n <= 0 {
            continue;
        }
        if fds.get(1).is_some_and(|p| p.revents != 0) {
            let mut b = [0u8; 64];
            match sock::read(fds[1].fd, &mut b) {
                Ok(0) => return Ok(()),
                Ok(k) => {
                    if let Some(t) = cfg.accept_errors {
                        t.answer(&b[..k]);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Ok(()),
            }
        }
        if fds[0].revents != 0 {
            accept_one(listener, cfg, handler, stats, children)?;
        }
    }
}

/// Accepts one connection and forks its child; a failed accept is
/// counted by errno (only a broken listener ends the loop).
fn accept_one(
    listener: RawFd,
    cfg: &Config,
    handler: &mut dyn Handler,
    stats: &mut Stats,
    children: &mut Vec<i32>,
) -> io::Result<()> {
    let fd = match sock::accept(listener) {
        Ok(fd) => fd,
        Err(e) => {
            let errno = e.raw_os_error().unwrap_or(0);
            if errno == libc::EAGAIN || errno == libc::EINTR {
                return Ok(());
            }
            count_accept_error(stats, cfg, errno);
            if listener_broken(errno) {
                return Err(e);
            }
            if matches!(
                errno,
                libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM
            ) {
                stats.accept_pauses += 1;
                std::thread::sleep(cfg.accept_pause);
            }
            return Ok(());
        }
    };
    stats.accepted += 1;
    // SAFETY: the parent is single-threaded; the child serves the
    // connection and exits without returning.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        sys::die_with_parent(libc::SIGTERM);
        // SAFETY: the child's copy of the listener is not its to use.
        unsafe { libc::close(listener) };
        let code = serve_connection(fd, cfg, handler);
        // SAFETY: ends the child without running the parent's destructors.
        unsafe { libc::_exit(code) };
    }
    // SAFETY: the child has its copy; the parent's is closed either way.
    unsafe { libc::close(fd) };
    if pid < 0 {
        // Out of processes: the connection is closed unanswered.
        count_accept_error(
            stats,
            cfg,
            io::Error::last_os_error().raw_os_error().unwrap_or(0),
        );
        return Ok(());
    }
    children.push(pid);
    Ok(())
}

/// Reaps the children that have ended.
fn reap_ended(children: &mut Vec<i32>, stats: &mut Stats) {
    loop {
        let mut st = 0;
        // SAFETY: reaping our own children without waiting.
        let pid = unsafe { libc::waitpid(-1, &mut st, libc::WNOHANG) };
        if pid <= 0 {
            return;
        }
        if let Some(i) = children.iter().position(|&p| p == pid) {
            children.swap_remove(i);
            stats.closed += 1;
        }
    }
}

/// The child: answers the requests on `fd` (blocking) until the peer
/// closes, the handler closes, or it is idle too long; its exit status.
fn serve_connection(fd: RawFd, cfg: &Config, handler: &mut dyn Handler) -> i32 {
    set_blocking(fd, cfg.idle_timeout.unwrap_or(IDLE));
    let mut ex = Exchange::new(sys::coarse_now());
    let mut stats = Stats::default();
    let mut out = super::output::Output::default();
    let mut input: Vec<u8> = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    let mut file_buf = Vec::new();
    let greeting = handler.greeting();
    if !greeting.is_empty() {
        out.bytes(greeting);
    }
    loop {
        let used = handler.answer(&input, &mut ex, cfg, &mut stats, &mut out);
        input.drain(..used);
        match out.flush(fd, cfg.file_mode, &mut file_buf, ex.close_after) {
            Ok(Flushed::Done) => {}
            _ => break,
        }
        if ex.close_after {
            break;
        }
        match sock::read(fd, &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(k) => input.extend_from_slice(&buf[..k]),
        }
    }
    // SAFETY: closing the connection this child served.
    unsafe { libc::close(fd) };
    0
}

/// Makes `fd` blocking, with `idle` as its receive and send timeout.
fn set_blocking(fd: RawFd, idle: Duration) {
    // SAFETY: timeval is plain data; both fields are set below.
    let mut tv: libc::timeval = unsafe { std::mem::zeroed() };
    tv.tv_sec = idle.as_secs().min(86_400) as _;
    tv.tv_usec = idle.subsec_micros() as _;
    // SAFETY: fcntl and setsockopt on our own socket with valid arguments.
    unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        if fl >= 0 {
            libc::fcntl(fd, libc::F_SETFL, fl & !libc::O_NONBLOCK);
        }
        for opt in [libc::SO_RCVTIMEO, libc::SO_SNDTIMEO] {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                opt,
                &tv as *const libc::timeval as *const libc::c_void,
                std::mem::size_of::<libc::timeval>() as libc::socklen_t,
            );
        }
    }
}
