//! `bind`: bind(port 0) on 127.0.0.1, von Leitner's way. A run opens its n
//! sockets first (untimed), then binds each of them in turn, as his bind
//! benchmark bound the sockets his socket benchmark had just opened: n is
//! the ports already bound, with all n sockets open throughout. The kernel
//! picks a free ephemeral port; the structure it searches can grow with
//! the ports bound, and each bind meets a socket made long before, so the
//! cost of reaching cold sockets is in the figure as it was in his.
//! [`bind-fresh`](super::bind_fresh) times the port search alone.

use super::{Benchmark, Info, Run, StartError, StepError, step_error};
use crate::ctx::Ctx;
use crate::harness::Resource;
use crate::harness::clock::Stopwatch;
use crate::sys::Knob;
use anyhow::anyhow;

/// The `bind` benchmark.
pub struct Bind;

static INFO: Info = Info {
    name: "bind",
    n_meaning: "ports in use (sockets this run has bound; all n sockets open)",
    timed: "bind() to 127.0.0.1 port 0 of the next of n sockets opened before the first bind \
            (von Leitner's method)",
    uses: &[Resource::Descriptors, Resource::Ports],
    knobs: &[Knob::PortRange, Knob::FilesPerProcess],
    quick_n: 10_000,
    full_n: 10_000,
};

struct BindRun {
    fds: Vec<i32>,
    bound: usize,
    addr: libc::sockaddr_in,
}

/// `127.0.0.1:0` as a sockaddr_in.
pub(crate) fn loopback_any_port() -> libc::sockaddr_in {
    // SAFETY: sockaddr_in is plain data; every field is set below.
    let mut a: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    a.sin_family = libc::AF_INET as libc::sa_family_t;
    a.sin_port = 0;
    a.sin_addr.s_addr = u32::from_ne_bytes([127, 0, 0, 1]);
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        a.sin_len = std::mem::size_of::<libc::sockaddr_in>() as u8;
    }
    a
}

/// A fresh, unbound TCP socket, or the error naming the call.
pub(crate) fn tcp_socket() -> Result<i32, std::io::Error> {
    // SAFETY: plain socket() call.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(fd)
}

/// Times one bind(fd, 127.0.0.1:0): `Ok` when it bound, the step error
/// (a limit for the port-range errnos) when it did not.
pub(crate) fn timed_bind(
    fd: i32,
    addr: &libc::sockaddr_in,
    held: u64,
    sw: &mut Stopwatch,
) -> Result<(), StepError> {
    let a = addr as *const libc::sockaddr_in as *const libc::sockaddr;
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    sw.start();
    // SAFETY: binding our own socket to a valid sockaddr_in.
    let r = unsafe { libc::bind(fd, a, len) };
    sw.stop();
    if r != 0 {
        return Err(step_error(
            "bind(127.0.0.1:0)",
            held,
            Resource::Ports,
            &[libc::EADDRINUSE, libc::EADDRNOTAVAIL, libc::ENOBUFS],
        ));
    }
    Ok(())
}

impl Benchmark for Bind {
    fn info(&self) -> &'static Info {
        &INFO
    }

    /// A bound socket cannot be unbound, and one made in its place would
    /// be a fresh socket, not one of the n opened before the first bind:
    /// runs only go up, and the harness re-times low n on a fresh run of
    /// n sockets after each run.
    fn downwards(&self) -> bool {
        false
    }

    fn start(&self, _ctx: &Ctx, _variant: Option<&str>, n: u64) -> Result<Box<dyn Run>, StartError> {
        let mut run = BindRun {
            fds: Vec::with_capacity(n as usize),
            bound: 0,
            addr: loopback_any_port(),
        };
        for _ in 0..n {
            let fd = tcp_socket()
                .map_err(|e| anyhow!("opening the {n} sockets to bind: socket(): {e}"))?;
            run.fds.push(fd);
        }
        Ok(Box::new(run))
    }
}

impl Run for BindRun {
    fn held(&self) -> u64 {
        self.bound as u64
    }

    fn op(&mut self, sw: &mut Stopwatch) -> Result<(), StepError> {
        let Some(&fd) = self.fds.get(self.bound) else {
            return Err(anyhow!("all {} sockets of the run are bound", self.fds.len()).into());
        };
        timed_bind(fd, &self.addr, self.held(), sw)?;
        self.bound += 1;
        Ok(())
    }

    /// Frees the port bound last by closing its socket and opening a
    /// fresh one in its slot (the profile windows of `run --why` repeat op
    /// and undo at one n; the fresh socket is not cold, which they say).
    fn undo(&mut self, _sw: &mut Stopwatch) -> Result<(), StepError> {
        if self.bound == 0 {
            return Ok(());
        }
        self.bound -= 1;
        // SAFETY: closing the socket the last op bound.
        unsafe { libc::close(self.fds[self.bound]) };
        // -1 when it failed: the next bind() then fails with EBADF and
        // closing -1 on drop is harmless.
        self.fds[self.bound] = -1;
        let fresh = tcp_socket().map_err(|e| anyhow!("socket(): {e}"))?;
        self.fds[self.bound] = fresh;
        Ok(())
    }
}

impl Drop for BindRun {
    fn drop(&mut self) {
        for &fd in &self.fds {
            // SAFETY: closing descriptors this run opened.
            unsafe { libc::close(fd) };
        }
    }
}
