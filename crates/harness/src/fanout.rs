//! Fanning work out over several copies of this scalebench executable,
//! when one process cannot hold it all (its descriptor limit, its ports):
//! each copy gets its own arguments and runs in a [`ChildGroup`] of its
//! own, all at the same time; their standard output is collected, their
//! standard error kept for errors. Nothing is left behind: a copy that runs
//! past the limit is killed, ^C asks every copy to stop (SIGTERM, so it can
//! still print what it measured) and kills what is left after a grace
//! period, so does a copy that fails (the others' work would be wasted), a
//! panic kills them through the [`super::reaper`] hook, and every copy is
//! reaped before [`run`] returns.
//!
//! Generic: the copies' subcommand and output format are the caller's.

use super::reaper::{self, ChildGroup};
use std::ffi::OsString;
use std::io::Read;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long the copies may run.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Every copy still running after this is killed.
    pub limit: Duration,
    /// After ^C (or SIGTERM), or when a copy failed, the others get
    /// SIGTERM and this long to end by themselves before they are killed.
    pub grace: Duration,
    /// Exit codes of a copy that did its work; a copy that ends with
    /// another (or by a signal, or cannot start) has failed.
    pub ok: &'static [i32],
}

/// How one copy ended.
#[derive(Debug)]
pub struct Copy {
    /// Its exit status; `None` when it was killed (limit, ^C) or could not
    /// start.
    pub status: Option<ExitStatus>,
    /// Everything it wrote to standard output.
    pub stdout: String,
    /// Everything it wrote to standard error.
    pub stderr: String,
    /// Killed because it ran past [`Bounds::limit`].
    pub timed_out: bool,
    /// Why it could not be started, if it could not.
    pub spawn_error: Option<String>,
}

/// Bytes of standard error an error message quotes, from its end.
const TAIL: usize = 600;

impl Copy {
    /// Its standard output if it exited with one of `codes`; otherwise a
    /// message with how it ended and the end of its standard error.
    pub fn output(&self, codes: &[i32]) -> Result<&str, String> {
        if let Some(e) = &self.spawn_error {
            return Err(format!("could not start: {e}"));
        }
        let how = match (self.status, self.timed_out) {
            (_, true) => "killed: it ran past its time limit".to_string(),
            (Some(s), _) if s.code().is_some_and(|c| codes.contains(&c)) => {
                return Ok(&self.stdout);
            }
            (Some(s), _) => format!("ended with {s}"),
            (None, _) => "killed: interrupted".to_string(),
        };
        Err(format!("{how}{}", stderr_tail(&self.stderr)))
    }
}

/// `": …"` and the last [`TAIL`] bytes of `stderr` (whole lines where it
/// can), or nothing when it is empty.
fn stderr_tail(stderr: &str) -> String {
    let t = stderr.trim();
    if t.is_empty() {
        return String::new();
    }
    let mut start = t.len().saturating_sub(TAIL);
    while !t.is_char_boundary(start) {
        start += 1;
    }
    let tail = &t[start..];
    let tail = match (start > 0, tail.find('\n')) {
        (true, Some(i)) if i + 1 < tail.len() => &tail[i + 1..],
        _ => tail,
    };
    format!(
        ": {}{}",
        if start > 0 { "… " } else { "" },
        tail.replace('\n', " / ")
    )
}

/// The running scalebench executable.
pub fn this_exe() -> std::io::Result<std::path::PathBuf> {
    std::env::current_exe()
}

/// Runs `exe` once per entry of `copies`, each with those arguments, all
/// at once, and waits for all of them within `bounds`; returns how each
/// ended, in order. Standard input is closed (`/dev/null`).
pub fn run(exe: &Path, copies: &[Vec<OsString>], bounds: Bounds) -> Vec<Copy> {
    run_commands(
        copies
            .iter()
            .map(|args| {
                let mut c = Command::new(exe);
                c.args(args);
                c
            })
            .collect(),
        bounds,
    )
}

/// Runs every command of `copies` at once (a copy of scalebench here, or
/// one reached through a host's command prefix) and waits for all of them
/// within `bounds`; returns how each ended, in order. Standard input is
/// closed (`/dev/null`).
pub fn run_commands(copies: Vec<Command>, bounds: Bounds) -> Vec<Copy> {
    reaper::install();
    // Spawned from this thread, which keeps the groups until they end (the
    // parent-death signal follows the spawning thread on Linux).
    let mut running: Vec<Result<Running, String>> =
        copies.into_iter().map(Running::spawn).collect();
    let timed_out = wait_all(&mut running, bounds);
    running
        .into_iter()
        .map(|r| match r {
            Err(e) => Copy {
                status: None,
                stdout: String::new(),
                stderr: String::new(),
                timed_out: false,
                spawn_error: Some(e),
            },
            Ok(r) => r.ended(timed_out),
        })
        .collect()
}

/// A thread reading a copy's pipe to its end.
type Drain = std::thread::JoinHandle<String>;

/// A copy started: its process group, the threads reading its output, and
/// its exit status once it has ended.
struct Running {
    group: ChildGroup,
    out: Drain,
    err: Drain,
    status: Option<ExitStatus>,
}

/// A thread reading `r` (if there is one) to its end, as text.
fn drain(r: Option<impl Read + Send + 'static>) -> Drain {
    std::thread::spawn(move || {
        let mut s = Vec::new();
        if let Some(mut r) = r {
            let _ = r.read_to_end(&mut s);
        }
        String::from_utf8_lossy(&s).into_owned()
    })
}

impl Running {
    /// `cmd` started in a group of its own, its standard output and
    /// error drained; why not, if it could not start.
    fn spawn(mut cmd: Command) -> Result<Running, String> {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut group = ChildGroup::spawn(&mut cmd).map_err(|e| e.to_string())?;
        let out = drain(group.child().stdout.take());
        let err = drain(group.child().stderr.take());
        Ok(Running {
            group,
            out,
            err,
            status: None,
        })
    }

    /// How it ended: what is left of its group killed (so its pipes
    /// close) and its output read; `timed_out` if the copies ran past
    /// their limit (it was killed if it had not ended).
    fn ended(self, timed_out: bool) -> Copy {
        let status = self.status;
        // Kills what is left of the group, so its pipes close.
        drop(self.group);
        Copy {
            status,
            stdout: self.out.join().unwrap_or_default(),
            stderr: self.err.join().unwrap_or_default(),
            timed_out: timed_out && status.is_none(),
            spawn_error: None,
        }
    }
}

/// Waits until every copy in `running` has ended (their statuses recorded
/// there), or they ran past `bounds.limit` (true), or, after ^C or a copy
/// that failed, the others were asked to stop and had `bounds.grace` to.
fn wait_all(running: &mut [Result<Running, String>], bounds: Bounds) -> bool {
    let start = Instant::now();
    let mut asked_to_stop: Option<Instant> = None;
    let mut failed = running.iter().any(|r| r.is_err());
    loop {
        if reap(running, bounds.ok, &mut failed) == 0 {
            return false;
        }
        if start.elapsed() > bounds.limit {
            return true;
        }
        if sys::stop::interrupted() || failed {
            match asked_to_stop {
                None => {
                    ask_to_stop(running);
                    asked_to_stop = Some(Instant::now());
                }
                Some(t) if t.elapsed() > bounds.grace => return false,
                Some(_) => {}
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Records the status of each copy in `running` that has ended, `failed`
/// set if one ended with a code not in `ok`; returns how many are left.
fn reap(running: &mut [Result<Running, String>], ok: &[i32], failed: &mut bool) -> usize {
    let mut left = 0;
    for r in running.iter_mut().flatten() {
        if r.status.is_none() {
            match r.group.child().try_wait() {
                Ok(Some(st)) => {
                    r.status = Some(st);
                    *failed |= !st.code().is_some_and(|c| ok.contains(&c));
                }
                Ok(None) => left += 1,
                // Cannot be waited for: treat as gone (the group's drop
                // kills and reaps it).
                Err(_) => {}
            }
        }
    }
    left
}

/// SIGTERM to every copy in `running` still running.
fn ask_to_stop(running: &[Result<Running, String>]) {
    for r in running.iter().flatten() {
        if r.status.is_none() {
            // SAFETY: signalling a process group we created.
            unsafe { libc::kill(-r.group.pgid(), libc::SIGTERM) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::reaper::tests::one;

    fn sh(script: &str) -> Vec<OsString> {
        vec!["-c".into(), script.into()]
    }

    const BOUNDS: Bounds = Bounds {
        limit: Duration::from_secs(20),
        grace: Duration::from_secs(1),
        ok: &[0],
    };

    /// A shell line that waits (at most 15 s) until `path` exists.
    fn await_file(path: &Path) -> String {
        format!(
            "i=0; while [ ! -e '{p}' ] && [ $i -lt 1500 ]; do sleep 0.01; i=$((i + 1)); done",
            p = path.display()
        )
    }

    #[test]
    fn every_copy_runs_at_once_with_its_own_arguments() {
        let _one = one();
        // Each copy says it is there, then waits until all three are: one
        // after another, the first would wait alone until the end of its
        // 15 s and see only itself.
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display();
        let copies: Vec<_> = (0..3)
            .map(|i| {
                sh(&format!(
                    "touch '{d}/{i}'; {w}; {w1}; {w2}; echo copy {i} saw $(ls '{d}' | wc -l | tr -d ' ')",
                    w = await_file(&dir.path().join("0")),
                    w1 = await_file(&dir.path().join("1")),
                    w2 = await_file(&dir.path().join("2")),
                ))
            })
            .collect();
        let got = run(Path::new("/bin/sh"), &copies, BOUNDS);
        for (i, c) in got.iter().enumerate() {
            assert_eq!(
                c.output(&[0]).unwrap(),
                format!("copy {i} saw 3\n"),
                "the copies ran one after another"
            );
        }
    }

    #[test]
    fn a_failed_copy_says_how_it_ended_and_what_it_wrote_last() {
        let _one = one();
        let copies = vec![
            sh("echo fine"),
            sh("sleep 0.3; echo partial; echo first line >&2; echo 'no such URL' >&2; exit 3"),
        ];
        let got = run(Path::new("/bin/sh"), &copies, BOUNDS);
        assert_eq!(got[0].output(&[0]).unwrap(), "fine\n");
        let e = got[1].output(&[0]).unwrap_err();
        assert!(e.contains("exit status: 3"), "{e}");
        assert!(e.ends_with("first line / no such URL"), "{e}");
        // An accepted code gives the output.
        assert_eq!(got[1].output(&[0, 3]).unwrap(), "partial\n");
        let long = "x".repeat(2000);
        let t = stderr_tail(&format!("{long}\nlast words\n"));
        assert!(t.len() < TAIL + 10 && t.ends_with("last words"), "{t}");
    }

    #[test]
    fn copies_past_the_limit_are_killed_and_the_rest_kept() {
        let _one = one();
        let start = Instant::now();
        let copies = vec![sh("echo quick"), sh("echo slow; sleep 30")];
        // The limit leaves both shells time to start and print on a busy
        // machine (500 ms raced their start), and ends the sleep.
        let got = run(
            Path::new("/bin/sh"),
            &copies,
            Bounds {
                limit: Duration::from_secs(2),
                grace: Duration::from_secs(1),
                ok: &[0],
            },
        );
        assert!(start.elapsed() < Duration::from_secs(20));
        assert_eq!(got[0].output(&[0]).unwrap(), "quick\n");
        assert!(got[1].timed_out && got[1].status.is_none());
        assert_eq!(got[1].stdout, "slow\n", "what it printed is kept");
        let e = got[1].output(&[0]).unwrap_err();
        assert!(e.contains("time limit"), "{e}");
    }

    #[test]
    fn a_failed_copy_stops_the_others() {
        let _one = one();
        // The second fails once the first has set its trap (however long
        // its shell took to start).
        let dir = tempfile::tempdir().unwrap();
        let ready = dir.path().join("ready");
        let start = Instant::now();
        let copies = vec![
            sh(&format!(
                "trap 'echo stopped; exit 0' TERM; echo working; touch '{}'; sleep 30 & wait",
                ready.display()
            )),
            sh(&format!("{}; exit 2", await_file(&ready))),
        ];
        let got = run(Path::new("/bin/sh"), &copies, BOUNDS);
        // Asked to stop, not left to its 30 s.
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{:?}",
            start.elapsed()
        );
        assert_eq!(
            got[0].output(&[0]).unwrap(),
            "working\nstopped\n",
            "asked, not killed"
        );
        assert!(got[1].output(&[0]).unwrap_err().contains("exit status: 2"));
    }

    #[test]
    fn a_missing_executable_is_an_error_per_copy() {
        let _one = one();
        let got = run(Path::new("/nonexistent/scalebench"), &[vec![]], BOUNDS);
        let e = got[0].output(&[0]).unwrap_err();
        assert!(e.contains("could not start"), "{e}");
    }
}
