//! A memory limit for the processes a workload starts: a cgroup of its own
//! (Linux, v2 or v1 memory controller) below the one scalebench runs in,
//! made with the limit and removed when dropped. Elsewhere, or without the
//! rights, [`MemoryLimit::create`] says why not and the caller goes on
//! without a limit (and says so).
//!
//! A cgroup left by a killed run (`scalebench-PID` whose PID is gone and
//! which holds no process) is removed by the next [`MemoryLimit::create`].

use std::path::{Path, PathBuf};

/// A memory cgroup holding the processes added to it.
#[derive(Debug)]
pub struct MemoryLimit {
    dir: PathBuf,
    /// The limit, bytes.
    pub bytes: u64,
    /// `cgroup v2` or `cgroup v1`.
    pub kind: &'static str,
}

/// Why a memory limit cannot be made or used.
#[derive(Debug)]
pub enum LimitError {
    /// Not here: why (another OS, no memory controller mounted).
    Unavailable(String),
    /// A cgroup file or directory refused: what was being done, and the
    /// OS's error as the cause.
    Io {
        /// What was being done (`cannot make /sys/fs/cgroup/…`).
        doing: String,
        /// The OS's error.
        source: std::io::Error,
    },
}

impl std::fmt::Display for LimitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LimitError::Unavailable(why) => f.write_str(why),
            LimitError::Io { doing, .. } => f.write_str(doing),
        }
    }
}

impl std::error::Error for LimitError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LimitError::Unavailable(_) => None,
            LimitError::Io { source, .. } => Some(source),
        }
    }
}

/// Where this process's memory cgroup is, and which version: v2 (a
/// `0::/path` line, the unified hierarchy with the memory controller) or
/// v1 (a `N:memory:/path` line).
fn own_cgroup() -> Result<(PathBuf, &'static str), String> {
    let text = std::fs::read_to_string("/proc/self/cgroup")
        .map_err(|e| format!("no cgroups here (/proc/self/cgroup: {e})"))?;
    for l in text.lines() {
        let mut f = l.splitn(3, ':');
        let (_, ctrl, path) = (f.next(), f.next().unwrap_or(""), f.next().unwrap_or(""));
        if ctrl.split(',').any(|c| c == "memory") {
            let root = Path::new("/sys/fs/cgroup/memory");
            if root.is_dir() {
                return Ok((root.join(path.trim_start_matches('/')), "cgroup v1"));
            }
        }
    }
    for l in text.lines() {
        if let Some(path) = l.strip_prefix("0::") {
            for root in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"] {
                let dir = Path::new(root).join(path.trim_start_matches('/'));
                let ctl = std::fs::read_to_string(Path::new(root).join("cgroup.controllers"))
                    .unwrap_or_default();
                if ctl.split_whitespace().any(|c| c == "memory") && dir.is_dir() {
                    return Ok((dir, "cgroup v2"));
                }
            }
        }
    }
    Err("no memory cgroup controller is mounted".into())
}

impl MemoryLimit {
    /// Makes `scalebench-PID` with a limit of `bytes` below this process's
    /// memory cgroup.
    pub fn create(bytes: u64) -> Result<MemoryLimit, LimitError> {
        if !cfg!(target_os = "linux") {
            return Err(LimitError::Unavailable(
                "memory limits use cgroups, which only Linux has".into(),
            ));
        }
        let (parent, kind) = own_cgroup().map_err(LimitError::Unavailable)?;
        sweep_stale(&parent);
        let dir = parent.join(format!("scalebench-{}", std::process::id()));
        let io = |doing: String| move |source| LimitError::Io { doing, source };
        std::fs::create_dir(&dir).map_err(io(format!("cannot make {}", dir.display())))?;
        let limit = MemoryLimit { dir, bytes, kind };
        let file = if kind == "cgroup v2" {
            "memory.max"
        } else {
            "memory.limit_in_bytes"
        };
        std::fs::write(limit.dir.join(file), bytes.to_string())
            .map_err(io(format!("cannot set {}", limit.dir.join(file).display())))?;
        Ok(limit)
    }

    /// Puts process `pid` (and so what it forks later) under the limit.
    pub fn add(&self, pid: u32) -> Result<(), LimitError> {
        std::fs::write(self.dir.join("cgroup.procs"), pid.to_string()).map_err(|source| {
            LimitError::Io {
                doing: format!("cannot move process {pid} into {}", self.dir.display()),
                source,
            }
        })
    }

    /// The cgroup's directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// How many processes the cgroup's OOM killer has ended since it was
    /// made (`oom_kill` in v2's `memory.events` or v1's
    /// `memory.oom_control`); `None` where the kernel does not count them.
    pub fn oom_kills(&self) -> Option<u64> {
        let file = if self.kind == "cgroup v2" {
            "memory.events"
        } else {
            "memory.oom_control"
        };
        oom_kill_count(&std::fs::read_to_string(self.dir.join(file)).ok()?)
    }

    /// How readily the cgroup swaps (cgroup v1 `memory.swappiness`, 0 to
    /// 200); `None` where it has no such file (v2 follows the system's).
    pub fn swappiness(&self) -> Option<u64> {
        std::fs::read_to_string(self.dir.join("memory.swappiness"))
            .ok()?
            .trim()
            .parse()
            .ok()
    }
}

impl MemoryLimit {
    /// Sets how readily the cgroup swaps (cgroup v1 `memory.swappiness`);
    /// `Ok(false)` where it has no such file (v2 follows the system's).
    /// The cgroup is this process's own: nothing to restore.
    pub fn set_swappiness(&self, v: u64) -> Result<bool, LimitError> {
        let file = self.dir.join("memory.swappiness");
        if !file.exists() {
            return Ok(false);
        }
        std::fs::write(&file, v.to_string()).map_err(|source| LimitError::Io {
            doing: format!("cannot set {}", file.display()),
            source,
        })?;
        Ok(true)
    }
}

/// The `oom_kill N` line of a cgroup's `memory.events` (v2) or
/// `memory.oom_control` (v1).
fn oom_kill_count(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix("oom_kill "))
        .and_then(|n| n.trim().parse().ok())
}

impl Drop for MemoryLimit {
    fn drop(&mut self) {
        // Its processes are gone by now (the caller stops them first); a
        // cgroup with none is removed with rmdir. Retry briefly while the
        // last ones are being reaped.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

/// Removes the memory cgroup a killed run `pid` made, if it is there and
/// holds no process; returns what it did.
pub fn release(pid: u32) -> Option<String> {
    let (parent, _) = own_cgroup().ok()?;
    let dir = parent.join(format!("scalebench-{pid}"));
    if !dir.is_dir() {
        return None;
    }
    Some(match std::fs::remove_dir(&dir) {
        Ok(()) => format!("removed the memory cgroup {}", dir.display()),
        Err(e) => format!("could not remove the memory cgroup {}: {e}", dir.display()),
    })
}

/// Removes `scalebench-PID` cgroups below `parent` whose PID is gone and
/// which hold no process.
fn sweep_stale(parent: &Path) {
    let Ok(rd) = std::fs::read_dir(parent) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("scalebench-")
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        // SAFETY: probing a pid with signal 0.
        let alive = unsafe { libc::kill(pid, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
        let empty = std::fs::read_to_string(e.path().join("cgroup.procs"))
            .is_ok_and(|s| s.trim().is_empty());
        if !alive && empty {
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oom_kill_count_is_read_from_either_version_of_the_file() {
        let v2 = "low 0\nhigh 0\nmax 812\noom 2\noom_kill 2\noom_group_kill 0\n";
        assert_eq!(oom_kill_count(v2), Some(2));
        // v1's file starts with `oom_kill_disable`, which is not the count.
        let v1 = "oom_kill_disable 0\nunder_oom 0\noom_kill 7\n";
        assert_eq!(oom_kill_count(v1), Some(7));
        // Kernels before 4.13 did not count kills in v1.
        assert_eq!(oom_kill_count("oom_kill_disable 0\nunder_oom 0\n"), None);
    }
}
