//! The benchmark server process (`scalebench __responder`) under each
//! backend: descriptor exhaustion on purpose, then recovery.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Command;
use std::time::Duration;

const BACKENDS: &[&str] = if cfg!(target_os = "linux") {
    &["epoll", "poll", "select"]
} else {
    &["kqueue", "poll", "select"]
};

struct Server {
    _child: common::Child,
    addr: SocketAddr,
}

impl Server {
    /// A greeting server whose open-files limit is `nofile`.
    fn start(backend: &str, nofile: u32) -> Server {
        let cmd = format!(
            "ulimit -n {nofile} && exec '{}' __responder --backend {backend} --greet --accept-burst 1",
            env!("CARGO_BIN_EXE_scalebench")
        );
        let (child, addr) =
            common::spawn_announcing(Command::new("sh").args(["-c", &cmd]), "listening ");
        Server {
            _child: child,
            addr: addr.parse().unwrap(),
        }
    }
}

/// Whether the greeting arrives within `t`.
fn greeted(c: &mut TcpStream, t: Duration) -> bool {
    c.set_read_timeout(Some(t)).unwrap();
    let mut b = [0u8; 1];
    matches!(c.read(&mut b), Ok(1) if b[0] == b'!')
}

#[test]
fn out_of_descriptors_the_server_keeps_serving_and_recovers() {
    for &b in BACKENDS {
        let s = Server::start(b, 48);
        let mut conns: Vec<TcpStream> = (0..64)
            .map(|_| TcpStream::connect(s.addr).unwrap())
            .collect();
        // Let the server accept what it can (it pauses accepting for 100 ms
        // at a time when out of descriptors), then see who was greeted.
        std::thread::sleep(Duration::from_millis(500));
        let mut ok: Vec<usize> = Vec::new();
        for (i, c) in conns.iter_mut().enumerate() {
            if greeted(c, Duration::from_millis(20)) {
                ok.push(i);
            }
        }
        assert!(
            ok.len() > 30 && ok.len() < 48,
            "{b}: {} greeted with 48 descriptors",
            ok.len()
        );
        // The connections it has are still served.
        let first = ok[0];
        conns[first]
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        conns[first].write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
        let mut buf = [0u8; 256];
        let k = conns[first].read(&mut buf).unwrap();
        assert!(buf[..k].starts_with(b"HTTP/1.1 200 OK"), "{b}");
        // Free 20 descriptors: the waiting connections get accepted.
        let waiting: Vec<usize> = (0..conns.len()).filter(|i| !ok.contains(i)).collect();
        for &i in ok.iter().skip(1).take(20) {
            conns[i].shutdown(std::net::Shutdown::Both).unwrap();
        }
        std::thread::sleep(Duration::from_millis(500));
        let mut later = 0;
        for &i in &waiting {
            if greeted(&mut conns[i], Duration::from_millis(20)) {
                later += 1;
            }
        }
        assert!(later >= 15, "{b}: only {later} accepted after 20 closed");
        // Still alive and serving.
        let mut c = TcpStream::connect(s.addr).unwrap();
        drop(conns);
        assert!(
            greeted(&mut c, Duration::from_secs(3)),
            "{b}: a new connection after recovery"
        );
    }
}
