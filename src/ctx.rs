//! What a run gives a benchmark or a workload: its work directory, the
//! clock, the network options, the CPU to pin to, this executable, and the
//! hosts the client and the server run on. Above the harness (it holds
//! [`crate::hosts::Hosts`]), below the benchmarks and workloads that
//! receive it.

use crate::harness::NetOptions;
use crate::harness::clock::Clock;
use std::path::{Path, PathBuf};

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
    /// of different speed takes their speeds in turns (docs/measurements.md,
    /// "Figures behind the code's choices"), which a verdict cannot tell
    /// from growth.
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
