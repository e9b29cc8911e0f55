//! The SMTP sender: S simultaneous sessions from one event loop, each a
//! socket bound before it connects (as MailEngine's were, so that the
//! local port is taken at bind() and a shortage shows there), the
//! greeting, EHLO, then per message MAIL, RCPT × R and DATA — pipelined
//! when the server offers PIPELINING — the message, and QUIT after the
//! session's last message. A finished or failed session is replaced by a
//! new one at once, so S stay open (closed loop).
//!
//! Every failed call is counted by call and errno (`bind EADDRINUSE`,
//! `connect ECONNREFUSED`), every refusing reply by code and command
//! (`reply 421 to MAIL`), timeouts by what was awaited; a message's
//! latency (MAIL sent to its 250) goes in an HDR histogram, overall and
//! per interval for a sweep's samples.

use super::{Reply, ReplyError, has_keyword, message, parse_reply};
use crate::backend::{Backend, Event, Interest, Poller};
use crate::sock::{self, CAddr};
use crate::workers::reap;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::rc::Rc;
use std::time::{Duration, Instant};

/// A message size in bytes, headers included: at least 87 (the
/// smallest message this sender writes), at most 10⁹. Both `smtp-send
/// --size` and the mail workload's `--mail-size` parse it here.
pub fn message_size(s: &str) -> Result<u64, String> {
    sys::values::whole::<u64>(87, 1_000_000_000)(s)
}

/// How to send.
#[derive(Debug, Clone)]
pub struct SendOptions {
    /// The server (sink or MTA).
    pub target: SocketAddr,
    /// Simultaneous sessions.
    pub sessions: usize,
    /// Messages per session before QUIT.
    pub per_session: u64,
    /// Size of each message (headers and body; at least
    /// [`super::MIN_MESSAGE`]).
    pub message_bytes: usize,
    /// Recipients per message.
    pub recipients: u32,
    /// Stop after this many messages delivered.
    pub total: Option<u64>,
    /// Stop after this long.
    pub duration: Option<Duration>,
    /// Bind each socket to this address (port 0) before connecting;
    /// `None`: connect unbound.
    pub bind: Option<IpAddr>,
    /// Pipeline MAIL, RCPT and DATA when the server offers PIPELINING.
    pub pipelining: bool,
    /// A reply not received in this time fails the session.
    pub timeout: Duration,
    /// Event backend.
    pub backend: Backend,
    /// Per-interval tallies begin after this (a sweep's heat-up).
    pub warmup: Duration,
    /// Length of each tallied interval (a sweep's sample), if wanted.
    pub interval: Option<Duration>,
    /// Ends the run early once this returns true (^C), asked at least
    /// every 10 ms.
    pub stop: Option<fn() -> bool>,
}

impl SendOptions {
    /// `sessions` simultaneous sessions to `target`: one message of 4 KB
    /// to one recipient per session, each socket bound to the unspecified
    /// address of the target's family, pipelining, 30 s timeout, the best
    /// backend; no count or duration yet (set one).
    pub fn new(target: SocketAddr, sessions: usize) -> SendOptions {
        SendOptions {
            target,
            sessions,
            per_session: 1,
            message_bytes: 4096,
            recipients: 1,
            total: None,
            duration: None,
            bind: Some(match target {
                SocketAddr::V4(_) => IpAddr::from([0u8; 4]),
                SocketAddr::V6(_) => IpAddr::from([0u16; 8]),
            }),
            pipelining: true,
            timeout: Duration::from_secs(30),
            backend: Backend::available_all()[0],
            warmup: Duration::ZERO,
            interval: None,
            stop: None,
        }
    }
}

/// What one interval of the run saw.
#[derive(Debug, Clone)]
pub struct Interval {
    /// Messages delivered in it.
    pub messages: u64,
    /// Failures in it.
    pub failures: u64,
    /// Latency of its messages, ns.
    pub latency: Histogram<u64>,
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Messages delivered (answered 250 after the data).
    pub messages: u64,
    /// Their recipients.
    pub recipients: u64,
    /// Sessions that ended with QUIT.
    pub sessions: u64,
    /// Sessions that failed.
    pub failed_sessions: u64,
    /// Most sessions open at once.
    pub peak_open: u64,
    /// How long it ran.
    pub elapsed: Duration,
    /// Failures by call and errno, reply, or what timed out.
    pub failures: BTreeMap<String, u64>,
    /// Latency of every message, ns.
    pub latency: Histogram<u64>,
    /// Tallies per [`SendOptions::interval`] after [`SendOptions::warmup`].
    pub intervals: Vec<Interval>,
    /// [`SendOptions::stop`] ended it.
    pub stopped: bool,
    /// Why it gave up before its count or duration (every attempt
    /// failing), if it did.
    pub gave_up: Option<String>,
}

use crate::hist::new as new_hist;

impl Outcome {
    fn new() -> Outcome {
        Outcome {
            messages: 0,
            recipients: 0,
            sessions: 0,
            failed_sessions: 0,
            peak_open: 0,
            elapsed: Duration::ZERO,
            failures: BTreeMap::new(),
            latency: new_hist(),
            intervals: Vec::new(),
            stopped: false,
            gave_up: None,
        }
    }

    /// Messages per second.
    pub fn rate(&self) -> f64 {
        self.messages as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// All failures.
    pub fn failed(&self) -> u64 {
        self.failures.values().sum()
    }

    /// Adds another process's outcome of the same run (counts summed,
    /// histograms merged, the longer time kept).
    pub fn merge(&mut self, o: &Outcome) {
        self.messages += o.messages;
        self.recipients += o.recipients;
        self.sessions += o.sessions;
        self.failed_sessions += o.failed_sessions;
        self.peak_open += o.peak_open;
        self.elapsed = self.elapsed.max(o.elapsed);
        for (k, v) in &o.failures {
            *self.failures.entry(k.clone()).or_default() += v;
        }
        let _ = self.latency.add(&o.latency);
        for (i, iv) in o.intervals.iter().enumerate() {
            if self.intervals.len() <= i {
                self.intervals.push(Interval {
                    messages: 0,
                    failures: 0,
                    latency: new_hist(),
                });
            }
            let mine = &mut self.intervals[i];
            mine.messages += iv.messages;
            mine.failures += iv.failures;
            let _ = mine.latency.add(&iv.latency);
        }
        self.stopped |= o.stopped;
        if self.gave_up.is_none() {
            self.gave_up.clone_from(&o.gave_up);
        }
    }

    /// The outcome in a form that crosses a process boundary exactly
    /// (histograms as their recorded buckets).
    pub fn report(&self) -> Report {
        let buckets = crate::hist::buckets;
        Report {
            messages: self.messages,
            recipients: self.recipients,
            sessions: self.sessions,
            failed_sessions: self.failed_sessions,
            peak_open: self.peak_open,
            seconds: self.elapsed.as_secs_f64(),
            messages_per_s: self.rate(),
            failures: self.failures.clone(),
            latency_buckets: buckets(&self.latency),
            intervals: self
                .intervals
                .iter()
                .map(|iv| IntervalReport {
                    messages: iv.messages,
                    failures: iv.failures,
                    latency_buckets: buckets(&iv.latency),
                })
                .collect(),
            stopped: self.stopped,
            gave_up: self.gave_up.clone(),
        }
    }

    /// Back from a [`Report`]; an error names a latency out of range.
    pub fn from_report(r: &Report) -> Result<Outcome, String> {
        let hist = crate::hist::from_buckets;
        Ok(Outcome {
            messages: r.messages,
            recipients: r.recipients,
            sessions: r.sessions,
            failed_sessions: r.failed_sessions,
            peak_open: r.peak_open,
            elapsed: Duration::from_secs_f64(r.seconds.max(0.0)),
            failures: r.failures.clone(),
            latency: hist(&r.latency_buckets)?,
            intervals: r
                .intervals
                .iter()
                .map(|iv| {
                    Ok(Interval {
                        messages: iv.messages,
                        failures: iv.failures,
                        latency: hist(&iv.latency_buckets)?,
                    })
                })
                .collect::<Result<_, String>>()?,
            stopped: r.stopped,
            gave_up: r.gave_up.clone(),
        })
    }
}

/// An [`Outcome`] as `scalebench smtp-send --json` prints it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    /// Messages delivered.
    pub messages: u64,
    /// Their recipients.
    pub recipients: u64,
    /// Sessions that ended with QUIT.
    pub sessions: u64,
    /// Sessions that failed.
    pub failed_sessions: u64,
    /// Most sessions open at once.
    pub peak_open: u64,
    /// How long it ran.
    pub seconds: f64,
    /// Messages per second.
    pub messages_per_s: f64,
    /// Failures by call and errno, reply, or what timed out.
    pub failures: BTreeMap<String, u64>,
    /// Message latency in ns: [value, count] of every recorded bucket.
    pub latency_buckets: Vec<(u64, u64)>,
    /// Per interval, when asked for.
    pub intervals: Vec<IntervalReport>,
    /// Ended early by ^C.
    pub stopped: bool,
    /// Why it gave up, if it did.
    pub gave_up: Option<String>,
}

/// One interval of a [`Report`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IntervalReport {
    /// Messages delivered in it.
    pub messages: u64,
    /// Failures in it.
    pub failures: u64,
    /// Latency buckets, as [`Report::latency_buckets`].
    pub latency_buckets: Vec<(u64, u64)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// No session (waiting to open one, or none left to send).
    Idle,
    /// Connecting, then waiting for the 220 greeting.
    Greeting,
    /// EHLO sent.
    Hello,
    /// MAIL, RCPTs and DATA sent (or being sent one by one).
    Envelope,
    /// The message sent (or being sent); waiting for its 250.
    Body,
    /// QUIT sent.
    Quit,
}

impl Phase {
    fn awaiting(self) -> &'static str {
        match self {
            Phase::Idle => "nothing",
            Phase::Greeting => "the greeting",
            Phase::Hello => "EHLO",
            Phase::Envelope => "the envelope",
            Phase::Body => "end of data",
            Phase::Quit => "QUIT",
        }
    }
}

struct Session {
    fd: Option<OwnedFd>,
    /// Counts the sessions the slot has opened.
    session: u64,
    phase: Phase,
    /// A byte arrived: the connection is up.
    connected: bool,
    /// Envelope replies received so far (MAIL, each RCPT, DATA).
    step: u32,
    pipelining: bool,
    inbuf: Vec<u8>,
    out: Vec<u8>,
    out_off: usize,
    /// Sending the message from this offset.
    body_off: Option<usize>,
    want_write: bool,
    /// Messages delivered in this session.
    delivered: u64,
    /// A message is claimed and not yet delivered.
    in_flight: bool,
    msg_start: Instant,
    /// When the session opened.
    opened: Instant,
    deadline: Instant,
    /// An idle slot opens its next session then.
    retry_at: Option<Instant>,
}

impl Session {
    /// Appends a command to what is to be sent.
    fn queue(&mut self, b: &[u8]) {
        if self.out_off == self.out.len() {
            self.out.clear();
            self.out_off = 0;
        }
        self.out.extend_from_slice(b);
    }
}

/// Failures in a row (without a delivery between them) after which the
/// run gives up: at least this many, and at least twice the sessions.
const GIVE_UP_STREAK: u64 = 1000;

/// How long a connected session waits for its greeting, until one session
/// of the run has been greeted, before the run gives up on the server as
/// not SMTP (an SMTP server greets first; one that says nothing until
/// asked — an HTTP server — would otherwise hold every session for the
/// whole timeout, again and again). Mail servers that pause before their
/// greeting to catch clients that talk first pause for a few seconds
/// (sendmail's greet_pause, often 5 s; postscreen's greet_wait, 6 s, after
/// the first line of its greeting); at most the timeout.
const GREETING_WAIT: Duration = Duration::from_secs(10);

struct Sender<'a> {
    opts: &'a SendOptions,
    poller: Box<dyn Poller>,
    slots: Vec<Session>,
    by_fd: Vec<usize>,
    body: Rc<[u8]>,
    mail: Vec<u8>,
    rcpts: Vec<Vec<u8>>,
    /// Messages claimed (delivered or in flight).
    claimed: u64,
    open: u64,
    streak: u64,
    /// A session of this run was greeted with 220: the server speaks SMTP.
    greeted: bool,
    start: Instant,
    now: Instant,
    buf: Vec<u8>,
    o: Outcome,
}

/// Runs the sender.
pub fn run(opts: &SendOptions) -> io::Result<Outcome> {
    if opts.sessions == 0 {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "no sessions"));
    }
    if opts.total.is_none() && opts.duration.is_none() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "say how much: a message count or a duration",
        ));
    }
    if let Some(c) = opts.backend.fd_ceiling()
        && opts.sessions + 16 > c
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} cannot watch {} sessions (at most {} descriptors)",
                opts.backend,
                opts.sessions,
                c - 16
            ),
        ));
    }
    let now = Instant::now();
    // Never more sessions than messages.
    let slots = opts
        .sessions
        .min(opts.total.map_or(usize::MAX, |t| t as usize));
    let mut s = Sender {
        opts,
        poller: opts.backend.create()?,
        slots: (0..slots)
            .map(|_| Session {
                fd: None,
                session: 0,
                phase: Phase::Idle,
                connected: false,
                step: 0,
                pipelining: false,
                inbuf: Vec::new(),
                out: Vec::new(),
                out_off: 0,
                body_off: None,
                want_write: false,
                delivered: 0,
                in_flight: false,
                msg_start: now,
                opened: now,
                deadline: now,
                retry_at: None,
            })
            .collect(),
        by_fd: Vec::new(),
        body: message(opts.message_bytes).into(),
        mail: b"MAIL FROM:<sender@scalebench.invalid>\r\n".to_vec(),
        rcpts: (0..opts.recipients.max(1))
            .map(|i| format!("RCPT TO:<rcpt{i}@scalebench.invalid>\r\n").into_bytes())
            .collect(),
        claimed: 0,
        open: 0,
        streak: 0,
        greeted: false,
        start: now,
        now,
        buf: vec![0; 16 * 1024],
        o: Outcome::new(),
    };
    s.run()?;
    s.o.elapsed = s.start.elapsed();
    Ok(s.o)
}

/// Runs the sender spread over `processes` processes (this one and
/// forked copies, which die with it), `opts.sessions` and `opts.total`
/// shared out evenly, and merges what they did ([`Outcome::merge`];
/// `peak_open` is then the sum of each process's peak). The calling
/// process must be single-threaded.
pub fn run_processes(opts: &SendOptions, processes: usize) -> io::Result<Outcome> {
    let p = processes
        .max(1)
        .min(opts.sessions.max(1))
        .min(opts.total.map_or(usize::MAX, |t| t.max(1) as usize));
    let share = |k: usize| {
        let split = |n: u64| n / p as u64 + u64::from((k as u64) < n % p as u64);
        SendOptions {
            sessions: split(opts.sessions as u64) as usize,
            total: opts.total.map(split),
            ..opts.clone()
        }
    };
    let mut children: Vec<(i32, OwnedFd)> = Vec::new();
    let abandon = |children: Vec<(i32, OwnedFd)>, e: io::Error| {
        for (pid, _) in children {
            // SAFETY: signalling our own child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            reap(pid);
        }
        Err(e)
    };
    for k in 1..p {
        let mut fds = [0; 2];
        // SAFETY: a plain pipe() into a two-int array.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            return abandon(children, io::Error::last_os_error());
        }
        // SAFETY: the pipe's fresh descriptors are ours.
        let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // SAFETY: the caller is single-threaded; the child runs the sender,
        // writes its report and exits without returning.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return abandon(children, io::Error::last_os_error());
        }
        if pid == 0 {
            sys::die_with_parent(libc::SIGTERM);
            drop(r);
            drop(std::mem::take(&mut children));
            let code = match run(&share(k)) {
                Ok(o) => match serde_json::to_writer(std::fs::File::from(w), &o.report()) {
                    Ok(()) => 0,
                    Err(_) => 2,
                },
                Err(e) => {
                    sys::say!("sender process {k}: {e}");
                    1
                }
            };
            // SAFETY: ends the child without running the parent's destructors.
            unsafe { libc::_exit(code) };
        }
        drop(w);
        children.push((pid, r));
    }
    let mut outcome = run(&share(0));
    let mut failed = Vec::new();
    for (k, (pid, r)) in children.into_iter().enumerate() {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut std::fs::File::from(r), &mut text);
        let status = reap(pid);
        match serde_json::from_str::<Report>(&text)
            .map_err(|e| e.to_string())
            .and_then(|r| Outcome::from_report(&r))
        {
            Ok(o) => {
                if let Ok(mine) = &mut outcome {
                    mine.merge(&o);
                }
            }
            Err(_) => failed.push(format!("sender process {} (wait status {status})", k + 1)),
        }
    }
    let o = outcome?;
    if !failed.is_empty() {
        return Err(io::Error::other(format!("{} failed", failed.join(", "))));
    }
    Ok(o)
}

impl Sender<'_> {
    fn run(&mut self) -> io::Result<()> {
        for i in 0..self.slots.len() {
            self.open(i);
        }
        let end = self.opts.duration.map(|d| self.start + d);
        let mut events: Vec<Event> = Vec::with_capacity(1024);
        let mut last_sweep = self.now;
        loop {
            if end.is_some_and(|e| self.now >= e) {
                break;
            }
            if self.opts.stop.is_some_and(|f| f()) {
                self.o.stopped = true;
                break;
            }
            if self.o.gave_up.is_some() {
                break;
            }
            if self
                .slots
                .iter()
                .all(|s| s.phase == Phase::Idle && s.retry_at.is_none())
            {
                break;
            }
            let mut wait = Duration::from_millis(10);
            if let Some(e) = end {
                wait = wait.min(e.saturating_duration_since(self.now));
            }
            events.clear();
            self.poller.wait(&mut events, wait.as_millis() as i32)?;
            self.now = Instant::now();
            for ev in &events {
                let Some(&i) = self.by_fd.get(ev.fd as usize) else {
                    continue;
                };
                if i == usize::MAX || self.raw(i) != Some(ev.fd) {
                    continue;
                }
                self.event(i, ev);
            }
            if self.now - last_sweep >= Duration::from_millis(10) {
                last_sweep = self.now;
                for i in 0..self.slots.len() {
                    let s = &self.slots[i];
                    if self.ungreeted_too_long(i) {
                        self.not_smtp(i, "timeout waiting for the greeting");
                        break;
                    } else if s.phase != Phase::Idle && self.now > s.deadline {
                        let what = format!("timeout waiting for {}", s.phase.awaiting());
                        self.fail(i, what);
                    } else if s.phase == Phase::Idle && s.retry_at.is_some_and(|t| t <= self.now) {
                        self.open(i);
                    }
                }
            }
        }
        self.never_greeted();
        for i in 0..self.slots.len() {
            self.close(i);
        }
        Ok(())
    }

    /// At the end of a run too short for [`GREETING_WAIT`] (a sweep's
    /// level): when no session was greeted and a connected one waited at
    /// least a second in silence, why nothing was sent.
    fn never_greeted(&mut self) {
        if self.greeted || self.o.gave_up.is_some() || self.o.stopped {
            return;
        }
        let waited = (0..self.slots.len())
            .filter(|&i| {
                let s = &self.slots[i];
                s.phase == Phase::Greeting
                    && s.inbuf.is_empty()
                    && self.raw(i).is_some_and(sock::is_connected)
            })
            .map(|i| self.now.saturating_duration_since(self.slots[i].opened))
            .max()
            .filter(|w| *w >= Duration::from_secs(1));
        if let Some(w) = waited {
            self.o.gave_up = Some(format!(
                "no greeting: the server at {} said nothing in {:.1} s after the connection (an SMTP server greets first, with 220)",
                self.opts.target,
                w.as_secs_f64()
            ));
        }
    }

    fn raw(&self, i: usize) -> Option<RawFd> {
        self.slots[i].fd.as_ref().map(|f| f.as_raw_fd())
    }

    /// Claims the next message, if the run wants one more.
    fn claim(&mut self) -> bool {
        if self.opts.total.is_some_and(|t| self.claimed >= t) {
            return false;
        }
        self.claimed += 1;
        true
    }

    /// Opens a new session in slot `i`, if there is a message for it.
    fn open(&mut self, i: usize) {
        // Opening many sessions at once can take long (bind and connect
        // search for a free port): each one's clock starts when it opens.
        self.now = Instant::now();
        self.slots[i].retry_at = None;
        if !self.claim() {
            return;
        }
        self.slots[i].in_flight = true;
        let addr = self.opts.target;
        let fd = match sock::tcp_socket_nonblocking(&addr) {
            Ok(fd) => fd,
            Err(e) => return self.fail_call(i, "socket", &e),
        };
        let raw = fd.as_raw_fd();
        if self.by_fd.len() <= raw as usize {
            self.by_fd.resize(raw as usize + 1, usize::MAX);
        }
        self.by_fd[raw as usize] = i;
        self.open += 1;
        self.o.peak_open = self.o.peak_open.max(self.open);
        let s = &mut self.slots[i];
        s.fd = Some(fd);
        s.session += 1;
        s.phase = Phase::Greeting;
        s.connected = false;
        s.delivered = 0;
        s.inbuf.clear();
        s.out.clear();
        s.out_off = 0;
        s.body_off = None;
        s.want_write = false;
        s.opened = self.now;
        s.deadline = self.now + self.opts.timeout;
        if let Some(ip) = self.opts.bind
            && let Err(e) = sock::bind(raw, &SocketAddr::new(ip, 0))
        {
            return self.fail_call(i, "bind", &e);
        }
        match sock::connect(raw, &CAddr::new(&addr)) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
            Err(e) => return self.fail_call(i, "connect", &e),
        }
        if let Err(e) = self.poller.add(raw, Interest::READ) {
            self.fail_call(i, "watch", &e);
        }
    }

    fn event(&mut self, i: usize, ev: &Event) {
        if ev.write && self.slots[i].want_write {
            self.flush(i);
            if self.slots[i].phase == Phase::Idle {
                return;
            }
        }
        if ev.read || ev.hangup {
            self.receive(i);
        }
    }

    fn receive(&mut self, i: usize) {
        loop {
            let Some(fd) = self.raw(i) else { return };
            match sock::read(fd, &mut self.buf) {
                Ok(0) => {
                    let what = format!(
                        "closed by the server awaiting {}",
                        self.slots[i].phase.awaiting()
                    );
                    return self.fail(i, what);
                }
                Ok(n) => {
                    let s = &mut self.slots[i];
                    s.connected = true;
                    s.inbuf.extend_from_slice(&self.buf[..n]);
                    if n < self.buf.len() {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => {
                    let call = if self.slots[i].connected {
                        "read"
                    } else {
                        "connect"
                    };
                    return self.fail_call(i, call, &e);
                }
            }
        }
        self.replies(i);
    }

    /// Handles the whole replies waiting in slot `i`'s input.
    fn replies(&mut self, i: usize) {
        let mut pos = 0;
        let session = self.slots[i].session;
        // A reply may end the session (and a new one take the slot).
        while self.slots[i].session == session && self.slots[i].phase != Phase::Idle {
            let s = &self.slots[i];
            match parse_reply(&s.inbuf[pos..]) {
                Ok(None) => break,
                Ok(Some(Reply { code, len })) => {
                    let ehlo_pipelining = self.slots[i].phase == Phase::Hello
                        && has_keyword(&s.inbuf[pos..pos + len], "PIPELINING");
                    pos += len;
                    self.slots[i].deadline = self.now + self.opts.timeout;
                    self.reply(i, code, ehlo_pipelining);
                }
                Err(e) => {
                    if s.phase == Phase::Greeting && !self.greeted {
                        return self.not_smtp(i, "garbage reply awaiting the greeting");
                    }
                    let what = match e {
                        ReplyError::Garbage => "garbage reply",
                        ReplyError::Mixed => "malformed reply",
                        ReplyError::TooLong => "reply too long",
                    };
                    return self.fail(i, format!("{what} awaiting {}", s.phase.awaiting()));
                }
            }
        }
        let s = &mut self.slots[i];
        if s.session == session && s.phase != Phase::Idle {
            s.inbuf.drain(..pos);
        }
    }

    /// One reply `code` for slot `i`.
    fn reply(&mut self, i: usize, code: u16, pipelining: bool) {
        let r = self.opts.recipients.max(1);
        let phase = self.slots[i].phase;
        let refused = |cmd: &str| format!("reply {code} to {cmd}");
        match phase {
            Phase::Greeting if code == 220 => {
                self.greeted = true;
                self.slots[i].queue(b"EHLO scalebench.invalid\r\n");
                self.slots[i].phase = Phase::Hello;
                self.flush(i);
            }
            // A permanent refusal before any greeting: it will not change.
            Phase::Greeting if code >= 500 && !self.greeted => {
                let greeting = crate::said(&self.slots[i].inbuf);
                self.fail(i, refused("the connection"));
                self.o.gave_up = Some(format!(
                    "the server at {} refuses sessions: it greeted with {greeting}",
                    self.opts.target
                ));
            }
            Phase::Greeting => self.fail(i, refused("the connection")),
            Phase::Hello if code == 250 => {
                self.slots[i].pipelining = self.opts.pipelining && pipelining;
                self.begin_message(i);
            }
            Phase::Hello => self.fail(i, refused("EHLO")),
            Phase::Envelope => {
                let step = self.slots[i].step;
                let (cmd, ok) = match step {
                    0 => ("MAIL", (200..300).contains(&code)),
                    k if k <= r => ("RCPT", (200..300).contains(&code)),
                    _ => ("DATA", code == 354),
                };
                if !ok {
                    return self.fail(i, refused(cmd));
                }
                let s = &mut self.slots[i];
                s.step += 1;
                if s.step == r + 2 {
                    s.phase = Phase::Body;
                    s.body_off = Some(0);
                    self.flush(i);
                } else if !s.pipelining {
                    let step = s.step;
                    self.queue_step(i, step);
                    self.flush(i);
                }
            }
            Phase::Body if code == 250 => self.delivered(i),
            Phase::Body => self.fail(i, refused("end of data")),
            Phase::Quit => {
                // Whatever the answer, the session is over.
                self.o.sessions += 1;
                self.close(i);
                self.open(i);
            }
            Phase::Idle => {}
        }
    }

    /// Queues envelope command `step` (0: MAIL, 1..=R: RCPT, R+1: DATA).
    fn queue_step(&mut self, i: usize, step: u32) {
        let r = self.opts.recipients.max(1);
        let cmd: &[u8] = match step {
            0 => &self.mail,
            k if k <= r => &self.rcpts[k as usize - 1],
            _ => b"DATA\r\n",
        };
        self.slots[i].queue(cmd);
    }

    fn begin_message(&mut self, i: usize) {
        let s = &mut self.slots[i];
        s.phase = Phase::Envelope;
        s.step = 0;
        s.msg_start = self.now;
        s.in_flight = true;
        if s.pipelining {
            let r = self.opts.recipients.max(1);
            for k in 0..r + 2 {
                self.queue_step(i, k);
            }
        } else {
            self.queue_step(i, 0);
        }
        self.flush(i);
    }

    fn delivered(&mut self, i: usize) {
        let lat = self.now.duration_since(self.slots[i].msg_start).as_nanos() as u64;
        self.o.messages += 1;
        self.o.recipients += u64::from(self.opts.recipients.max(1));
        let _ = self.o.latency.record(lat.max(1));
        if let Some(iv) = self.interval() {
            iv.messages += 1;
            let _ = iv.latency.record(lat.max(1));
        }
        self.streak = 0;
        let s = &mut self.slots[i];
        s.in_flight = false;
        s.delivered += 1;
        if s.delivered < self.opts.per_session && self.claim() {
            self.begin_message(i);
        } else {
            self.slots[i].queue(b"QUIT\r\n");
            self.slots[i].phase = Phase::Quit;
            self.flush(i);
        }
    }

    /// The tally of the interval now falls in, if intervals are kept and
    /// the warm-up is over.
    fn interval(&mut self) -> Option<&mut Interval> {
        let len = self.opts.interval?;
        let t = self
            .now
            .duration_since(self.start)
            .checked_sub(self.opts.warmup)?;
        let k = (t.as_nanos() / len.as_nanos().max(1)) as usize;
        while self.o.intervals.len() <= k {
            self.o.intervals.push(Interval {
                messages: 0,
                failures: 0,
                latency: new_hist(),
            });
        }
        Some(&mut self.o.intervals[k])
    }

    /// Writes what slot `i` has pending; waits for writability when the
    /// socket is full.
    fn flush(&mut self, i: usize) {
        let Some(fd) = self.raw(i) else { return };
        loop {
            let s = &self.slots[i];
            let chunk: &[u8] = if s.out_off < s.out.len() {
                &s.out[s.out_off..]
            } else if let Some(off) = s.body_off.filter(|&o| o < self.body.len()) {
                &self.body[off..]
            } else {
                break;
            };
            match sock::write(fd, chunk) {
                Ok(n) => {
                    let s = &mut self.slots[i];
                    s.connected = true;
                    if s.out_off < s.out.len() {
                        s.out_off += n;
                    } else if let Some(off) = &mut s.body_off {
                        *off += n;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // Still connecting (ENOTCONN on the BSDs) or full.
                Err(e)
                    if e.kind() == io::ErrorKind::WouldBlock
                        || e.raw_os_error() == Some(libc::ENOTCONN) =>
                {
                    return self.want_write(i, true);
                }
                Err(e) => {
                    let call = if self.slots[i].connected {
                        "write"
                    } else {
                        "connect"
                    };
                    return self.fail_call(i, call, &e);
                }
            }
        }
        self.want_write(i, false);
    }

    fn want_write(&mut self, i: usize, on: bool) {
        let Some(fd) = self.raw(i) else { return };
        let s = &mut self.slots[i];
        if s.want_write != on {
            s.want_write = on;
            let interest = if on { Interest::BOTH } else { Interest::READ };
            if let Err(e) = self.poller.modify(fd, interest) {
                self.fail_call(i, "watch", &e);
            }
        }
    }

    /// Whether slot `i` has waited too long for its greeting while no
    /// session of the run has been greeted: connected, and not a byte has
    /// come in [`GREETING_WAIT`] (a greeting begun, such as postscreen's
    /// `220-` before its pause, waits for the timeout).
    fn ungreeted_too_long(&self, i: usize) -> bool {
        let s = &self.slots[i];
        s.phase == Phase::Greeting
            && !self.greeted
            && s.inbuf.is_empty()
            && self.now > s.opened + GREETING_WAIT.min(self.opts.timeout)
            && self.raw(i).is_some_and(sock::is_connected)
    }

    /// Slot `i`'s server answered its connection with something that is
    /// not an SMTP greeting (or nothing) before any session was greeted:
    /// counted as `what`, and the run gives up, naming what it answered.
    fn not_smtp(&mut self, i: usize, what: &str) {
        let answer = match self.slots[i].inbuf.as_slice() {
            [] => format!(
                "said nothing in {} s after the connection",
                GREETING_WAIT.min(self.opts.timeout).as_secs_f64()
            ),
            b => format!("answered {}", crate::said(b)),
        };
        self.fail(i, what.to_string());
        self.o.gave_up = Some(format!(
            "not SMTP: the server at {} {answer} (an SMTP server greets first, with 220)",
            self.opts.target
        ));
    }

    fn fail_call(&mut self, i: usize, call: &str, e: &io::Error) {
        let errno = e
            .raw_os_error()
            .map_or_else(|| e.to_string(), sys::errno_name);
        self.fail(i, format!("{call} {errno}"));
    }

    /// Slot `i`'s session failed for `why`: counted, closed, its message
    /// given back, and a new session opens at the next sweep (not at once,
    /// so that a refusing server does not turn the loop into a spin).
    fn fail(&mut self, i: usize, why: String) {
        *self.o.failures.entry(why).or_default() += 1;
        self.o.failed_sessions += 1;
        if let Some(iv) = self.interval() {
            iv.failures += 1;
        }
        if self.slots[i].in_flight {
            self.claimed -= 1;
        }
        self.close(i);
        self.slots[i].retry_at = Some(self.now);
        self.streak += 1;
        if self.streak >= GIVE_UP_STREAK.max(2 * self.slots.len() as u64) {
            let worst = self
                .o
                .failures
                .iter()
                .max_by_key(|(_, n)| **n)
                .map(|(k, _)| k.clone())
                .unwrap_or_default();
            self.o.gave_up = Some(format!(
                "{} attempts in a row to {} failed (most often: {worst})",
                self.streak, self.opts.target
            ));
        }
    }

    /// Closes slot `i`'s connection, if open; the slot is idle after.
    fn close(&mut self, i: usize) {
        let s = &mut self.slots[i];
        s.phase = Phase::Idle;
        s.in_flight = false;
        s.want_write = false;
        if let Some(fd) = s.fd.take() {
            let raw = fd.as_raw_fd();
            let _ = self.poller.forget(raw);
            if let Some(b) = self.by_fd.get_mut(raw as usize) {
                *b = usize::MAX;
            }
            self.open -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine;
    use crate::server::{Config, FixedResponder, Handler};
    use crate::smtp::sink::{Sink, SinkCounters};
    use std::os::unix::net::UnixStream;
    use std::sync::atomic::Ordering;

    /// Serves `handler` on 127.0.0.1 in a thread while `f` runs.
    fn with_server<T>(
        mut handler: impl Handler + Send + 'static,
        cfg: Config,
        f: impl FnOnce(SocketAddr) -> T,
    ) -> T {
        let listener = sock::listen(&"127.0.0.1:0".parse().unwrap(), 1024).unwrap();
        let addr = sock::local_addr(listener.as_raw_fd()).unwrap();
        let (control, stop) = UnixStream::pair().unwrap();
        let t = std::thread::spawn(move || {
            let r = engine::serve(
                listener.as_raw_fd(),
                Some(control.as_raw_fd()),
                cfg,
                &mut handler,
            );
            drop(listener);
            r
        });
        let out = f(addr);
        drop(stop);
        t.join().unwrap().unwrap();
        out
    }

    fn readiness() -> Config {
        Config::new(Backend::available_all()[0])
    }

    #[test]
    fn every_message_reaches_the_sink_on_every_backend() {
        for backend in Backend::available_all() {
            for pipelining in [true, false] {
                let counters = SinkCounters::local();
                let o = with_server(Sink::new("t", counters), readiness(), |addr| {
                    let opts = SendOptions {
                        total: Some(300),
                        per_session: 3,
                        recipients: 2,
                        message_bytes: 20_000,
                        pipelining,
                        backend,
                        ..SendOptions::new(addr, 20)
                    };
                    run(&opts).unwrap()
                });
                let what = format!("{backend}, pipelining {pipelining}");
                assert_eq!(o.messages, 300, "{what}: {:?}", o.failures);
                assert_eq!(o.failed(), 0, "{what}: {:?}", o.failures);
                // Sessions that could not claim a further message quit early.
                assert!((100..300).contains(&o.sessions), "{what}: {}", o.sessions);
                assert_eq!(o.recipients, 600, "{what}");
                assert_eq!(o.latency.len(), 300, "{what}");
                assert!(
                    o.peak_open > 1 && o.peak_open <= 20,
                    "{what}: {}",
                    o.peak_open
                );
                assert_eq!(counters.messages.load(Ordering::Relaxed), 300, "{what}");
                assert_eq!(counters.recipients.load(Ordering::Relaxed), 600, "{what}");
                assert_eq!(
                    counters.bytes.load(Ordering::Relaxed),
                    300 * 20_000,
                    "{what}"
                );
                assert_eq!(counters.quits.load(Ordering::Relaxed), o.sessions, "{what}");
            }
        }
    }

    #[test]
    fn a_refusing_address_is_counted_and_given_up_on() {
        // Bound but not listening: connections are refused.
        let fd = sock::tcp_socket(&"127.0.0.1:0".parse().unwrap()).unwrap();
        sock::bind(fd.as_raw_fd(), &"127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = sock::local_addr(fd.as_raw_fd()).unwrap();
        let opts = SendOptions {
            total: Some(10),
            ..SendOptions::new(addr, 10)
        };
        let o = run(&opts).unwrap();
        assert_eq!(o.messages, 0);
        assert!(
            o.failures.get("connect ECONNREFUSED").copied().unwrap_or(0) >= GIVE_UP_STREAK,
            "{:?}",
            o.failures
        );
        assert!(
            o.gave_up
                .as_deref()
                .unwrap()
                .contains("connect ECONNREFUSED"),
            "{:?}",
            o.gave_up
        );
    }

    #[test]
    fn a_server_speaking_something_else_is_a_counted_failure() {
        // An HTTP server greets with "!" and answers EHLO with 400.
        let o = with_server(FixedResponder::new(10, true), readiness(), |addr| {
            run(&SendOptions {
                duration: Some(Duration::from_millis(300)),
                ..SendOptions::new(addr, 5)
            })
            .unwrap()
        });
        assert_eq!(o.messages, 0);
        assert!(
            o.failures
                .contains_key("garbage reply awaiting the greeting"),
            "{:?}",
            o.failures
        );
        let why = o.gave_up.unwrap();
        assert!(
            why.starts_with("not SMTP: the server at 127.0.0.1:"),
            "{why}"
        );
    }

    /// A listener on 127.0.0.1 that greets each connection with `greeting`
    /// (nothing: silent), and the sender's outcome against it.
    fn against(greeting: &'static [u8], opts: impl Fn(SocketAddr) -> SendOptions) -> Outcome {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        l.set_nonblocking(true).unwrap();
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop = done.clone();
        let t = std::thread::spawn(move || {
            let mut held = Vec::new();
            let end = Instant::now() + Duration::from_secs(60);
            while !stop.load(Ordering::Relaxed) && Instant::now() < end {
                match l.accept() {
                    Ok((mut c, _)) => {
                        let _ = std::io::Write::write_all(&mut c, greeting);
                        held.push(c);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(2)),
                }
            }
        });
        let o = run(&opts(addr)).unwrap();
        done.store(true, Ordering::Relaxed);
        t.join().unwrap();
        o
    }

    #[test]
    fn a_server_that_does_not_greet_or_greets_wrongly_is_given_up_at_once() {
        // Silent: the greeting's wait, at most the timeout.
        let started = Instant::now();
        let o = against(b"", |a| SendOptions {
            duration: Some(Duration::from_secs(60)),
            timeout: Duration::from_secs(2),
            ..SendOptions::new(a, 3)
        });
        let why = o.gave_up.unwrap();
        assert!(
            why.contains("said nothing in 2 s after the connection"),
            "{why}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(o.failures["timeout waiting for the greeting"], 1);
        // Bytes that cannot begin a reply: at once, as far as they came.
        let o = against(b"HTTP/1.1 4", |a| SendOptions {
            total: Some(5),
            ..SendOptions::new(a, 1)
        });
        assert!(o.gave_up.unwrap().contains("answered `HTTP/1.1 4`"));
        // A greeting begun and paused (postscreen's `220-`) is no reason.
        let o = against(b"220-wait for it\r\n", |a| SendOptions {
            duration: Some(Duration::from_millis(2500)),
            timeout: Duration::from_secs(2),
            ..SendOptions::new(a, 1)
        });
        assert!(o.gave_up.is_none(), "{:?}", o.gave_up);
        let o = against(b"554 5.7.1 go away\r\n", |a| SendOptions {
            total: Some(5),
            ..SendOptions::new(a, 2)
        });
        let why = o.gave_up.unwrap();
        assert!(
            why.contains("refuses sessions: it greeted with `554 5.7.1 go away`"),
            "{why}"
        );
        // A refusal for now (421) is counted, and sessions go on.
        let o = against(b"421 busy\r\n", |a| SendOptions {
            duration: Some(Duration::from_millis(300)),
            ..SendOptions::new(a, 2)
        });
        assert!(o.gave_up.is_none(), "{:?}", o.gave_up);
        assert!(
            o.failures["reply 421 to the connection"] > 1,
            "{:?}",
            o.failures
        );
    }

    #[test]
    fn a_delayed_sink_makes_every_message_wait_and_the_interval_tallies_add_up() {
        let cfg = Config {
            reply_delay: Some(Duration::from_millis(20)),
            ..readiness()
        };
        let o = with_server(Sink::new("t", SinkCounters::local()), cfg, |addr| {
            run(&SendOptions {
                duration: Some(Duration::from_millis(1500)),
                warmup: Duration::from_millis(300),
                interval: Some(Duration::from_millis(400)),
                ..SendOptions::new(addr, 8)
            })
            .unwrap()
        });
        assert!(
            o.messages > 0 && o.failed() == 0,
            "{} {:?}",
            o.messages,
            o.failures
        );
        // Envelope and end of data are two delayed replies.
        assert!(o.latency.min() >= 40_000_000, "{}", o.latency.min());
        assert!(o.intervals.len() >= 3, "{}", o.intervals.len());
        let tallied: u64 = o.intervals.iter().map(|i| i.messages).sum();
        assert!(tallied < o.messages && tallied > 0);
        let back = Outcome::from_report(&o.report()).unwrap();
        assert_eq!(back.messages, o.messages);
        assert_eq!(back.latency.len(), o.latency.len());
        assert_eq!(
            back.latency.value_at_quantile(0.99),
            o.latency.value_at_quantile(0.99)
        );
        assert_eq!(back.intervals[1].messages, o.intervals[1].messages);
        let mut two = back.clone();
        two.merge(&back);
        assert_eq!(two.messages, 2 * o.messages);
        assert_eq!(two.intervals[0].messages, 2 * o.intervals[0].messages);
    }
}
