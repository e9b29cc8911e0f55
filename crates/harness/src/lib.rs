//! The harness: the toolkit below the benchmarks and workloads. The clock
//! ([`clock`]), resource limits ([`limits`]), child processes and ^C
//! ([`reaper`]), progress display ([`progress`]), timed workload phases
//! with throughput over time ([`phase`]), the sweep engine ([`sweep`]),
//! the work directory ([`workdir`]), fan-out over processes ([`fanout`],
//! [`spread`]), a random generator fixed forever ([`splitmix`]) and
//! call-stack sampling ([`profiler`]). It imports nothing from the
//! benchmarks, the workloads, the hosts or the run above it.

#![deny(missing_docs)]

pub mod clock;
pub mod fanout;
pub mod limits;
pub mod monitor;
pub mod phase;
pub mod profiler;
pub mod progress;
pub mod rawclock;
pub mod reaper;
pub mod series;
pub mod splitmix;
pub mod spread;
pub mod subject;
pub mod sweep;
pub mod workdir;

use net::Backend;

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
    /// request pays for waking an idle CPU, at random per run; pinned, it
    /// is stable (docs/measurements.md, "Figures behind the code's
    /// choices").
    /// `None` where this OS cannot pin.
    pub cpus: Option<(usize, usize)>,
}

impl Default for NetOptions {
    fn default() -> Self {
        NetOptions {
            backends: Backend::available_all(),
            ipv6: false,
            cpus: {
                let last = sys::cpu_count().saturating_sub(1);
                sys::PinGuard::new(0).ok().map(|_guard| (0, last))
            },
        }
    }
}
