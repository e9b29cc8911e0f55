//! scalebench: does an operating system stay fast as load grows?
//!
//! Data flows one way: [`cli`] turns arguments into typed options, [`run`]
//! makes a plan of them and executes it with the [`harness`]'s tools —
//! [`bench`]marks and [`workloads`], each given a [`ctx::Ctx`] — recording
//! every sample into a [`results`] file; [`analysis`] turns samples into
//! verdicts and [`report`] writes them for people and programs. OS
//! specifics live in [`sys`] only. [`hosts`] reaches the machines (or
//! namespaces) a run's client and server run on; [`testbed`] makes network
//! namespaces that stand in for hosts; [`tuning`] applies tuning profiles.
//! Each module imports only the floors below it: `docs/architecture.md`.

#![deny(missing_docs)]

// The floors below the binary's are crates of their own (`crates/`);
// re-exported under their names, they are reached as before.
pub use ::analysis;
pub use ::harness;
pub use ::net;
pub use ::report;
pub use ::results;
pub use ::store;
pub use ::sys;
pub use ::sys::{stop, values};
pub use ::units;

/// Returns a usage error (`sys::values::Usage`, exit status 2) in the
/// words of `format!`: what was asked is wrong in itself, as `bail!` for
/// a failure.
macro_rules! refuse {
    ($($words:tt)*) => {
        return Err($crate::sys::values::Usage(format!($($words)*)).into())
    };
}

pub mod bench;
pub mod cli;
pub mod ctx;
pub mod dashboard;
pub mod hosts;
pub mod run;
pub mod systems;
pub mod testbed;
pub mod tuning;
pub mod workloads;

/// What the unit tests of several floors share.
#[cfg(test)]
pub(crate) mod testing {
    /// One test at a time of those that start child groups and count
    /// them: the reaper acts for the whole process, so it sees every
    /// test's children.
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// Holds off the other tests that start child groups.
    pub(crate) fn one() -> std::sync::MutexGuard<'static, ()> {
        ONE.lock().unwrap_or_else(|e| e.into_inner())
    }
}
