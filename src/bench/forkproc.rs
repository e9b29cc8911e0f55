//! The harness side of the fork helper (`forker.rs`): writes the embedded
//! helper binary into the work directory, starts it in a process group of
//! its own and asks it, one command at a time, to fork or kill a child.
//! The helper times each call with the same raw clock the harness uses.

use super::forker::{CMD_FORK, CMD_KILL, CMD_KILL_NEWEST, CMD_MAP, CMD_UNMAP, REPLY_LEN, Reply};
use super::{StartError, StepError, errno_name};
use crate::ctx::Ctx;
use crate::harness::Resource;
use crate::harness::clock::Stopwatch;
use crate::harness::reaper::ChildGroup;
use crate::stop::interrupted;
use anyhow::{Context, anyhow};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::{Command, Stdio};

static DYNAMIC: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/forker-dynamic"));
static DYNAMIC_WHY: &str = include_str!(concat!(env!("OUT_DIR"), "/forker-dynamic.why"));
static STATIC: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/forker-static"));
static STATIC_WHY: &str = include_str!(concat!(env!("OUT_DIR"), "/forker-static.why"));

/// How the helper that does the forking is linked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Linking {
    /// Dynamically linked against the system C library.
    Dynamic,
    /// Statically linked (`-C target-feature=+crt-static`).
    Static,
}

impl Linking {
    fn binary(self) -> (&'static [u8], &'static str, &'static str) {
        match self {
            Linking::Dynamic => (DYNAMIC, DYNAMIC_WHY, "forker-dynamic"),
            Linking::Static => (STATIC, STATIC_WHY, "forker-static"),
        }
    }
}

/// A running fork helper and the children it holds.
pub struct Forker {
    // Field order matters: the pipes close before the group is killed.
    stdin: std::process::ChildStdin,
    stdout: std::process::ChildStdout,
    live: u64,
    /// Pages the helper has mapped (`fork-maps`).
    mapped: u64,
    _group: ChildGroup,
}

/// Writes the helper into the work directory (once) and returns its path.
fn install(ctx: &Ctx, linking: Linking) -> Result<PathBuf, StartError> {
    let (bytes, why, name) = linking.binary();
    if bytes.is_empty() {
        return Err(StartError::Unsupported(format!(
            "the {name} helper was not built: {why}"
        )));
    }
    let path = ctx.workdir().join(name);
    if !path.exists() {
        use std::os::unix::fs::OpenOptionsExt;
        let tmp = ctx.workdir().join(format!(".{name}.tmp"));
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o755)
            .open(&tmp)
            .with_context(|| format!("writing {}", tmp.display()))?;
        f.write_all(bytes)
            .with_context(|| format!("writing {}", tmp.display()))?;
        drop(f);
        std::fs::rename(&tmp, &path).with_context(|| format!("renaming {}", tmp.display()))?;
    }
    Ok(path)
}

impl Forker {
    /// Starts the helper.
    pub fn start(ctx: &Ctx, linking: Linking) -> Result<Forker, StartError> {
        let path = install(ctx, linking)?;
        let mut cmd = Command::new(&path);
        // The helper has no C headers: it is told how this OS spells an
        // anonymous private mapping.
        cmd.arg(ctx.clock().source().code())
            .arg((libc::MAP_PRIVATE | libc::MAP_ANON).to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        // A file just written may still be open in a child another thread
        // is forking ("text file busy"): retry briefly.
        let mut attempt = 0;
        let mut group = loop {
            match ChildGroup::spawn(&mut cmd) {
                Ok(g) => break g,
                Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && attempt < 50 => {
                    attempt += 1;
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                    return Err(StartError::Unsupported(format!(
                        "cannot execute the fork helper {} ({e}); is the work directory \
                         mounted noexec? Choose another with --workdir",
                        path.display()
                    )));
                }
                Err(e) => {
                    return Err(anyhow!("starting the fork helper {}: {e}", path.display()).into());
                }
            }
        };
        let child = group.child();
        let stdin = child.stdin.take().context("helper stdin")?;
        let stdout = child.stdout.take().context("helper stdout")?;
        Ok(Forker {
            stdin,
            stdout,
            live: 0,
            mapped: 0,
            _group: group,
        })
    }

    /// Children alive now.
    pub fn live(&self) -> u64 {
        self.live
    }

    fn request(&mut self, cmd: u8) -> Result<Reply, StepError> {
        self.stdin
            .write_all(&[cmd])
            .map_err(|e| anyhow!("fork helper died: {e}"))?;
        let mut buf = [0u8; REPLY_LEN];
        let mut got = 0;
        while got < REPLY_LEN {
            // SAFETY: reading into the unfilled tail of `buf`.
            let r = unsafe {
                libc::read(
                    self.stdout.as_raw_fd(),
                    buf[got..].as_mut_ptr().cast(),
                    REPLY_LEN - got,
                )
            };
            if r > 0 {
                got += r as usize;
            } else if r == 0 {
                return Err(anyhow!("fork helper exited unexpectedly").into());
            } else if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                if interrupted() {
                    return Err(StepError::Interrupted);
                }
            } else {
                return Err(anyhow!(
                    "reading from the fork helper: {}",
                    std::io::Error::last_os_error()
                )
                .into());
            }
        }
        Reply::decode(&buf).ok_or_else(|| anyhow!("fork helper sent a malformed reply").into())
    }

    /// Forks one more child; records fork-until-byte-read.
    pub fn fork_one(&mut self, sw: &mut Stopwatch) -> Result<(), StepError> {
        match self.request(CMD_FORK)? {
            Reply::Ticks(t) => {
                sw.record_ticks(t);
                self.live += 1;
                Ok(())
            }
            Reply::Errno(e) => {
                let detail = format!(
                    "fork() failed with {} ({}) at n = {}",
                    errno_name(e),
                    std::io::Error::from_raw_os_error(e),
                    self.live
                );
                if e == libc::EAGAIN || e == libc::ENOMEM {
                    Err(StepError::Limit {
                        resource: Resource::Processes,
                        detail,
                    })
                } else {
                    Err(anyhow!(detail).into())
                }
            }
        }
    }

    /// Kills and reaps the oldest child; records kill-until-reaped.
    pub fn kill_one(&mut self, sw: &mut Stopwatch) -> Result<(), StepError> {
        self.kill(CMD_KILL, sw)
    }

    /// Kills and reaps the newest child (the last one forked), so that the
    /// children left are those of one fork earlier; records
    /// kill-until-reaped.
    pub fn kill_newest(&mut self, sw: &mut Stopwatch) -> Result<(), StepError> {
        self.kill(CMD_KILL_NEWEST, sw)
    }

    fn kill(&mut self, cmd: u8, sw: &mut Stopwatch) -> Result<(), StepError> {
        let ticks = self.kill_ticks(cmd)?;
        sw.record_ticks(ticks);
        Ok(())
    }

    /// Kills and reaps the newest child, untimed (`fork-maps`: each child
    /// ends right after the fork that made it, outside the time).
    pub fn reap_newest(&mut self) -> Result<(), StepError> {
        self.kill_ticks(CMD_KILL_NEWEST).map(drop)
    }

    fn kill_ticks(&mut self, cmd: u8) -> Result<u64, StepError> {
        match self.request(cmd)? {
            Reply::Ticks(t) => {
                self.live -= 1;
                Ok(t)
            }
            Reply::Errno(e) => Err(anyhow!(
                "kill()/waitpid() failed with {} at n = {}",
                errno_name(e),
                self.live
            )
            .into()),
        }
    }

    /// Pages the helper holds mapped.
    pub fn mapped(&self) -> u64 {
        self.mapped
    }

    /// Maps or unmaps pages in the helper, untimed, until it holds `n`.
    pub fn map_to(&mut self, n: u64) -> Result<(), StepError> {
        while self.mapped != n {
            let cmd = if self.mapped < n { CMD_MAP } else { CMD_UNMAP };
            match self.request(cmd)? {
                Reply::Ticks(now) => self.mapped = now,
                Reply::Errno(e) => {
                    let detail = format!(
                        "mmap() in the fork helper failed with {} ({}) at {} mappings",
                        errno_name(e),
                        std::io::Error::from_raw_os_error(e),
                        self.mapped
                    );
                    return Err(if cmd == CMD_MAP && e == libc::ENOMEM {
                        StepError::Limit {
                            resource: Resource::Mappings,
                            detail,
                        }
                    } else {
                        anyhow!(detail).into()
                    });
                }
            }
        }
        Ok(())
    }
}

// The helper's ELF layout is checked on x86_64 Linux only.
#[cfg(all(test, target_os = "linux", target_arch = "x86_64"))]
mod tests {
    use super::*;

    /// Whether an ELF image asks for a program interpreter (dynamic loader).
    fn has_interp(elf: &[u8]) -> bool {
        assert_eq!(&elf[..4], b"\x7fELF");
        let u16at = |o: usize| u16::from_le_bytes([elf[o], elf[o + 1]]) as usize;
        let u64at = |o: usize| u64::from_le_bytes(elf[o..o + 8].try_into().unwrap()) as usize;
        let (phoff, phentsize, phnum) = (u64at(0x20), u16at(0x36), u16at(0x38));
        (0..phnum).any(|i| {
            let o = phoff + i * phentsize;
            u32::from_le_bytes(elf[o..o + 4].try_into().unwrap()) == 3 // PT_INTERP
        })
    }

    #[test]
    fn helpers_are_linked_as_named() {
        assert!(!DYNAMIC.is_empty(), "{DYNAMIC_WHY}");
        assert!(!STATIC.is_empty(), "{STATIC_WHY}");
        assert!(has_interp(DYNAMIC), "dynamic helper has a loader");
        assert!(!has_interp(STATIC), "static helper has no loader");
    }
}

#[cfg(test)]
mod run_tests {
    use super::*;
    use crate::harness::clock::Clock;
    use crate::results::TimerKind;

    #[test]
    fn both_helpers_fork_and_reap() {
        let clock = Clock::new(TimerKind::Monotonic).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let ctx = Ctx::new(dir.path(), &clock);
        for linking in [Linking::Dynamic, Linking::Static] {
            let mut f = match Forker::start(&ctx, linking) {
                Ok(f) => f,
                Err(StartError::Unsupported(why)) if cfg!(not(target_os = "linux")) => {
                    sys::say!("{linking:?}: {why}");
                    continue;
                }
                Err(e) => panic!("{linking:?}: {e}"),
            };
            let mut sw = Stopwatch::new(&clock);
            for i in 0..3 {
                assert_eq!(f.live(), i);
                f.fork_one(&mut sw).unwrap();
                let ns = sw.take_ns().unwrap();
                assert!(ns > 1_000 && ns < 1_000_000_000, "{linking:?}: {ns} ns");
            }
            f.kill_newest(&mut sw).unwrap();
            assert_eq!(f.live(), 2);
            f.fork_one(&mut sw).unwrap();
            for i in (0..3).rev() {
                f.kill_one(&mut sw).unwrap();
                assert!(sw.take_ns().unwrap() > 0);
                assert_eq!(f.live(), i);
            }
            assert!(f.kill_one(&mut sw).is_err(), "no child left to kill");
        }
    }

    /// Mappings of process `pid`, where the OS tells (Linux).
    fn mappings_of(pid: u32) -> Option<usize> {
        Some(
            std::fs::read_to_string(format!("/proc/{pid}/maps"))
                .ok()?
                .lines()
                .count(),
        )
    }

    #[test]
    fn the_helper_maps_pages_that_stay_apart_and_forks_over_them() {
        let clock = Clock::new(TimerKind::Monotonic).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let ctx = Ctx::new(dir.path(), &clock);
        let mut f = match Forker::start(&ctx, Linking::Dynamic) {
            Ok(f) => f,
            Err(StartError::Unsupported(why)) if cfg!(not(target_os = "linux")) => {
                sys::say!("{why}");
                return;
            }
            Err(e) => panic!("{e}"),
        };
        let pid = f._group.child().id();
        // Once the helper answers (it is loaded and running) and has its
        // table of pages, with one page mapped.
        f.map_to(1).unwrap();
        let base = mappings_of(pid);
        let mut sw = Stopwatch::new(&clock);
        for n in [300, 100, 1] {
            f.map_to(n).unwrap();
            assert_eq!(f.mapped(), n);
            if let (Some(b), Some(now)) = (base, mappings_of(pid)) {
                assert_eq!(now - b, n as usize - 1, "{n} pages, each a mapping");
            }
            f.fork_one(&mut sw).unwrap();
            assert!(sw.take_ns().unwrap() > 1_000);
            f.reap_newest().unwrap();
            assert_eq!(f.live(), 0);
        }
        f.map_to(0).unwrap();
        assert!(
            f.request(CMD_UNMAP)
                .is_ok_and(|r| r == Reply::Errno(libc::EINVAL))
        );
    }
}
