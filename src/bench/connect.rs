//! `connect`: with n connections held open, the time from connect() until
//! the server has accepted the new one and its greeting byte has arrived.
//! The server notices the connection through its event backend, which
//! also watches every connection it holds, so a backend that scans all of
//! them per wait (poll, select) makes this grow with n.

use super::netserver::{Answers, ServerProc, backend_of, backend_variants, server_budgets};
use super::{Benchmark, Info, Run, Schedule, StartError, StepError, errno_name};
use crate::harness::clock::Stopwatch;
use crate::harness::limits::Budget;
use crate::ctx::Ctx;
use crate::harness::Resource;
use crate::net::client::{self, ClientError};
use crate::net::sock;
use crate::sys::Knob;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Duration;

/// The `connect` benchmark.
pub struct Connect;

static INFO: Info = Info {
    name: "connect",
    n_meaning: "connected sockets (accepted by the server and held open)",
    timed: "connect() on loopback until the server has accepted and its greeting byte arrived",
    uses: &[Resource::Descriptors, Resource::Ports],
    knobs: &[Knob::PortRange, Knob::FilesPerProcess, Knob::ListenBacklog],
    quick_n: 2_000,
    full_n: 20_000,
};

/// n values measured per run, and timed operations at each: every
/// operation costs the server a wait over all it holds, so measuring at
/// every n would make large n quadratic in time for poll and select.
pub(crate) const LEVELS: Schedule = Schedule::Levels {
    levels: 100,
    per_level: 6,
};

/// Connections opened at once when growing (well below the listen backlog).
pub(crate) const BATCH: usize = 64;

/// How long one operation may wait before it counts as failed.
pub(crate) const WAIT: Duration = Duration::from_secs(5);

struct ConnectRun {
    addr: sock::CAddr,
    conns: Vec<OwnedFd>,
    /// A connection for settling requests, not counted in n.
    control: OwnedFd,
    buf: Vec<u8>,
    // Dropped last: the client sockets close first.
    _server: ServerProc,
    // Restores the thread's CPU affinity last.
    _pin: Option<crate::sys::PinGuard>,
}

/// Maps a client error while the server should have answered.
pub(crate) fn server_step_error(what: &str, held: u64, e: ClientError) -> StepError {
    match e {
        ClientError::Interrupted => StepError::Interrupted,
        ClientError::Closed(_) => StepError::Limit {
            resource: Resource::Descriptors,
            detail: format!(
                "the server closed connection {} at once ({what}): it cannot watch more \
                 descriptors (select's FD_SETSIZE, or its open-files limit)",
                held + 1
            ),
        },
        ClientError::Io(io) if io.kind() == std::io::ErrorKind::WouldBlock => StepError::from(
            anyhow::anyhow!("no answer within {} s ({what}) at n = {held}", WAIT.as_secs()),
        ),
        other => StepError::from(anyhow::anyhow!("{what} at n = {held}: {other}")),
    }
}

/// Opens a blocking client socket with bounded waits that closes with a
/// reset (no TIME_WAIT left behind to hold ports).
pub(crate) fn client_socket(addr: &std::net::SocketAddr, held: u64) -> Result<OwnedFd, StepError> {
    let fd = sock::tcp_socket(addr).map_err(|e| {
        let errno = e.raw_os_error().unwrap_or(0);
        let detail = format!("socket() failed with {} ({e}) at n = {held}", errno_name(errno));
        if errno == libc::EMFILE || errno == libc::ENFILE {
            StepError::Limit {
                resource: Resource::Descriptors,
                detail,
            }
        } else {
            StepError::from(anyhow::anyhow!(detail))
        }
    })?;
    sock::set_timeouts(fd.as_raw_fd(), WAIT).map_err(|e| anyhow::anyhow!("SO_RCVTIMEO: {e}"))?;
    sock::set_linger_zero(fd.as_raw_fd()).map_err(|e| anyhow::anyhow!("SO_LINGER: {e}"))?;
    Ok(fd)
}

/// Maps a failed connect().
pub(crate) fn connect_error(e: std::io::Error, held: u64) -> StepError {
    let errno = e.raw_os_error().unwrap_or(0);
    let detail = format!("connect() failed with {} ({e}) at n = {held}", errno_name(errno));
    match errno {
        libc::EADDRNOTAVAIL | libc::EADDRINUSE => StepError::Limit {
            resource: Resource::Ports,
            detail,
        },
        libc::EINTR if crate::stop::interrupted() => StepError::Interrupted,
        _ => StepError::from(anyhow::anyhow!(detail)),
    }
}

impl Benchmark for Connect {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn variants(&self, ctx: &Ctx) -> Vec<String> {
        backend_variants(ctx)
    }

    fn schedule(&self) -> Schedule {
        LEVELS
    }

    fn budgets(&self, ctx: &Ctx, variant: Option<&str>) -> Vec<(Resource, Budget)> {
        // The control connection, the lead-in and one level's operations.
        server_budgets(ctx, variant, 10)
    }

    fn start(&self, ctx: &Ctx, variant: Option<&str>, n: u64) -> Result<Box<dyn Run>, StartError> {
        let server = ServerProc::start(ctx, backend_of(variant)?, Answers::Greeting)?;
        let addr = sock::CAddr::new(&server.addr);
        let control = client_socket(&server.addr, 0).map_err(|e| anyhow::anyhow!("{e}"))?;
        sock::connect(control.as_raw_fd(), &addr).map_err(|e| anyhow::anyhow!("connect: {e}"))?;
        client::read_byte(control.as_raw_fd()).map_err(|e| anyhow::anyhow!("greeting: {e}"))?;
        Ok(Box::new(ConnectRun {
            addr,
            conns: Vec::with_capacity(n as usize),
            control,
            buf: Vec::with_capacity(1024),
            _server: server,
            _pin: ctx
                .net()
                .cpus
                .and_then(|(client, _)| crate::sys::PinGuard::new(client).ok()),
        }))
    }
}

impl ConnectRun {
    /// Connects one more and waits for its greeting; `sw`, when given,
    /// brackets exactly that.
    fn connect_one(&mut self, mut sw: Option<&mut Stopwatch>) -> Result<(), StepError> {
        let held = self.held();
        let fd = client_socket(&self._server.addr, held)?;
        let raw = fd.as_raw_fd();
        if let Some(sw) = sw.as_deref_mut() {
            sw.start();
        }
        let connected = sock::connect(raw, &self.addr);
        let greeted = connected.as_ref().ok().map(|_| client::read_byte(raw));
        if let Some(sw) = sw {
            sw.stop();
        }
        connected.map_err(|e| connect_error(e, held))?;
        match greeted {
            Some(Ok(b'!')) => {}
            Some(Ok(other)) => {
                return Err(anyhow::anyhow!("unexpected greeting byte {other:#x}").into());
            }
            Some(Err(e)) => return Err(server_step_error("waiting for the greeting", held, e)),
            None => unreachable!("connected"),
        }
        self.conns.push(fd);
        Ok(())
    }
}

impl Run for ConnectRun {
    fn held(&self) -> u64 {
        self.conns.len() as u64
    }

    fn resize_to(&mut self, n: u64) -> Result<(), StepError> {
        while (self.conns.len() as u64) < n {
            let held = self.held();
            let k = BATCH.min((n - held) as usize);
            let mut batch = Vec::with_capacity(k);
            for _ in 0..k {
                let fd = client_socket(&self._server.addr, held)?;
                sock::connect(fd.as_raw_fd(), &self.addr).map_err(|e| connect_error(e, held))?;
                batch.push(fd);
            }
            for fd in &batch {
                client::read_byte(fd.as_raw_fd())
                    .map_err(|e| server_step_error("waiting for a greeting", held, e))?;
            }
            self.conns.extend(batch);
        }
        if (self.conns.len() as u64) > n {
            self.conns.truncate(n as usize);
        }
        // Settle: an untimed request on the control connection, after
        // which the server has seen every close that came before it.
        let req = b"GET / HTTP/1.1\r\nHost: scalebench\r\n\r\n";
        client::exchange(self.control.as_raw_fd(), req, &mut self.buf, false)
            .map_err(|e| server_step_error("a settling request", n, e))?;
        // One untimed connection as a lead-in, so that every timed one
        // follows another connection the way back-to-back connects do.
        self.connect_one(None)
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
