//! What scalebench runs on the far side of an ssh connection: the build
//! identity that decides whether a host's scalebench is this one
//! (`__build-id`), and the supervisor (`__host-exec`) that ties what runs
//! there to the connection.
//!
//! A process started over ssh is not ended when the connection is: it
//! only sees the end of its standard input, and only once sshd notices
//! that the client is gone (which on a silently lost network can take
//! hours). So every long-lived process on an ssh host runs under
//! `__host-exec`: scalebench writes a byte to it every second, and when
//! its input ends or stays silent for the idle time it closes the
//! standard input of the subcommand it runs (every serving subcommand
//! stops on that), kills its process group after a grace period, and
//! removes the directory it was given (the host's scratch directory with
//! the copied binary).

use std::ffi::OsString;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How often scalebench writes to a supervisor on an ssh host.
pub const HEARTBEAT: Duration = Duration::from_secs(1);
/// How long a supervisor waits without a byte before it ends what it runs.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(15);

/// This binary's identity: name, version, OS and architecture it was
/// built for, and the CRC-32 and length of the executable file. Two
/// binaries with the same identity are the same build.
pub fn build_id() -> String {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        let fingerprint = std::env::current_exe()
            .and_then(std::fs::read)
            .map(|b| format!("{:08x}:{}", crc32fast::hash(&b), b.len()))
            .unwrap_or_else(|e| format!("unreadable ({e})"));
        format!(
            "scalebench {} {}-{} {fingerprint}",
            env!("CARGO_PKG_VERSION"),
            std::env::consts::OS,
            std::env::consts::ARCH
        )
    })
    .clone()
}

/// Why a supervisor stopped what it ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// Its standard input ended (the connection or scalebench closed it).
    InputEnded,
    /// Nothing came for the idle time (a lost connection).
    Idle,
    /// What it ran ended by itself.
    ChildEnded,
}

/// `__host-exec`: runs `args` (a scalebench subcommand; none: nothing,
/// only wait) until standard input ends or is silent for `idle`, then
/// stops it and removes `remove_dir`. Prints `ready DIR` first when it runs
/// nothing, so that the caller knows it holds the directory.
pub fn supervise(idle: Duration, remove_dir: Option<PathBuf>, args: Vec<OsString>) -> ExitCode {
    let mut child = None;
    if !args.is_empty() {
        let exe = match std::env::current_exe() {
            Ok(e) => e,
            Err(e) => {
                eprintln!("error: __host-exec: cannot find this executable: {e}");
                return ExitCode::from(2);
            }
        };
        let mut cmd = Command::new(exe);
        cmd.args(&args).stdin(Stdio::piped());
        {
            use std::os::unix::process::CommandExt;
            // SAFETY: one async-signal-safe call between fork and exec.
            unsafe {
                cmd.pre_exec(|| {
                    crate::sys::die_with_parent(libc::SIGKILL);
                    Ok(())
                });
            }
            cmd.process_group(0);
        }
        match cmd.spawn() {
            Ok(c) => child = Some(c),
            Err(e) => {
                eprintln!("error: __host-exec: cannot start the subcommand: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        println!(
            "ready {}",
            remove_dir
                .as_deref()
                .map_or(String::new(), |d| d.display().to_string())
        );
    }
    let why = watch(idle, &mut child);
    let mut code = ExitCode::SUCCESS;
    if let Some(mut c) = child {
        drop(c.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            match c.try_wait() {
                Ok(Some(st)) => break Some(st),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                _ => break None,
            }
        };
        // SAFETY: signalling the process group this supervisor made.
        unsafe { libc::kill(-(c.id() as i32), libc::SIGKILL) };
        let status = status.or_else(|| c.wait().ok());
        if !status.is_some_and(|s| s.success()) {
            code = ExitCode::from(1);
        }
    }
    if let Some(d) = &remove_dir
        && let Err(e) = std::fs::remove_dir_all(d)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        eprintln!("error: __host-exec: removing {}: {e}", d.display());
        code = ExitCode::from(1);
    }
    if why == Stop::Idle {
        eprintln!(
            "__host-exec: nothing from scalebench for {} s: connection lost, stopped",
            idle.as_secs()
        );
    }
    code
}

/// Reads standard input until it ends or is silent for `idle`, or the
/// child ends.
fn watch(idle: Duration, child: &mut Option<std::process::Child>) -> Stop {
    let mut last = Instant::now();
    let mut stdin = std::io::stdin().lock();
    loop {
        if let Some(c) = child.as_mut()
            && matches!(c.try_wait(), Ok(Some(_)))
        {
            return Stop::ChildEnded;
        }
        if last.elapsed() > idle {
            return Stop::Idle;
        }
        let mut p = libc::pollfd {
            fd: 0,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: polling one valid pollfd.
        let r = unsafe { libc::poll(&mut p, 1, 200) };
        if r < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Stop::InputEnded;
        }
        if r == 0 {
            continue;
        }
        let mut b = [0u8; 256];
        match stdin.read(&mut b) {
            Ok(0) => return Stop::InputEnded,
            Ok(_) => last = Instant::now(),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return Stop::InputEnded,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_id_names_version_target_and_file() {
        let id = build_id();
        assert!(id.starts_with(&format!("scalebench {} ", env!("CARGO_PKG_VERSION"))));
        assert!(id.contains(std::env::consts::ARCH), "{id}");
        let fp = id.rsplit(' ').next().unwrap();
        let (crc, len) = fp.split_once(':').expect("crc:len");
        assert_eq!(crc.len(), 8, "{id}");
        assert!(len.parse::<u64>().unwrap() > 0, "{id}");
        assert_eq!(build_id(), id);
    }
}
