//! `scalebench serve`: static files over HTTP/1.1 with one or more worker
//! processes. Prints `listening http://ADDR/` once bound; serves until ^C,
//! or until standard input closes when it is a pipe, answering a line
//! `stats` there with `accept-errors {…}` (its failed accepts by errno).

use super::ServeArgs;
use crate::harness::limits;
use crate::net::Backend;
use crate::net::files::{Bodies, StaticFiles};
use crate::net::output::FileMode;
use crate::net::server::{Config, Handler};
use crate::net::workers::{self, Listen};
use crate::results::output;
use anyhow::Context;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::ExitCode;

/// Runs the server.
pub fn run(a: ServeArgs) -> anyhow::Result<ExitCode> {
    let _limits = limits::raise();
    make_objects(&a)?;
    // Fail early, naming the directory, before anything is bound.
    StaticFiles::new(&a.root, Bodies::Auto)
        .with_context(|| format!("--root {}", a.root.display()))?;
    let addr = a.addr.unwrap_or_else(|| {
        if a.ipv6 {
            "[::1]:0".parse().expect("valid")
        } else {
            "127.0.0.1:0".parse().expect("valid")
        }
    });
    let backend = a
        .backend
        .map_or_else(|| Backend::available_all()[0], Backend::from);
    if !backend.available() {
        anyhow::bail!(
            "--backend {backend}: not available on {}",
            std::env::consts::OS
        );
    }
    let io_uring = uring_wanted(&a)?;
    let workers = a.processes.or(a.reuseport).unwrap_or(1) as usize;
    let listen = Listen {
        addr,
        workers,
        reuseport: a.reuseport.is_some(),
        backlog: 4096,
    };
    let (listeners, bound) =
        workers::bind(&listen).with_context(|| format!("cannot listen on {addr}"))?;
    if !a.no_defer_accept {
        for l in &listeners {
            // Where the OS has no such option (or the FreeBSD module is not
            // loaded) accepting simply is not deferred.
            let _ = crate::sys::defer_accept(l.as_raw_fd());
        }
    }
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening http://{bound}/")?;
        out.flush()?;
    }
    let cfg = Config {
        file_mode: if a.readwrite {
            FileMode::Readwrite
        } else {
            FileMode::Sendfile
        },
        idle_timeout: a.idle_timeout.0,
        head_timeout: a.header_timeout.0,
        max_requests: Some(a.max_requests.max(1)),
        io_uring,
        accept_errors: crate::net::errcount::ErrnoTable::shared(),
        ..Config::new(backend)
    };
    let bodies = if a.sendfile || a.readwrite {
        Bodies::Files
    } else {
        Bodies::Auto
    };
    let root = a.root.clone();
    workers::serve_all(
        listeners,
        workers,
        cfg,
        workers::stdin_control(),
        move || {
            Box::new(StaticFiles::new(&root, bodies).expect("checked at start")) as Box<dyn Handler>
        },
    )
    .context("the server failed")?;
    Ok(ExitCode::SUCCESS)
}

/// Makes the `--object` files in `--root` (the directory made first when
/// it is missing), under the output rules: each a plain name in the root,
/// never written through a link or over anything but a regular file, an
/// existing file replaced only with `--force`; all checked before the
/// first is written.
fn make_objects(a: &ServeArgs) -> anyhow::Result<()> {
    if a.objects.is_empty() {
        return Ok(());
    }
    std::fs::create_dir_all(&a.root)
        .with_context(|| format!("--root {}: cannot make it", a.root.display()))?;
    let existing = output::Existing::forced(a.force);
    let mut paths = Vec::new();
    for (name, _) in &a.objects {
        let what = format!("--object {name}");
        let path = output::in_dir(&what, &a.root, name)?;
        let others: Vec<(&Path, &str)> = paths
            .iter()
            .map(|p: &std::path::PathBuf| (p.as_path(), "another --object"))
            .collect();
        output::check(&what, &path, existing, &others)?;
        paths.push(path);
    }
    for ((_, bytes), path) in a.objects.iter().zip(&paths) {
        output::write_file_atomic(path, |w| {
            let data: Vec<u8> = (0..*bytes).map(|i| (i % 251) as u8).collect();
            Ok(w.write_all(&data)?)
        })?;
    }
    Ok(())
}

/// Whether to serve with io_uring: when asked (`--io-uring`, an error
/// where it cannot), and by default where the kernel can and no readiness
/// backend was named.
fn uring_wanted(a: &ServeArgs) -> anyhow::Result<bool> {
    #[cfg(target_os = "linux")]
    let can = crate::net::uring::available();
    #[cfg(not(target_os = "linux"))]
    let can = false;
    if a.io_uring {
        if a.backend.is_some() {
            anyhow::bail!("--io-uring and --backend: choose one");
        }
        if !can {
            anyhow::bail!(
                "--io-uring: this kernel cannot (Linux 6.1 or later with io_uring enabled is needed)"
            );
        }
        return Ok(true);
    }
    Ok(can && a.backend.is_none())
}
