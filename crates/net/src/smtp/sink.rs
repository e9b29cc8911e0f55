//! The SMTP sink: a [`Handler`] for the server's event loop that speaks
//! enough ESMTP for any sender — EHLO/HELO, MAIL, RCPT, DATA, RSET, NOOP,
//! VRFY, HELP, QUIT, with PIPELINING (commands are answered in order from
//! whatever arrived in one read) — and counts every message it accepts,
//! then discards it. A reply delay ([`super::super::server::Config`]'s
//! `reply_delay`) plays a slow remote MTA.
//!
//! Out-of-order commands get the 503 a real MTA gives; an unknown command
//! 502; a line longer than [`MAX_LINE`] 500 and the connection closes;
//! after [`MAX_ERRORS`] errors 421 and it closes. The counters live in
//! memory shared by every worker process ([`SinkCounters::shared`]).

use super::MAX_LINE;
use crate::output::Output;
use crate::server::{Config, Exchange, Handler, OUT_HIGH, Stats};
use std::sync::atomic::{AtomicU64, Ordering};

/// Errors (unknown or out-of-order commands) before a session is closed.
pub const MAX_ERRORS: u64 = 20;

/// What the sink accepted, in all of its processes.
#[derive(Debug, Default)]
pub struct SinkCounters {
    /// Messages accepted (250 after the end of data).
    pub messages: AtomicU64,
    /// Recipients of those messages.
    pub recipients: AtomicU64,
    /// Bytes of message data (dot line excluded).
    pub bytes: AtomicU64,
    /// Commands read.
    pub commands: AtomicU64,
    /// Error replies sent (4xx, 5xx).
    pub errors: AtomicU64,
    /// Sessions ended by QUIT.
    pub quits: AtomicU64,
}

impl SinkCounters {
    /// Counters in memory shared with every process this one forks
    /// afterwards (an anonymous shared mapping, kept for the life of the
    /// process).
    pub fn shared() -> std::io::Result<&'static SinkCounters> {
        // SAFETY: zeroed memory is a valid `SinkCounters` (atomics of zero).
        unsafe { crate::errcount::shared_zeroed() }
    }

    /// Counters of this process only (tests).
    pub fn local() -> &'static SinkCounters {
        Box::leak(Box::default())
    }

    /// The counts now.
    pub fn snapshot(&self) -> SinkCounts {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        SinkCounts {
            messages: get(&self.messages),
            recipients: get(&self.recipients),
            bytes: get(&self.bytes),
            commands: get(&self.commands),
            error_replies: get(&self.errors),
            quits: get(&self.quits),
        }
    }

    fn add(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }
}

/// What a sink accepted, as `smtp-sink --json` prints it at the end.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SinkCounts {
    /// Messages accepted.
    pub messages: u64,
    /// Their recipients.
    pub recipients: u64,
    /// Bytes of message data.
    pub bytes: u64,
    /// Commands read.
    pub commands: u64,
    /// Error replies sent.
    pub error_replies: u64,
    /// Sessions ended by QUIT.
    pub quits: u64,
}

// The state of a session, in its [`Exchange::state`].
/// Reading message data.
const DATA: u64 = 1;
/// In data, in the middle of a line (not at its start).
const MIDLINE: u64 = 2;
/// MAIL was accepted.
const MAIL: u64 = 4;
/// Greeted with HELO or EHLO.
const HELLO: u64 = 8;
/// Recipients of the current transaction: bits 16..40.
const RCPT_SHIFT: u32 = 16;
const RCPT_MASK: u64 = 0xff_ffff;
/// Errors so far: bits 40..48.
const ERR_SHIFT: u32 = 40;

fn recipients(state: u64) -> u64 {
    (state >> RCPT_SHIFT) & RCPT_MASK
}

fn errors(state: u64) -> u64 {
    (state >> ERR_SHIFT) & 0xff
}

/// The sink's replies.
pub struct Sink {
    counters: &'static SinkCounters,
    greeting: Vec<u8>,
    ehlo: Vec<u8>,
    helo: Vec<u8>,
}

impl Sink {
    /// A sink calling itself `host`, counting into `counters`.
    pub fn new(host: &str, counters: &'static SinkCounters) -> Sink {
        Sink {
            counters,
            greeting: format!("220 {host} ESMTP scalebench sink\r\n").into_bytes(),
            ehlo: format!("250-{host}\r\n250-PIPELINING\r\n250-8BITMIME\r\n250 SIZE\r\n")
                .into_bytes(),
            helo: format!("250 {host}\r\n").into_bytes(),
        }
    }

    /// Answers one command line (without its line end).
    fn command(&self, line: &[u8], ex: &mut Exchange, out: &mut Output) {
        SinkCounters::add(&self.counters.commands, 1);
        // The verb, upper-cased, in place: no allocation per command.
        let mut buf = [0u8; 8];
        let mut len = 0;
        for &c in line
            .iter()
            .take_while(|c| !c.is_ascii_whitespace() && **c != b':')
            .take(buf.len())
        {
            buf[len] = c.to_ascii_uppercase();
            len += 1;
        }
        let verb = &buf[..len];
        let arg = |prefix: &str| {
            line.len() >= prefix.len()
                && line[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
        };
        let reset = |s: u64| s & !(MAIL | (RCPT_MASK << RCPT_SHIFT));
        let reply: &[u8] = match verb {
            b"EHLO" => {
                ex.state = reset(ex.state) | HELLO;
                out.bytes(&self.ehlo);
                return;
            }
            b"HELO" => {
                ex.state = reset(ex.state) | HELLO;
                out.bytes(&self.helo);
                return;
            }
            b"MAIL" if !arg("MAIL FROM:") => b"501 5.5.4 Syntax: MAIL FROM:<address>\r\n",
            b"MAIL" if ex.state & HELLO == 0 => b"503 5.5.1 Error: send HELO/EHLO first\r\n",
            b"MAIL" if ex.state & MAIL != 0 => b"503 5.5.1 Error: nested MAIL command\r\n",
            b"MAIL" => {
                ex.state |= MAIL;
                b"250 2.1.0 Ok\r\n"
            }
            b"RCPT" if !arg("RCPT TO:") => b"501 5.5.4 Syntax: RCPT TO:<address>\r\n",
            b"RCPT" if ex.state & MAIL == 0 => b"503 5.5.1 Error: need MAIL command\r\n",
            b"RCPT" => {
                if recipients(ex.state) < RCPT_MASK {
                    ex.state += 1 << RCPT_SHIFT;
                }
                b"250 2.1.5 Ok\r\n"
            }
            b"DATA" if ex.state & MAIL == 0 => b"503 5.5.1 Error: need MAIL command\r\n",
            b"DATA" if recipients(ex.state) == 0 => b"503 5.5.1 Error: need RCPT command\r\n",
            b"DATA" => {
                ex.state = (ex.state | DATA) & !MIDLINE;
                b"354 End data with <CR><LF>.<CR><LF>\r\n"
            }
            b"RSET" => {
                ex.state = reset(ex.state);
                b"250 2.0.0 Ok\r\n"
            }
            b"NOOP" => b"250 2.0.0 Ok\r\n",
            b"VRFY" => b"252 2.0.0 Cannot VRFY user\r\n",
            b"HELP" => b"214 2.0.0 Ok\r\n",
            b"QUIT" => {
                SinkCounters::add(&self.counters.quits, 1);
                ex.close_after = true;
                b"221 2.0.0 Bye\r\n"
            }
            _ => b"502 5.5.2 Error: command not recognized\r\n",
        };
        if reply[0] >= b'4' {
            self.error(ex, out, reply);
        } else {
            out.bytes(reply);
        }
    }

    /// Sends an error reply; past [`MAX_ERRORS`] closes with 421.
    fn error(&self, ex: &mut Exchange, out: &mut Output, reply: &[u8]) {
        SinkCounters::add(&self.counters.errors, 1);
        out.bytes(reply);
        if errors(ex.state) < 0xff {
            ex.state += 1 << ERR_SHIFT;
        }
        if errors(ex.state) >= MAX_ERRORS {
            out.bytes(b"421 4.7.0 Error: too many errors\r\n");
            ex.close_after = true;
        }
    }
}

/// Takes message data from the front of `b` up to and including the
/// end-of-data line; returns the bytes taken and whether it ended. At a
/// line start a lone `.` or `.\r` waits for the next read; anything else
/// is taken as it comes (the message is discarded, so nothing is kept).
fn scan_data(b: &[u8], state: &mut u64) -> (usize, bool) {
    let mut i = 0;
    loop {
        if *state & MIDLINE == 0 {
            let r = &b[i..];
            if r.starts_with(b".\r\n") {
                return (i + 3, true);
            }
            if r.starts_with(b".\n") {
                return (i + 2, true);
            }
            if r.is_empty() || r == b"." || r == b".\r" {
                return (i, false);
            }
        }
        match b[i..].iter().position(|&c| c == b'\n') {
            Some(k) => {
                i += k + 1;
                *state &= !MIDLINE;
            }
            None => {
                *state |= MIDLINE;
                return (b.len(), false);
            }
        }
    }
}

impl Handler for Sink {
    fn greeting(&self) -> &[u8] {
        &self.greeting
    }

    fn answer(
        &mut self,
        input: &[u8],
        ex: &mut Exchange,
        _cfg: &Config,
        stats: &mut Stats,
        out: &mut Output,
    ) -> usize {
        let mut pos = 0;
        while !ex.close_after && out.queued() < OUT_HIGH && pos < input.len() {
            if ex.state & DATA != 0 {
                let (took, ended) = scan_data(&input[pos..], &mut ex.state);
                pos += took;
                if !ended {
                    SinkCounters::add(&self.counters.bytes, took as u64);
                    break;
                }
                // The dot line is not part of the message.
                let dot = if input[..pos].ends_with(b".\r\n") {
                    3
                } else {
                    2
                };
                SinkCounters::add(&self.counters.bytes, (took - dot) as u64);
                SinkCounters::add(&self.counters.messages, 1);
                SinkCounters::add(&self.counters.recipients, recipients(ex.state));
                ex.served += 1;
                ex.state &= !(DATA | MIDLINE | MAIL | (RCPT_MASK << RCPT_SHIFT));
                out.bytes(b"250 2.0.0 Ok: queued\r\n");
                continue;
            }
            let rest = &input[pos..];
            let Some(nl) = rest.iter().position(|&c| c == b'\n') else {
                // MAX_LINE and the `\r` a complete line may end with: the
                // verdict on a line must not depend on where a read ended.
                if rest.len() > MAX_LINE + 1 {
                    self.error(ex, out, b"500 5.5.0 Error: line too long\r\n");
                    ex.close_after = true;
                    pos = input.len();
                }
                break;
            };
            let line = &rest[..nl];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            pos += nl + 1;
            stats.requests += 1;
            if line.len() > MAX_LINE {
                self.error(ex, out, b"500 5.5.0 Error: line too long\r\n");
                ex.close_after = true;
                break;
            }
            self.command(line, ex, out);
        }
        pos
    }
}

/// What a sink answered to a session's reads ([`converse`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conversation {
    /// Every byte it sent, greeting first.
    pub replies: Vec<u8>,
    /// What it counted.
    pub counts: SinkCounts,
    /// Whether it closed the session (QUIT, too many errors, a line too long).
    pub closed: bool,
    /// Input bytes taken (the rest waits for a line end or more data).
    pub taken: usize,
}

/// Runs one session of a sink over `reads`, fed one read at a time as the
/// server feeds its handler (what was not taken is kept and offered again
/// with the next read; what was queued is sent before more is read): the
/// sink's command parser without a socket, for tests and the fuzz target.
pub fn converse(reads: &[&[u8]]) -> Conversation {
    thread_local! {
        // One set per thread, zeroed for each conversation: a fuzz target
        // calls this millions of times and must not leak a set each time.
        static COUNTERS: &'static SinkCounters = SinkCounters::local();
    }
    let counters = COUNTERS.with(|c| *c);
    for c in [
        &counters.messages,
        &counters.recipients,
        &counters.bytes,
        &counters.commands,
        &counters.errors,
        &counters.quits,
    ] {
        c.store(0, Ordering::Relaxed);
    }
    let mut sink = Sink::new("sink", counters);
    let mut ex = Exchange::new(std::time::Duration::ZERO);
    let cfg = Config::new(crate::Backend::available_all()[0]);
    let mut stats = Stats::default();
    let mut replies = sink.greeting().to_vec();
    let (mut inbuf, mut taken) = (Vec::new(), 0);
    'reads: for r in reads {
        inbuf.extend_from_slice(r);
        // Bounded: each round takes at least one byte or ends.
        while !inbuf.is_empty() {
            let mut out = Output::default();
            let took = sink.answer(&inbuf, &mut ex, &cfg, &mut stats, &mut out);
            replies.extend_from_slice(&out.pending());
            inbuf.drain(..took);
            taken += took;
            if ex.close_after {
                break 'reads;
            }
            if took == 0 {
                break;
            }
        }
    }
    Conversation {
        replies,
        counts: counters.snapshot(),
        closed: ex.close_after,
        taken,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Backend;

    /// Feeds `chunks` one read at a time as the server would (keeping
    /// what was not taken) and returns every reply sent and the counters.
    fn talk(chunks: &[&[u8]]) -> (String, &'static SinkCounters, bool) {
        let counters = SinkCounters::local();
        let mut sink = Sink::new("test", counters);
        let mut ex = Exchange::new(std::time::Duration::ZERO);
        let cfg = Config::new(Backend::available_all()[0]);
        let mut stats = Stats::default();
        let mut out = Output::default();
        out.bytes(sink.greeting());
        let mut inbuf = Vec::new();
        for c in chunks {
            inbuf.extend_from_slice(c);
            let took = sink.answer(&inbuf, &mut ex, &cfg, &mut stats, &mut out);
            inbuf.drain(..took);
            if ex.close_after {
                break;
            }
        }
        (out.text_for_tests(), counters, ex.close_after)
    }

    fn codes(replies: &str) -> Vec<&str> {
        replies
            .split("\r\n")
            .filter(|l| l.len() >= 4 && &l[3..4] == " ")
            .map(|l| &l[..3])
            .collect()
    }

    #[test]
    fn a_pipelined_session_is_answered_in_order_and_counted() {
        let (r, c, closed) = talk(&[
            b"EHLO me\r\n",
            b"MAIL FROM:<a@b>\r\nRCPT TO:<c@d>\r\nRCPT TO:<e@f>\r\nDATA\r\n",
            b"Subject: x\r\n\r\nhello\r\n.\r\nMAIL FROM:<a@b>\r\nRCPT TO:<c@d>\r\nDATA\r\n",
            b"..dot-stuffed\r\n.\r\nQUIT\r\n",
        ]);
        assert_eq!(
            codes(&r),
            [
                "220", "250", "250", "250", "250", "354", "250", "250", "250", "354", "250", "221"
            ]
        );
        assert!(r.contains("250-PIPELINING"), "{r}");
        assert!(closed);
        assert_eq!(c.messages.load(Ordering::Relaxed), 2);
        assert_eq!(c.recipients.load(Ordering::Relaxed), 3);
        assert_eq!(c.bytes.load(Ordering::Relaxed), 21 + 15);
        assert_eq!(c.quits.load(Ordering::Relaxed), 1);
        assert_eq!(c.errors.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn the_end_of_data_is_found_across_any_split() {
        let whole: &[u8] = b"HELO me\r\nMAIL FROM:<a>\r\nRCPT TO:<b>\r\nDATA\r\nline one\r\n.x\r\n\r\n.\r\nNOOP\r\n";
        for cut in 0..whole.len() {
            for cut2 in cut..whole.len() {
                let (r, c, _) = talk(&[&whole[..cut], &whole[cut..cut2], &whole[cut2..]]);
                assert_eq!(
                    codes(&r),
                    ["220", "250", "250", "250", "354", "250", "250"],
                    "{cut} {cut2}"
                );
                assert_eq!(c.messages.load(Ordering::Relaxed), 1);
                assert_eq!(c.bytes.load(Ordering::Relaxed), 16);
            }
        }
    }

    #[test]
    fn out_of_order_and_unknown_commands_get_errors_then_421() {
        let (r, c, closed) = talk(&[b"MAIL FROM:<a>\r\nHELO x\r\nRCPT TO:<b>\r\nDATA\r\nMAIL FROM:<a>\r\nDATA\r\nMAIL FROM:<a>\r\nmail to\r\nbogus\r\n"]);
        assert_eq!(
            codes(&r),
            [
                "220", "503", "250", "503", "503", "250", "503", "503", "501", "502"
            ]
        );
        assert!(!closed);
        assert_eq!(c.errors.load(Ordering::Relaxed), 7);
        let garbage = vec![b"\x00\x01garbage\r\n" as &[u8]; 25];
        let (r, _, closed) = talk(&garbage);
        assert!(closed);
        assert_eq!(
            codes(&r).iter().filter(|c| **c == "502").count() as u64,
            MAX_ERRORS
        );
        assert!(r.ends_with("421 4.7.0 Error: too many errors\r\n"), "{r}");
    }

    #[test]
    fn an_endless_line_is_refused_and_closes() {
        // Past MAX_LINE and the \r a complete line may end with.
        let long = vec![b'A'; MAX_LINE + 2];
        let (r, _, closed) = talk(&[b"HELO x\r\n", &long]);
        assert!(closed);
        assert!(r.ends_with("500 5.5.0 Error: line too long\r\n"), "{r}");
        // Message data has no line limit: it is not kept.
        let body = vec![b'B'; 10 * MAX_LINE];
        let (r, c, closed) = talk(&[
            b"HELO x\r\nMAIL FROM:<a>\r\nRCPT TO:<b>\r\nDATA\r\n",
            &body,
            b"\r\n.\r\n",
        ]);
        assert!(!closed);
        assert_eq!(codes(&r).last(), Some(&"250"));
        assert_eq!(c.bytes.load(Ordering::Relaxed), body.len() as u64 + 2);
    }

    #[test]
    fn converse_answers_the_same_whatever_the_reads() {
        let whole: &[u8] =
            b"EHLO x\r\nMAIL FROM:<a>\r\nRCPT TO:<b>\r\nDATA\r\nhi\r\n.\r\nQUIT\r\nNOOP\r\n";
        let one = converse(&[whole]);
        assert!(one.closed);
        assert_eq!(one.counts.messages, 1);
        assert_eq!(one.counts.quits, 1);
        // Everything up to and including QUIT taken, NOOP not.
        assert_eq!(one.taken, whole.len() - 6);
        for cut in 0..=whole.len() {
            assert_eq!(converse(&[&whole[..cut], &whole[cut..]]), one, "{cut}");
        }
    }

    #[test]
    fn a_line_of_max_line_bytes_then_cr_waits_for_its_line_end() {
        // Regression (the fuzz target's split check): a read ending after
        // the `\r` of a line of MAX_LINE bytes refused the line that, read
        // whole, is accepted.
        let mut line = b"NOOP ".to_vec();
        line.resize(MAX_LINE, b'a');
        line.extend_from_slice(b"\r\n");
        let one = converse(&[&line]);
        assert!(!one.closed);
        assert_eq!(
            converse(&[&line[..MAX_LINE + 1], &line[MAX_LINE + 1..]]),
            one
        );
        let mut long = line.clone();
        long.insert(0, b'a');
        assert!(converse(&[&long]).closed);
        assert!(converse(&[&long[..MAX_LINE + 2]]).closed);
    }

    #[test]
    fn shared_counters_are_seen_across_fork() {
        let c = SinkCounters::shared().unwrap();
        // SAFETY: the child only adds to the counter and exits.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            c.messages.fetch_add(5, Ordering::Relaxed);
            unsafe { libc::_exit(0) };
        }
        assert!(pid > 0);
        let mut status = 0;
        // SAFETY: reaping our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert_eq!(c.messages.load(Ordering::Relaxed), 5);
    }
}
