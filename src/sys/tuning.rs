//! The machine's settings and state at the start of a run, as the result
//! file's `system.tuning` records them: defined here, beside the code
//! that reads them on each OS, and re-exported by `results`.

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
