//! The monitor: while a series or a workload is measured, a thread of its
//! own reads the system's counters ([`sys::counters`]) at a fixed
//! interval (once a second by default), and the readings become one
//! sample per interval — each CPU's time in each state, context switches,
//! interrupts, forks, faults and packets per second, the run queue and
//! memory at the interval's end. With `perf`, `perf stat -a -I` counts
//! events over the whole machine at the same interval, beside it.
//!
//! A curve is explained by what the system did meanwhile: a throughput
//! that falls while the CPUs sit idle points elsewhere than one that falls
//! at 100 % system time.

use super::reaper::ChildGroup;
use results::{CpuShare, Monitor as Record, MonitorSample, PerfCounters, PerfSample};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use sys::counters::{self, Counters, CpuStates};

/// How the monitor runs (`run --monitor`, `--monitor-interval`).
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Between two readings.
    pub interval: Duration,
    /// `perf stat` events to count beside the counters; none: no perf.
    pub perf_events: Vec<String>,
}

/// The events `--monitor perf` counts unless told others: the hardware
/// ones where the machine has counters, and the kernel's own.
pub const PERF_EVENTS: &[&str] = &[
    "cycles",
    "instructions",
    "cache-misses",
    "branch-misses",
    "cpu-clock",
    "context-switches",
    "cpu-migrations",
    "page-faults",
];

impl Default for Settings {
    fn default() -> Self {
        Settings {
            interval: Duration::from_secs(1),
            perf_events: Vec::new(),
        }
    }
}

/// A monitor at work; [`Monitor::finish`] stops it and gives its record.
pub struct Monitor {
    interval: Duration,
    stop: mpsc::Sender<()>,
    thread: std::thread::JoinHandle<Taken>,
    perf: Option<Result<PerfRun, String>>,
}

/// What the reading thread made: the counters its first reading lacked,
/// and the samples, in a file of the work directory (one JSON line each)
/// or, when none could be made there, in memory.
struct Taken {
    unread: Vec<String>,
    samples: Sink,
}

/// Where the samples go as they are made. The thread keeps no more than
/// three readings: a series' leak check counts mappings before and after,
/// and a store that grew with the run would be a new mapping once large.
enum Sink {
    File(PathBuf, std::io::BufWriter<std::fs::File>),
    Memory(Vec<MonitorSample>),
}

impl Sink {
    fn new(path: PathBuf) -> Sink {
        match std::fs::File::create(&path) {
            Ok(f) => Sink::File(path, std::io::BufWriter::with_capacity(16 * 1024, f)),
            Err(_) => Sink::Memory(Vec::new()),
        }
    }

    fn push_all(&mut self, v: Vec<MonitorSample>) {
        for s in v {
            self.push(s);
        }
    }

    fn push(&mut self, s: MonitorSample) {
        use std::io::Write;
        match self {
            Sink::File(_, w) => {
                let _ = serde_json::to_writer(&mut *w, &s);
                let _ = w.write_all(b"\n");
            }
            Sink::Memory(v) => v.push(s),
        }
    }

    /// Every sample pushed, in order; the file is removed.
    fn take(self) -> Vec<MonitorSample> {
        match self {
            Sink::Memory(v) => v,
            Sink::File(path, w) => {
                drop(w);
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                let _ = std::fs::remove_file(&path);
                text.lines()
                    .filter_map(|l| serde_json::from_str(l).ok())
                    .collect()
            }
        }
    }
}

impl Settings {
    /// Whether perf can count these events here, asked before anything is
    /// measured: `perf stat -e EVENTS true` (an event the machine has no
    /// counter for is counted as `<not supported>` and is no error; a name
    /// perf does not know, or no perf at all, is).
    pub fn check_perf(&self) -> Result<(), String> {
        if self.perf_events.is_empty() || !cfg!(target_os = "linux") {
            return Ok(());
        }
        // With the control option the monitor uses: a perf too old for it
        // is refused here, not found out later.
        let out = Command::new("perf")
            .args(["stat", "-a", "-x", ",", "--control=fd:0", "-e"])
            .arg(self.perf_events.join(","))
            .arg("true")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| {
                format!(
                    "--monitor perf: perf did not start: {e} (Debian: `apt-get install linux-perf`)"
                )
            })?;
        if out.status.success() {
            return Ok(());
        }
        let err = String::from_utf8_lossy(&out.stderr);
        let said = err
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or_default()
            .to_string();
        Err(format!(
            "--perf-events {}: perf stat refused them ({})",
            self.perf_events.join(","),
            if said.is_empty() {
                out.status.to_string()
            } else {
                said
            }
        ))
    }
}

/// Tells monitors' sample files apart.
static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Monitor {
    /// Starts reading now; its samples and perf's output go into
    /// `workdir` until [`Monitor::finish`]. Returns once the first reading
    /// is made: the thread's stack and its allocator's memory then exist
    /// before the series counts its mappings, and a series' leak check
    /// sees none of the monitor's.
    pub fn start(settings: &Settings, workdir: &Path) -> Monitor {
        let perf = (!settings.perf_events.is_empty())
            .then(|| PerfRun::start(&settings.perf_events, settings.interval, workdir));
        let interval = settings.interval;
        let seq = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let file = workdir.join(format!("monitor-{}-{seq}.jsonl", std::process::id()));
        let (stop, rx) = mpsc::channel::<()>();
        let (ready, first) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let start = Instant::now();
            // A last interval of a tenth of the interval, or of two clock
            // ticks (10 ms each at Linux's USER_HZ of 100), would show CPU
            // counters that may not have moved at all: it joins the one
            // before.
            let shortest = (interval.as_secs_f64() / 10.0).max(0.02);
            let mut sink = Sink::new(file);
            let mut last: std::collections::VecDeque<(f64, Counters)> = Default::default();
            last.push_back((0.0, counters::read()));
            let mut unread: Vec<String> =
                last[0].1.unread().into_iter().map(String::from).collect();
            unread.sort();
            let _ = ready.send(());
            // On a schedule, so that slow readings do not stretch it.
            let mut next = start + interval;
            let stopped = loop {
                let wait = next.saturating_duration_since(Instant::now());
                let stopped =
                    !matches!(rx.recv_timeout(wait), Err(mpsc::RecvTimeoutError::Timeout));
                let t = start.elapsed().as_secs_f64();
                // A reading late on a busy machine is followed by the next
                // at once: too soon after it, the CPUs' counters may not
                // have moved at all. It waits for the next turn instead.
                let behind = last.back().is_some_and(|(u, _)| t - u < shortest);
                if behind && !stopped {
                    next = Instant::now() + interval;
                    continue;
                }
                last.push_back((t, counters::read()));
                if stopped {
                    break last;
                }
                // The interval before the last one is settled: only the
                // last may yet be too short to stand alone.
                if last.len() == 3 {
                    let (a, b) = (&last[0], &last[1]);
                    sink.push_all(samples(&[a.clone(), b.clone()], shortest));
                    last.pop_front();
                }
                // Late by more than a turn: the schedule starts again from
                // now rather than catching up with readings in a row.
                next = (next + interval).max(Instant::now() + interval / 2);
            };
            let v: Vec<(f64, Counters)> = stopped.into();
            sink.push_all(samples(&v, shortest));
            Taken {
                unread,
                samples: sink,
            }
        });
        let _ = first.recv_timeout(Duration::from_secs(10));
        Monitor {
            interval,
            stop,
            thread,
            perf,
        }
    }

    /// Stops reading and gives the samples.
    pub fn finish(self) -> Record {
        let _ = self.stop.send(());
        let (unread, samples) = match self.thread.join() {
            Ok(t) => (t.unread, t.samples.take()),
            Err(_) => (vec!["cpu".into()], Vec::new()),
        };
        Record {
            interval_s: self.interval.as_secs_f64(),
            source: counters::source().into(),
            unread,
            samples,
            perf: self.perf.map(|p| match p {
                Ok(run) => run.finish(),
                Err(error) => PerfCounters {
                    error: Some(error),
                    ..Default::default()
                },
            }),
        }
    }
}

/// Rounds to two decimals, as every figure of a sample is kept.
fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// One sample per pair of consecutive readings `(t, counters)`; a last
/// interval shorter than `shortest` seconds joins the one before it
/// (its CPU shares would be a tick or two).
pub fn samples(readings: &[(f64, Counters)], shortest: f64) -> Vec<MonitorSample> {
    let mut keep: Vec<&(f64, Counters)> = readings.iter().collect();
    if keep.len() > 2 && keep[keep.len() - 1].0 - keep[keep.len() - 2].0 < shortest {
        keep.remove(keep.len() - 2);
    }
    keep.windows(2).filter_map(|w| sample(w[0], w[1])).collect()
}

/// The sample of the interval between readings `a` and `b`; none for an
/// interval under a millisecond (a workload refused at once), which
/// would be kept as 0 s long.
fn sample((t0, a): &(f64, Counters), (t1, b): &(f64, Counters)) -> Option<MonitorSample> {
    let seconds = t1 - t0;
    if seconds < 0.0005 {
        return None;
    }
    let rate =
        |x: Option<u64>, y: Option<u64>| Some(round2(y?.saturating_sub(x?) as f64 / seconds));
    let net = |f: fn(&counters::NetCounters) -> Option<u64>| {
        rate(a.net.as_ref().and_then(f), b.net.as_ref().and_then(f))
    };
    Some(MonitorSample {
        t: (t1 * 1000.0).round() / 1000.0,
        seconds: (seconds * 1000.0).round() / 1000.0,
        cpus: cpu_shares(a.cpus.as_deref(), b.cpus.as_deref()),
        mhz: b.mhz.clone(),
        context_switches_per_s: rate(a.context_switches, b.context_switches),
        interrupts_per_s: rate(a.interrupts, b.interrupts),
        forks_per_s: rate(a.forks, b.forks),
        run_queue: b.running,
        blocked: b.blocked,
        memory_free_bytes: b.memory_free,
        memory_cached_bytes: b.memory_cached,
        memory_dirty_bytes: b.memory_dirty,
        page_faults_per_s: rate(a.page_faults, b.page_faults),
        major_faults_per_s: rate(a.major_faults, b.major_faults),
        net_rx_packets_per_s: net(|n| Some(n.rx_packets)),
        net_tx_packets_per_s: net(|n| Some(n.tx_packets)),
        net_errors_per_s: net(|n| Some(n.errors)),
        net_dropped_per_s: net(|n| n.dropped),
    })
}

/// Each CPU's share of time in each state between two readings, percent;
/// none when the CPUs came or went, or a CPU's clock did not move.
fn cpu_shares(a: Option<&[CpuStates]>, b: Option<&[CpuStates]>) -> Vec<CpuShare> {
    let (Some(a), Some(b)) = (a, b) else {
        return Vec::new();
    };
    if a.len() != b.len() {
        return Vec::new();
    }
    let shares: Option<Vec<CpuShare>> = a
        .iter()
        .zip(b)
        .map(|(x, y)| {
            let total = y.total().checked_sub(x.total()).filter(|&t| t > 0)? as f64;
            let pct = |p: u64, q: u64| round2(q.saturating_sub(p) as f64 * 100.0 / total);
            let opt = |p: Option<u64>, q: Option<u64>| Some(pct(p?, q?));
            Some(CpuShare {
                user: pct(x.user, y.user),
                nice: pct(x.nice, y.nice),
                system: pct(x.system, y.system),
                irq: pct(x.irq, y.irq),
                softirq: opt(x.softirq, y.softirq),
                iowait: opt(x.iowait, y.iowait),
                steal: opt(x.steal, y.steal),
                idle: pct(x.idle, y.idle),
            })
        })
        .collect();
    shares.unwrap_or_default()
}

/// `perf stat -a -x, -I MS -e EVENTS -o FILE`, in a process group of its
/// own, interrupted at the end.
struct PerfRun {
    group: ChildGroup,
    out: PathBuf,
    err: PathBuf,
    events: Vec<String>,
}

impl PerfRun {
    fn start(events: &[String], interval: Duration, workdir: &Path) -> Result<PerfRun, String> {
        if !cfg!(target_os = "linux") {
            return Err(format!(
                "perf stat is Linux's; {} has no such counters here",
                std::env::consts::OS
            ));
        }
        let id = std::process::id();
        let out = workdir.join(format!("monitor-perf-{id}.csv"));
        // A file: what perf says when it cannot count.
        let err = workdir.join(format!("monitor-perf-{id}.err"));
        let err_file = std::fs::File::create(&err)
            .map_err(|e| format!("perf stat: cannot create {}: {e}", err.display()))?;
        // Two FIFOs to ask perf whether it is counting yet.
        let (ctl, ack) = (
            workdir.join(format!("monitor-perf-{id}.ctl")),
            workdir.join(format!("monitor-perf-{id}.ack")),
        );
        for f in [&ctl, &ack] {
            sys::mkfifo(f).map_err(|e| format!("perf stat: cannot make {}: {e}", f.display()))?;
        }
        let ms = interval.as_millis().clamp(10, u128::from(u32::MAX));
        let group = ChildGroup::spawn(
            Command::new("perf")
                .args(["stat", "-a", "-x", ",", "-I", &ms.to_string(), "-e"])
                .arg(events.join(","))
                .arg("-o")
                .arg(&out)
                .arg(format!(
                    "--control=fifo:{},{}",
                    ctl.display(),
                    ack.display()
                ))
                // No command: it counts until interrupted, or until
                // scalebench dies (the parent-death signal).
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(err_file),
        );
        let mut run = PerfRun {
            group: group.map_err(|e| {
                format!("perf stat did not start: {e} (Debian: `apt-get install linux-perf`)")
            })?,
            out,
            err,
            events: events.to_vec(),
        };
        run.wait_counting(&ctl, &ack);
        for f in [&ctl, &ack] {
            let _ = std::fs::remove_file(f);
        }
        Ok(run)
    }

    /// Waits until perf answers a `ping` on its control FIFO: it is then
    /// counting, and an interrupt makes it write what it counted. A series
    /// shorter than perf's start on a busy machine would otherwise end
    /// before perf counted anything. Bounded: after 10 s, or once perf has
    /// ended, it goes on (what perf said is read at the end).
    fn wait_counting(&mut self, ctl: &Path, ack: &Path) {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let limit = Instant::now() + Duration::from_secs(10);
        let open = |p: &Path, write: bool| {
            std::fs::OpenOptions::new()
                .read(!write)
                .write(write)
                .custom_flags(libc::O_NONBLOCK)
                .open(p)
        };
        // The write end opens once perf holds the read end.
        let mut ctl = loop {
            match open(ctl, true) {
                Ok(f) => break f,
                Err(_) if Instant::now() < limit && self.running() => {
                    std::thread::sleep(Duration::from_millis(2))
                }
                Err(_) => return,
            }
        };
        let Ok(mut ack) = open(ack, false) else {
            return;
        };
        if ctl.write_all(b"ping\n").is_err() {
            return;
        }
        while Instant::now() < limit && self.running() {
            use std::io::Read;
            use std::os::fd::AsRawFd;
            if sys::wait_readable(ack.as_raw_fd(), Duration::from_millis(100)) {
                let mut buf = [0u8; 16];
                if matches!(ack.read(&mut buf), Ok(k) if k > 0) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    }

    /// Whether perf is still running.
    fn running(&mut self) -> bool {
        matches!(self.group.child().try_wait(), Ok(None))
    }

    /// Interrupts perf (it writes its last interval), waits for it and
    /// reads what it counted.
    fn finish(mut self) -> PerfCounters {
        // SAFETY: signalling the perf we started.
        unsafe { libc::kill(self.group.pgid(), libc::SIGINT) };
        let status = self.group.child().wait();
        drop(self.group);
        let text = std::fs::read_to_string(&self.out).unwrap_or_default();
        let err = std::fs::read_to_string(&self.err).unwrap_or_default();
        for f in [&self.out, &self.err] {
            let _ = std::fs::remove_file(f);
        }
        let mut c = parse_perf_stat(&text, &self.events);
        if c.samples.is_empty() && c.not_counted.len() < self.events.len() {
            let said = err
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            c.error = Some(match status {
                Ok(s) => format!("perf stat counted nothing ({s}): {said}"),
                Err(e) => format!("perf stat: {e}"),
            });
        }
        c
    }
}

/// What `perf stat -x, -I` wrote: lines `time,count,unit,event,…`, one
/// per event and interval; `<not supported>` or `<not counted>` for an
/// event the machine could not count. Counts become rates over each
/// interval.
pub fn parse_perf_stat(text: &str, events: &[String]) -> PerfCounters {
    let mut samples: Vec<PerfSample> = Vec::new();
    let mut not_counted: Vec<String> = Vec::new();
    // The end of the interval before the current one.
    let mut before = 0.0;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let (Some(t), Some(count), Some(event)) = (
            f.first().and_then(|t| t.parse::<f64>().ok()),
            f.get(1),
            f.get(3),
        ) else {
            continue;
        };
        match samples.last() {
            Some(s) if s.t == t => {}
            last => {
                before = last.map_or(0.0, |s| s.t);
                samples.push(PerfSample {
                    t,
                    per_s: Default::default(),
                });
            }
        }
        match count.parse::<f64>() {
            Ok(v) if t > before => {
                let s = samples.last_mut().expect("pushed above");
                s.per_s.insert(event.to_string(), round2(v / (t - before)));
            }
            Ok(_) => {}
            Err(_) if !not_counted.iter().any(|e| e == event) => {
                not_counted.push(event.to_string());
            }
            Err(_) => {}
        }
    }
    samples.retain(|s| !s.per_s.is_empty());
    PerfCounters {
        events: events.to_vec(),
        not_counted,
        error: None,
        samples,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(user: u64, idle: u64, ctxt: u64, rx: u64) -> Counters {
        Counters {
            cpus: Some(vec![CpuStates {
                user,
                idle,
                steal: Some(0),
                ..Default::default()
            }]),
            context_switches: Some(ctxt),
            memory_free: Some(ctxt * 10),
            net: Some(counters::NetCounters {
                rx_packets: rx,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn readings_become_rates_and_shares() {
        let r = [
            (0.0, reading(0, 0, 1000, 0)),
            (1.0, reading(30, 70, 3000, 500)),
            (2.0, reading(130, 70, 3500, 500)),
        ];
        let s = samples(&r, 0.1);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].t, s[0].seconds), (1.0, 1.0));
        assert_eq!(s[0].cpus[0].user, 30.0);
        assert_eq!(s[0].cpus[0].idle, 70.0);
        assert_eq!(s[0].cpus[0].busy(), 30.0);
        assert_eq!(s[0].cpus[0].steal, Some(0.0));
        assert_eq!(s[0].cpus[0].iowait, None, "not read: not made up");
        assert_eq!(s[0].context_switches_per_s, Some(2000.0));
        assert_eq!(s[0].net_rx_packets_per_s, Some(500.0));
        assert_eq!(s[0].memory_free_bytes, Some(30_000), "a level at the end");
        assert_eq!(s[1].cpus[0].user, 100.0);
        assert_eq!(s[1].context_switches_per_s, Some(500.0));
        assert_eq!(s[1].interrupts_per_s, None);
    }

    #[test]
    fn a_short_last_interval_joins_the_one_before() {
        let r = [
            (0.0, reading(0, 0, 0, 0)),
            (1.0, reading(50, 50, 100, 0)),
            (1.05, reading(52, 53, 110, 0)),
        ];
        let s = samples(&r, 0.1);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].t, 1.05);
        assert_eq!(s[0].context_switches_per_s, Some(round2(110.0 / 1.05)));
        // Two readings within a millisecond (a workload refused at once):
        // no sample, rather than one 0 s long.
        assert!(samples(&[r[0].clone(), (0.0004, reading(1, 1, 1, 1))], 0.1).is_empty());
        // A CPU added between readings: no shares, the rest still there.
        let mut more = reading(60, 60, 120, 0);
        more.cpus.as_mut().unwrap().push(CpuStates::default());
        let s = samples(&[r[0].clone(), (1.0, more)], 0.1);
        assert!(s[0].cpus.is_empty());
        assert_eq!(s[0].context_switches_per_s, Some(120.0));
    }

    #[test]
    fn perf_stat_intervals_become_rates() {
        let text = "# started on Fri Nov 27 07:00:00 2026

     0.500123,1000,,context-switches,500000000,100.00,,
     0.500123,<not supported>,,cycles,0,100.00,,
     0.500123,250.5,msec,cpu-clock,250500000,100.00,0.5,CPUs utilized
     1.000456,3000,,context-switches,500000000,100.00,,
     1.000456,<not supported>,,cycles,0,100.00,,
     1.000456,400.0,msec,cpu-clock,400000000,100.00,0.8,CPUs utilized
";
        let events: Vec<String> = ["context-switches", "cycles", "cpu-clock"]
            .map(String::from)
            .into();
        let c = parse_perf_stat(text, &events);
        assert_eq!(c.not_counted, ["cycles"]);
        assert_eq!(c.samples.len(), 2);
        assert_eq!(c.samples[0].t, 0.500123);
        assert_eq!(
            c.samples[0].per_s["context-switches"],
            round2(1000.0 / 0.500123)
        );
        assert_eq!(
            c.samples[1].per_s["context-switches"],
            round2(3000.0 / (1.000456 - 0.500123))
        );
        assert!(!c.samples[1].per_s.contains_key("cycles"));
        assert_eq!(c.error, None);
    }

    #[test]
    fn a_monitor_samples_this_system() {
        let dir = tempfile::tempdir().unwrap();
        let settings = Settings {
            interval: Duration::from_millis(50),
            perf_events: Vec::new(),
        };
        let m = Monitor::start(&settings, dir.path());
        // Work until the CPU counters have moved over a few intervals.
        let start = Instant::now();
        let mut x = 0u64;
        while start.elapsed() < Duration::from_millis(400) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let r = m.finish();
        assert!(r.samples.len() >= 3, "{} samples", r.samples.len());
        assert!(r.samples.windows(2).all(|w| w[0].t < w[1].t));
        assert_eq!(r.interval_s, 0.05);
        assert!(r.perf.is_none());
        #[cfg(target_os = "linux")]
        {
            assert!(r.unread.is_empty() || r.unread == ["mhz"], "{:?}", r.unread);
            let busy: f64 = r
                .samples
                .iter()
                .flat_map(|s| &s.cpus)
                .map(CpuShare::busy)
                .sum();
            assert!(busy > 0.0, "a busy loop and no CPU busy: {:?}", r.samples);
            assert!(r.samples.iter().all(|s| s.memory_free_bytes.is_some()));
        }
    }
}
