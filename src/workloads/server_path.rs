//! How the workloads' own server answers a request: by default the seeds'
//! path (gatling and fnord: per request the path looked up, the file
//! opened, its body sent with sendfile, the file closed) on the OS's best
//! readiness backend; the cache of open files and small bodies, and
//! io_uring, only when named. The workloads that serve files (`fs`,
//! `http-ipstack`, `http-shortconn`, `bigfile`) take these flags and record
//! the path in every row's `server_info` and in their params.

use super::{FlagError, Given, WorkloadFlag};
use crate::net::Backend;
use crate::net::files::Opens;
use serde_json::json;
use std::collections::BTreeMap;
use std::ffi::OsString;

const HEADING: &str = "The workloads' server";

/// `--serve-files`.
pub(crate) const FILES_FLAG: WorkloadFlag = WorkloadFlag {
    choices: &[
        (
            "per-request",
            "the path looked up, the file opened, sent (sendfile) and closed for each request, as the seeds' servers did (the default)",
        ),
        (
            "cached",
            "open files kept between requests and bodies up to 64 KB kept in memory: the filesystem is barely asked",
        ),
    ],
    ..WorkloadFlag::value(
        "serve-files",
        "PATH",
        HEADING,
        "fs, http-ipstack, http-shortconn, bigfile: how scalebench serve finds and holds a file.",
    )
};

/// `--serve-loop`.
pub(crate) const LOOP_FLAG: WorkloadFlag = WorkloadFlag {
    choices: &[
        ("epoll", "Linux epoll(7)"),
        ("kqueue", "BSD and macOS kqueue(2)"),
        ("poll", "poll(2)"),
        ("select", "select(2)"),
        (
            "io_uring",
            "Linux io_uring (6.1 or later): multishot accept and receive, batched sends",
        ),
    ],
    ..WorkloadFlag::value(
        "serve-loop",
        "LOOP",
        HEADING,
        "fs, http-ipstack, http-shortconn, bigfile: the event loop of scalebench serve (default: the best readiness backend of the OS, epoll or kqueue).",
    )
};

/// The event loop the server runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Loop {
    /// The best readiness backend of the server host's OS, which it picks
    /// itself (epoll, kqueue): the server may run on another machine.
    Best,
    /// A readiness backend.
    Readiness(Backend),
    /// io_uring (Linux).
    IoUring,
}

/// How the workloads' `scalebench serve` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ServerPath {
    /// Per request or cached.
    pub(crate) files: Opens,
    /// Its event loop.
    pub(crate) event_loop: Loop,
}

impl Default for ServerPath {
    /// The seeds' path on the server host's best readiness backend.
    fn default() -> ServerPath {
        ServerPath {
            files: Opens::PerRequest,
            event_loop: Loop::Best,
        }
    }
}

impl ServerPath {
    /// The path the flags given ask for; a loop named is checked against
    /// this OS when the server runs here (`server_here`), else by the
    /// server host's `serve`.
    pub(crate) fn of(given: &Given, server_here: bool) -> Result<ServerPath, FlagError> {
        let mut p = ServerPath::default();
        match given.value("serve-files") {
            None | Some("per-request") => {}
            Some("cached") => p.files = Opens::Cached,
            Some(other) => {
                return Err(FlagError::of(
                    "serve-files",
                    format!("--serve-files {other}: per-request or cached"),
                ));
            }
        }
        if let Some(name) = given.value("serve-loop") {
            p.event_loop = loop_named(name, server_here)?;
        }
        Ok(p)
    }

    /// The name of its loop (`epoll`, `io_uring`, …) on a server of this
    /// OS (`here`) or of another one's (`Best`: `readiness`, its choice).
    pub(crate) fn loop_name(&self, here: bool) -> &'static str {
        match self.event_loop {
            Loop::Best if here => Backend::available_all()[0].name(),
            Loop::Best => "readiness",
            Loop::Readiness(b) => b.name(),
            Loop::IoUring => "io_uring",
        }
    }

    /// The arguments that make `scalebench serve` run so.
    pub(crate) fn serve_args(&self) -> Vec<OsString> {
        let mut v: Vec<OsString> = vec!["--files".into(), self.files.name().into()];
        match self.event_loop {
            Loop::Best => v.push("--no-io-uring".into()),
            Loop::Readiness(b) => v.extend(["--backend".into(), b.name().into()]),
            Loop::IoUring => v.push("--io-uring".into()),
        }
        v
    }

    /// Records it in a workload's params: `server_files` and `server_loop`
    /// (of a server on this machine's OS when `here`).
    pub(crate) fn record(&self, p: &mut BTreeMap<String, serde_json::Value>, here: bool) {
        p.insert("server_files".into(), json!(self.files.name()));
        p.insert("server_loop".into(), json!(self.loop_name(here)));
    }
}

/// The loop `name` names, where this OS has it when the server runs here
/// (`server_here`).
fn loop_named(name: &str, server_here: bool) -> Result<Loop, FlagError> {
    let available = || {
        let mut v: Vec<&str> = Backend::available_all().iter().map(|b| b.name()).collect();
        if crate::net::engine::uring_available() {
            v.push("io_uring");
        }
        v.join(", ")
    };
    let l = match name {
        "io_uring" => Loop::IoUring,
        n => match Backend::parse(n) {
            Some(b) => Loop::Readiness(b),
            None => {
                return Err(FlagError::of(
                    "serve-loop",
                    format!(
                        "--serve-loop {n}: not an event loop (available here: {})",
                        available()
                    ),
                ));
            }
        },
    };
    let here = match l {
        Loop::Best => true,
        Loop::Readiness(b) => b.available(),
        Loop::IoUring => crate::net::engine::uring_available(),
    };
    if server_here && !here {
        return Err(FlagError::of(
            "serve-loop",
            format!(
                "--serve-loop {name}: not available on this system (available here: {})",
                available()
            ),
        )
        .failed());
    }
    Ok(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given(pairs: &[(&str, &str)]) -> Given {
        let mut g = Given::default();
        for (k, v) in pairs {
            g.set(k, vec![v.to_string()]);
        }
        g
    }

    #[test]
    fn the_seeds_path_is_the_default_and_each_choice_reaches_serve() {
        let p = ServerPath::of(&given(&[]), true).unwrap();
        assert_eq!(p.files, Opens::PerRequest);
        // The server's host picks its best readiness backend itself.
        assert_eq!(p.event_loop, Loop::Best);
        assert_eq!(
            p.serve_args(),
            ["--files", "per-request", "--no-io-uring"].map(OsString::from)
        );
        assert_eq!(p.loop_name(true), Backend::available_all()[0].name());
        assert_eq!(p.loop_name(false), "readiness");
        let p = ServerPath::of(
            &given(&[("serve-files", "cached"), ("serve-loop", "poll")]),
            true,
        )
        .unwrap();
        assert_eq!(
            p.serve_args(),
            ["--files", "cached", "--backend", "poll"].map(OsString::from)
        );
        let mut params = BTreeMap::new();
        p.record(&mut params, true);
        assert_eq!(params["server_files"], "cached");
        assert_eq!(params["server_loop"], "poll");
    }

    #[test]
    fn a_loop_this_system_lacks_is_refused_by_name() {
        let missing = if cfg!(target_os = "linux") {
            "kqueue"
        } else {
            "epoll"
        };
        let e = ServerPath::of(&given(&[("serve-loop", missing)]), true).unwrap_err();
        assert_eq!(e.flag.as_deref(), Some("serve-loop"));
        assert!(
            e.words.contains("not available on this system"),
            "{}",
            e.words
        );
        assert!(e.words.contains("select"), "{}", e.words);
        let e = ServerPath::of(&given(&[("serve-loop", "kevent")]), true).unwrap_err();
        assert!(e.words.contains("not an event loop"), "{}", e.words);
        // A server on another host judges its own loop.
        let p = ServerPath::of(&given(&[("serve-loop", missing)]), false).unwrap();
        assert_eq!(p.serve_args()[3], missing);
    }
}
