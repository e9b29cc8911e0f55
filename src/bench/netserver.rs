//! The server side of the network benchmarks: `scalebench __responder` in
//! a process (and process group) of its own, so that client and server each
//! have their own descriptor limit. It prints the address it bound (port 0
//! gives a free port) and serves until its standard input closes; dropping
//! [`ServerProc`] closes that and kills the group.

use super::StartError;
use crate::harness::limits::Budget;
use crate::harness::reaper::ChildGroup;
use crate::harness::{Ctx, Resource};
use crate::net::Backend;
use crate::sys::{self, Rlimit};
use anyhow::anyhow;
use std::io::Read;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::process::{ChildStdin, Command, Stdio};

/// Body length of the benchmark server's responses.
pub const BODY_BYTES: usize = 128;

/// Descriptors a server process uses besides its connections (stdio,
/// listener, poller), with a margin.
const SERVER_BASE_FDS: u64 = 16;

/// A running benchmark server.
pub struct ServerProc {
    // Field order: stdin closes (the server exits by itself) before the
    // group is killed and reaped.
    _stdin: ChildStdin,
    _group: ChildGroup,
    /// Where it listens.
    pub addr: SocketAddr,
}

/// The backend a variant names.
pub fn backend_of(variant: Option<&str>) -> Result<Backend, StartError> {
    let v = variant.ok_or_else(|| anyhow!("a network benchmark needs a backend variant"))?;
    let b = Backend::parse(v).ok_or_else(|| anyhow!("unknown backend `{v}`"))?;
    if !b.available() {
        return Err(StartError::Unsupported(format!(
            "the {v} backend does not exist on {}",
            std::env::consts::OS
        )));
    }
    Ok(b)
}

/// One series per chosen event backend.
pub fn backend_variants(ctx: &Ctx) -> Vec<String> {
    ctx.net()
        .backends
        .iter()
        .map(|b| b.name().to_string())
        .collect()
}

/// How many measured connections the server of `variant` can hold when
/// the run keeps `extra` more open (control connections, the operations of
/// one level).
pub fn server_budgets(variant: Option<&str>, extra: u64) -> Vec<(Resource, Budget)> {
    let mut budgets = server_limit(variant);
    for (_, b) in budgets.iter_mut() {
        b.max = b.max.saturating_sub(extra);
    }
    budgets
}

/// How many connections the server of `variant` can hold.
fn server_limit(variant: Option<&str>) -> Vec<(Resource, Budget)> {
    let Some(b) = variant.and_then(Backend::parse) else {
        return Vec::new();
    };
    if let Some(ceiling) = b.fd_ceiling() {
        return vec![(
            Resource::Descriptors,
            Budget {
                max: (ceiling as u64).saturating_sub(SERVER_BASE_FDS),
                reason: format!(
                    "select() on the server watches only descriptors below FD_SETSIZE = {ceiling}"
                ),
            },
        )];
    }
    // The server raises its soft limit to the hard one, as we do.
    match sys::get_rlimit(Rlimit::Files) {
        Some((_, Some(hard))) => vec![(
            Resource::Descriptors,
            Budget {
                max: hard.saturating_sub(SERVER_BASE_FDS),
                reason: format!("the server process's open-files limit RLIMIT_NOFILE {hard}"),
            },
        )],
        _ => Vec::new(),
    }
}

/// Waits up to 10 s for one line on `fd`.
fn read_line(r: &mut impl Read, fd: i32) -> Option<String> {
    let mut line = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return None;
        }
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: polling one valid pollfd.
        if unsafe { libc::poll(&mut p, 1, left.as_millis() as i32) } <= 0 {
            continue;
        }
        let mut b = [0u8; 1];
        match r.read(&mut b) {
            Ok(1) if b[0] == b'\n' => return Some(String::from_utf8_lossy(&line).into_owned()),
            Ok(1) => line.push(b[0]),
            Ok(_) => return None,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
}

impl ServerProc {
    /// Starts a server with `backend`; `greet` makes it send one byte to
    /// every new connection.
    pub fn start(ctx: &Ctx, backend: Backend, greet: bool) -> Result<ServerProc, StartError> {
        let exe = ctx.exe().ok_or_else(|| {
            StartError::Unsupported(
                "cannot find the scalebench executable to run the server".into(),
            )
        })?;
        let addr = if ctx.net().ipv6 {
            "[::1]:0"
        } else {
            "127.0.0.1:0"
        };
        let mut cmd = Command::new(exe);
        cmd.args(["__responder", "--backend", backend.name(), "--addr", addr])
            .args(["--body", &BODY_BYTES.to_string()])
            .arg("--run-dir")
            .arg(ctx.workdir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if greet {
            // Every timed connection must be noticed through the backend.
            // With client and server on different CPUs the server is back
            // in its wait long before the client's next connect (it has to
            // be woken, stop its clock and make a socket first), so it may
            // accept the batches that grow n in bursts; on one CPU the
            // client can run between the server's accepts, so one accept
            // per readiness event.
            let burst = match ctx.net().cpus {
                Some((client, server)) if client != server => 64,
                _ => 1,
            };
            cmd.args(["--greet", "--accept-burst", &burst.to_string()]);
        }
        if let Some((_, cpu)) = ctx.net().cpus {
            cmd.args(["--cpu", &cpu.to_string()]);
        }
        let mut group = ChildGroup::spawn(&mut cmd)
            .map_err(|e| anyhow!("starting the server {}: {e}", exe.display()))?;
        let child = group.child();
        let stdin = child.stdin.take().ok_or_else(|| anyhow!("server stdin"))?;
        let mut stdout = child
            .stdout
            .take()
            .ok_or_else(|| anyhow!("server stdout"))?;
        let fd = stdout.as_raw_fd();
        let line = read_line(&mut stdout, fd);
        let bound = line
            .as_deref()
            .and_then(|l| l.strip_prefix("listening "))
            .and_then(|a| a.trim().parse::<SocketAddr>().ok());
        match bound {
            Some(addr) => Ok(ServerProc {
                _stdin: stdin,
                _group: group,
                addr,
            }),
            None => {
                let mut err = String::new();
                if let Some(e) = group.child().stderr.as_mut() {
                    let _ = e.read_to_string(&mut err);
                }
                let err = err.trim().trim_start_matches("error: ").to_string();
                if ctx.net().ipv6 && err.contains("address") {
                    return Err(StartError::Unsupported(format!("no IPv6 loopback: {err}")));
                }
                Err(anyhow!(
                    "the {backend} server did not start{}",
                    if err.is_empty() {
                        String::new()
                    } else {
                        format!(": {err}")
                    }
                )
                .into())
            }
        }
    }
}
