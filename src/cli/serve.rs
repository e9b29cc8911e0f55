//! `scalebench serve`: static files over HTTP/1.1 with one or more worker
//! processes. Prints `listening http://ADDR/` once bound; serves until ^C,
//! or until standard input closes when it is a pipe, answering a line
//! `stats` there with `accept-errors {…}` (its failed accepts by errno).

use super::ServeArgs;
use crate::harness::limits;
use crate::net::Backend;
use crate::net::files::{Bodies, Opens, StaticFiles};
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
    StaticFiles::new(&a.root, Bodies::Auto, Opens::Cached)
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
    if a.nginx {
        return serve_nginx(&a, addr);
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
    let opens = Opens::from(a.files);
    let root = a.root.clone();
    if a.fork_per_connection {
        let cfg = Config {
            io_uring: false,
            ..cfg
        };
        let mut h = StaticFiles::new(&root, bodies, opens).context("--root")?;
        crate::net::forking::serve(
            listeners[0].as_raw_fd(),
            workers::stdin_control(),
            cfg,
            &mut h,
        )
        .context("the server failed")?;
        return Ok(ExitCode::SUCCESS);
    }
    workers::serve_all(
        listeners,
        workers,
        cfg,
        workers::stdin_control(),
        move || {
            Box::new(StaticFiles::new(&root, bodies, opens).expect("checked at start"))
                as Box<dyn Handler>
        },
    )
    .context("the server failed")?;
    Ok(ExitCode::SUCCESS)
}

/// Runs nginx over `--root` on `addr` until standard input closes (or
/// ^C), answering `info` and `stats` there.
fn serve_nginx(a: &ServeArgs, addr: std::net::SocketAddr) -> anyhow::Result<ExitCode> {
    // SIGTERM and SIGHUP end it as ^C does: nginx stopped, its temporary
    // directory removed (killed by the signal, both were left).
    crate::harness::reaper::install();
    let temp;
    let dir = match &a.nginx_dir {
        Some(d) => d.clone(),
        None => {
            temp = tempfile::Builder::new()
                .prefix("scalebench-nginx-")
                .tempdir()
                .context("a directory for nginx")?;
            temp.path().to_path_buf()
        }
    };
    let root =
        std::fs::canonicalize(&a.root).with_context(|| format!("--root {}", a.root.display()))?;
    let setup = crate::net::nginx::Setup {
        root,
        dir,
        addr,
        workers: a.processes.or(a.reuseport).unwrap_or(1),
        reuseport: a.reuseport.is_some(),
    };
    let mut n = crate::net::nginx::Nginx::start(&setup)?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening http://{}/", n.addr)?;
        out.flush()?;
    }
    let control = workers::stdin_control();
    let mut b = [0u8; 256];
    while n.running() && !crate::stop::interrupted() {
        let Some(fd) = control else {
            std::thread::sleep(std::time::Duration::from_millis(200));
            continue;
        };
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: polling one valid pollfd.
        if unsafe { libc::poll(&mut p, 1, 200) } <= 0 {
            continue;
        }
        let got = match crate::net::sock::read(fd, &mut b) {
            Ok(0) => break,
            Ok(k) => &b[..k],
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let text = String::from_utf8_lossy(got);
        let mut out = std::io::stdout().lock();
        for word in text.split_whitespace() {
            match word {
                "stats" => writeln!(
                    out,
                    "{} unknown: nginx does not report its failed accepts",
                    crate::net::errcount::ANSWER
                )?,
                "info" => writeln!(
                    out,
                    "info {}",
                    serde_json::json!({"server": "nginx", "version": n.version, "config": n.config})
                )?,
                _ => {}
            }
        }
        out.flush()?;
    }
    let died = !n.running();
    n.stop();
    if died && !crate::stop::interrupted() {
        anyhow::bail!("nginx ended by itself");
    }
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
    for (i, (name, _)) in a.objects.iter().enumerate() {
        if a.objects[..i].iter().any(|(n, _)| n == name) {
            refuse!("--object {name} is given twice");
        }
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
        output::write_file_atomic(path, |w| -> anyhow::Result<()> {
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
    let can = crate::net::engine::uring_available();
    if a.io_uring {
        if a.backend.is_some() {
            refuse!("--io-uring and --backend: choose one");
        }
        if !can {
            anyhow::bail!(
                "--io-uring: this kernel cannot (Linux 6.1 or later with io_uring enabled is needed)"
            );
        }
        return Ok(true);
    }
    Ok(can && a.backend.is_none() && !a.no_io_uring)
}
