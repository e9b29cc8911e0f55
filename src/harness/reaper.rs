//! Child processes and signals: every process a benchmark starts lives in a
//! process group of its own that is killed (SIGKILL to the whole group) and
//! reaped when its [`ChildGroup`] is dropped — on normal end, error, panic
//! (unwinding drops it; the panic hook kills too) and ^C.
//!
//! SIGINT, SIGTERM and SIGHUP only set a flag ([`interrupted`]) that the
//! runner checks between operations; they are installed without
//! `SA_RESTART`, so a benchmark blocked in a read sees `EINTR`. A second
//! signal kills every registered group at once and exits with status 130.
//! On Linux and FreeBSD scalebench makes itself a subreaper, so
//! grandchildren orphaned by a killed helper are reaped here too.
//!
//! SIGKILL cannot be caught, so for that case every child is armed to die
//! with scalebench (see [`ChildGroup::spawn`]), and the work directory a
//! killed run leaves is removed by the next run
//! ([`super::workdir::WorkDir`]).

use std::process::{Child, Command};
use std::sync::Once;
use std::sync::atomic::{AtomicI32, Ordering};

pub use crate::stop::interrupted;

const SLOTS: usize = 64;
static GROUPS: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];
static INSTALL: Once = Once::new();

/// Sends SIGKILL to every registered group (async-signal-safe).
fn kill_all_groups() {
    for g in &GROUPS {
        let pgid = g.load(Ordering::SeqCst);
        if pgid > 0 {
            // SAFETY: kill() is async-signal-safe.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
        }
    }
}

extern "C" fn on_signal(_sig: libc::c_int) {
    if crate::stop::interrupt() {
        kill_all_groups();
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(130) };
    }
}

/// Installs the signal handlers, the panic hook and (where the OS has it)
/// the subreaper flag. Idempotent.
pub fn install() {
    INSTALL.call_once(|| {
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: installing a handler that only touches atomics and
            // calls async-signal-safe functions.
            unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_signal as *const () as libc::sighandler_t;
                libc::sigemptyset(&mut sa.sa_mask);
                sa.sa_flags = 0; // no SA_RESTART: blocked reads return EINTR
                libc::sigaction(sig, &sa, std::ptr::null_mut());
            }
        }
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            kill_all_groups();
            previous(info);
        }));
        crate::sys::set_child_subreaper();
    });
}

/// A child process in a process group of its own, killed with its whole
/// group and reaped on drop.
pub struct ChildGroup {
    child: Child,
    pgid: i32,
    slot: Option<usize>,
}

impl ChildGroup {
    /// Spawns `cmd` as the leader of a new process group and registers the
    /// group for cleanup.
    ///
    /// The child also dies when scalebench dies, even by SIGKILL: where the
    /// OS has a parent-death signal (Linux, FreeBSD, DragonFly) it is set to
    /// SIGKILL between fork and exec (on Linux it fires when the *thread*
    /// that spawned the child ends, so spawn from the thread that keeps the
    /// group). Elsewhere, and for what the child forks in turn, the
    /// children watch a pipe from scalebench for end of input (the fork
    /// helper's commands, the servers' standard input), and external
    /// programs (the profilers) end by themselves after their window.
    pub fn spawn(cmd: &mut Command) -> std::io::Result<ChildGroup> {
        use std::os::unix::process::CommandExt;
        install();
        // SAFETY: getpid cannot fail.
        let parent = unsafe { libc::getpid() };
        // SAFETY: the closure runs in the child between fork and exec and
        // makes only async-signal-safe system calls.
        unsafe {
            cmd.pre_exec(move || {
                crate::sys::die_with_parent(libc::SIGKILL);
                // The parent died before the signal was armed.
                if libc::getppid() != parent {
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
                Ok(())
            });
        }
        let child = cmd.process_group(0).spawn()?;
        let pgid = child.id() as i32;
        let slot = GROUPS.iter().position(|g| {
            g.compare_exchange(0, pgid, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        });
        Ok(ChildGroup { child, pgid, slot })
    }

    /// The underlying child (for its pipes).
    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// The group's id (the leader's pid).
    pub fn pgid(&self) -> i32 {
        self.pgid
    }
}

impl Drop for ChildGroup {
    fn drop(&mut self) {
        // SAFETY: signalling a process group we created.
        unsafe { libc::kill(-self.pgid, libc::SIGKILL) };
        let _ = self.child.wait();
        // Members orphaned by the leader's death were re-parented to us
        // (subreaper) and share the group id: reap them all.
        loop {
            let mut status = 0;
            // SAFETY: waitpid on our own process group.
            let r = unsafe { libc::waitpid(-self.pgid, &mut status, 0) };
            if r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                break;
            }
        }
        if let Some(s) = self.slot {
            GROUPS[s].store(0, Ordering::SeqCst);
        }
    }
}

/// How a program run by [`run_bounded`] ended.
#[derive(Debug)]
pub struct Finished {
    /// Its exit status; `None` when it was killed (limit reached or ^C).
    pub status: Option<std::process::ExitStatus>,
    /// Everything it wrote to standard output.
    pub stdout: String,
    /// Everything it wrote to standard error.
    pub stderr: String,
    /// Killed because it ran past the limit.
    pub timed_out: bool,
}

/// Runs `cmd` in a [`ChildGroup`] to its end, collecting its output, and
/// kills it (with its group) when it runs longer than `limit` or when
/// [`interrupted`]: a child in a process group of its own does not see the
/// terminal's ^C.
pub fn run_bounded(cmd: &mut Command, limit: std::time::Duration) -> std::io::Result<Finished> {
    run_limited(cmd, limit, true, None)
}

/// The same as [`run_bounded`] but not cut short by ^C: for the commands
/// that undo what a run made (removing a network namespace), which must
/// finish also after ^C. Still killed at `limit`.
pub fn run_to_end(cmd: &mut Command, limit: std::time::Duration) -> std::io::Result<Finished> {
    run_limited(cmd, limit, false, None)
}

/// The same as [`run_bounded`] with `input` as the command's standard
/// input (a file to copy through it).
pub fn run_bounded_with_input(
    cmd: &mut Command,
    input: std::fs::File,
    limit: std::time::Duration,
) -> std::io::Result<Finished> {
    run_limited(cmd, limit, true, Some(input))
}

fn run_limited(
    cmd: &mut Command,
    limit: std::time::Duration,
    stop_on_interrupt: bool,
    input: Option<std::fs::File>,
) -> std::io::Result<Finished> {
    use std::io::Read;
    use std::process::Stdio;
    cmd.stdin(input.map_or_else(Stdio::null, Stdio::from))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut g = ChildGroup::spawn(cmd)?;
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut s);
            }
            String::from_utf8_lossy(&s).into_owned()
        })
    };
    let out = drain(
        g.child()
            .stdout
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let err = drain(
        g.child()
            .stderr
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let start = std::time::Instant::now();
    // Short commands (ip, tc) end within milliseconds: look again soon at
    // first, then seldom.
    let mut pause = std::time::Duration::from_millis(1);
    let (status, timed_out) = loop {
        if let Some(st) = g.child().try_wait()? {
            break (Some(st), false);
        }
        if stop_on_interrupt && interrupted() {
            break (None, false);
        }
        if start.elapsed() > limit {
            break (None, true);
        }
        // Seldom: the child may be a benchmark that a wake-up disturbs.
        std::thread::sleep(pause);
        pause = (pause * 2).min(std::time::Duration::from_millis(100));
    };
    drop(g); // kills what is left of the group, so the pipes close
    Ok(Finished {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        timed_out,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// One test at a time: the panic hook kills every registered group of
    /// the process, the other tests' children too.
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// Holds off the other tests that start child groups (here and in
    /// [`super::super::fanout`]).
    pub(crate) fn one() -> std::sync::MutexGuard<'static, ()> {
        ONE.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A shell in its own group that starts a long sleep in the background
    /// and prints the sleep's pid.
    fn shell_with_grandchild() -> (ChildGroup, i32) {
        use std::io::BufRead;
        let mut g = ChildGroup::spawn(
            Command::new("sh")
                .args(["-c", "sleep 300 & echo $!; wait"])
                .stdout(std::process::Stdio::piped()),
        )
        .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(g.child().stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        (g, line.trim().parse().unwrap())
    }

    /// Whether `pid` exists and is not a zombie.
    #[cfg(target_os = "linux")]
    fn running(pid: i32) -> bool {
        crate::sys::process_alive(pid as u32)
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_panic_still_kills_the_group() {
        let _one = one();
        let r = std::panic::catch_unwind(|| {
            let (_g, grandchild) = shell_with_grandchild();
            assert!(running(grandchild));
            // Hand the pid out through the panic payload.
            std::panic::panic_any(grandchild);
        });
        let grandchild = *r.unwrap_err().downcast::<i32>().unwrap();
        assert!(
            !running(grandchild),
            "grandchild {grandchild} survived a panic"
        );
    }

    #[test]
    fn a_bounded_run_collects_output_and_is_killed_at_its_limit() {
        let _one = one();
        let f = run_bounded(
            Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]),
            std::time::Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(f.status.and_then(|s| s.code()), Some(3));
        assert_eq!((f.stdout.as_str(), f.stderr.as_str()), ("out\n", "err\n"));
        assert!(!f.timed_out);
        // Its limit leaves the shell time to start and print on a busy
        // machine (200 ms raced the shell's start), and ends its sleep.
        let start = std::time::Instant::now();
        let f = run_bounded(
            Command::new("sh").args(["-c", "echo started; sleep 30"]),
            std::time::Duration::from_secs(2),
        )
        .unwrap();
        assert!(f.timed_out && f.status.is_none());
        assert_eq!(f.stdout, "started\n");
        assert!(start.elapsed() < std::time::Duration::from_secs(20));
    }

    #[test]
    fn dropping_a_group_kills_and_reaps_its_grandchildren() {
        let _one = one();
        let (g, grandchild) = shell_with_grandchild();
        // SAFETY: probing a pid with signal 0.
        assert_eq!(unsafe { libc::kill(grandchild, 0) }, 0, "sleep runs");
        drop(g);
        // Dead, and on Linux (subreaper) reaped too: the pid is gone, not a zombie.
        #[cfg(target_os = "linux")]
        assert_ne!(
            unsafe { libc::kill(grandchild, 0) },
            0,
            "grandchild {grandchild} survived"
        );
    }
}
