//! The fork helper: a tiny program that does the forking for the `fork`,
//! `fork-static` and `fork-cleanup` benchmarks.
//!
//! `build.rs` compiles this file (through `helpers/forker_main.rs`) twice
//! with plain `rustc` and no crates: once linked dynamically and once with
//! `-C target-feature=+crt-static`. The two binaries are embedded in
//! scalebench, written to the work directory and run there, so `fork` and
//! `fork-static` compare the same code linked two ways, as the seeds did.
//! Inside scalebench this module only supplies the protocol constants and
//! the reply codec, so both ends share one definition.
//!
//! Protocol: the helper is started as `forker <clock>` (clock code from
//! `rawclock::Source::code`). It reads one-byte commands on stdin and
//! answers each with a [`REPLY_LEN`]-byte reply on stdout:
//! - [`CMD_FORK`]: fork one child; the child writes one byte into a pipe and
//!   pauses; the helper times fork() until it has read that byte.
//! - [`CMD_KILL`]: SIGKILL the oldest live child and waitpid() for it, timed.
//! - [`CMD_QUIT`] or end of input: kill and reap all children, exit.
//!
//! A reply is a tag byte ([`TAG_OK`] with the elapsed clock ticks, or
//! [`TAG_ERR`] with the errno) followed by a little-endian `u64`.

#![allow(dead_code)] // scalebench itself uses only the protocol half.

use super::rawclock::Source;
use std::collections::VecDeque;
use std::io::{Read, Write};

/// Fork one more child.
pub const CMD_FORK: u8 = b'f';
/// Kill and reap the oldest child.
pub const CMD_KILL: u8 = b'k';
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
    use core::ffi::c_int;
    pub const SIGKILL: c_int = 9;
    pub const EINTR_LINUX: c_int = 4; // EINTR is 4 on every supported OS.
    unsafe extern "C" {
        pub fn fork() -> c_int;
        pub fn pipe(fds: *mut c_int) -> c_int;
        pub fn read(fd: c_int, buf: *mut u8, n: usize) -> isize;
        pub fn write(fd: c_int, buf: *const u8, n: usize) -> isize;
        pub fn kill(pid: c_int, sig: c_int) -> c_int;
        pub fn waitpid(pid: c_int, status: *mut c_int, options: c_int) -> c_int;
        pub fn pause() -> c_int;
        pub fn _exit(code: c_int) -> !;
    }
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Reaps `pid`, retrying on EINTR.
fn reap(pid: i32) {
    let mut status = 0;
    // SAFETY: plain waitpid on our own child.
    while unsafe { ffi::waitpid(pid, &mut status, 0) } < 0 && errno() == ffi::EINTR_LINUX {}
}

/// Runs the helper loop; returns the process exit code.
pub fn serve(source: Source) -> i32 {
    let mut fds = [0i32; 2];
    // SAFETY: `fds` has room for the two descriptors pipe() writes.
    if unsafe { ffi::pipe(fds.as_mut_ptr()) } != 0 {
        return 3;
    }
    let (rd, wr) = (fds[0], fds[1]);
    let mut children: VecDeque<i32> = VecDeque::new();
    let mut stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    let mut cmd = [0u8; 1];
    loop {
        if stdin.read_exact(&mut cmd).is_err() {
            break;
        }
        let reply = match cmd[0] {
            CMD_FORK => {
                let mut byte = 0u8;
                let t0 = source.read();
                // SAFETY: fork in a single-threaded process; the child only
                // calls async-signal-safe functions.
                let pid = unsafe { ffi::fork() };
                if pid == 0 {
                    // SAFETY: child side: write one byte, then wait to be killed.
                    unsafe {
                        ffi::write(wr, b"x".as_ptr(), 1);
                        loop {
                            ffi::pause();
                        }
                    }
                }
                if pid < 0 {
                    Reply::Errno(errno())
                } else {
                    loop {
                        // SAFETY: reading one byte into a local.
                        let r = unsafe { ffi::read(rd, &mut byte, 1) };
                        if r == 1 || (r < 0 && errno() != ffi::EINTR_LINUX) || r == 0 {
                            break;
                        }
                    }
                    let t1 = source.read();
                    children.push_back(pid);
                    Reply::Ticks(t1.wrapping_sub(t0))
                }
            }
            CMD_KILL => match children.pop_front() {
                Some(pid) => {
                    let t0 = source.read();
                    // SAFETY: signalling our own child.
                    let r = unsafe { ffi::kill(pid, ffi::SIGKILL) };
                    let e = errno();
                    reap(pid);
                    let t1 = source.read();
                    if r == 0 {
                        Reply::Ticks(t1.wrapping_sub(t0))
                    } else {
                        Reply::Errno(e)
                    }
                }
                None => Reply::Errno(10), // ECHILD on every supported OS
            },
            CMD_QUIT => break,
            _ => Reply::Errno(22), // EINVAL
        };
        if stdout.write_all(&reply.encode()).is_err() || stdout.flush().is_err() {
            break;
        }
    }
    for &pid in &children {
        // SAFETY: signalling our own children.
        unsafe { ffi::kill(pid, ffi::SIGKILL) };
    }
    for &pid in &children {
        reap(pid);
    }
    0
}

/// Entry point of the helper binary.
pub fn main() {
    let code = std::env::args().nth(1).unwrap_or_default();
    let status = match Source::from_code(&code) {
        Some(source) => serve(source),
        None => 2,
    };
    // SAFETY: ends the process without running destructors, like exit().
    unsafe { ffi::_exit(status) }
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
