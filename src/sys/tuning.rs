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
}

/// Steal time above which the reports say the machine was busy, in
/// percent of CPU time over the run.
pub const STEAL_WARN_PERCENT: f64 = 5.0;

impl Tuning {
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
