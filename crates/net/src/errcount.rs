//! Failed calls counted by errno across the worker processes of one
//! server: a table of counters in memory shared by every process forked
//! after it was made, so that the whole server's count can be read from
//! any of them.
//!
//! The server counts each failed accept() here instead of ending its loop
//! on an errno it did not expect (with many processes on one socket some
//! systems fail accepts with ENOENT or EADDRINUSE, as the seeds saw), and
//! `scalebench serve` answers the line `stats` on its control input with
//! one line `accept-errors {"ENOENT": 3, …}` on its output.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};

/// Counters for errno values below this; higher ones share the last slot.
const SLOTS: usize = 256;

/// The line's first word in [`ErrnoTable::answer`].
pub const ANSWER: &str = "accept-errors";

/// Failed calls by errno, shared between processes.
pub struct ErrnoTable {
    slots: [AtomicU64; SLOTS],
}

impl ErrnoTable {
    /// A table in a shared anonymous mapping, kept for the life of the
    /// process (and of the processes it forks, which share it); `None`
    /// when the mapping cannot be made (the count is then not kept).
    pub fn shared() -> Option<&'static ErrnoTable> {
        // SAFETY: zeroed memory is a valid table (atomics of zero).
        unsafe { shared_zeroed() }.ok()
    }

    /// Counts one failure with `errno`.
    pub fn add(&self, errno: i32) {
        let i = (errno.max(0) as usize).min(SLOTS - 1);
        self.slots[i].fetch_add(1, Ordering::Relaxed);
    }

    /// The counts so far, by errno name (`ENOENT`), only those above zero.
    pub fn snapshot(&self) -> BTreeMap<String, u64> {
        let mut m = BTreeMap::new();
        for (e, c) in self.slots.iter().enumerate() {
            let c = c.load(Ordering::Relaxed);
            if c > 0 {
                let name = if e == SLOTS - 1 {
                    format!("errno {e} or above")
                } else {
                    sys::errno_name(e as i32)
                };
                *m.entry(name).or_insert(0) += c;
            }
        }
        m
    }

    /// Answers what came on the control input: when it holds the word
    /// `stats`, writes one line `accept-errors {JSON}` to standard output
    /// (a line below PIPE_BUF: written whole even with several processes
    /// on one pipe).
    pub fn answer(&self, input: &[u8]) {
        if input.windows(5).any(|w| w == b"stats") {
            let line = format!("{ANSWER} {}\n", serde_json::json!(self.snapshot()));
            let mut out = io::stdout().lock();
            let _ = out.write_all(line.as_bytes());
            let _ = out.flush();
        }
    }
}

impl std::fmt::Debug for ErrnoTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.snapshot()).finish()
    }
}

/// A `T` in a fresh anonymous shared mapping, zeroed, kept for the life
/// of the process and shared with every process it forks afterwards.
///
/// # Safety
/// All-zero bytes must be a valid `T` (atomics, plain integers).
pub(crate) unsafe fn shared_zeroed<T>() -> io::Result<&'static T> {
    // SAFETY: a fresh anonymous shared mapping, page-aligned, never
    // unmapped; the caller vouches for zeroed memory being a valid T.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            std::mem::size_of::<T>(),
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANON,
            -1,
            0,
        );
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(&*(p as *const T))
    }
}

/// Reads an [`ErrnoTable::answer`] line back: the counts by errno name.
pub fn parse_answer(line: &str) -> Result<BTreeMap<String, u64>, String> {
    let json = line
        .strip_prefix(ANSWER)
        .ok_or_else(|| format!("the server answered `{line}` to `stats`"))?
        .trim();
    if let Some(why) = json.strip_prefix("unknown:") {
        return Err(why.trim().to_string());
    }
    serde_json::from_str(json).map_err(|e| format!("the server's `{ANSWER}` line: {e}"))
}

/// Accept errnos that mean the listening socket itself is broken: serving
/// cannot go on.
pub fn listener_broken(errno: i32) -> bool {
    matches!(
        errno,
        libc::EBADF | libc::ENOTSOCK | libc::EINVAL | libc::EFAULT | libc::EOPNOTSUPP
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_from_a_child_process_are_seen_by_the_parent() {
        let t = ErrnoTable::shared().expect("a shared mapping");
        t.add(libc::ENOENT);
        // SAFETY: the child only counts and exits.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            t.add(libc::EADDRINUSE);
            t.add(libc::ENOENT);
            // SAFETY: ends the child without running the parent's destructors.
            unsafe { libc::_exit(0) };
        }
        crate::workers::reap(pid);
        let m = t.snapshot();
        assert_eq!(m.get("ENOENT"), Some(&2), "{m:?}");
        assert_eq!(m.get("EADDRINUSE"), Some(&1), "{m:?}");
        assert_eq!(m.len(), 2, "{m:?}");
    }

    #[test]
    fn an_answer_reads_back_and_a_wrong_line_is_named() {
        let line = format!("{ANSWER} {}", serde_json::json!({"ENOENT": 3, "EMFILE": 1}));
        let m = parse_answer(&line).unwrap();
        assert_eq!(m["ENOENT"], 3);
        assert_eq!(m["EMFILE"], 1);
        let e = parse_answer("listening http://x/").unwrap_err();
        assert!(e.contains("listening http://x/"), "{e}");
        assert!(parse_answer("accept-errors {").is_err());
        assert_eq!(
            parse_answer("accept-errors unknown: nginx does not count them"),
            Err("nginx does not count them".into())
        );
    }

    #[test]
    fn high_errnos_share_the_last_slot_and_negative_ones_the_first() {
        let t = ErrnoTable::shared().unwrap();
        t.add(100_000);
        t.add(SLOTS as i32 + 3);
        assert_eq!(t.snapshot().values().sum::<u64>(), 2);
        assert!(t.snapshot().keys().any(|k| k.contains("or above")));
    }
}
