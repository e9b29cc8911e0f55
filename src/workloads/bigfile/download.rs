//! `bigfile`'s client: one blocking HTTP/1.1 GET per file, reading 256 KB
//! at a time; or paced, held to a rate as the seed's second download was
//! (a rate-limited download over loopback beside the measured one).
//!
//! The pace is kept on the reading side: the client reads no more than
//! `rate × time since the request` bytes and keeps its receive buffer at
//! [`PACED_RCVBUF`], so TCP's flow control stops the server's `sendfile`
//! — and the disk reads behind it — once the bytes in flight fill the
//! receive buffer and the server's send buffer (a few MB on loopback).

use crate::net::load::ItemCounters;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The receive buffer of a paced download.
pub const PACED_RCVBUF: usize = 128 << 10;

/// The longest a paced reader sleeps before it looks at its stop flag.
const NAP: Duration = Duration::from_millis(20);

/// A rate to hold a download to, and the flag that ends it early.
pub struct Pace<'a> {
    /// Bytes per second.
    pub bytes_per_s: u64,
    /// Set: stop reading and return what came.
    pub stop: &'a AtomicBool,
}

/// The bytes a reader held to `rate` bytes/s may have read `elapsed`
/// after it began, of which it has read `got`: what it may read now.
pub fn allowance(rate: u64, elapsed: Duration, got: u64) -> u64 {
    let may = (rate as f64 * elapsed.as_secs_f64()) as u64;
    may.saturating_sub(got)
}

/// How long a reader held to `rate` that has read `got` bytes `elapsed`
/// after it began waits before it may read `want` more.
pub fn wait_for(rate: u64, elapsed: Duration, got: u64, want: u64) -> Duration {
    if rate == 0 {
        return NAP;
    }
    let at = Duration::from_secs_f64((got + want) as f64 / rate as f64);
    at.saturating_sub(elapsed)
}

/// How a download ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Got {
    /// Body bytes received.
    pub body: u64,
    /// The whole body came (false: a paced download stopped early).
    pub whole: bool,
}

/// A connection to `addr` (`127.0.0.1:PORT`), with a receive buffer of
/// `rcvbuf` bytes when given (set before connecting, so that the window
/// offered matches it).
fn connect(addr: &str, rcvbuf: Option<usize>) -> Result<TcpStream, String> {
    let Some(size) = rcvbuf else {
        return TcpStream::connect(addr).map_err(|e| format!("connect to {addr}: {e}"));
    };
    use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd};
    let sa: std::net::SocketAddr = addr.parse().map_err(|e| format!("{addr}: {e}"))?;
    let fd = crate::net::sock::tcp_socket(&sa).map_err(|e| format!("socket: {e}"))?;
    let v = size as libc::c_int;
    // SAFETY: setting an int socket option on our socket.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r != 0 {
        return Err(format!(
            "SO_RCVBUF {size}: {}",
            std::io::Error::last_os_error()
        ));
    }
    crate::net::sock::connect(fd.as_raw_fd(), &crate::net::sock::CAddr::new(&sa))
        .map_err(|e| format!("connect to {addr}: {e}"))?;
    // SAFETY: the descriptor is ours and handed over whole.
    Ok(unsafe { TcpStream::from_raw_fd(fd.into_raw_fd()) })
}

/// The Content-Length of a response whose header ends at `end` in
/// `head`, once its status is 200.
fn content_length(name: &str, head: &[u8], end: usize) -> Result<u64, String> {
    let text = String::from_utf8_lossy(&head[..end]).into_owned();
    if !text.starts_with("HTTP/1.1 200") && !text.starts_with("HTTP/1.0 200") {
        return Err(format!(
            "{name}: {}",
            text.lines().next().unwrap_or("no status line")
        ));
    }
    text.lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .ok_or_else(|| format!("{name}: no Content-Length"))
}

/// Downloads `name` from `addr` (`127.0.0.1:PORT`) with one GET, counting
/// body bytes into `c` as they arrive and one item when the body is whole;
/// gives up at `deadline`. With `pace`, reads no faster than its rate and
/// stops when its flag is set.
pub fn download(
    addr: &str,
    name: &str,
    c: &ItemCounters,
    deadline: Instant,
    pace: Option<&Pace>,
) -> Result<Got, String> {
    let mut s = connect(addr, pace.map(|_| PACED_RCVBUF))?;
    // Paced: short reads, so that the stop flag is seen.
    let timeout = if pace.is_some() {
        NAP
    } else {
        Duration::from_secs(30)
    };
    s.set_read_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    write!(
        s,
        "GET /{name} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| format!("sending the request: {e}"))?;
    let began = Instant::now();
    let mut buf = vec![0u8; 256 << 10];
    let mut head: Vec<u8> = Vec::new();
    let (mut body, mut read) = (0u64, 0u64);
    let mut length: Option<u64> = None;
    loop {
        if Instant::now() > deadline {
            return Err(format!("{name}: not done in time ({body} bytes)"));
        }
        let mut want = buf.len();
        if let Some(p) = pace {
            if p.stop.load(Ordering::Relaxed) {
                return Ok(Got { body, whole: false });
            }
            let may = allowance(p.bytes_per_s, began.elapsed(), read);
            if may == 0 {
                let w = wait_for(p.bytes_per_s, began.elapsed(), read, 16 << 10);
                std::thread::sleep(w.clamp(Duration::from_millis(1), NAP));
                continue;
            }
            want = want.min(may as usize);
        }
        let n = match s.read(&mut buf[..want]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::Interrupted
                        | std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                ) && (pace.is_some() || e.kind() == std::io::ErrorKind::Interrupted) =>
            {
                continue;
            }
            Err(e) => return Err(format!("{name}: reading after {body} bytes: {e}")),
        };
        read += n as u64;
        let mut data = &buf[..n];
        if length.is_none() {
            head.extend_from_slice(data);
            let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") else {
                if head.len() > 16 << 10 {
                    return Err(format!("{name}: no end of the response header"));
                }
                continue;
            };
            length = Some(content_length(name, &head, end)?);
            let rest = head.len() - (end + 4);
            data = &buf[n - rest..n];
        }
        body += data.len() as u64;
        c.add_bytes(data.len() as u64);
        if length.is_some_and(|l| body >= l) {
            break;
        }
    }
    match length {
        Some(l) if body == l => {
            c.add(1, 0);
            Ok(Got { body, whole: true })
        }
        Some(l) => Err(format!("{name}: {body} of {l} bytes")),
        None => Err(format!("{name}: closed before the response header ended")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paced_reader_may_read_what_the_rate_allows_and_no_more() {
        let r = 4_000_000;
        assert_eq!(allowance(r, Duration::ZERO, 0), 0);
        assert_eq!(allowance(r, Duration::from_millis(500), 0), 2_000_000);
        assert_eq!(allowance(r, Duration::from_millis(500), 1_500_000), 500_000);
        // Ahead of the rate: nothing now, and a wait until it is allowed.
        assert_eq!(allowance(r, Duration::from_millis(500), 3_000_000), 0);
        assert_eq!(
            wait_for(r, Duration::from_millis(500), 3_000_000, 1_000_000),
            Duration::from_millis(500)
        );
        assert_eq!(
            wait_for(r, Duration::from_secs(2), 0, 1),
            Duration::ZERO,
            "behind the rate: no wait"
        );
    }

    #[test]
    fn the_content_length_of_a_200_and_a_refusal_by_name() {
        let h = b"HTTP/1.1 200 OK\r\nContent-Length: 42\r\n\r\n";
        assert_eq!(content_length("c1", h, h.len() - 4), Ok(42));
        let h = b"HTTP/1.1 404 Not Found\r\n\r\n";
        assert_eq!(
            content_length("c1", h, h.len() - 4),
            Err("c1: HTTP/1.1 404 Not Found".into())
        );
    }
}
