//! The reference C programs in `reference/`, which
//! `scripts/compare-reference` and `scripts/bench-peers` build with gcc:
//! built here the same way, each is run once and what it prints is
//! checked for form and sense (never for speed), and every process it
//! started must be gone when it ends.
//!
//! Each program runs in a session of its own (setsid), so "what it left"
//! is every live process of that session. The check is made while the
//! program has exited but is not yet reaped: its pid, which is the
//! session's id, cannot be reused meanwhile, so every process found in the
//! session is one it started.

#![cfg(target_os = "linux")]

use crate::common;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The longest wait for anything to happen before the test fails: a
/// bound, not an expectation (a busy machine may need part of it).
const PATIENCE: Duration = Duration::from_secs(60);

/// Polls `f` until it gives something, failing after [`PATIENCE`] with
/// `what` (and what `f` last saw).
fn until<T>(what: &str, mut f: impl FnMut() -> Result<T, String>) -> T {
    let start = Instant::now();
    loop {
        match f() {
            Ok(v) => return v,
            Err(e) if start.elapsed() > PATIENCE => panic!("{what}: not after {PATIENCE:?}: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// Compiles `reference/NAME.c` with `gcc -O2` into `dir`, as the scripts
/// do; fails (never skips) when gcc is missing.
fn build(dir: &Path, name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("reference/{name}.c"));
    let bin = dir.join(name);
    let out = Command::new("gcc")
        .arg("-O2")
        .arg("-o")
        .arg(&bin)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "gcc, to build {}: {e} (scripts/test installs it: apt-get install gcc)",
                src.display()
            )
        });
    assert!(
        out.status.success(),
        "gcc -O2 {}: {}",
        src.display(),
        common::text(&out.stderr)
    );
    bin
}

/// Whether process `pid`, our child, has ended; it is left unreaped.
fn ended_unreaped(pid: u32) -> Option<libc::siginfo_t> {
    // SAFETY: a zeroed siginfo_t is valid; waitid only writes into it.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
    // SAFETY: waiting for our own child without reaping it.
    let r = unsafe { libc::waitid(libc::P_PID, pid, &mut info, flags) };
    assert_eq!(r, 0, "waitid({pid}): {}", std::io::Error::last_os_error());
    // SAFETY: waitid filled `info` (si_pid stays 0 when nothing ended).
    (unsafe { info.si_pid() } != 0).then_some(info)
}

/// Waits for our child `pid` to end, leaving it unreaped.
fn wait_unreaped(pid: u32, what: &str) -> libc::siginfo_t {
    until(&format!("{what} ends"), || {
        ended_unreaped(pid).ok_or_else(|| "still running".to_string())
    })
}

/// Live processes of session `sid`, with their names and start times.
fn in_session(sid: u32) -> Vec<(i32, String, Option<u64>)> {
    common::live_processes()
        .into_iter()
        .filter(|(_, _, s)| *s == sid as i32)
        .map(|(pid, name, _)| (pid, name, common::stat(pid).map(|(_, t)| t)))
        .collect()
}

/// Checks that session `sid` has no live process left — at once, or when
/// `wait`, within [`PATIENCE`]. What is left fails the test, after being
/// killed (by pid and start time: the session's leader is our unreaped
/// child, so its members are processes it started).
fn assert_none_left(sid: u32, what: &str, wait: bool) {
    let start = Instant::now();
    let left = loop {
        let left = in_session(sid);
        if left.is_empty() {
            return;
        }
        if !wait || start.elapsed() > PATIENCE {
            break left;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    for (pid, _, started) in &left {
        if let Some(t) = started
            && common::still_running(*pid, *t)
        {
            // SAFETY: a process of the session our child leads, checked
            // by its start time just before.
            unsafe { libc::kill(*pid, libc::SIGKILL) };
        }
    }
    panic!("{what} left processes behind (pid, name, start): {left:?}");
}

/// Runs `BIN ARGS` in a session of its own until it ends; checks that it
/// succeeded and left no process behind; returns the numbers of the one
/// line it printed, which must be `count` positive integers.
fn run_numbers(bin: &Path, args: &[&str], count: usize) -> Vec<u64> {
    let what = format!("{} {}", bin.display(), args.join(" "));
    let child = common::in_new_session(Command::new(bin).args(args))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let mut child = common::Child(child);
    let pid = child.0.id();
    wait_unreaped(pid, &what);
    assert_none_left(pid, &what, false);
    let out = common::read_all(child.0.stdout.take());
    let err = common::read_all(child.0.stderr.take());
    let status = child.0.wait().unwrap();
    assert!(status.success(), "{what}: {status}: {err}");
    assert_eq!(out.lines().count(), 1, "{what} printed {out:?}");
    let v: Vec<u64> = out
        .split_whitespace()
        .map(|w| {
            w.parse()
                .unwrap_or_else(|_| panic!("{what}: {w:?} in {out:?}"))
        })
        .collect();
    assert_eq!(v.len(), count, "{what} printed {out:?}");
    assert!(v.iter().all(|&x| x > 0), "{what} printed {out:?}");
    v
}

/// Sends a GET for `path` on `c` (with `extra` header lines), reads the
/// response's head and as many body bytes as its Content-Length says, and
/// returns that length. That the body had exactly that many bytes shows in
/// what comes next on the connection: the next response's status line, or
/// the end of the connection.
fn get(c: &mut BufReader<TcpStream>, path: &str, extra: &str) -> usize {
    let req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}\r\n");
    c.get_mut().write_all(req.as_bytes()).unwrap();
    let mut status = String::new();
    c.read_line(&mut status).unwrap();
    assert!(
        status.starts_with("HTTP/1.1 200 "),
        "status line {status:?}"
    );
    let mut length = None;
    loop {
        let mut line = String::new();
        assert!(c.read_line(&mut line).unwrap() > 0, "the head ends");
        if line == "\r\n" {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = Some(v.trim().parse::<usize>().unwrap());
        }
    }
    let length = length.expect("a Content-Length");
    let mut body = vec![0; length];
    c.read_exact(&mut body).unwrap();
    length
}

/// Starts `limitsrv PORT NPROC BODY` on a free loopback port, in a session
/// of its own, through `sh -c '… & wait'` when `under_sh` (so that it has
/// a parent that can die). Returns the started process (limitsrv or sh)
/// and a connection to the server.
fn start_limitsrv(
    bin: &Path,
    nproc: u32,
    body: usize,
    under_sh: bool,
) -> (common::Child, TcpStream) {
    for _ in 0..10 {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let args = [port.to_string(), nproc.to_string(), body.to_string()];
        let mut cmd = if under_sh {
            let mut c = Command::new("sh");
            c.arg("-c").arg("\"$0\" \"$@\" & wait").arg(bin).args(&args);
            c
        } else {
            let mut c = Command::new(bin);
            c.args(&args);
            c
        };
        let mut child = common::Child(
            common::in_new_session(&mut cmd)
                .stdin(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        let conn = until("limitsrv answers or ends", || {
            if let Some(st) = child.0.try_wait().unwrap() {
                return Ok(Err(st));
            }
            TcpStream::connect(("127.0.0.1", port))
                .map(Ok)
                .map_err(|e| e.to_string())
        });
        match conn {
            Ok(c) => return (child, c),
            Err(st) => {
                let err = common::read_all(child.0.stderr.take());
                // Another process took the port in between: try another.
                assert!(err.contains("in use"), "limitsrv {args:?}: {st}: {err}");
            }
        }
    }
    panic!("limitsrv: no free loopback port in 10 tries");
}

/// limitsrv answers keep-alive and closing requests with its fixed body,
/// runs NPROC processes, and ends with all of them on SIGTERM and when
/// its parent dies.
fn check_limitsrv(bin: &Path) {
    const BODY: usize = 200_000;
    let (mut srv, c) = start_limitsrv(bin, 2, BODY, false);
    let pid = srv.0.id();
    c.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut c = BufReader::new(c);
    // Two requests on one connection: the second's status line comes
    // right after the first body, and the connection ends right after the
    // second.
    assert_eq!(get(&mut c, "/", ""), BODY);
    assert_eq!(get(&mut c, "/any/path?x=1", "Connection: close\r\n"), BODY);
    let mut rest = Vec::new();
    c.read_to_end(&mut rest).unwrap();
    assert!(
        rest.is_empty(),
        "after Connection: close: {} more bytes",
        rest.len()
    );
    let procs = in_session(pid);
    assert_eq!(
        procs.len(),
        2,
        "limitsrv with NPROC 2 runs as two processes: {procs:?}"
    );
    // SAFETY: signalling our own child, not yet reaped.
    unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    let info = wait_unreaped(pid, "limitsrv after SIGTERM");
    assert_none_left(pid, "limitsrv after SIGTERM", false);
    // SAFETY: waitid filled `info`.
    let status = unsafe { info.si_status() };
    assert_eq!(
        (info.si_code, status),
        (libc::CLD_EXITED, 0),
        "limitsrv's end on SIGTERM"
    );
    srv.0.wait().unwrap();

    // Its parent (sh) killed: limitsrv and its worker end of themselves.
    let (sh, c) = start_limitsrv(bin, 2, 16, true);
    drop(c);
    let sid = sh.0.id();
    until("limitsrv and its worker are up under sh", || {
        let n = in_session(sid).len();
        if n == 3 {
            Ok(())
        } else {
            Err(format!("{n} processes"))
        }
    });
    // SAFETY: signalling our own child, not yet reaped.
    unsafe { libc::kill(sid as i32, libc::SIGKILL) };
    wait_unreaped(sid, "sh after SIGKILL");
    assert_none_left(sid, "limitsrv, its parent killed,", true);
    drop(sh);
}

#[test]
fn reference_programs_build_print_their_figures_and_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let socketref = build(dir.path(), "socketref");
    let forkref = build(dir.path(), "forkref");
    let limitsrv = build(dir.path(), "limitsrv");
    run_numbers(&socketref, &["200"], 4);
    run_numbers(&forkref, &["50"], 3);
    check_limitsrv(&limitsrv);
}
