//! The fork helper program; see `src/bench/forker.rs`. Built by `build.rs`
//! with plain `rustc` as a `no_std` program on the C library, once linked
//! dynamically and once statically.

#![no_std]
#![no_main]

#[path = "../crates/harness/src/rawclock.rs"]
#[allow(dead_code)]
mod rawclock;

#[path = "../src/bench/forker.rs"]
mod forker;

#[link(name = "c")]
unsafe extern "C" {}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    unsafe extern "C" {
        fn _exit(code: core::ffi::c_int) -> !;
    }
    // SAFETY: ends the process at once.
    unsafe { _exit(101) }
}

/// The precompiled `core` refers to the unwinding personality routine even
/// though this program aborts on panic and never unwinds.
#[unsafe(no_mangle)]
pub extern "C" fn rust_eh_personality() {}

/// The C entry point.
///
/// # Safety
/// Called by the C runtime with valid `argc`/`argv`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn main(argc: core::ffi::c_int, argv: *const *const core::ffi::c_char) -> core::ffi::c_int {
    // SAFETY: the C runtime passes valid arguments.
    unsafe { forker::main(argc, argv) }
}
