//! The harness: everything a benchmark does not do itself. It owns the
//! clock, runs and warm-up ([`runner`]), resource limits ([`limits`]),
//! child processes and ^C ([`reaper`]), progress display ([`progress`]),
//! timed workload phases with throughput over time ([`phase`]), the work
//! directory ([`workdir`]) and whole runs under tuning profiles
//! ([`session`]).

pub mod cgroup;
pub mod clock;
pub mod fanout;
pub mod limits;
pub mod phase;
pub mod profiler;
pub mod progress;
pub mod rawclock;
pub mod reaper;
pub mod runner;
pub mod session;
pub mod spread;
pub mod sweep;
pub mod why;
pub mod workdir;

use crate::net::Backend;
use clock::Clock;
use std::path::{Path, PathBuf};

/// A kind of resource a benchmark item holds, and that a limit can cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Resource {
    /// Open file descriptors (sockets, files).
    Descriptors,
    /// Processes.
    Processes,
    /// Local TCP ports.
    Ports,
    /// Memory mappings.
    Mappings,
}

impl Resource {
    /// Lower-case name used in results (`descriptors`, …).
    pub fn name(self) -> &'static str {
        match self {
            Resource::Descriptors => "descriptors",
            Resource::Processes => "processes",
            Resource::Ports => "ports",
            Resource::Mappings => "mappings",
        }
    }
}

/// Options of the network benchmarks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetOptions {
    /// Event backends to measure, each its own series.
    pub backends: Vec<Backend>,
    /// IPv6 over ::1 instead of IPv4 over 127.0.0.1.
    pub ipv6: bool,
    /// CPUs the client (this process) and the server are pinned to during
    /// a network benchmark: by default the first and the last CPU. Left to
    /// the scheduler, where the server happens to run decides whether a
    /// request pays for waking an idle CPU (measured here: 8 µs or 60 µs
    /// per request at small n, at random per run); pinned, it is stable.
    /// `None` where this OS cannot pin.
    pub cpus: Option<(usize, usize)>,
}

impl Default for NetOptions {
    fn default() -> Self {
        NetOptions {
            backends: Backend::available_all(),
            ipv6: false,
            cpus: {
                let last = crate::sys::cpu_count().saturating_sub(1);
                crate::sys::PinGuard::new(0).ok().map(|_guard| (0, last))
            },
        }
    }
}

/// What the harness gives a benchmark when it starts a run.
pub struct Ctx<'a> {
    workdir: &'a Path,
    clock: &'a Clock,
    net: NetOptions,
    pin: Option<usize>,
    exe: Option<PathBuf>,
    here: crate::hosts::Hosts,
    hosts: Option<&'a crate::hosts::Hosts>,
}

impl<'a> Ctx<'a> {
    /// A context for runs in `workdir` timed with `clock`, with default
    /// network options.
    pub fn new(workdir: &'a Path, clock: &'a Clock) -> Self {
        let net = NetOptions::default();
        let exe = std::env::current_exe().ok();
        Ctx {
            workdir,
            clock,
            pin: net.cpus.map(|c| c.0),
            net,
            here: crate::hosts::Hosts::local(exe.as_deref(), workdir),
            exe,
            hosts: None,
        }
    }

    /// The same with these client and server hosts (`run --host`).
    pub fn with_hosts(mut self, hosts: &'a crate::hosts::Hosts) -> Self {
        self.hosts = Some(hosts);
        self
    }

    /// Where the client and the server of the network benchmarks and
    /// workloads run: both on this machine unless `run --host` said
    /// otherwise.
    pub fn hosts(&self) -> &crate::hosts::Hosts {
        self.hosts.unwrap_or(&self.here)
    }

    /// The same with these network options; benchmark runs are pinned to
    /// their client CPU.
    pub fn with_net(mut self, net: NetOptions) -> Self {
        self.pin = net.cpus.map(|c| c.0);
        self.net = net;
        self
    }

    /// The same with benchmark runs pinned to `cpu` (`None`: left to the
    /// scheduler).
    pub fn with_pin(mut self, cpu: Option<usize>) -> Self {
        self.pin = cpu;
        self
    }

    /// The CPU every benchmark run (warm-up, runs, re-timings, profile
    /// windows) is pinned to, with the processes it starts: by default the
    /// first CPU. Left to the scheduler, a process that moves between CPUs
    /// of different speed takes their speeds in turns — measured here,
    /// socket() cost 2.9 µs on one vCPU and 3.9 µs on the other, switching
    /// every few thousand calls, and fork 200–500 µs unpinned against
    /// 105–155 µs pinned — which a verdict cannot tell from growth.
    pub fn pin(&self) -> Option<usize> {
        self.pin
    }

    /// Network options.
    pub fn net(&self) -> &NetOptions {
        &self.net
    }

    /// The scalebench executable, for helper processes (`scalebench
    /// __responder`); `None` when it cannot be found.
    pub fn exe(&self) -> Option<&Path> {
        self.exe.as_deref()
    }

    /// The run's private work directory: create files only in here. Files
    /// may be kept between runs of one `scalebench run` (reused fixtures);
    /// the directory is removed at the end.
    pub fn workdir(&self) -> &Path {
        self.workdir
    }

    /// The clock samples are measured with.
    pub fn clock(&self) -> &Clock {
        self.clock
    }
}
