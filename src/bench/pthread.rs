//! `pthread`: pthread_create with n threads alive (fefe's thread test).
//! The new thread signals that it runs and then waits; the time runs until
//! the creating thread has seen the signal — pthread_create itself (stack
//! mapping, the kernel's clone) and the scheduler getting the new thread
//! to run. Every live thread is one more task for the scheduler and one
//! more stack mapping for the address space.
//!
//! Each OS has one thread library today (glibc's NPTL or musl on Linux,
//! libthr on FreeBSD and DragonFly, libpthread on NetBSD, librthread on
//! OpenBSD, libpthread on macOS), so there are no variants: the series
//! measures whichever the system has, with the default attributes (the
//! default stack size) an application gets.

use super::{Benchmark, Info, Run, StartError, StepError, step_error, step_error_for};
use crate::harness::clock::Stopwatch;
use crate::ctx::Ctx;
use crate::harness::Resource;
use crate::sys::Knob;

/// The `pthread` benchmark.
pub struct Pthread;

static INFO: Info = Info {
    name: "pthread",
    n_meaning: "live threads (each blocked in read() on a pipe)",
    timed: "pthread_create() until the creating thread has read the byte the new thread wrote to a pipe (default attributes)",
    uses: &[Resource::Processes, Resource::Mappings],
    knobs: &[Knob::Processes, Knob::ProcessesPerUser, Knob::Mappings],
    quick_n: 1_000,
    full_n: 10_000,
};

/// The pipes a run's threads share: each new thread writes one byte to
/// `started`; live threads block reading `quit`, and the one that gets a
/// byte writes its index to `ended` and returns. Only plain reads and
/// writes: the waiting threads are not futex waiters of ours (condition
/// variables would put each in the kernel's futex hash). The growth does
/// not come from them: `--why` finds it in the kernel's futex_wake with
/// pipes as with condition variables (docs/measurements.md, "Figures
/// behind the code's choices").
struct Pipes {
    started: [i32; 2],
    quit: [i32; 2],
    ended: [i32; 2],
}

/// What a thread is given: the pipes and its index.
struct Arg {
    pipes: *const Pipes,
    index: usize,
}

/// Reads exactly one `T`-sized message, through EINTR.
fn read_exact(fd: i32, buf: &mut [u8]) -> bool {
    let mut got = 0;
    while got < buf.len() {
        // SAFETY: reading into the rest of `buf`.
        let r = unsafe { libc::read(fd, buf[got..].as_mut_ptr().cast(), buf.len() - got) };
        if r > 0 {
            got += r as usize;
        } else if r < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
        {
            continue;
        } else {
            return false;
        }
    }
    true
}

/// Writes all of `buf`, through EINTR.
fn write_all(fd: i32, buf: &[u8]) -> bool {
    let mut put = 0;
    while put < buf.len() {
        // SAFETY: writing the rest of `buf`.
        let r = unsafe { libc::write(fd, buf[put..].as_ptr().cast(), buf.len() - put) };
        if r > 0 {
            put += r as usize;
        } else if r < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
        {
            continue;
        } else {
            return false;
        }
    }
    true
}

/// The thread's body: signal, wait for a quit byte, say who ended.
extern "C" fn body(arg: *mut libc::c_void) -> *mut libc::c_void {
    // SAFETY: `arg` is the `Box<Arg>` leaked by `op` for this thread.
    let arg = unsafe { Box::from_raw(arg as *mut Arg) };
    // SAFETY: the pipes outlive every thread (the run joins them all
    // before it closes them).
    let pipes = unsafe { &*arg.pipes };
    write_all(pipes.started[1], &[1]);
    let mut b = [0u8; 1];
    read_exact(pipes.quit[0], &mut b);
    write_all(pipes.ended[1], &arg.index.to_ne_bytes());
    std::ptr::null_mut()
}

struct PthreadRun {
    pipes: Box<Pipes>,
    /// Live threads by the index each was given (a thread reports it when
    /// it ends); `None` for a free slot.
    slots: Vec<Option<libc::pthread_t>>,
    /// Free slots, reused first.
    free: Vec<usize>,
    /// Live threads.
    live: usize,
}

impl PthreadRun {
    fn new(n: u64) -> Result<PthreadRun, StartError> {
        let mut fds = [[-1i32; 2]; 3];
        for p in &mut fds {
            // SAFETY: pipe() fills two descriptors.
            if unsafe { libc::pipe(p.as_mut_ptr()) } != 0 {
                let e = std::io::Error::last_os_error();
                for q in &fds {
                    for &fd in q.iter().filter(|&&fd| fd >= 0) {
                        // SAFETY: closing what this loop opened.
                        unsafe { libc::close(fd) };
                    }
                }
                return Err(StartError::from(anyhow::anyhow!("pipe(): {e}")));
            }
        }
        Ok(PthreadRun {
            pipes: Box::new(Pipes {
                started: fds[0],
                quit: fds[1],
                ended: fds[2],
            }),
            slots: Vec::with_capacity(n as usize),
            free: Vec::new(),
            live: 0,
        })
    }

    /// Ends one live thread (whichever reads the quit byte) and joins it;
    /// `false` when it could not.
    fn end_one(&mut self) -> bool {
        if self.live == 0 || !write_all(self.pipes.quit[1], &[0]) {
            return false;
        }
        let mut b = [0u8; std::mem::size_of::<usize>()];
        if !read_exact(self.pipes.ended[0], &mut b) {
            return false;
        }
        let i = usize::from_ne_bytes(b);
        let Some(id) = self.slots.get_mut(i).and_then(Option::take) else {
            return false;
        };
        // SAFETY: joining a thread of this run that has ended its body.
        unsafe { libc::pthread_join(id, std::ptr::null_mut()) };
        self.free.push(i);
        self.live -= 1;
        true
    }
}

impl Benchmark for Pthread {
    fn info(&self) -> &'static Info {
        &INFO
    }

    /// Ending a thread returns the process to one thread fewer.
    fn downwards(&self) -> bool {
        true
    }

    /// glibc keeps up to 40 MB of joined threads' stacks mapped for the
    /// next threads.
    fn library_keeps_mappings(&self) -> bool {
        true
    }

    fn start(&self, _ctx: &Ctx, _variant: Option<&str>, n: u64) -> Result<Box<dyn Run>, StartError> {
        Ok(Box::new(PthreadRun::new(n)?))
    }
}

impl Run for PthreadRun {
    fn held(&self) -> u64 {
        self.live as u64
    }

    fn op(&mut self, sw: &mut Stopwatch) -> Result<(), StepError> {
        let index = self.free.last().copied().unwrap_or(self.slots.len());
        let arg = Box::into_raw(Box::new(Arg {
            pipes: &*self.pipes,
            index,
        })) as *mut libc::c_void;
        // SAFETY: pthread_t is plain data, written by pthread_create.
        let mut id: libc::pthread_t = unsafe { std::mem::zeroed() };
        let mut b = [0u8; 1];
        sw.start();
        // SAFETY: `body` takes ownership of `arg`.
        let r = unsafe { libc::pthread_create(&mut id, std::ptr::null(), body, arg) };
        let signalled = r == 0 && read_exact(self.pipes.started[0], &mut b);
        sw.stop();
        if r != 0 {
            // SAFETY: the thread was not made: free its argument.
            drop(unsafe { Box::from_raw(arg as *mut Arg) });
            // pthread_create returns the error instead of setting errno.
            return Err(step_error_for(
                "pthread_create()",
                self.held(),
                Resource::Processes,
                &[libc::EAGAIN, libc::ENOMEM],
                r,
            ));
        }
        if index == self.slots.len() {
            self.slots.push(Some(id));
        } else {
            self.free.pop();
            self.slots[index] = Some(id);
        }
        self.live += 1;
        if !signalled {
            return Err(step_error("read() of the new thread's byte", self.held(), Resource::Processes, &[]));
        }
        Ok(())
    }

    fn undo(&mut self, _sw: &mut Stopwatch) -> Result<(), StepError> {
        if self.live > 0 && !self.end_one() {
            return Err(step_error("ending a thread", self.held(), Resource::Processes, &[]));
        }
        Ok(())
    }
}

impl Drop for PthreadRun {
    fn drop(&mut self) {
        while self.live > 0 {
            if !self.end_one() {
                // Cannot tell a thread to end: leave the pipes open (the
                // threads read them) rather than close them under it.
                return;
            }
        }
        for fd in [self.pipes.started, self.pipes.quit, self.pipes.ended].concat() {
            // SAFETY: closing this run's pipes; no thread is left.
            unsafe { libc::close(fd) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_are_made_counted_ended_and_their_slots_reused() {
        use crate::harness::clock::Clock;
use crate::results::TimerKind;
        let clock = Clock::new(TimerKind::Monotonic).unwrap();
        let mut sw = Stopwatch::new(&clock);
        let mut run = PthreadRun::new(50).unwrap();
        for _ in 0..50 {
            run.op(&mut sw).unwrap();
        }
        assert_eq!(run.held(), 50);
        assert!(sw.take_ns().is_some(), "timed");
        for _ in 0..10 {
            run.undo(&mut sw).unwrap();
        }
        assert_eq!(run.held(), 40);
        assert_eq!(run.free.len(), 10);
        assert_eq!(run.slots.iter().filter(|s| s.is_some()).count(), 40);
        for _ in 0..15 {
            run.op(&mut sw).unwrap();
        }
        assert_eq!(run.held(), 55);
        assert!(run.free.is_empty(), "freed slots are taken first");
        assert_eq!(run.slots.len(), 55);
        let fds = run.pipes.started[0];
        drop(run);
        // SAFETY: asking whether the descriptor is still open.
        assert_eq!(
            unsafe { libc::fcntl(fds, libc::F_GETFD) },
            -1,
            "every thread ended, then the pipes closed"
        );
    }
}
