//! The load generator: per-thread event loops over non-blocking
//! connections, one prebuilt request per URL, K requests per connection (1:
//! short-lived connections), a total count or a duration, optionally a
//! fixed rate with latency measured from the intended send time (so that a
//! stalled server cannot hide its stall: coordinated omission corrected).
//! Latencies go into an HDR histogram per thread, merged at the end. Every
//! response's body is length-checked; failures are counted by kind and the
//! request retried on a new connection up to a bound.
//!
//! A run can begin with an unmeasured warm-up and split its measured time
//! into rounds (one process, no new connections between them); connections
//! can come from several local addresses (more ports than one address
//! has). An [`Outcome`] travels between processes as a [`Part`], exact to
//! the histogram bucket, so runs spread over processes ([`super::spread`])
//! merge into one.

use super::backend::{Backend, Event, Interest, Poller};
use super::sock;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Items and bytes done so far, advanced by whoever does the work (the
/// load generator per response, a filesystem phase per file) and read by
/// a sampler while it runs: two relaxed atomic adds per item.
#[derive(Debug, Default)]
pub struct ItemCounters {
    items: AtomicU64,
    bytes: AtomicU64,
}

impl ItemCounters {
    /// Counts `items` more items of `bytes` bytes in all.
    pub fn add(&self, items: u64, bytes: u64) {
        self.items.fetch_add(items, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Counts bytes only (a file still being written).
    pub fn add_bytes(&self, bytes: u64) {
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// (items, bytes) so far.
    pub fn get(&self) -> (u64, u64) {
        (
            self.items.load(Ordering::Relaxed),
            self.bytes.load(Ordering::Relaxed),
        )
    }
}

/// One URL, resolved, with its request prebuilt.
#[derive(Debug, Clone)]
pub struct Target {
    /// The URL as given.
    pub url: String,
    /// Where to connect.
    pub addr: SocketAddr,
    /// `GET path HTTP/1.1` with Host, ready to send.
    pub request: Vec<u8>,
    /// The same asking the server to close (last request of a connection).
    pub request_close: Vec<u8>,
}

/// Why a URL cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum UrlError {
    /// Not `http://host[:port]/path`.
    #[error("{0}: not an http:// URL (http://HOST[:PORT][/PATH])")]
    Scheme(String),
    /// An `https://` URL.
    #[error("{0}: not an http:// URL: https is not supported")]
    Https(String),
    /// Its host and port are not an address ([`sys::values::host_port`]:
    /// credentials, an IPv6 address without brackets, a bad port).
    #[error("{0}: {1}")]
    Address(String, String),
    /// The host does not resolve.
    #[error("{0}: cannot resolve the host: {1}")]
    Resolve(String, String),
}

/// `url` as it is shown in messages: a password in it replaced by `…`
/// (such a URL is refused, and its password not repeated).
pub fn redacted(url: &str) -> String {
    let Some(rest) = url.split_once("://").map(|(_, r)| r) else {
        return url.to_string();
    };
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    match authority.rsplit_once('@') {
        Some((who, _)) if who.contains(':') => {
            let user = who.split_once(':').map_or(who, |(u, _)| u);
            url.replacen(&format!("{who}@"), &format!("{user}:…@"), 1)
        }
        _ => url.to_string(),
    }
}

impl Target {
    /// Parses and resolves `url` (`http://host[:port][/path]`, the host and
    /// port as [`sys::values::host_port`] reads them).
    pub fn parse(url: &str) -> Result<Target, UrlError> {
        let shown = redacted(url);
        // The scheme in any case, as RFC 3986 reads it.
        let scheme = |s: &str| {
            url.get(..s.len())
                .is_some_and(|h| h.eq_ignore_ascii_case(s))
        };
        if scheme("https://") {
            return Err(UrlError::Https(shown));
        }
        if !scheme("http://") {
            return Err(UrlError::Scheme(shown));
        }
        let rest = &url["http://".len()..];
        // The authority ends at the path, the query or the fragment; the
        // fragment is not sent.
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let tail = tail.split('#').next().unwrap_or_default();
        let path = match tail {
            "" => "/".to_string(),
            t if t.starts_with('?') => format!("/{t}"),
            t => t.to_string(),
        };
        if authority.is_empty() {
            return Err(UrlError::Address(shown, "no host after http://".into()));
        }
        if path.contains(|c: char| c.is_whitespace() || c.is_control()) {
            return Err(UrlError::Address(
                shown,
                "a space or a control character in the path (a space is written %20)".into(),
            ));
        }
        let hp =
            sys::values::host_port(authority).map_err(|e| UrlError::Address(shown.clone(), e))?;
        if hp.port == Some(0) {
            return Err(UrlError::Address(
                shown,
                "port 0 is no server's port".into(),
            ));
        }
        let addr = hp.resolve(80).map_err(|e| {
            let e = e.strip_prefix(&format!("cannot resolve {}: ", hp.host));
            UrlError::Resolve(shown.clone(), e.unwrap_or("no address").to_string())
        })?;
        let head = |close: bool| {
            format!(
                "GET {path} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: scalebench\r\n{}\r\n",
                if close { "Connection: close\r\n" } else { "" }
            )
            .into_bytes()
        };
        Ok(Target {
            url: url.to_string(),
            addr,
            request: head(false),
            request_close: head(true),
        })
    }
}

/// How to load.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// URLs; in replay mode taken in order, else round robin.
    pub targets: Vec<Target>,
    /// Concurrent connections in all.
    pub connections: usize,
    /// Threads (each its own event loop).
    pub threads: usize,
    /// Requests per connection before it is closed (None: keep alive).
    pub per_connection: Option<u64>,
    /// Stop after this many successful requests.
    pub total: Option<u64>,
    /// Stop after this long (measured time: the warm-up comes first).
    pub duration: Option<Duration>,
    /// Load this long before measuring (needs a duration); what it did is
    /// not counted.
    pub warm_up: Duration,
    /// The measured duration in this many rounds of equal length, each
    /// counted on its own (needs a duration when more than 1).
    pub rounds: u32,
    /// Local addresses to connect from, round robin by connection (empty:
    /// the OS picks); each has its own ephemeral ports.
    pub sources: Vec<IpAddr>,
    /// Requests per second in all (open loop), if fixed.
    pub rate: Option<f64>,
    /// A request not answered in this time fails as a timeout.
    pub timeout: Duration,
    /// Retries of a failed request before it counts as failed.
    pub retries: u32,
    /// Event backend.
    pub backend: Backend,
    /// Counters advanced by every response (one item, its body bytes), for
    /// a caller that samples throughput while the load runs.
    pub live: Option<std::sync::Arc<ItemCounters>>,
    /// Ends the load early, keeping what was measured, once this returns
    /// true (^C): every thread asks at least every 10 ms. `None`: never.
    pub stop: Option<fn() -> bool>,
}

impl LoadOptions {
    /// `connections` keep-alive connections to `targets` from one thread,
    /// closed-loop, on the best backend, 10 s timeout, 3 retries; no count
    /// or duration yet (set one), no warm-up, one round, the OS's source
    /// address, no live counters, no early stop.
    pub fn new(targets: Vec<Target>, connections: usize) -> LoadOptions {
        LoadOptions {
            targets,
            connections,
            threads: 1,
            per_connection: None,
            total: None,
            duration: None,
            warm_up: Duration::ZERO,
            rounds: 1,
            sources: Vec::new(),
            rate: None,
            timeout: Duration::from_secs(10),
            retries: 3,
            backend: Backend::available_all()[0],
            live: None,
            stop: None,
        }
    }
}

/// Failed attempts by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Errors {
    /// connect() refused or failed (other than for want of a port).
    pub connect: u64,
    /// The failed connects of [`Errors::connect`] by errno name
    /// (`ECONNREFUSED`, `ENETUNREACH`, …; `unknown` where none was told).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub connect_errno: std::collections::BTreeMap<String, u64>,
    /// No local port left: EADDRNOTAVAIL from connect() or bind() (or
    /// EADDRINUSE from bind() to port 0): the ephemeral port range is used
    /// up, by open connections and by TIME_WAIT.
    #[serde(default)]
    pub port_exhausted: u64,
    /// The connection was reset or closed before a response began.
    pub reset: u64,
    /// No complete response within the timeout.
    pub timeout: u64,
    /// A status of 400 or more, or a response that is not HTTP.
    pub status: u64,
    /// The connection closed before the body was complete.
    pub short_body: u64,
}

impl Errors {
    fn add(&mut self, o: &Errors) {
        self.connect += o.connect;
        for (k, n) in &o.connect_errno {
            *self.connect_errno.entry(k.clone()).or_default() += n;
        }
        self.port_exhausted += o.port_exhausted;
        self.reset += o.reset;
        self.timeout += o.timeout;
        self.status += o.status;
        self.short_body += o.short_body;
    }

    /// All failed attempts.
    pub fn total(&self) -> u64 {
        self.connect
            + self.port_exhausted
            + self.reset
            + self.timeout
            + self.status
            + self.short_body
    }
}

/// What a load run measured.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Requests answered completely (any status).
    pub requests: u64,
    /// Body bytes received in those.
    pub body_bytes: u64,
    /// Head bytes received.
    pub head_bytes: u64,
    /// Connections opened: established (a refused or failed connect()
    /// is not one; it is among `errors.connect`).
    pub connections: u64,
    /// Wall time.
    pub elapsed: Duration,
    /// Latency of each answered request, ns.
    pub latency: Histogram<u64>,
    /// Failed attempts.
    pub errors: Errors,
    /// Attempts repeated after a failure.
    pub retries: u64,
    /// Requests given up after the retries.
    pub failed: u64,
    /// Responses by status code.
    pub statuses: BTreeMap<u16, u64>,
    /// Whether [`LoadOptions::stop`] ended the load before its count or
    /// duration: the figures are those of the part that ran.
    pub stopped: bool,
    /// Each round's figures when the measured time was split
    /// ([`LoadOptions::rounds`] > 1); the outcome itself is all of them.
    pub rounds: Vec<Outcome>,
    /// Most connections open at once in one process (with several
    /// processes: the sum of each one's most).
    pub peak_open: u64,
    /// Processes that made the load.
    pub processes: u32,
    /// How long asking for every first connection took, when the measured
    /// time starts after it (a load of a duration, not at a fixed rate):
    /// not part of `elapsed` (with several processes: the longest).
    pub opening: Option<Duration>,
}

impl Outcome {
    /// The outcome as the result file records it.
    pub fn stats(&self) -> results::LoadStats {
        let q = |p: f64| self.latency.value_at_quantile(p);
        let e = &self.errors;
        results::LoadStats {
            requests: self.requests,
            seconds: self.elapsed.as_secs_f64(),
            requests_per_s: self.rate(),
            opening_s: self.opening.map(|d| d.as_secs_f64()),
            mb_per_s: self.mb_per_s(),
            body_bytes: self.body_bytes,
            connections: self.connections,
            latency_ns: results::LatencyStats {
                p50: q(0.5),
                p90: q(0.9),
                p99: q(0.99),
                p999: q(0.999),
                max: self.latency.max(),
                mean: self.latency.mean(),
            },
            errors: results::ErrorStats {
                connect: e.connect,
                connect_errno: e.connect_errno.clone(),
                reset: e.reset,
                timeout: e.timeout,
                status: e.status,
                short_body: e.short_body,
                port_exhausted: e.port_exhausted,
            },
            retries: self.retries,
            failed: self.failed,
            statuses: self
                .statuses
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect(),
        }
    }

    /// Requests per second.
    pub fn rate(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// Body megabytes (10^6) per second.
    pub fn mb_per_s(&self) -> f64 {
        self.body_bytes as f64 / 1e6 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// Nothing measured yet, over `elapsed`.
    pub fn empty(elapsed: Duration) -> Outcome {
        Outcome {
            requests: 0,
            body_bytes: 0,
            head_bytes: 0,
            connections: 0,
            elapsed,
            latency: new_hist(),
            errors: Errors::default(),
            retries: 0,
            failed: 0,
            statuses: BTreeMap::new(),
            stopped: false,
            rounds: Vec::new(),
            peak_open: 0,
            processes: 1,
            opening: None,
        }
    }

    /// Adds one thread's counts.
    fn add_tally(&mut self, t: &Tally) {
        self.requests += t.requests;
        self.body_bytes += t.body_bytes;
        self.head_bytes += t.head_bytes;
        self.connections += t.opened;
        self.latency.add(&t.hist).expect("same bounds");
        self.errors.add(&t.errors);
        self.retries += t.retries;
        self.failed += t.failed;
        for (k, v) in &t.statuses {
            *self.statuses.entry(*k).or_default() += v;
        }
    }

    /// Adds `o`'s counts, errors and latencies (not its time).
    fn add_counts(&mut self, o: &Outcome) {
        self.requests += o.requests;
        self.body_bytes += o.body_bytes;
        self.head_bytes += o.head_bytes;
        self.connections += o.connections;
        self.latency.add(&o.latency).expect("same bounds");
        self.errors.add(&o.errors);
        self.retries += o.retries;
        self.failed += o.failed;
        for (k, v) in &o.statuses {
            *self.statuses.entry(*k).or_default() += v;
        }
    }

    /// The outcome as another process reads it back ([`Outcome::from_part`]).
    pub fn part(&self) -> Part {
        Part {
            requests: self.requests,
            body_bytes: self.body_bytes,
            head_bytes: self.head_bytes,
            connections: self.connections,
            elapsed_ns: self.elapsed.as_nanos() as u64,
            errors: self.errors.clone(),
            retries: self.retries,
            failed: self.failed,
            statuses: self.statuses.clone(),
            latency: super::hist::buckets(&self.latency),
            stopped: self.stopped,
            peak_open: self.peak_open,
            processes: self.processes,
            rounds: self.rounds.iter().map(Outcome::part).collect(),
            opening_ns: self.opening.map(|d| d.as_nanos() as u64),
        }
    }

    /// The outcome a [`Part`] holds: the same counts, the same histogram
    /// buckets (so the same percentiles).
    pub fn from_part(p: &Part) -> Result<Outcome, String> {
        let latency = super::hist::from_buckets(&p.latency)?;
        Ok(Outcome {
            requests: p.requests,
            body_bytes: p.body_bytes,
            head_bytes: p.head_bytes,
            connections: p.connections,
            elapsed: Duration::from_nanos(p.elapsed_ns),
            latency,
            errors: p.errors.clone(),
            retries: p.retries,
            failed: p.failed,
            statuses: p.statuses.clone(),
            stopped: p.stopped,
            rounds: p
                .rounds
                .iter()
                .map(Outcome::from_part)
                .collect::<Result<_, _>>()?,
            peak_open: p.peak_open,
            processes: p.processes,
            opening: p.opening_ns.map(Duration::from_nanos),
        })
    }

    /// The outcomes of loads that ran at the same time (one per process)
    /// as one: counts, errors and histograms added, the elapsed time the
    /// longest, rounds merged round by round; stopped if any was.
    pub fn merge(outs: &[Outcome]) -> Outcome {
        let mut m = Outcome::empty(Duration::ZERO);
        m.processes = 0;
        for o in outs {
            m.add_counts(o);
            m.elapsed = m.elapsed.max(o.elapsed);
            m.stopped |= o.stopped;
            m.peak_open += o.peak_open;
            m.processes += o.processes;
            m.opening = m.opening.max(o.opening);
        }
        let rounds = outs.iter().map(|o| o.rounds.len()).max().unwrap_or(0);
        m.rounds = (0..rounds)
            .map(|k| {
                let same: Vec<Outcome> = outs
                    .iter()
                    .filter_map(|o| o.rounds.get(k).cloned())
                    .collect();
                Outcome::merge(&same)
            })
            .collect();
        m
    }
}

/// An [`Outcome`] as JSON for another process: every count, and the
/// latency histogram's recorded buckets as `[value, count]` pairs (ns), so
/// that merged percentiles are exact, not averaged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Part {
    /// Requests answered.
    pub requests: u64,
    /// Body bytes received.
    pub body_bytes: u64,
    /// Head bytes received.
    pub head_bytes: u64,
    /// Connections opened: established (a refused or failed connect()
    /// is not one; it is among `errors.connect`).
    pub connections: u64,
    /// Measured wall time, ns.
    pub elapsed_ns: u64,
    /// Failed attempts by kind.
    pub errors: Errors,
    /// Attempts repeated.
    pub retries: u64,
    /// Requests given up.
    pub failed: u64,
    /// Responses by status.
    pub statuses: BTreeMap<u16, u64>,
    /// Latency histogram: (highest value of the bucket, count), ns.
    pub latency: Vec<(u64, u64)>,
    /// Ended early by a signal.
    pub stopped: bool,
    /// Most connections open at once.
    pub peak_open: u64,
    /// Processes it covers.
    pub processes: u32,
    /// Its rounds, when the measured time was split.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<Part>,
    /// [`Outcome::opening`], ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opening_ns: Option<u64>,
}

/// Shared between threads.
struct Shared {
    /// Requests claimed (a claim is a request to be made; failures give
    /// theirs back only through retries).
    claimed: AtomicU64,
    /// Replay cursor.
    next_url: AtomicU64,
    stop: AtomicBool,
    total: Option<u64>,
    /// Connections open now in this process, and the most so far.
    open: AtomicU64,
    peak_open: AtomicU64,
    /// Per target: an HTTP response came from it (after that, an answer
    /// that is not HTTP is a counted failure, not the end of the load).
    answered: Vec<AtomicBool>,
    /// Why the load cannot go on (a server that does not speak HTTP):
    /// every thread ends, and [`run`] returns it as its error.
    fatal: std::sync::Mutex<Option<String>>,
    failed: AtomicBool,
    /// Threads still opening their first connections.
    opening: AtomicUsize,
    /// The latest moment a thread finished opening them, ns after the
    /// start.
    opened_ns: AtomicU64,
}

impl Shared {
    /// The state `threads` threads share for `opts`.
    fn new(opts: &LoadOptions, threads: usize) -> Shared {
        Shared {
            claimed: AtomicU64::new(0),
            next_url: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            total: opts.total,
            open: AtomicU64::new(0),
            peak_open: AtomicU64::new(0),
            answered: opts
                .targets
                .iter()
                .map(|_| AtomicBool::new(false))
                .collect(),
            fatal: std::sync::Mutex::new(None),
            failed: AtomicBool::new(false),
            opening: AtomicUsize::new(threads),
            opened_ns: AtomicU64::new(0),
        }
    }

    /// Called once by each thread when it has asked for all its first
    /// connections (or could not): waits (at most `limit`) for the others,
    /// then says how long after `start` the last one was done.
    fn opened(&self, start: Instant, limit: Duration, stop: Option<fn() -> bool>) -> Duration {
        let at = start.elapsed().as_nanos() as u64;
        self.opened_ns.fetch_max(at, Ordering::AcqRel);
        self.opening.fetch_sub(1, Ordering::AcqRel);
        let waited = Instant::now();
        while self.opening.load(Ordering::Acquire) > 0
            && waited.elapsed() < limit
            && !self.failed.load(Ordering::Relaxed)
            && !stop.is_some_and(|f| f())
        {
            std::thread::sleep(Duration::from_millis(1));
        }
        Duration::from_nanos(self.opened_ns.load(Ordering::Acquire))
    }

    /// Claims one more request; false when the total is reached.
    fn claim(&self) -> bool {
        match self.total {
            None => !self.stop.load(Ordering::Relaxed),
            Some(t) => self.claimed.fetch_add(1, Ordering::Relaxed) < t,
        }
    }

    /// Ends the load for `why` (the first reason is kept).
    fn give_up(&self, why: String) {
        let mut f = self.fatal.lock().unwrap_or_else(|p| p.into_inner());
        f.get_or_insert(why);
        self.failed.store(true, Ordering::Relaxed);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Not connected (waiting to connect, maybe for a rate slot).
    Idle,
    Connecting,
    Sending,
    Receiving,
}

struct Conn {
    fd: Option<OwnedFd>,
    state: State,
    /// Index of the URL of the current request.
    url: usize,
    /// Bytes of the request sent.
    sent: usize,
    /// Requests completed on this connection.
    done: u64,
    /// When the current request started (or was due, at a fixed rate).
    start: Instant,
    /// When the current attempt fails as a timeout.
    deadline: Instant,
    /// Failed attempts of the current request.
    attempts: u32,
    /// Received head bytes until the head is complete.
    head: Vec<u8>,
    /// Body bytes still expected (after the head).
    body_left: Option<u64>,
    body_len: u64,
    status: u16,
    server_closes: bool,
    /// The current request is the last of this connection.
    last: bool,
    /// Holds a claimed request.
    has_request: bool,
    /// Where the connection goes.
    peer: SocketAddr,
    /// The connection is known to be established (connect() said so, or
    /// a write went through); until then a failed write is a failed
    /// connect.
    confirmed: bool,
    /// Writability is watched (a write could not finish).
    want_write: bool,
}

/// One thread's counters.
#[derive(Debug, Clone)]
struct Tally {
    hist: Histogram<u64>,
    requests: u64,
    body_bytes: u64,
    head_bytes: u64,
    opened: u64,
    errors: Errors,
    retries: u64,
    failed: u64,
    statuses: BTreeMap<u16, u64>,
}

struct Worker<'a> {
    opts: &'a LoadOptions,
    shared: &'a Shared,
    poller: Box<dyn Poller>,
    conns: Vec<Conn>,
    /// Connection index by descriptor.
    by_fd: Vec<usize>,
    buf: Vec<u8>,
    t: Tally,
    /// The measured rounds this thread finished (the current one is `t`).
    done: Vec<Tally>,
    /// The times at which `t` ends and the next round begins, soonest
    /// first (the warm-up's end, then each round's but the last).
    marks: Vec<Instant>,
    /// `t` is the warm-up's: dropped at the first mark.
    warming: bool,
    /// The next source address, round robin.
    next_source: usize,
    /// Connections whose attempt failed, to retry (or give up) at the
    /// top of the loop.
    again: Vec<usize>,
    /// Fixed rate: the next free send slot and the gap between slots.
    next_slot: Option<(Instant, Duration)>,
    deadline: Option<Instant>,
    now: Instant,
}

use super::hist::new as new_hist;

impl Tally {
    fn new() -> Tally {
        Tally {
            hist: new_hist(),
            requests: 0,
            body_bytes: 0,
            head_bytes: 0,
            opened: 0,
            errors: Errors::default(),
            retries: 0,
            failed: 0,
            statuses: BTreeMap::new(),
        }
    }
}

/// Runs the load.
pub fn run(opts: &LoadOptions) -> io::Result<Outcome> {
    check(opts)?;
    let threads = opts.threads.clamp(1, opts.connections.max(1));
    let shared = Shared::new(opts, threads);
    let start = Instant::now();
    let tallies: Vec<io::Result<Vec<Tally>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let conns =
                    opts.connections / threads + usize::from(t < opts.connections % threads);
                let shared = &shared;
                s.spawn(move || -> io::Result<Vec<Tally>> {
                    let mut w = match Worker::new(opts, shared, conns, threads, start) {
                        Ok(w) => w,
                        Err(e) => {
                            // The others do not wait for this one.
                            shared.opening.fetch_sub(1, Ordering::AcqRel);
                            return Err(e);
                        }
                    };
                    w.run()?;
                    if !w.warming {
                        w.done.push(w.t);
                    }
                    Ok(w.done)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(io::Error::other("a load thread panicked")))
            })
            .collect()
    });
    let end = Instant::now();
    // What was measured starts once every first connection was asked for.
    let late = late_start(opts, &shared);
    let start = start + late;
    let tallies = tallies.into_iter().collect::<io::Result<Vec<_>>>()?;
    if let Some(why) = shared.fatal.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(io::Error::new(io::ErrorKind::InvalidData, why));
    }
    let mut out = outcome(
        opts,
        &tallies,
        start,
        end,
        shared.peak_open.load(Ordering::Relaxed),
    );
    out.opening = clock_after_opening(opts).then_some(late);
    Ok(out)
}

/// How late the warm-up and the rounds began: opening every first
/// connection (30 000 on a busy machine: seconds) is not measured, and no
/// round goes by while a thread is still asking for them. None for a
/// load of a count (its time is all of it, as before) or at a fixed rate
/// (its requests keep their slots).
fn late_start(opts: &LoadOptions, shared: &Shared) -> Duration {
    if !clock_after_opening(opts) {
        return Duration::ZERO;
    }
    Duration::from_nanos(shared.opened_ns.load(Ordering::Acquire))
}

/// Whether `opts`'s clock starts after the opening ([`late_start`]): a
/// load of a duration, not at a fixed rate.
fn clock_after_opening(opts: &LoadOptions) -> bool {
    opts.duration.is_some() && !opts.rate.is_some_and(|r| r > 0.0)
}

/// Whether `opts` can be run: URLs given, a duration for a warm-up or
/// rounds, one address family, and source addresses this machine has
/// (each bound once to see).
fn check(opts: &LoadOptions) -> io::Result<()> {
    if opts.targets.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "no URL to load",
        ));
    }
    if opts.duration.is_none() && (opts.rounds > 1 || !opts.warm_up.is_zero()) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a warm-up or rounds need a duration",
        ));
    }
    let family = |a: &IpAddr| if a.is_ipv4() { "IPv4" } else { "IPv6" };
    if let Some(s) = opts.sources.first() {
        let other = opts
            .sources
            .iter()
            .find(|x| family(x) != family(s))
            .map(|x| format!("source address {x}"))
            .or_else(|| {
                opts.targets
                    .iter()
                    .find(|t| family(&t.addr.ip()) != family(s))
                    .map(|t| format!("URL {} ({})", redacted(&t.url), t.addr))
            });
        if let Some(other) = other {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "source address {s} is {} and {other} is not: source addresses and URLs must all be IPv4 or all IPv6",
                    family(s)
                ),
            ));
        }
    }
    for src in &opts.sources {
        let probe = SocketAddr::new(*src, 0);
        let fd = sock::tcp_socket(&probe)?;
        let _ = sys::bind_address_no_port(fd.as_raw_fd());
        sock::bind(fd.as_raw_fd(), &probe).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("source address {src}: {e}"),
            )
        })?;
    }
    Ok(())
}

/// The outcome of a load that ran from `start` to `end`, from each
/// thread's `tallies` (one per round) and the peak of open connections:
/// the whole measured time and, with several rounds, each round.
fn outcome(
    opts: &LoadOptions,
    tallies: &[Vec<Tally>],
    start: Instant,
    end: Instant,
    peak_open: u64,
) -> Outcome {
    // Round k ran from its planned start to its planned end, the last one
    // to the actual end.
    let n = tallies.iter().map(Vec::len).max().unwrap_or(0);
    let measured_from = start + opts.warm_up;
    let bound = |k: usize| match opts.duration {
        Some(d) if k < n => measured_from + d.mul_f64(k as f64 / f64::from(opts.rounds.max(1))),
        _ => end,
    };
    let mut rounds: Vec<Outcome> = (0..n)
        .map(|k| {
            let mut o = Outcome::empty(bound(k + 1).saturating_duration_since(bound(k)));
            for t in tallies.iter().filter_map(|t| t.get(k)) {
                o.add_tally(t);
            }
            o
        })
        .collect();
    let mut out = Outcome::empty(end.saturating_duration_since(measured_from.min(end)));
    for r in &rounds {
        out.add_counts(r);
    }
    out.stopped = opts.stop.is_some_and(|f| f());
    out.peak_open = peak_open;
    if opts.rounds > 1 {
        for r in &mut rounds {
            r.peak_open = out.peak_open;
        }
        out.rounds = rounds;
    }
    out
}

/// How a response head reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// Length of the head, its blank line included.
    pub len: usize,
    /// Status code.
    pub status: u16,
    /// Body length: Content-Length, 0 for a status without a body, `None`
    /// if the head does not say.
    pub body: Option<u64>,
    /// Whether the server closes the connection after this response.
    pub close: bool,
}

/// Whether `b`, the first bytes of an answer, cannot begin an HTTP/1.x
/// status line (`HTTP/1.1 200`): known from the first byte that differs.
pub fn not_http(b: &[u8]) -> bool {
    b.iter().take(12).enumerate().any(|(k, &c)| match k {
        0..7 => c != b"HTTP/1."[k],
        7 | 9..12 => !c.is_ascii_digit(),
        _ => c != b' ',
    })
}

/// Parses a response head at the start of `b`; `Ok(None)` if incomplete,
/// `Err(())` if it is not HTTP (public for the fuzz targets).
#[allow(clippy::result_unit_err)] // the one error: "not HTTP", counted, not shown
pub fn parse_head(b: &[u8]) -> Result<Option<Head>, ()> {
    let Some(end) = b.windows(4).position(|w| w == b"\r\n\r\n") else {
        return if b.len() > 64 * 1024 {
            Err(())
        } else {
            Ok(None)
        };
    };
    let head = &b[..end];
    if !head.starts_with(b"HTTP/1.") || head.len() < 12 {
        return Err(());
    }
    let status = std::str::from_utf8(&head[9..12])
        .ok()
        .and_then(|s| s.parse::<u16>().ok())
        .ok_or(())?;
    let mut body = None;
    let mut close = head.starts_with(b"HTTP/1.0");
    for line in head.split(|&c| c == b'\n').skip(1) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(colon) = line.iter().position(|&c| c == b':') else {
            continue;
        };
        let (name, value) = (&line[..colon], line[colon + 1..].trim_ascii());
        if name.eq_ignore_ascii_case(b"content-length") {
            body = Some(
                std::str::from_utf8(value)
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .ok_or(())?,
            );
        } else if name.eq_ignore_ascii_case(b"connection") {
            if value.eq_ignore_ascii_case(b"close") {
                close = true;
            } else if value.eq_ignore_ascii_case(b"keep-alive") {
                close = false;
            }
        }
    }
    // 1xx, 204 and 304 have no body.
    if status < 200 || status == 204 || status == 304 {
        body = Some(0);
    }
    Ok(Some(Head {
        len: end + 4,
        status,
        body,
        close,
    }))
}

/// Failure kinds of an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fail {
    /// connect() failed, with its errno (0: not told).
    Connect(i32),
    Ports,
    Reset,
    Timeout,
    Status,
    ShortBody,
}

/// How a failed bind() (`bind`) or connect() counts: no port left, or a
/// failed connect. (Every source address was bound once before the load
/// began, so a bind() that now finds no address means no port.)
fn fail_of(e: &io::Error, bind: bool) -> Fail {
    match e.raw_os_error() {
        Some(libc::EADDRNOTAVAIL) => Fail::Ports,
        Some(libc::EADDRINUSE) if bind => Fail::Ports,
        e => Fail::Connect(e.unwrap_or(0)),
    }
}

impl<'a> Worker<'a> {
    fn new(
        opts: &'a LoadOptions,
        shared: &'a Shared,
        conns: usize,
        threads: usize,
        start: Instant,
    ) -> io::Result<Worker<'a>> {
        let next_slot = opts.rate.filter(|r| *r > 0.0).map(|r| {
            // Each thread gets its share of the rate.
            (start, Duration::from_secs_f64(threads as f64 / r))
        });
        let mut w = Worker {
            opts,
            shared,
            poller: opts.backend.create()?,
            conns: Vec::with_capacity(conns),
            by_fd: Vec::new(),
            buf: vec![0u8; 64 * 1024],
            t: Tally::new(),
            done: Vec::new(),
            marks: Vec::new(),
            warming: !opts.warm_up.is_zero(),
            next_source: 0,
            again: Vec::new(),
            next_slot,
            deadline: opts.duration.map(|d| start + opts.warm_up + d),
            now: start,
        };
        for _ in 0..conns {
            w.conns.push(Conn {
                fd: None,
                state: State::Idle,
                url: 0,
                sent: 0,
                done: 0,
                start,
                deadline: start,
                attempts: 0,
                head: Vec::with_capacity(512),
                body_left: None,
                body_len: 0,
                status: 0,
                server_closes: false,
                confirmed: false,
                want_write: false,
                last: false,
                has_request: false,
                peer: opts.targets[0].addr,
            });
        }
        if let Some(d) = opts.duration {
            if w.warming {
                w.marks.push(start + opts.warm_up);
            }
            let r = opts.rounds.max(1);
            w.marks.extend(
                (1..r).map(|k| start + opts.warm_up + d.mul_f64(f64::from(k) / f64::from(r))),
            );
        }
        Ok(w)
    }

    fn run(&mut self) -> io::Result<()> {
        for i in 0..self.conns.len() {
            self.next_request(i);
        }
        self.all_opened();
        let mut events: Vec<Event> = Vec::with_capacity(1024);
        let mut last_sweep = self.now;
        loop {
            while self.marks.first().is_some_and(|m| self.now >= *m) {
                self.marks.remove(0);
                let t = std::mem::replace(&mut self.t, Tally::new());
                if !std::mem::take(&mut self.warming) {
                    self.done.push(t);
                }
            }
            if self.deadline.is_some_and(|d| self.now >= d) || self.opts.stop.is_some_and(|f| f()) {
                self.shared.stop.store(true, Ordering::Relaxed);
                break;
            }
            if self.shared.failed.load(Ordering::Relaxed) {
                break;
            }
            // Failed attempts go on; those that fail again at once wait
            // for the next turn.
            for i in std::mem::take(&mut self.again) {
                self.resume(i);
            }
            if self.conns.iter().all(|c| !c.has_request) {
                break;
            }
            let timeout = self.wait_ms();
            events.clear();
            self.poller.wait(&mut events, timeout)?;
            self.now = Instant::now();
            for ev in &events {
                let Some(&i) = self.by_fd.get(ev.fd as usize) else {
                    continue;
                };
                if i == usize::MAX
                    || self.conns[i].fd.as_ref().map(|f| f.as_raw_fd()) != Some(ev.fd)
                {
                    continue;
                }
                self.event(i, ev);
            }
            // Rate slots that came due, and timeouts (at most every 10 ms).
            if self.next_slot.is_some() {
                for i in 0..self.conns.len() {
                    let c = &self.conns[i];
                    if c.state == State::Idle && c.has_request && c.start <= self.now {
                        self.begin(i);
                    }
                }
            }
            if self.now - last_sweep >= Duration::from_millis(10) {
                last_sweep = self.now;
                for i in 0..self.conns.len() {
                    let c = &self.conns[i];
                    if c.state != State::Idle && self.now > c.deadline {
                        self.fail(i, Fail::Timeout);
                    }
                }
            }
        }
        for i in 0..self.conns.len() {
            self.drop_fd(i);
        }
        Ok(())
    }

    /// Once every thread has asked for its first connections: the
    /// warm-up, the rounds, the end and the requests' time limits move
    /// by the time that took ([`late_start`]).
    fn all_opened(&mut self) {
        let late = self
            .shared
            .opened(self.now, self.opts.timeout, self.opts.stop);
        self.now = Instant::now();
        if !clock_after_opening(self.opts) {
            return;
        }
        for m in &mut self.marks {
            *m += late;
        }
        if let Some(d) = &mut self.deadline {
            *d += late;
        }
        for c in &mut self.conns {
            c.deadline += late;
        }
    }

    /// How long to wait for events: until the next rate slot or timeout
    /// check, or the end of the run.
    fn wait_ms(&self) -> i32 {
        if !self.again.is_empty() {
            return 0;
        }
        let mut wait = Duration::from_millis(10);
        if let Some(d) = self.deadline {
            wait = wait.min(d.saturating_duration_since(self.now));
        }
        if let Some(m) = self.marks.first() {
            wait = wait.min(m.saturating_duration_since(self.now));
        }
        if self.next_slot.is_some()
            && let Some(due) = self
                .conns
                .iter()
                .filter(|c| c.state == State::Idle && c.has_request)
                .map(|c| c.start)
                .min()
        {
            wait = wait.min(due.saturating_duration_since(self.now));
        }
        wait.as_millis() as i32
    }

    /// Takes the next request for connection `i` (if the run goes on) and
    /// starts it: on the open connection, or by connecting.
    fn next_request(&mut self, i: usize) {
        if !self.shared.claim() {
            self.conns[i].has_request = false;
            self.drop_fd(i);
            return;
        }
        let n_urls = self.opts.targets.len() as u64;
        let url = (self.shared.next_url.fetch_add(1, Ordering::Relaxed) % n_urls) as usize;
        let start = match &mut self.next_slot {
            Some((slot, gap)) => {
                let due = *slot;
                *slot += *gap;
                due
            }
            None => self.now,
        };
        let c = &mut self.conns[i];
        c.has_request = true;
        c.url = url;
        c.attempts = 0;
        c.start = start;
        self.begin(i);
    }

    /// Begins (or retries) the current request of `i`, unless it is not
    /// due yet (fixed rate): then it waits, idle, for its slot.
    fn begin(&mut self, i: usize) {
        let per = self.opts.per_connection;
        let c = &mut self.conns[i];
        c.state = State::Idle;
        if c.start > self.now {
            return;
        }
        // A kept connection to another address cannot carry the request.
        if c.fd.is_some() && self.opts.targets[c.url].addr != self.peer_of(i) {
            self.drop_fd(i);
        }
        let c = &mut self.conns[i];
        c.sent = 0;
        c.head.clear();
        c.body_left = None;
        c.body_len = 0;
        c.last = per.is_some_and(|k| c.done + 1 >= k);
        if c.fd.is_some() && !c.server_closes {
            c.state = State::Sending;
            c.deadline = self.now.max(c.start) + self.opts.timeout;
            self.send(i);
        } else {
            self.drop_fd(i);
            self.connect(i);
        }
    }

    /// The address connection `i` is connected to (its URL's when it was
    /// opened).
    fn peer_of(&self, i: usize) -> SocketAddr {
        self.conns[i].peer
    }

    fn connect(&mut self, i: usize) {
        let target = &self.opts.targets[self.conns[i].url];
        let addr = target.addr;
        let fd = match sock::tcp_socket_nonblocking(&addr) {
            Ok(fd) => fd,
            Err(e) => return self.fail(i, Fail::Connect(e.raw_os_error().unwrap_or(0))),
        };
        let raw = fd.as_raw_fd();
        if !self.opts.sources.is_empty() {
            let src = self.opts.sources[self.next_source % self.opts.sources.len()];
            self.next_source = self.next_source.wrapping_add(1);
            // Where the OS can, the port is left to connect(), which picks
            // one unique for the address pair.
            let _ = sys::bind_address_no_port(raw);
            if let Err(e) = sock::bind(raw, &SocketAddr::new(src, 0)) {
                return self.fail(i, fail_of(&e, true));
            }
        }
        // One request per connection is one write: Nagle never holds it.
        if self.opts.per_connection != Some(1) {
            let _ = sock::set_nodelay(raw);
        }
        let c = &mut self.conns[i];
        c.done = 0;
        c.server_closes = false;
        c.deadline = self.now + self.opts.timeout;
        c.fd = Some(fd);
        c.peer = addr;
        let open = self.shared.open.fetch_add(1, Ordering::Relaxed) + 1;
        self.shared.peak_open.fetch_max(open, Ordering::Relaxed);
        c.confirmed = false;
        c.want_write = false;
        if self.by_fd.len() <= raw as usize {
            self.by_fd.resize(raw as usize + 1, usize::MAX);
        }
        self.by_fd[raw as usize] = i;
        match sock::connect(raw, &sock::CAddr::new(&addr)) {
            Ok(()) => {
                self.conns[i].state = State::Sending;
                self.conns[i].confirmed = true;
                self.t.opened += 1;
                let _ = self.poller.add(raw, Interest::READ);
                self.send(i);
            }
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {
                // On a fast path (loopback) the handshake is usually done
                // by now: send at once. A socket still connecting refuses
                // the write (EAGAIN on Linux, ENOTCONN on the BSDs) and
                // waits for writability; one whose connect failed says why.
                self.conns[i].state = State::Sending;
                if let Err(e) = self.poller.add(raw, Interest::READ) {
                    return self.fail(i, Fail::Connect(e.raw_os_error().unwrap_or(0)));
                }
                self.send(i);
            }
            Err(e) => self.fail(i, fail_of(&e, false)),
        }
    }

    fn event(&mut self, i: usize, ev: &Event) {
        match self.conns[i].state {
            State::Connecting => {
                if !(ev.write || ev.hangup) {
                    return;
                }
                if let Ok(Some(err)) = sock::take_error(self.raw(i)) {
                    return self.fail(i, fail_of(&io::Error::from_raw_os_error(err), false));
                }
                let c = &mut self.conns[i];
                c.state = State::Sending;
                if !c.confirmed {
                    c.confirmed = true;
                    self.t.opened += 1;
                }
                self.send(i);
            }
            State::Sending => {
                if ev.write {
                    self.send(i);
                } else if ev.read || ev.hangup {
                    self.receive(i);
                }
            }
            State::Receiving => {
                if ev.read || ev.hangup {
                    self.receive(i);
                }
            }
            State::Idle => {}
        }
    }

    fn raw(&self, i: usize) -> RawFd {
        self.conns[i].fd.as_ref().map_or(-1, |f| f.as_raw_fd())
    }

    fn send(&mut self, i: usize) {
        let raw = self.raw(i);
        let c = &self.conns[i];
        let t = &self.opts.targets[c.url];
        let req = if c.last { &t.request_close } else { &t.request };
        let mut sent = c.sent;
        let was_confirmed = c.confirmed;
        let mut confirmed = c.confirmed;
        while sent < req.len() {
            match sock::write(raw, &req[sent..]) {
                Ok(k) => {
                    sent += k;
                    confirmed = true;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e)
                    if e.kind() == io::ErrorKind::WouldBlock
                        || (!confirmed && e.raw_os_error() == Some(libc::ENOTCONN)) =>
                {
                    self.t.opened += u64::from(confirmed && !was_confirmed);
                    let c = &mut self.conns[i];
                    c.sent = sent;
                    c.confirmed = confirmed;
                    if !confirmed {
                        // Still connecting: writability will say it is done.
                        c.state = State::Connecting;
                    }
                    if !c.want_write {
                        c.want_write = true;
                        let _ = self.poller.modify(raw, Interest::BOTH);
                    }
                    return;
                }
                Err(e) => {
                    let why = if confirmed {
                        Fail::Reset
                    } else {
                        Fail::Connect(e.raw_os_error().unwrap_or(0))
                    };
                    return self.fail(i, why);
                }
            }
        }
        self.t.opened += u64::from(!was_confirmed);
        let c = &mut self.conns[i];
        c.sent = sent;
        c.confirmed = true;
        c.state = State::Receiving;
        if c.want_write {
            c.want_write = false;
            let _ = self.poller.modify(raw, Interest::READ);
        }
    }

    fn receive(&mut self, i: usize) {
        let raw = self.raw(i);
        loop {
            let k = match sock::read(raw, &mut self.buf) {
                Ok(0) => {
                    let c = &self.conns[i];
                    let kind = if c.head.is_empty() && c.body_left.is_none() {
                        Fail::Reset
                    } else {
                        Fail::ShortBody
                    };
                    return self.fail(i, kind);
                }
                Ok(k) => k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(_) => {
                    let c = &self.conns[i];
                    let kind = if c.head.is_empty() && c.body_left.is_none() {
                        Fail::Reset
                    } else {
                        Fail::ShortBody
                    };
                    return self.fail(i, kind);
                }
            };
            let mut data = &self.buf[..k];
            let c = &mut self.conns[i];
            if c.body_left.is_none() {
                c.head.extend_from_slice(data);
                // Not HTTP: known from its first wrong byte.
                if not_http(&c.head) {
                    return self.answered_not_http(i);
                }
                match parse_head(&c.head) {
                    Ok(None) => continue,
                    Err(()) => return self.fail(i, Fail::Status),
                    Ok(Some(h)) => {
                        let Some(body) = h.body else {
                            // No length: only a close could end it; refuse.
                            return self.fail(i, Fail::Status);
                        };
                        let extra = c.head.len() - h.len;
                        c.status = h.status;
                        c.server_closes = h.close;
                        c.body_left = Some(body);
                        c.body_len = body;
                        self.t.head_bytes += h.len as u64;
                        // Body bytes that came with the head.
                        let over = k - extra;
                        data = &self.buf[over..k];
                        c.head.clear();
                    }
                }
            }
            let c = &mut self.conns[i];
            let left = c.body_left.expect("head parsed");
            let take = (data.len() as u64).min(left);
            c.body_left = Some(left - take);
            if take < data.len() as u64 {
                // More than the body: a broken or pipelining server.
                return self.fail(i, Fail::Status);
            }
            if left - take == 0 {
                return self.complete(i);
            }
        }
    }

    fn complete(&mut self, i: usize) {
        let c = &mut self.conns[i];
        let ns = self
            .now
            .saturating_duration_since(c.start)
            .as_nanos()
            .max(1) as u64;
        let status = c.status;
        let body = c.body_len;
        let answered = &self.shared.answered[c.url];
        if !answered.load(Ordering::Relaxed) {
            answered.store(true, Ordering::Relaxed);
        }
        c.done += 1;
        c.state = State::Idle;
        let close = c.server_closes || c.last;
        let _ = self.t.hist.record(ns.min(3_600_000_000_000));
        *self.t.statuses.entry(status).or_default() += 1;
        self.t.body_bytes += body;
        if let Some(live) = &self.opts.live {
            live.add(1, body);
        }
        if status >= 400 {
            self.t.errors.status += 1;
        }
        self.t.requests += 1;
        if close {
            self.drop_fd(i);
        }
        self.next_request(i);
    }

    /// Connection `i` was answered with bytes that are not HTTP: from a
    /// server that never gave an HTTP response, the load ends, naming
    /// what it answered; from one that did, a counted failure.
    fn answered_not_http(&mut self, i: usize) {
        let c = &self.conns[i];
        if self.shared.answered[c.url].load(Ordering::Relaxed) {
            return self.fail(i, Fail::Status);
        }
        self.shared.give_up(format!(
            "not HTTP: the server at {} ({}) answered {}",
            c.peer,
            self.opts.targets[c.url].url,
            super::said(&c.head)
        ));
        self.drop_fd(i);
        self.conns[i].state = State::Idle;
    }

    /// An attempt failed: count it, drop the connection, retry or give up.
    fn fail(&mut self, i: usize, why: Fail) {
        match why {
            Fail::Connect(errno) => {
                self.t.errors.connect += 1;
                let name = match errno {
                    0 => "unknown".to_string(),
                    e => sys::errno_name(e),
                };
                *self.t.errors.connect_errno.entry(name).or_default() += 1;
            }
            Fail::Ports => self.t.errors.port_exhausted += 1,
            Fail::Reset => self.t.errors.reset += 1,
            Fail::Timeout => self.t.errors.timeout += 1,
            Fail::Status => self.t.errors.status += 1,
            Fail::ShortBody => self.t.errors.short_body += 1,
        }
        self.drop_fd(i);
        let c = &mut self.conns[i];
        c.state = State::Idle;
        c.attempts += 1;
        // Not from here: a connect() that fails at once (no port left, a
        // refusal on loopback) would fail again inside this call, and so
        // on, as deep as the run is long.
        self.again.push(i);
    }

    /// After a failure: retries the request (it keeps its start time), or
    /// gives it up and takes the next.
    fn resume(&mut self, i: usize) {
        if self.conns[i].attempts <= self.opts.retries {
            self.t.retries += 1;
            self.begin(i);
        } else {
            self.t.failed += 1;
            self.next_request(i);
        }
    }

    fn drop_fd(&mut self, i: usize) {
        if let Some(fd) = self.conns[i].fd.take() {
            self.shared.open.fetch_sub(1, Ordering::Relaxed);
            let raw = fd.as_raw_fd();
            let _ = self.poller.forget(raw);
            if let Some(slot) = self.by_fd.get_mut(raw as usize) {
                *slot = usize::MAX;
            }
            drop(fd);
        }
        let c = &mut self.conns[i];
        c.server_closes = false;
        c.done = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse() {
        let t = Target::parse("http://127.0.0.1:8080/a/b?c=1").unwrap();
        assert_eq!(t.addr, "127.0.0.1:8080".parse().unwrap());
        assert!(
            t.request
                .starts_with(b"GET /a/b?c=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n")
        );
        assert!(String::from_utf8_lossy(&t.request_close).contains("Connection: close"));
        let t = Target::parse("http://[::1]:81").unwrap();
        assert_eq!(t.addr, "[::1]:81".parse().unwrap());
        assert!(t.request.starts_with(b"GET / HTTP/1.1"));
        assert!(Target::parse("https://x/").is_err());
        assert!(Target::parse("ftp://x/").is_err());
        let e = |u: &str| Target::parse(u).unwrap_err().to_string();
        assert!(
            e("http://::1:8080/").contains("`[::1]:8080`"),
            "{}",
            e("http://::1:8080/")
        );
        assert!(e("http://u:secret@127.0.0.1:8080/").contains("credentials"));
        assert!(!e("http://u:secret@127.0.0.1:8080/").contains("secret@"));
        assert!(e("http://127.0.0.1:0/").contains("port 0"));
        assert!(e("http://127.0.0.1:99999/").contains("`99999` is not a port"));
        assert_eq!(redacted("http://u:pw@h:1/a@b"), "http://u:…@h:1/a@b");
        assert!(e("https://127.0.0.1/").ends_with("https is not supported"));
        assert!(e("http:/127.0.0.1/").ends_with("(http://HOST[:PORT][/PATH])"));
        assert!(e("http:///x").ends_with("no host after http://"));
        assert!(e("http://127.0.0.1:8080/a b").contains("a space is written %20"));
        assert!(Target::parse("HTTP://127.0.0.1:8080/").is_ok());
        let t = Target::parse("http://127.0.0.1:8080?x=1#frag").unwrap();
        assert!(
            t.request
                .starts_with(b"GET /?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n")
        );
    }

    /// An outcome with `lat` as its latencies, and counts derived from a
    /// seed.
    fn outcome(lat: &[u64], seed: u64) -> Outcome {
        let mut o = Outcome::empty(Duration::from_millis(900 + seed));
        for &v in lat {
            o.latency.record(v).unwrap();
        }
        o.requests = lat.len() as u64;
        o.body_bytes = 1024 * o.requests;
        o.head_bytes = 100 * o.requests;
        o.connections = o.requests + seed;
        o.errors.connect = seed;
        o.errors.port_exhausted = 2 * seed;
        o.retries = 3 * seed;
        o.statuses.insert(200, o.requests);
        o.statuses.insert(404, seed);
        o.peak_open = 10 + seed;
        o.opening = (seed > 1).then(|| Duration::from_millis(100 * seed));
        o
    }

    #[test]
    fn the_measured_time_starts_once_every_thread_has_opened_its_connections() {
        let opts = LoadOptions::new(vec![Target::parse("http://127.0.0.1:1/").unwrap()], 2);
        let shared = Shared::new(&opts, 2);
        let start = Instant::now();
        let limit = Duration::from_secs(30);
        let late = std::thread::scope(|s| {
            let slow = s.spawn(|| {
                std::thread::sleep(Duration::from_millis(200));
                shared.opened(start, limit, None)
            });
            let quick = s.spawn(|| shared.opened(start, limit, None));
            [quick.join().unwrap(), slow.join().unwrap()]
        });
        // The quick thread waited for the slow one; both start from the
        // slow one's moment.
        assert_eq!(late[0], late[1]);
        assert!(late[0] >= Duration::from_millis(200), "{late:?}");
        // A thread that never says (it failed) holds the others at most
        // the limit.
        let shared = Shared::new(&opts, 2);
        let waited = Instant::now();
        shared.opened(Instant::now(), Duration::from_millis(50), None);
        assert!(waited.elapsed() >= Duration::from_millis(50));
    }

    #[test]
    fn port_exhaustion_is_its_own_kind() {
        let e = |n| io::Error::from_raw_os_error(n);
        assert_eq!(fail_of(&e(libc::EADDRNOTAVAIL), false), Fail::Ports);
        assert_eq!(fail_of(&e(libc::EADDRNOTAVAIL), true), Fail::Ports);
        assert_eq!(fail_of(&e(libc::EADDRINUSE), true), Fail::Ports);
        assert_eq!(
            fail_of(&e(libc::EADDRINUSE), false),
            Fail::Connect(libc::EADDRINUSE)
        );
        assert_eq!(
            fail_of(&e(libc::ECONNREFUSED), false),
            Fail::Connect(libc::ECONNREFUSED)
        );
        let mut x = Errors {
            port_exhausted: 2,
            connect: 1,
            ..Errors::default()
        };
        x.add(&x.clone());
        assert_eq!((x.port_exhausted, x.total()), (4, 6));
    }

    #[test]
    fn parts_merge_exactly() {
        // Latencies spread over many buckets, some far apart.
        let a: Vec<u64> = (1..5000u64)
            .map(|i| i * i * 37 % 9_000_000_000 + 1)
            .collect();
        let b: Vec<u64> = (1..3000u64)
            .map(|i| i * 1_234_567 % 50_000_000 + 7)
            .collect();
        let (oa, ob) = (outcome(&a, 1), outcome(&b, 2));
        // Through JSON as the processes send them.
        let back = |o: &Outcome| {
            let text = serde_json::to_string(&o.part()).unwrap();
            Outcome::from_part(&serde_json::from_str(&text).unwrap()).unwrap()
        };
        let m = Outcome::merge(&[back(&oa), back(&ob)]);
        // What one histogram of every latency says.
        let mut all = new_hist();
        for v in a.iter().chain(&b) {
            all.record(*v).unwrap();
        }
        for q in [0.0, 0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(
                m.latency.value_at_quantile(q),
                all.value_at_quantile(q),
                "{q}"
            );
        }
        assert_eq!(m.latency.max(), all.max());
        assert_eq!(m.latency.min(), all.min());
        assert_eq!(m.latency.len(), all.len());
        assert!((m.latency.mean() - all.mean()).abs() < 1e-6 * all.mean());
        assert_eq!(m.requests, (a.len() + b.len()) as u64);
        assert_eq!(m.body_bytes, oa.body_bytes + ob.body_bytes);
        assert_eq!(m.head_bytes, oa.head_bytes + ob.head_bytes);
        assert_eq!(m.connections, oa.connections + ob.connections);
        assert_eq!(
            (m.errors.connect, m.errors.port_exhausted, m.retries),
            (3, 6, 9)
        );
        assert_eq!(m.statuses[&200], m.requests);
        assert_eq!(m.statuses[&404], 3);
        assert_eq!(m.elapsed, Duration::from_millis(902), "the longest");
        assert_eq!((m.peak_open, m.processes), (23, 2));
        // The longest opening, through JSON; none where no process had one.
        assert_eq!(m.opening, Some(Duration::from_millis(200)));
        assert_eq!(back(&oa).opening, None);
        let e = m.stats().errors;
        assert_eq!(
            (e.connect, e.port_exhausted),
            (3, 6),
            "apart in the result file too"
        );
    }

    #[test]
    fn rounds_merge_round_by_round() {
        let mut x = outcome(&[1000, 2000], 1);
        x.rounds = vec![outcome(&[1000], 0), outcome(&[2000], 0)];
        let mut y = outcome(&[3000], 2);
        y.rounds = vec![outcome(&[3000], 0)];
        y.stopped = true;
        let m = Outcome::merge(&[x, y]);
        assert!(m.stopped);
        assert_eq!(m.rounds.len(), 2);
        assert_eq!(
            m.rounds.iter().map(|r| r.requests).collect::<Vec<_>>(),
            [2, 1]
        );
        let p = m.part();
        assert_eq!(p.rounds.len(), 2);
        assert_eq!(Outcome::from_part(&p).unwrap().rounds[0].requests, 2);
    }

    #[test]
    fn heads_parse_with_their_body_length() {
        let h = parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nbody")
            .unwrap()
            .unwrap();
        assert_eq!(
            (h.status, h.body, h.close, h.len),
            (200, Some(12), false, 39)
        );
        let h = parse_head(b"HTTP/1.1 304 Not Modified\r\nConnection: close\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_eq!((h.status, h.body, h.close), (304, Some(0), true));
        assert!(parse_head(b"HTTP/1.1 200 OK\r\n").unwrap().is_none());
        assert!(parse_head(b"garbage\r\n\r\n").is_err());
    }

    /// A server on 127.0.0.1 answering its `k`-th connection with
    /// `answer(k)` (after reading a request head) and closing it, until
    /// `conns` connections were answered.
    fn answering(conns: usize, answer: fn(usize) -> &'static [u8]) -> Target {
        use std::io::{Read, Write};
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/x", l.local_addr().unwrap());
        std::thread::spawn(move || {
            for (k, c) in l.incoming().take(conns).enumerate() {
                let Ok(mut c) = c else { return };
                let _ = c.set_read_timeout(Some(Duration::from_secs(5)));
                let mut got = Vec::new();
                let mut b = [0u8; 512];
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    match c.read(&mut b) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => got.extend_from_slice(&b[..n]),
                    }
                }
                let _ = c.write_all(answer(k));
            }
        });
        Target::parse(&url).unwrap()
    }

    #[test]
    fn a_server_that_never_answered_http_ends_the_load_naming_its_answer() {
        let t = answering(8, |_| b"220 mail.example ESMTP\r\n");
        let started = Instant::now();
        let e = run(&LoadOptions {
            total: Some(1_000_000),
            ..LoadOptions::new(vec![t.clone()], 4)
        })
        .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert_eq!(
            e.to_string(),
            format!(
                "not HTTP: the server at {} ({}) answered `220 mail.example ESMTP`",
                t.addr, t.url
            )
        );
        assert!(started.elapsed() < Duration::from_secs(5));
        // One that answered HTTP first: a later answer that is not is a
        // bad status, counted.
        let t = answering(4, |k| match k {
            0 => b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
            _ => b"garbage\r\n",
        });
        let o = run(&LoadOptions {
            total: Some(4),
            per_connection: Some(1),
            retries: 0,
            ..LoadOptions::new(vec![t], 1)
        })
        .unwrap();
        assert_eq!((o.requests, o.errors.status, o.failed), (1, 3, 3));
    }

    #[test]
    fn an_answer_is_known_not_http_from_its_first_wrong_byte() {
        for ok in [
            &b""[..],
            b"H",
            b"HTTP/1",
            b"HTTP/1.1 ",
            b"HTTP/1.0 404 Not Found\r\n",
        ] {
            assert!(!not_http(ok), "{}", String::from_utf8_lossy(ok));
        }
        for bad in [
            &b"2"[..],
            b"220 mail ESMTP\r\n",
            b"SSH-2.0-OpenSSH",
            b"HTTP/2 200",
            b"HTTP/1.1 OK",
            b"HTTP/1.1  200",
            b"\x16\x03\x01",
        ] {
            assert!(not_http(bad), "{}", String::from_utf8_lossy(bad));
        }
    }
}
