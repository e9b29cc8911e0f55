//! The server side of the network benchmarks: `scalebench __responder` in
//! a process (and process group) of its own, so that client and server each
//! have their own descriptor limit. It prints the address it bound (port 0
//! gives a free port) and serves until its standard input closes; dropping
//! [`ServerProc`] closes that and kills the group.

use super::StartError;
use crate::ctx::Ctx;
use crate::harness::Resource;
use crate::harness::limits::Budget;
use crate::net::Backend;
use crate::sys::{self, Rlimit};
use anyhow::anyhow;
use std::net::SocketAddr;

/// Body length of the benchmark server's responses.
pub const BODY_BYTES: usize = 128;

/// Descriptors a server process uses besides its connections (stdio,
/// listener, poller), with a margin.
const SERVER_BASE_FDS: u64 = 16;

/// A running benchmark server, on the run's server host.
pub struct ServerProc {
    _served: crate::hosts::Served,
    /// Where the client reaches it.
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
pub fn server_budgets(ctx: &Ctx, variant: Option<&str>, extra: u64) -> Vec<(Resource, Budget)> {
    let mut budgets = server_limit(ctx, variant);
    for (_, b) in budgets.iter_mut() {
        b.max = b.max.saturating_sub(extra);
    }
    budgets
}

/// How many connections the server of `variant` can hold (on the run's
/// server host: its own limit when it is another machine).
fn server_limit(ctx: &Ctx, variant: Option<&str>) -> Vec<(Resource, Budget)> {
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
    let host = &ctx.hosts().server;
    let (hard, on) = if host.on_this_machine() {
        (
            sys::get_rlimit(Rlimit::Files).and_then(|l| l.1),
            String::new(),
        )
    } else {
        (
            host.record()
                .system
                .as_ref()
                .and_then(|s| s.limits.get("RLIMIT_NOFILE"))
                .and_then(|l| l.hard),
            format!(" on {}", host.reach()),
        )
    };
    match hard {
        Some(hard) => vec![(
            Resource::Descriptors,
            Budget {
                max: hard.saturating_sub(SERVER_BASE_FDS),
                reason: format!("the server process's open-files limit RLIMIT_NOFILE {hard}{on}"),
            },
        )],
        None => Vec::new(),
    }
}

/// How the benchmark server answers a GET.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answers {
    /// From a body kept in memory, and one byte sent to every new
    /// connection (so that each connect is noticed through the backend).
    Greeting,
    /// From a file of [`BODY_BYTES`] on the seeds' path: per request
    /// looked up, opened, sent with sendfile and closed.
    FromFile,
}

impl ServerProc {
    /// Starts a server with `backend` that answers as `answers` says.
    pub fn start(ctx: &Ctx, backend: Backend, answers: Answers) -> Result<ServerProc, StartError> {
        let greet = answers == Answers::Greeting;
        let host = &ctx.hosts().server;
        let bind = SocketAddr::new(host.bind_address(ctx.net().ipv6), 0);
        let mut args: Vec<String> = vec![
            "__responder".into(),
            "--backend".into(),
            backend.name().into(),
            "--addr".into(),
            bind.to_string(),
            "--body".into(),
            BODY_BYTES.to_string(),
            "--run-dir".into(),
            host.scratch().display().to_string(),
        ];
        if answers == Answers::FromFile {
            args.push("--from-file".into());
        }
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
                _ if !host.on_this_machine() => 64,
                _ => 1,
            };
            args.extend(["--greet".into(), "--accept-burst".into(), burst.to_string()]);
        }
        // CPUs are this machine's: a server on another one is not pinned.
        if let Some((_, cpu)) = ctx.net().cpus
            && host.on_this_machine()
        {
            args.extend(["--cpu".into(), cpu.to_string()]);
        }
        let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
        let served = host
            .spawn(&args, &format!("the {backend} server"))
            .map_err(|e| {
                if ctx.net().ipv6 && e.contains("address") {
                    StartError::Unsupported(format!("no IPv6 here: {e}"))
                } else {
                    StartError::from(anyhow!(e))
                }
            })?;
        let addr = host
            .reachable(served.bound().map_err(|e| anyhow!(e))?)
            .map_err(StartError::Unsupported)?;
        Ok(ServerProc {
            _served: served,
            addr,
        })
    }
}
