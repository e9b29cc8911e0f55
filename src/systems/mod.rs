//! Systems side by side: the same plan on this machine, on other Linux
//! kernels booted in QEMU, on disk images of other operating systems and
//! on other machines over ssh (`run --system NAME=SPEC`).
//!
//! Parsing and checking the specs is [`spec`]; reading a kernel image's
//! release is [`kernel`]; the guest's initial RAM disk is written by
//! [`cpio`]; the guest's init is [`guest`], the host's side of it
//! [`qemu`]. A kernel named by its version is fetched from Debian's
//! archive into a cache by [`debian`].

pub mod cpio;
pub mod debian;
pub mod guest;
pub mod kernel;
pub mod qemu;
pub mod spec;
