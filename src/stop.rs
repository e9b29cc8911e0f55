//! The process-wide stop flag: set once SIGINT, SIGTERM or SIGHUP arrived
//! (by the handler [`crate::harness::reaper`] installs). Every loop that
//! can run long — a benchmark's operations, a load generator's requests, a
//! client blocked in a read that returns `EINTR` — checks it, so that the
//! modules below the harness ([`crate::net`]) can stop without knowing the
//! harness.

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// True once a stop signal arrived.
#[inline]
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// Sets the flag (async-signal-safe); true when it was set already (a
/// second signal).
pub fn interrupt() -> bool {
    INTERRUPTED.swap(true, Ordering::SeqCst)
}
