//! `forward`: IPv4 forwarding through a router, the DragonFly slides'
//! bidirectional forwarding test on one machine. Linux, as root.
//!
//! A test bed of three network namespaces ([`crate::testbed`], a star):
//! the **router** in the middle (`ip_forward=1`), the **source** on
//! 198.18.1.0/24 and the **sink** on 198.18.2.0/24, each joined to the
//! router by a veth pair; IPv6 off, every neighbour a permanent entry, so
//! the links carry only the test's packets. Behind each end lie 208
//! destination addresses (`.16`–`.223` of its /24) that the router holds
//! as permanent neighbour entries all mapped to that end's one link-layer
//! address — the slides' "208 addresses mapped to one link-layer address".
//! The end receiving them does not forward and owns none of them, so it
//! drops them silently once they have crossed its link.
//!
//! The generator is written here on libc: a UDP socket opened inside the
//! source namespace (a thread that joined it), 64-byte payloads to the 208
//! addresses in turn, `sendmmsg` batches (at most 64, about one call per
//! 0.5 ms), paced to the offered rate by a token bucket that holds 10 ms
//! of packets: a generator held off the CPU for up to 10 ms (2 vCPUs
//! shared with everything else) catches up in a burst, one held off
//! longer falls behind, and the level says what it really offered. "Both ways" runs a
//! second one from the sink towards the addresses behind the source.
//! Each is bounded by time and count; both are threads of this process.
//!
//! Counted: **forwarded** — the router's transmit counters of its links
//! (`/proc/net/dev` read in the router's namespace), every sample; the
//! sample's figure is forwarded packets/s. **Received** — the receiving
//! end's link receive counter, read before the generators start and after
//! they stop and the queues drained, against the packets **sent**, so the
//! loss of a level is exact whatever was in flight. Where they were lost
//! is named from the drop counters (an end's transmit drops: the router's
//! input queue was full; the router's: the receiving end's).
//!
//! The sweep is over the offered rate per direction (`--sweep
//! rate=10000,50000,…`), then RFC 2544's binary search between the
//! highest loss-free and the lowest lossy rate ([`sweep::search`], up to
//! [`default_search_steps`] or `run --search-steps` levels, to within
//! [`SEARCH_RESOLUTION`]); the highest loss-free rate (RFC 2544's
//! throughput over the levels run) is the highest level that, and every
//! level below it, lost at most [`LOSS_TOLERANCE`] (or `run
//! --loss-tolerance`) of the packets sent
//! and was offered in full (at least [`REACHED`] of the rate).

use super::{Info, Size, Workload, WorkloadFlag, WorkloadOptions};
use crate::ctx::Ctx;
use crate::harness::progress::Progress;
use crate::harness::sweep::{self, LevelOutcome};
use crate::results::{SweepLevel, SweepSample, SweepStats, WorkloadResult, WorkloadRow};
use crate::stop::interrupted;
use crate::testbed::{Spec, Testbed};
use serde_json::json;
use std::collections::BTreeMap;
use std::io::{Read, Seek};
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The `forward` workload.
pub struct Forward;

static FORWARD: Info = Info {
    name: "forward",
    what: "IPv4 forwarding through a router network namespace (Linux, root): 64-byte UDP packets to 208 addresses behind a sink, one way and both ways, packets/s forwarded by the router against the offered rate, and the highest loss-free rate",
    quick: false,
    between_hosts: false,
    several_clients: false,
};

/// The largest share of the packets sent a level may lose and still be
/// loss-free, unless `run --loss-tolerance` says otherwise: none.
pub const LOSS_TOLERANCE: f64 = 0.0;

/// A level was offered in full when the generator sent at least this share
/// of its rate.
pub const REACHED: f64 = 0.95;

/// The binary search after the sweep stops once the loss-free and the
/// lossy rate around the loss-free rate are this close (a share of the
/// lossy one).
pub const SEARCH_RESOLUTION: f64 = 0.01;

/// Search steps after the sweep's levels unless `run --search-steps` says
/// otherwise: 3 for the quick size, 6 for the full one.
pub fn default_search_steps(size: Size) -> u32 {
    match size {
        Size::Quick => 3,
        Size::Full => 6,
    }
}

/// UDP payload bytes (the slides' 64).
pub const PAYLOAD: usize = 64;

/// Destination addresses behind each end.
pub const DESTINATIONS: u8 = 208;

/// The first of them in the end's /24 (`.16` … `.223`).
const FIRST: u8 = 16;

/// The destination port (discard).
const PORT: u16 = 9;

/// The test bed's directory inside the run's work directory.
const DIR: &str = "forward-testbed";

/// Datagrams per `sendmmsg` at most.
const BATCH: usize = 64;

const ROUTER: &str = "router";
const SOURCE: &str = "source";
const SINK: &str = "sink";

/// The levels and times of a size (offered packets/s per direction).
fn default_plan(size: Size) -> (Vec<f64>, Duration, Duration, u32) {
    match size {
        Size::Quick => (
            vec![10_000.0, 50_000.0, 100_000.0, 200_000.0],
            Duration::from_millis(500),
            Duration::from_millis(500),
            3,
        ),
        Size::Full => (
            [
                10_000, 25_000, 50_000, 100_000, 150_000, 200_000, 250_000, 300_000, 400_000,
                500_000,
            ]
            .iter()
            .map(|&x| x as f64)
            .collect(),
            Duration::from_secs(2),
            Duration::from_secs(2),
            5,
        ),
    }
}

/// The sweep plan: the levels of `--sweep rate=…` or the size's.
fn plan(opts: &WorkloadOptions) -> sweep::SweepPlan {
    let (levels, heat, sample, samples) = default_plan(opts.size);
    let s = opts.sweep.as_ref();
    let levels = s
        .filter(|s| !s.timings_only())
        .map_or(levels, |s| s.levels.clone());
    sweep::SweepPlan {
        variable: "rate".into(),
        unit: "pps".into(),
        baseline: s
            .and_then(|s| s.baseline)
            .unwrap_or_else(|| levels.iter().copied().fold(f64::INFINITY, f64::min)),
        levels,
        knee_on: "per-unit",
        heat_up: s.and_then(|s| s.heat_up).unwrap_or(heat),
        samples: s.and_then(|s| s.samples).unwrap_or(samples),
        sample: s.and_then(|s| s.sample).unwrap_or(sample),
        figure_of_last: 3,
        counts_failures: true,
    }
}

/// One interface's counters out of `/proc/net/dev`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Dev {
    rx_packets: u64,
    rx_dropped: u64,
    tx_packets: u64,
    tx_dropped: u64,
}

/// Every interface of `/proc/net/dev`.
fn parse_net_dev(text: &str) -> BTreeMap<String, Dev> {
    let mut m = BTreeMap::new();
    for l in text.lines().skip(2) {
        let Some((name, rest)) = l.split_once(':') else {
            continue;
        };
        let f: Vec<u64> = rest
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        if f.len() >= 12 {
            m.insert(
                name.trim().to_string(),
                Dev {
                    rx_packets: f[1],
                    rx_dropped: f[3],
                    tx_packets: f[9],
                    tx_dropped: f[11],
                },
            );
        }
    }
    m
}

/// `/proc/net/dev` of one namespace, opened inside it and read again and
/// again from here.
struct NamespaceCounters(std::fs::File);

impl NamespaceCounters {
    fn open(tb: &Testbed, host: &str) -> Result<NamespaceCounters, String> {
        tb.run_in(host, crate::sys::netns::net_dev)
            .map_err(|e| format!("{e:#}"))?
            .map(NamespaceCounters)
            .map_err(|e| format!("/proc/net/dev of {host}: {e}"))
    }

    fn read(&mut self) -> BTreeMap<String, Dev> {
        let mut s = String::new();
        if self.0.rewind().is_err() || self.0.read_to_string(&mut s).is_err() {
            return BTreeMap::new();
        }
        parse_net_dev(&s)
    }
}

/// What a generator did.
#[derive(Debug, Clone, Default)]
struct Sent {
    packets: u64,
    seconds: f64,
    errors: BTreeMap<String, u64>,
}

/// Sends 64-byte datagrams to `dests` in turn at `rate` per second from
/// `sock` until `stop`, ^C, `limit` or `rate × limit` packets (+ a batch),
/// whichever comes first.
fn generate(
    sock: &UdpSocket,
    dests: &[SocketAddrV4],
    rate: f64,
    limit: Duration,
    stop: &AtomicBool,
) -> Sent {
    let mut payload = [0u8; PAYLOAD];
    payload[..18].copy_from_slice(b"scalebench forward");
    let mut b = crate::sys::netns::UdpBatch::new(dests, &payload, BATCH);
    // About one call per 0.5 ms; the bucket holds 10 ms of packets (at
    // least two calls): a generator held off the CPU that long catches up.
    let per_call = ((rate * 0.0005).round() as usize).clamp(1, BATCH);
    let cap = (2 * per_call).max((rate * 0.010) as usize) as f64;
    let max = (rate * limit.as_secs_f64()).ceil() as u64 + BATCH as u64;
    let mut out = Sent::default();
    let start = Instant::now();
    let deadline = start + limit;
    let mut last = start;
    let mut tokens = 0.0f64;
    loop {
        let now = Instant::now();
        if stop.load(Ordering::Relaxed) || interrupted() || now >= deadline || out.packets >= max {
            break;
        }
        tokens = (tokens + (now - last).as_secs_f64() * rate).min(cap);
        last = now;
        if tokens < per_call as f64 {
            let wait = (per_call as f64 - tokens) / rate;
            std::thread::sleep(Duration::from_secs_f64(wait.min(0.005)));
            continue;
        }
        let n = (tokens as usize)
            .min(BATCH)
            .min((max - out.packets) as usize);
        match b.send(sock, n) {
            Ok(0) => {
                *out.errors.entry("sendmmsg EAGAIN".into()).or_default() += 1;
                std::thread::sleep(Duration::from_micros(100));
            }
            Ok(k) => {
                out.packets += k as u64;
                tokens -= k as f64;
            }
            Err(e) => {
                let name = crate::sys::errno_name(e.raw_os_error().unwrap_or(0));
                *out.errors.entry(format!("sendmmsg {name}")).or_default() += 1;
                tokens = 0.0;
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
    out.seconds = start.elapsed().as_secs_f64();
    out
}

/// Sets the flag when dropped (the generators stop on every path).
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Sleeps until `t`, in steps, returning early on ^C (`false`).
fn sleep_until(t: Instant) -> bool {
    loop {
        if interrupted() {
            return false;
        }
        let now = Instant::now();
        if now >= t {
            return true;
        }
        std::thread::sleep((t - now).min(Duration::from_millis(50)));
    }
}

/// The three namespaces, ready to send.
struct Bed {
    tb: Testbed,
    router: NamespaceCounters,
    source: NamespaceCounters,
    sink: NamespaceCounters,
    from_source: UdpSocket,
    from_sink: UdpSocket,
    behind_sink: Vec<SocketAddrV4>,
    behind_source: Vec<SocketAddrV4>,
}

/// Host `host`'s address, its link's /24 and the router's interface
/// towards it.
fn end(tb: &Testbed, host: &str) -> Result<(Ipv4Addr, String, String), String> {
    let h = tb.host(host).ok_or_else(|| format!("no {host}"))?;
    let l = h
        .links
        .first()
        .ok_or_else(|| format!("{host} has no link"))?;
    Ok((l.address, l.peer_dev.clone(), l.mac.clone()))
}

/// The addresses behind an end at `addr` (the same /24, `.16` … `.223`).
fn behind(addr: Ipv4Addr) -> Vec<SocketAddrV4> {
    let o = addr.octets();
    (0..DESTINATIONS)
        .map(|i| SocketAddrV4::new(Ipv4Addr::new(o[0], o[1], o[2], FIRST + i), PORT))
        .collect()
}

impl Bed {
    /// Makes the test bed in `dir` and everything the test needs in it.
    fn make(dir: &Path, params: &mut BTreeMap<String, serde_json::Value>) -> Result<Bed, String> {
        let spec = Spec {
            name: format!("fwd{}", std::process::id()),
            hosts: vec![ROUTER.into(), SOURCE.into(), SINK.into()],
            link_bits: None,
            sshd: false,
            ipv6: false,
            dir: dir.to_path_buf(),
            pause: Duration::ZERO,
        };
        let (tb, notes) = Testbed::up(&spec, &interrupted).map_err(|e| format!("{e:#}"))?;
        if !notes.is_empty() {
            params.insert("testbed_notes".into(), json!(notes));
        }
        let (src, to_src, src_mac) = end(&tb, SOURCE)?;
        let (snk, to_snk, snk_mac) = end(&tb, SINK)?;
        // The addresses behind each end: permanent neighbours of the
        // router, all mapped to that end's link-layer address.
        let mut lines = Vec::new();
        for (addr, dev, mac) in [(src, &to_src, &src_mac), (snk, &to_snk, &snk_mac)] {
            for d in behind(addr) {
                lines.push(format!(
                    "neigh replace {} lladdr {mac} dev {dev} nud permanent",
                    d.ip()
                ));
            }
        }
        tb.ip_batch(ROUTER, &lines).map_err(|e| format!("{e:#}"))?;
        let sock = |host: &str, addr: Ipv4Addr| -> Result<UdpSocket, String> {
            tb.run_in(host, || UdpSocket::bind(SocketAddrV4::new(addr, 0)))
                .map_err(|e| format!("{e:#}"))?
                .map_err(|e| format!("UDP socket in {host}: {e}"))
        };
        let from_source = sock(SOURCE, src)?;
        let from_sink = sock(SINK, snk)?;
        let router = NamespaceCounters::open(&tb, ROUTER)?;
        let source = NamespaceCounters::open(&tb, SOURCE)?;
        let sink = NamespaceCounters::open(&tb, SINK)?;
        params.insert(
            "namespaces".into(),
            json!(
                tb.state()
                    .hosts
                    .iter()
                    .map(|h| format!("{} {}", h.name, h.netns))
                    .collect::<Vec<_>>()
            ),
        );
        params.insert("source".into(), json!(format!("{src} ({ROUTER} {to_src})")));
        params.insert("sink".into(), json!(format!("{snk} ({ROUTER} {to_snk})")));
        params.insert(
            "destinations".into(),
            json!(format!(
                "{DESTINATIONS} addresses behind each end (.{FIRST}–.{} of its /24), permanent neighbour entries of the router mapped to the end's one link-layer address",
                FIRST + DESTINATIONS - 1
            )),
        );
        params.insert("payload_bytes".into(), json!(PAYLOAD));
        params.insert(
            "generator".into(),
            json!(format!(
                "UDP from a thread inside the sending namespace, sendmmsg batches of at most {BATCH} (about one call per 0.5 ms), token bucket of 10 ms"
            )),
        );
        params.insert("offered_in_full_share".into(), json!(REACHED));
        params.insert("router".into(), tunables(&tb, &[&to_src, &to_snk]));
        Ok(Bed {
            behind_sink: behind(snk),
            behind_source: behind(src),
            tb,
            router,
            source,
            sink,
            from_source,
            from_sink,
        })
    }

    /// The interface names: (source's, router's towards the source,
    /// router's towards the sink, sink's).
    fn devs(&self) -> (String, String, String, String) {
        let d = |h: &str| {
            self.tb
                .host(h)
                .and_then(|h| h.links.first())
                .map(|l| (l.dev.clone(), l.peer_dev.clone()))
                .unwrap_or_default()
        };
        let (src_dev, to_src) = d(SOURCE);
        let (snk_dev, to_snk) = d(SINK);
        (src_dev, to_src, to_snk, snk_dev)
    }
}

/// The router's tunables: the sysctls that govern forwarding (read inside
/// its namespace; those the kernel keeps system-wide read here, so
/// marked) and its links' queues.
fn tunables(tb: &Testbed, devs: &[&str]) -> serde_json::Value {
    let mut names: Vec<String> = [
        "net.ipv4.ip_forward",
        "net.ipv4.conf.all.rp_filter",
        "net.ipv4.conf.default.rp_filter",
        "net.core.netdev_max_backlog",
        "net.core.netdev_budget",
        "net.core.netdev_budget_usecs",
        "net.core.dev_weight",
        "net.core.rmem_default",
        "net.core.wmem_default",
        "net.core.rmem_max",
        "net.core.wmem_max",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for d in devs {
        names.push(format!("net.ipv4.conf.{d}.rp_filter"));
        names.push(format!("net.ipv4.conf.{d}.forwarding"));
    }
    let mut sysctls = serde_json::Map::new();
    for n in &names {
        let v = match tb.sysctl(ROUTER, n) {
            Some(v) => json!(v),
            None => match crate::sys::sysctl(n) {
                Some(v) => json!(format!("{} (system-wide)", v.trim())),
                None => continue,
            },
        };
        sysctls.insert(n.clone(), v);
    }
    // Queue lengths and qdiscs of the router's links.
    let mut links = serde_json::Map::new();
    let out = tb.command(ROUTER, "ip").ok().and_then(|mut c| {
        c.args(["-d", "-j", "link", "show"]);
        crate::harness::reaper::run_bounded(&mut c, Duration::from_secs(10)).ok()
    });
    let v: serde_json::Value = out
        .and_then(|f| serde_json::from_str(&f.stdout).ok())
        .unwrap_or_default();
    for l in v.as_array().into_iter().flatten() {
        let Some(name) = l["ifname"].as_str() else {
            continue;
        };
        if devs.contains(&name) {
            let mut m = serde_json::Map::new();
            for k in ["txqlen", "qdisc", "mtu", "num_tx_queues", "num_rx_queues"] {
                if !l[k].is_null() {
                    m.insert(k.into(), l[k].clone());
                }
            }
            links.insert(name.into(), serde_json::Value::Object(m));
        }
    }
    json!({ "sysctls": sysctls, "links": links })
}

/// Counter differences over a level.
fn delta(a: &BTreeMap<String, Dev>, b: &BTreeMap<String, Dev>, dev: &str) -> Dev {
    let (x, y) = (
        a.get(dev).copied().unwrap_or_default(),
        b.get(dev).copied().unwrap_or_default(),
    );
    Dev {
        rx_packets: y.rx_packets.saturating_sub(x.rx_packets),
        rx_dropped: y.rx_dropped.saturating_sub(x.rx_dropped),
        tx_packets: y.tx_packets.saturating_sub(x.tx_packets),
        tx_dropped: y.tx_dropped.saturating_sub(x.tx_dropped),
    }
}

/// Runs one level: generators at `rate` per direction (both ways: from
/// both ends), the router's forwarding counted every sample.
fn level(
    bed: &mut Bed,
    both: bool,
    tolerance: f64,
    rate: f64,
    plan: &sweep::SweepPlan,
) -> LevelOutcome {
    let mut out = LevelOutcome::default();
    let (src_dev, to_src, to_snk, snk_dev) = bed.devs();
    let lv = Level {
        both,
        rate,
        tolerance,
        src_dev,
        to_src,
        to_snk,
        snk_dev,
    };
    if plan.samples == 0 {
        return out;
    }
    let before = Snapshot::read(bed);
    let sent = lv.drive(bed, plan, &mut out);
    let after = Snapshot::drained(bed);
    lv.account(&lv.tally(&before, &after), &sent, &mut out);
    if interrupted() && out.samples.len() < plan.samples as usize {
        out.error = Some("interrupted".into());
    }
    out
}

/// The counters of the three namespaces at one moment.
#[derive(PartialEq)]
struct Snapshot {
    router: BTreeMap<String, Dev>,
    source: BTreeMap<String, Dev>,
    sink: BTreeMap<String, Dev>,
}

impl Snapshot {
    /// The bed's counters now.
    fn read(bed: &mut Bed) -> Snapshot {
        Snapshot {
            router: bed.router.read(),
            source: bed.source.read(),
            sink: bed.sink.read(),
        }
    }

    /// The bed's counters once the queues have drained after the
    /// generators stopped: when two reads [`DRAIN_POLL`] apart agree
    /// (the softirqs that forward may run late on a busy machine), at
    /// most [`DRAIN_LIMIT`] after the first.
    fn drained(bed: &mut Bed) -> Snapshot {
        let start = Instant::now();
        let mut last = Snapshot::read(bed);
        while start.elapsed() < DRAIN_LIMIT {
            std::thread::sleep(DRAIN_POLL);
            let now = Snapshot::read(bed);
            if now == last {
                break;
            }
            last = now;
        }
        last
    }
}

/// How far apart the reads of [`Snapshot::drained`] are.
const DRAIN_POLL: Duration = Duration::from_millis(50);
/// How long [`Snapshot::drained`] waits at most for the counters to settle.
const DRAIN_LIMIT: Duration = Duration::from_secs(2);

/// What the interfaces counted over a level.
struct Tally {
    /// Sent by the router towards the sink.
    fwd_one: Dev,
    /// Sent by the router towards the source.
    fwd_back: Dev,
    /// The source's interface.
    src: Dev,
    /// The sink's interface.
    snk: Dev,
}

/// A level of the sweep ([`level`]): which ways, at what rate, the loss
/// it tolerates, and the interfaces whose counters it reads.
struct Level {
    /// Both ways at once (else source to sink only).
    both: bool,
    /// The offered rate, packets per second from each sender.
    rate: f64,
    /// The share of the packets sent that may be lost.
    tolerance: f64,
    /// The source's interface.
    src_dev: String,
    /// The router's interface towards the source.
    to_src: String,
    /// The router's interface towards the sink.
    to_snk: String,
    /// The sink's interface.
    snk_dev: String,
}

impl Level {
    /// The packets the router has sent on, by its counters `m`: towards
    /// the sink, and both ways towards the source too.
    fn forwarded(&self, m: &BTreeMap<String, Dev>) -> u64 {
        m.get(&self.to_snk).map_or(0, |d| d.tx_packets)
            + if self.both {
                m.get(&self.to_src).map_or(0, |d| d.tx_packets)
            } else {
                0
            }
    }

    /// Sends from one end (both ways: from both) for the level's time
    /// while [`Level::sample`] counts the router's forwarding; what each
    /// generator sent.
    fn drive(&self, bed: &mut Bed, plan: &sweep::SweepPlan, out: &mut LevelOutcome) -> Vec<Sent> {
        let (both, rate) = (self.both, self.rate);
        let stop = AtomicBool::new(false);
        let limit = plan.level_time() + Duration::from_secs(1);
        let (from_source, from_sink) = (&bed.from_source, &bed.from_sink);
        let (to_sink_addrs, to_source_addrs) = (&bed.behind_sink, &bed.behind_source);
        let router = &mut bed.router;
        let (sent, window) = std::thread::scope(|s| {
            let stop_ref = &stop;
            let g1 = s.spawn(move || generate(from_source, to_sink_addrs, rate, limit, stop_ref));
            let g2 = both.then(|| {
                s.spawn(move || generate(from_sink, to_source_addrs, rate, limit, stop_ref))
            });
            let guard = StopOnDrop(&stop);
            let window = self.sample(router, plan, &mut out.samples);
            drop(guard);
            let mut sent = vec![g1.join().unwrap_or_default()];
            if let Some(g) = g2 {
                sent.push(g.join().unwrap_or_default());
            }
            (sent, window)
        });
        out.window = window;
        sent
    }

    /// After the heat-up, the router's forwarding rate over each sample
    /// (into `samples`), until the plan's samples are taken or ^C; the
    /// time they cover, if any were taken.
    fn sample(
        &self,
        router: &mut NamespaceCounters,
        plan: &sweep::SweepPlan,
        samples: &mut Vec<SweepSample>,
    ) -> Option<(Instant, Instant)> {
        let start = Instant::now();
        if !sleep_until(start + plan.heat_up) {
            return None;
        }
        let begun = Instant::now();
        let mut prev = (begun, self.forwarded(&router.read()));
        let mut t = 0.0;
        for k in 1..=plan.samples {
            if !sleep_until(begun + plan.sample * k) {
                break;
            }
            let now = (Instant::now(), self.forwarded(&router.read()));
            let secs = (now.0 - prev.0).as_secs_f64();
            t += secs;
            samples.push(SweepSample {
                t,
                seconds: secs,
                value: now.1.saturating_sub(prev.1) as f64 / secs.max(1e-9),
                latency_ns: None,
                mean_latency_ns: None,
                errors: 0,
            });
            prev = now;
        }
        (!samples.is_empty()).then_some((begun, prev.0))
    }

    /// The counters' differences between `a` and `b`.
    fn tally(&self, a: &Snapshot, b: &Snapshot) -> Tally {
        Tally {
            fwd_one: delta(&a.router, &b.router, &self.to_snk),
            fwd_back: delta(&a.router, &b.router, &self.to_src),
            src: delta(&a.source, &b.source, &self.src_dev),
            snk: delta(&a.sink, &b.sink, &self.snk_dev),
        }
    }

    /// Records what was `sent`, received, forwarded and lost (`t`), whether
    /// the level was loss-free, and where packets were lost.
    fn account(&self, t: &Tally, sent: &[Sent], out: &mut LevelOutcome) {
        let (both, rate) = (self.both, self.rate);
        let sent_total: u64 = sent.iter().map(|s| s.packets).sum();
        // Received: at the sink, and with both ways at the source too.
        let received = t.snk.rx_packets + if both { t.src.rx_packets } else { 0 };
        let lost = sent_total.saturating_sub(received);
        let seconds = sent.iter().map(|s| s.seconds).fold(0.0, f64::max);
        let sent_pps: Vec<f64> = sent
            .iter()
            .map(|s| s.packets as f64 / s.seconds.max(1e-9))
            .collect();
        let reached = sent_pps.iter().all(|&p| p >= rate * REACHED);
        let loss_share = if sent_total > 0 {
            lost as f64 / sent_total as f64
        } else {
            0.0
        };
        let ok = reached && sent_total > 0 && loss_share <= self.tolerance;
        let forwarded = t.fwd_one.tx_packets + if both { t.fwd_back.tx_packets } else { 0 };
        let p = &mut out.params;
        p.insert("offered_pps".into(), json!(rate));
        p.insert("directions".into(), json!(if both { 2 } else { 1 }));
        p.insert("sent".into(), json!(sent_total));
        p.insert(
            "sent_pps".into(),
            json!(sent_pps.iter().map(|x| x.round()).collect::<Vec<_>>()),
        );
        p.insert("offered_in_full".into(), json!(reached));
        p.insert("received".into(), json!(received));
        p.insert("forwarded".into(), json!(forwarded));
        p.insert(
            "forwarded_pps".into(),
            json!((forwarded as f64 / seconds.max(1e-9)).round()),
        );
        p.insert("lost".into(), json!(lost));
        p.insert("loss_share".into(), json!(loss_share));
        p.insert("loss_free".into(), json!(ok));
        self.losses(t, lost, out);
        for s in sent {
            for (k, n) in &s.errors {
                *out.failures.entry(k.clone()).or_default() += n;
            }
        }
    }

    /// Where the `lost` packets were lost, as far as the counters `t` say,
    /// into the level's failures.
    fn losses(&self, t: &Tally, lost: u64, out: &mut LevelOutcome) {
        let mut places = vec![
            (
                "lost: router input queue full (from the source)",
                t.src.tx_dropped,
            ),
            ("lost: sink input queue full", t.fwd_one.tx_dropped),
        ];
        if self.both {
            places.push((
                "lost: router input queue full (from the sink)",
                t.snk.tx_dropped,
            ));
            places.push(("lost: source input queue full", t.fwd_back.tx_dropped));
        }
        let placed: u64 = places.iter().map(|p| p.1).sum();
        places.push((
            "lost: elsewhere (in the router)",
            lost.saturating_sub(placed),
        ));
        for (what, n) in places {
            if n > 0 {
                *out.failures.entry(what.to_string()).or_default() += n;
            }
        }
    }
}

/// What the sweep `s` of one direction (`label`, `both` ways) found: the
/// loss-free rate and the most forwarded, into its row's params `p` and
/// in words.
fn found(
    label: &str,
    both: bool,
    s: &SweepStats,
    p: &mut BTreeMap<String, serde_json::Value>,
) -> String {
    let free = sweep_loss_free(s);
    let best = s
        .levels
        .iter()
        .filter_map(|l| Some((l.level, l.value?)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    p.insert("loss_free_pps".into(), json!(free));
    let per = if both { " per direction" } else { "" };
    let mut w = format!(
        "{label}: loss-free up to {}",
        free.map_or("no level".to_string(), |f| format!(
            "{} pps{per}",
            fmt_pps(f)
        ))
    );
    if let Some((lvl, v)) = best {
        p.insert("most_forwarded_pps".into(), json!(v.round()));
        w.push_str(&format!(
            ", most forwarded {} pps (offered {}{per})",
            fmt_pps(v),
            fmt_pps(lvl)
        ));
    }
    w
}

/// Whether a level was loss-free (and finished).
fn loss_free(l: &SweepLevel) -> bool {
    l.error.is_none() && l.params.get("loss_free") == Some(&json!(true))
}

/// The loss-free rate of a sweep: the highest level that, and every level
/// below it, was loss-free.
fn sweep_loss_free(s: &SweepStats) -> Option<f64> {
    let v: Vec<(f64, bool)> = s.levels.iter().map(|l| (l.level, loss_free(l))).collect();
    sweep::highest_passing(&v)
}

fn unsupported(params: BTreeMap<String, serde_json::Value>, why: String) -> WorkloadResult {
    WorkloadResult {
        name: FORWARD.name.into(),
        what: FORWARD.what.into(),
        status: crate::results::Status::Unsupported,
        message: Some(why),
        params,
        rows: Vec::new(),
        monitor: None,
    }
}

fn row(
    label: &str,
    params: BTreeMap<String, serde_json::Value>,
    r: Result<SweepStats, String>,
) -> WorkloadRow {
    let (sweep, error) = match r {
        Ok(s) => (Some(s), None),
        Err(e) => (None, Some(e)),
    };
    WorkloadRow {
        label: label.into(),
        target: None,
        params,
        load: None,
        phase: None,
        sweep,
        error,
    }
}

/// Removes the test bed a killed run left in its work directory `dir`.
fn release_stale(dir: &Path) -> Vec<String> {
    let tb = dir.join(DIR);
    if !tb.join(crate::testbed::STATE_FILE).exists() {
        return Vec::new();
    }
    match Testbed::open(&tb) {
        Ok(t) => t.down(),
        Err(e) => vec![format!("{e:#}")],
    }
}

fn fmt_pps(x: f64) -> String {
    crate::units::fmt_n(x.round())
}

/// The forward workload's options.
#[derive(Debug, Clone, PartialEq)]
pub struct ForwardOptions {
    /// The share of the packets sent a loss-free level may lose.
    pub loss_tolerance: f64,
    /// Binary-search steps after the sweep's levels (`None`: the size's
    /// default, [`default_search_steps`]).
    pub search_steps: Option<u32>,
}

impl Default for ForwardOptions {
    fn default() -> ForwardOptions {
        ForwardOptions {
            loss_tolerance: LOSS_TOLERANCE,
            search_steps: None,
        }
    }
}

/// `--loss-tolerance`: a percentage, at most 100.
fn loss_tolerance(s: &str) -> Result<f64, String> {
    match crate::values::percent(s) {
        Ok(t) if t > 1.0 => Err("at most 100 %".into()),
        Ok(t) => Ok(t),
        // The range is this option's, not that of percentages in general.
        Err(e) if e.starts_with("must be") => Err(e),
        Err(_) => Err(format!("`{s}`: a percentage from 0 to 100 (`1` or `0.5%`)")),
    }
}

const HEADING: &str = "Forwarding";

/// The flags of the forward workload.
static FLAGS: &[WorkloadFlag] = &[
    WorkloadFlag {
        check: Some(|s| loss_tolerance(s).map(drop)),
        ..WorkloadFlag::value(
            "loss-tolerance",
            "PERCENT",
            HEADING,
            "forward: the share of the packets sent a level may lose and still count as loss-free (default 0, RFC 2544's throughput; at most 100).",
        )
    },
    WorkloadFlag {
        check: Some(|s| search_steps(s).map(drop)),
        ..WorkloadFlag::value(
            "search-steps",
            "N",
            HEADING,
            "forward: levels of RFC 2544's binary search for the loss-free rate after the sweep's levels, each halfway between the highest loss-free and the lowest lossy rate (default 3, `--full` 6; 0: the sweep's levels only).",
        )
    },
];

impl Workload for Forward {
    fn info(&self) -> &'static Info {
        &FORWARD
    }

    fn sweeps(&self) -> &'static [&'static str] {
        &["rate"]
    }

    fn sweeps_by_default(&self) -> bool {
        true
    }

    fn flags(&self) -> &'static [WorkloadFlag] {
        FLAGS
    }

    fn options(&self, asked: &super::Asked) -> Result<Option<super::Own>, super::FlagError> {
        let g = asked.given;
        Ok(Some(std::sync::Arc::new(ForwardOptions {
            loss_tolerance: g
                .parsed("loss-tolerance", loss_tolerance)?
                .unwrap_or(LOSS_TOLERANCE),
            search_steps: g.parsed("search-steps", search_steps)?,
        })))
    }

    fn release_stale(&self, dir: &Path) -> Vec<String> {
        release_stale(dir)
    }

    fn size_words(&self, opts: &WorkloadOptions, _here: Option<&Ctx>) -> Option<String> {
        let plan = plan(opts);
        let steps = opts
            .own::<ForwardOptions>()
            .search_steps
            .unwrap_or_else(|| default_search_steps(opts.size));
        let rates: Vec<String> = plan
            .levels
            .iter()
            .map(|&r| crate::units::fmt_n(r))
            .collect();
        let c = crate::units::fmt_count;
        let search = match steps {
            0 => "no search for the loss-free rate after them".to_string(),
            s => format!(
                "then up to {} for the loss-free rate",
                c(s.into(), "search step", "search steps")
            ),
        };
        Some(format!(
            "{} of {}-byte datagrams a direction ({} packets/s), each {} of {} after {} heat-up; {search}",
            c(plan.levels.len() as u64, "offered rate", "offered rates"),
            PAYLOAD,
            rates.join(", "),
            c(plan.samples.into(), "sample", "samples"),
            humantime::format_duration(plan.sample),
            humantime::format_duration(plan.heat_up),
        ))
    }

    fn run(&self, ctx: &Ctx, opts: &WorkloadOptions, progress: &mut Progress) -> WorkloadResult {
        let own: ForwardOptions = opts.own();
        let mut params = BTreeMap::new();
        let tolerance = own.loss_tolerance;
        params.insert("loss_tolerance_share".into(), json!(tolerance));
        let plan = plan(opts);
        params.insert("rate".into(), json!(plan.levels));
        let steps = own
            .search_steps
            .unwrap_or_else(|| default_search_steps(opts.size));
        params.insert("search_steps".into(), json!(steps));
        params.insert("search_resolution_share".into(), json!(SEARCH_RESOLUTION));
        if let Err(e) = crate::sys::netns::privileged() {
            return unsupported(params, e);
        }
        progress.begin(
            FORWARD.name,
            2 * (plan.planned() + plan.level_time() * steps)
                .as_secs()
                .max(1),
        );
        progress.phase("making the router, source and sink namespaces");
        let mut bed = match Bed::make(&ctx.workdir().join(DIR), &mut params) {
            Ok(b) => b,
            Err(e) => {
                return super::finish(
                    &FORWARD,
                    params,
                    vec![row("setup", BTreeMap::new(), Err(e))],
                    Vec::new(),
                );
            }
        };
        let mut rows = Vec::new();
        let mut words = Vec::new();
        for (label, both) in [("one way", false), ("both ways", true)] {
            if interrupted() {
                break;
            }
            progress.phase(label);
            let mut p = BTreeMap::new();
            p.insert(
                "direction".into(),
                json!(if both {
                    "source → sink and sink → source at once, each at the offered rate"
                } else {
                    "source → sink"
                }),
            );
            let mut runner =
                |l: f64, pl: &sweep::SweepPlan| level(&mut bed, both, tolerance, l, pl);
            let mut s = sweep::run(&plan, progress, &mut runner);
            let searched = sweep::search(
                &plan,
                &mut s,
                progress,
                &mut runner,
                &loss_free,
                steps,
                SEARCH_RESOLUTION,
            );
            p.insert("search_steps_run".into(), json!(searched));
            p.insert("loss_tolerance_share".into(), json!(tolerance));
            words.push(found(label, both, &s, &mut p));
            rows.push(row(label, p, Ok(s)));
        }
        drop(bed);
        progress.finish(&format!("{} rows", rows.len()));
        let mut notes = Vec::new();
        if !words.is_empty() {
            notes.push(format!(
                "{} (loss-free: at most {} % of the packets sent lost, RFC 2544, counted at the receiving end)",
                words.join("; "),
                tolerance * 100.0
            ));
        }
        super::finish(&FORWARD, params, rows, notes)
    }
}

/// `--search-steps`, as both its check and its reading parse it.
fn search_steps(s: &str) -> Result<u32, String> {
    crate::values::whole::<u32>(0, 20)(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn net_dev_parses() {
        let t = "Inter-|   Receive                                                |  Transmit\n face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n    lo:       0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0\nto-sink: 6400 100 0 2 0 0 0 0 12800 200 0 7 0 0 0 0\n";
        let m = parse_net_dev(t);
        assert_eq!(m.len(), 2);
        assert_eq!(
            m["to-sink"],
            Dev {
                rx_packets: 100,
                rx_dropped: 2,
                tx_packets: 200,
                tx_dropped: 7
            }
        );
    }

    #[test]
    fn the_loss_free_rate_stops_at_the_first_lossy_level() {
        let l = |v: &[(f64, bool)]| {
            let mut s = sweep::run(
                &plan(&WorkloadOptions::new(Size::Quick)),
                &mut Progress::new(crate::harness::progress::Mode::Quiet),
                &mut |_: f64, _: &sweep::SweepPlan| LevelOutcome::default(),
            );
            s.levels = v
                .iter()
                .map(|&(level, ok)| SweepLevel {
                    level,
                    value: None,
                    samples: Vec::new(),
                    cpu_busy: None,
                    busy_mhz: None,
                    params: [("loss_free".to_string(), json!(ok))].into(),
                    error: None,
                    failures: BTreeMap::new(),
                })
                .collect();
            s
        };
        let free = |v: &[(f64, bool)]| sweep_loss_free(&l(v));
        assert_eq!(
            free(&[(10.0, true), (50.0, true), (100.0, false)]),
            Some(50.0)
        );
        // Out of order, and loss-free again above a lossy level: not counted.
        assert_eq!(
            free(&[(200.0, true), (100.0, false), (10.0, true)]),
            Some(10.0)
        );
        assert_eq!(free(&[(10.0, false), (50.0, true)]), None);
        assert_eq!(free(&[]), None);
        // A level that did not finish is not loss-free.
        let mut s = l(&[(10.0, true), (50.0, true)]);
        s.levels[1].error = Some("interrupted".into());
        assert_eq!(sweep_loss_free(&s), Some(10.0));
    }

    #[test]
    fn addresses_behind_an_end_are_208_in_its_24() {
        let v = behind(Ipv4Addr::new(198, 18, 2, 2));
        assert_eq!(v.len(), 208);
        assert_eq!(v[0], "198.18.2.16:9".parse().unwrap());
        assert_eq!(v[207], "198.18.2.223:9".parse().unwrap());
    }

    #[test]
    fn sweeps_take_the_given_levels_and_the_sizes_times() {
        let mut o = WorkloadOptions::new(Size::Quick);
        let p = plan(&o);
        assert_eq!(p.levels.len(), 4);
        assert_eq!((p.variable.as_str(), p.baseline), ("rate", 10_000.0));
        assert!(p.counts_failures);
        o.sweep = Some(super::super::SweepOptions {
            variable: "rate".into(),
            levels: vec![20_000.0, 5_000.0],
            heat_up: Some(Duration::from_millis(200)),
            sample: None,
            samples: Some(2),
            baseline: None,
        });
        let p = plan(&o);
        assert_eq!(p.levels, [20_000.0, 5_000.0]);
        assert_eq!((p.baseline, p.samples), (5_000.0, 2));
        assert_eq!(p.sample, Duration::from_millis(500));
        assert!(plan(&WorkloadOptions::new(Size::Full)).levels.len() >= 8);
        // Timings without levels: the size's levels, timed as given.
        o.sweep = Some(super::super::SweepOptions {
            variable: String::new(),
            levels: Vec::new(),
            heat_up: None,
            sample: Some(Duration::from_secs(1)),
            samples: Some(1),
            baseline: None,
        });
        let p = plan(&o);
        assert_eq!(p.levels, plan(&WorkloadOptions::new(Size::Quick)).levels);
        assert_eq!((p.sample, p.samples), (Duration::from_secs(1), 1));
    }
}
