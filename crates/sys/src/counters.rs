//! The system's running counters as the monitor reads them once a second
//! during every series and workload: time in each CPU state per CPU,
//! context switches, interrupts, processes started, the run queue, free,
//! cached and dirty memory, page faults, and the packets and errors of
//! every network interface.
//!
//! Linux reads them from /proc (`stat`, `meminfo`, `vmstat`, `net/dev`);
//! the BSDs and macOS from sysctl, Mach and `getifaddrs(3)` (`bsd.rs`).
//! Each counter this system does not give is `None`, and [`Counters::unread`]
//! names them, so a result says what could not be read instead of leaving
//! it out.

/// Time one CPU has spent in each state so far, in the OS's ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuStates {
    /// Running user code (Linux: guest time included).
    pub user: u64,
    /// Running user code at a lowered priority.
    pub nice: u64,
    /// Running the kernel for a process.
    pub system: u64,
    /// Serving hardware interrupts (OpenBSD: spinning on a lock is added
    /// here, as it has no better place; macOS has no such state: 0).
    pub irq: u64,
    /// Serving software interrupts (Linux only: networking's receive path
    /// runs here).
    pub softirq: Option<u64>,
    /// Idle with I/O outstanding (Linux only).
    pub iowait: Option<u64>,
    /// Wanted to run while the hypervisor ran something else (Linux only).
    pub steal: Option<u64>,
    /// Idle.
    pub idle: u64,
}

impl CpuStates {
    /// Every state's time added up.
    pub fn total(&self) -> u64 {
        [
            self.user,
            self.nice,
            self.system,
            self.irq,
            self.softirq.unwrap_or(0),
            self.iowait.unwrap_or(0),
            self.steal.unwrap_or(0),
            self.idle,
        ]
        .iter()
        .fold(0u64, |t, &x| t.saturating_add(x))
    }

    /// Busy, total and stolen time ([`super::CpuTicks`]): busy is all
    /// but idle and iowait.
    pub fn ticks(&self) -> super::CpuTicks {
        let total = self.total();
        let idle = self.idle.saturating_add(self.iowait.unwrap_or(0));
        super::CpuTicks {
            busy: total.saturating_sub(idle),
            total,
            steal: self.steal,
        }
    }
}

/// Packets and errors of every network interface of this network
/// namespace (loopback included), added up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NetCounters {
    /// Packets received.
    pub rx_packets: u64,
    /// Packets sent.
    pub tx_packets: u64,
    /// Receive and send errors.
    pub errors: u64,
    /// Packets dropped on receive and on send (`None` where the system
    /// counts no drops per interface).
    pub dropped: Option<u64>,
}

/// One reading of the system's counters; `None` for what this system does
/// not give (or gave nothing this time).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counters {
    /// The time spent in each state by each CPU.
    pub cpus: Option<Vec<CpuStates>>,
    /// The current clock of each CPU in MHz.
    pub mhz: Option<Vec<f64>>,
    /// Context switches so far.
    pub context_switches: Option<u64>,
    /// Interrupts served so far.
    pub interrupts: Option<u64>,
    /// Processes (and threads, on Linux) started so far.
    pub forks: Option<u64>,
    /// Threads runnable now (the run queue, the reading one included).
    pub running: Option<u64>,
    /// Threads waiting for disk I/O now.
    pub blocked: Option<u64>,
    /// Free memory, bytes.
    pub memory_free: Option<u64>,
    /// Memory caching files, bytes.
    pub memory_cached: Option<u64>,
    /// Memory waiting to be written back to disk, bytes.
    pub memory_dirty: Option<u64>,
    /// Page faults so far.
    pub page_faults: Option<u64>,
    /// Page faults that read from disk so far.
    pub major_faults: Option<u64>,
    /// The network interfaces' packets and errors so far.
    pub net: Option<NetCounters>,
}

impl Counters {
    /// The names (as the result file spells them) of the counters this
    /// reading lacks.
    pub fn unread(&self) -> Vec<&'static str> {
        let cpu = self.cpus.as_deref().and_then(|c| c.first());
        [
            ("cpu", self.cpus.is_none()),
            ("cpu.softirq", cpu.is_some_and(|c| c.softirq.is_none())),
            ("cpu.iowait", cpu.is_some_and(|c| c.iowait.is_none())),
            ("cpu.steal", cpu.is_some_and(|c| c.steal.is_none())),
            ("mhz", self.mhz.is_none()),
            ("context_switches", self.context_switches.is_none()),
            ("interrupts", self.interrupts.is_none()),
            ("forks", self.forks.is_none()),
            ("run_queue", self.running.is_none()),
            ("blocked", self.blocked.is_none()),
            ("memory_free", self.memory_free.is_none()),
            ("memory_cached", self.memory_cached.is_none()),
            ("memory_dirty", self.memory_dirty.is_none()),
            ("page_faults", self.page_faults.is_none()),
            ("major_faults", self.major_faults.is_none()),
            ("net", self.net.is_none()),
            ("net.dropped", self.net.is_some_and(|n| n.dropped.is_none())),
        ]
        .into_iter()
        .filter_map(|(name, lacking)| lacking.then_some(name))
        .collect()
    }
}

/// Where [`read`] takes the counters from on this system, in words.
pub fn source() -> &'static str {
    if cfg!(any(target_os = "linux", target_os = "android")) {
        "/proc/stat, /proc/meminfo, /proc/vmstat, /proc/net/dev"
    } else if cfg!(any(target_os = "freebsd", target_os = "dragonfly")) {
        "sysctl kern.cp_times / kern.cputime, vm.stats, vm.vmtotal; getifaddrs"
    } else if cfg!(target_vendor = "apple") {
        "host_processor_info, host_statistics64; getifaddrs"
    } else {
        "sysctl kern.cp_time / KERN_CPUSTATS; getifaddrs"
    }
}

/// Reads the system's counters now.
pub fn read() -> Counters {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        read_proc()
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        super::bsd::counters()
    }
}

/// Linux: /proc/stat, /proc/meminfo, /proc/vmstat and /proc/net/dev.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn read_proc() -> Counters {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    let mut c = Counters::default();
    if let Some(stat) = read("/proc/stat") {
        proc_stat(&stat, &mut c);
    }
    c.mhz = super::cpu_clocks_mhz();
    if let Some(m) = read("/proc/meminfo") {
        let kb = |key: &str| field(&m, key, ':').map(|v| v.saturating_mul(1024));
        c.memory_free = kb("MemFree");
        c.memory_cached = kb("Cached");
        c.memory_dirty = kb("Dirty");
    }
    if let Some(v) = read("/proc/vmstat") {
        c.page_faults = field(&v, "pgfault", ' ');
        c.major_faults = field(&v, "pgmajfault", ' ');
    }
    c.net = read("/proc/net/dev").and_then(|d| proc_net_dev(&d));
    c
}

/// The first number after `key` and `sep` at the start of a line.
#[cfg(any(test, target_os = "linux", target_os = "android"))]
fn field(text: &str, key: &str, sep: char) -> Option<u64> {
    text.lines().find_map(|l| {
        let rest = l.strip_prefix(key)?.strip_prefix(sep)?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

/// The CPU lines (`cpuN user nice system idle iowait irq softirq steal
/// …`), `ctxt`, `intr` (its first number is the total), `processes`,
/// `procs_running` and `procs_blocked` of /proc/stat into `c`.
#[cfg(any(test, target_os = "linux", target_os = "android"))]
fn proc_stat(stat: &str, c: &mut Counters) {
    let cpus = proc_stat_cpus(stat);
    c.cpus = (!cpus.is_empty()).then_some(cpus);
    c.context_switches = field(stat, "ctxt", ' ');
    c.interrupts = field(stat, "intr", ' ');
    c.forks = field(stat, "processes", ' ');
    c.running = field(stat, "procs_running", ' ');
    c.blocked = field(stat, "procs_blocked", ' ');
}

/// Each CPU's states from the `cpuN` lines of /proc/stat (`cpu0 user nice
/// system idle iowait irq softirq steal guest guest_nice`; guest time is
/// already in user, so it is not added again); a line of fewer than four
/// numbers is left out, and what an older kernel's line stops before is
/// `None`.
#[cfg(any(test, target_os = "linux", target_os = "android"))]
pub(crate) fn proc_stat_cpus(stat: &str) -> Vec<CpuStates> {
    stat.lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .filter_map(|l| {
            let f: Vec<u64> = l
                .split_whitespace()
                .skip(1)
                .map_while(|x| x.parse().ok())
                .collect();
            let at = |i: usize| f.get(i).copied();
            Some(CpuStates {
                user: at(0)?,
                nice: at(1)?,
                system: at(2)?,
                idle: at(3)?,
                iowait: at(4),
                irq: at(5).unwrap_or(0),
                softirq: at(6),
                steal: at(7),
            })
        })
        .collect()
}

/// Every interface's packets, errors and drops in /proc/net/dev, added up
/// (`name: rx_bytes rx_packets rx_errs rx_drop … tx_bytes tx_packets
/// tx_errs tx_drop …`).
#[cfg(any(test, target_os = "linux", target_os = "android"))]
fn proc_net_dev(dev: &str) -> Option<NetCounters> {
    let mut sum = NetCounters {
        dropped: Some(0),
        ..NetCounters::default()
    };
    let mut any = false;
    for line in dev.lines() {
        let Some((_, numbers)) = line.split_once(':') else {
            continue;
        };
        let f: Vec<u64> = numbers
            .split_whitespace()
            .map_while(|x| x.parse().ok())
            .collect();
        if f.len() < 12 {
            continue;
        }
        any = true;
        sum.rx_packets += f[1];
        sum.tx_packets += f[9];
        sum.errors += f[2] + f[10];
        sum.dropped = sum.dropped.map(|d| d + f[3] + f[11]);
    }
    any.then_some(sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  300 20 100 1000 50 7 9 4 0 0
cpu0 200 10 60 400 30 5 6 3 0 0
cpu1 100 10 40 600 20 2 3 1 0 0
intr 123456 0 9 0
ctxt 98765
btime 1700000000
processes 4321
procs_running 3
procs_blocked 1
softirq 555 0 1
";

    #[test]
    fn proc_stat_gives_every_cpu_state_and_the_totals() {
        let mut c = Counters::default();
        proc_stat(STAT, &mut c);
        let cpus = c.cpus.unwrap();
        assert_eq!(cpus.len(), 2, "the summary line is not a CPU");
        assert_eq!(
            cpus[0],
            CpuStates {
                user: 200,
                nice: 10,
                system: 60,
                irq: 5,
                softirq: Some(6),
                iowait: Some(30),
                steal: Some(3),
                idle: 400,
            }
        );
        assert_eq!(cpus[1].total(), 100 + 10 + 40 + 600 + 20 + 2 + 3 + 1);
        assert_eq!(c.interrupts, Some(123_456));
        assert_eq!(c.context_switches, Some(98_765));
        assert_eq!(c.forks, Some(4321));
        assert_eq!(c.running, Some(3));
        assert_eq!(c.blocked, Some(1));
    }

    #[test]
    fn an_old_kernel_without_steal_says_so() {
        let mut c = Counters::default();
        proc_stat("cpu0 1 2 3 4 5\n", &mut c);
        let cpu = c.cpus.as_ref().unwrap()[0];
        assert_eq!((cpu.iowait, cpu.irq, cpu.steal), (Some(5), 0, None));
        let unread = c.unread();
        for name in ["cpu.steal", "cpu.softirq", "context_switches", "net"] {
            assert!(unread.contains(&name), "{name} not in {unread:?}");
        }
        assert!(!unread.contains(&"cpu"));
        assert!(!unread.contains(&"cpu.iowait"));
    }

    #[test]
    fn net_dev_adds_every_interface_up() {
        let dev = "Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 1000      10    0    0    0     0          0         0     1000      10    0    0    0     0       0          0
  eth0: 5000      40    1    2    0     0          0         0     3000      30    3    4    0     0       0          0
";
        assert_eq!(
            proc_net_dev(dev),
            Some(NetCounters {
                rx_packets: 50,
                tx_packets: 40,
                errors: 4,
                dropped: Some(6),
            })
        );
        assert_eq!(proc_net_dev("Inter-|\n face |\n"), None);
    }

    #[test]
    fn fields_are_found_at_the_start_of_a_line_only() {
        let m = "MemTotal:  100 kB\nMemFree:   42 kB\nSwapCached: 7 kB\nCached: 9 kB\n";
        assert_eq!(field(m, "MemFree", ':'), Some(42));
        assert_eq!(field(m, "Cached", ':'), Some(9));
        assert_eq!(
            field("pgfault 12\npgmajfault 3\n", "pgfault", ' '),
            Some(12)
        );
        assert_eq!(field("x 1\n", "pgfault", ' '), None);
    }

    #[test]
    fn this_system_gives_cpu_states_and_they_grow() {
        let a = read();
        let n = a.cpus.as_ref().map_or(0, Vec::len);
        assert!(n > 0, "no CPU states read: {a:?}");
        // Spin until the first CPU's clock moves on (ticks are 10 ms).
        let start = std::time::Instant::now();
        let moved = loop {
            let b = read();
            let t = |c: &Counters| {
                c.cpus
                    .as_ref()
                    .map(|v| v.iter().map(CpuStates::total).sum::<u64>())
            };
            if t(&b) > t(&a) {
                break true;
            }
            if start.elapsed() > std::time::Duration::from_secs(10) {
                break false;
            }
        };
        assert!(moved, "the CPU counters did not move in 10 s");
        #[cfg(target_os = "linux")]
        assert!(
            a.unread().is_empty() || a.unread() == ["mhz"],
            "Linux gives every counter: {:?}",
            a.unread()
        );
    }
}
