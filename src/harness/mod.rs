//! The harness: everything a benchmark does not do itself. It owns the
//! clock, runs and warm-up ([`runner`]), resource limits ([`limits`]),
//! child processes and ^C ([`reaper`]), progress display ([`progress`]) and
//! the work directory ([`workdir`]).

pub mod clock;
pub mod limits;
pub mod progress;
pub mod rawclock;
pub mod reaper;
pub mod runner;
pub mod workdir;

use clock::Clock;
use std::path::Path;

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

/// What the harness gives a benchmark when it starts a run.
pub struct Ctx<'a> {
    workdir: &'a Path,
    clock: &'a Clock,
}

impl<'a> Ctx<'a> {
    /// A context for runs in `workdir` timed with `clock`.
    pub fn new(workdir: &'a Path, clock: &'a Clock) -> Self {
        Ctx { workdir, clock }
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
