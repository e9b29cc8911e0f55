//! A blocking HTTP/1.1 client for the network benchmarks: one request at a
//! time on an open connection, the response read to its last byte. Every
//! socket has send and receive timeouts, so no wait is unbounded.

use super::sock;
use std::io;
use std::os::fd::RawFd;

/// How a response read ended badly.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// A system call failed (a timeout shows as WouldBlock).
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The server closed the connection before the response was complete.
    #[error("the server closed the connection after {0} bytes of the response")]
    Closed(usize),
    /// The response is not HTTP or has no Content-Length.
    #[error("malformed response: {0}")]
    Malformed(String),
    /// A signal interrupted the wait and the run is being stopped.
    #[error("interrupted")]
    Interrupted,
}

/// Reads once, retrying EINTR unless the harness is stopping.
fn read_some(fd: RawFd, buf: &mut [u8]) -> Result<usize, ClientError> {
    loop {
        match sock::read(fd, buf) {
            Ok(k) => return Ok(k),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                if sys::stop::interrupted() {
                    return Err(ClientError::Interrupted);
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Writes all of `buf`.
pub fn send_all(fd: RawFd, mut buf: &[u8]) -> Result<(), ClientError> {
    while !buf.is_empty() {
        match sock::write(fd, buf) {
            Ok(k) => buf = &buf[k..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                if sys::stop::interrupted() {
                    return Err(ClientError::Interrupted);
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Reads exactly one byte (a greeting).
pub fn read_byte(fd: RawFd) -> Result<u8, ClientError> {
    let mut b = [0u8; 1];
    match read_some(fd, &mut b)? {
        0 => Err(ClientError::Closed(0)),
        _ => Ok(b[0]),
    }
}

/// A parsed response head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// Status code.
    pub status: u16,
    /// Length of the head.
    pub head_len: usize,
    /// Content-Length.
    pub body_len: usize,
}

/// Parses a response head from `buf`, `None` if incomplete.
pub fn parse_head(buf: &[u8]) -> Result<Option<Head>, ClientError> {
    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Ok(None);
    };
    let head =
        std::str::from_utf8(&buf[..end]).map_err(|_| ClientError::Malformed("not UTF-8".into()))?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let status = status_line
        .strip_prefix("HTTP/1.")
        .and_then(|r| r.get(2..5))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| ClientError::Malformed(format!("status line {status_line:?}")))?;
    let body_len = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse().ok())
        .ok_or_else(|| ClientError::Malformed("no Content-Length".into()))?;
    Ok(Some(Head {
        status,
        head_len: end + 4,
        body_len,
    }))
}

/// Sends `request` and reads the whole response into `buf`; returns its
/// head. `head_only` is for HEAD requests (no body follows).
pub fn exchange(
    fd: RawFd,
    request: &[u8],
    buf: &mut Vec<u8>,
    head_only: bool,
) -> Result<Head, ClientError> {
    send_all(fd, request)?;
    buf.clear();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if let Some(h) = parse_head(buf)? {
            let want = h.head_len + if head_only { 0 } else { h.body_len };
            if buf.len() >= want {
                return Ok(h);
            }
        }
        let k = read_some(fd, &mut chunk)?;
        if k == 0 {
            return Err(ClientError::Closed(buf.len()));
        }
        buf.extend_from_slice(&chunk[..k]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_parse() {
        let r = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        let h = parse_head(r).unwrap().unwrap();
        assert_eq!((h.status, h.head_len, h.body_len), (200, 38, 5));
        assert!(parse_head(b"HTTP/1.1 200 OK\r\n").unwrap().is_none());
        assert!(parse_head(b"HTTP/1.1 200 OK\r\n\r\n").is_err());
        assert!(parse_head(b"SSH-2.0\r\n\r\n").is_err());
    }
}
