//! `bind-fresh`: bind(port 0) on 127.0.0.1 of a socket opened (untimed)
//! just before, with n ports already bound by this run. Every timed bind
//! meets a socket still warm in the caches, so what is left to grow with
//! n is the kernel's search for a free ephemeral port — the figure
//! [`bind`](super::bind), von Leitner's method, mixes with the cost of
//! reaching sockets opened long before. Runs go up and down: closing the
//! socket bound last frees its port.

use super::bind::{loopback_any_port, tcp_socket, timed_bind};
use super::{Benchmark, Info, Run, StartError, StepError, step_error_for};
use crate::ctx::Ctx;
use crate::harness::Resource;
use crate::harness::clock::Stopwatch;
use crate::sys::Knob;

/// The `bind-fresh` benchmark.
pub struct BindFresh;

static INFO: Info = Info {
    name: "bind-fresh",
    n_meaning: "ports in use (sockets this run has bound)",
    timed: "bind() to 127.0.0.1 port 0 of a TCP socket opened (untimed) just before",
    uses: &[Resource::Descriptors, Resource::Ports],
    knobs: &[Knob::PortRange, Knob::FilesPerProcess],
    quick_n: 10_000,
    full_n: 10_000,
};

struct BindFreshRun {
    bound: Vec<i32>,
    addr: libc::sockaddr_in,
}

impl Benchmark for BindFresh {
    fn info(&self) -> &'static Info {
        &INFO
    }

    /// Closing the socket bound last frees its port.
    fn downwards(&self) -> bool {
        true
    }

    /// bind with sockets opened long before: the two differ by what cold
    /// sockets add (docs/measurements.md).
    fn pairs_with(&self) -> Option<&'static str> {
        Some("bind")
    }

    fn start(&self, _ctx: &Ctx, _variant: Option<&str>, n: u64) -> Result<Box<dyn Run>, StartError> {
        Ok(Box::new(BindFreshRun {
            bound: Vec::with_capacity(n as usize),
            addr: loopback_any_port(),
        }))
    }
}

impl Run for BindFreshRun {
    fn held(&self) -> u64 {
        self.bound.len() as u64
    }

    fn op(&mut self, sw: &mut Stopwatch) -> Result<(), StepError> {
        let held = self.held();
        let fd = tcp_socket().map_err(|e| {
            step_error_for(
                "socket()",
                held,
                Resource::Descriptors,
                &[libc::EMFILE, libc::ENFILE, libc::ENOBUFS, libc::ENOMEM],
                e.raw_os_error().unwrap_or(0),
            )
        })?;
        if let Err(e) = timed_bind(fd, &self.addr, held, sw) {
            // SAFETY: closing the socket that did not bind.
            unsafe { libc::close(fd) };
            return Err(e);
        }
        self.bound.push(fd);
        Ok(())
    }

    fn undo(&mut self, _sw: &mut Stopwatch) -> Result<(), StepError> {
        if let Some(fd) = self.bound.pop() {
            // SAFETY: closing the socket the last op bound.
            unsafe { libc::close(fd) };
        }
        Ok(())
    }
}

impl Drop for BindFreshRun {
    fn drop(&mut self) {
        for &fd in &self.bound {
            // SAFETY: closing descriptors this run opened.
            unsafe { libc::close(fd) };
        }
    }
}
