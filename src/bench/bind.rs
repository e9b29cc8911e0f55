//! `bind`: bind(port 0) on 127.0.0.1 with n ports already bound by this
//! run. The kernel picks a free ephemeral port; the data structure it
//! searches is what can grow with n.

use super::{Benchmark, Info, Run, StartError, StepError, step_error};
use crate::harness::clock::Stopwatch;
use crate::ctx::Ctx;
use crate::harness::Resource;
use crate::sys::Knob;
use anyhow::anyhow;

/// The `bind` benchmark.
pub struct Bind;

static INFO: Info = Info {
    name: "bind",
    n_meaning: "ports in use (sockets this run has bound)",
    timed: "bind() to 127.0.0.1 port 0 of a fresh, unbound TCP socket",
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

impl Benchmark for Bind {
    fn info(&self) -> &'static Info {
        &INFO
    }

    /// Closing the socket bound last (and putting a fresh one in its slot)
    /// frees its port.
    fn downwards(&self) -> bool {
        true
    }

    fn start(&self, _ctx: &Ctx, _variant: Option<&str>, n: u64) -> Result<Box<dyn Run>, StartError> {
        let mut run = BindRun {
            fds: Vec::with_capacity(n as usize),
            bound: 0,
            addr: loopback_any_port(),
        };
        // The sockets are created untimed, before the first bind.
        for _ in 0..n {
            // SAFETY: plain socket() call.
            let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) };
            if fd < 0 {
                let e = std::io::Error::last_os_error();
                return Err(anyhow!("creating the sockets to bind: socket(): {e}").into());
            }
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
        let addr = &self.addr as *const libc::sockaddr_in as *const libc::sockaddr;
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        sw.start();
        // SAFETY: binding our own socket to a valid sockaddr_in.
        let r = unsafe { libc::bind(fd, addr, len) };
        sw.stop();
        if r != 0 {
            return Err(step_error(
                "bind(127.0.0.1:0)",
                self.held(),
                Resource::Ports,
                &[libc::EADDRINUSE, libc::EADDRNOTAVAIL, libc::ENOBUFS],
            ));
        }
        self.bound += 1;
        Ok(())
    }

    /// Closes the socket just bound and puts a fresh one in its place.
    /// Closing first lets the fresh socket take the same descriptor, so
    /// that the run holds exactly what it held one bind earlier (and needs
    /// no descriptor more at a descriptor limit).
    fn undo(&mut self, _sw: &mut Stopwatch) -> Result<(), StepError> {
        if self.bound == 0 {
            return Ok(());
        }
        self.bound -= 1;
        // SAFETY: closing the socket the last op bound.
        unsafe { libc::close(self.fds[self.bound]) };
        // SAFETY: plain socket() call.
        let fresh = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) };
        // -1 when it failed: the next bind() then fails with EBADF and
        // closing -1 on drop is harmless.
        self.fds[self.bound] = fresh;
        if fresh < 0 {
            return Err(anyhow!("socket(): {}", std::io::Error::last_os_error()).into());
        }
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
