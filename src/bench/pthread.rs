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

use super::{Benchmark, Info, Run, StartError, StepError, step_error_for};
use crate::harness::clock::Stopwatch;
use crate::harness::{Ctx, Resource};
use crate::sys::Knob;
use std::sync::{Arc, Condvar, Mutex};

/// The `pthread` benchmark.
pub struct Pthread;

static INFO: Info = Info {
    name: "pthread",
    n_meaning: "live threads (each waiting on its own condition variable)",
    timed: "pthread_create() until the creating thread has seen the new thread's signal (default attributes)",
    uses: &[Resource::Processes, Resource::Mappings],
    knobs: &[Knob::Processes, Knob::ProcessesPerUser, Knob::Mappings],
    quick_n: 2_000,
    full_n: 10_000,
};

/// What a thread and its creator share: `started` is set by the thread,
/// `stop` by the creator.
#[derive(Default)]
struct Shared {
    state: Mutex<(bool, bool)>,
    cv: Condvar,
}

/// The thread's body: signal, then wait until told to stop.
extern "C" fn body(arg: *mut libc::c_void) -> *mut libc::c_void {
    // SAFETY: `arg` is the `Arc<Shared>` leaked by `op` for this thread;
    // taking it back here gives the thread its reference.
    let shared: Arc<Shared> = unsafe { Arc::from_raw(arg as *const Shared) };
    let mut s = shared.state.lock().unwrap_or_else(|e| e.into_inner());
    s.0 = true;
    shared.cv.notify_all();
    while !s.1 {
        s = shared.cv.wait(s).unwrap_or_else(|e| e.into_inner());
    }
    std::ptr::null_mut()
}

/// A live thread.
struct Live {
    id: libc::pthread_t,
    shared: Arc<Shared>,
}

impl Live {
    /// Tells the thread to stop and joins it.
    fn end(self) {
        {
            let mut s = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
            s.1 = true;
            self.shared.cv.notify_all();
        }
        // SAFETY: joining a thread this run created and has not joined.
        unsafe { libc::pthread_join(self.id, std::ptr::null_mut()) };
    }
}

struct PthreadRun {
    threads: Vec<Live>,
}

impl Benchmark for Pthread {
    fn info(&self) -> &'static Info {
        &INFO
    }

    /// Ending the newest thread returns the process to one thread fewer.
    fn downwards(&self) -> bool {
        true
    }

    /// glibc keeps up to 40 MB of joined threads' stacks mapped for the
    /// next threads.
    fn library_keeps_mappings(&self) -> bool {
        true
    }

    fn start(&self, _ctx: &Ctx, _variant: Option<&str>, n: u64) -> Result<Box<dyn Run>, StartError> {
        Ok(Box::new(PthreadRun {
            threads: Vec::with_capacity(n as usize),
        }))
    }
}

impl Run for PthreadRun {
    fn held(&self) -> u64 {
        self.threads.len() as u64
    }

    fn op(&mut self, sw: &mut Stopwatch) -> Result<(), StepError> {
        let shared = Arc::new(Shared::default());
        let arg = Arc::into_raw(shared.clone()) as *mut libc::c_void;
        // SAFETY: pthread_t is plain data, written by pthread_create.
        let mut id: libc::pthread_t = unsafe { std::mem::zeroed() };
        sw.start();
        // SAFETY: `body` takes ownership of `arg` (one Arc reference).
        let r = unsafe { libc::pthread_create(&mut id, std::ptr::null(), body, arg) };
        if r == 0 {
            let mut s = shared.state.lock().unwrap_or_else(|e| e.into_inner());
            while !s.0 {
                s = shared.cv.wait(s).unwrap_or_else(|e| e.into_inner());
            }
        }
        sw.stop();
        if r != 0 {
            // SAFETY: the thread was not made: take its reference back.
            drop(unsafe { Arc::from_raw(arg as *const Shared) });
            // pthread_create returns the error instead of setting errno.
            return Err(step_error_for(
                "pthread_create()",
                self.held(),
                Resource::Processes,
                &[libc::EAGAIN, libc::ENOMEM],
                r,
            ));
        }
        self.threads.push(Live { id, shared });
        Ok(())
    }

    fn undo(&mut self, _sw: &mut Stopwatch) -> Result<(), StepError> {
        if let Some(t) = self.threads.pop() {
            t.end();
        }
        Ok(())
    }
}

impl Drop for PthreadRun {
    fn drop(&mut self) {
        while let Some(t) = self.threads.pop() {
            t.end();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_are_made_counted_and_ended() {
        use crate::harness::clock::{Clock, TimerKind};
        let clock = Clock::new(TimerKind::Monotonic).unwrap();
        let mut sw = Stopwatch::new(&clock);
        let mut run = PthreadRun {
            threads: Vec::new(),
        };
        for _ in 0..50 {
            run.op(&mut sw).unwrap();
        }
        assert_eq!(run.held(), 50);
        assert!(
            run.threads
                .iter()
                .all(|t| t.shared.state.lock().unwrap().0),
            "every thread signalled before its creation was timed as done"
        );
        let last = run.threads.last().unwrap().shared.clone();
        run.undo(&mut sw).unwrap();
        assert_eq!(run.held(), 49);
        // The ended thread was told to stop and joined: only we hold it.
        assert!(last.state.lock().unwrap().1);
        assert_eq!(Arc::strong_count(&last), 1);
        let first = run.threads[0].shared.clone();
        drop(run);
        assert_eq!(Arc::strong_count(&first), 1, "joined on drop");
    }
}
