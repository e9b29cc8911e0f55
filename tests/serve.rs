//! `scalebench serve` from the outside: protocol, a table of traversal
//! attempts that must never yield a byte from outside the root, slow and
//! vanishing clients, descriptor exhaustion and many connections.

use crate::common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const SECRET: &str = "TOPSECRET-outside-the-root";

struct Server {
    child: common::Child,
    addr: SocketAddr,
}

impl Server {
    fn start(root: &Path, extra: &[&str]) -> Server {
        Self::start_with_limit(root, extra, None)
    }

    fn start_with_limit(root: &Path, extra: &[&str], nofile: Option<u32>) -> Server {
        let mut cmd = match nofile {
            Some(n) => {
                let mut c = Command::new("sh");
                c.args([
                    "-c",
                    &format!("ulimit -n {n} && exec \"$0\" \"$@\""),
                    env!("CARGO_BIN_EXE_scalebench"),
                ]);
                c
            }
            None => Command::new(env!("CARGO_BIN_EXE_scalebench")),
        };
        cmd.arg("serve").arg("--root").arg(root).args(extra);
        let (child, url) = common::spawn_announcing(&mut cmd, "listening http://");
        Server {
            child,
            addr: url.trim_end_matches('/').parse().unwrap(),
        }
    }

    fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s
    }

    /// Sends raw bytes, reads until the server closes.
    fn raw(&self, req: &[u8]) -> Vec<u8> {
        let mut s = self.connect();
        s.write_all(req).unwrap();
        let mut v = Vec::new();
        let _ = s.read_to_end(&mut v);
        v
    }
}

/// A root with files, next to a secret, with links pointing out.
fn site() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("www");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("ok.txt"), "hello\n").unwrap();
    std::fs::write(root.join("index.html"), "<h1>index</h1>\n").unwrap();
    std::fs::write(root.join("sub/ok2.txt"), "two\n").unwrap();
    let big: Vec<u8> = (0..8_000_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(root.join("big.bin"), big).unwrap();
    std::fs::write(t.path().join("secret.txt"), SECRET).unwrap();
    std::os::unix::fs::symlink(t.path().join("secret.txt"), root.join("link")).unwrap();
    std::os::unix::fs::symlink(t.path(), root.join("dirlink")).unwrap();
    std::os::unix::fs::symlink("sub/ok2.txt", root.join("inside-link")).unwrap();
    t
}

fn text(v: &[u8]) -> String {
    String::from_utf8_lossy(v).into_owned()
}

#[test]
fn protocol() {
    let t = site();
    let s = Server::start(&t.path().join("www"), &[]);
    // Pipelined requests are answered in order.
    let r = text(&s.raw(b"GET /ok.txt HTTP/1.1\r\n\r\nHEAD /sub/ok2.txt HTTP/1.1\r\n\r\nGET /sub/ok2.txt HTTP/1.1\r\nConnection: close\r\n\r\n"));
    assert_eq!(r.matches("HTTP/1.1 200 OK").count(), 3, "{r}");
    let first = r.find("hello").unwrap();
    let third = r.rfind("two").unwrap();
    assert!(
        first < third && r.matches("two").count() == 1,
        "HEAD has no body: {r}"
    );
    assert!(
        r.contains("Content-Type: text/plain")
            && r.contains("Content-Length: 6")
            && r.contains("Last-Modified: ")
    );
    // A request line arriving byte by byte.
    let mut c = s.connect();
    for b in b"GET /ok.txt HTTP/1.1\r\nConnection: close\r\n\r\n" {
        c.write_all(&[*b]).unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
    let mut v = Vec::new();
    c.read_to_end(&mut v).unwrap();
    assert!(text(&v).starts_with("HTTP/1.1 200 OK") && text(&v).ends_with("hello\n"));
    // Errors.
    let big_head = format!(
        "GET /ok.txt HTTP/1.1\r\nX-Big: {}\r\n\r\n",
        "a".repeat(20_000)
    );
    assert!(text(&s.raw(big_head.as_bytes())).starts_with("HTTP/1.1 431 "));
    let long_line = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(9_000));
    assert!(text(&s.raw(long_line.as_bytes())).starts_with("HTTP/1.1 414 "));
    let r = text(&s.raw(b"DELETE /ok.txt HTTP/1.1\r\nConnection: close\r\n\r\n"));
    assert!(
        r.starts_with("HTTP/1.1 405 ") && r.contains("Allow: GET, HEAD"),
        "{r}"
    );
    assert!(
        text(&s.raw(b"GET /nope HTTP/1.1\r\nConnection: close\r\n\r\n"))
            .starts_with("HTTP/1.1 404 ")
    );
    assert!(text(&s.raw(b"BLAH\r\n\r\n")).starts_with("HTTP/1.1 400 "));
    // HTTP/1.0: closed after the response unless asked to keep alive.
    let r = text(&s.raw(b"GET /ok.txt HTTP/1.0\r\n\r\n"));
    assert!(
        r.starts_with("HTTP/1.1 200 OK")
            && r.contains("Connection: close")
            && r.ends_with("hello\n")
    );
    let mut c = s.connect();
    c.write_all(b"GET /ok.txt HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        .unwrap();
    let mut buf = [0u8; 1024];
    let n = c.read(&mut buf).unwrap();
    assert!(
        text(&buf[..n]).contains("Connection: keep-alive"),
        "{}",
        text(&buf[..n])
    );
    c.write_all(b"GET /ok.txt HTTP/1.0\r\n\r\n").unwrap();
    let mut v = Vec::new();
    c.read_to_end(&mut v).unwrap();
    assert!(
        text(&v).starts_with("HTTP/1.1 200 OK"),
        "the connection stayed open"
    );
    // 304 when not modified since, 200 when modified.
    let later = httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(3600));
    let r = text(
        &s.raw(
            format!(
                "GET /ok.txt HTTP/1.1\r\nIf-Modified-Since: {later}\r\nConnection: close\r\n\r\n"
            )
            .as_bytes(),
        ),
    );
    assert!(
        r.starts_with("HTTP/1.1 304 Not Modified") && !r.contains("hello"),
        "{r}"
    );
    let r = text(&s.raw(b"GET /ok.txt HTTP/1.1\r\nIf-Modified-Since: Thu, 01 Jan 1970 00:00:00 GMT\r\nConnection: close\r\n\r\n"));
    assert!(r.starts_with("HTTP/1.1 200 OK"), "{r}");
    // A directory gives its index; a link inside the root is followed.
    assert!(
        text(&s.raw(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n")).contains("<h1>index</h1>")
    );
    assert!(
        text(&s.raw(b"GET /inside-link HTTP/1.1\r\nConnection: close\r\n\r\n")).ends_with("two\n")
    );
}

#[test]
fn nothing_outside_the_root_is_ever_served() {
    let t = site();
    let s = Server::start(&t.path().join("www"), &[]);
    let abs = t.path().join("secret.txt").display().to_string();
    let mut targets: Vec<String> = [
        "/../secret.txt",
        "/..%2fsecret.txt",
        "/%2e%2e/secret.txt",
        "/%2E%2E/secret.txt",
        "/.%2e/secret.txt",
        "/%2e./secret.txt",
        "/sub/../../secret.txt",
        "/sub/%2e%2e/%2e%2e/secret.txt",
        "/%2e%2e%2f%2e%2e%2fsecret.txt",
        "/..\\secret.txt",
        "/..%5csecret.txt",
        "/..%5c..%5csecret.txt",
        "/%c0%ae%c0%ae/secret.txt",
        "/%c0%ae%c0%ae%c0%afsecret.txt",
        "/%e0%80%ae%e0%80%ae/secret.txt",
        "/%c0%2e%c0%2e/secret.txt",
        "/%252e%252e/secret.txt",
        "/%252e%252e%252fsecret.txt",
        "/..%255c..%255csecret.txt",
        "/%u002e%u002e/secret.txt",
        "/..%c0%af../secret.txt",
        "/link",
        "/link/",
        "/dirlink/secret.txt",
        "/dirlink",
        "/dirlink/www/../secret.txt",
        "//secret.txt",
        "/./../secret.txt",
        "/ok.txt%00../../secret.txt",
        "/%00",
        "/ok.txt%00",
        "http://localhost/../secret.txt",
        "secret.txt",
        "../secret.txt",
        "/....//secret.txt",
        "/..;/secret.txt",
        "/.../secret.txt",
        "/sub/./../../secret.txt",
        "/sub//..//..//secret.txt",
        "/sub/../sub/../../secret.txt",
        "/etc/passwd",
        "/../../../../../../etc/passwd",
        "/%2fetc%2fpasswd",
        "/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "/proc/self/root/etc/passwd",
        "/%",
        "/%2",
        "/%zz/secret.txt",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    targets.push(abs.clone());
    targets.push(format!("/{abs}"));
    targets.push(format!("/..{abs}"));
    assert!(targets.len() >= 40);
    for target in &targets {
        let r = s.raw(format!("GET {target} HTTP/1.1\r\nConnection: close\r\n\r\n").as_bytes());
        let r = text(&r);
        assert!(!r.contains(SECRET), "{target} leaked the secret:\n{r}");
        assert!(!r.contains("root:"), "{target} leaked /etc/passwd");
        assert!(
            r.starts_with("HTTP/1.1 400 ")
                || r.starts_with("HTTP/1.1 404 ")
                || r.starts_with("HTTP/1.1 403 "),
            "{target}: {}",
            r.lines().next().unwrap_or("(nothing)")
        );
    }
    // A NUL byte in the raw request line.
    let r = text(&s.raw(b"GET /ok.txt\x00/../../secret.txt HTTP/1.1\r\n\r\n"));
    assert!(r.starts_with("HTTP/1.1 400 ") && !r.contains(SECRET));
}

#[test]
fn slow_and_vanishing_clients_do_not_stop_the_others() {
    let t = site();
    let s = Server::start(&t.path().join("www"), &["--header-timeout", "1"]);
    // A client sending its head one byte per 100 ms.
    let mut slow = s.connect();
    let started = Instant::now();
    let slow_thread = std::thread::spawn(move || {
        for b in b"GET /ok.txt HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n"
        {
            if slow.write_all(&[*b]).is_err() {
                return true; // closed by the server
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let mut v = Vec::new();
        let _ = slow.read_to_end(&mut v);
        !text(&v).contains("200 OK")
    });
    // Meanwhile another client is served at once.
    for _ in 0..20 {
        let a = Instant::now();
        let r = text(&s.raw(b"GET /ok.txt HTTP/1.1\r\nConnection: close\r\n\r\n"));
        assert!(r.ends_with("hello\n"));
        assert!(
            a.elapsed() < Duration::from_millis(500),
            "blocked by the slow client"
        );
    }
    assert!(
        slow_thread.join().unwrap(),
        "the slow client was not timed out"
    );
    assert!(started.elapsed() < Duration::from_secs(4));
    // A client that vanishes in the middle of a large body.
    for _ in 0..5 {
        let mut c = s.connect();
        c.write_all(b"GET /big.bin HTTP/1.1\r\n\r\n").unwrap();
        let mut buf = [0u8; 4096];
        c.read_exact(&mut buf).unwrap();
        common::reset(c);
    }
    let r = s.raw(b"GET /big.bin HTTP/1.1\r\nConnection: close\r\n\r\n");
    assert!(r.len() > 8_000_000, "{} bytes", r.len());
}

#[test]
fn out_of_descriptors_it_recovers() {
    let t = site();
    // Accept in arrival order: with the deferred accept an idle connection
    // (held[5] below) waits in the kernel until its deferral times out, so
    // which ones the server holds would be left to chance.
    let s = Server::start_with_limit(&t.path().join("www"), &["--no-defer-accept"], Some(40));
    // ok.txt is opened (and cached) while descriptors are still free.
    assert!(
        text(&s.raw(b"GET /ok.txt HTTP/1.1\r\nConnection: close\r\n\r\n")).ends_with("hello\n")
    );
    let mut held: Vec<TcpStream> = (0..60).map(|_| s.connect()).collect();
    // Some are accepted, the rest wait in the backlog.
    for c in held.iter_mut().take(5) {
        c.write_all(b"GET /ok.txt HTTP/1.1\r\n\r\n").unwrap();
        let mut buf = [0u8; 512];
        let n = c.read(&mut buf).unwrap();
        assert!(text(&buf[..n]).starts_with("HTTP/1.1 200 OK"));
    }
    // Wait until the server has accepted all it can: every descriptor in
    // use (on a loaded machine it may still be accepting).
    let fds = || {
        std::fs::read_dir(format!("/proc/{}/fd", s.child.0.id()))
            .map(|d| d.count())
            .unwrap_or(0)
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while fds() < 40 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(fds() >= 40, "the server did not run out of descriptors");
    // A file it has not opened yet cannot be opened now: 503, not 404.
    held[5]
        .write_all(b"GET /sub/ok2.txt HTTP/1.1\r\n\r\n")
        .unwrap();
    let mut buf = [0u8; 512];
    let n = held[5].read(&mut buf).unwrap();
    assert!(
        text(&buf[..n]).starts_with("HTTP/1.1 503 "),
        "{}",
        text(&buf[..n])
    );
    drop(held);
    // All freed: a new connection is served (it waits in the backlog
    // until the server has closed the others and accepts again).
    let r = text(&s.raw(b"GET /ok.txt HTTP/1.1\r\nConnection: close\r\n\r\n"));
    assert!(r.ends_with("hello\n"), "{r}");
    // The accepts that failed were counted by errno, and it served on.
    let mut s = s;
    let answer = s.ask_stats();
    let counts: serde_json::Value = serde_json::from_str(
        answer
            .strip_prefix("accept-errors ")
            .unwrap_or_else(|| panic!("{answer}")),
    )
    .unwrap();
    assert!(counts["EMFILE"].as_u64().unwrap_or(0) >= 1, "{answer}");
}

impl Server {
    /// Writes `stats` to its input and returns the line it answers (within
    /// 10 s).
    fn ask_stats(&mut self) -> String {
        use std::io::BufRead;
        let stdin = self.child.0.stdin.as_mut().unwrap();
        stdin.write_all(b"stats\n").unwrap();
        let stdout = self.child.0.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = std::io::BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("an answer to `stats` within 10 s");
        line.trim().to_string()
    }
}

#[test]
fn five_thousand_concurrent_connections() {
    let t = site();
    for extra in [
        &[][..],
        &["--processes", "2"][..],
        &["--reuseport", "2"][..],
    ] {
        let s = Server::start(&t.path().join("www"), extra);
        let mut conns: Vec<TcpStream> = (0..5000).map(|_| s.connect()).collect();
        for c in conns.iter_mut() {
            c.write_all(b"GET /ok.txt HTTP/1.1\r\n\r\n").unwrap();
        }
        for c in conns.iter_mut() {
            let mut got = Vec::new();
            let mut buf = [0u8; 512];
            while !text(&got).ends_with("hello\n") {
                let n = c.read(&mut buf).unwrap();
                assert!(n > 0, "{extra:?}: closed early");
                got.extend_from_slice(&buf[..n]);
            }
            assert!(text(&got).starts_with("HTTP/1.1 200 OK"));
        }
    }
}

#[test]
fn every_sending_and_accepting_mode_sends_the_same_bytes() {
    let t = site();
    let want = std::fs::read(t.path().join("www/big.bin")).unwrap();
    for mode in [
        "--sendfile",
        "--readwrite",
        "--no-defer-accept",
        "--backend=poll",
        "--io-uring",
    ] {
        let s = Server::start(&t.path().join("www"), &[mode]);
        let r = s.raw(b"GET /big.bin HTTP/1.1\r\nConnection: close\r\n\r\n");
        let body = &r[r.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4..];
        assert!(body == want.as_slice(), "{mode}: body differs");
    }
}

#[test]
fn a_bad_root_is_named() {
    let out = Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .args(["serve", "--root", "/nonexistent/www"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--root /nonexistent/www"),
        "{}",
        text(&out.stderr)
    );
}

/// `serve --nginx` ended by SIGTERM or SIGHUP stops nginx and removes the
/// temporary directory it made for it, as ^C does (killed by the signal,
/// both were left behind); its exit is a clean one.
#[test]
fn nginx_under_serve_ends_on_sigterm_and_sighup_leaving_nothing() {
    let t = site();
    let tmp = t.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    for sig in [libc::SIGTERM, libc::SIGHUP] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_scalebench"));
        cmd.args(["serve", "--nginx", "--addr", "127.0.0.1:0", "--root"])
            .arg(t.path().join("www"))
            .env("TMPDIR", &tmp);
        let (mut child, url) = common::spawn_announcing(&mut cmd, "listening http://");
        let addr: SocketAddr = url.trim_end_matches('/').parse().unwrap();
        // It serves, from a directory of its own in TMPDIR.
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(b"GET /ok.txt HTTP/1.0\r\n\r\n").unwrap();
        let mut got = Vec::new();
        s.read_to_end(&mut got).unwrap();
        assert!(text(&got).ends_with("hello\n"), "{}", text(&got));
        assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 1);
        // SAFETY: signalling our own child, not yet reaped.
        unsafe { libc::kill(child.0.id() as i32, sig) };
        let status = child.0.wait().unwrap();
        assert!(status.success(), "signal {sig}: {status:?}");
        let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().collect();
        assert!(left.is_empty(), "signal {sig}: {left:?}");
        assert!(TcpStream::connect(addr).is_err(), "nginx stopped");
    }
}
