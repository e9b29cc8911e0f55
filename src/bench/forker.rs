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
//! Protocol: the helper is started as `forker <clock> [<map flags>]` (clock
//! code from `rawclock::Source::code`; map flags in decimal). It reads one-byte commands on stdin and
//! answers each with a [`REPLY_LEN`]-byte reply on stdout:
//! - [`CMD_FORK`]: fork one child; the child writes one byte into a pipe and
//!   waits; the helper times fork() until it has read that byte. A waiting
//!   child blocks reading a lifeline pipe whose only writer is the helper,
//!   so it exits when the helper is gone, even after a SIGKILL.
//! - [`CMD_KILL`]: SIGKILL the oldest live child and waitpid() for it, timed.
//! - [`CMD_KILL_NEWEST`]: the same for the newest live child (the one the
//!   last fork made), so that the children left are those of one fork
//!   earlier.
//! - [`CMD_MAP`]: map one more anonymous page (`fork-maps`: the mappings
//!   every fork copies), a free page apart from the last and with
//!   protections alternating, so that no two merge; the reply's payload is
//!   the pages mapped, not ticks.
//!   Needs the OS's `MAP_PRIVATE | MAP_ANON` as the helper's second
//!   argument (the helper has no C headers to read it from).
//! - [`CMD_UNMAP`]: unmap the page mapped last; the same reply.
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
/// Map one more page.
pub const CMD_MAP: u8 = b'm';
/// Unmap the page mapped last.
pub const CMD_UNMAP: u8 = b'u';
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
    pub const PROT_READ: c_int = 1; // on every supported OS
    pub const PROT_WRITE: c_int = 2; // on every supported OS
    pub const MAP_FAILED: usize = usize::MAX; // (void *)-1
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
        pub fn getpagesize() -> c_int;
        pub fn mmap(
            addr: *mut u8,
            len: usize,
            prot: c_int,
            flags: c_int,
            fd: c_int,
            off: i64,
        ) -> *mut u8;
        pub fn munmap(addr: *mut u8, len: usize) -> c_int;
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

/// Most pages the helper maps for `fork-maps` (far above Linux's default
/// `vm.max_map_count` of 65 530; the table is touched only as pages are
/// added).
const MAX_MAPS: usize = 1 << 22;

/// ENOMEM, EAGAIN, ECHILD and EINVAL: the same numbers on every supported
/// OS.
const ENOMEM: i32 = 12;
const EAGAIN: i32 = 11;
const ECHILD: i32 = 10;
const EINVAL: i32 = 22;

/// The helper's state: its pipes, its children and its mappings.
struct Helper {
    source: Source,
    /// The pipe children write their byte into: read end, write end.
    rd: i32,
    wr: i32,
    /// The lifeline: every child blocks reading it and exits at its end of
    /// input, which comes when the helper is gone, however it died (even
    /// by SIGKILL, which it cannot catch). Only the helper holds the write
    /// end.
    life: [i32; 2],
    /// A ring of child pids; pages are touched only as children are added.
    ring: *mut i32,
    /// Oldest child, next free slot.
    head: usize,
    tail: usize,
    /// The pages mapped by [`CMD_MAP`], in order (allocated at the first).
    maps: *mut usize,
    mapped: usize,
    /// Where page i is asked for: `spread + (2i + 1) pages` while i is
    /// below `spread_pages`, a free stretch of the address space found at
    /// the first [`CMD_MAP`] (0: none found, the kernel places every page).
    spread: usize,
    spread_pages: usize,
    /// `MAP_PRIVATE | MAP_ANON` as this OS spells it (from the command
    /// line; 0 when not given, and then [`CMD_MAP`] fails with EINVAL).
    map_flags: i32,
    page: usize,
}

impl Helper {
    /// Makes the pipes and the ring; the exit code when that fails.
    fn new(source: Source, map_flags: i32) -> Result<Helper, i32> {
        let mut fds = [0i32; 2];
        let mut life = [0i32; 2];
        // SAFETY: each array has room for the two descriptors pipe() writes.
        if unsafe { ffi::pipe(fds.as_mut_ptr()) } != 0
            || unsafe { ffi::pipe(life.as_mut_ptr()) } != 0
        {
            return Err(3);
        }
        // SAFETY: malloc of plain integers; checked for NULL.
        let ring = unsafe { ffi::malloc(MAX_CHILDREN * core::mem::size_of::<i32>()) };
        if ring.is_null() {
            return Err(4);
        }
        Ok(Helper {
            source,
            rd: fds[0],
            wr: fds[1],
            life,
            ring,
            head: 0,
            tail: 0,
            maps: core::ptr::null_mut(),
            mapped: 0,
            spread: 0,
            spread_pages: 0,
            map_flags,
            // SAFETY: getpagesize has no preconditions.
            page: unsafe { ffi::getpagesize() } as usize,
        })
    }

    /// Forks one child that writes one byte and waits on the lifeline;
    /// times fork() until the byte is read.
    fn fork(&mut self) -> Reply {
        if self.tail - self.head == MAX_CHILDREN {
            return Reply::Errno(EAGAIN);
        }
        let mut byte = 0u8;
        let t0 = self.source.read();
        // SAFETY: fork in a single-threaded process; the child only calls
        // async-signal-safe functions.
        let pid = unsafe { ffi::fork() };
        if pid == 0 {
            // SAFETY: child side: write one byte (the timed part ends when
            // the helper reads it), then wait on the lifeline until killed
            // or until the helper is gone.
            unsafe {
                ffi::write(self.wr, b"x".as_ptr(), 1);
                ffi::close(self.life[1]);
                while ffi::read(self.life[0], &mut byte, 1) < 0 && ffi::errno() == ffi::EINTR {}
                ffi::_exit(0);
            }
        }
        if pid < 0 {
            return Reply::Errno(ffi::errno());
        }
        // SAFETY: reading one byte into a local.
        while unsafe { ffi::read(self.rd, &mut byte, 1) } < 0 && ffi::errno() == ffi::EINTR {}
        let t1 = self.source.read();
        // SAFETY: `tail % MAX_CHILDREN` is inside the ring.
        unsafe { *self.ring.add(self.tail % MAX_CHILDREN) = pid };
        self.tail += 1;
        Reply::Ticks(t1.wrapping_sub(t0))
    }

    /// Kills and reaps the oldest child ([`CMD_KILL`]) or the newest one;
    /// timed.
    fn kill(&mut self, oldest: bool) -> Reply {
        if self.head == self.tail {
            return Reply::Errno(ECHILD);
        }
        let slot = if oldest {
            self.head += 1;
            self.head - 1
        } else {
            self.tail -= 1;
            self.tail
        };
        // SAFETY: `slot % MAX_CHILDREN` holds a live child's pid.
        let pid = unsafe { *self.ring.add(slot % MAX_CHILDREN) };
        let t0 = self.source.read();
        // SAFETY: signalling our own child.
        let r = unsafe { ffi::kill(pid, ffi::SIGKILL) };
        let e = ffi::errno();
        reap(pid);
        let t1 = self.source.read();
        if r == 0 {
            Reply::Ticks(t1.wrapping_sub(t0))
        } else {
            Reply::Errno(e)
        }
    }

    /// Finds a free stretch of address space for the pages (room for every
    /// page with a free page before each): mapped with no access and
    /// unmapped again at once, as large as the OS allows, halving from
    /// room for [`MAX_MAPS`] pages down to 1 024.
    fn find_spread(&mut self) {
        let mut pages = MAX_MAPS;
        while pages >= 1024 {
            let len = (2 * pages + 1) * self.page;
            // SAFETY: a fresh inaccessible mapping, unmapped below.
            let a = unsafe { ffi::mmap(core::ptr::null_mut(), len, 0, self.map_flags, -1, 0) };
            if a as usize != ffi::MAP_FAILED {
                // SAFETY: unmapping what was just mapped.
                unsafe { ffi::munmap(a, len) };
                self.spread = a as usize;
                self.spread_pages = pages;
                return;
            }
            pages /= 2;
        }
    }

    /// Maps one more anonymous page, readable when the count is even and
    /// readable and writable when odd, and with a free page below it (as
    /// long as the stretch [`Helper::find_spread`] found lasts), so that it
    /// never merges with a neighbour into one mapping; replies with the
    /// pages mapped.
    fn map(&mut self) -> Reply {
        if self.map_flags == 0 {
            return Reply::Errno(EINVAL);
        }
        if self.mapped == MAX_MAPS {
            return Reply::Errno(ENOMEM);
        }
        if self.maps.is_null() {
            // SAFETY: malloc of plain integers; checked for NULL.
            self.maps = unsafe { ffi::malloc(MAX_MAPS * core::mem::size_of::<usize>()) }.cast();
            if self.maps.is_null() {
                return Reply::Errno(ENOMEM);
            }
            // After the table, so that it is not placed in the stretch.
            self.find_spread();
        }
        let prot = if self.mapped.is_multiple_of(2) {
            ffi::PROT_READ
        } else {
            ffi::PROT_READ | ffi::PROT_WRITE
        };
        let hint = if self.mapped < self.spread_pages {
            (self.spread + (2 * self.mapped + 1) * self.page) as *mut u8
        } else {
            core::ptr::null_mut()
        };
        // SAFETY: a fresh anonymous mapping; without MAP_FIXED the hint
        // never replaces anything mapped.
        let a = unsafe { ffi::mmap(hint, self.page, prot, self.map_flags, -1, 0) };
        if a as usize == ffi::MAP_FAILED {
            return Reply::Errno(ffi::errno());
        }
        // SAFETY: `mapped < MAX_MAPS`, inside the table.
        unsafe { *self.maps.add(self.mapped) = a as usize };
        self.mapped += 1;
        Reply::Ticks(self.mapped as u64)
    }

    /// Unmaps the page mapped last; replies with the pages mapped.
    fn unmap(&mut self) -> Reply {
        if self.mapped == 0 {
            return Reply::Errno(EINVAL);
        }
        self.mapped -= 1;
        // SAFETY: the entry holds a page this helper mapped.
        let a = unsafe { *self.maps.add(self.mapped) };
        // SAFETY: unmapping our own page.
        if unsafe { ffi::munmap(a as *mut u8, self.page) } != 0 {
            return Reply::Errno(ffi::errno());
        }
        Reply::Ticks(self.mapped as u64)
    }

    /// Kills and reaps every child.
    fn kill_all(&mut self) {
        for i in self.head..self.tail {
            // SAFETY: signalling our own children.
            unsafe { ffi::kill(*self.ring.add(i % MAX_CHILDREN), ffi::SIGKILL) };
        }
        for i in self.head..self.tail {
            // SAFETY: as above.
            reap(unsafe { *self.ring.add(i % MAX_CHILDREN) });
        }
    }
}

/// Runs the helper loop; returns the process exit code. Uses only `core`
/// and the C library, so the helper is as small as a C program.
/// `map_flags` is `MAP_PRIVATE | MAP_ANON` as this OS spells it, or 0.
pub fn serve(source: Source, map_flags: i32) -> i32 {
    let mut h = match Helper::new(source, map_flags) {
        Ok(h) => h,
        Err(code) => return code,
    };
    // A reply to a scalebench that is gone fails with EPIPE (and ends the
    // loop, killing the children) instead of killing the helper with
    // SIGPIPE and leaving them behind.
    // SAFETY: ignoring a signal.
    unsafe { ffi::signal(ffi::SIGPIPE, ffi::SIG_IGN) };
    while let Some(cmd) = command() {
        let reply = match cmd {
            CMD_FORK => h.fork(),
            CMD_KILL => h.kill(true),
            CMD_KILL_NEWEST => h.kill(false),
            CMD_MAP => h.map(),
            CMD_UNMAP => h.unmap(),
            CMD_QUIT => break,
            _ => Reply::Errno(EINVAL),
        };
        if !send(&reply.encode()) {
            break;
        }
    }
    h.kill_all();
    0
}

/// A decimal number (optionally negative) from the bytes of an argument;
/// `None` for anything else.
fn decimal(s: &[u8]) -> Option<i32> {
    let (neg, digits) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    if digits.is_empty() || digits.len() > 9 {
        return None;
    }
    let mut v: i32 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v * 10 + i32::from(d - b'0');
    }
    Some(if neg { -v } else { v })
}

/// The helper's `main`: `forker <clock code> [<map flags>]`.
///
/// # Safety
/// `argv` must hold `argc` valid C strings, as the C runtime passes them.
pub unsafe fn main(argc: i32, argv: *const *const core::ffi::c_char) -> i32 {
    if argc < 2 {
        return 2;
    }
    // SAFETY: argv[1] exists and is a C string, as the caller promises.
    let code = unsafe { ffi::cstr(*argv.add(1)) };
    let flags = if argc > 2 {
        // SAFETY: argv[2] exists, as argc says.
        match decimal(unsafe { ffi::cstr(*argv.add(2)) }) {
            Some(f) => f,
            None => return 2,
        }
    } else {
        0
    };
    match core::str::from_utf8(code).ok().and_then(Source::from_code) {
        Some(source) => serve(source, flags),
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

    #[test]
    fn map_flags_are_read_as_decimal_numbers() {
        assert_eq!(decimal(b"34"), Some(34));
        assert_eq!(decimal(b"4098"), Some(4098));
        assert_eq!(decimal(b"-1"), Some(-1));
        for bad in [&b""[..], b"-", b"3x", b"0x22", b"1234567890"] {
            assert_eq!(decimal(bad), None, "{:?}", std::str::from_utf8(bad));
        }
    }
}
