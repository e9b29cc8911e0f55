//! Child processes and signals: every process a benchmark starts lives in a
//! process group of its own that is killed (SIGKILL to the whole group) and
//! reaped when its [`ChildGroup`] is dropped — on normal end, error, panic
//! (unwinding drops it; the panic hook kills too) and ^C. A group is
//! signalled only while its id is still its own: held by its leader or a
//! member not yet reaped (once they are gone the number may be any new
//! group of the machine's).
//!
//! SIGINT, SIGTERM and SIGHUP only set a flag ([`interrupted`]) that the
//! runner checks between operations; they are installed without
//! `SA_RESTART`, so a benchmark blocked in a read sees `EINTR`. Every
//! signal is the first one until the cleanup is done: a second one — a
//! user pressing ^C again, or the copy GNU `timeout` sends to the process
//! group after the one to the process — skips nothing (settings restored,
//! what finished written, children stopped and what they held freed, the
//! work directory removed). It says on standard error that the cleanup
//! goes on, what is still to do, and how to abandon it (kill -9, then
//! `scalebench restore`). Each step of the cleanup is bounded in time
//! (dropping a group gives up on processes that do not end within
//! [`REAP_LIMIT`]). On SIGHUP, standard output and error that went to a
//! terminal which hung up are pointed at /dev/null, so that no message
//! can fail.
//! On Linux and FreeBSD scalebench makes itself a subreaper, so
//! grandchildren orphaned by a killed helper are reaped here too.
//!
//! SIGKILL cannot be caught, so for that case every child is armed to die
//! with scalebench (see [`ChildGroup::spawn`]), and the work directory a
//! killed run leaves is removed by the next run
//! ([`super::workdir::WorkDir`]).

use std::process::{Child, Command};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use sys::stop::{self, Task};

const SLOTS: usize = 64;
/// The registered groups, each as a token: its id in the low 32 bits, a
/// number given once in the high ones (so that a group given an id again
/// is told from the one that had it); 0 is a free slot.
static GROUPS: [AtomicU64; SLOTS] = [const { AtomicU64::new(0) }; SLOTS];
/// The number of the next group registered.
static NEXT: AtomicU64 = AtomicU64::new(1);
static INSTALL: Once = Once::new();
/// Whether standard error was a terminal when the handlers were
/// installed (a message then starts on a line of its own, below a
/// progress bar).
static ERR_TTY: AtomicBool = AtomicBool::new(false);

/// How long dropping a [`ChildGroup`] waits for its processes to end
/// after SIGKILL without any of them ending before it gives up (a process
/// stuck in the kernel, in uninterruptible sleep, cannot be killed).
pub const REAP_LIMIT: Duration = Duration::from_secs(10);

/// Sends SIGKILL to every registered group whose id is still held by a
/// child of ours ([`id_held`]; only system calls: async-signal-safe).
fn kill_all_groups() {
    for g in &GROUPS {
        let pgid = g.load(Ordering::SeqCst) as u32 as i32;
        if pgid > 0 && id_held(pgid) {
            // SAFETY: kill() is async-signal-safe.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
        }
    }
}

/// A message built without allocating (in a signal handler).
struct Buf {
    b: [u8; 1024],
    len: usize,
}

impl Buf {
    fn push(&mut self, s: &str) {
        let n = s.len().min(self.b.len() - self.len);
        self.b[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
    }

    fn num(&mut self, mut v: u64) {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        // ASCII digits.
        self.push(std::str::from_utf8(&digits[i..]).unwrap_or("?"));
    }
}

/// The message for a repeated stop signal `sig`: the cleanup goes on,
/// what is still to do, how to abandon it. Async-signal-safe.
fn again_message(sig: i32, pid: u32, tty: bool, b: &mut Buf) {
    if tty {
        b.push("\n");
    }
    b.push("scalebench: ");
    b.push(stop::signal_name(sig));
    b.push(" again: the cleanup goes on, nothing is skipped. Still to do: ");
    let mut any = false;
    for t in Task::ALL {
        let n = stop::pending_count(t);
        if n == 0 {
            continue;
        }
        if any {
            b.push("; ");
        }
        any = true;
        let (head, tail) = t.words(n);
        b.push(head);
        if !tail.is_empty() {
            b.num(u64::from(n));
            b.push(tail);
        }
    }
    if !any {
        b.push("the last messages");
    }
    b.push(". Each step is bounded in time. To abandon it: kill -9 ");
    b.num(u64::from(pid));
    b.push(
        ", then `scalebench restore` (it restores the settings and removes the work directory).\n",
    );
}

/// After SIGHUP: standard output and error that go to a terminal which
/// hung up (a write returns EIO) are pointed at /dev/null.
fn after_hangup() {
    for fd in [libc::STDOUT_FILENO, libc::STDERR_FILENO] {
        // SAFETY: a zero-length write is async-signal-safe and changes
        // nothing; on a hung-up terminal it fails with EIO.
        let r = unsafe { libc::write(fd, c"".as_ptr().cast(), 0) };
        if r < 0 && sys::errno() == libc::EIO {
            stop::silence(fd);
        }
    }
}

extern "C" fn on_signal(sig: libc::c_int) {
    let saved = sys::errno();
    if sig == libc::SIGHUP {
        after_hangup();
    }
    if stop::interrupt(sig) > 1 {
        let mut b = Buf {
            b: [0; 1024],
            len: 0,
        };
        // SAFETY: getpid is async-signal-safe.
        let pid = unsafe { libc::getpid() } as u32;
        again_message(sig, pid, ERR_TTY.load(Ordering::Relaxed), &mut b);
        // SAFETY: write() of our own buffer is async-signal-safe; a
        // failure is ignored (nothing else could be done here).
        unsafe { libc::write(libc::STDERR_FILENO, b.b.as_ptr().cast(), b.len) };
    }
    sys::set_errno(saved);
}

/// Installs the signal handlers, the panic hook and (where the OS has it)
/// the subreaper flag. Idempotent.
pub fn install() {
    INSTALL.call_once(|| {
        use std::io::IsTerminal;
        ERR_TTY.store(std::io::stderr().is_terminal(), Ordering::Relaxed);
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
        sys::set_child_subreaper();
    });
}

/// A child process in a process group of its own, killed with its whole
/// group and reaped on drop.
pub struct ChildGroup {
    child: Child,
    pgid: i32,
    token: u64,
    slot: Option<usize>,
    _pending: stop::Pending,
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
                sys::die_with_parent(libc::SIGKILL);
                // The parent died before the signal was armed.
                if libc::getppid() != parent {
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
                Ok(())
            });
        }
        let child = cmd.process_group(0).spawn()?;
        let pgid = child.id() as i32;
        // A new process's id is no process group's id: a slot still
        // holding it belongs to a group whose leader was reaped and whose
        // members are gone, so its number now names this group.
        for g in &GROUPS {
            let v = g.load(Ordering::SeqCst);
            if v != 0 && v as u32 as i32 == pgid {
                let _ = g.compare_exchange(v, 0, Ordering::SeqCst, Ordering::SeqCst);
            }
        }
        let token = (NEXT.fetch_add(1, Ordering::SeqCst) << 32) | u64::from(pgid as u32);
        let slot = GROUPS.iter().position(|g| {
            g.compare_exchange(0, token, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        });
        Ok(ChildGroup {
            child,
            pgid,
            token,
            slot,
            _pending: stop::pending(Task::Children),
        })
    }

    /// The underlying child (for its pipes).
    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// The group's id (the leader's pid).
    pub fn pgid(&self) -> i32 {
        self.pgid
    }

    /// Whether the group's id still names this group, so that a signal to
    /// it reaches only its own processes. Once the leader is reaped and
    /// its members are gone, the number is free for any new process group
    /// of the machine (`kernel.pid_max` may be 32 768, and a fork
    /// benchmark goes round it in seconds): it is ours while the leader is
    /// our child not yet reaped (alive or a zombie, it holds its id) or a
    /// member is (members orphaned by the leader are re-parented to us as
    /// subreaper), and no group spawned since has been given the number.
    fn still_ours(&self) -> bool {
        if self
            .slot
            .is_some_and(|s| GROUPS[s].load(Ordering::SeqCst) != self.token)
        {
            return false;
        }
        id_held(self.pgid)
    }
}

/// Whether process group id `pgid` is held by a child of ours not yet
/// reaped: its leader, or a member of it.
fn id_held(pgid: i32) -> bool {
    unreaped_child(libc::P_PID, pgid) || unreaped_child(libc::P_PGID, pgid)
}

/// Whether a child of this process matching `id` (a pid or a process
/// group, by `which`) has not been reaped yet: alive, or ended and waiting
/// as a zombie. Nothing is reaped here (`WNOWAIT`).
fn unreaped_child(which: libc::idtype_t, id: i32) -> bool {
    loop {
        // SAFETY: a zeroed siginfo_t is a valid buffer for waitid.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid on our own children, not blocking, not reaping.
        let r = unsafe {
            libc::waitid(
                which,
                id as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        if r == 0 {
            return true;
        }
        if sys::errno() != libc::EINTR {
            return false; // ECHILD: none
        }
    }
}

impl ChildGroup {
    /// Waits for the leader and then every member of the group to end
    /// (they were sent SIGKILL), reaping them; gives up once none has
    /// ended for `limit`. Returns how many were reaped here and whether
    /// some were left.
    fn reap(&mut self, limit: Duration, members: bool) -> (u64, bool) {
        let mut reaped = 0;
        let mut last = Instant::now();
        let mut pause = Duration::from_micros(50);
        let mut wait = |progress: bool, last: &mut Instant| {
            if progress {
                *last = Instant::now();
                pause = Duration::from_micros(50);
                return true;
            }
            if last.elapsed() > limit {
                return false;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(10));
            true
        };
        // The leader first, through `Child` (so that std knows it ended).
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => {
                    reaped += 1;
                    break;
                }
                Ok(None) => {
                    if !wait(false, &mut last) {
                        return (reaped, true);
                    }
                }
                Err(_) => break, // reaped already
            }
        }
        // Members orphaned by the leader's death were re-parented to us
        // (subreaper) and share the group id: reap them all — unless the
        // id is another group's by now.
        if !members {
            return (reaped, false);
        }
        loop {
            let mut status = 0;
            // SAFETY: waitpid on our own process group, not blocking.
            let r = unsafe { libc::waitpid(-self.pgid, &mut status, libc::WNOHANG) };
            if r > 0 {
                reaped += 1;
                wait(true, &mut last);
            } else if r == 0 {
                // Members left that have not ended yet.
                if !wait(false, &mut last) {
                    return (reaped, true);
                }
            } else if sys::errno() != libc::EINTR {
                return (reaped, false); // none left (ECHILD)
            }
        }
    }
}

impl Drop for ChildGroup {
    fn drop(&mut self) {
        let ours = self.still_ours();
        if ours {
            // SAFETY: signalling a process group we created, its id held
            // by an unreaped child of ours (checked just above).
            unsafe { libc::kill(-self.pgid, libc::SIGKILL) };
        }
        let (reaped, left) = self.reap(REAP_LIMIT, ours);
        stop::stopped_group(reaped);
        if left {
            let m = format!(
                "process group {} did not end within {} s of SIGKILL (a process stuck in the kernel?): left unreaped",
                self.pgid,
                REAP_LIMIT.as_secs()
            );
            stop::did(m.clone());
            if !sys::stop::interrupted() {
                stop::say(&format!("scalebench: {m}"));
            }
        }
        if let Some(s) = self.slot {
            let _ = GROUPS[s].compare_exchange(self.token, 0, Ordering::SeqCst, Ordering::SeqCst);
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
        if stop_on_interrupt && sys::stop::interrupted() {
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
        shell_starting_sleep("sleep 300 & echo $!; wait")
    }

    /// A shell in its own group running `script`, which starts a sleep in
    /// the background and prints its pid first.
    fn shell_starting_sleep(script: &str) -> (ChildGroup, i32) {
        use std::io::BufRead;
        let mut g = ChildGroup::spawn(
            Command::new("sh")
                .args(["-c", script])
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
        sys::process_alive(pid as u32)
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
    fn a_repeated_signal_says_what_is_still_to_do_and_how_to_abandon_it() {
        let _db = stop::pending(Task::Database);
        let _s = stop::pending(Task::Settings);
        let mut b = Buf {
            b: [0; 1024],
            len: 0,
        };
        again_message(libc::SIGTERM, 4242, true, &mut b);
        let m = std::str::from_utf8(&b.b[..b.len]).unwrap();
        assert!(
            m.starts_with("\nscalebench: SIGTERM again: the cleanup goes on"),
            "{m}"
        );
        assert!(
            m.contains("stop PostgreSQL and free its shared memory")
                && m.contains("restore the settings the profile changed"),
            "{m}"
        );
        assert!(
            m.contains("kill -9 4242, then `scalebench restore`") && m.ends_with("directory).\n"),
            "{m}"
        );
        let mut n = Buf {
            b: [0; 1024],
            len: 0,
        };
        n.num(0);
        n.push(" ");
        n.num(18_446_744_073_709_551_615);
        assert_eq!(&n.b[..n.len], b"0 18446744073709551615");
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

    /// Waits (bounded) for the group's leader to end and reaps it.
    fn reap_leader(g: &mut ChildGroup) {
        let end = Instant::now() + Duration::from_secs(30);
        while g.child().try_wait().unwrap().is_none() {
            assert!(Instant::now() < end, "the leader did not end");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn a_group_whose_leader_was_reaped_and_members_are_gone_is_not_signalled() {
        let _one = one();
        let mut g = ChildGroup::spawn(&mut Command::new("true")).unwrap();
        assert!(
            g.still_ours(),
            "the leader, alive or a zombie, holds the id"
        );
        reap_leader(&mut g);
        // Its number may be any new process group's now.
        assert!(!g.still_ours());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn an_orphan_keeps_the_group_ours_and_dies_with_it() {
        let _one = one();
        // The leader ends at once, leaving its sleep (re-parented to us).
        let (mut g, orphan) = shell_starting_sleep("sleep 300 & echo $!");
        reap_leader(&mut g);
        assert!(running(orphan));
        assert!(g.still_ours(), "a member of ours holds the id");
        drop(g);
        assert!(!running(orphan), "orphan {orphan} survived");
    }

    #[test]
    fn a_group_whose_number_was_given_again_is_not_signalled() {
        let _one = one();
        let g = ChildGroup::spawn(Command::new("sleep").arg("300")).unwrap();
        let s = g.slot.expect("a free slot");
        // What a later spawn given the same id does to the earlier entry.
        GROUPS[s].store(0, Ordering::SeqCst);
        assert!(!g.still_ours());
        GROUPS[s].store(g.token, Ordering::SeqCst);
        assert!(g.still_ours());
        drop(g);
        assert_eq!(GROUPS[s].load(Ordering::SeqCst), 0, "the slot is freed");
    }
}
