//! The server's engine: io_uring where the kernel has it and the
//! configuration allows ([`super::uring`], Linux), else the readiness loop
//! of the chosen backend ([`super::server`]).

use super::backend::Backend;
use super::server::{Config, Handler, Stats};
use std::io;
use std::os::fd::RawFd;

/// The loop `scalebench serve` uses when not told: `io_uring` where the
/// kernel can, else the best readiness backend's name.
pub fn default_loop() -> &'static str {
    if uring_available() {
        return "io_uring";
    }
    Backend::available_all()[0].name()
}

/// Whether this kernel can serve with io_uring (Linux 6.1 and later with
/// it enabled; never elsewhere).
pub fn uring_available() -> bool {
    #[cfg(target_os = "linux")]
    return super::uring::available();
    #[cfg(not(target_os = "linux"))]
    return false;
}

/// Serves on `listener` until `control` reports end of input (or an
/// error): with io_uring when `cfg.io_uring` (a reply delay needs a
/// readiness backend), else with `cfg.backend`'s readiness loop. The
/// listener must be non-blocking. Returns what it did.
pub fn serve(
    listener: RawFd,
    control: Option<RawFd>,
    cfg: Config,
    handler: &mut dyn Handler,
) -> io::Result<Stats> {
    #[cfg(target_os = "linux")]
    if cfg.io_uring {
        if cfg.reply_delay.is_some() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a reply delay needs a readiness backend, not io_uring",
            ));
        }
        return super::uring::serve(listener, control, cfg, handler);
    }
    super::server::serve_ready(listener, control, cfg, handler)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Backend;
    use crate::server::*;
    use crate::sock;
    use std::io::{Read, Write};
    use std::net::{Shutdown, SocketAddr, TcpStream};
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;
    use std::time::Duration;

    /// Runs a server with `backend` in a thread while `f` talks to it.
    /// Every loop this machine can serve with: each readiness backend,
    /// and io_uring where the kernel has it.
    struct Engine(Config);

    impl std::fmt::Display for Engine {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            if self.0.io_uring {
                f.write_str("io_uring")
            } else {
                write!(f, "{}", self.0.backend)
            }
        }
    }

    fn engines() -> Vec<Engine> {
        #[cfg_attr(not(target_os = "linux"), allow(unused_mut))]
        let mut v: Vec<Engine> = Backend::available_all()
            .into_iter()
            .map(|b| Engine(Config::new(b)))
            .collect();
        #[cfg(target_os = "linux")]
        if crate::uring::available() {
            v.push(Engine(Config {
                io_uring: true,
                ..Config::new(Backend::Epoll)
            }));
        }
        v
    }

    fn with_server(engine: &Engine, greet: bool, f: impl FnOnce(SocketAddr)) -> Stats {
        with_body(engine, greet, 16, f)
    }

    /// As [`with_server`], answering with a `body`-byte body.
    fn with_body(engine: &Engine, greet: bool, body: usize, f: impl FnOnce(SocketAddr)) -> Stats {
        let cfg = engine.0;
        let listener = sock::listen(&"127.0.0.1:0".parse().unwrap(), 1024).unwrap();
        let addr = sock::local_addr(listener.as_raw_fd()).unwrap();
        let (control, stop) = UnixStream::pair().unwrap();
        let t = std::thread::spawn(move || {
            let mut h = FixedResponder::new(body, greet);
            let r = serve(listener.as_raw_fd(), Some(control.as_raw_fd()), cfg, &mut h);
            drop(listener);
            drop(control);
            r
        });
        f(addr);
        drop(stop);
        t.join().unwrap().unwrap()
    }

    fn connect(addr: SocketAddr) -> TcpStream {
        let s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s
    }

    /// Reads until the peer closes.
    fn read_all(s: &mut TcpStream) -> String {
        let mut v = Vec::new();
        s.read_to_end(&mut v).unwrap();
        String::from_utf8_lossy(&v).into_owned()
    }

    /// Reads exactly `k` responses of the fixed responder.
    fn read_responses(s: &mut TcpStream, k: usize) -> String {
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        while String::from_utf8_lossy(&got)
            .matches("HTTP/1.1 200 OK")
            .count()
            < k
            || !got.ends_with(b"abcdefghijklmnop")
        {
            let n = s.read(&mut buf).unwrap();
            assert!(n > 0, "closed early: {}", String::from_utf8_lossy(&got));
            got.extend_from_slice(&buf[..n]);
        }
        String::from_utf8(got).unwrap()
    }

    #[test]
    fn a_sweep_closes_a_bounded_batch() {
        let cfg = Config {
            head_timeout: Some(Duration::from_secs(2)),
            ..Config::new(Backend::Poll)
        };
        let t0 = Duration::from_secs(100);
        let n = 4 * SWEEP_CLOSES;
        let conns: Vec<Option<Box<Exchange>>> = (0..n)
            .map(|i| {
                let mut ex = Exchange::new(t0);
                // Every other connection has an unfinished head since t0.
                ex.answered(-1, i % 2 == 0, Some(t0), false);
                Some(Box::new(ex))
            })
            .collect();
        let at = |s| t0 + Duration::from_secs(s);
        let (fds, more) = expired(&conns, &cfg, at(1), |e| (e, false));
        assert!(fds.is_empty() && !more);
        let (fds, more) = expired(&conns, &cfg, at(3), |e| (e, false));
        assert_eq!(fds.len(), SWEEP_CLOSES);
        assert!(more && fds.iter().all(|fd| fd % 2 == 0));
        assert_eq!(next_sweep_after(at(3), more), at(3));
        let (fds, more) = expired(&conns[n - SWEEP_CLOSES..], &cfg, at(3), |e| (e, false));
        assert_eq!((fds.len(), more), (SWEEP_CLOSES / 2, false));
        assert_eq!(next_sweep_after(at(3), more), at(3) + SWEEP);
    }

    #[test]
    fn every_backend_serves_many_keep_alive_connections() {
        let _turn = crate::many_descriptors();
        for b in engines() {
            let stats = with_server(&b, false, |addr| {
                let mut conns: Vec<TcpStream> = (0..300).map(|_| connect(addr)).collect();
                for round in 0..2 {
                    for c in conns.iter_mut() {
                        c.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
                    }
                    for c in conns.iter_mut() {
                        let r = read_responses(c, 1);
                        assert!(
                            r.starts_with("HTTP/1.1 200 OK\r\n"),
                            "{b} round {round}: {r}"
                        );
                    }
                }
            });
            assert_eq!(stats.requests, 600, "{b}");
            assert_eq!(stats.accepted, 300, "{b}");
        }
    }

    #[test]
    fn pipelined_requests_get_answers_in_order() {
        for b in engines() {
            with_server(&b, false, |addr| {
                let mut c = connect(addr);
                c.write_all(b"GET /1 HTTP/1.1\r\n\r\nHEAD /2 HTTP/1.1\r\n\r\nGET /3 HTTP/1.1\r\nConnection: close\r\n\r\n")
                    .unwrap();
                let all = read_all(&mut c);
                assert_eq!(all.matches("HTTP/1.1 200 OK").count(), 3, "{b}: {all}");
                // HEAD has no body: two bodies only.
                assert_eq!(all.matches("abcdefghijklmnop").count(), 2, "{b}: {all}");
                assert!(all.contains("Connection: close"), "{b}");
            });
        }
    }

    #[test]
    fn a_half_closed_peer_gets_its_answer() {
        for b in engines() {
            with_server(&b, false, |addr| {
                let mut c = connect(addr);
                c.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
                c.shutdown(Shutdown::Write).unwrap();
                let all = read_all(&mut c);
                assert!(
                    all.starts_with("HTTP/1.1 200 OK") && all.ends_with("abcdefghijklmnop"),
                    "{b}: {all}"
                );
            });
        }
    }

    #[test]
    fn garbage_gets_400_and_close_and_resets_do_not_hurt_others() {
        for b in engines() {
            let stats = with_server(&b, false, |addr| {
                let mut g = connect(addr);
                g.write_all(b"hello there\r\n\r\n").unwrap();
                let all = read_all(&mut g);
                assert!(all.starts_with("HTTP/1.1 400 Bad Request"), "{b}: {all}");
                let mut bad = connect(addr);
                bad.write_all(b"DELETE / HTTP/1.1\r\n\r\n").unwrap();
                assert!(read_all(&mut bad).starts_with("HTTP/1.1 405"), "{b}");
                // A peer that resets mid-request.
                let r = connect(addr);
                (&r).write_all(b"GET / HT").unwrap();
                sock::set_linger_zero(r.as_raw_fd()).unwrap();
                drop(r);
                // Others are still served.
                let mut ok = connect(addr);
                ok.write_all(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
                    .unwrap();
                assert!(read_all(&mut ok).starts_with("HTTP/1.1 200 OK"), "{b}");
            });
            assert_eq!(stats.accepted, 4, "{b}");
        }
    }

    #[test]
    fn an_error_answer_reaches_a_client_still_sending() {
        // A 1 MB head gets 431 after its first 16 KB; the client is still
        // sending. Closing with its input unread would reset the
        // connection, and the reset can reach the client before it has
        // read the answer: the close lingers instead.
        for b in engines() {
            with_server(&b, false, |addr| {
                let c = connect(addr);
                let mut w = c.try_clone().unwrap();
                let writer = std::thread::spawn(move || {
                    let mut req = b"GET / HTTP/1.1\r\nX-Big: ".to_vec();
                    req.resize(1 << 20, b'a');
                    req.extend_from_slice(b"\r\n\r\n");
                    let _ = w.write_all(&req);
                });
                let mut got = Vec::new();
                let end = (&c).read_to_end(&mut got);
                writer.join().unwrap();
                let all = String::from_utf8_lossy(&got);
                assert!(
                    end.is_ok() && all.starts_with("HTTP/1.1 431 "),
                    "{b}: {end:?} {all:?}"
                );
            });
        }
    }

    #[test]
    fn answers_run_ahead_of_a_reader_only_so_far() {
        const BODY: usize = 4096;
        const N: usize = 20_000;
        for b in engines() {
            let stats = with_body(&b, false, BODY, |addr| {
                let reqs = b"GET / HTTP/1.1\r\n\r\n".repeat(N);
                // A client that pipelines N requests and reads nothing:
                // without a bound all N answers (80 MB) would be queued.
                let idle = connect(addr);
                idle.set_nonblocking(true).unwrap();
                let mut sent = 0;
                let until = std::time::Instant::now() + Duration::from_secs(2);
                while sent < reqs.len() && std::time::Instant::now() < until {
                    match (&idle).write(&reqs[sent..]) {
                        Ok(k) => sent += k,
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                            std::thread::sleep(Duration::from_millis(5))
                        }
                        Err(e) => panic!("{b}: {e}"),
                    }
                }
                std::thread::sleep(Duration::from_millis(300));
                // One that pipelines N, half-closes and reads them all.
                let c = connect(addr);
                let mut w = c.try_clone().unwrap();
                let writer = std::thread::spawn(move || {
                    w.write_all(&reqs).unwrap();
                    w.shutdown(Shutdown::Write).unwrap();
                });
                let mut total = 0usize;
                let mut buf = vec![0u8; 1 << 16];
                loop {
                    match (&c).read(&mut buf) {
                        Ok(0) => break,
                        Ok(k) => total += k,
                        Err(e) => panic!("{b}: {e} after {total} bytes"),
                    }
                }
                writer.join().unwrap();
                let one =
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 4096\r\n\r\n"
                        .len()
                        + BODY;
                assert_eq!(total, N * one, "{b}: {} answers", total / one);
                drop(idle);
            });
            // The second client's N, and of the first client's no more
            // than fit in OUT_HIGH and the sockets' buffers (4 MB here).
            let first = stats.requests - N as u64;
            assert!(
                first < 8 * 1024 * 1024 / BODY as u64,
                "{b}: {first} answers queued for a client that reads nothing"
            );
        }
    }

    #[test]
    fn greeting_comes_first() {
        for b in engines() {
            with_server(&b, true, |addr| {
                let mut c = connect(addr);
                let mut one = [0u8; 1];
                c.read_exact(&mut one).unwrap();
                assert_eq!(&one, b"!");
            });
        }
    }
}
