//! `scalebench load` against `scalebench serve`, against nginx (Debian's;
//! `scripts/test` installs it), and against small servers that misbehave
//! on purpose, to prove the counts.

use crate::common;

use serde_json::Value;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;

fn load(args: &[&str]) -> (Value, bool) {
    let out = Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .arg("load")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (v, out.status.success())
}

fn serve(root: &Path) -> (common::Child, String) {
    common::spawn_announcing(
        Command::new(env!("CARGO_BIN_EXE_scalebench"))
            .arg("serve")
            .arg("--root")
            .arg(root),
        "listening ",
    )
}

fn site() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("f11k.bin"), vec![7u8; 11 * 1024]).unwrap();
    std::fs::write(t.path().join("f1k.bin"), vec![1u8; 1024]).unwrap();
    t
}

#[test]
fn counts_are_exact_against_serve() {
    let t = site();
    let (_s, url) = serve(t.path());
    let (v, ok) = load(&[
        &format!("{url}f11k.bin"),
        "-c",
        "10",
        "-n",
        "1000",
        "-k",
        "10",
        "-t",
        "2",
    ]);
    assert!(ok);
    assert_eq!(v["requests"], 1000);
    assert_eq!(v["body_bytes"], 1000 * 11 * 1024);
    assert_eq!(v["statuses"]["200"], 1000);
    assert_eq!(v["errors"]["reset"], 0);
    let conns = v["connections"].as_u64().unwrap();
    assert!(
        (100..=110).contains(&conns),
        "{conns} connections for 1000 requests, 10 each"
    );
    // A load of a count measures all its time, opening included.
    assert!(v.get("opening_s").is_none(), "{v}");
    // -c 1000000 -n 10 reported 32 requests (a request for each
    // of 32 processes). A connection with no request to make is not opened.
    let (v, ok) = load(&[
        &format!("{url}f1k.bin"),
        "-c",
        "1000000",
        "-n",
        "10",
        "-k",
        "1",
    ]);
    assert!(ok, "{v}");
    assert_eq!(v["requests"], 10, "{v}");
    assert_eq!(v["connections"], 10, "{v}");
    assert_eq!(v["processes"], 1, "{v}");
    // One request per connection, over two URLs.
    let (v, ok) = load(&[
        &format!("{url}f11k.bin"),
        &format!("{url}f1k.bin"),
        "-c",
        "4",
        "-n",
        "200",
        "-k",
        "1",
    ]);
    assert!(ok);
    assert_eq!(v["requests"], 200);
    assert_eq!(v["body_bytes"], 100 * 11 * 1024 + 100 * 1024);
    assert!(v["connections"].as_u64().unwrap() >= 200);
    // A 404 counts as a bad status, not as bytes of a file.
    let (v, _) = load(&[&format!("{url}missing"), "-c", "1", "-n", "3"]);
    assert_eq!(v["statuses"]["404"], 3);
    assert_eq!(v["errors"]["status"], 3);
}

#[test]
fn replay_follows_the_url_file() {
    let t = site();
    let (_s, url) = serve(t.path());
    let list = t.path().join("urls.txt");
    std::fs::write(
        &list,
        format!("# captured\n{url}f1k.bin\n{url}f11k.bin\n{url}f1k.bin\n"),
    )
    .unwrap();
    let (v, ok) = load(&["--urls", list.to_str().unwrap(), "-c", "1"]);
    assert!(ok);
    assert_eq!(v["requests"], 3, "one pass over the file");
    assert_eq!(v["body_bytes"], 2 * 1024 + 11 * 1024);
}

#[test]
fn counts_are_exact_against_nginx() {
    let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("nginx is not installed (scripts/test installs Debian's nginx)");
    let t = site();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let conf = t.path().join("nginx.conf");
    let tmp = t.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    std::fs::write(
        &conf,
        format!(
            "worker_processes 1; daemon off; pid {d}/nginx.pid; error_log {d}/error.log;\n\
             events {{ worker_connections 1024; }}\n\
             http {{ access_log off; client_body_temp_path {d}/tmp; proxy_temp_path {d}/tmp;\n\
             fastcgi_temp_path {d}/tmp; uwsgi_temp_path {d}/tmp; scgi_temp_path {d}/tmp;\n\
             server {{ listen 127.0.0.1:{port}; root {d}; }} }}\n",
            d = t.path().display()
        ),
    )
    .unwrap();
    let _n = common::Child(
        Command::new(nginx)
            .args(["-c", conf.to_str().unwrap()])
            .spawn()
            .unwrap(),
    );
    // Wait for it to listen.
    let start = std::time::Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(start.elapsed() < PATIENCE, "nginx did not start");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let (v, ok) = load(&[
        &format!("http://127.0.0.1:{port}/f11k.bin"),
        "-c",
        "20",
        "-n",
        "2000",
        "-k",
        "10",
    ]);
    assert!(ok, "{v}");
    assert_eq!(v["requests"], 2000);
    assert_eq!(v["body_bytes"], 2000 * 11 * 1024);
    assert_eq!(
        v["errors"]["reset"].as_u64().unwrap() + v["errors"]["short_body"].as_u64().unwrap(),
        0
    );
}

/// A server that answers every second connection and resets the others,
/// or sends a short body, or a 500.
fn misbehaving(kind: &'static str) -> (std::thread::JoinHandle<()>, String) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/x", l.local_addr().unwrap());
    let h = std::thread::spawn(move || {
        for (i, c) in l.incoming().enumerate() {
            let Ok(mut c) = c else { return };
            let mut buf = [0u8; 1024];
            let mut got = Vec::new();
            while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                match c.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                }
            }
            if got.starts_with(b"STOP") {
                return;
            }
            let bad = i % 2 == 1;
            match (kind, bad) {
                ("reset", true) => common::reset_on_close(&c),
                ("short", true) => {
                    let _ = c.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\nonly fifty bytes ..................................");
                }
                ("status", true) => {
                    let _ = c.write_all(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno");
                }
                _ => {
                    let _ = c.write_all(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
                    );
                }
            }
        }
    });
    (h, url)
}

fn stop(url: &str) {
    let addr = url.trim_start_matches("http://").trim_end_matches("/x");
    if let Ok(mut c) = TcpStream::connect(addr) {
        let _ = c.write_all(b"STOP\r\n\r\n");
    }
}

#[test]
fn errors_are_counted_by_kind_and_retried() {
    // Every other connection is reset (the first is answered): with
    // retries all 10 requests succeed, after 9 resets.
    let (h, url) = misbehaving("reset");
    let (v, ok) = load(&[&url, "-c", "1", "-n", "10", "-k", "1", "--retries", "3"]);
    stop(&url);
    h.join().unwrap();
    assert!(ok, "{v}");
    assert_eq!(v["requests"], 10);
    assert_eq!(v["errors"]["reset"], 9);
    assert_eq!(v["retries"], 9);
    assert_eq!(v["failed"], 0);
    // Without retries half of them fail.
    let (h, url) = misbehaving("reset");
    let (v, ok) = load(&[&url, "-c", "1", "-n", "10", "-k", "1", "--retries", "0"]);
    stop(&url);
    h.join().unwrap();
    assert!(!ok, "failed requests make the exit status 1");
    assert_eq!(v["requests"], 5);
    assert_eq!(v["failed"], 5);
    // Short bodies.
    let (h, url) = misbehaving("short");
    let (v, _) = load(&[&url, "-c", "1", "-n", "4", "-k", "1", "--retries", "0"]);
    stop(&url);
    h.join().unwrap();
    assert_eq!(v["errors"]["short_body"], 2);
    assert_eq!(v["requests"], 2);
    // Bad status: answered, counted as errors, not retried.
    let (h, url) = misbehaving("status");
    let (v, _) = load(&[&url, "-c", "1", "-n", "4", "-k", "1"]);
    stop(&url);
    h.join().unwrap();
    assert_eq!(v["errors"]["status"], 2);
    assert_eq!(v["statuses"]["500"], 2);
    assert_eq!(v["requests"], 4);
}

#[test]
fn refused_connections_are_connect_errors() {
    // A port nobody listens on: every attempt is refused, whether connect()
    // says so itself or the first write after it does.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    for k in ["1", "10"] {
        let url = format!("http://127.0.0.1:{port}/x");
        let (v, ok) = load(&[&url, "-c", "2", "-n", "3", "-k", k, "--retries", "1"]);
        assert!(!ok, "failed requests make the exit status 1: {v}");
        assert_eq!(v["requests"], 0, "{v}");
        assert_eq!(
            v["errors"]["connect"], 6,
            "3 requests, 2 attempts each: {v}"
        );
        assert_eq!(v["errors"]["reset"], 0, "{v}");
        assert_eq!(v["retries"], 3, "{v}");
        assert_eq!(v["failed"], 3, "{v}");
        // Named by errno, and no refused attempt counts as a connection.
        assert_eq!(v["errors"]["connect_errno"]["ECONNREFUSED"], 6, "{v}");
        assert_eq!(v["connections"], 0, "{v}");
    }
    // In words: the errno, and no latency made of nothing.
    let url = format!("http://127.0.0.1:{port}/x");
    let o = Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .args(["load", &url, "-c", "2", "-n", "2", "--retries", "0", "-q"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("connect 2 (ECONNREFUSED 2)"), "{text}");
    assert!(
        text.contains("latency   none: no request was answered"),
        "{text}"
    );
    assert!(!text.contains("0.0 ns"), "{text}");
    // For a duration: attempts refused at once, hundreds of thousands of
    // them, each retried or given up in turn (not by recursion, which
    // overflowed the stack). A second makes well over a thousand here; on
    // a machine too busy for that, the duration grows until it does.
    let url = format!("http://127.0.0.1:{port}/x");
    let mut v = Value::Null;
    for d in ["1", "4", "16"] {
        let (got, ok) = load(&[&url, "-c", "4", "-d", d, "-k", "1"]);
        assert!(!ok, "{got}");
        v = got;
        if v["errors"]["connect"].as_u64().unwrap() > 1000 {
            break;
        }
    }
    let connect = v["errors"]["connect"].as_u64().unwrap();
    assert!(connect > 1000, "{v}");
    let handled = v["retries"].as_u64().unwrap() + v["failed"].as_u64().unwrap();
    assert!(
        (connect - 4..=connect).contains(&handled),
        "every failure retried or given up, but those at the end: {v}"
    );
}

#[test]
fn bad_arguments_are_named() {
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_scalebench"))
            .arg("load")
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    assert!(run(&["https://example.invalid/"]).contains("not an http:// URL"));
    let e = run(&["http://127.0.0.1:1/", "-d", "soon"]);
    assert!(
        e.contains("'--duration <DURATION>'") && e.contains("`soon` is not a duration"),
        "{e}"
    );
    assert!(run(&["http://127.0.0.1:1/"]).contains("-n REQUESTS or -d DURATION"));
    assert!(run(&[]).contains("no URL given"));
}

/// Live processes in session `sid`.
fn in_session(sid: i32) -> Vec<(i32, String, i32)> {
    common::live_processes()
        .into_iter()
        .filter(|p| p.2 == sid)
        .collect()
}

/// How long an event may take before a test gives up on it.
const PATIENCE: std::time::Duration = std::time::Duration::from_secs(30);

/// Waits (at most [`PATIENCE`]) for session `sid` to be empty; panics
/// naming what is left (after killing it).
fn assert_session_ends(sid: i32, what: &str) {
    let deadline = std::time::Instant::now() + PATIENCE;
    loop {
        let left = in_session(sid);
        if left.is_empty() {
            return;
        }
        if std::time::Instant::now() > deadline {
            for p in &left {
                // SAFETY: processes of a session this test made.
                unsafe { libc::kill(p.0, libc::SIGKILL) };
            }
            panic!("{what}: left behind {left:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// `load URL -d 60 -c 8 EXTRA…` in a session of its own (its id is the
/// child's pid).
fn long_load(url: &str, extra: &[&str]) -> common::Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_scalebench"));
    cmd.args(["load", url, "-d", "60", "-c", "8"])
        .args(extra)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    common::in_new_session(&mut cmd);
    common::Child(cmd.spawn().unwrap())
}

/// Sockets process `pid` holds (a server: its listener and connections).
fn sockets(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| {
        d.flatten()
            .filter(|e| {
                std::fs::read_link(e.path())
                    .is_ok_and(|l| l.to_string_lossy().starts_with("socket:"))
            })
            .count()
    })
}

/// What [`interrupted_load`] saw.
struct Interrupted {
    status: std::process::ExitStatus,
    out: String,
    /// From the signal to the exit.
    took: std::time::Duration,
    /// The least the load measured: from the first connection the server
    /// held to the signal.
    at_least: std::time::Duration,
    /// The most it measured: from its start to its exit.
    at_most: std::time::Duration,
}

/// A `scalebench serve` and the sockets it holds idle (its listener).
struct Idle<'a> {
    server: &'a common::Child,
    sockets: usize,
}

impl Idle<'_> {
    /// `server`, just started: no connection yet.
    fn of(server: &common::Child) -> Idle<'_> {
        Idle {
            server,
            sockets: sockets(server.0.id()),
        }
    }

    /// Whether it holds a connection.
    fn connected(&self) -> bool {
        sockets(self.server.0.id()) > self.sockets
    }
}

/// Starts `load URL -d 60 EXTRA…` against `server` once the server holds
/// no connection (a load before may have left some for it to close),
/// waits until it holds one of this load (the load is under way, however
/// long it took to start), lets it run a second, sends it `signal`; every
/// process it started has ended by the return.
fn interrupted_load(server: &Idle, url: &str, extra: &[&str], signal: libc::c_int) -> Interrupted {
    let idle = std::time::Instant::now();
    while server.connected() {
        assert!(
            idle.elapsed() < PATIENCE,
            "the server still holds connections of the load before"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let spawned = std::time::Instant::now();
    let mut child = long_load(url, extra);
    while !server.connected() {
        if let Ok(Some(st)) = child.0.try_wait() {
            panic!("load {extra:?} ended ({st}) before it connected");
        }
        assert!(
            spawned.elapsed() < PATIENCE,
            "load {extra:?} never connected"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let connected = std::time::Instant::now();
    std::thread::sleep(std::time::Duration::from_secs(1));
    let sent = std::time::Instant::now();
    // SAFETY: signalling the child this test started.
    unsafe { libc::kill(child.0.id() as i32, signal) };
    let out = common::read_all(child.0.stdout.take());
    let status = child.0.wait().unwrap();
    let took = sent.elapsed();
    let at_most = spawned.elapsed();
    assert_session_ends(child.0.id() as i32, &format!("load {extra:?}"));
    Interrupted {
        status,
        out,
        took,
        at_least: sent - connected,
        at_most,
    }
}

#[test]
fn an_interrupted_load_keeps_what_it_measured() {
    let t = site();
    let (s, url) = serve(t.path());
    let idle = Idle::of(&s);
    let url = format!("{url}f1k.bin");
    // ^C with --json: the JSON of the part that ran, marked interrupted.
    let Interrupted {
        status,
        out,
        took,
        at_least,
        at_most,
    } = interrupted_load(&idle, &url, &["--json"], libc::SIGINT);
    assert_eq!(status.code(), Some(130), "{out}");
    assert!(took < std::time::Duration::from_secs(5), "took {took:?}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(v["interrupted"], true, "{out}");
    let requests = v["requests"].as_u64().unwrap();
    assert!(requests > 0, "{out}");
    assert_eq!(v["statuses"]["200"].as_u64(), Some(requests), "{out}");
    assert_eq!(v["body_bytes"].as_u64(), Some(requests * 1024), "{out}");
    // The time it ran, not the 60 s asked: at least from its first
    // connection to the signal, less the opening of its other
    // connections (its clock starts once they are open: `opening_s`), at
    // most its whole life.
    let secs = v["seconds"].as_f64().unwrap();
    let opening = v["opening_s"].as_f64().unwrap();
    assert!(
        (at_least.as_secs_f64() - opening..=at_most.as_secs_f64()).contains(&secs),
        "ran {secs} s of 60, between {at_least:?} less its opening {opening} s and {at_most:?}: {out}"
    );
    // SIGTERM without --json: the summary, saying it was interrupted.
    let Interrupted { status, out, .. } = interrupted_load(&idle, &url, &[], libc::SIGTERM);
    assert_eq!(status.code(), Some(130), "{out}");
    assert!(out.starts_with("interrupted after "), "{out}");
    assert!(out.contains("requests") && out.contains("req/s"), "{out}");
    // A load that ran its course says nothing of the kind.
    let (v, ok) = load(&[&url, "-n", "100"]);
    assert!(ok && v.get("interrupted").is_none(), "{v}");
}

#[test]
fn a_load_spread_over_processes_counts_exactly() {
    let t = site();
    let (_s, url) = serve(t.path());
    let url = format!("{url}f1k.bin");
    // A count, shared out: the remainder to the first processes.
    let (v, ok) = load(&[
        &url,
        "-c",
        "90",
        "-n",
        "3001",
        "-k",
        "1",
        "--processes",
        "3",
    ]);
    assert!(ok, "{v}");
    assert_eq!(v["processes"], 3, "{v}");
    assert_eq!(v["requests"], 3001);
    assert_eq!(v["connections"], 3001, "one connection per request");
    assert_eq!(v["body_bytes"], 3001 * 1024);
    assert_eq!(v["statuses"]["200"], 3001);
    assert_eq!(v["errors"]["port_exhausted"], 0, "{v}");
    let peak = v["peak_open"].as_u64().unwrap();
    assert!(peak > 3 && peak <= 90, "{v}");
    let lat = &v["latency_ns"];
    assert!(lat["p50"].as_u64().unwrap() > 0 && lat["p50"].as_u64() <= lat["max"].as_u64());
    // A duration after a warm-up, in rounds: the rounds add up.
    let (v, ok) = load(&[
        &url,
        "-c",
        "20",
        "-d",
        "1",
        "--warm-up",
        "0.3",
        "--rounds",
        "2",
        "--processes",
        "2",
        "--source",
        "127.0.0.2",
        "--source",
        "127.0.0.3",
    ]);
    assert!(ok, "{v}");
    assert_eq!(v["processes"], 2);
    assert_eq!(v["sources"], serde_json::json!(["127.0.0.2", "127.0.0.3"]));
    let rounds = v["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 2, "{v}");
    let sum: u64 = rounds.iter().map(|r| r["requests"].as_u64().unwrap()).sum();
    assert_eq!(sum, v["requests"].as_u64().unwrap());
    assert!(sum > 0);
    let secs = v["seconds"].as_f64().unwrap();
    assert!(
        (0.95..2.0).contains(&secs),
        "{secs} s measured of 1 (after 0.3 s warm-up)"
    );
    // Replaying a file in order cannot be shared out (ten lines: four
    // connections have a request each to make).
    let list = t.path().join("urls");
    std::fs::write(&list, format!("{url}\n").repeat(10)).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .args(["load", "--processes", "2", "-c", "4", "--urls"])
        .arg(&list)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("in one process"));
    // A source address this host does not have is named before anything runs.
    let o = Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .args(["load", &url, "-n", "10", "--source", "192.0.2.1"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("192.0.2.1"),
        "{o:?}"
    );
}

#[test]
fn a_spread_load_stops_on_a_signal_and_leaves_nothing() {
    let t = site();
    let (s, url) = serve(t.path());
    let idle = Idle::of(&s);
    let url = format!("{url}f1k.bin");
    // ^C: every process reports what it measured, merged.
    let Interrupted {
        status, out, took, ..
    } = interrupted_load(&idle, &url, &["--json", "--processes", "2"], libc::SIGINT);
    assert_eq!(status.code(), Some(130), "{out}");
    assert!(took < std::time::Duration::from_secs(5), "took {took:?}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(
        (v["interrupted"].as_bool(), v["processes"].as_u64()),
        (Some(true), Some(2))
    );
    let requests = v["requests"].as_u64().unwrap();
    assert!(
        requests > 0 && v["statuses"]["200"].as_u64() == Some(requests),
        "{out}"
    );
    // A load of a duration says how long asking for its first connections
    // took, apart from its measured seconds (the longest process's).
    let opening = v["opening_s"].as_f64().unwrap_or_else(|| panic!("{out}"));
    assert!((0.0..PATIENCE.as_secs_f64()).contains(&opening), "{out}");
    // kill -9: the load processes die with it.
    let mut child = long_load(&url, &["--processes", "3", "--quiet"]);
    let sid = child.0.id() as i32;
    let start = std::time::Instant::now();
    while in_session(sid).len() < 4 {
        assert!(start.elapsed() < PATIENCE, "{:?}", in_session(sid));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: SIGKILL to the child this test started.
    unsafe { libc::kill(sid, libc::SIGKILL) };
    child.0.wait().unwrap();
    assert_session_ends(sid, "load --processes 3 after kill -9");
}

/// A peer on 127.0.0.1 that writes `greeting` to every connection as it
/// accepts it and holds the connection: an SMTP server, say. It serves
/// until dropped (at most 120 s).
struct Peer {
    addr: std::net::SocketAddr,
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Peer {
    fn greeting(greeting: &'static [u8]) -> Peer {
        use std::sync::atomic::Ordering;
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        l.set_nonblocking(true).unwrap();
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop = done.clone();
        let thread = std::thread::spawn(move || {
            let mut held = Vec::new();
            let end = std::time::Instant::now() + std::time::Duration::from_secs(120);
            while !stop.load(Ordering::Relaxed) && std::time::Instant::now() < end {
                match l.accept() {
                    Ok((mut c, _)) => {
                        let _ = c.write_all(greeting);
                        held.push(c);
                    }
                    Err(_) => std::thread::sleep(std::time::Duration::from_millis(2)),
                }
            }
        });
        Peer {
            addr,
            done,
            thread: Some(thread),
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.done.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A server that is not HTTP (an SMTP server greets first) is named at
/// once with what it answered, however many requests were asked and
/// however many processes make the load — not after minutes of timeouts
/// and retries.
#[test]
fn a_server_that_is_not_http_is_named_at_once() {
    let smtp = Peer::greeting(b"220 mail.example ESMTP ready\r\n");
    let binary = Peer::greeting(b"\x16\x03\x01\x02\x00\x01");
    for (peer, answered, extra) in [
        (&smtp, "answered `220 mail.example ESMTP ready`", &[][..]),
        (
            &smtp,
            "answered `220 mail.example ESMTP ready`",
            &["--processes", "2"][..],
        ),
        (
            &binary,
            "answered `\\x16\\x03\\x01\\x02\\x00\\x01`",
            &[][..],
        ),
    ] {
        let url = format!("http://{}/", peer.addr);
        let start = std::time::Instant::now();
        let o = Command::new(env!("CARGO_BIN_EXE_scalebench"))
            .args(["load", &url, "-n", "100000", "-c", "4", "-q"])
            .args(extra)
            .output()
            .unwrap();
        let took = start.elapsed();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{extra:?}: {err}");
        assert!(
            err.starts_with("error: ")
                && err.contains(&format!("not HTTP: the server at {} ({url}) ", peer.addr))
                && err.contains(answered),
            "{extra:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            took < std::time::Duration::from_secs(10),
            "{extra:?}: {took:?}"
        );
    }
}
