//! The benchmark server process (`scalebench __responder`) under each
//! backend: descriptor exhaustion on purpose, then recovery.
//!
//! The test waits for the server's state (read from /proc: its open
//! descriptors and sockets) and for the greetings it sent, never for a
//! fixed time: it passes however fast or busy the machine is, and fails
//! only when an event does not come within a generous [`PATIENCE`].

// Reads the server's descriptors from /proc: Linux only.
#![cfg(target_os = "linux")]

use crate::common;

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};

const BACKENDS: &[&str] = &["epoll", "poll", "select"];

/// The server's open-files limit.
const NOFILE: usize = 48;

/// How long an event may take before the test gives up on it.
const PATIENCE: Duration = Duration::from_secs(30);

struct Server {
    child: common::Child,
    addr: SocketAddr,
}

impl Server {
    /// A greeting server whose open-files limit is `nofile`.
    fn start(backend: &str, nofile: usize) -> Server {
        let cmd = format!(
            "ulimit -n {nofile} && exec '{}' __responder --backend {backend} --greet --accept-burst 1",
            env!("CARGO_BIN_EXE_scalebench")
        );
        let (child, addr) =
            common::spawn_announcing(Command::new("sh").args(["-c", &cmd]), "listening ");
        Server {
            child,
            addr: addr.parse().unwrap(),
        }
    }

    /// The server's open descriptors, and how many of them are
    /// connections (sockets but the listening one).
    fn held(&self) -> (usize, usize) {
        let Ok(dir) = std::fs::read_dir(format!("/proc/{}/fd", self.child.0.id())) else {
            return (0, 0);
        };
        let links: Vec<String> = dir
            .flatten()
            .filter_map(|e| std::fs::read_link(e.path()).ok())
            .map(|l| l.to_string_lossy().into_owned())
            .collect();
        let sockets = links.iter().filter(|l| l.starts_with("socket:")).count();
        (links.len(), sockets.saturating_sub(1))
    }
}

/// Whether the greeting arrives within `t`.
fn greeted(c: &mut TcpStream, t: Duration) -> bool {
    c.set_read_timeout(Some(t)).unwrap();
    let mut b = [0u8; 1];
    matches!(c.read(&mut b), Ok(1) if b[0] == b'!')
}

/// Marks in `seen` each of `which` whose greeting has arrived (without
/// waiting); returns how many of `which` are marked.
fn collect_greetings(conns: &[TcpStream], which: &[usize], seen: &mut [bool]) -> usize {
    for &i in which {
        if seen[i] {
            continue;
        }
        let mut b = [0u8; 1];
        match (&conns[i]).read(&mut b) {
            Ok(1) => {
                assert_eq!(b[0], b'!', "connection {i}: not a greeting");
                seen[i] = true;
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            other => panic!("connection {i}: {other:?}"),
        }
    }
    which.iter().filter(|&&i| seen[i]).count()
}

/// Waits (at most [`PATIENCE`]) until `done(descriptors, connections held,
/// greetings seen)` holds, collecting the greetings of `which`; returns
/// the last figures.
fn settle(
    s: &Server,
    conns: &[TcpStream],
    which: &[usize],
    seen: &mut [bool],
    done: impl Fn(usize, usize, usize) -> bool,
) -> (usize, usize, usize) {
    let until = Instant::now() + PATIENCE;
    loop {
        // The server's state first: a greeting is sent after its accept.
        let (fds, held) = s.held();
        let greeted = collect_greetings(conns, which, seen);
        if done(fds, held, greeted) || Instant::now() > until {
            return (fds, held, greeted);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn out_of_descriptors_the_server_keeps_serving_and_recovers() {
    for &b in BACKENDS {
        let s = Server::start(b, NOFILE);
        let mut conns: Vec<TcpStream> = (0..64)
            .map(|_| TcpStream::connect(s.addr).unwrap())
            .collect();
        for c in &conns {
            c.set_nonblocking(true).unwrap();
        }
        let all: Vec<usize> = (0..conns.len()).collect();
        let mut seen = vec![false; conns.len()];
        // The server accepts what it can (it pauses accepting for 100 ms at
        // a time when out of descriptors): wait until every descriptor is
        // in use and each connection it holds has been greeted.
        let (fds, held, _) = settle(&s, &conns, &all, &mut seen, |fds, held, greeted| {
            fds >= NOFILE && greeted == held
        });
        let ok: Vec<usize> = all.iter().copied().filter(|&i| seen[i]).collect();
        assert!(
            ok.len() > 30 && ok.len() < NOFILE,
            "{b}: {} greeted with {NOFILE} descriptors ({fds} open, {held} connections held)",
            ok.len()
        );
        assert_eq!(ok.len(), held, "{b}: greeted and held ({fds} open)");
        // The connections it has are still served.
        let first = ok[0];
        conns[first].set_nonblocking(false).unwrap();
        conns[first].set_read_timeout(Some(PATIENCE)).unwrap();
        conns[first].write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
        let mut buf = [0u8; 256];
        let k = conns[first].read(&mut buf).unwrap();
        assert!(buf[..k].starts_with(b"HTTP/1.1 200 OK"), "{b}");
        conns[first].set_nonblocking(true).unwrap();
        // Free 20 descriptors: the waiting connections get accepted. Wait
        // until the server has closed those 20 and greeted what it took
        // instead: every connection it holds is one seen greeted, and it
        // is full again or has taken every waiting one.
        let waiting: Vec<usize> = all.iter().copied().filter(|&i| !seen[i]).collect();
        for &i in ok.iter().skip(1).take(20) {
            conns[i].shutdown(std::net::Shutdown::Both).unwrap();
        }
        let kept = ok.len() - 20;
        let (fds, held, later) = settle(&s, &conns, &waiting, &mut seen, |fds, held, later| {
            held == kept + later && (fds >= NOFILE || later == waiting.len())
        });
        assert!(
            later >= 15,
            "{b}: only {later} accepted after 20 closed ({fds} open, {held} connections held)"
        );
        // Still alive and serving.
        let mut c = TcpStream::connect(s.addr).unwrap();
        drop(conns);
        assert!(
            greeted(&mut c, PATIENCE),
            "{b}: a new connection after recovery"
        );
    }
}

/// One GET of `target` on a new connection; the whole response.
fn get(addr: SocketAddr, target: &str) -> String {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(PATIENCE)).unwrap();
    write!(c, "GET {target} HTTP/1.1\r\nConnection: close\r\n\r\n").unwrap();
    let mut r = String::new();
    c.read_to_string(&mut r).unwrap();
    r
}

#[test]
fn the_http_server_answers_from_a_file_opened_per_request() {
    let t = tempfile::tempdir().unwrap();
    let (mut child, addr) = common::spawn_announcing(
        Command::new(env!("CARGO_BIN_EXE_scalebench"))
            .args([
                "__responder",
                "--backend",
                "poll",
                "--from-file",
                "--run-dir",
            ])
            .arg(t.path()),
        "listening ",
    );
    let addr: SocketAddr = addr.parse().unwrap();
    let r = get(addr, "/body.txt");
    let (head, body) = r.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert!(head.contains("Content-Length: 128\r\n"), "{head}");
    // A file's answer: it says when the file was last changed.
    assert!(head.contains("Last-Modified: "), "{head}");
    assert_eq!(body.len(), 128);
    assert!(body.starts_with("abcdefghijklmnopqrstuvwxyzab"), "{body}");
    // The file is read for each request: changed, the next answer has it.
    let dirs: Vec<_> = std::fs::read_dir(t.path()).unwrap().flatten().collect();
    assert_eq!(dirs.len(), 1, "one directory of the server's own");
    std::fs::write(dirs[0].path().join("body.txt"), "z".repeat(128)).unwrap();
    assert_eq!(
        get(addr, "/body.txt").split_once("\r\n\r\n").unwrap().1,
        "z".repeat(128)
    );
    assert!(get(addr, "/other").starts_with("HTTP/1.1 404 "));
    // Its input closed, it ends and leaves nothing in the run directory.
    drop(child.0.stdin.take());
    assert!(child.0.wait().unwrap().success());
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
}
