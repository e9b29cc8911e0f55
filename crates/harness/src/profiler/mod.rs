//! Sampling profilers behind one small interface: start recording the call
//! stacks of some processes for a while, then hand back the samples.
//!
//! Backends: Linux `perf` (the software `cpu-clock` event, which works
//! without hardware counters, e.g. in virtual machines) and DTrace's
//! `profile` provider (FreeBSD, macOS, illumos). Each says, when it cannot
//! run, exactly what is missing and the command that enables it.

pub mod dtrace;
pub mod perf;

use crate::reaper::ChildGroup;
use analysis::stacks::Sample;
use std::path::Path;
use std::time::Duration;

/// A recording in progress.
pub trait Recording {
    /// Waits until the profiler records (for a profiler that can say so;
    /// the default waits [`ATTACH_DELAY`]).
    fn ready(&mut self) -> Result<(), String> {
        std::thread::sleep(ATTACH_DELAY);
        Ok(())
    }

    /// Stops recording (where the profiler can be told; else recording
    /// ends when its time is up).
    fn stop(&mut self) {}

    /// Waits for the recording to end and reads its samples.
    fn finish(self: Box<Self>) -> Result<Vec<Sample>, String>;
}

/// A sampling profiler.
pub trait Profiler {
    /// Its name (`perf`, `dtrace`), as stored in results.
    fn name(&self) -> &'static str;

    /// The event sampled, in words (`cpu-clock`).
    fn event(&self) -> &'static str;

    /// Samples per second per CPU.
    fn frequency(&self) -> u32;

    /// Whether it can record kernel and user stacks here; the error says
    /// what is missing and how to enable it.
    fn check(&self) -> Result<(), String>;

    /// Starts recording `pids` (and the children they start) for at most
    /// `length`, writing its raw data into `dir`; [`Recording::ready`]
    /// returns once it records, [`Recording::stop`] ends it early.
    fn start(
        &self,
        pids: &[u32],
        length: Duration,
        dir: &Path,
    ) -> Result<Box<dyn Recording>, String>;
}

/// Waits for a profiler to exit: its status and what it said on stderr.
fn wait_group(g: &mut ChildGroup) -> std::io::Result<(std::process::ExitStatus, String)> {
    use std::io::Read;
    let mut err = String::new();
    if let Some(mut e) = g.child().stderr.take() {
        e.read_to_string(&mut err)?;
    }
    Ok((g.child().wait()?, err))
}

/// Sends SIGINT to a profiler (perf writes what it has, DTrace prints its
/// aggregations), not to what it started.
fn interrupt(g: &ChildGroup) {
    // SAFETY: signalling the profiler we started.
    unsafe { libc::kill(g.pgid(), libc::SIGINT) };
}

/// How long a profiler may take to attach before the work it should see.
pub const ATTACH_DELAY: Duration = Duration::from_millis(400);

/// The profiler this system has, or why there is none. `override_cmd`
/// replaces the profiler's program (tests use it to simulate a missing one).
pub fn detect(override_cmd: Option<&str>) -> Result<Box<dyn Profiler>, String> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let p = perf::Perf::new(override_cmd.unwrap_or("perf"));
        p.check()?;
        Ok(Box::new(p))
    }
    #[cfg(any(
        target_os = "freebsd",
        target_vendor = "apple",
        target_os = "illumos",
        target_os = "solaris"
    ))]
    {
        let p = dtrace::Dtrace::new(override_cmd.unwrap_or("dtrace"));
        p.check()?;
        Ok(Box::new(p))
    }
    #[cfg(not(any(
        target_os = "linux",
        target_os = "android",
        target_os = "freebsd",
        target_vendor = "apple",
        target_os = "illumos",
        target_os = "solaris"
    )))]
    {
        let _ = override_cmd;
        Err(format!(
            "no sampling profiler backend for {} yet (perf on Linux, DTrace on FreeBSD, macOS and illumos)",
            std::env::consts::OS
        ))
    }
}

/// This process and every process below it, zombies left out (a
/// profiler cannot attach to them): where the OS lists its processes
/// ([`sys::procs`]); elsewhere this process only, and the profiler
/// follows children it starts.
pub fn process_tree() -> Vec<u32> {
    let me = std::process::id();
    let live: Vec<sys::procs::Proc> = sys::procs::processes()
        .into_iter()
        .filter(|p| !p.zombie)
        .collect();
    let mut out = vec![me];
    out.extend(sys::procs::descendants_in(&live, me));
    out
}
