//! The processes of this machine as the OS lists them: parents, names,
//! command lines, threads and network namespaces. Linux reads `/proc`;
//! elsewhere the answers are empty or `None` (the callers then fall back
//! to what they know without them).

/// One process as the process table lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Proc {
    /// Its id.
    pub pid: u32,
    /// Its parent's id.
    pub ppid: u32,
    /// A zombie: dead, not yet reaped.
    pub zombie: bool,
}

/// Every process (Linux: from /proc; elsewhere none).
pub fn processes() -> Vec<Proc> {
    #[cfg(target_os = "linux")]
    {
        let Ok(rd) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        rd.flatten()
            .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
            .filter_map(|pid| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                parse_stat(pid, &stat)
            })
            .collect()
    }
    #[cfg(not(target_os = "linux"))]
    Vec::new()
}

/// A `/proc/PID/stat` line read: the state and the parent follow the
/// parenthesised command name (which may hold spaces and parentheses).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn parse_stat(pid: u32, stat: &str) -> Option<Proc> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut f = rest.split_whitespace();
    let state = f.next()?;
    let ppid = f.next()?.parse().ok()?;
    Some(Proc {
        pid,
        ppid,
        zombie: state == "Z",
    })
}

/// Every process below `root` in `table` (its children, theirs, …), each
/// once, `root` not among them.
pub fn descendants_in(table: &[Proc], root: u32) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::new();
    let mut frontier = vec![root];
    // Bounded: a process is added once, and the table is finite.
    while let Some(p) = frontier.pop() {
        for c in table.iter().filter(|c| c.ppid == p) {
            if c.pid != root && !out.contains(&c.pid) {
                out.push(c.pid);
                frontier.push(c.pid);
            }
        }
    }
    out
}

/// Every process below `root` now.
pub fn descendants(root: u32) -> Vec<u32> {
    descendants_in(&processes(), root)
}

/// The command name of `pid` (Linux's `comm`).
pub fn comm(pid: u32) -> Option<String> {
    #[cfg(target_os = "linux")]
    return std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|s| s.trim().to_string());
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

/// The command line of `pid`, its arguments joined by spaces.
pub fn cmdline(pid: u32) -> Option<String> {
    #[cfg(target_os = "linux")]
    return std::fs::read(format!("/proc/{pid}/cmdline"))
        .ok()
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "));
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

/// The inode of the network namespace `pid` is in (Linux).
pub fn netns_inode(pid: u32) -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let l = std::fs::read_link(format!("/proc/{pid}/ns/net")).ok()?;
        let l = l.to_string_lossy();
        l.strip_prefix("net:[")?.strip_suffix(']')?.parse().ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

/// How many threads `pid` has (Linux).
pub fn thread_count(pid: u32) -> Option<usize> {
    #[cfg(target_os = "linux")]
    return std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()
        .map(|d| d.count());
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_and_trees_are_read() {
        let p = parse_stat(7, "7 (a (b) c) S 3 7 7 0").unwrap();
        assert_eq!((p.pid, p.ppid, p.zombie), (7, 3, false));
        assert!(parse_stat(8, "8 (z) Z 1 8").unwrap().zombie);
        assert!(parse_stat(9, "garbage").is_none());
        let t = [
            Proc {
                pid: 2,
                ppid: 1,
                zombie: false,
            },
            Proc {
                pid: 3,
                ppid: 2,
                zombie: false,
            },
            Proc {
                pid: 4,
                ppid: 3,
                zombie: false,
            },
            Proc {
                pid: 5,
                ppid: 1,
                zombie: false,
            },
        ];
        let mut d = descendants_in(&t, 2);
        d.sort_unstable();
        assert_eq!(d, [3, 4]);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_is_listed_with_its_name_and_threads() {
        let me = std::process::id();
        assert!(processes().iter().any(|p| p.pid == me));
        assert!(comm(me).is_some_and(|c| !c.is_empty()));
        assert!(cmdline(me).is_some_and(|c| !c.is_empty()));
        assert!(thread_count(me).is_some_and(|n| n >= 1));
        assert!(netns_inode(me).is_some());
    }
}
