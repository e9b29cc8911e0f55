//! `httpreq`: with n idle keep-alive connections open on the server, the
//! latency of one GET and its whole response on an already-connected
//! connection (connect time excluded). Between the measured values of n,
//! idle connections are added in batches, each used for one request
//! (untimed), so the server holds them as idle keep-alive connections.

use super::connect::{BATCH, LEVELS, client_socket, connect_error, server_step_error};
use super::netserver::{
    Answers, BODY_BYTES, ServerProc, backend_of, backend_variants, server_budgets,
};
use super::{Benchmark, Info, Run, Schedule, StartError, StepError};
use crate::harness::clock::Stopwatch;
use crate::harness::limits::Budget;
use crate::ctx::Ctx;
use crate::harness::Resource;
use crate::net::client;
use crate::net::sock;
use crate::sys::Knob;
use anyhow::anyhow;
use std::os::fd::{AsRawFd, OwnedFd};

/// The `httpreq` benchmark.
pub struct HttpReq;

static INFO: Info = Info {
    name: "httpreq",
    n_meaning: "idle keep-alive connections open on the server",
    timed: "one GET and its whole 128-byte response on an open keep-alive connection, the server answering from a file it looks up, opens, sends with sendfile and closes per request",
    uses: &[Resource::Descriptors, Resource::Ports],
    knobs: &[Knob::PortRange, Knob::FilesPerProcess, Knob::ListenBacklog],
    quick_n: 2_000,
    full_n: 20_000,
};

const REQUEST: &[u8] = b"GET /body.txt HTTP/1.1\r\nHost: scalebench\r\n\r\n";

struct HttpRun {
    addr: sock::CAddr,
    active: OwnedFd,
    idle: Vec<OwnedFd>,
    buf: Vec<u8>,
    _server: ServerProc,
    // Restores the thread's CPU affinity last.
    _pin: Option<crate::sys::PinGuard>,
}

/// `k` connected keep-alive connections, each used for one request: all
/// connect, then all send, then all read, so the server handles them in a
/// few waits.
fn open_batch(
    addr: &std::net::SocketAddr,
    caddr: &sock::CAddr,
    buf: &mut Vec<u8>,
    held: u64,
    k: usize,
) -> Result<Vec<OwnedFd>, StepError> {
    let mut batch = Vec::with_capacity(k);
    for _ in 0..k {
        let fd = client_socket(addr, held)?;
        sock::connect(fd.as_raw_fd(), caddr).map_err(|e| connect_error(e, held))?;
        let _ = sock::set_nodelay(fd.as_raw_fd());
        batch.push(fd);
    }
    for fd in &batch {
        client::send_all(fd.as_raw_fd(), REQUEST)
            .map_err(|e| server_step_error("a request on a new connection", held, e))?;
    }
    for fd in &batch {
        get_response(fd.as_raw_fd(), buf, held, "a request on a new connection")?;
    }
    Ok(batch)
}

/// Reads and checks one response (the request was sent already).
fn get_response(fd: i32, buf: &mut Vec<u8>, held: u64, what: &str) -> Result<(), StepError> {
    let h = client::exchange(fd, b"", buf, false).map_err(|e| server_step_error(what, held, e))?;
    if h.status != 200 || h.body_len != BODY_BYTES {
        return Err(anyhow!("{what}: status {} with {} bytes at n = {held}", h.status, h.body_len).into());
    }
    Ok(())
}

impl Benchmark for HttpReq {
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
        // One connection more than n: the active one.
        server_budgets(ctx, variant, 1)
    }

    fn start(&self, ctx: &Ctx, variant: Option<&str>, n: u64) -> Result<Box<dyn Run>, StartError> {
        let server = ServerProc::start(ctx, backend_of(variant)?, Answers::FromFile)?;
        let addr = sock::CAddr::new(&server.addr);
        let mut buf = Vec::with_capacity(4096);
        let active = open_batch(&server.addr, &addr, &mut buf, 0, 1)
            .map_err(|e| anyhow!("the first connection: {e}"))?
            .pop()
            .expect("one connection");
        Ok(Box::new(HttpRun {
            addr,
            active,
            idle: Vec::with_capacity(n as usize),
            buf,
            _server: server,
            _pin: ctx
                .net()
                .cpus
                .and_then(|(client, _)| crate::sys::PinGuard::new(client).ok()),
        }))
    }
}

impl Run for HttpRun {
    fn held(&self) -> u64 {
        self.idle.len() as u64
    }

    fn resize_to(&mut self, n: u64) -> Result<(), StepError> {
        while (self.idle.len() as u64) < n {
            let held = self.held();
            let k = BATCH.min((n - held) as usize);
            let batch = open_batch(&self._server.addr, &self.addr, &mut self.buf, held, k)?;
            self.idle.extend(batch);
        }
        if (self.idle.len() as u64) > n {
            self.idle.truncate(n as usize);
        }
        // Settle: two untimed requests, after which the server has seen
        // every close and open that came before them.
        for _ in 0..2 {
            client::exchange(self.active.as_raw_fd(), REQUEST, &mut self.buf, false)
                .map_err(|e| server_step_error("a settling request", n, e))?;
        }
        Ok(())
    }

    fn op(&mut self, sw: &mut Stopwatch) -> Result<(), StepError> {
        let held = self.held();
        let fd = self.active.as_raw_fd();
        sw.start();
        let r = client::exchange(fd, REQUEST, &mut self.buf, false);
        sw.stop();
        let h = r.map_err(|e| server_step_error("the timed request", held, e))?;
        if h.status != 200 || h.body_len != BODY_BYTES {
            return Err(anyhow!(
                "the timed request got status {} with {} bytes at n = {held}",
                h.status,
                h.body_len
            )
            .into());
        }
        Ok(())
    }
}
