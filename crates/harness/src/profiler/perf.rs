//! Linux `perf`: `perf record -e cpu-clock -g -p PIDS -- cat`, read back
//! with `perf script`. perf records while its workload runs: `cat` on a
//! pipe from scalebench, which ends when scalebench stops the recording
//! or dies — also by SIGKILL, which a `sleep LENGTH` outlived (perf dies
//! with scalebench, its workload did not).

use super::{Profiler, Recording, interrupt, wait_group};
use crate::reaper::ChildGroup;
use analysis::stacks::{Frame, Sample};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The perf backend.
pub struct Perf {
    program: String,
}

/// Samples per second: odd, so that it does not beat with periodic work.
const FREQUENCY: u32 = 997;

impl Perf {
    /// perf, run as `program`.
    pub fn new(program: &str) -> Perf {
        Perf {
            program: program.to_string(),
        }
    }
}

/// A `kernel.` sysctl as a number.
fn read_sysctl(name: &str) -> Option<i64> {
    sys::sysctl(&format!("kernel.{name}"))?.trim().parse().ok()
}

/// Why perf cannot record kernel stacks of our processes here, if it
/// cannot: `paranoid` is kernel.perf_event_paranoid, `kptr` is
/// kernel.kptr_restrict, `root` whether we run as root.
pub fn kernel_stacks_blocked(
    paranoid: Option<i64>,
    kptr: Option<i64>,
    root: bool,
) -> Option<String> {
    if !root && paranoid.is_some_and(|p| p > 1) {
        return Some(format!(
            "kernel stacks are not recorded: kernel.perf_event_paranoid is {} (needs 1 or less, or root); enable with `sudo sysctl kernel.perf_event_paranoid=1`",
            paranoid.unwrap_or(2)
        ));
    }
    if kptr.is_some_and(|k| k >= 2) || (!root && kptr.is_some_and(|k| k >= 1)) {
        return Some(format!(
            "kernel functions cannot be named: kernel.kptr_restrict is {} (needs 0, or 1 as root); enable with `sudo sysctl kernel.kptr_restrict=0`",
            kptr.unwrap_or(1)
        ));
    }
    None
}

impl Profiler for Perf {
    fn name(&self) -> &'static str {
        "perf"
    }

    fn event(&self) -> &'static str {
        "cpu-clock"
    }

    fn frequency(&self) -> u32 {
        FREQUENCY
    }

    fn check(&self) -> Result<(), String> {
        let ok = Command::new(&self.program)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            // A path given is the user's to mend; a name, the system's.
            let how = if self.program.contains('/') {
                "check the path given with --profiler".to_string()
            } else {
                "Debian: `apt-get install linux-perf`".to_string()
            };
            return Err(format!(
                "the profiler `{}` is not installed or does not run ({how})",
                self.program
            ));
        }
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        match kernel_stacks_blocked(
            read_sysctl("perf_event_paranoid"),
            read_sysctl("kptr_restrict"),
            root,
        ) {
            Some(why) => Err(why),
            None => Ok(()),
        }
    }

    fn start(
        &self,
        pids: &[u32],
        length: Duration,
        dir: &Path,
    ) -> Result<Box<dyn Recording>, String> {
        let data = dir.join("perf.data");
        let list: Vec<String> = pids.iter().map(u32::to_string).collect();
        // Events start disabled; `enable` on the control fifo starts them
        // and perf acknowledges, so the window begins when sampling does
        // (attaching to thousands of processes takes a while).
        let ctl = dir.join("ctl");
        let ack = dir.join("ack");
        for f in [&ctl, &ack] {
            let c = std::ffi::CString::new(f.as_os_str().as_encoded_bytes())
                .map_err(|e| e.to_string())?;
            // SAFETY: mkfifo with a NUL-terminated path.
            if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
                return Err(format!(
                    "mkfifo {}: {}",
                    f.display(),
                    std::io::Error::last_os_error()
                ));
            }
        }
        // `-p` opens an event per thread and CPU: with thousands of
        // threads (the pthread benchmark) that is more descriptors than
        // perf may have, so record every CPU instead and keep the samples
        // of these processes.
        let threads: usize = pids
            .iter()
            .map(|p| sys::procs::thread_count(*p).unwrap_or(1))
            .sum();
        let events = threads * sys::cpu_count();
        let fd_room = sys::get_rlimit(sys::Rlimit::Files)
            .and_then(|l| l.0)
            .unwrap_or(1024) as usize
            / 2;
        let only = (events > fd_room).then(|| pids.to_vec());
        let target: Vec<String> = match &only {
            Some(_) => vec!["-a".into()],
            None => vec!["-p".into(), list.join(",")],
        };
        // Its own process group, killed and reaped (perf's `cat` too) on
        // every way out; `length` bounds nothing here: the recording ends
        // when it is stopped, or at end of input when scalebench is gone.
        let _ = length;
        let child = ChildGroup::spawn(
            Command::new(&self.program)
                .args(["record", "-q", "-e", "cpu-clock", "-g", "-D", "-1"])
                .arg(format!(
                    "--control=fifo:{},{}",
                    ctl.display(),
                    ack.display()
                ))
                .args(["-F", &FREQUENCY.to_string()])
                .args(&target)
                .arg("-o")
                .arg(&data)
                .args(["--", "cat"])
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::piped()),
        )
        .map_err(|e| format!("{} record: {e}", self.program))?;
        Ok(Box::new(PerfRecording {
            program: self.program.clone(),
            child: Some(child),
            data,
            ctl,
            ack,
            ctl_fd: None,
            ack_fd: None,
            stopped: false,
            only,
        }))
    }
}

struct PerfRecording {
    program: String,
    child: Option<ChildGroup>,
    data: PathBuf,
    ctl: PathBuf,
    ack: PathBuf,
    ctl_fd: Option<std::fs::File>,
    ack_fd: Option<std::fs::File>,
    /// Stopped with SIGINT: a non-zero exit is then expected.
    stopped: bool,
    /// Recording every CPU: keep only these processes' samples.
    only: Option<Vec<u32>>,
}

/// How long perf may take to attach and answer.
const HANDSHAKE: Duration = Duration::from_secs(20);

impl PerfRecording {
    /// Whether perf has exited (then it failed: it runs for the window).
    fn exited(&mut self) -> Option<String> {
        let g = self.child.as_mut()?;
        match g.child().try_wait() {
            Ok(Some(st)) => {
                let err = wait_group(g).map(|(_, e)| e).unwrap_or_default();
                Some(format!(
                    "{} record ended early ({st}): {}",
                    self.program,
                    err.trim()
                ))
            }
            _ => None,
        }
    }

    /// Sends a command on the control fifo and waits for perf's `ack`.
    fn command(&mut self, cmd: &str) -> Result<(), String> {
        use std::io::{Read, Write};
        use std::os::unix::fs::OpenOptionsExt;
        let deadline = std::time::Instant::now() + HANDSHAKE;
        if self.ack_fd.is_none() {
            self.ack_fd = Some(
                std::fs::OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_NONBLOCK)
                    .open(&self.ack)
                    .map_err(|e| format!("{}: {e}", self.ack.display()))?,
            );
        }
        while self.ctl_fd.is_none() {
            // Opening the writing end fails (ENXIO) until perf reads it.
            match std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&self.ctl)
            {
                Ok(f) => self.ctl_fd = Some(f),
                Err(_) if std::time::Instant::now() < deadline => {
                    if let Some(e) = self.exited() {
                        return Err(e);
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => return Err(format!("perf did not open its control fifo: {e}")),
            }
        }
        if let Some(f) = self.ctl_fd.as_mut() {
            f.write_all(format!("{cmd}\n").as_bytes())
                .map_err(|e| format!("perf control: {e}"))?;
        }
        let mut got = Vec::new();
        let mut b = [0u8; 16];
        // perf writes "ack\n" and a NUL.
        while !got.windows(4).any(|w| w == b"ack\n") {
            let n = match self.ack_fd.as_mut() {
                Some(f) => f.read(&mut b).unwrap_or(0),
                None => 0,
            };
            if n > 0 {
                got.extend_from_slice(&b[..n]);
                continue;
            }
            if std::time::Instant::now() > deadline {
                return Err(format!("perf did not acknowledge `{cmd}`"));
            }
            if let Some(e) = self.exited() {
                return Err(e);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(())
    }
}

impl Drop for PerfRecording {
    fn drop(&mut self) {
        // The group (perf and its `cat`) is killed and reaped with it.
        self.child = None;
        let _ = std::fs::remove_file(&self.data);
    }
}

impl Recording for PerfRecording {
    fn ready(&mut self) -> Result<(), String> {
        self.command("enable")
    }

    fn stop(&mut self) {
        let _ = self.command("disable");
        self.ctl_fd = None;
        // SIGINT: perf ends its `cat` and writes what it has.
        self.stopped = true;
        if let Some(g) = &self.child {
            interrupt(g);
        }
    }

    fn finish(mut self: Box<Self>) -> Result<Vec<Sample>, String> {
        let mut g = self.child.take().ok_or("perf record was not started")?;
        let (status, err) =
            wait_group(&mut g).map_err(|e| format!("{} record: {e}", self.program))?;
        let ended_well = status.success() || (self.stopped && self.data.exists());
        if !ended_well {
            return Err(format!("{} record failed: {}", self.program, err.trim()));
        }
        let script = Command::new(&self.program)
            .args(["script", "-F", "comm,pid,ip,sym,dso", "-i"])
            .arg(&self.data)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .map_err(|e| format!("{} script: {e}", self.program))?;
        if !script.status.success() {
            return Err(format!("{} script failed", self.program));
        }
        let mut samples = parse_script(&String::from_utf8_lossy(&script.stdout));
        if let Some(pids) = &self.only {
            samples.retain(|s| pids.contains(&s.pid));
        }
        Ok(samples)
    }
}

/// Drops a Rust symbol's hash suffix (`::h0123456789abcdef`) and a
/// `+0x12` offset.
fn clean_symbol(s: &str) -> String {
    let s = match s.rfind("+0x") {
        Some(i) if s[i + 3..].bytes().all(|b| b.is_ascii_hexdigit()) => &s[..i],
        _ => s,
    };
    let s = match s.rfind("::h") {
        Some(i) if s.len() - i == 19 && s[i + 3..].bytes().all(|b| b.is_ascii_hexdigit()) => {
            &s[..i]
        }
        _ => s,
    };
    s.to_string()
}

/// One frame line: `ADDR SYMBOL (DSO)`.
fn parse_frame(line: &str) -> Option<Frame> {
    let line = line.trim();
    let (addr, rest) = line.split_once(char::is_whitespace)?;
    let addr = u64::from_str_radix(addr, 16).ok()?;
    let rest = rest.trim();
    let (sym, dso) = match rest.rfind(" (") {
        Some(i) if rest.ends_with(')') => (&rest[..i], &rest[i + 2..rest.len() - 1]),
        _ if rest.starts_with('(') && rest.ends_with(')') => ("", &rest[1..rest.len() - 1]),
        _ => (rest, ""),
    };
    let kernel = dso.starts_with("[kernel") || (dso.is_empty() && addr >= 0xffff_8000_0000_0000);
    let sym = sym.trim();
    let function = if sym.is_empty() || sym == "[unknown]" {
        "[unknown]".to_string()
    } else {
        clean_symbol(sym)
    };
    Some(Frame { function, kernel })
}

/// Parses `perf script -F comm,pid,ip,sym,dso` output: a header line
/// (`COMM PID`) per sample, then its frames, innermost first, indented; a
/// blank line between samples. Lines that cannot be read are skipped, a
/// last line without its newline is left out, and a sample cut short keeps
/// the frames it has.
pub fn parse_script(text: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    let mut cur: Option<Sample> = None;
    // A last line without its newline was cut short: left out.
    let whole = match text.rfind('\n') {
        Some(i) => &text[..=i],
        None => "",
    };
    for line in whole.lines() {
        if line.trim().is_empty() {
            if let Some(s) = cur.take()
                && !s.frames.is_empty()
            {
                out.push(s);
            }
            continue;
        }
        if line.starts_with(char::is_whitespace) {
            if let (Some(s), Some(f)) = (cur.as_mut(), parse_frame(line)) {
                s.frames.push(f);
            }
            continue;
        }
        // A header: the command name may contain spaces; the pid is the
        // last token made of digits (or `pid/tid`).
        if let Some(s) = cur.take()
            && !s.frames.is_empty()
        {
            out.push(s);
        }
        let toks: Vec<&str> = line.split_whitespace().collect();
        let Some(i) = toks.iter().rposition(|t| {
            let p = t.split('/').next().unwrap_or("");
            !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())
        }) else {
            continue;
        };
        let pid = toks[i]
            .split('/')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        cur = Some(Sample {
            pid,
            comm: toks[..i].join(" "),
            frames: Vec::new(),
        });
    }
    if let Some(s) = cur
        && !s.frames.is_empty()
    {
        out.push(s);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_lose_offsets_and_hashes() {
        assert_eq!(
            clean_symbol("inet_bind2_bucket_find+0x24"),
            "inet_bind2_bucket_find"
        );
        assert_eq!(
            clean_symbol("scalebench::bench::bind::BindRun::op::h0123456789abcdef+0x5"),
            "scalebench::bench::bind::BindRun::op"
        );
        assert_eq!(clean_symbol("a+b"), "a+b");
    }

    #[test]
    fn frames() {
        let f = parse_frame("\tffffffffa1b2c3d4 inet_bind2_bucket_find+0x24 ([kernel.kallsyms])")
            .unwrap();
        assert_eq!(
            f,
            Frame {
                function: "inet_bind2_bucket_find".into(),
                kernel: true
            }
        );
        let f = parse_frame("\t    7f0011223344 __bind+0xb (/usr/lib/x86_64-linux-gnu/libc.so.6)")
            .unwrap();
        assert_eq!(
            f,
            Frame {
                function: "__bind".into(),
                kernel: false
            }
        );
        let f = parse_frame("\t    55aa00000000 [unknown] (/work/scalebench)").unwrap();
        assert_eq!(f.function, "[unknown]");
        let f = parse_frame("\t    55aa00000000 <T as core::Foo>::bar (x y) (/bin/a b)").unwrap();
        assert_eq!(f.function, "<T as core::Foo>::bar (x y)");
        assert!(parse_frame("\tnot a frame").is_none());
    }

    #[test]
    fn blocked_kernel_stacks_say_how_to_enable_them() {
        assert!(kernel_stacks_blocked(Some(2), Some(0), true).is_none());
        let e = kernel_stacks_blocked(Some(2), Some(0), false).unwrap();
        assert!(e.contains("perf_event_paranoid=1"), "{e}");
        let e = kernel_stacks_blocked(Some(1), Some(2), true).unwrap();
        assert!(e.contains("kptr_restrict=0"), "{e}");
        assert!(kernel_stacks_blocked(Some(1), Some(0), false).is_none());
    }
}
