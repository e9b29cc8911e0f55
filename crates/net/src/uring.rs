//! The server loop on io_uring (Linux): completions instead of readiness.
//! One multishot accept, one multishot receive per connection into a ring
//! of buffers the kernel picks from, and every response a `sendmsg`
//! submission; all that a batch of completions asks for is submitted, and
//! the next completions waited for, in one `io_uring_enter`. On this
//! project's 2-vCPU VM a prototype of this loop needed 0–13 % less CPU per
//! keep-alive request than the same server on epoll (docs/performance.md):
//! no `epoll_wait`, no `read` call, one system call for many sends.
//!
//! The ring is set up for a single issuer with deferred task work (Linux
//! 6.1): without that, the completions run as task work that interrupts
//! the server, and the prototype needed a third more CPU than epoll.
//! [`available`] says whether this kernel can; the caller falls back to
//! the readiness loop when it cannot.
//!
//! Ownership: a response's memory must live until its send completes, so
//! a connection with a send in flight parses no further requests (their
//! answers would append to the output being sent); they wait in its input
//! buffer until the send completes. A connection being closed keeps its
//! buffers until every operation on it has completed. Completions carry
//! the descriptor and a generation, so one for a connection already closed
//! is never taken for its successor on the same descriptor.
//!
//! Bounds, as in the readiness loop: answers run at most
//! [`OUT_HIGH`] bytes ahead of the reader, and while requests are held
//! back (a send in flight, or answers that far ahead) and
//! [`READ_BURST`] bytes wait unparsed, the connection's receive is
//! cancelled and started again once they are answered — a client that
//! pipelines without reading holds little memory. A close with input
//! still coming lingers ([`super::server::LINGER`]).

use super::output::{Flushed, IOV_MAX, Output};
use super::server::{
    Config, Exchange, Handler, LINGER, OUT_HIGH, READ_BURST, Stats, expired, next_deadline,
    next_sweep,
};
use super::sock;
use io_uring::{IoUring, cqueue, opcode, types};
use std::collections::HashMap;
use std::io;
use std::os::fd::RawFd;
use std::time::Duration;
use sys::coarse_now;

/// Buffers in the receive ring, and their size.
const NBUF: u16 = 512;
const BUF_SIZE: usize = 4096;
const BGID: u16 = 7;

const ACCEPT: u64 = 1;
const RECV: u64 = 2;
const SEND: u64 = 3;
const POLL_OUT: u64 = 4;
const CONTROL: u64 = 5;

fn tag(kind: u64, era: u32, fd: RawFd) -> u64 {
    (kind << 56) | (u64::from(era & 0x00ff_ffff) << 32) | u64::from(fd as u32)
}

fn untag(t: u64) -> (u64, u32, RawFd) {
    (t >> 56, ((t >> 32) & 0x00ff_ffff) as u32, t as u32 as RawFd)
}

/// Whether this kernel runs the io_uring loop: a ring with a single issuer
/// and deferred task work, and a ring of provided buffers. Probed once, on
/// a thread of its own: when a ring is torn down the kernel queues work on
/// every thread that used it (`TIF_NOTIFY_SIGNAL`), and a blocking socket
/// call with a timeout on such a thread then fails with EINTR although no
/// signal came (seen here: a test client's read beside the probe).
pub fn available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        std::thread::spawn(|| Ring::new(8).is_ok())
            .join()
            .unwrap_or(false)
    })
}

/// The ring and the receive buffers registered with it.
struct Ring {
    ring: IoUring,
    /// The buffer ring's entries (page-aligned, shared with the kernel).
    entries: *mut types::BufRingEntry,
    entries_layout: std::alloc::Layout,
    bufs: Vec<u8>,
    /// Our copy of the buffer ring's tail.
    tail: u16,
}

impl Ring {
    fn new(sq: u32) -> io::Result<Ring> {
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(sq)?;
        let layout = std::alloc::Layout::from_size_align(
            usize::from(NBUF) * std::mem::size_of::<types::BufRingEntry>(),
            4096,
        )
        .map_err(io::Error::other)?;
        // SAFETY: a non-zero size; zeroed memory is a valid empty ring.
        let entries = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<types::BufRingEntry>();
        if entries.is_null() {
            return Err(io::Error::from(io::ErrorKind::OutOfMemory));
        }
        let mut r = Ring {
            ring,
            entries,
            entries_layout: layout,
            bufs: vec![0u8; usize::from(NBUF) * BUF_SIZE],
            tail: 0,
        };
        // SAFETY: the entries live as long as the ring (freed in Drop after it).
        unsafe {
            r.ring
                .submitter()
                .register_buf_ring_with_flags(entries as u64, NBUF, BGID, 0)?;
        }
        for bid in 0..NBUF {
            r.give_back(bid);
        }
        Ok(r)
    }

    /// Hands buffer `bid` back to the kernel.
    fn give_back(&mut self, bid: u16) {
        let slot = usize::from(self.tail & (NBUF - 1));
        // SAFETY: slot < NBUF; the kernel reads entries only below the
        // published tail, which moves after the entry is written.
        unsafe {
            let e = &mut *self.entries.add(slot);
            e.set_addr(self.bufs.as_ptr().add(usize::from(bid) * BUF_SIZE) as u64);
            e.set_len(BUF_SIZE as u32);
            e.set_bid(bid);
            self.tail = self.tail.wrapping_add(1);
            let tail = types::BufRingEntry::tail(self.entries).cast_mut();
            std::sync::atomic::AtomicU16::from_ptr(tail)
                .store(self.tail, std::sync::atomic::Ordering::Release);
        }
    }

    fn buf(&self, bid: u16, len: usize) -> &[u8] {
        let at = usize::from(bid) * BUF_SIZE;
        &self.bufs[at..at + len.min(BUF_SIZE)]
    }

    /// Queues `e`, submitting first when the queue is full.
    fn push(&mut self, e: &io_uring::squeue::Entry) -> io::Result<()> {
        loop {
            // SAFETY: every entry points at memory that lives until its
            // completion (see the module comment).
            if unsafe { self.ring.submission().push(e) }.is_ok() {
                return Ok(());
            }
            self.ring.submit()?;
        }
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        let _ = self.ring.submitter().unregister_buf_ring(BGID);
        // SAFETY: allocated in new with this layout; the kernel let go of it.
        unsafe { std::alloc::dealloc(self.entries.cast(), self.entries_layout) };
    }
}

/// A send in flight: the message header and vectors it points at.
struct Sending {
    msg: libc::msghdr,
    iov: [libc::iovec; IOV_MAX],
}

struct Conn {
    era: u32,
    inbuf: Vec<u8>,
    out: Output,
    ex: Exchange,
    /// Operations submitted and not yet completed for good.
    recv_armed: bool,
    /// The receive is being cancelled (requests held back).
    recv_cancel: bool,
    sending: Option<Box<Sending>>,
    polling: bool,
    /// The peer sent its last byte.
    eof: bool,
    /// Shut down; waits for its operations before its descriptor closes.
    closing: bool,
}

impl Conn {
    fn busy(&self) -> bool {
        self.recv_armed || self.sending.is_some() || self.polling
    }

    /// Whether its requests wait behind its answers (a send in flight,
    /// or answers [`OUT_HIGH`] ahead) with [`READ_BURST`] bytes of them
    /// unparsed: then nothing more is received until they are answered.
    fn held_back(&self) -> bool {
        self.inbuf.len() >= READ_BURST
            && (self.sending.is_some() || self.polling || self.out.queued() >= OUT_HIGH)
    }
}

struct Server<'h> {
    ring: Ring,
    listener: RawFd,
    conns: Vec<Option<Box<Conn>>>,
    /// Connections shut down with operations still in flight, by tag.
    closing: HashMap<(RawFd, u32), Box<Conn>>,
    handler: &'h mut dyn Handler,
    cfg: Config,
    stats: Stats,
    next_era: u32,
    accepting: bool,
    paused_until: Option<Duration>,
    next_sweep: Option<Duration>,
    now: Duration,
    file_buf: Vec<u8>,
    /// Send records of completed sends, reused (one allocation per
    /// connection sending at once, not one per send). Boxed: the kernel
    /// reads a record at its address while the send is in flight.
    #[allow(clippy::vec_box)]
    spare: Vec<Box<Sending>>,
    stop: bool,
}

/// Serves on `listener` with io_uring until `control` reports end of input
/// (or an error); as [`super::server::serve_ready`], whose settings it takes
/// (the backend and the accept burst do not apply).
pub fn serve(
    listener: RawFd,
    control: Option<RawFd>,
    cfg: Config,
    handler: &mut dyn Handler,
) -> io::Result<Stats> {
    let mut s = Server {
        ring: Ring::new(4096)?,
        listener,
        conns: Vec::new(),
        closing: HashMap::new(),
        handler,
        cfg,
        stats: Stats::default(),
        next_era: 1,
        accepting: false,
        paused_until: None,
        next_sweep: (cfg.idle_timeout.is_some() || cfg.head_timeout.is_some())
            .then(|| coarse_now() + super::server::SWEEP),
        now: coarse_now(),
        file_buf: Vec::new(),
        spare: Vec::new(),
        stop: false,
    };
    s.arm_accept()?;
    if let Some(c) = control {
        s.ring.push(
            &opcode::PollAdd::new(types::Fd(c), libc::POLLIN as u32)
                .build()
                .user_data(tag(CONTROL, 0, c)),
        )?;
    }
    let result = s.run();
    s.stop = true;
    for fd in 0..s.conns.len() {
        if s.conns[fd].is_some() {
            s.shut(fd as RawFd);
        }
    }
    s.drain();
    let stats = s.stats;
    // The ring goes first (its drop waits for nothing, but the kernel
    // cancels what is in flight as it tears the ring down), then the
    // connections' memory.
    let Server { ring, closing, .. } = s;
    drop(ring);
    drop(closing);
    result.map(|()| stats)
}

impl Server<'_> {
    /// After the loop: cancels the accept and waits (up to a second) for
    /// the operations of the connections just shut down to complete, so
    /// that no memory they point into is freed under them.
    fn drain(&mut self) {
        if self.accepting {
            let _ = self.ring.push(
                &opcode::AsyncCancel::new(tag(ACCEPT, 0, self.listener))
                    .build()
                    .user_data(0),
            );
        }
        let start = coarse_now();
        while !self.closing.is_empty() && coarse_now() < start + Duration::from_secs(1) {
            let ts = types::Timespec::from(Duration::from_millis(20));
            let args = types::SubmitArgs::new().timespec(&ts);
            let _ = self.ring.ring.submitter().submit_with_args(1, &args);
            let done: Vec<(u64, i32, u32)> = self
                .ring
                .ring
                .completion()
                .map(|c| (c.user_data(), c.result(), c.flags()))
                .collect();
            for (t, res, flags) in done {
                let _ = self.completed(t, res, flags);
            }
        }
    }

    fn arm_accept(&mut self) -> io::Result<()> {
        if !self.accepting {
            self.ring.push(
                // Non-blocking: what serve writes or reads directly (a
                // first read, sendfile) must never hold the loop.
                &opcode::AcceptMulti::new(types::Fd(self.listener))
                    .flags(libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC)
                    .build()
                    .user_data(tag(ACCEPT, 0, self.listener)),
            )?;
            self.accepting = true;
        }
        Ok(())
    }

    fn run(&mut self) -> io::Result<()> {
        let mut done: Vec<(u64, i32, u32)> = Vec::with_capacity(1024);
        while !self.stop && !self.cfg.stop.is_some_and(|f| f()) {
            let r = match next_deadline(self.paused_until, self.next_sweep) {
                Some(t) => {
                    let left = t.saturating_sub(coarse_now());
                    let ts = types::Timespec::from(left.max(Duration::from_micros(100)));
                    let args = types::SubmitArgs::new().timespec(&ts);
                    self.ring.ring.submitter().submit_with_args(1, &args)
                }
                None => self.ring.ring.submit_and_wait(1),
            };
            match r {
                Ok(_) => {}
                Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME) | Some(libc::EINTR)) => {}
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {}
                Err(e) => return Err(e),
            }
            if self.paused_until.is_some() || self.next_sweep.is_some() {
                let now = coarse_now();
                self.now = now;
                if self.paused_until.is_some_and(|t| now >= t) {
                    self.paused_until = None;
                    self.arm_accept()?;
                }
                if self.next_sweep.is_some_and(|t| now >= t) {
                    self.sweep(now);
                }
            }
            done.clear();
            done.extend(
                self.ring
                    .ring
                    .completion()
                    .map(|c| (c.user_data(), c.result(), c.flags())),
            );
            for &(t, res, flags) in &done {
                self.completed(t, res, flags)?;
            }
        }
        Ok(())
    }

    /// The completion of the operation tagged `t`, with its result and
    /// flags, handed to its kind's step.
    fn completed(&mut self, t: u64, res: i32, flags: u32) -> io::Result<()> {
        let (kind, era, fd) = untag(t);
        match kind {
            ACCEPT => self.accept_done(res, flags),
            CONTROL => self.control_done(t, fd),
            RECV => self.recv_done(fd, era, res, flags),
            SEND => self.send_done(fd, era, res),
            POLL_OUT => self.poll_out_done(fd, era),
            _ => Ok(()),
        }
    }

    /// An accept completed (`res` the new descriptor or an error): the
    /// connection opened, or accepting paused while out of descriptors;
    /// accepting armed again once the multishot accept ended.
    #[inline]
    fn accept_done(&mut self, res: i32, flags: u32) -> io::Result<()> {
        if !cqueue::more(flags) {
            self.accepting = false;
        }
        if res >= 0 {
            self.opened(res);
        } else {
            if !matches!(-res, libc::EINTR | libc::ECANCELED | libc::EAGAIN) {
                super::server::count_accept_error(&mut self.stats, &self.cfg, -res);
            }
            match -res {
                libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM => {
                    // Out of descriptors: accept again after a
                    // pause, or when a connection closes.
                    if self.paused_until.is_none() {
                        self.stats.accept_pauses += 1;
                    }
                    self.paused_until = Some(coarse_now() + self.cfg.accept_pause);
                    return Ok(());
                }
                e if super::errcount::listener_broken(e) => {
                    return Err(io::Error::from_raw_os_error(e));
                }
                // Counted above; serving goes on (ENOENT, EADDRINUSE …).
                _ => {}
            }
        }
        if !self.accepting && self.paused_until.is_none() && !self.stop {
            self.arm_accept()?;
        }
        Ok(())
    }

    /// The control descriptor `fd` (tagged `t`) is readable: stop at its
    /// end or error, else poll it again.
    #[inline]
    fn control_done(&mut self, t: u64, fd: RawFd) -> io::Result<()> {
        let mut b = [0u8; 64];
        match sock::read(fd, &mut b) {
            Ok(0) => self.stop = true,
            Ok(n) => {
                if let Some(t) = self.cfg.accept_errors {
                    t.answer(&b[..n]);
                }
            }
            Err(e)
                if e.kind() != io::ErrorKind::WouldBlock
                    && e.kind() != io::ErrorKind::Interrupted =>
            {
                self.stop = true
            }
            _ => {}
        }
        if !self.stop {
            self.ring.push(
                &opcode::PollAdd::new(types::Fd(fd), libc::POLLIN as u32)
                    .build()
                    .user_data(t),
            )?;
        }
        Ok(())
    }

    /// A receive on connection `fd` of `era` completed (`res` bytes, in
    /// the buffer `flags` name): the bytes taken in and answered, the
    /// buffer given back, the receive armed again if it ended; the
    /// connection shut if its peer is gone.
    #[inline]
    fn recv_done(&mut self, fd: RawFd, era: u32, res: i32, flags: u32) -> io::Result<()> {
        let bid = cqueue::buffer_select(flags);
        let more = cqueue::more(flags);
        let live = self.live(fd, era);
        let mut gone = false;
        if live {
            let c = self.conns[fd as usize].as_mut().expect("live");
            if !more {
                c.recv_armed = false;
                c.recv_cancel = false;
            }
            if res > 0 {
                let data = self.ring.buf(bid.unwrap_or(0), res as usize);
                if !c.ex.close_after {
                    c.inbuf.extend_from_slice(data);
                } else if c.ex.drop_input(data.len()) {
                    // Lingered over its byte budget.
                    gone = true;
                }
            } else if res == 0 {
                c.eof = true;
            } else if res != -libc::ENOBUFS && res != -libc::ECANCELED {
                // Reset or other error: the peer is gone.
                gone = true;
            }
        } else if !more {
            self.settle(fd, era, |c| c.recv_armed = false);
        }
        if let Some(b) = bid {
            self.ring.give_back(b);
        }
        if gone {
            self.shut(fd);
            return Ok(());
        }
        if live {
            self.answer(fd)?;
            // A receive that ended (out of buffers, cancelled, or
            // the kernel ended it) is started again, unless
            // requests are held back.
            if self.live(fd, era) {
                self.arm_recv(fd)?;
                self.hold_back(fd)?;
            }
        }
        Ok(())
    }

    /// A send on connection `fd` of `era` completed (`res` bytes sent or
    /// an error): its buffer spared, the rest of the answer sent.
    #[inline]
    fn send_done(&mut self, fd: RawFd, era: u32, res: i32) -> io::Result<()> {
        if self.live(fd, era) {
            let c = self.conns[fd as usize].as_mut().expect("live");
            let done = c.sending.take();
            self.spare.extend(done);
            if res < 0 {
                self.shut(fd);
                return Ok(());
            }
            c.out.consume(res as usize);
            c.ex.last_io = self.now;
            self.answer(fd)?;
        } else {
            let mut done = None;
            self.settle(fd, era, |c| done = c.sending.take());
            self.spare.extend(done);
        }
        Ok(())
    }

    /// Connection `fd` of `era` is writable again: answer on.
    #[inline]
    fn poll_out_done(&mut self, fd: RawFd, era: u32) -> io::Result<()> {
        if self.live(fd, era) {
            self.conns[fd as usize].as_mut().expect("live").polling = false;
            self.answer(fd)?;
        } else {
            self.settle(fd, era, |c| c.polling = false);
        }
        Ok(())
    }

    fn live(&self, fd: RawFd, era: u32) -> bool {
        self.conns
            .get(fd as usize)
            .and_then(Option::as_ref)
            .is_some_and(|c| c.era == era && !c.closing)
    }

    /// An operation of a connection being closed completed: its memory
    /// goes when nothing is left in flight.
    fn settle(&mut self, fd: RawFd, era: u32, f: impl FnOnce(&mut Conn)) {
        if let Some(c) = self.closing.get_mut(&(fd, era)) {
            f(c);
            if !c.busy() {
                self.closing.remove(&(fd, era));
            }
        }
    }

    fn opened(&mut self, fd: RawFd) {
        self.stats.accepted += 1;
        let idx = fd as usize;
        if self.conns.len() <= idx {
            self.conns.resize_with(idx + 1, || None);
        }
        let era = self.next_era & 0x00ff_ffff;
        self.next_era = self.next_era.wrapping_add(1);
        let mut c = Box::new(Conn {
            era,
            inbuf: Vec::new(),
            out: Output::default(),
            ex: Exchange::new(self.now),
            recv_armed: false,
            recv_cancel: false,
            sending: None,
            polling: false,
            eof: false,
            closing: false,
        });
        let greeting = self.handler.greeting();
        if !greeting.is_empty() {
            c.out.bytes(greeting);
        }
        self.conns[idx] = Some(c);
        // Accept is deferred until the request arrives, so it is usually
        // here: read and answered at once. A connection closed after that
        // one answer never has a receive armed, and its response is then
        // written directly (as the readiness loop does): no ring work, no
        // shutdown, for a short connection.
        let mut b = [0u8; 4096];
        loop {
            match sock::read(fd, &mut b) {
                Ok(0) => {
                    self.conns[idx].as_mut().expect("open").eof = true;
                    break;
                }
                Ok(k) => {
                    let c = self.conns[idx].as_mut().expect("open");
                    c.inbuf.extend_from_slice(&b[..k]);
                    // The rest, if any, comes by the receive armed below.
                    if k < b.len() || c.inbuf.len() >= READ_BURST {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(_) => {
                    self.shut(fd);
                    return;
                }
            }
        }
        if self.answer(fd).is_err() {
            self.shut(fd);
            return;
        }
        if self.conns[idx].as_ref().is_some_and(|c| !c.ex.close_after) && self.arm_recv(fd).is_err()
        {
            self.shut(fd);
        }
    }

    fn arm_recv(&mut self, fd: RawFd) -> io::Result<()> {
        let c = self.conns[fd as usize].as_mut().expect("open");
        if c.recv_armed || c.eof || c.held_back() {
            return Ok(());
        }
        c.recv_armed = true;
        let t = tag(RECV, c.era, fd);
        self.ring.push(
            &opcode::RecvMulti::new(types::Fd(fd), BGID)
                .build()
                .user_data(t),
        )
    }

    /// Cancels the receive of a connection whose requests are held back
    /// ([`Conn::held_back`]); [`Server::answer`] starts it again.
    fn hold_back(&mut self, fd: RawFd) -> io::Result<()> {
        let c = self.conns[fd as usize].as_mut().expect("open");
        if !c.recv_armed || c.recv_cancel || !c.held_back() {
            return Ok(());
        }
        c.recv_cancel = true;
        let t = tag(RECV, c.era, fd);
        // Its own completion (user data 0) is ignored; the receive's last
        // completion says ECANCELED.
        self.ring
            .push(&opcode::AsyncCancel::new(t).build().user_data(0))
    }

    /// Parses what arrived, answers it, and sends what is pending — unless
    /// a send is still in flight (its completion calls this again).
    /// Starts the receive again if it was stopped while requests were
    /// held back.
    fn answer(&mut self, fd: RawFd) -> io::Result<()> {
        self.answer_waiting(fd)?;
        match self.conns.get(fd as usize).and_then(Option::as_ref) {
            Some(c) if !c.ex.close_after && !c.recv_armed => self.arm_recv(fd),
            _ => Ok(()),
        }
    }

    fn answer_waiting(&mut self, fd: RawFd) -> io::Result<()> {
        let now = self.next_sweep.is_some().then_some(self.now);
        let Server {
            conns,
            handler,
            stats,
            cfg,
            ..
        } = self;
        let c = conns[fd as usize].as_mut().expect("open");
        if c.sending.is_some() || c.polling {
            return Ok(());
        }
        let start =
            c.ex.answer(&c.inbuf, cfg, &mut **handler, stats, &mut c.out);
        if c.ex.close_after {
            c.inbuf.clear();
        } else {
            c.inbuf.drain(..start);
        }
        // At the end of input, it closes once no request is held back
        // behind answers still going out.
        let held = c.out.queued() >= OUT_HIGH && !c.inbuf.is_empty();
        c.ex.answered(fd, !c.inbuf.is_empty(), now, c.eof && !held);
        self.send(fd)
    }

    /// Starts sending what is pending: memory by a send submission (one
    /// buffer) or a sendmsg submission (several), a
    /// file range at once with sendfile (waiting for writability by a poll
    /// submission when the socket is full); closes when all is out and the
    /// connection is to close.
    fn send(&mut self, fd: RawFd) -> io::Result<()> {
        let c = self.conns[fd as usize].as_mut().expect("open");
        if c.out.is_empty() {
            if c.ex.close_after {
                return self.finish(fd);
            }
            return Ok(());
        }
        if c.ex.close_after && !c.busy() {
            // Answered once and closing, nothing submitted for it (see
            // opened): written directly, the ring only if the socket is full.
            match c
                .out
                .flush(fd, self.cfg.file_mode, &mut self.file_buf, true)
            {
                Err(_) => {
                    self.shut(fd);
                    return Ok(());
                }
                Ok(Flushed::Done) => return self.finish(fd),
                Ok(Flushed::Blocked) => {}
            }
        }
        if c.out.file_next() {
            match c
                .out
                .flush(fd, self.cfg.file_mode, &mut self.file_buf, c.ex.close_after)
            {
                Err(_) => {
                    self.shut(fd);
                    return Ok(());
                }
                Ok(Flushed::Done) => {
                    return if c.ex.close_after {
                        self.finish(fd)
                    } else {
                        Ok(())
                    };
                }
                Ok(Flushed::Blocked) => {
                    c.polling = true;
                    let t = tag(POLL_OUT, c.era, fd);
                    return self.ring.push(
                        &opcode::PollAdd::new(types::Fd(fd), libc::POLLOUT as u32)
                            .build()
                            .user_data(t),
                    );
                }
            }
        }
        let mut s = self.spare.pop().unwrap_or_else(|| {
            Box::new(Sending {
                // SAFETY: msghdr is plain data.
                msg: unsafe { std::mem::zeroed() },
                iov: [libc::iovec {
                    iov_base: std::ptr::null_mut(),
                    iov_len: 0,
                }; IOV_MAX],
            })
        });
        let n = c.out.gather(&mut s.iov);
        let mut flags = libc::MSG_NOSIGNAL;
        if c.out.has_file() {
            flags |= libc::MSG_MORE;
        }
        let t = tag(SEND, c.era, fd);
        let e = if n == 1 {
            // One buffer (a whole cached response): a plain send, which
            // spares the kernel copying and checking a message header.
            let len = u32::try_from(s.iov[0].iov_len).unwrap_or(u32::MAX);
            opcode::Send::new(types::Fd(fd), s.iov[0].iov_base.cast(), len)
                .flags(flags)
                .build()
                .user_data(t)
        } else {
            s.msg.msg_iov = s.iov.as_mut_ptr();
            s.msg.msg_iovlen = n as _;
            opcode::SendMsg::new(types::Fd(fd), &s.msg)
                .flags(flags as u32)
                .build()
                .user_data(t)
        };
        c.sending = Some(s);
        self.ring.push(&e)
    }

    /// After the last answer: closes, or — when input is still coming —
    /// shuts down the write side and lingers, its receive dropping what
    /// arrives, until the peer's end of input or the linger's end.
    fn finish(&mut self, fd: RawFd) -> io::Result<()> {
        let c = self.conns[fd as usize].as_mut().expect("open");
        if c.ex.linger_until.is_some() {
            if c.eof {
                self.shut(fd);
            }
            return Ok(());
        }
        if !c.ex.lingers(c.eof) {
            self.shut(fd);
            return Ok(());
        }
        let now = coarse_now();
        c.ex.linger_until = Some(now + LINGER);
        // SAFETY: our own socket.
        unsafe { libc::shutdown(fd, libc::SHUT_WR) };
        if self.next_sweep.is_none() {
            // Timeouts are off: sweep until the lingering is over.
            self.now = now;
            self.next_sweep = Some(now + super::server::SWEEP);
        }
        self.arm_recv(fd)
    }

    /// Ends a connection: shut down at once (which ends its receive), its
    /// descriptor closed and its memory freed when nothing is in flight.
    fn shut(&mut self, fd: RawFd) {
        let Some(mut c) = self.conns.get_mut(fd as usize).and_then(Option::take) else {
            return;
        };
        self.stats.closed += 1;
        c.closing = true;
        if c.busy() {
            // Ends the receive (and any send) in flight.
            // SAFETY: our own socket.
            unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
        }
        sock::close(fd);
        if c.busy() {
            self.closing.insert((fd, c.era), c);
        }
        if self.paused_until.is_some() {
            self.paused_until = None;
            let _ = self.arm_accept();
        }
    }

    /// Closes connections idle, or sending a request head, for too long.
    fn sweep(&mut self, now: Duration) {
        // Output stays queued until its send completes: nothing queued is
        // nothing in flight.
        let quiet = |c: &Conn| c.out.is_empty() && c.inbuf.is_empty();
        let (fds, more) = expired(&self.conns, &self.cfg, now, |c| (&c.ex, quiet(c)));
        for fd in fds {
            self.stats.timeouts += 1;
            self.shut(fd);
        }
        self.next_sweep = next_sweep(&self.conns, &self.cfg, now, more, |c| &c.ex);
    }
}
