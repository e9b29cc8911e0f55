//! The result file: one JSON document per `run`, schema version
//! [`SCHEMA_VERSION`], documented field by field in
//! `docs/results-format.md`. It is a public interface: change it only
//! together with that document and the version number.

#![deny(missing_docs)]

mod figure;
pub mod found;
mod monitor;
pub mod output;
mod sizes;
mod store;
pub mod sysinfo;

pub use monitor::{CpuShare, Monitor, MonitorSample, PerfCounters, PerfSample};
pub use sizes::size_changes_in_words;
pub use store::{LoadError, load, parse, write_atomic};

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The timer a run uses, as chosen on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimerKind {
    /// clock_gettime(CLOCK_MONOTONIC).
    #[default]
    Monotonic,
    /// rdtsc (x86_64 only), calibrated against CLOCK_MONOTONIC.
    Tsc,
}

/// Measured cost of reading the clock twice back to back.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Overhead {
    /// Smallest back-to-back difference, ns.
    pub min_ns: f64,
    /// Median back-to-back difference, ns.
    pub median_ns: f64,
}

/// Value of the `schema` field.
pub const SCHEMA_NAME: &str = "scalebench-result";
/// The schema version this scalebench writes. It reads this one and every
/// older one (version 1 files have no `workloads`; version 2 rows have no
/// `target` or `phase`; version 3 benchmarks have no `profile`; version 4
/// rows have no `sweep`; version 5 files have no `hosts`; version 6 systems
/// have no `virtualization` or `kernel_config`; version 7 benchmarks and
/// workloads have no `monitor`, and files no `suites`).
pub const SCHEMA_VERSION: u32 = 8;

/// A whole result file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ResultFile {
    /// Always [`SCHEMA_NAME`].
    pub schema: String,
    /// Always [`SCHEMA_VERSION`] when written by this version.
    pub schema_version: u32,
    /// Which program wrote the file.
    pub tool: Tool,
    /// The command line of the run, argv as given.
    pub command_line: Vec<String>,
    /// Name of the system (or tuning) in reports; the host name by default.
    pub label: String,
    /// Start of the run, RFC 3339 UTC.
    pub started: String,
    /// End of the run, RFC 3339 UTC; `null` while it runs or if interrupted.
    pub finished: Option<String>,
    /// `true` once every selected benchmark was attempted.
    pub complete: bool,
    /// The machine and OS.
    pub system: SystemInfo,
    /// The timer used for every sample.
    pub timer: TimerInfo,
    /// One entry per benchmark series, in run order.
    pub benchmarks: Vec<BenchResult>,
    /// One entry per real-world workload, in run order (schema 2).
    #[serde(default)]
    pub workloads: Vec<WorkloadResult>,
    /// The tuning profile the run was made under (`run --profile`), with
    /// what it changed; absent when none was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<TuningRecord>,
    /// The client and server hosts when the run had any apart from this
    /// machine (`run --host`; schema 6); absent when both were here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostRecord>,
    /// The suites the run named, in order, each with its text as read
    /// (schema 8; absent when it named none: benchmarks and workloads
    /// only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suites: Vec<SuiteRecord>,
}

/// A suite a run named (`suites[]`): a built-in one or a file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SuiteRecord {
    /// Its name (`quick`, `nightly`).
    pub name: String,
    /// `built-in`, or the file's path as given.
    pub origin: String,
    /// The file's text, as read when the run began.
    pub text: String,
}

/// A host of a run (`run --host ROLE=WHERE`): how it was reached and what
/// it is. The client is where scalebench ran; its system is the file's
/// `system`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct HostRecord {
    /// `client` or `server`.
    pub role: String,
    /// `local`, `netns:NAME` or `ssh:[USER@]HOST[:PORT]`.
    pub reach: String,
    /// The addresses the client reached it at (for the client: its own
    /// address towards the server).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<String>,
    /// Which scalebench ran there: this binary, the same build found on
    /// the host's PATH, another build of a compatible agent protocol
    /// there (on its PATH or named by `bin=`), or a copy (and where).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary: Option<String>,
    /// The hello of the scalebench that ran there (`scalebench __hello`:
    /// `scalebench-agent PROTOCOL version=… os=… arch=… libc=… link=…
    /// build=…`), saying which build it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The host's system record (`scalebench sysinfo` there); absent for
    /// the client (the file's `system`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<SystemInfo>,
    /// What was removed from the host at the end, or left and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cleanup: Vec<String>,
}

impl HostRecord {
    /// One line for reports: `server ssh:root@b at 198.18.2.2: Linux 6.18
    /// on AMD EPYC (2 CPUs), host b`.
    pub fn summary(&self) -> String {
        let mut s = format!("{} {}", self.role, self.reach);
        if !self.addresses.is_empty() {
            s.push_str(&format!(" at {}", self.addresses.join(", ")));
        }
        match &self.system {
            Some(sys) => s.push_str(&format!(
                ": {} {} on {} ({} CPUs), host {}",
                sys.os,
                sys.os_release,
                sys.cpu.model.as_deref().unwrap_or("unknown CPU"),
                sys.cpu.count,
                sys.hostname
            )),
            None if self.role == "client" => s.push_str(": scalebench ran and measured here"),
            None => {}
        }
        s
    }
}

/// A tuning profile as applied for a run: every setting it names for this
/// OS, with the value before and after.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TuningRecord {
    /// The profile's name (`default`, `dragonfly-linux`, …).
    pub name: String,
    /// What it is for, in words.
    pub description: String,
    /// `built-in`, or the path of the profile file.
    pub origin: String,
    /// `true` when some setting could not be applied: the run measured
    /// the system without it.
    pub partial: bool,
    /// Each setting for this OS, in the profile's order.
    pub changes: Vec<ProfileChange>,
    /// The other systems the profile has settings for (a FreeBSD profile
    /// run on Linux changes nothing here).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub elsewhere: Vec<String>,
}

impl TuningRecord {
    /// The record in lines: `kind name = wanted: status (old → new) —
    /// reason`; `dry` for a check's record (`would change`).
    pub fn lines(&self, dry: bool) -> Vec<String> {
        self.changes
            .iter()
            .map(|c| {
                if c.kind == "note" {
                    return format!("note: {}", c.name);
                }
                let value = match (&c.old, &c.new, c.status) {
                    (Some(o), Some(n), ChangeStatus::Applied) => format!("{o} → {n}"),
                    (Some(o), _, _) => o.clone(),
                    (None, Some(n), _) => format!("→ {n}"),
                    (None, None, _) => String::new(),
                };
                let status = match c.status {
                    ChangeStatus::Applied if dry => "would change",
                    ChangeStatus::Applied => "applied",
                    ChangeStatus::Unchanged => "already so",
                    ChangeStatus::Refused if dry => "would be refused",
                    ChangeStatus::Refused => "refused",
                    ChangeStatus::Recorded => "recorded",
                };
                let wanted = if c.wanted.is_empty() || c.kind == "boot" {
                    String::new()
                } else {
                    format!(" = {}", c.wanted)
                };
                format!(
                    "{} {}{wanted}: {status}{}{}",
                    c.kind,
                    c.name,
                    if value.is_empty() {
                        String::new()
                    } else {
                        format!(" ({value})")
                    },
                    c.reason
                        .as_ref()
                        .map_or(String::new(), |r| format!(" — {r}"))
                )
            })
            .collect()
    }
}

/// One setting of a profile and what became of it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProfileChange {
    /// `sysctl`, `limit`, `setting`, `mount`, `tunefs`, `boot` or `note`.
    pub kind: String,
    /// The sysctl, limit or setting (`net.core.somaxconn`, `RLIMIT_NOFILE`).
    pub name: String,
    /// What the profile asks for (`65535`, `>=4096`).
    pub wanted: String,
    /// The value before.
    pub old: Option<String>,
    /// The value during the run.
    pub new: Option<String>,
    /// What became of it.
    pub status: ChangeStatus,
    /// Why it was refused or only recorded, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What became of one setting of a profile.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ChangeStatus {
    /// Changed for the run, and restored after it.
    Applied,
    /// Already as asked: left alone.
    Unchanged,
    /// Could not be applied (`reason` says why): the run is partial.
    Refused,
    /// Never applied: it needs a reboot, a kernel build or a step by hand
    /// (`reason`), or is a note.
    Recorded,
}

/// A real-world workload (static web serving, …): rows of throughput and
/// latency, one per configuration.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WorkloadResult {
    /// Workload name as in `scalebench list` (`http-ipstack`).
    pub name: String,
    /// What it does, in words.
    pub what: String,
    /// How it ended (`ok`, `failed`, `unsupported`, `interrupted`).
    pub status: Status,
    /// Why it failed or is unsupported.
    pub message: Option<String>,
    /// Its parameters (file sizes, fetches, connections, …).
    pub params: BTreeMap<String, serde_json::Value>,
    /// One row per configuration measured.
    pub rows: Vec<WorkloadRow>,
    /// What the system did while the workload ran (schema 8; absent with
    /// `run --monitor off`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monitor: Option<Monitor>,
}

/// One configuration of a workload and what the load generator measured.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WorkloadRow {
    /// The configuration in words (`4 processes, IPv6`; for the
    /// filesystem workloads the phase: `unpack`, `replay cold, 1 process`).
    pub label: String,
    /// Where the row ran when a workload runs on several targets: the
    /// filesystem (`ext4`, `ext4 noatime`, `dir /srv`). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The configuration's parameters.
    pub params: BTreeMap<String, serde_json::Value>,
    /// What the load generator measured; `null` when the row could not run
    /// or had no HTTP load.
    pub load: Option<LoadStats>,
    /// A timed phase: duration, work done and throughput over time. Absent
    /// for rows that are not phases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<PhaseStats>,
    /// A sweep: the row's figure measured at a list of levels (clients,
    /// connections, database size …). Absent for rows that are not sweeps
    /// (schema 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepStats>,
    /// Why the row could not run.
    pub error: Option<String>,
}

/// Throughput against a level (clients, connections, size): each level a
/// heat-up, then samples of fixed length; every sample kept.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SweepStats {
    /// What the levels count (`connections`, `clients`, `size/memory`).
    pub variable: String,
    /// The unit of the figure (`req/s`, `TPS`).
    pub unit: String,
    /// The level per-unit efficiency is normalised to.
    pub baseline: f64,
    /// What the knee is judged on: `per-unit` (the figure per level unit,
    /// as for clients or connections; the default) or `figure` (the figure
    /// itself, as for database size against memory).
    #[serde(default = "per_unit", skip_serializing_if = "is_per_unit")]
    pub knee_on: String,
    /// Heat-up before each level's samples, seconds (not measured).
    pub heat_up_s: f64,
    /// Length of one sample, seconds.
    pub sample_s: f64,
    /// Samples asked for per level.
    pub samples: u32,
    /// How many of the last samples make a level's figure (their mean).
    pub figure_of_last: u32,
    /// Logical CPUs (the per-CPU normalisation of the reports).
    pub cpus: usize,
    /// The workload counts failed calls by call and errno (`levels[].failures`):
    /// none counted means none failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub counts_failures: bool,
    /// One entry per level, in the order run.
    pub levels: Vec<SweepLevel>,
}

fn per_unit() -> String {
    "per-unit".into()
}

fn is_per_unit(s: &str) -> bool {
    s == "per-unit"
}

/// One level of a sweep.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SweepLevel {
    /// The level (clients, connections, or a ratio such as size/memory).
    pub level: f64,
    /// The level's figure: the mean of the last `figure_of_last` samples
    /// (fewer when fewer finished); `null` when none did.
    pub value: Option<f64>,
    /// Every sample, in order.
    pub samples: Vec<SweepSample>,
    /// Share (0–1) of all CPUs' time that was busy during the samples,
    /// where the OS tells.
    pub cpu_busy: Option<f64>,
    /// Mean clock of the busy CPUs during the samples, MHz (each CPU's
    /// clock weighted by its busy time), where the OS tells.
    pub busy_mhz: Option<f64>,
    /// The level's own parameters (database size, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, serde_json::Value>,
    /// Why the level did not finish (then its samples are those that did).
    pub error: Option<String>,
    /// Failed calls and refusals during the level, by what failed (`bind
    /// EADDRINUSE`, `reply 421 to MAIL`, `timeout waiting for …`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub failures: BTreeMap<String, u64>,
}

impl SweepLevel {
    /// Whether the level failed: it did not finish (no figure, or an
    /// error), or nothing succeeded in it and something failed (a figure
    /// of 0 with failed calls or requests).
    pub fn failed(&self) -> bool {
        match self.value {
            None => true,
            Some(_) if self.error.is_some() => true,
            Some(v) => {
                v == 0.0 && (!self.failures.is_empty() || self.samples.iter().any(|s| s.errors > 0))
            }
        }
    }
}

/// One sample of a sweep level.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SweepSample {
    /// End of the sample, seconds from the start of the level's samples.
    pub t: f64,
    /// Its length, seconds.
    pub seconds: f64,
    /// The figure over the sample (requests or transactions per second).
    pub value: f64,
    /// Latency percentiles over the sample, ns, where measured per request.
    pub latency_ns: Option<LatencyStats>,
    /// Mean latency, ns, where only the mean is known.
    pub mean_latency_ns: Option<f64>,
    /// Failed requests or transactions in the sample.
    pub errors: u64,
}

/// One timed phase of a workload (unpacking, replaying, deleting, …).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PhaseStats {
    /// What `items` counts: `files`, `requests`, `entries`.
    pub unit: String,
    /// Wall-clock time of the phase, without a final sync.
    pub seconds: f64,
    /// Items done.
    pub items: u64,
    /// Bytes written, read or served.
    pub bytes: u64,
    /// Time of the sync that followed the phase (the data reaching the
    /// disk), where one was done.
    pub sync_seconds: Option<f64>,
    /// User CPU time of the scalebench process (all its threads) during
    /// the phase; server processes are not included.
    pub cpu_user_s: f64,
    /// System (kernel) CPU time of the scalebench process.
    pub cpu_system_s: f64,
    /// Throughput sampling interval, milliseconds.
    pub interval_ms: u64,
    /// Throughput over time: `[t, items_per_s, mb_per_s]` per interval, `t`
    /// the end of the interval in seconds from the phase start (the last
    /// interval may be shorter).
    pub throughput: Vec<[f64; 3]>,
}

impl PhaseStats {
    /// Items per second over the whole phase.
    pub fn rate(&self) -> f64 {
        if self.seconds > 0.0 {
            self.items as f64 / self.seconds
        } else {
            0.0
        }
    }

    /// Megabytes (10^6) per second over the whole phase.
    pub fn mb_per_s(&self) -> f64 {
        if self.seconds > 0.0 {
            self.bytes as f64 / 1e6 / self.seconds
        } else {
            0.0
        }
    }
}

/// What one load run measured (also `scalebench load --json`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LoadStats {
    /// Requests answered completely (any status).
    pub requests: u64,
    /// Seconds the measured part took.
    pub seconds: f64,
    /// Requests per second.
    pub requests_per_s: f64,
    /// Seconds the load took to ask for every first connection before its
    /// measured part began (a load of a duration, not at a fixed rate;
    /// not among `seconds`); absent otherwise and in files before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opening_s: Option<f64>,
    /// Body megabytes (10^6 bytes) per second.
    pub mb_per_s: f64,
    /// Body bytes received.
    pub body_bytes: u64,
    /// Connections opened: established (a refused or failed connect() is
    /// not one; it is among `errors.connect`).
    pub connections: u64,
    /// Latency percentiles of answered requests, ns.
    pub latency_ns: LatencyStats,
    /// Failed attempts by kind.
    pub errors: ErrorStats,
    /// Attempts repeated after a failure.
    pub retries: u64,
    /// Requests given up after the retries.
    pub failed: u64,
    /// Responses by status code.
    pub statuses: BTreeMap<String, u64>,
}

/// Latency percentiles, ns.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct LatencyStats {
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest.
    pub max: u64,
    /// Mean.
    pub mean: f64,
}

impl LatencyStats {
    /// The percentiles of a histogram of ns.
    pub fn of(h: &hdrhistogram::Histogram<u64>) -> LatencyStats {
        let q = |p: f64| h.value_at_quantile(p);
        LatencyStats {
            p50: q(0.5),
            p90: q(0.9),
            p99: q(0.99),
            p999: q(0.999),
            max: h.max(),
            mean: h.mean(),
        }
    }
}

/// Failed attempts by kind.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ErrorStats {
    /// connect() refused or failed.
    pub connect: u64,
    /// `connect` by errno name (`ECONNREFUSED`, …; `unknown` where none
    /// was told); absent in files before it and when none failed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub connect_errno: BTreeMap<String, u64>,
    /// Reset or closed before a response began.
    pub reset: u64,
    /// No complete response within the timeout.
    pub timeout: u64,
    /// Status 400 or more, or not HTTP.
    pub status: u64,
    /// Closed before the body was complete.
    pub short_body: u64,
    /// No local port to connect from (EADDRNOTAVAIL); not among `connect`
    /// (files before this field count them there).
    #[serde(default)]
    pub port_exhausted: u64,
}

/// The program that wrote a file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Tool {
    /// "scalebench".
    pub name: String,
    /// Cargo package version.
    pub version: String,
}

impl Tool {
    /// This program.
    pub fn this() -> Tool {
        Tool {
            name: env!("CARGO_PKG_NAME").into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// The machine, OS and settings a result was measured on.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SystemInfo {
    /// OS name from uname (`Linux`, `FreeBSD`, …).
    pub os: String,
    /// Kernel release (`6.18.0-…`).
    pub os_release: String,
    /// Kernel version string (build number, date).
    pub os_version: String,
    /// Machine architecture.
    pub arch: String,
    /// Host name.
    pub hostname: String,
    /// The processor.
    pub cpu: Cpu,
    /// Physical memory in bytes.
    pub memory_bytes: Option<u64>,
    /// C library name and version.
    pub libc: String,
    /// Resource limits of the benchmarking process at start: name → limit.
    pub limits: BTreeMap<String, Limit>,
    /// Kernel tunables that matter to some benchmark: name → value.
    pub sysctls: BTreeMap<String, String>,
    /// The work directory and the filesystem that holds it.
    pub workdir: Option<WorkdirInfo>,
    /// Every filesystem the run uses, once each: the work directory's and
    /// those of the `--dir` directories of the filesystem workloads (those
    /// they make with `--mkfs` are in their rows); empty (absent) in files
    /// written before it was recorded and in `sysinfo` without a directory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filesystems: Vec<FilesystemInfo>,
    /// How the machine was set up and how busy it was at the start:
    /// frequency governor, SMT, mitigations, clocksource, load … (absent in
    /// files written before it was recorded).
    #[serde(default)]
    pub tuning: Tuning,
    /// How the system ran: as a guest scalebench booted (KVM or emulated
    /// by TCG), or on the machine as found, with the hypervisor its CPU
    /// names (absent in files written before schema 7: unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub virtualization: Option<Virtualization>,
    /// The kernel's build configuration (`/proc/config.gz` or
    /// `/boot/config-RELEASE`), options set only (absent where neither
    /// exists, and before schema 7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_config: Option<KernelConfig>,
    /// The package the kernel came from, for a guest booted from a
    /// distribution's archive (`run --system NAME=kernel:debian:6.1`):
    /// its exact name and version, the kernel's release, every package
    /// unpacked and the identity of its configuration file (absent for
    /// every other system, and in files written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_package: Option<KernelPackage>,
}

impl SystemInfo {
    /// Whether the system's CPU was emulated (`virtualization.emulated`):
    /// its times are not the speed of any machine. `false` when not
    /// recorded (files before schema 7).
    pub fn emulated(&self) -> bool {
        self.virtualization.as_ref().is_some_and(|v| v.emulated)
    }
}

/// How a system ran: on the machine as found, or as a QEMU guest.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Virtualization {
    /// `native` (the machine as found, perhaps itself a virtual machine:
    /// see `hypervisor`), `kvm` (a guest scalebench booted with hardware
    /// virtualization) or `tcg` (a guest whose CPU QEMU emulated).
    pub kind: String,
    /// Whether the CPU was emulated: its times are not the speed of any
    /// machine, only its growth classes compare.
    pub emulated: bool,
    /// The hypervisor as the CPU names it (CPUID leaf 0x40000000:
    /// `KVMKVMKVM`, `TCGTCGTCGTCG`, `Microsoft Hv`, …); none on bare
    /// metal or where it cannot be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hypervisor: Option<String>,
    /// Why this kind (for `tcg`: why not KVM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The host CPU each vCPU thread was pinned to, by vCPU (empty: not
    /// pinned, or not a guest).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vcpu_pins: Vec<usize>,
    /// What a guest's clock counted: `time`, or `instructions` (QEMU's
    /// instruction counting: a guest nanosecond is 2^`icount_shift`
    /// instructions executed, the same on every run and host); none:
    /// not a guest, or not recorded (before 0.3.0's guest clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<String>,
    /// With `clock` `instructions`: QEMU's `-icount` shift.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icount_shift: Option<u32>,
    /// With `clock` `instructions`, for a guest booting a kernel
    /// (`kernel:`): the fixed time its real-time clock read at boot
    /// (`2026-01-01T00:00:00`, `seed=N` seconds on), so that two boots of
    /// one kernel draw the same random secrets; none otherwise, and in
    /// files written before 2026-12-06.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtc_base: Option<String>,
}

impl Virtualization {
    /// Whether the figures are counts of instructions (`clock`
    /// `instructions`), not time.
    pub fn counts_instructions(&self) -> bool {
        self.clock.as_deref() == Some("instructions")
    }
}

/// Where a guest's kernel came from: a package of a distribution's
/// archive, named exactly (stable updates backport so much that a
/// version number alone does not say which kernel ran).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct KernelPackage {
    /// The archive: `debian`.
    pub archive: String,
    /// What the system's spec asked for: a version line (`6.1`), `sid`,
    /// or a package name.
    pub asked: String,
    /// The package that holds the kernel (`linux-image-6.1.0-57-cloud-amd64`).
    pub package: String,
    /// Its version (`6.1.192-3`).
    pub version: String,
    /// The suite it came from (`bookworm-security`).
    pub suite: String,
    /// The kernel's release (`uname -r`) as its image says it.
    pub release: String,
    /// Every package unpacked for it (the image package, and in sid the
    /// packages it is split into), each with its version and the SHA-256
    /// of its `.deb`.
    pub debs: Vec<DebFile>,
    /// The kernel's configuration file as its package has it, if it has
    /// one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<ConfigFile>,
    /// When it was downloaded (RFC 3339).
    pub fetched: String,
    /// The archive's words when the index this run read was past its
    /// Valid-Until date and was read all the same (its signature checked,
    /// its freshness not): a newer kernel of the line may exist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_stale: Option<String>,
    /// Why the archive could not be read when this run resolved the
    /// kernel, so that the newest cached one of the line was booted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archive_unreachable: Option<String>,
}

/// One `.deb` a kernel was unpacked from.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct DebFile {
    /// The package's name.
    pub package: String,
    /// Its version.
    pub version: String,
    /// The SHA-256 of the `.deb`, as the archive's signed index lists it
    /// (hex).
    pub sha256: String,
    /// The `.deb`'s size in bytes.
    pub size: u64,
}

/// A kernel's configuration file, identified.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ConfigFile {
    /// Where the package puts it (`/boot/config-6.1.0-57-cloud-amd64`,
    /// `/usr/lib/modules/7.2.13+deb14-cloud-amd64/config`).
    pub path: String,
    /// The package that holds it.
    pub package: String,
    /// The SHA-256 of its bytes (hex).
    pub sha256: String,
}

/// A kernel's build configuration.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct KernelConfig {
    /// Where it was read (`/proc/config.gz`, `/boot/config-6.1.0-…`).
    pub source: String,
    /// Every option set: `CONFIG_…` → its value (`y`, `m`, a number or a
    /// quoted string); options "not set" are absent.
    pub options: BTreeMap<String, String>,
}

pub use sys::tuning::{
    BusyProcess, CgroupLimits, Channels, Firewall, Nic, Offloads, STEAL_WARN_PERCENT, Security,
    Tuning,
};

/// Processor description.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Cpu {
    /// Model name.
    pub model: Option<String>,
    /// Online logical CPUs.
    pub count: usize,
    /// Nominal or current clock in MHz, as the OS reports it.
    pub mhz: Option<f64>,
    /// How the CPUs are arranged: packages, cores, threads, NUMA nodes
    /// (absent where the OS does not say, and in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<sys::hardware::CpuTopology>,
}

/// A soft/hard resource limit; `null` means unlimited.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct Limit {
    /// Soft limit.
    pub soft: Option<u64>,
    /// Hard limit.
    pub hard: Option<u64>,
}

/// Where benchmark files were created.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct WorkdirInfo {
    /// The directory scalebench created (and removed afterwards).
    pub path: String,
    /// Filesystem type (`ext4`, `tmpfs`, `ufs`, …).
    pub fs_type: String,
    /// Mount point of that filesystem.
    pub mount_point: String,
    /// Device or source of the mount.
    pub device: String,
    /// Mount options.
    pub mount_options: String,
    /// Free bytes at the start of the run.
    pub free_bytes: Option<u64>,
}

/// A filesystem a run uses.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FilesystemInfo {
    /// The directory of the run that is on it (the first one given).
    pub path: String,
    /// Filesystem type (`ext4`, `tmpfs`, `ufs`, …).
    pub fs_type: String,
    /// Mount point of that filesystem.
    pub mount_point: String,
    /// Device or source of the mount.
    pub device: String,
    /// Mount options.
    pub mount_options: String,
    /// The block device it is on: model, driver, rotational, I/O
    /// scheduler, read-ahead, queue depth (absent when it is on none, where
    /// the OS does not say, and in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<sys::hardware::BlockDevice>,
}

/// The timer used for all samples of a file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TimerInfo {
    /// `monotonic` or `tsc`.
    pub kind: TimerKind,
    /// Calibrated TSC frequency in Hz (TSC only).
    pub tsc_hz: Option<f64>,
    /// Whether the OS reports an invariant TSC (`null`: unknown).
    pub invariant_tsc: Option<bool>,
    /// CPU the benchmarking process was pinned to, if any.
    pub pinned_cpu: Option<usize>,
}

/// How a benchmark ended.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Every run reached the requested n.
    Ok,
    /// Every run finished, but a limit held n below what was asked (`caps`).
    Capped,
    /// An error stopped it; `message` says which. Finished runs are kept.
    Failed,
    /// This system cannot run it; `message` says why. No runs.
    Unsupported,
    /// ^C stopped it; the runs that finished are kept.
    Interrupted,
}

impl Status {
    /// Lower-case name as in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Capped => "capped",
            Status::Failed => "failed",
            Status::Unsupported => "unsupported",
            Status::Interrupted => "interrupted",
        }
    }
}

/// One benchmark series.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BenchResult {
    /// Benchmark name as in `scalebench list` (`socket`).
    pub name: String,
    /// Series name: the benchmark name plus a variant in brackets when the
    /// benchmark has variants (`connect[epoll]`); else the same as `name`.
    pub series: String,
    /// What n counts.
    pub n_meaning: String,
    /// What one sample times.
    pub timed: String,
    /// Why the slowest sample at each n matters as much as the median, for
    /// a series where it does (`socket-threads`): reports then show the
    /// maximum per n beside the median. Absent (the median tells) for
    /// every other series, and in files written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_matters: Option<String>,
    /// The series this one is a variant of (`fork-static` of `fork`):
    /// reports draw the two together and give the ratio of their costs.
    /// Absent for every other series, and in files written before it
    /// existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs_with: Option<String>,
    /// How it ended.
    pub status: Status,
    /// Why it failed or is unsupported; `null` otherwise.
    pub message: Option<String>,
    /// The parameters it ran with.
    pub params: Params,
    /// Limits that held n below the request.
    pub caps: Vec<Cap>,
    /// Limits and sysctls that matter to this benchmark, as they were
    /// during its runs (after scalebench raised what it could).
    pub environment: BTreeMap<String, String>,
    /// Every run, in order.
    pub runs: Vec<RunRecord>,
    /// Where the time goes at low and at high n (`run --why`, `why`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<StackProfile>,
    /// The verdict the analysis gave these runs when the file was written,
    /// with what made it: a report reuses it while the analysis, its
    /// options and the runs are the same, and judges again otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<StoredVerdict>,
    /// What the system did while the series ran (schema 8; absent with
    /// `run --monitor off`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monitor: Option<Monitor>,
}

/// A verdict kept with its series (`benchmarks[].verdict`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StoredVerdict {
    /// The identity of the analysis that made it (a digest of its source).
    pub analysis: String,
    /// The options it judged with.
    pub options: VerdictOptions,
    /// A digest of what it judged (samples, directions, re-timings, timer
    /// overhead), so runs edited by hand are judged again.
    pub inputs: String,
    /// The verdict, as `scalebench report -f json` writes one.
    pub verdict: serde_json::Value,
}

/// The analysis options a stored verdict was made with.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct VerdictOptions {
    /// τ, the relative rise below which a series is flat.
    pub tolerance: f64,
    /// Two-sided level of the rise interval.
    pub level: f64,
    /// Decades of n needed to tell n, n log n and n² apart.
    pub min_decades: f64,
    /// Bootstrap replicas.
    pub replicas: usize,
    /// Seed of the bootstrap.
    pub seed: u64,
}

/// A benchmark's profile: call stacks sampled while the harness held n
/// steady at the first decile and at the largest n, repeating the timed
/// operation and its undo; and the functions whose time grew.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct StackProfile {
    /// The profiler (`perf`, `dtrace`), empty when none could run.
    pub profiler: String,
    /// The event sampled (`cpu-clock`).
    pub event: String,
    /// Samples per second per CPU.
    pub frequency_hz: u32,
    /// The low-n window, then the high-n one.
    pub windows: Vec<ProfileWindow>,
    /// Functions whose time per operation grew most, largest first.
    pub growing: Vec<Grower>,
    /// The finding in words ("at n = 15 000, 65 % of the time is in …").
    pub explanation: Option<String>,
    /// Why there is no profile (no profiler, kernel stacks forbidden, …),
    /// with the command that would enable it.
    pub error: Option<String>,
}

/// One profile window.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProfileWindow {
    /// n held during the window.
    pub n: u64,
    /// Length of the window, seconds.
    pub seconds: f64,
    /// Operations (each with its undo) done in it.
    pub ops: u64,
    /// Stacks sampled, in all processes of the benchmark.
    pub samples: u64,
    /// Functions by self time (the leaf of a sample), most first.
    pub top_self: Vec<FnSamples>,
    /// Functions by inclusive time (anywhere in a sample), most first.
    pub top_inclusive: Vec<FnSamples>,
    /// Folded stacks (`root;…;leaf COUNT` per line, kernel frames marked
    /// ` [k]`), when under 64 KiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folded: Option<String>,
    /// The same, gzip-compressed and base64-encoded, when larger.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folded_gzip_base64: Option<String>,
}

impl ProfileWindow {
    /// The folded stacks, decompressed if need be.
    pub fn folded_text(&self) -> Option<String> {
        if let Some(f) = &self.folded {
            return Some(f.clone());
        }
        use base64::Engine;
        use std::io::Read;
        let gz = base64::engine::general_purpose::STANDARD
            .decode(self.folded_gzip_base64.as_ref()?)
            .ok()?;
        let mut s = String::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_string(&mut s)
            .ok()?;
        Some(s)
    }
}

/// A function and its samples in a window.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FnSamples {
    /// Function name.
    pub function: String,
    /// Kernel function.
    pub kernel: bool,
    /// Samples.
    pub samples: u64,
}

/// A function whose time grew from the low to the high window.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Grower {
    /// Function name.
    pub function: String,
    /// Kernel function.
    pub kernel: bool,
    /// `self` (time in the function itself) or `inclusive` (in it and
    /// what it calls).
    pub basis: String,
    /// Share of the low window's samples.
    pub low_share: f64,
    /// Share of the high window's samples.
    pub high_share: f64,
    /// CPU time per operation in it at low n, ns.
    pub low_ns_per_op: f64,
    /// The same at high n.
    pub high_ns_per_op: f64,
}

/// Parameters of a benchmark series.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Params {
    /// The n that was asked for.
    pub requested_n: u64,
    /// The n each run aimed at after limits were applied.
    pub n: u64,
    /// Runs asked for.
    pub runs: u32,
    /// Operations done and discarded before the first run.
    pub warmup_ops: u64,
    /// Benchmark-specific parameters (file sizes, …).
    #[serde(default)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// A limit that held n below the request.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Cap {
    /// `descriptors`, `processes`, `ports`, `mappings` or `disk`.
    pub resource: String,
    /// The n asked for.
    pub requested: u64,
    /// The n reached.
    pub reached: u64,
    /// The limit, with its name and value, in words.
    pub reason: String,
}

/// One run: its samples and the clock overhead measured just before it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunRecord {
    /// 0-based run number.
    pub index: u32,
    /// Start, RFC 3339 UTC.
    pub started: String,
    /// Wall time of the run including untimed set-up, ms.
    pub duration_ms: f64,
    /// Cost of the timer itself, measured before this run.
    pub timer_overhead: Overhead,
    /// `[n, ns]` pairs in the order measured: n resources were held when
    /// the operation that took `ns` nanoseconds was done. Raw: the timer
    /// overhead is not subtracted.
    pub samples: Vec<[u64; 2]>,
    /// The order in which the run visited n. Absent in files written
    /// before the field existed: read as `up`.
    #[serde(default)]
    pub direction: Direction,
    /// For a run that measured both ways (`up-down`, `down-up`) item by
    /// item: how many times it crossed the range of n timing operations
    /// (each n is timed once, in one of them). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crossings: Option<u32>,
    /// For such a run: whether each operation timed going up came right
    /// after an untimed operation and its undo, as every operation timed
    /// going down comes after an undo (so that both directions time the
    /// same thing). Absent (false) in files written before 2026-12-06,
    /// where an operation timed going up came right after the operation
    /// before it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub primed: bool,
    /// Re-timing at low n of a benchmark that cannot measure on the way
    /// down: `[n, ns]` pairs of the first operations of a fresh run, taken
    /// far in time from this run's own low-n samples (see
    /// [`RunRecord::recheck_when`]). Empty (absent in the file) when none
    /// was taken.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recheck: Vec<[u64; 2]>,
    /// When [`RunRecord::recheck`] was taken; absent when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recheck_when: Option<RecheckWhen>,
}

/// The order in which a run visited n.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// n rose as the run went on.
    #[default]
    Up,
    /// n fell as the run went on.
    Down,
    /// n rose and then fell again.
    #[serde(rename = "up-down")]
    UpDown,
    /// n fell from its top and then rose to it again.
    #[serde(rename = "down-up")]
    DownUp,
}

impl Direction {
    /// Lower-case name as in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Up => "up",
            Direction::Down => "down",
            Direction::UpDown => "up-down",
            Direction::DownUp => "down-up",
        }
    }
}

/// When a run's re-timing at low n was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecheckWhen {
    /// After the run, once its resources were released: the run's own
    /// low-n samples came first.
    After,
    /// Before the run started: the run's own low-n samples come last
    /// (a benchmark whose n falls and cannot rise again).
    Before,
}

/// RFC 3339 UTC timestamp of now, to the second.
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_matters_is_written_only_for_a_series_that_has_it() {
        let file: ResultFile =
            serde_json::from_str(include_str!("../../../tests/fixtures/default.json")).unwrap();
        let mut b = file.benchmarks[0].clone();
        assert_eq!(b.max_matters, None, "files before it read as none");
        assert!(
            serde_json::to_value(&b)
                .unwrap()
                .get("max_matters")
                .is_none()
        );
        b.max_matters = Some("a table grows".into());
        let v = serde_json::to_value(&b).unwrap();
        assert_eq!(v["max_matters"], "a table grows");
        let back: BenchResult = serde_json::from_value(v).unwrap();
        assert_eq!(back, b);
    }

    #[test]
    fn runs_without_direction_or_recheck_still_load() {
        let old = r#"{"index": 1, "started": "2026-01-01T00:00:00Z", "duration_ms": 1.5,
            "timer_overhead": {"min_ns": 20.0, "median_ns": 25.0}, "samples": [[0, 100], [1, 110]]}"#;
        let r: RunRecord = serde_json::from_str(old).unwrap();
        assert_eq!(r.direction, Direction::Up);
        assert!(r.recheck.is_empty());
        assert_eq!(r.recheck_when, None);
        assert_eq!(r.samples, vec![[0, 100], [1, 110]]);
    }

    #[test]
    fn direction_and_recheck_are_written_as_documented() {
        let mut r = RunRecord {
            index: 0,
            started: "2026-01-01T00:00:00Z".into(),
            duration_ms: 1.0,
            timer_overhead: Overhead {
                min_ns: 20.0,
                median_ns: 25.0,
            },
            samples: vec![[1, 100], [0, 90]],
            direction: Direction::Down,
            crossings: None,
            primed: false,
            recheck: Vec::new(),
            recheck_when: None,
        };
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["direction"], "down");
        assert!(v.get("recheck").is_none() && v.get("recheck_when").is_none());
        assert!(v.get("crossings").is_none());
        assert!(
            v.get("primed").is_none(),
            "absent when false, as in older files"
        );
        r.direction = Direction::DownUp;
        r.crossings = Some(6);
        r.primed = true;
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["direction"], "down-up");
        assert_eq!(v["crossings"], 6);
        assert_eq!(v["primed"], true);
        r.crossings = None;
        r.direction = Direction::Up;
        r.recheck = vec![[0, 80], [1, 85]];
        r.recheck_when = Some(RecheckWhen::After);
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["direction"], "up");
        assert_eq!(v["recheck"], serde_json::json!([[0, 80], [1, 85]]));
        assert_eq!(v["recheck_when"], "after");
        let back: RunRecord = serde_json::from_value(v).unwrap();
        assert_eq!(back, r);
    }
}
