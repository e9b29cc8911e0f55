//! `socket`: socket(AF_INET, SOCK_STREAM) with n sockets already open.
//! Allocating the socket is easy; finding the lowest free descriptor is
//! what can grow with n.

use super::{Benchmark, Info, Run, StartError, StepError, step_error};
use crate::harness::clock::Stopwatch;
use crate::ctx::Ctx;
use crate::harness::Resource;
use crate::sys::Knob;

/// The `socket` benchmark.
pub struct Socket;

static INFO: Info = Info {
    name: "socket",
    n_meaning: "open descriptors (sockets this run holds)",
    timed: "socket(AF_INET, SOCK_STREAM, 0); every socket stays open",
    uses: &[Resource::Descriptors],
    knobs: &[Knob::FilesSystem, Knob::FilesPerProcess],
    quick_n: 10_000,
    full_n: 10_000,
};

struct SocketRun {
    fds: Vec<i32>,
}

impl Benchmark for Socket {
    fn info(&self) -> &'static Info {
        &INFO
    }

    /// Closing the socket made last frees its descriptor, which the next
    /// socket() takes again.
    fn downwards(&self) -> bool {
        true
    }

    fn start(&self, _ctx: &Ctx, _variant: Option<&str>, n: u64) -> Result<Box<dyn Run>, StartError> {
        Ok(Box::new(SocketRun {
            fds: Vec::with_capacity(n as usize),
        }))
    }
}

impl Run for SocketRun {
    fn held(&self) -> u64 {
        self.fds.len() as u64
    }

    fn op(&mut self, sw: &mut Stopwatch) -> Result<(), StepError> {
        sw.start();
        // SAFETY: plain socket() call.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) };
        sw.stop();
        if fd < 0 {
            return Err(step_error(
                "socket()",
                self.held(),
                Resource::Descriptors,
                &[libc::EMFILE, libc::ENFILE, libc::ENOBUFS, libc::ENOMEM],
            ));
        }
        self.fds.push(fd);
        Ok(())
    }

    fn undo(&mut self, _sw: &mut Stopwatch) -> Result<(), StepError> {
        if let Some(fd) = self.fds.pop() {
            // SAFETY: closing the descriptor the last op opened.
            unsafe { libc::close(fd) };
        }
        Ok(())
    }
}

impl Drop for SocketRun {
    fn drop(&mut self) {
        for &fd in &self.fds {
            // SAFETY: closing descriptors this run opened.
            unsafe { libc::close(fd) };
        }
    }
}
