//! What the system did while a series or a workload was measured
//! (`benchmarks[].monitor`, `workloads[].monitor`, schema 8): its counters
//! sampled at a fixed interval, each sample the rates and levels over one
//! interval.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The monitor's record of one series or workload.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Monitor {
    /// The interval asked for between samples, seconds.
    pub interval_s: f64,
    /// Where the counters were read from (`/proc/stat, /proc/meminfo, …`).
    pub source: String,
    /// The counters this system does not give (`cpu.steal`, `memory_dirty`
    /// …): absent from every sample.
    pub unread: Vec<String>,
    /// One sample per interval, in order; the last one may be shorter.
    pub samples: Vec<MonitorSample>,
    /// `perf stat` counters (`run --monitor perf`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perf: Option<PerfCounters>,
}

/// The system over one interval: rates per second of the counters that
/// only grow, levels at the interval's end of the others.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MonitorSample {
    /// Seconds from the monitor's start to the end of the interval.
    pub t: f64,
    /// The interval's length, seconds.
    pub seconds: f64,
    /// Each CPU's time in each state over the interval, percent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpus: Vec<CpuShare>,
    /// Each CPU's clock at the end of the interval, MHz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mhz: Option<Vec<f64>>,
    /// Context switches per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_switches_per_s: Option<f64>,
    /// Interrupts per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupts_per_s: Option<f64>,
    /// Processes (Linux: and threads) started per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forks_per_s: Option<f64>,
    /// Threads runnable at the end of the interval (the monitor's own
    /// reading thread included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_queue: Option<u64>,
    /// Threads waiting for disk I/O at the end of the interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked: Option<u64>,
    /// Free memory at the end of the interval, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_free_bytes: Option<u64>,
    /// Memory caching files at the end of the interval, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_cached_bytes: Option<u64>,
    /// Memory waiting to be written back at the end of the interval, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_dirty_bytes: Option<u64>,
    /// Page faults per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_faults_per_s: Option<f64>,
    /// Page faults that read from disk per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub major_faults_per_s: Option<f64>,
    /// Packets received per second, every interface of the network
    /// namespace the monitor ran in (loopback included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net_rx_packets_per_s: Option<f64>,
    /// Packets sent per second, likewise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net_tx_packets_per_s: Option<f64>,
    /// Receive and send errors per second, likewise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net_errors_per_s: Option<f64>,
    /// Packets dropped per second, likewise (the BSDs: receive drops only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net_dropped_per_s: Option<f64>,
}

/// One CPU's time in each state over an interval, percent of its time.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct CpuShare {
    /// User code (Linux: guest time included).
    pub user: f64,
    /// User code at a lowered priority.
    pub nice: f64,
    /// The kernel.
    pub system: f64,
    /// Hardware interrupts (OpenBSD: spinning on locks too).
    pub irq: f64,
    /// Software interrupts (Linux only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub softirq: Option<f64>,
    /// Idle with I/O outstanding (Linux only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iowait: Option<f64>,
    /// Taken by the hypervisor (Linux only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal: Option<f64>,
    /// Idle.
    pub idle: f64,
}

impl CpuShare {
    /// Percent of the time the CPU was not idle (nor waiting for I/O).
    pub fn busy(&self) -> f64 {
        100.0 - self.idle - self.iowait.unwrap_or(0.0)
    }
}

/// `perf stat` counters over the whole machine (`run --monitor perf`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PerfCounters {
    /// The events asked for.
    pub events: Vec<String>,
    /// The events this machine could not count (`<not supported>`, `<not
    /// counted>`): absent from every sample.
    pub not_counted: Vec<String>,
    /// Why perf gave nothing (not installed, not permitted); `null` when
    /// it ran.
    pub error: Option<String>,
    /// One sample per interval.
    pub samples: Vec<PerfSample>,
}

/// The perf counters over one interval.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PerfSample {
    /// Seconds from perf's start to the end of the interval.
    pub t: f64,
    /// Each counted event per second (`cpu-clock` in milliseconds per
    /// second).
    pub per_s: BTreeMap<String, f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_was_not_read_is_absent_and_reads_back_as_none() {
        let m = Monitor {
            interval_s: 1.0,
            source: "/proc/stat".into(),
            unread: vec!["memory_dirty".into()],
            samples: vec![MonitorSample {
                t: 1.0,
                seconds: 1.0,
                cpus: vec![CpuShare {
                    user: 40.0,
                    idle: 60.0,
                    ..Default::default()
                }],
                context_switches_per_s: Some(12.5),
                ..Default::default()
            }],
            perf: None,
        };
        let text = serde_json::to_string(&m).unwrap();
        for absent in ["memory_dirty_bytes", "\"perf\"", "softirq", "mhz"] {
            assert!(!text.contains(absent), "{absent} in {text}");
        }
        let back: Monitor = serde_json::from_str(&text).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.samples[0].cpus[0].busy(), 40.0);
    }
}
