//! Raw clock reads with no dependencies beyond `core`.
//!
//! This file is compiled twice: into scalebench itself (as
//! `harness::rawclock`) and into the small fork helper programs that
//! `build.rs` links dynamically and statically. Both sides therefore read
//! time in exactly the same way, and ticks measured in a helper can be
//! converted to nanoseconds by the harness.

use core::ffi::{c_int, c_long};

#[repr(C)]
struct Timespec {
    tv_sec: c_long,
    tv_nsec: c_long,
}

#[cfg(target_vendor = "apple")]
type ClockId = core::ffi::c_uint;
#[cfg(not(target_vendor = "apple"))]
type ClockId = c_int;

#[cfg(any(target_os = "linux", target_os = "android"))]
const CLOCK_MONOTONIC: ClockId = 1;
#[cfg(any(target_os = "freebsd", target_os = "dragonfly"))]
const CLOCK_MONOTONIC: ClockId = 4;
#[cfg(any(target_os = "netbsd", target_os = "openbsd"))]
const CLOCK_MONOTONIC: ClockId = 3;
#[cfg(target_vendor = "apple")]
const CLOCK_MONOTONIC: ClockId = 6;

unsafe extern "C" {
    fn clock_gettime(id: ClockId, ts: *mut Timespec) -> c_int;
}

/// CLOCK_MONOTONIC in nanoseconds.
#[inline(always)]
pub fn monotonic_ns() -> u64 {
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC exists on
    // every supported OS, so the call cannot fail.
    unsafe {
        clock_gettime(CLOCK_MONOTONIC, &mut ts);
    }
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

/// The time-stamp counter, fenced so that it is not reordered around the
/// measured call (`lfence; rdtsc; lfence`).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn tsc() -> u64 {
    // SAFETY: lfence and rdtsc are available on every x86_64 CPU.
    unsafe {
        core::arch::x86_64::_mm_lfence();
        let t = core::arch::x86_64::_rdtsc();
        core::arch::x86_64::_mm_lfence();
        t
    }
}

/// Which counter a timer reads; the helper receives it as one letter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// CLOCK_MONOTONIC, nanoseconds.
    Monotonic,
    /// The x86_64 time-stamp counter, cycles.
    #[cfg(target_arch = "x86_64")]
    Tsc,
}

impl Source {
    /// Reads the counter.
    #[inline(always)]
    pub fn read(self) -> u64 {
        match self {
            Source::Monotonic => monotonic_ns(),
            #[cfg(target_arch = "x86_64")]
            Source::Tsc => tsc(),
        }
    }

    /// The one-letter code used on the helper's command line.
    pub fn code(self) -> &'static str {
        match self {
            Source::Monotonic => "m",
            #[cfg(target_arch = "x86_64")]
            Source::Tsc => "t",
        }
    }

    /// Parses [`Source::code`].
    pub fn from_code(code: &str) -> Option<Source> {
        match code {
            "m" => Some(Source::Monotonic),
            #[cfg(target_arch = "x86_64")]
            "t" => Some(Source::Tsc),
            _ => None,
        }
    }
}
