//! The process-wide stop flag: set once SIGINT, SIGTERM or SIGHUP arrived
//! (by the handler [`harness::reaper`] installs). Every loop that
//! can run long — a benchmark's operations, a load generator's requests, a
//! client blocked in a read that returns `EINTR` — checks it, so that the
//! modules below the harness ([`net`]) can stop without knowing the
//! harness.
//!
//! Every signal is the first one until the cleanup is done: a second one
//! (or a process group's copy of the first, as GNU `timeout` sends) skips
//! nothing. What the cleanup still has to do is counted here ([`pending`])
//! so that the handler can say so on a repeated signal, and what it did is
//! recorded ([`did`], [`stopped_group`]) so that the command can say it at
//! the end ([`record`]). Messages about it go through [`say`], which never
//! fails: a terminal that hung up (SIGHUP) or a pipe whose reader was
//! interrupted along with scalebench (`scalebench run … | tee log`, ^C)
//! must not turn the cleanup into a panic.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static SIGNALS: AtomicU32 = AtomicU32::new(0);
static FIRST: AtomicI32 = AtomicI32::new(0);

/// True once a stop signal arrived.
#[inline]
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// Records stop signal `sig` and sets the flag (async-signal-safe);
/// returns how many stop signals have arrived, this one included (2 or
/// more: a repeated signal).
pub fn interrupt(sig: i32) -> u32 {
    let _ = FIRST.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
    INTERRUPTED.store(true, Ordering::SeqCst);
    SIGNALS.fetch_add(1, Ordering::SeqCst) + 1
}

/// The first stop signal (0: none yet) and how many arrived.
pub fn signals() -> (i32, u32) {
    (FIRST.load(Ordering::SeqCst), SIGNALS.load(Ordering::SeqCst))
}

/// The name of a stop signal (`SIGINT`), async-signal-safe.
pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

/// A part of the cleanup that may still be ahead when a signal arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    /// A measurement under way, which stops at its next check.
    Measuring,
    /// A throwaway PostgreSQL cluster to stop, its shared memory to free.
    Database,
    /// Child process groups to kill and reap.
    Children,
    /// Settings a tuning profile changed, to put back.
    Settings,
    /// A result file to write.
    Results,
    /// The work directory to remove.
    WorkDir,
}

impl Task {
    /// Every task, in the order the cleanup usually does them.
    pub const ALL: [Task; 6] = [
        Task::Measuring,
        Task::Database,
        Task::Children,
        Task::Settings,
        Task::Results,
        Task::WorkDir,
    ];

    fn index(self) -> usize {
        self as usize
    }

    /// What is to do, in words (for `n` of them where that counts).
    pub fn words(self, n: u32) -> (&'static str, &'static str) {
        match self {
            Task::Measuring => ("end the measurement under way", ""),
            Task::Database => ("stop PostgreSQL and free its shared memory", ""),
            Task::Children if n == 1 => ("stop and reap 1 child process group", ""),
            Task::Children => ("stop and reap ", " child process groups"),
            Task::Settings => ("restore the settings the profile changed", ""),
            Task::Results => ("write the result file", ""),
            Task::WorkDir => ("remove the work directory", ""),
        }
    }
}

static PENDING: [AtomicU32; Task::ALL.len()] = [const { AtomicU32::new(0) }; Task::ALL.len()];

/// One piece of cleanup still ahead, counted until dropped.
#[derive(Debug)]
pub struct Pending(Task);

impl Drop for Pending {
    fn drop(&mut self) {
        PENDING[self.0.index()].fetch_sub(1, Ordering::SeqCst);
    }
}

/// Counts `task` as still to do until the guard is dropped.
pub fn pending(task: Task) -> Pending {
    PENDING[task.index()].fetch_add(1, Ordering::SeqCst);
    Pending(task)
}

/// How many of `task` are still to do (async-signal-safe).
pub fn pending_count(task: Task) -> u32 {
    PENDING[task.index()].load(Ordering::SeqCst)
}

static DONE: Mutex<Vec<String>> = Mutex::new(Vec::new());
static GROUPS_STOPPED: AtomicU64 = AtomicU64::new(0);
static PROCESSES_REAPED: AtomicU64 = AtomicU64::new(0);

/// Records one thing the cleanup after a stop signal did (in words, as
/// "restored kernel.msgmax 8193 → 8192"); nothing before a signal.
pub fn did(what: impl Into<String>) {
    if interrupted() {
        DONE.lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(what.into());
    }
}

/// Records that a child process group was stopped after a stop signal,
/// `processes` of its processes reaped here.
pub fn stopped_group(processes: u64) {
    if interrupted() {
        GROUPS_STOPPED.fetch_add(1, Ordering::SeqCst);
        PROCESSES_REAPED.fetch_add(processes, Ordering::SeqCst);
    }
}

/// What the cleanup after the stop signal did, in words, in order: the
/// child process groups stopped, then each thing [`did`] recorded.
pub fn record() -> Vec<String> {
    let mut v = Vec::new();
    let groups = GROUPS_STOPPED.load(Ordering::SeqCst);
    if groups > 0 {
        let procs = PROCESSES_REAPED.load(Ordering::SeqCst);
        v.push(format!(
            "stopped {groups} child process group{} ({procs} process{} reaped)",
            if groups == 1 { "" } else { "s" },
            if procs == 1 { "" } else { "es" }
        ));
    }
    v.extend(
        DONE.lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned(),
    );
    v
}

/// Writes `line` and a newline to standard error, never failing: when
/// standard error is gone (a hung-up terminal, a pipe whose reader ended)
/// it is pointed at /dev/null, so that no later message (an `eprintln!`,
/// which would panic) can fail either.
pub fn say(line: &str) {
    let mut text = String::with_capacity(line.len() + 1);
    text.push_str(line);
    text.push('\n');
    say_raw(&text);
}

/// Writes `text` as it is to standard error, never failing (as [`say`]).
pub fn say_raw(text: &str) {
    use std::io::Write;
    let r = std::io::stderr().lock().write_all(text.as_bytes());
    if let Err(e) = r
        && e.kind() != std::io::ErrorKind::Interrupted
    {
        silence(libc::STDERR_FILENO);
    }
}

/// Writes `text` as it is to standard output, never failing: when its
/// reader has gone (`scalebench … | head -1`) standard output is pointed
/// at /dev/null, so that the command ends with its own exit status, not a
/// panic. For messages; result files and reports go through writers that
/// report their errors.
pub fn out_raw(text: &str) {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    let r = o.write_all(text.as_bytes()).and_then(|()| o.flush());
    if let Err(e) = r
        && e.kind() != std::io::ErrorKind::Interrupted
    {
        silence(libc::STDOUT_FILENO);
    }
}

/// `eprintln!` that never panics: a line to standard error through
/// [`stop::say`](crate::stop::say).
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::stop::say(&format!($($arg)*))
    };
}

/// `println!` that never panics: a line to standard output through
/// [`stop::out_raw`](crate::stop::out_raw).
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        let mut line = format!($($arg)*);
        line.push('\n');
        $crate::stop::out_raw(&line)
    }};
}

/// Points descriptor `fd` at /dev/null (async-signal-safe): what is
/// written there from now on is dropped instead of failing.
pub fn silence(fd: i32) {
    // SAFETY: open, dup2 and close are async-signal-safe; the path is a
    // NUL-terminated literal.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if null >= 0 {
            libc::dup2(null, fd);
            if null != fd {
                libc::close(null);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_work_is_counted_while_its_guard_lives() {
        let before = pending_count(Task::WorkDir);
        let a = pending(Task::WorkDir);
        let b = pending(Task::WorkDir);
        assert_eq!(pending_count(Task::WorkDir), before + 2);
        drop(a);
        assert_eq!(pending_count(Task::WorkDir), before + 1);
        drop(b);
        assert_eq!(pending_count(Task::WorkDir), before);
    }

    #[test]
    fn every_task_has_words() {
        for t in Task::ALL {
            assert!(!t.words(2).0.is_empty(), "{t:?}");
        }
        assert_eq!(
            Task::Children.words(3),
            ("stop and reap ", " child process groups")
        );
    }
}
