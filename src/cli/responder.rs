//! `scalebench __responder`: the network benchmarks' server process. It
//! raises its own descriptor limit, listens, prints `listening ADDR` on
//! standard output and serves until standard input closes.

use super::ResponderArgs;
use crate::harness::limits;
use crate::net::engine;
use crate::net::files::{Bodies, Opens, StaticFiles};
use crate::net::server::{Config, FixedResponder, Handler};
use crate::net::sock;
use anyhow::Context;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::process::ExitCode;

/// Runs the server.
pub fn run(a: ResponderArgs) -> anyhow::Result<ExitCode> {
    let _limits = limits::raise();
    if let Some(cpu) = a.cpu {
        crate::sys::pin_to_cpu(cpu).map_err(|e| anyhow::anyhow!("--cpu {cpu}: {e}"))?;
    }
    let listener =
        sock::listen(&a.addr, 4096).with_context(|| format!("cannot listen on {}", a.addr))?;
    let bound = sock::local_addr(listener.as_raw_fd())?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening {bound}")?;
        out.flush()?;
    }
    let mut fixed;
    let mut files;
    let _dir;
    let handler: &mut dyn Handler = match &a.run_dir {
        Some(run_dir) if a.from_file => {
            let dir = tempfile::Builder::new()
                .prefix("responder-")
                .tempdir_in(run_dir)
                .with_context(|| {
                    format!("--run-dir {}: a directory for the body", run_dir.display())
                })?;
            let body: Vec<u8> = (0..a.body).map(|i| b'a' + (i % 26) as u8).collect();
            std::fs::write(dir.path().join("body.txt"), body).context("the body's file")?;
            files = StaticFiles::new(dir.path(), Bodies::Files, Opens::PerRequest)
                .context("the body's directory")?;
            _dir = dir;
            &mut files
        }
        _ => {
            fixed = FixedResponder::new(a.body, a.greet);
            &mut fixed
        }
    };
    engine::serve(
        listener.as_raw_fd(),
        Some(0),
        Config::new(a.backend.into()),
        handler,
    )
    .with_context(|| format!("the {} server failed", crate::net::Backend::from(a.backend)))?;
    Ok(ExitCode::SUCCESS)
}
