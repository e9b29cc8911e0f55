//! `socket-threads`: socket(AF_INET, SOCK_STREAM) in a process of several
//! threads, with n sockets already open. What it is for is the worst case
//! at each n, not the median: when the descriptor table is full, the
//! kernel allocates one twice the size and copies the old one over, and
//! when the table is shared by more than one thread, Linux's
//! `expand_fdtable()` first waits for an RCU grace period
//! (`synchronize_rcu()`, so that no other thread is still installing a
//! descriptor into the old table). That one socket() takes milliseconds
//! where the others take a microsecond; the median does not move, the
//! maximum at that n does. So this series records its maximum per n as
//! meaning something ([`Benchmark::max_matters`]), and reports show it.
//!
//! n is the sockets open. The sockets are opened by a worker thread of the
//! run, which first takes a descriptor table of its own (Linux:
//! `unshare(CLONE_FILES)`, then every copied descriptor but standard
//! input, output and error closed: a table sized by what scalebench has
//! open, not by how far earlier runs grew the process's) and then starts
//! 4 idle threads that share that table and only wait (they are joined
//! when the run ends). The worker times each socket() on the run's clock
//! itself. A table never shrinks, so a run only goes up, each run in a
//! fresh table: its growths (each time it doubles: at 64, 128, 256, …
//! descriptors, from the size it starts at) are timed in every run, and
//! after each run a fresh one re-times the lowest n. Where a thread cannot
//! have a table of its own (the BSDs and macOS keep one per process) the
//! worker uses the process's, which only the first run sees grow.
//!
//! Expected: O(1) in the median on every kernel; the maximum steps at each
//! growth of the table.

use super::{Benchmark, Info, Run, StartError, StepError, step_error_for};
use crate::ctx::Ctx;
use crate::harness::Resource;
use crate::harness::clock::Stopwatch;
use crate::harness::rawclock::Source;
use crate::sys::Knob;
use anyhow::anyhow;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;

/// The `socket-threads` benchmark.
pub struct SocketThreads;

static INFO: Info = Info {
    name: "socket-threads",
    n_meaning: "open descriptors (sockets this run holds, in a table shared by 5 threads)",
    timed: "socket(AF_INET, SOCK_STREAM, 0) in a process with 4 more threads sharing the \
            descriptor table; every socket stays open",
    uses: &[Resource::Descriptors],
    knobs: &[Knob::FilesSystem, Knob::FilesPerProcess],
    quick_n: 4_000,
    full_n: 10_000,
};

/// Why this series' maximum per n matters (recorded with it).
const MAX_MATTERS: &str = "a socket() that grows the descriptor table of a multi-threaded \
    process waits for an RCU grace period (Linux: expand_fdtable, synchronize_rcu)";

/// How long a run waits before its first socket: longer than the
/// kernel takes to free the previous run's thousands of sockets (after
/// RCU grace periods). A run that starts at once finds that memory at
/// hand and is cheap at low n, dearer as it goes on, so its rise with n
/// is its time since the last close (as bind's two levels are,
/// docs/analysis.md §5): on this machine six sets of 8 runs (`run
/// socket-threads --runs 8`, 2026-12-06) gave O(1) four times and
/// undecided twice, their runs' high-to-low ratios 0.82–1.6; with this
/// pause, alternating with those, O(1) six times in six.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(150);

/// Idle threads sharing the worker's table.
pub(crate) const IDLE_THREADS: usize = 4;

/// What the worker is asked.
enum Cmd {
    /// Open one more socket, timed.
    Open,
    /// Close the socket opened last.
    Close,
}

/// The worker's answer: the ticks socket() took and the descriptor it
/// returned (when ready: 0 and whether the table is the worker's own; for
/// a close: 0 and 0), or the errno a call failed with.
type Answer = Result<(u64, i32), i32>;

struct SocketThreadsRun {
    tx: Option<Sender<Cmd>>,
    rx: Receiver<Answer>,
    worker: Option<JoinHandle<()>>,
    held: u64,
    /// Whether the worker's table is its own, and the descriptor the last
    /// socket() returned (for the tests).
    #[cfg_attr(not(test), allow(dead_code))]
    own_table: bool,
    #[cfg_attr(not(test), allow(dead_code))]
    last_fd: i32,
}

impl Benchmark for SocketThreads {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn max_matters(&self) -> Option<&'static str> {
        Some(MAX_MATTERS)
    }

    /// The threads' stacks stay with the C library once they are joined
    /// (glibc keeps them for later threads).
    fn library_keeps_mappings(&self) -> bool {
        true
    }

    /// Waits [`SETTLE`] first: see there.
    fn start(&self, ctx: &Ctx, _variant: Option<&str>, n: u64) -> Result<Box<dyn Run>, StartError> {
        std::thread::sleep(SETTLE);
        Ok(Box::new(SocketThreadsRun::new(ctx.clock().source(), n)?))
    }
}

/// Reads one byte from `fd` until it ends: an idle thread's whole life.
fn idle(fd: i32) {
    let mut b = 0u8;
    loop {
        // SAFETY: reading one byte into a local.
        let r = unsafe { libc::read(fd, (&mut b as *mut u8).cast(), 1) };
        if r == 0 || (r < 0 && crate::sys::errno() != libc::EINTR) {
            return;
        }
    }
}

/// The worker: its own table, its idle threads, then one command at a
/// time until the run drops its end of the channel.
fn work(source: Source, n: u64, cmds: Receiver<Cmd>, answers: Sender<Answer>) {
    let ready = (|| -> std::io::Result<(bool, i32, i32, Vec<JoinHandle<()>>)> {
        let own = crate::sys::private_descriptor_table()?;
        let mut p = [-1i32; 2];
        // SAFETY: pipe() fills two descriptors.
        if unsafe { libc::pipe(p.as_mut_ptr()) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut idlers = Vec::with_capacity(IDLE_THREADS);
        for i in 0..IDLE_THREADS {
            let rd = p[0];
            let b = std::thread::Builder::new().name(format!("sb-idle-{i}"));
            match b.spawn(move || idle(rd)) {
                Ok(h) => idlers.push(h),
                Err(e) => {
                    stop_idlers(p, idlers);
                    return Err(e);
                }
            }
        }
        Ok((own, p[0], p[1], idlers))
    })();
    let (own, rd, wr, idlers) = match ready {
        Ok(r) => r,
        Err(e) => {
            let _ = answers.send(Err(e.raw_os_error().unwrap_or(0)));
            return;
        }
    };
    let _ = answers.send(Ok((0, i32::from(own))));
    let mut fds: Vec<i32> = Vec::with_capacity(n as usize);
    while let Ok(cmd) = cmds.recv() {
        let answer = match cmd {
            Cmd::Open => {
                let t0 = source.read();
                // SAFETY: plain socket() call.
                let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) };
                let t1 = source.read();
                if fd < 0 {
                    Err(crate::sys::errno())
                } else {
                    fds.push(fd);
                    Ok((t1.wrapping_sub(t0), fd))
                }
            }
            Cmd::Close => {
                if let Some(fd) = fds.pop() {
                    // SAFETY: closing a socket this worker opened.
                    unsafe { libc::close(fd) };
                }
                Ok((0, 0))
            }
        };
        if answers.send(answer).is_err() {
            break;
        }
    }
    for fd in fds {
        // SAFETY: closing the sockets this worker opened.
        unsafe { libc::close(fd) };
    }
    stop_idlers([rd, wr], idlers);
}

/// Ends the idle threads (their pipe's write end closed, they read its
/// end) and joins them, then closes the read end.
fn stop_idlers(pipe: [i32; 2], idlers: Vec<JoinHandle<()>>) {
    // SAFETY: closing the pipe's write end, which only the worker holds.
    unsafe { libc::close(pipe[1]) };
    for h in idlers {
        let _ = h.join();
    }
    // SAFETY: every reader is gone.
    unsafe { libc::close(pipe[0]) };
}

impl SocketThreadsRun {
    /// Starts the worker and waits until its table and threads exist.
    fn new(source: Source, n: u64) -> Result<SocketThreadsRun, StartError> {
        let (tx, cmds) = channel();
        let (answers, rx) = channel();
        let worker = std::thread::Builder::new()
            .name("sb-socket-worker".into())
            .spawn(move || work(source, n, cmds, answers))
            .map_err(|e| anyhow!("starting the worker thread: {e}"))?;
        let mut run = SocketThreadsRun {
            tx: Some(tx),
            rx,
            worker: Some(worker),
            held: 0,
            own_table: false,
            last_fd: -1,
        };
        match run.rx.recv() {
            Ok(Ok((_, own))) => {
                run.own_table = own == 1;
                Ok(run)
            }
            Ok(Err(errno)) => {
                let e = std::io::Error::from_raw_os_error(errno);
                Err(anyhow!("preparing the worker's descriptor table and its {IDLE_THREADS} idle threads: {e}").into())
            }
            Err(_) => Err(anyhow!("the worker thread ended before it was ready").into()),
        }
    }

    /// Asks the worker and waits for its answer.
    fn ask(&mut self, cmd: Cmd) -> Result<Answer, StepError> {
        let gone = || StepError::from(anyhow!("the worker thread is gone"));
        self.tx.as_ref().ok_or_else(gone)?.send(cmd).map_err(|_| gone())?;
        self.rx.recv().map_err(|_| gone())
    }
}

impl Run for SocketThreadsRun {
    fn held(&self) -> u64 {
        self.held
    }

    fn op(&mut self, sw: &mut Stopwatch) -> Result<(), StepError> {
        match self.ask(Cmd::Open)? {
            Ok((ticks, fd)) => {
                sw.record_ticks(ticks);
                self.last_fd = fd;
                self.held += 1;
                Ok(())
            }
            Err(errno) => {
                let limits = [libc::EMFILE, libc::ENFILE, libc::ENOBUFS, libc::ENOMEM];
                Err(step_error_for("socket()", self.held, Resource::Descriptors, &limits, errno))
            }
        }
    }

    fn undo(&mut self, _sw: &mut Stopwatch) -> Result<(), StepError> {
        if self.held > 0 {
            self.ask(Cmd::Close)?.map_err(|e| anyhow!("close(): errno {e}"))?;
            self.held -= 1;
        }
        Ok(())
    }
}

impl Drop for SocketThreadsRun {
    /// Ends the worker (it closes its sockets and joins its threads).
    fn drop(&mut self) {
        self.tx = None;
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::clock::Clock;
    use crate::results::TimerKind;

    /// This process's threads named by a run (the worker and its idle
    /// threads: `sb-socket-worke`, `sb-idle-0`, …), where the OS tells
    /// (Linux); other tests' threads come and go meanwhile.
    fn threads() -> Option<usize> {
        let named = std::fs::read_dir("/proc/self/task")
            .ok()?
            .flatten()
            .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
            .filter(|c| c.starts_with("sb-socket") || c.starts_with("sb-idle"))
            .count();
        Some(named)
    }

    #[test]
    fn a_run_opens_in_a_table_of_its_own_shared_with_its_idle_threads() {
        let clock = Clock::new(TimerKind::Monotonic).unwrap();
        let before = threads();
        let mut run = SocketThreadsRun::new(clock.source(), 300).unwrap();
        if let (Some(b), Some(now)) = (before, threads()) {
            assert_eq!((b, now), (0, 1 + IDLE_THREADS), "the worker and its threads");
        }
        assert_eq!(run.own_table, cfg!(target_os = "linux"));
        let mut sw = Stopwatch::new(&clock);
        for i in 0..300 {
            assert_eq!(run.held(), i);
            run.op(&mut sw).unwrap();
            assert!(sw.take_ns().is_some());
            if run.own_table {
                // A table of its own: after 0, 1, 2 and the idle threads'
                // pipe, the sockets take every descriptor in turn.
                assert_eq!(run.last_fd, 5 + i as i32);
            }
        }
        for i in (0..300).rev() {
            run.undo(&mut sw).unwrap();
            assert_eq!(run.held(), i);
        }
        assert!(SocketThreads.max_matters().unwrap().contains("synchronize_rcu"));
        drop(run);
        // A joined thread may linger in /proc for a moment as the kernel
        // releases it.
        let gone = (0..100).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(10));
            threads().unwrap_or(0) == 0
        });
        assert!(gone, "every thread joined: {:?} left", threads());
    }
}
