//! The fork helper: a tiny program that does the forking for the `fork`,
//! `fork-static` and `fork-cleanup` benchmarks.
//!
//! `build.rs` compiles this file (through `helpers/forker_main.rs`) twice
//! with plain `rustc`, `no_std` and no crates — only `core` and the C
//! library, so the helper is as lean as a C program: once linked
//! dynamically and once with `-C target-feature=+crt-static`. The two binaries are embedded in
//! scalebench, written to the work directory and run there, so `fork` and
//! `fork-static` compare the same code linked two ways, as the seeds did.
//! Inside scalebench this module only supplies the protocol constants and
//! the reply codec, so both ends share one definition.
//!
//! Protocol: the helper is started as `forker <clock>` (clock code from
//! `rawclock::Source::code`). It reads one-byte commands on stdin and
//! answers each with a [`REPLY_LEN`]-byte reply on stdout:
//! - [`CMD_FORK`]: fork one child; the child writes one byte into a pipe and
//!   waits; the helper times fork() until it has read that byte. A waiting
//!   child blocks reading a lifeline pipe whose only writer is the helper,
//!   so it exits when the helper is gone, even after a SIGKILL.
//! - [`CMD_KILL`]: SIGKILL the oldest live child and waitpid() for it, timed.
//! - [`CMD_KILL_NEWEST`]: the same for the newest live child (the one the
//!   last fork made), so that the children left are those of one fork
//!   earlier.
//! - [`CMD_QUIT`] or end of input: kill and reap all children, exit.
//!
//! A reply is a tag byte ([`TAG_OK`] with the elapsed clock ticks, or
//! [`TAG_ERR`] with the errno) followed by a little-endian `u64`.

#![allow(dead_code)] // scalebench itself uses only the protocol half.

use super::rawclock::Source;

/// Fork one more child.
pub const CMD_FORK: u8 = b'f';
/// Kill and reap the oldest child.
pub const CMD_KILL: u8 = b'k';
/// Kill and reap the newest child.
pub const CMD_KILL_NEWEST: u8 = b'K';
/// Kill everything and exit.
pub const CMD_QUIT: u8 = b'q';
/// Reply tag: the payload is elapsed clock ticks.
pub const TAG_OK: u8 = b'o';
/// Reply tag: the payload is an errno value.
pub const TAG_ERR: u8 = b'e';
/// Length of one reply.
pub const REPLY_LEN: usize = 9;

/// One reply from the helper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// The operation succeeded and took this many clock ticks.
    Ticks(u64),
    /// The operation failed with this errno.
    Errno(i32),
}

impl Reply {
    /// Encodes the reply for the wire.
    pub fn encode(self) -> [u8; REPLY_LEN] {
        let (tag, value) = match self {
            Reply::Ticks(t) => (TAG_OK, t),
            Reply::Errno(e) => (TAG_ERR, e as u64),
        };
        let mut out = [0u8; REPLY_LEN];
        out[0] = tag;
        out[1..].copy_from_slice(&value.to_le_bytes());
        out
    }

    /// Decodes a reply; `None` for an unknown tag.
    pub fn decode(bytes: &[u8; REPLY_LEN]) -> Option<Reply> {
        let mut v = [0u8; 8];
        v.copy_from_slice(&bytes[1..]);
        let value = u64::from_le_bytes(v);
        match bytes[0] {
            TAG_OK => Some(Reply::Ticks(value)),
            TAG_ERR => Some(Reply::Errno(value as i32)),
            _ => None,
        }
    }
}

mod ffi {
    use core::ffi::{c_char, c_int};
    pub const SIGKILL: c_int = 9;
    pub const SIGPIPE: c_int = 13; // on every supported OS
    pub const SIG_IGN: usize = 1;
    pub const EINTR: c_int = 4; // on every supported OS
    unsafe extern "C" {
        pub fn fork() -> c_int;
        pub fn pipe(fds: *mut c_int) -> c_int;
        pub fn read(fd: c_int, buf: *mut u8, n: usize) -> isize;
        pub fn write(fd: c_int, buf: *const u8, n: usize) -> isize;
        pub fn kill(pid: c_int, sig: c_int) -> c_int;
        pub fn waitpid(pid: c_int, status: *mut c_int, options: c_int) -> c_int;
        pub fn close(fd: c_int) -> c_int;
        pub fn signal(sig: c_int, handler: usize) -> usize;
        pub fn _exit(code: c_int) -> !;
        pub fn malloc(size: usize) -> *mut c_int;
        #[cfg_attr(
            any(target_os = "linux", target_os = "android"),
            link_name = "__errno_location"
        )]
        #[cfg_attr(
            any(target_os = "freebsd", target_vendor = "apple"),
            link_name = "__error"
        )]
        #[cfg_attr(
            any(target_os = "netbsd", target_os = "openbsd"),
            link_name = "__errno"
        )]
        #[cfg_attr(target_os = "dragonfly", link_name = "__dfly_error")]
        fn errno_location() -> *mut c_int;
    }

    pub fn errno() -> c_int {
        // SAFETY: the C library returns this thread's errno slot.
        unsafe { *errno_location() }
    }

    /// The bytes of a C string.
    ///
    /// # Safety
    /// `p` must point to a NUL-terminated string.
    pub unsafe fn cstr<'a>(p: *const c_char) -> &'a [u8] {
        // SAFETY: as the caller promises.
        unsafe { core::ffi::CStr::from_ptr(p).to_bytes() }
    }
}

/// Reaps `pid`, retrying on EINTR.
fn reap(pid: i32) {
    let mut status = 0;
    // SAFETY: plain waitpid on our own child.
    while unsafe { ffi::waitpid(pid, &mut status, 0) } < 0 && ffi::errno() == ffi::EINTR {}
}

/// Writes all of `buf` to fd 1; false when the reader is gone.
fn send(buf: &[u8]) -> bool {
    let mut off = 0;
    while off < buf.len() {
        // SAFETY: writing from a live buffer.
        let r = unsafe { ffi::write(1, buf[off..].as_ptr(), buf.len() - off) };
        if r > 0 {
            off += r as usize;
        } else if r < 0 && ffi::errno() == ffi::EINTR {
            continue;
        } else {
            return false;
        }
    }
    true
}

/// Reads one command byte from fd 0; `None` at end of input.
fn command() -> Option<u8> {
    let mut b = 0u8;
    loop {
        // SAFETY: reading one byte into a local.
        let r = unsafe { ffi::read(0, &mut b, 1) };
        if r == 1 {
            return Some(b);
        }
        if r < 0 && ffi::errno() == ffi::EINTR {
            continue;
        }
        return None;
    }
}

/// Most children the helper tracks (a power of two; far above any
/// process limit).
const MAX_CHILDREN: usize = 1 << 21;

/// Runs the helper loop; returns the process exit code. Uses only `core`
/// and the C library, so the helper is as small as a C program.
pub fn serve(source: Source) -> i32 {
    let mut fds = [0i32; 2];
    // SAFETY: `fds` has room for the two descriptors pipe() writes.
    if unsafe { ffi::pipe(fds.as_mut_ptr()) } != 0 {
        return 3;
    }
    let (rd, wr) = (fds[0], fds[1]);
    // The lifeline: every child blocks reading it and exits at its end of
    // input, which comes when the helper is gone, however it died (even by
    // SIGKILL, which it cannot catch). Only the helper holds the write end.
    let mut life = [0i32; 2];
    // SAFETY: `life` has room for the two descriptors pipe() writes.
    if unsafe { ffi::pipe(life.as_mut_ptr()) } != 0 {
        return 3;
    }
    // A reply to a scalebench that is gone fails with EPIPE (and ends the
    // loop, killing the children) instead of killing the helper with
    // SIGPIPE and leaving them behind.
    // SAFETY: ignoring a signal.
    unsafe { ffi::signal(ffi::SIGPIPE, ffi::SIG_IGN) };
    // A ring of child pids; pages are touched only as children are added.
    // SAFETY: malloc of plain integers; checked for NULL.
    let ring = unsafe { ffi::malloc(MAX_CHILDREN * core::mem::size_of::<i32>()) };
    if ring.is_null() {
        return 4;
    }
    let (mut head, mut tail) = (0usize, 0usize); // oldest, next free
    while let Some(cmd) = command() {
        let reply = match cmd {
            CMD_FORK if tail - head == MAX_CHILDREN => Reply::Errno(11), // EAGAIN
            CMD_FORK => {
                let mut byte = 0u8;
                let t0 = source.read();
                // SAFETY: fork in a single-threaded process; the child only
                // calls async-signal-safe functions.
                let pid = unsafe { ffi::fork() };
                if pid == 0 {
                    // SAFETY: child side: write one byte (the timed part
                    // ends when the helper reads it), then wait on the
                    // lifeline until killed or until the helper is gone.
                    unsafe {
                        ffi::write(wr, b"x".as_ptr(), 1);
                        ffi::close(life[1]);
                        while ffi::read(life[0], &mut byte, 1) < 0 && ffi::errno() == ffi::EINTR {}
                        ffi::_exit(0);
                    }
                }
                if pid < 0 {
                    Reply::Errno(ffi::errno())
                } else {
                    // SAFETY: reading one byte into a local.
                    while unsafe { ffi::read(rd, &mut byte, 1) } < 0 && ffi::errno() == ffi::EINTR {
                    }
                    let t1 = source.read();
                    // SAFETY: `tail % MAX_CHILDREN` is inside the ring.
                    unsafe { *ring.add(tail % MAX_CHILDREN) = pid };
                    tail += 1;
                    Reply::Ticks(t1.wrapping_sub(t0))
                }
            }
            CMD_KILL | CMD_KILL_NEWEST if head == tail => Reply::Errno(10), // ECHILD
            CMD_KILL | CMD_KILL_NEWEST => {
                let slot = if cmd == CMD_KILL {
                    head += 1;
                    head - 1
                } else {
                    tail -= 1;
                    tail
                };
                // SAFETY: `slot % MAX_CHILDREN` holds a live child's pid.
                let pid = unsafe { *ring.add(slot % MAX_CHILDREN) };
                let t0 = source.read();
                // SAFETY: signalling our own child.
                let r = unsafe { ffi::kill(pid, ffi::SIGKILL) };
                let e = ffi::errno();
                reap(pid);
                let t1 = source.read();
                if r == 0 {
                    Reply::Ticks(t1.wrapping_sub(t0))
                } else {
                    Reply::Errno(e)
                }
            }
            CMD_QUIT => break,
            _ => Reply::Errno(22), // EINVAL
        };
        if !send(&reply.encode()) {
            break;
        }
    }
    for i in head..tail {
        // SAFETY: signalling our own children.
        unsafe { ffi::kill(*ring.add(i % MAX_CHILDREN), ffi::SIGKILL) };
    }
    for i in head..tail {
        // SAFETY: as above.
        reap(unsafe { *ring.add(i % MAX_CHILDREN) });
    }
    0
}

/// The helper's `main`: `forker <clock code>`.
///
/// # Safety
/// `argv` must hold `argc` valid C strings, as the C runtime passes them.
pub unsafe fn main(argc: i32, argv: *const *const core::ffi::c_char) -> i32 {
    if argc < 2 {
        return 2;
    }
    // SAFETY: argv[1] exists and is a C string, as the caller promises.
    let code = unsafe { ffi::cstr(*argv.add(1)) };
    match core::str::from_utf8(code).ok().and_then(Source::from_code) {
        Some(source) => serve(source),
        None => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_round_trip() {
        for r in [Reply::Ticks(0), Reply::Ticks(u64::MAX), Reply::Errno(11)] {
            assert_eq!(Reply::decode(&r.encode()), Some(r));
        }
        let mut bad = Reply::Ticks(5).encode();
        bad[0] = b'z';
        assert_eq!(Reply::decode(&bad), None);
    }
}
