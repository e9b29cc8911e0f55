//! `connect-ports`: connect() on loopback to one listening server while n
//! ports of the ephemeral range are already in use by earlier connections
//! **to the same destination** (the server's address and port). A port in
//! use towards another destination could be shared (only the four-tuple
//! must be unique); towards the same one it cannot, so the kernel's search
//! for a source port has to step over every such port it meets before it
//! finds a free one.
//!
//! n is the connections held open, each from a port of its own (the
//! kernel's choice) to the server. The server is `scalebench __responder`
//! in a process of its own, as for `connect` (its descriptors are its own,
//! so the n client sockets are this process's only ones: n can approach
//! the range), on its best event backend, greeting each connection with a
//! byte. The timed operation is connect() alone, of a socket opened
//! untimed just before; the greeting (the server has accepted) is read
//! untimed after it. Every connection closes with a reset (SO_LINGER 0: no
//! TIME_WAIT left to hold its port). Every connect() costs about the same
//! until the range fills, so n takes 40 evenly spaced values per run, 6
//! connects at each, both ways, grown and shrunk untimed between them (the
//! last connection of each resize made one at a time, so that every timed
//! connect follows a connect).
//!
//! What to expect: Linux picks the port as RFC 6056 suggests (its
//! algorithm 4): a walk through the range, ports of one parity first, from
//! an offset made of a keyed hash of the addresses and a per-destination
//! perturbation that advances a few ports past each port given. Held ports
//! end up spread over the range, and a walk steps over as many in a row as
//! it meets: about 1 / (1 − h) of them with a share h of that parity's
//! ports held — flat at small n, rising steeply as n nears half the range,
//! and beyond it every connect() walks the whole first parity before the
//! other. Each step costs a look in the bind hash (under its bucket's lock,
//! and from 6.1 the lock of bhash2's bucket too) and one in the
//! established table. "tcp: scale connect() under pressure" (Eric Dumazet,
//! Linux 6.15) made those looks lookups under RCU, without the locks: the
//! same curve, cheaper steps. n cannot exceed the range
//! (`net.ipv4.ip_local_port_range` on Linux), and a run asking for more is
//! refused.

use super::connect::{BATCH, client_socket, connect_error, server_step_error};
use super::netserver::{Answers, ServerProc, server_budgets};
use super::{Benchmark, Info, Run, Schedule, StartError, StepError};
use crate::ctx::Ctx;
use crate::harness::Resource;
use crate::harness::clock::Stopwatch;
use crate::harness::limits::Budget;
use crate::net::client;
use crate::net::{Backend, sock};
use crate::sys::Knob;
use anyhow::anyhow;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, OwnedFd};

/// The `connect-ports` benchmark.
pub struct ConnectPorts;

static INFO: Info = Info {
    name: "connect-ports",
    n_meaning: "ephemeral ports in use by connections to the same destination (held open)",
    timed: "connect() on loopback to the server every held connection goes to (its accept and \
            greeting byte untimed)",
    uses: &[Resource::Descriptors, Resource::Ports],
    knobs: &[Knob::PortRange, Knob::FilesPerProcess],
    quick_n: 4_000,
    full_n: 20_000,
};

/// The values of n measured per run, and connects at each.
const LEVELS: Schedule = Schedule::Levels {
    levels: 40,
    per_level: 6,
};

struct ConnectPortsRun {
    target: SocketAddr,
    addr: sock::CAddr,
    conns: Vec<OwnedFd>,
    // Dropped last: the client sockets close first.
    _server: ServerProc,
    // Restores the thread's CPU affinity last.
    _pin: Option<crate::sys::PinGuard>,
}

/// Refuses an n the ephemeral range (`range`, inclusive) cannot hold.
fn check_range(n: u64, range: Option<(u32, u32)>) -> Result<(), StartError> {
    let Some((first, last)) = range else {
        return Ok(());
    };
    let size = u64::from(last - first + 1);
    if n > size {
        let names = crate::sys::knob_names(Knob::PortRange).join(", ");
        return Err(anyhow!(
            "connect-ports: n = {n} ports cannot be in use at once: the ephemeral port range \
             {first}–{last} ({names}) has {size}"
        )
        .into());
    }
    Ok(())
}

/// The server's backend: the first this OS has, the scalable ones first
/// (epoll, kqueue); the series has one, not a variant per backend.
fn backend() -> Result<Backend, StartError> {
    Backend::available_all()
        .first()
        .copied()
        .ok_or_else(|| StartError::Unsupported("no event backend for the server".into()))
}

impl Benchmark for ConnectPorts {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn schedule(&self) -> Schedule {
        LEVELS
    }

    /// The server's descriptors, less one level's connects.
    fn budgets(&self, ctx: &Ctx, _variant: Option<&str>) -> Vec<(Resource, Budget)> {
        let name = backend().ok().map(Backend::name);
        server_budgets(ctx, name, 10)
    }

    fn start(&self, ctx: &Ctx, _variant: Option<&str>, n: u64) -> Result<Box<dyn Run>, StartError> {
        check_range(n, crate::sys::port_range())?;
        let server = ServerProc::start(ctx, backend()?, Answers::Greeting)?;
        Ok(Box::new(ConnectPortsRun {
            target: server.addr,
            addr: sock::CAddr::new(&server.addr),
            conns: Vec::with_capacity(n as usize + 10),
            _server: server,
            _pin: ctx
                .net()
                .cpus
                .and_then(|(client, _)| crate::sys::PinGuard::new(client).ok()),
        }))
    }
}

impl ConnectPortsRun {
    /// One connect, timed on `sw` if given; the greeting read untimed
    /// after it, the connection kept.
    fn connect_one(&mut self, sw: Option<&mut Stopwatch>) -> Result<(), StepError> {
        let held = self.held();
        let fd = client_socket(&self.target, held)?;
        let r = match sw {
            Some(sw) => {
                sw.start();
                let r = sock::connect(fd.as_raw_fd(), &self.addr);
                sw.stop();
                r
            }
            None => sock::connect(fd.as_raw_fd(), &self.addr),
        };
        r.map_err(|e| connect_error(e, held))?;
        Self::greeted(&fd, held)?;
        self.conns.push(fd);
        Ok(())
    }

    /// Reads the server's greeting on `fd`: it has accepted.
    fn greeted(fd: &OwnedFd, held: u64) -> Result<(), StepError> {
        match client::read_byte(fd.as_raw_fd()) {
            Ok(b'!') => Ok(()),
            Ok(other) => Err(anyhow!("unexpected greeting byte {other:#x}").into()),
            Err(e) => Err(server_step_error("waiting for the greeting", held, e)),
        }
    }
}

impl Run for ConnectPortsRun {
    fn held(&self) -> u64 {
        self.conns.len() as u64
    }

    /// Grows by batches of connects (each batch's greetings read after
    /// it), or closes the newest connections, to one short of `n`, and
    /// makes the n-th connection untimed: a lead-in, so that every timed
    /// connect follows another connect on the way up and the way down
    /// alike. Without it the first connect after closes cost about half as
    /// many instructions as the rest (some 32 000 against 65 000 in a
    /// guest counting them), and only visits on the way down began with
    /// closes: a run's low percentiles moved with how many such connects
    /// it had (docs/kernels.md). At n = 0 there is nothing to close to.
    fn resize_to(&mut self, n: u64) -> Result<(), StepError> {
        let short = n.saturating_sub(1);
        while self.held() < short {
            let held = self.held();
            let k = BATCH.min((short - held) as usize);
            let mut batch = Vec::with_capacity(k);
            for _ in 0..k {
                let fd = client_socket(&self.target, held)?;
                sock::connect(fd.as_raw_fd(), &self.addr).map_err(|e| connect_error(e, held))?;
                batch.push(fd);
            }
            for fd in &batch {
                Self::greeted(fd, held)?;
            }
            self.conns.extend(batch);
        }
        self.conns.truncate(short as usize);
        if n > 0 {
            self.connect_one(None)?;
        }
        Ok(())
    }

    fn op(&mut self, sw: &mut Stopwatch) -> Result<(), StepError> {
        self.connect_one(Some(sw))
    }

    /// Closes the connection just made.
    fn undo(&mut self, _sw: &mut Stopwatch) -> Result<(), StepError> {
        self.conns.pop();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_n_beyond_the_port_range_is_refused_naming_it() {
        assert!(check_range(28_232, Some((32_768, 60_999))).is_ok());
        assert!(check_range(5, None).is_ok());
        let e = check_range(28_233, Some((32_768, 60_999))).unwrap_err().to_string();
        assert!(e.contains("n = 28233") && e.contains("32768–60999") && e.contains("has 28232"), "{e}");
    }
}
