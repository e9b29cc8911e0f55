//! DTrace's `profile` provider (FreeBSD, macOS, illumos): kernel and user
//! stacks of the given processes, aggregated by DTrace and printed with a
//! fixed `printa` format that [`parse_output`] reads.
//!
//! Written to DTrace's documented interface; on Linux it is only
//! type-checked and its parser tested on text in that format.

use super::{Profiler, Recording, interrupt, wait_group};
use crate::reaper::ChildGroup;
use analysis::stacks::{Frame, Sample};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The DTrace backend.
pub struct Dtrace {
    program: String,
}

const FREQUENCY: u32 = 997;

impl Dtrace {
    /// DTrace, run as `program`.
    pub fn new(program: &str) -> Dtrace {
        Dtrace {
            program: program.to_string(),
        }
    }
}

/// The D script: sample the pids at FREQUENCY Hz for `secs`, then print
/// each distinct (pid, command, kernel stack, user stack) with its count.
pub fn script(pids: &[u32], secs: u64) -> String {
    // progenyof() follows the children the processes start later.
    let pred: Vec<String> = pids.iter().map(|p| format!("progenyof({p})")).collect();
    format!(
        "profile-{FREQUENCY} /{}/ {{ @s[pid, execname, stack(), ustack()] = count(); }} \
         tick-{}s {{ exit(0); }} \
         END {{ printa(\"%d %s\\n%k\\n--\\n%k\\n%@d\\n===\\n\", @s); }}",
        pred.join(" || "),
        secs.max(1)
    )
}

impl Profiler for Dtrace {
    fn name(&self) -> &'static str {
        "dtrace"
    }

    fn event(&self) -> &'static str {
        "profile"
    }

    fn frequency(&self) -> u32 {
        FREQUENCY
    }

    fn check(&self) -> Result<(), String> {
        let out = Command::new(&self.program)
            .args(["-q", "-n", "BEGIN { exit(0); }"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| {
                format!(
                    "the profiler `{}` is not installed or does not run ({e})",
                    self.program
                )
            })?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "`{}` cannot trace here: {} (DTrace needs root; on FreeBSD `kldload dtraceall`, on macOS System Integrity Protection must allow dtrace)",
                self.program,
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }

    fn start(
        &self,
        pids: &[u32],
        length: Duration,
        dir: &Path,
    ) -> Result<Box<dyn Recording>, String> {
        let out = dir.join("dtrace.out");
        let child = ChildGroup::spawn(
            Command::new(&self.program)
                .args(["-q", "-x", "stackframes=100", "-x", "ustackframes=100"])
                .args(["-n", &script(pids, length.as_secs_f64().ceil() as u64)])
                .arg("-o")
                .arg(&out)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped()),
        )
        .map_err(|e| format!("{}: {e}", self.program))?;
        Ok(Box::new(DtraceRecording {
            program: self.program.clone(),
            child: Some(child),
            out,
        }))
    }
}

struct DtraceRecording {
    program: String,
    child: Option<ChildGroup>,
    out: PathBuf,
}

impl Drop for DtraceRecording {
    fn drop(&mut self) {
        // The group is killed and reaped with it.
        self.child = None;
        let _ = std::fs::remove_file(&self.out);
    }
}

impl Recording for DtraceRecording {
    fn stop(&mut self) {
        // SIGINT: DTrace runs its END clause (printing the stacks) and exits.
        if let Some(g) = &self.child {
            interrupt(g);
        }
    }

    fn finish(mut self: Box<Self>) -> Result<Vec<Sample>, String> {
        let mut g = self.child.take().ok_or("dtrace was not started")?;
        let (status, err) = wait_group(&mut g).map_err(|e| format!("{}: {e}", self.program))?;
        if !status.success() {
            return Err(format!("{} failed: {}", self.program, err.trim()));
        }
        let text = std::fs::read_to_string(&self.out).map_err(|e| e.to_string())?;
        Ok(parse_output(&text))
    }
}

/// `module`function+0x12` → (module, function).
fn frame(line: &str, kernel: bool) -> Option<Frame> {
    let t = line.trim();
    if t.is_empty() {
        return None;
    }
    let f = t.split_once('`').map_or(t, |(_, f)| f);
    let f = match f.rfind("+0x") {
        Some(i) => &f[..i],
        None => f,
    };
    let function = if f.starts_with("0x") || f.is_empty() {
        "[unknown]".to_string()
    } else {
        f.to_string()
    };
    Some(Frame { function, kernel })
}

/// Reads the `printa` output of [`script`]: per record `PID COMM`, the
/// kernel frames, `--`, the user frames, the count, `===`. Each record
/// becomes `count` samples (innermost frame first, kernel frames before
/// user frames, as in a perf stack).
pub fn parse_output(text: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(head) = lines.next() {
        let head = head.trim();
        if head.is_empty() || head == "===" {
            continue;
        }
        let (pid, comm) = match head.split_once(' ') {
            Some((p, c)) => match p.parse::<u32>() {
                Ok(p) => (p, c.trim().to_string()),
                Err(_) => continue,
            },
            None => continue,
        };
        let mut frames = Vec::new();
        let mut kernel = true;
        let mut count = 0u64;
        for l in lines.by_ref() {
            let t = l.trim();
            if t == "===" {
                break;
            }
            if t == "--" {
                kernel = false;
                continue;
            }
            if !kernel && !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
                count = t.parse().unwrap_or(0);
                continue;
            }
            if let Some(f) = frame(t, kernel) {
                frames.push(f);
            }
        }
        if frames.is_empty() {
            continue;
        }
        for _ in 0..count.min(1_000_000) {
            out.push(Sample {
                pid,
                comm: comm.clone(),
                frames: frames.clone(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_names_every_pid() {
        let s = script(&[10, 20], 2);
        assert!(s.contains("progenyof(10) || progenyof(20)"));
        assert!(s.contains("profile-997") && s.contains("tick-2s"));
    }

    #[test]
    fn printa_output_becomes_samples() {
        let text = "\
1234 scalebench
              kernel`in_pcbbind_setup+0x1a2
              kernel`sobind+0x3c
              kernel`amd64_syscall+0x10
--
              libc.so.7`_bind+0xa
              scalebench`scalebench::bench::bind::op+0x40
              0x7fff00001234
3
===
1234 scalebench

--
              scalebench`user_only+0x2
1
===
";
        let s = parse_output(text);
        assert_eq!(s.len(), 4);
        assert_eq!(s[0].pid, 1234);
        assert_eq!(
            s[0].frames[0],
            Frame {
                function: "in_pcbbind_setup".into(),
                kernel: true
            }
        );
        assert_eq!(
            s[0].frames[3],
            Frame {
                function: "_bind".into(),
                kernel: false
            }
        );
        assert_eq!(s[0].frames[5].function, "[unknown]");
        assert_eq!(
            s[3].frames,
            vec![Frame {
                function: "user_only".into(),
                kernel: false
            }]
        );
    }
}
