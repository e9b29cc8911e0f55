//! The event-driven server loop: one process, one [`Poller`], non-blocking
//! sockets, HTTP/1.1 keep-alive with pipelining. What is answered is up to
//! a [`Handler`]; [`FixedResponder`] answers every GET and HEAD with the
//! same small body (the network benchmarks' server). The static file
//! server grows out of this loop by another handler.
//!
//! Robustness: EINTR is retried, EAGAIN ends a read or write burst, a peer
//! reset closes its connection, a half-closed peer gets its answers before
//! the close, and when accept() fails for lack of descriptors (EMFILE,
//! ENFILE) the listener is taken out of the poller for 100 ms — or until a
//! connection closes — so the loop never spins while the connections it has
//! are still served.
//!
//! Bounds: a connection's answers run at most [`OUT_HIGH`] bytes ahead of
//! its reader — past that no more of its requests are read or answered
//! until they are out — so a client that pipelines without reading holds
//! little memory. An answer that closes the connection while input is
//! still coming (an error such as 431 in the middle of a huge head, or
//! requests after a `Connection: close`) lingers: the write side is shut
//! down after the answer and the rest is read and dropped, for up to
//! [`LINGER`] or [`LINGER_BYTES`], so that closing with unread input does
//! not reset the connection before the client has read the answer.

use super::backend::{Backend, Event, Interest, Poller};
use super::errcount::{ErrnoTable, listener_broken};
use super::http::{self, Limits, Parse, Request};
use super::output::{FileMode, Flushed, Output};
use super::sock;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};
use sys::coarse_now;

/// Answers requests: HTTP/1.1 by default ([`respond`](Self::respond) per
/// request); a handler that speaks another protocol (the SMTP sink)
/// replaces [`answer`](Self::answer) instead.
pub trait Handler {
    /// Bytes sent as soon as a connection is accepted (empty: none).
    fn greeting(&self) -> &[u8] {
        &[]
    }

    /// Appends the response to `req` to `out`; returns whether the
    /// connection may stay open. `req.keep_alive` is false when the client
    /// asked to close or the connection reached its request limit: the
    /// response should then say `Connection: close`. A handler that
    /// replaces [`answer`](Self::answer) is never asked; the default
    /// answers 501 and closes.
    fn respond(&mut self, _req: &Request, out: &mut Output) -> bool {
        let mut v = Vec::new();
        http::error_response(501, &mut v);
        out.bytes(&v);
        false
    }

    /// Answers the whole requests at the front of `input` into `out`, in
    /// order, and returns the bytes they took; sets `ex.close_after` when
    /// the connection is to close once `out` is sent, and stops there or
    /// once `out` holds [`OUT_HIGH`] bytes. `ex` is the connection's own
    /// record (its [`Exchange::state`] is the handler's to keep). The
    /// default parses HTTP/1.1 and calls [`respond`](Self::respond).
    fn answer(
        &mut self,
        input: &[u8],
        ex: &mut Exchange,
        cfg: &Config,
        stats: &mut Stats,
        out: &mut Output,
    ) -> usize {
        answer_http(self, input, ex, cfg, stats, out)
    }
}

/// The HTTP/1.1 [`Handler::answer`]: requests parsed under `cfg`'s limits,
/// each given to `h.respond`; a malformed one answered with its error
/// status, and the connection closes.
pub fn answer_http<H: Handler + ?Sized>(
    h: &mut H,
    input: &[u8],
    ex: &mut Exchange,
    cfg: &Config,
    stats: &mut Stats,
    out: &mut Output,
) -> usize {
    let mut start = 0;
    while !ex.close_after && out.queued() < OUT_HIGH {
        match http::parse(&input[start..], &cfg.limits) {
            Parse::Incomplete => break,
            Parse::Complete(mut req, len) => {
                stats.requests += 1;
                ex.served += 1;
                if cfg.max_requests.is_some_and(|m| ex.served >= m) {
                    req.keep_alive = false;
                }
                if !h.respond(&req, out) {
                    ex.close_after = true;
                }
                start += len;
            }
            Parse::Error(status) => {
                stats.requests += 1;
                let mut v = Vec::new();
                http::error_response(status, &mut v);
                out.bytes(&v);
                ex.close_after = true;
            }
        }
    }
    start
}

/// Answers GET and HEAD with a fixed body of `n` bytes, other methods with
/// 405; optionally greets every new connection with one byte.
pub struct FixedResponder {
    head_keep: Vec<u8>,
    head_close: Vec<u8>,
    body: Vec<u8>,
    greeting: Vec<u8>,
}

impl FixedResponder {
    /// A responder with a `body_len`-byte body; `greet` sends `!` on accept.
    pub fn new(body_len: usize, greet: bool) -> FixedResponder {
        let head = |conn: &str| {
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {body_len}\r\n{conn}\r\n"
            )
            .into_bytes()
        };
        FixedResponder {
            head_keep: head(""),
            head_close: head("Connection: close\r\n"),
            body: (0..body_len).map(|i| b'a' + (i % 26) as u8).collect(),
            greeting: if greet { b"!".to_vec() } else { Vec::new() },
        }
    }
}

impl Handler for FixedResponder {
    fn greeting(&self) -> &[u8] {
        &self.greeting
    }

    fn respond(&mut self, req: &Request, out: &mut Output) -> bool {
        match req.method {
            "GET" | "HEAD" => {
                out.bytes(if req.keep_alive {
                    &self.head_keep
                } else {
                    &self.head_close
                });
                if req.method == "GET" {
                    out.bytes(&self.body);
                }
                req.keep_alive
            }
            _ => {
                let mut v = Vec::new();
                http::error_response(405, &mut v);
                out.bytes(&v);
                false
            }
        }
    }
}

/// Server settings.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// Event backend.
    pub backend: Backend,
    /// Request limits.
    pub limits: Limits,
    /// How long accepting pauses after EMFILE/ENFILE.
    pub accept_pause: Duration,
    /// Most connections accepted per readiness event of the listener. 1
    /// makes the server go back to the event backend after every accept
    /// (what the `connect` benchmark measures); more saves waits under load.
    pub accept_burst: usize,
    /// How file bodies are sent.
    pub file_mode: FileMode,
    /// Close a connection idle (nothing pending either way) this long.
    pub idle_timeout: Option<Duration>,
    /// Close a connection whose request head is not complete this long
    /// after its first byte (slow clients).
    pub head_timeout: Option<Duration>,
    /// Requests served on one connection before it is closed.
    pub max_requests: Option<u64>,
    /// Register the listener with EPOLLEXCLUSIVE-like sharing: when several
    /// worker processes wait on one listening socket, wake one per
    /// connection (only where the backend can).
    pub shared_listener: bool,
    /// Serve with the io_uring loop ([`super::uring`], Linux) instead of
    /// the readiness `backend`.
    pub io_uring: bool,
    /// Hold what is to be sent this long after a connection opens (its
    /// greeting) and after each batch of answers, as a slow peer would
    /// (the SMTP sink's remote MTA); readiness backends only.
    pub reply_delay: Option<Duration>,
    /// Stops serving once this returns true (^C), asked after every wait
    /// (a signal ends a wait); `None`: only the control descriptor stops it.
    pub stop: Option<fn() -> bool>,
    /// Where failed accepts are counted by errno for the whole server (all
    /// its processes), and which answers `stats` on the control input;
    /// `None`: counted in [`Stats::accept_errors`] only.
    pub accept_errors: Option<&'static ErrnoTable>,
}

impl Config {
    /// Defaults for `backend`.
    pub fn new(backend: Backend) -> Config {
        Config {
            backend,
            limits: Limits::default(),
            accept_pause: Duration::from_millis(100),
            accept_burst: 256,
            file_mode: FileMode::Sendfile,
            idle_timeout: None,
            head_timeout: None,
            max_requests: None,
            shared_listener: false,
            io_uring: false,
            reply_delay: None,
            stop: None,
            accept_errors: None,
        }
    }
}

/// What a server did, for tests and logs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Connections accepted.
    pub accepted: u64,
    /// Connections closed by the server (including after peer close).
    pub closed: u64,
    /// Requests answered (error answers included).
    pub requests: u64,
    /// Connections accepted but not watchable (select's FD_SETSIZE), closed at once.
    pub rejected: u64,
    /// Times accepting paused for lack of descriptors.
    pub accept_pauses: u64,
    /// Connections closed for a timeout (idle or slow request head).
    pub timeouts: u64,
    /// accept() calls that failed (other than for want of a connection
    /// or for a signal), counted and served on.
    pub accept_errors: u64,
}

struct Conn {
    inbuf: Vec<u8>,
    out: Output,
    ex: Exchange,
    writing: bool,
    /// Registered with the backend (a connection answered and closed at
    /// once never is).
    watched: bool,
    /// What the backend watches it for.
    interest: Interest,
    /// The peer sent its last byte.
    eof: bool,
    /// Output is held until then ([`Config::reply_delay`]; on
    /// [`Server::clock`]).
    hold: Option<Duration>,
}

impl Conn {
    /// What to watch for: reading unless its answers are [`OUT_HIGH`]
    /// ahead (then only the writes that drain them), writing while output
    /// is blocked.
    fn wanted(&self) -> Interest {
        Interest {
            read: self.out.queued() < OUT_HIGH,
            write: self.writing,
        }
    }
}

/// Largest amount read from one connection per readiness event.
pub(crate) const READ_BURST: usize = 64 * 1024;

/// How often timeouts are checked.
pub(crate) const SWEEP: Duration = Duration::from_millis(250);

/// How far a connection's queued answers (bytes, file ranges included)
/// may run ahead of its reader before no more of its requests are read.
pub const OUT_HIGH: u64 = 256 * 1024;

/// Longest a closing connection lingers, reading and dropping what its
/// client still sends after the last answer.
pub(crate) const LINGER: Duration = Duration::from_secs(2);

/// Most bytes a lingering connection reads and drops before it closes.
pub(crate) const LINGER_BYTES: u64 = 4 << 20;

/// The wait in whole milliseconds until a deadline `left` away: rounded
/// up, so that a wait never ends just before a deadline the coarse clock
/// has not reached yet (which would spin until its next tick).
fn wait_ms(left: Duration) -> i32 {
    if left.is_zero() {
        0
    } else {
        left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32
    }
}

/// Counts one failed accept() with `errno` in `stats` and, where the
/// server keeps one, in its shared table (both loops).
pub(crate) fn count_accept_error(stats: &mut Stats, cfg: &Config, errno: i32) {
    stats.accept_errors += 1;
    if let Some(t) = cfg.accept_errors {
        t.add(errno);
    }
}

/// What both loops keep per connection about its requests: how many were
/// answered, whether it closes after the last, the handler's own state,
/// and the clocks its timeouts run on.
pub struct Exchange {
    /// Requests answered on this connection.
    pub served: u64,
    /// The connection closes once what is queued is out.
    pub close_after: bool,
    /// The handler's state of this connection's conversation (0 when it
    /// opens; HTTP keeps none).
    pub state: u64,
    /// Last time anything was read or written (on [`coarse_now`]'s clock).
    pub(crate) last_io: Duration,
    /// When the first byte of an incomplete request head arrived.
    head_since: Option<Duration>,
    /// TCP_NODELAY is set (once the connection is kept alive).
    nodelay: bool,
    /// Input came that will never be answered (after an error or a last
    /// answer): the close lingers.
    pub(crate) unread: bool,
    /// Lingering (write side shut down, input dropped) until then.
    pub(crate) linger_until: Option<Duration>,
    /// Bytes dropped while lingering.
    pub(crate) dropped: u64,
}

impl Exchange {
    /// A connection opened at `now`.
    pub(crate) fn new(now: Duration) -> Exchange {
        Exchange {
            served: 0,
            close_after: false,
            state: 0,
            last_io: now,
            head_since: None,
            nodelay: false,
            unread: false,
            linger_until: None,
            dropped: 0,
        }
    }

    /// Whether the close after the last answer lingers: input came past
    /// it and the peer has not finished sending (`eof`).
    pub(crate) fn lingers(&self, eof: bool) -> bool {
        self.unread && !eof
    }

    /// Input dropped after the last answer: whether the connection has
    /// taken enough and closes now.
    pub(crate) fn drop_input(&mut self, n: usize) -> bool {
        self.unread = true;
        self.dropped += n as u64;
        self.linger_until.is_some() && self.dropped > LINGER_BYTES
    }

    /// Lets `handler` answer the whole requests at the front of `input`
    /// into `out` ([`Handler::answer`]); returns the bytes they took.
    pub(crate) fn answer(
        &mut self,
        input: &[u8],
        cfg: &Config,
        handler: &mut dyn Handler,
        stats: &mut Stats,
        out: &mut Output,
    ) -> usize {
        let start = handler.answer(input, self, cfg, stats, out);
        if self.close_after && start < input.len() {
            self.unread = true;
        }
        start
    }

    /// After [`answer`](Self::answer): starts or stops the slow-head clock
    /// (`unparsed`: part of a request is still waiting for the rest; `now`
    /// is given when timeouts are on), closes after a half-closed peer's
    /// last answer (`eof`), and sets TCP_NODELAY on a connection kept
    /// alive, so that later small responses do not wait for ACKs.
    pub(crate) fn answered(&mut self, fd: RawFd, unparsed: bool, now: Option<Duration>, eof: bool) {
        if let Some(now) = now {
            self.last_io = now;
            self.head_since = if unparsed {
                Some(self.head_since.unwrap_or(now))
            } else {
                None
            };
        }
        if eof {
            self.close_after = true;
        }
        if !self.close_after && self.served > 0 && !self.nodelay {
            self.nodelay = true;
            let _ = sock::set_nodelay(fd);
        }
    }

    /// Whether the connection is past a timeout at `now`: its request head
    /// incomplete for longer than the head timeout, or — `quiet`, nothing
    /// pending either way — idle for longer than the idle timeout.
    pub(crate) fn timed_out(&self, cfg: &Config, now: Duration, quiet: bool) -> bool {
        let slow = cfg
            .head_timeout
            .is_some_and(|t| self.head_since.is_some_and(|s| now - s > t));
        let idle = cfg
            .idle_timeout
            .is_some_and(|t| quiet && now - self.last_io > t);
        let lingered = self.linger_until.is_some_and(|t| now >= t);
        slow || idle || lingered
    }
}

/// Most connections one sweep closes. Closing thousands at once (a crowd
/// of slowloris connections timing out together) would hold the loop for
/// tens of milliseconds; the rest are closed by the next sweep, right
/// after the events that came meanwhile.
pub(crate) const SWEEP_CLOSES: usize = 64;

/// The descriptors of the connections in `conns` (indexed by descriptor)
/// past a timeout at `now`, at most [`SWEEP_CLOSES`] of them, and whether
/// there are more; `state` gives a connection's exchange and whether
/// nothing is pending either way. Shared by both loops' sweeps.
pub(crate) fn expired<C>(
    conns: &[Option<Box<C>>],
    cfg: &Config,
    now: Duration,
    state: impl Fn(&C) -> (&Exchange, bool),
) -> (Vec<RawFd>, bool) {
    let mut v: Vec<RawFd> = conns
        .iter()
        .enumerate()
        .filter_map(|(fd, c)| {
            let (ex, quiet) = state(c.as_ref()?);
            ex.timed_out(cfg, now, quiet).then_some(fd as RawFd)
        })
        .take(SWEEP_CLOSES + 1)
        .collect();
    let more = v.len() > SWEEP_CLOSES;
    v.truncate(SWEEP_CLOSES);
    (v, more)
}

/// When the sweep after one at `now` is due: at once when it left
/// expired connections open ([`SWEEP_CLOSES`]), else after [`SWEEP`].
pub(crate) fn next_sweep_after(now: Duration, more: bool) -> Duration {
    if more { now } else { now + SWEEP }
}

/// When the sweep after one at `now` over `conns` is due: see
/// [`next_sweep_after`]; none at all when the only reason to sweep is
/// lingering connections (no idle or head timeout is set) and none is left.
pub(crate) fn next_sweep<C>(
    conns: &[Option<Box<C>>],
    cfg: &Config,
    now: Duration,
    more: bool,
    ex: impl Fn(&C) -> &Exchange,
) -> Option<Duration> {
    let lingering = || conns.iter().flatten().any(|c| ex(c).linger_until.is_some());
    if !more && cfg.idle_timeout.is_none() && cfg.head_timeout.is_none() && !lingering() {
        None
    } else {
        Some(next_sweep_after(now, more))
    }
}

/// The earlier of two optional deadlines (accepting resumes, timeouts are
/// swept), or none.
pub(crate) fn next_deadline(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

struct Server<'h> {
    poller: Box<dyn Poller>,
    listener: RawFd,
    control: Option<RawFd>,
    conns: Vec<Option<Box<Conn>>>,
    handler: &'h mut dyn Handler,
    cfg: Config,
    stats: Stats,
    paused_until: Option<Duration>,
    buf: Vec<u8>,
    file_buf: Vec<u8>,
    next_sweep: Option<Duration>,
    /// The time after the last wait on [`coarse_now`]'s clock (timeouts
    /// need no finer clock; it costs no system call where the OS maps it).
    now: Duration,
    /// Connections whose output is held, by when it is released (stale
    /// entries — closed since, or released — are skipped).
    holds: BinaryHeap<Reverse<(Duration, RawFd)>>,
    /// The precise clock held output is released on.
    clock: Instant,
}

/// Serves on `listener` with the readiness loop of `cfg.backend` until
/// `control` reports end of input (or an error). The listener must be
/// non-blocking. Returns what it did. (The engine's `serve` picks
/// between this loop and io_uring.)
pub fn serve_ready(
    listener: RawFd,
    control: Option<RawFd>,
    cfg: Config,
    handler: &mut dyn Handler,
) -> io::Result<Stats> {
    let mut poller = cfg.backend.create()?;
    if cfg.shared_listener {
        poller.add_shared(listener)?;
    } else {
        poller.add(listener, Interest::READ)?;
    }
    if let Some(c) = control {
        poller.add(c, Interest::READ)?;
    }
    let mut s = Server {
        poller,
        listener,
        control,
        conns: Vec::new(),
        handler,
        cfg,
        stats: Stats::default(),
        paused_until: None,
        buf: vec![0u8; 16 * 1024],
        file_buf: Vec::new(),
        next_sweep: (cfg.idle_timeout.is_some() || cfg.head_timeout.is_some())
            .then(|| coarse_now() + SWEEP),
        now: coarse_now(),
        holds: BinaryHeap::new(),
        clock: Instant::now(),
    };
    let result = s.run();
    for fd in 0..s.conns.len() {
        if s.conns[fd].is_some() {
            s.close(fd as RawFd);
        }
    }
    result.map(|()| s.stats)
}

impl Server<'_> {
    fn run(&mut self) -> io::Result<()> {
        let mut events: Vec<Event> = Vec::with_capacity(1024);
        loop {
            let mut timeout = match next_deadline(self.paused_until, self.next_sweep) {
                Some(t) => wait_ms(t.saturating_sub(coarse_now())),
                None => -1,
            };
            if let Some(Reverse((t, _))) = self.holds.peek() {
                let w = wait_ms(t.saturating_sub(self.clock.elapsed()));
                timeout = if timeout < 0 { w } else { timeout.min(w) };
            }
            events.clear();
            self.poller.wait(&mut events, timeout)?;
            if self.cfg.stop.is_some_and(|f| f()) {
                return Ok(());
            }
            if !self.holds.is_empty() {
                self.release_holds();
            }
            if self.paused_until.is_some() || self.next_sweep.is_some() {
                let now = coarse_now();
                self.now = now;
                if self.paused_until.is_some_and(|t| now >= t) {
                    self.resume_accepting()?;
                }
                if self.next_sweep.is_some_and(|t| now >= t) {
                    self.sweep(now);
                }
            }
            for ev in &events {
                if ev.fd == self.listener {
                    self.accept_burst()?;
                } else if Some(ev.fd) == self.control {
                    let mut b = [0u8; 64];
                    match sock::read(ev.fd, &mut b) {
                        Ok(0) => return Ok(()),
                        Ok(n) => {
                            if let Some(t) = self.cfg.accept_errors {
                                t.answer(&b[..n]);
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                        Err(_) => return Ok(()),
                    }
                } else {
                    self.conn_event(ev);
                }
            }
        }
    }

    fn resume_accepting(&mut self) -> io::Result<()> {
        if self.paused_until.take().is_some() {
            if self.cfg.shared_listener {
                self.poller.add_shared(self.listener)?;
            } else {
                self.poller.add(self.listener, Interest::READ)?;
            }
        }
        Ok(())
    }

    /// Accepts up to `accept_burst` connections. A failed accept is
    /// counted by errno and serving goes on: a connection aborted is
    /// skipped, a want of descriptors pauses accepting, any other errno
    /// (ENOENT, EADDRINUSE with many processes on one socket) ends the
    /// burst; only an errno saying the listener itself is broken ends the
    /// loop.
    fn accept_burst(&mut self) -> io::Result<()> {
        for _ in 0..self.cfg.accept_burst {
            let e = match sock::accept(self.listener) {
                Ok(fd) => {
                    self.opened(fd);
                    continue;
                }
                Err(e) => e,
            };
            let errno = e.raw_os_error().unwrap_or(0);
            match errno {
                libc::EAGAIN => return Ok(()),
                libc::EINTR => continue,
                _ => count_accept_error(&mut self.stats, &self.cfg, errno),
            }
            match errno {
                libc::ECONNABORTED | libc::EPROTO | libc::EPERM => {}
                libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM => {
                    // Out of descriptors: stop watching the listener for
                    // a while instead of spinning on it.
                    self.poller.delete(self.listener)?;
                    self.paused_until = Some(coarse_now() + self.cfg.accept_pause);
                    self.stats.accept_pauses += 1;
                    return Ok(());
                }
                e if listener_broken(e) => return Err(io::Error::from_raw_os_error(e)),
                _ => return Ok(()),
            }
        }
        Ok(())
    }

    fn opened(&mut self, fd: RawFd) {
        self.stats.accepted += 1;
        let idx = fd as usize;
        if self.conns.len() <= idx {
            self.conns.resize_with(idx + 1, || None);
        }
        let mut c = Box::new(Conn {
            inbuf: Vec::new(),
            out: Output::default(),
            ex: Exchange::new(self.now),
            writing: false,
            watched: false,
            interest: Interest::READ,
            eof: false,
            hold: None,
        });
        let greeting = self.handler.greeting();
        if !greeting.is_empty() {
            c.out.bytes(greeting);
        }
        let greet = !c.out.is_empty();
        self.conns[idx] = Some(c);
        if greet {
            self.hold(fd);
        }
        if greet {
            self.flush(fd);
        } else {
            // On a fast path (deferred accept) the request is already
            // there: answer it now rather than after another wait. A
            // connection answered and closed here never costs the backend
            // a registration.
            self.read_and_answer(fd);
        }
        self.watch(fd);
    }

    /// Registers a connection that is still open with the backend (once),
    /// for what it waits for ([`Conn::wanted`]).
    fn watch(&mut self, fd: RawFd) {
        let Some(c) = self.conns.get_mut(fd as usize).and_then(Option::as_mut) else {
            return;
        };
        if c.watched {
            return;
        }
        let interest = c.wanted();
        if self.poller.add(fd, interest).is_ok() {
            c.watched = true;
            c.interest = interest;
        } else {
            self.stats.rejected += 1;
            self.close(fd);
        }
    }

    /// Tells the backend when what a watched connection waits for changed.
    fn rewatch(&mut self, fd: RawFd) {
        let Some(c) = self.conns.get_mut(fd as usize).and_then(Option::as_mut) else {
            return;
        };
        let want = c.wanted();
        if c.watched && c.interest != want && self.poller.modify(fd, want).is_ok() {
            c.interest = want;
        }
    }

    fn close(&mut self, fd: RawFd) {
        if let Some(c) = self.conns.get_mut(fd as usize).and_then(Option::take) {
            if c.watched {
                let _ = self.poller.forget(fd);
            }
            sock::close(fd);
            self.stats.closed += 1;
            // A descriptor came free: accept again if we had paused.
            let _ = self.resume_accepting();
        }
    }

    fn conn_event(&mut self, ev: &Event) {
        let fd = ev.fd;
        if self.conns.get(fd as usize).is_none_or(|c| c.is_none()) {
            return; // closed earlier in this batch
        }
        if ev.write {
            self.flush(fd);
            if self.conns.get(fd as usize).is_none_or(|c| c.is_none()) {
                return;
            }
        }
        if ev.read {
            self.read_and_answer(fd);
        } else if ev.hangup {
            self.close(fd);
        }
    }

    fn read_and_answer(&mut self, fd: RawFd) {
        let c = self.conns[fd as usize].as_mut().expect("open");
        if c.ex.linger_until.is_some() {
            self.drop_input(fd);
            return;
        }
        if c.out.queued() >= OUT_HIGH {
            // Its answers are far enough ahead: nothing more is read until
            // they are out (the backend is not watching it for reading).
            return;
        }
        let mut total = 0;
        // A single short read onto an empty input buffer (the usual case)
        // is parsed where it was read; only what is left of it is kept.
        let mut direct = 0;
        loop {
            match sock::read(fd, &mut self.buf) {
                Ok(0) => {
                    self.conns[fd as usize].as_mut().expect("open").eof = true;
                    break;
                }
                Ok(k) => {
                    let c = self.conns[fd as usize].as_mut().expect("open");
                    total += k;
                    if c.ex.close_after {
                        // Answered for the last time: the rest is dropped.
                        c.ex.drop_input(k);
                    } else if c.inbuf.is_empty() && k < self.buf.len() {
                        direct = k;
                        break;
                    } else {
                        c.inbuf.extend_from_slice(&self.buf[..k]);
                    }
                    if total >= READ_BURST || k < self.buf.len() {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(_) => {
                    // Reset or other error: the peer is gone.
                    self.close(fd);
                    return;
                }
            }
        }
        self.answer(fd, direct);
        self.flush(fd);
    }

    /// Answers the requests waiting for `fd`: the first `direct` bytes of
    /// the read buffer when given (what is left of them is kept), else
    /// its input buffer. Returns the bytes answered.
    fn answer(&mut self, fd: RawFd, direct: usize) -> usize {
        let now = self.next_sweep.is_some().then_some(self.now);
        let Server {
            conns,
            handler,
            stats,
            buf,
            cfg,
            ..
        } = self;
        let c = conns[fd as usize].as_mut().expect("open");
        let Conn {
            inbuf,
            out,
            ex,
            eof,
            ..
        } = &mut **c;
        let input: &[u8] = if direct > 0 { &buf[..direct] } else { inbuf };
        let before = out.queued();
        let start = ex.answer(input, cfg, &mut **handler, stats, out);
        let more = out.queued() > before;
        if ex.close_after {
            inbuf.clear();
        } else if direct > 0 {
            inbuf.extend_from_slice(&buf[start..direct]);
        } else {
            inbuf.drain(..start);
        }
        // Half-closed (or gone): what arrived is answered, then it closes
        // — once no request is held back behind answers still going out.
        let held = out.queued() >= OUT_HIGH && !inbuf.is_empty();
        ex.answered(fd, !inbuf.is_empty(), now, *eof && !held);
        if more {
            self.hold(fd);
        }
        start
    }

    /// Holds what `fd` is to send for [`Config::reply_delay`], unless it is
    /// already held.
    fn hold(&mut self, fd: RawFd) {
        let Some(d) = self.cfg.reply_delay else {
            return;
        };
        let c = self.conns[fd as usize].as_mut().expect("open");
        if c.hold.is_none() {
            let t = self.clock.elapsed() + d;
            c.hold = Some(t);
            self.holds.push(Reverse((t, fd)));
        }
    }

    /// Sends what was held and is due.
    fn release_holds(&mut self) {
        let now = self.clock.elapsed();
        while let Some(&Reverse((t, fd))) = self.holds.peek() {
            if t > now {
                break;
            }
            self.holds.pop();
            let Some(c) = self.conns.get_mut(fd as usize).and_then(Option::as_mut) else {
                continue;
            };
            if c.hold == Some(t) {
                c.hold = None;
                self.flush(fd);
            }
        }
    }

    /// Writes what is pending, answers what waits in the input buffer
    /// once all is out, adjusts interest; closes (or lingers) when done
    /// and asked to.
    fn flush(&mut self, fd: RawFd) {
        let mode = self.cfg.file_mode;
        if self.conns[fd as usize]
            .as_ref()
            .is_some_and(|c| c.hold.is_some())
        {
            return; // sent when released
        }
        loop {
            let c = self.conns[fd as usize].as_mut().expect("open");
            let r = c.out.flush(fd, mode, &mut self.file_buf, c.ex.close_after);
            if self.next_sweep.is_some() {
                c.ex.last_io = self.now;
            }
            match r {
                Err(_) => {
                    self.close(fd);
                    return;
                }
                Ok(Flushed::Done) => {
                    c.writing = false;
                    if c.ex.close_after {
                        self.finish(fd);
                        return;
                    }
                    // Requests held back while the answers were ahead.
                    if c.inbuf.is_empty() {
                        break;
                    }
                    let took = self.answer(fd, 0);
                    let c = self.conns[fd as usize].as_mut().expect("open");
                    if (took == 0 && !c.ex.close_after) || c.hold.is_some() {
                        break;
                    }
                }
                Ok(Flushed::Blocked) => {
                    c.writing = true;
                    break;
                }
            }
        }
        self.rewatch(fd);
    }

    /// After the last answer: closes, or — when input is still coming —
    /// shuts down the write side and lingers, dropping what arrives.
    fn finish(&mut self, fd: RawFd) {
        let c = self.conns[fd as usize].as_mut().expect("open");
        if c.ex.linger_until.is_some() {
            return;
        }
        if !c.ex.lingers(c.eof) {
            self.close(fd);
            return;
        }
        let now = coarse_now();
        c.ex.linger_until = Some(now + LINGER);
        // SAFETY: our own socket.
        unsafe { libc::shutdown(fd, libc::SHUT_WR) };
        if self.next_sweep.is_none() {
            // Timeouts are off: sweep until the lingering is over.
            self.now = now;
            self.next_sweep = Some(now + SWEEP);
        }
        self.rewatch(fd);
    }

    /// Reads and drops what a lingering connection's client still sends;
    /// closes at its end, on an error, or past [`LINGER_BYTES`].
    fn drop_input(&mut self, fd: RawFd) {
        let mut total = 0;
        loop {
            match sock::read(fd, &mut self.buf) {
                Ok(0) => break,
                Ok(k) => {
                    total += k;
                    let c = self.conns[fd as usize].as_mut().expect("open");
                    if c.ex.drop_input(k) {
                        break;
                    }
                    if total >= READ_BURST {
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(_) => break,
            }
        }
        self.close(fd);
    }

    /// Closes connections that have been idle, or sending a request head,
    /// or lingering, for too long.
    fn sweep(&mut self, now: Duration) {
        let quiet = |c: &Conn| c.out.is_empty() && c.inbuf.is_empty();
        let (fds, more) = expired(&self.conns, &self.cfg, now, |c| (&c.ex, quiet(c)));
        for fd in fds {
            self.stats.timeouts += 1;
            self.close(fd);
        }
        self.next_sweep = next_sweep(&self.conns, &self.cfg, now, more, |c| &c.ex);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_round_up_to_whole_milliseconds() {
        assert_eq!(wait_ms(Duration::ZERO), 0);
        assert_eq!(wait_ms(Duration::from_micros(1)), 1);
        assert_eq!(wait_ms(Duration::from_micros(1500)), 2);
        assert_eq!(wait_ms(Duration::from_millis(250)), 250);
        assert_eq!(wait_ms(Duration::from_secs(1 << 40)), i32::MAX);
    }
}
