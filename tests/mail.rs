//! The mail workload and its two halves through the binary: `run mail`
//! sweeping simultaneous sessions against scalebench's sink, `smtp-send`
//! spreading itself over processes when the sessions exceed what one may
//! open, each side against Postfix's smtp-source and smtp-sink (Debian's
//! `postfix`, installed by `scripts/test`), and bad peers: an address that
//! refuses, a server that answers garbage, more sessions than any limit.

// Counts processes and descriptors through /proc: Linux only.
#![cfg(target_os = "linux")]

use crate::common;

use common::{Child, assert_valid, bin, load, scalebench_entries, spawn_announcing};
use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

const PF_SINK: &str = "/usr/sbin/smtp-sink";
const PF_SOURCE: &str = "/usr/sbin/smtp-source";

/// Postfix's test tools must be there: scripts/test installs them.
fn postfix() {
    for p in [PF_SINK, PF_SOURCE] {
        assert!(
            std::path::Path::new(p).exists(),
            "{p} is missing: run scripts/test (it installs Debian's postfix)"
        );
    }
}

/// A port on 127.0.0.1 where nothing listens, kept so while the returned
/// socket lives: bound and never listening, so a connect there is
/// refused and no other test's server can take the port meanwhile (one
/// given back at once, as [`free_port`] does, was taken by another
/// test's server while a test sent to it, on a busy machine).
fn refusing_port() -> (std::os::fd::OwnedFd, u16) {
    use scalebench::net::sock;
    use std::os::fd::AsRawFd;
    let any: std::net::SocketAddr = "127.0.0.1:0".parse().unwrap();
    let fd = sock::tcp_socket(&any).expect("socket");
    sock::bind(fd.as_raw_fd(), &any).expect("bind to 127.0.0.1:0");
    let port = sock::local_addr(fd.as_raw_fd())
        .expect("getsockname")
        .port();
    (fd, port)
}

/// A free port on 127.0.0.1.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `scalebench smtp-sink ARGS --json`: the child and its address.
fn sink(args: &[&str]) -> (Child, String) {
    spawn_announcing(
        bin().arg("smtp-sink").arg("--json").args(args),
        "listening smtp://",
    )
}

/// Stops a sink (end of its input) and returns its JSON counts.
fn sink_counts(mut c: Child) -> serde_json::Value {
    drop(c.0.stdin.take());
    let out = common::read_all(c.0.stdout.take());
    let st = c.0.wait().unwrap();
    assert!(st.success(), "the sink failed: {out}");
    serde_json::from_str(out.lines().last().unwrap()).unwrap()
}

/// `smtp-send ARGS --json` to its end: status, the report, stderr.
fn send(args: &[&str]) -> (std::process::ExitStatus, serde_json::Value, String) {
    let o = bin()
        .arg("smtp-send")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let doc = serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null);
    (o.status, doc, err)
}

#[test]
fn run_mail_sweeps_sessions_names_the_peak_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let out = dir.path().join("m.json");
    let o = bin()
        .args([
            "run",
            "mail",
            "--sweep",
            "sessions=5,40",
            "--heat-up",
            "0.2",
        ])
        .args([
            "--sample-time",
            "0.5",
            "--samples",
            "2",
            "--mail-reply-delay",
            "5ms",
        ])
        .args([
            "--mail-size",
            "1000",
            "--mail-recipients",
            "2",
            "--quiet",
            "--workdir",
        ])
        .arg(&work)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(text.contains("msg/s against sessions: peaks at"), "{text}");
    assert!(
        text.contains("failures by sessions: none at any level"),
        "{text}"
    );
    let doc = load(&out);
    assert_valid(&doc);
    let w = &doc["workloads"][0];
    assert_eq!(w["name"], "mail");
    assert_eq!(w["status"], "ok");
    assert_eq!(w["params"]["recipients"], 2);
    assert_eq!(w["params"]["message_bytes"], 1000);
    let sw = &w["rows"][0]["sweep"];
    assert_eq!(sw["variable"], "sessions");
    assert_eq!(sw["unit"], "msg/s");
    assert_eq!(sw["counts_failures"], true);
    let levels = sw["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 2);
    let mut sent = 0;
    for l in levels {
        assert_eq!(l["samples"].as_array().unwrap().len(), 2, "{l}");
        assert!(l["value"].as_f64().unwrap() > 0.0, "{l}");
        assert!(
            l["failures"].is_null(),
            "nothing fails against the sink: {l}"
        );
        assert_eq!(
            l["params"]["peak_open"].as_f64(),
            l["level"].as_f64(),
            "{l}"
        );
        sent += l["params"]["messages"].as_u64().unwrap();
    }
    // Every message the sender counted, the sink counted (and those of
    // sessions cut off at the end of a level were not counted by the
    // sender).
    let sunk = w["params"]["sink_messages"].as_u64().unwrap();
    assert!(sunk >= sent && sent > 0, "{sunk} {sent}");
    // More sessions, more messages: each waits 5 ms per reply.
    assert!(
        levels[1]["value"].as_f64() > levels[0]["value"].as_f64(),
        "{sw}"
    );
    assert!(
        scalebench_entries(&work).is_empty(),
        "{:?}",
        scalebench_entries(&work)
    );
}

/// `run mail --mail-messages …` into a fresh directory: status, stdout,
/// the result's one row's sweep levels.
fn fixed_delivery(extra: &[&str]) -> (bool, String, Vec<serde_json::Value>) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.json");
    let o = bin()
        .args(["run", "mail", "--sweep", "sessions=10,40"])
        .args(["--mail-messages", "200", "--mail-reply-delay", "2ms"])
        .args(extra)
        .args(["--quiet", "--workdir"])
        .arg(dir.path())
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let doc = load(&out);
    assert_valid(&doc);
    let w = &doc["workloads"][0];
    assert_eq!(w["params"]["messages_per_delivery"], 200, "{w}");
    let levels = w["rows"][0]["sweep"]["levels"].as_array().unwrap().clone();
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    (o.status.success(), text, levels)
}

#[test]
fn a_fixed_delivery_is_timed_at_each_level_and_repeated() {
    let (ok, text, levels) = fixed_delivery(&["--mail-repeats", "2"]);
    assert!(ok, "{text}");
    assert_eq!(levels.len(), 2);
    for l in &levels {
        let p = &l["params"];
        assert_eq!(p["repeats"], 2, "{l}");
        assert_eq!(p["finished"], 2, "{l}");
        assert_eq!(p["delivered"], serde_json::json!([200, 200]), "{l}");
        assert_eq!(p["messages"], 400, "{l}");
        let samples = l["samples"].as_array().unwrap();
        assert_eq!(samples.len(), 2, "one sample per delivery: {l}");
        for (s, secs) in samples.iter().zip(p["seconds"].as_array().unwrap()) {
            let t = s["seconds"].as_f64().unwrap();
            assert_eq!(Some(t), secs.as_f64(), "{l}");
            // The figure is the time taken: 200 messages over it.
            let v = s["value"].as_f64().unwrap();
            assert!((v * t - 200.0).abs() < 1e-6 * 200.0, "{l}");
        }
        let (lo, mid, hi) = (
            p["seconds_min"].as_f64().unwrap(),
            p["seconds_median"].as_f64().unwrap(),
            p["seconds_max"].as_f64().unwrap(),
        );
        assert!(lo <= mid && mid <= hi && lo > 0.0, "{l}");
        assert!(l["error"].is_null(), "{l}");
    }
}

#[test]
fn a_delivery_past_its_deadline_is_recorded_as_not_finished() {
    // 200 messages, 10 sessions, 2 ms before each of ~5 replies: at
    // least 200 ms, far past a 1 ms bound on any machine.
    let (ok, text, levels) = fixed_delivery(&["--mail-repeats", "1", "--mail-deadline", "1ms"]);
    assert!(!ok, "every level failed: {text}");
    for l in &levels {
        let p = &l["params"];
        assert_eq!(p["finished"], 0, "{l}");
        assert!(p["delivered"][0].as_u64().unwrap() < 200, "{l}");
        assert!(p["seconds_median"].is_null(), "{l}");
        let e = l["error"].as_str().unwrap();
        assert!(
            e.contains("1 of 1 deliveries of 200 did not finish within 1ms"),
            "{e}"
        );
        assert_eq!(l["samples"].as_array().unwrap().len(), 1, "kept: {l}");
    }
}

#[test]
fn the_sender_spreads_over_processes_beyond_one_process_s_descriptors() {
    // The open-files hard limit here is 20 000 and cannot be raised: 21 000
    // sessions need two sender processes, and the sink two workers.
    let (soft, hard) = nofile();
    let sessions = hard.unwrap_or(soft) + 1000;
    assert!(
        sessions <= 26_000,
        "the port range holds {sessions} connections"
    );
    // Each session lasts five replies of 3 s: 15 s for the senders to
    // open them all (about 2 s here, quiet; longer on a busy machine).
    let (s, addr) = sink(&["--processes", "2", "--reply-delay", "3s"]);
    let start = Instant::now();
    let n = sessions.to_string();
    let (st, r, err) = send(&[&addr, "-s", &n, "-n", &n, "--no-bind", "--timeout", "60s"]);
    assert!(st.success(), "{err} {r}");
    assert_eq!(r["messages"].as_u64(), Some(sessions), "{r}");
    assert_eq!(r["failures"], serde_json::json!({}), "{r}");
    // Every session was open at once: each takes five replies of 3 s.
    assert_eq!(r["peak_open"].as_u64(), Some(sessions), "{r}");
    assert!(start.elapsed() < Duration::from_secs(120));
    let c = sink_counts(s);
    assert_eq!(c["messages"].as_u64(), Some(sessions));
    assert_eq!(c["quits"].as_u64(), Some(sessions));
}

/// RLIMIT_NOFILE: soft and hard (None: unlimited).
fn nofile() -> (u64, Option<u64>) {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: reading our own limit into a plain struct.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) }, 0);
    let hard = (r.rlim_max != libc::RLIM_INFINITY).then_some(r.rlim_max);
    (r.rlim_cur, hard)
}

#[test]
fn sessions_above_every_limit_are_refused_with_the_reason() {
    for (args, says) in [
        (
            &[
                "127.0.0.1:25",
                "-s",
                "900000",
                "-n",
                "900000",
                "--processes",
                "1",
            ][..],
            "give more --processes",
        ),
        (
            &["127.0.0.1:25", "-s", "900000", "-d", "1"][..],
            "local ports",
        ),
        (&["127.0.0.1:25", "-s", "10"][..], "say how much"),
        (&["127.0.0.1", "-n", "1"][..], "has no port"),
        (
            &["[::1]:25", "-n", "1", "--bind", "127.0.0.1"][..],
            "--bind 127.0.0.1: not the family",
        ),
        (
            &["127.0.0.1:25", "-n", "1", "--backend", "nope"][..],
            "nope",
        ),
    ] {
        let start = Instant::now();
        let o = bin().arg("smtp-send").args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(matches!(o.status.code(), Some(1 | 2)), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(start.elapsed() < Duration::from_secs(5), "{args:?}");
    }
}

#[test]
fn a_refusing_address_and_a_garbage_server_are_counted_failures() {
    // Nothing listens there.
    let (_held, port) = refusing_port();
    let start = Instant::now();
    let (st, r, _) = send(&[&format!("127.0.0.1:{port}"), "-s", "20", "-n", "100"]);
    assert_eq!(st.code(), Some(1));
    assert!(
        r["failures"]["connect ECONNREFUSED"].as_u64().unwrap() >= 1000,
        "{r}"
    );
    assert!(
        r["gave_up"].as_str().unwrap().contains("ECONNREFUSED"),
        "{r}"
    );
    assert!(start.elapsed() < Duration::from_secs(20));
    // A server that answers every connection with an HTTP error.
    // It answers until the sender has ended (at most 120 s), however long
    // the sender takes to start.
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sender_done = done.clone();
    let t = std::thread::spawn(move || {
        l.set_nonblocking(true).unwrap();
        let end = Instant::now() + Duration::from_secs(120);
        while Instant::now() < end && !done.load(std::sync::atomic::Ordering::Relaxed) {
            match l.accept() {
                Ok((mut c, _)) => {
                    let _ = c.write_all(b"HTTP/1.0 400 Bad Request\r\n\r\n");
                }
                Err(_) => std::thread::sleep(Duration::from_millis(1)),
            }
        }
    });
    let (st, r, _) = send(&[&addr, "-s", "5", "-d", "1"]);
    sender_done.store(true, std::sync::atomic::Ordering::Relaxed);
    t.join().unwrap();
    assert_eq!(st.code(), Some(1), "{r}");
    assert_eq!(r["messages"], 0);
    assert!(
        r["failures"]["garbage reply awaiting the greeting"]
            .as_u64()
            .unwrap()
            > 0,
        "{r}"
    );
}

#[test]
fn scalebench_s_sink_takes_postfix_smtp_source_s_mail() {
    postfix();
    let (s, addr) = sink(&[]);
    let o = std::process::Command::new(PF_SOURCE)
        .args(["-s", "50", "-m", "2000", "-l", "4096", "-r", "3", &addr])
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let c = sink_counts(s);
    assert_eq!(c["messages"], 2000, "{c}");
    assert_eq!(c["recipients"], 6000, "{c}");
    assert_eq!(c["error_replies"], 0, "{c}");
    assert!(c["bytes"].as_u64().unwrap() >= 2000 * 4096, "{c}");
}

#[test]
fn scalebench_s_sender_delivers_to_postfix_smtp_sink() {
    postfix();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let mut cmd = std::process::Command::new(PF_SINK);
    // As root it must drop privileges; -c prints counts on exit.
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        cmd.args(["-u", "nobody"]);
    }
    let pf = Child(
        cmd.args([addr.as_str(), "256"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let until = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(&addr).is_err() {
        assert!(Instant::now() < until, "Postfix's smtp-sink did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let (st, r, err) = send(&[&addr, "-s", "50", "-n", "2000", "-r", "3", "-k", "4"]);
    drop(pf);
    assert!(st.success(), "{err} {r}");
    assert_eq!(r["messages"], 2000, "{r}");
    assert_eq!(r["recipients"], 6000, "{r}");
    assert_eq!(r["failures"], serde_json::json!({}), "{r}");
}

/// `run mail --mail-server 127.0.0.1:1` exited 0 with the
/// workload "ok" though every level failed. A workload whose every level
/// failed is a failure: exit 1, status `failed`, the reason named.
#[test]
fn a_run_whose_every_level_failed_is_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.json");
    let (_held, port) = refusing_port();
    let server = format!("127.0.0.1:{port}");
    let o = bin()
        .args(["run", "mail", "--mail-server", &server])
        .args([
            "--sweep",
            "sessions=5,10",
            "--heat-up",
            "0",
            "--sample-time",
            "0.2",
        ])
        .args(["--samples", "1", "--quiet", "--no-report", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("every level failed") && err.contains("ECONNREFUSED"),
        "{err}"
    );
    let w = &load(&out)["workloads"][0];
    assert_eq!(w["status"], "failed", "{w}");
    let levels = w["rows"][0]["sweep"]["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 2, "{w}");
    for l in levels {
        assert!(l["value"].is_null() || l["value"] == 0.0, "{l}");
        assert!(
            l["failures"]["connect ECONNREFUSED"].as_u64().unwrap() > 0,
            "{l}"
        );
    }
}

/// A peer on 127.0.0.1 that writes `greeting` (nothing: it is silent, as
/// an HTTP server is until asked) to every connection it accepts and holds
/// it, until dropped (at most 120 s).
struct Peer {
    addr: String,
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Peer {
    fn greeting(greeting: &'static [u8]) -> Peer {
        use std::sync::atomic::Ordering;
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap().to_string();
        l.set_nonblocking(true).unwrap();
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop = done.clone();
        let thread = std::thread::spawn(move || {
            let mut held = Vec::new();
            let end = Instant::now() + Duration::from_secs(120);
            while !stop.load(Ordering::Relaxed) && Instant::now() < end {
                match l.accept() {
                    Ok((mut c, _)) => {
                        let _ = c.write_all(greeting);
                        held.push(c);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(2)),
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

/// A server that is not SMTP is named at once: one that answers an HTTP
/// error, one that says nothing until asked (after a short wait, at most
/// the timeout), one that refuses for good — by smtp-send and by the mail
/// workload's sender.
#[test]
fn a_server_that_is_not_smtp_is_named_at_once() {
    let http = Peer::greeting(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
    let silent = Peer::greeting(b"");
    let refusing = Peer::greeting(b"554 5.3.2 no service here\r\n");
    for (peer, says, within) in [
        (
            &http,
            "not SMTP: the server at {} answered `HTTP/1.1 400 Bad Request` (an SMTP server greets first, with 220)",
            5,
        ),
        (
            &silent,
            "not SMTP: the server at {} said nothing in 3 s after the connection",
            15,
        ),
        (
            &refusing,
            "the server at {} refuses sessions: it greeted with `554 5.3.2 no service here`",
            5,
        ),
    ] {
        let says = says.replace("{}", &peer.addr);
        let start = Instant::now();
        let o = bin()
            .args([
                "smtp-send",
                &peer.addr,
                "-s",
                "20",
                "-n",
                "100000",
                "--timeout",
                "3s",
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains(&format!("error: {says}")), "{err}");
        assert_eq!(err.matches(&says).count(), 1, "said once: {err}");
        assert!(!err.contains("panicked"), "{err}");
        let took = start.elapsed();
        assert!(took < Duration::from_secs(within), "{says}: {took:?}");
    }
    // The mail workload's sender: the level fails with the reason, soon;
    // a level shorter than the greeting's wait still says that nothing
    // was said.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.json");
    for peer in [&http, &silent] {
        let start = Instant::now();
        let o = bin()
            .args(["run", "mail", "--mail-server", &peer.addr])
            .args([
                "--sweep",
                "sessions=5",
                "--heat-up",
                "0",
                "--sample-time",
                "2",
            ])
            .args(["--samples", "1", "--quiet", "--no-report", "--force", "-o"])
            .arg(&out)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(
            err.contains(&format!("the server at {} ", peer.addr))
                && (err.contains("answered `HTTP/1.1 400 Bad Request`")
                    || err.contains("said nothing in ")),
            "{err}"
        );
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{:?}",
            start.elapsed()
        );
    }
}
