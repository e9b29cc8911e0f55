//! The machine's settings and state at the start of a run, as the result
//! file's `system.tuning` records them: defined here, beside the code
//! that reads them on each OS, and re-exported by `results`. One field,
//! [`Tuning::steal_percent`], is taken over the whole run instead.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The machine's settings and state at the start of a run; each field
/// absent when this OS does not have it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Tuning {
    /// CPU frequency governor (`performance`); when the CPUs differ, each
    /// as `cpuN=governor`, space separated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub governor: Option<String>,
    /// Whether the CPUs may boost (turbo) above their base clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boost: Option<bool>,
    /// Simultaneous multithreading: `on`, `off`, `forceoff`,
    /// `notsupported`, … as the OS says it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smt: Option<String>,
    /// Whether sibling threads are in use now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smt_active: Option<bool>,
    /// CPU microcode revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub microcode: Option<String>,
    /// CPU vulnerabilities and their mitigations: name → the OS's text.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub mitigations: BTreeMap<String, String>,
    /// The kernel command line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_cmdline: Option<String>,
    /// Transparent huge pages: the selected `enabled` mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thp_enabled: Option<String>,
    /// Transparent huge pages: the selected `defrag` mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thp_defrag: Option<String>,
    /// The kernel's clock source (timecounter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clocksource: Option<String>,
    /// The hypervisor the OS runs under (`kvm`, `xen`, `QEMU Standard PC
    /// (Q35 + ICH9, 2009)`), `none` on bare metal when the OS can tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hypervisor: Option<String>,
    /// The machine's maker and model as firmware says it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
    /// Load average over 1, 5 and 15 minutes at the start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_average: Option<[f64; 3]>,
    /// The busiest other processes at the start, busiest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busiest: Option<Vec<BusyProcess>>,
    /// Further OS-specific settings by sysctl name (`kern.hz`,
    /// `kern.ipc.nmbclusters`, `dev.cpu.0.cx_lowest`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sysctls: BTreeMap<String, String>,
    /// The share of all the CPUs' time the hypervisor stole between the
    /// start and the end of the run, in percent (Linux: the `steal` column
    /// of /proc/stat); not read at the start like the rest, but by the
    /// harness around the run (by `scalebench sysinfo` around its own
    /// 200 ms sample). Absent where the OS has no such counter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_percent: Option<f64>,
    /// The cgroup limits that cap this process (Linux): the tightest of
    /// its cgroup and every ancestor's. `Some` with nothing in it when the
    /// cgroups were read and nothing caps; written to a file only when
    /// something does.
    #[serde(default, skip_serializing_if = "CgroupLimits::nothing_caps")]
    pub cgroup_limits: Option<CgroupLimits>,
    /// The network interfaces that are up, loopback left out: driver,
    /// speed, MTU, rings and offloads where the OS shows them; `Some([])`
    /// when none is up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nics: Option<Vec<Nic>>,
    /// The packet filter's rules as the kernel holds them (absent where
    /// not read, and in files before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firewall: Option<Firewall>,
    /// The security modules that confine programs, and their modes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security: Option<Security>,
    /// How idle CPUs sleep: the cpuidle driver, its governor, its states
    /// and the limits on them (absent where the OS does not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpuidle: Option<super::hardware::CpuIdle>,
}

/// The packet filter's rules, counted where the kernel tells; each part
/// absent where this OS has no such filter or it could not be read
/// (`unreadable` says why).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Firewall {
    /// nftables rules by `family table` (`inet filter`, `ip nat`), as a
    /// netlink dump lists them (Linux; iptables-nft's rules are among
    /// them); empty when there are none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nftables: Option<BTreeMap<String, u64>>,
    /// Legacy iptables (x_tables) tables loaded, `ipv4 filter` → the
    /// kernel's entry count for it: the rules, plus one policy per
    /// built-in chain, two entries per user-defined chain and one end
    /// marker (Linux); empty when none is loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iptables_legacy: Option<BTreeMap<String, u64>>,
    /// pf rules loaded (`pfctl -s rules`; the BSDs and macOS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pf_rules: Option<u64>,
    /// ipfw rules (`ipfw list`; FreeBSD, DragonFly).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipfw_rules: Option<u64>,
    /// Why a part could not be read (`nftables: EPERM`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<String>,
}

impl Firewall {
    /// Rules in all, over every filter read (legacy iptables entries
    /// counted as they are).
    pub fn total(&self) -> u64 {
        let sum =
            |m: &Option<BTreeMap<String, u64>>| m.iter().flatten().map(|(_, v)| v).sum::<u64>();
        sum(&self.nftables)
            + sum(&self.iptables_legacy)
            + self.pf_rules.unwrap_or(0)
            + self.ipfw_rules.unwrap_or(0)
    }
}

impl Firewall {
    /// In words: `nftables 3 rules (inet filter 2, ip nat 1); pf 10
    /// rules`, `no rules`, and what could not be read.
    pub fn words(&self) -> String {
        let per = |m: &BTreeMap<String, u64>| {
            m.iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut v = Vec::new();
        if let Some(m) = self.nftables.as_ref().filter(|m| !m.is_empty()) {
            let n: u64 = m.values().sum();
            v.push(format!("nftables {n} rule{} ({})", plural(n), per(m)));
        }
        if let Some(m) = self.iptables_legacy.as_ref().filter(|m| !m.is_empty()) {
            v.push(format!("iptables legacy entries ({})", per(m)));
        }
        for (name, n) in [("pf", self.pf_rules), ("ipfw", self.ipfw_rules)] {
            if let Some(n) = n.filter(|&n| n > 0) {
                v.push(format!("{name} {n} rule{}", plural(n)));
            }
        }
        if v.is_empty() {
            v.push("no rules".into());
        }
        if !self.unreadable.is_empty() {
            v.push(format!("unreadable: {}", self.unreadable.join(", ")));
        }
        v.join("; ")
    }
}

/// `s` unless there is one.
fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

impl Security {
    /// In words: `SELinux off, AppArmor on: 3 profiles (3 enforce),
    /// modules lockdown,capability,apparmor`.
    pub fn words(&self) -> String {
        let mut v = Vec::new();
        if let Some(s) = &self.selinux {
            v.push(format!("SELinux {s}"));
        }
        if let Some(a) = &self.apparmor {
            v.push(format!("AppArmor {a}"));
        }
        if let Some(l) = &self.securelevel {
            v.push(format!("securelevel {l}"));
        }
        if let Some(m) = &self.lsm {
            v.push(format!("modules {}", m.join(",")));
        }
        if v.is_empty() {
            "unknown".into()
        } else {
            v.join(", ")
        }
    }
}

impl Nic {
    /// Its queues and channels in words (`queues rx 4 tx 4, channels
    /// combined 4 of 8`), where recorded.
    pub fn queue_words(&self) -> Option<String> {
        let mut v = Vec::new();
        if let (Some(r), Some(t)) = (self.rx_queues, self.tx_queues) {
            v.push(format!("queues rx {r} tx {t}"));
        }
        if let Some(c) = &self.channels {
            let parts: Vec<String> = [("rx", c.rx), ("tx", c.tx), ("other", c.other)]
                .into_iter()
                .filter(|&(_, n)| n > 0)
                .map(|(k, n)| format!("{k} {n}"))
                .chain([format!("combined {} of {}", c.combined, c.max_combined)])
                .collect();
            v.push(format!("channels {}", parts.join(" ")));
        }
        (!v.is_empty()).then(|| v.join(", "))
    }
}

/// The security modules that confine programs, as the OS says them.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Security {
    /// The Linux security modules active, in order
    /// (`/sys/kernel/security/lsm`: `lockdown,capability,apparmor`), where
    /// securityfs is mounted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lsm: Option<Vec<String>>,
    /// SELinux: `enforcing`, `permissive` or `off`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selinux: Option<String>,
    /// AppArmor: `off`, `on`, or `on: 40 profiles (38 enforce, 2
    /// complain)` where its profiles can be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apparmor: Option<String>,
    /// The BSDs' kernel security level (`kern.securelevel`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub securelevel: Option<String>,
}

/// A network interface's channels (queue pairs and interrupt vectors) as
/// `ethtool -l` shows them.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Channels {
    /// Receive-only channels.
    pub rx: u32,
    /// Transmit-only channels.
    pub tx: u32,
    /// Other channels (link interrupts).
    pub other: u32,
    /// Combined receive and transmit channels.
    pub combined: u32,
    /// Most combined channels the device allows.
    pub max_combined: u32,
}

/// Steal time above which the reports say the machine was busy, in
/// percent of CPU time over the run.
pub const STEAL_WARN_PERCENT: f64 = 5.0;

impl Tuning {
    /// Whether the readings were taken (its kernel command line or load
    /// average is there): a reading then absent was not exposed by the
    /// OS, where an older record without them says nothing either way.
    pub fn readings_recorded(&self) -> bool {
        self.kernel_cmdline.is_some() || self.load_average.is_some()
    }

    /// The warning the reports print when the hypervisor stole more than
    /// [`STEAL_WARN_PERCENT`] of the CPU time during the run.
    pub fn busy_warning(&self) -> Option<String> {
        let p = self.steal_percent.filter(|&p| p > STEAL_WARN_PERCENT)?;
        Some(format!(
            "the machine was busy: {p:.1} % of CPU time stolen by the hypervisor during the run"
        ))
    }
}

/// Limits a cgroup puts on this process and its children; each absent
/// when nothing caps it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CgroupLimits {
    /// Most processes (`pids.max`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pids: Option<u64>,
    /// CPUs' worth of time per period: quota over period (v2 `cpu.max`,
    /// v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`); 0.5 is half a CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<f64>,
    /// Most memory, bytes (v2 the lower of `memory.max` and
    /// `memory.high`, v1 `memory.limit_in_bytes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
}

impl CgroupLimits {
    /// Whether no limit is known (`None`, or nothing in it).
    pub fn nothing_caps(l: &Option<CgroupLimits>) -> bool {
        l.as_ref().is_none_or(|l| *l == CgroupLimits::default())
    }
}

/// A network interface that is up.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Nic {
    /// Interface name (`eth0`, `em0`).
    pub name: String,
    /// Its driver (`virtio_net`, `ixgbe`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// Link speed, Mbit/s, when the driver says it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_mbps: Option<u64>,
    /// Largest packet, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u64>,
    /// Receive ring size, descriptors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx_ring: Option<u32>,
    /// Transmit ring size, descriptors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tx_ring: Option<u32>,
    /// Receive queues the OS set up (Linux: `queues/rx-*` in sysfs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx_queues: Option<u32>,
    /// Transmit queues the OS set up (Linux: `queues/tx-*`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tx_queues: Option<u32>,
    /// Its channels, where the driver tells (`ETHTOOL_GCHANNELS`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channels: Option<Channels>,
    /// Offloads on (true) or off; those the OS does not tell are absent.
    #[serde(default, skip_serializing_if = "Offloads::is_empty")]
    pub offloads: Offloads,
}

/// Which offloads of a network interface are on.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Offloads {
    /// TCP segmentation offload (`tcp-segmentation-offload`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tso: Option<bool>,
    /// Generic segmentation offload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gso: Option<bool>,
    /// Generic receive offload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gro: Option<bool>,
    /// Large receive offload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lro: Option<bool>,
    /// Scatter-gather.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sg: Option<bool>,
    /// Receive checksumming.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx_checksum: Option<bool>,
    /// Transmit checksumming.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tx_checksum: Option<bool>,
}

impl Offloads {
    /// Whether none is known.
    pub fn is_empty(&self) -> bool {
        *self == Offloads::default()
    }

    /// Each known offload as (`tso`, on), in a fixed order.
    pub fn known(&self) -> Vec<(&'static str, bool)> {
        [
            ("tso", self.tso),
            ("gso", self.gso),
            ("gro", self.gro),
            ("lro", self.lro),
            ("sg", self.sg),
            ("rx_checksum", self.rx_checksum),
            ("tx_checksum", self.tx_checksum),
        ]
        .into_iter()
        .filter_map(|(k, v)| Some((k, v?)))
        .collect()
    }
}

/// A process and its share of one CPU over a short sample.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct BusyProcess {
    /// Process id.
    pub pid: u32,
    /// Command name.
    pub name: String,
    /// CPU time over wall time, in percent of one CPU.
    pub percent: f64,
}
