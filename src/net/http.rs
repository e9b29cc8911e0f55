//! HTTP/1.1 request parsing and response heads: enough for a fast,
//! strict server. The parser works on the bytes received so far and says
//! whether a whole request is there, how long it is, or which error status
//! it deserves.

/// Parser limits.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Longest request line (method, target, version); longer gets 414.
    pub request_line: usize,
    /// Longest head (request line and headers); longer gets 431.
    pub head: usize,
    /// Largest request body accepted (and skipped); larger gets 413.
    pub body: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            request_line: 8 * 1024,
            head: 16 * 1024,
            body: 1 << 20,
        }
    }
}

/// HTTP version of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// HTTP/1.0: close unless asked to keep alive.
    Http10,
    /// HTTP/1.1: keep alive unless asked to close.
    Http11,
}

/// A parsed request head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request<'a> {
    /// Method token (`GET`).
    pub method: &'a str,
    /// Request target as sent (`/a/b?c`), not decoded.
    pub target: &'a str,
    /// Version.
    pub version: Version,
    /// Whether the connection may stay open after the response.
    pub keep_alive: bool,
    /// The If-Modified-Since header, if any.
    pub if_modified_since: Option<&'a str>,
}

/// What the bytes so far hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parse<'a> {
    /// Not a whole request yet.
    Incomplete,
    /// A whole request of `len` bytes (head and body).
    Complete(Request<'a>, usize),
    /// A request that must be answered with this status and the
    /// connection closed.
    Error(u16),
}

/// Bytes allowed in a token (RFC 9110 §5.6.2), as a lookup table.
const TOKEN: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'!' | b'#'
                    | b'$'
                    | b'%'
                    | b'&'
                    | b'\''
                    | b'*'
                    | b'+'
                    | b'-'
                    | b'.'
                    | b'^'
                    | b'_'
                    | b'`'
                    | b'|'
                    | b'~'
            );
        i += 1;
    }
    t
};

fn is_token(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| TOKEN[b as usize])
}

/// Where a head's lines end, found in one pass.
enum Scan {
    /// Not a whole head yet.
    Incomplete,
    /// A whole head ending at `end` (just past its blank line); `lines`
    /// are the indices of the `\n` ending each line before the blank one.
    Head { end: usize, lines: Vec<usize> },
    /// Refused with this status.
    Error(u16),
}

/// Finds the request line and header lines of the head at the start of
/// `buf` (which starts with neither CR nor LF).
fn scan(buf: &[u8], limits: &Limits) -> Scan {
    if buf.is_empty() {
        return Scan::Incomplete;
    }
    let mut lines = Vec::with_capacity(16);
    let mut start = 0;
    loop {
        let Some(p) = buf[start..].iter().position(|&b| b == b'\n') else {
            let limit = if lines.is_empty() {
                (limits.request_line, 414)
            } else {
                (limits.head, 431)
            };
            return if buf.len() > limit.0 {
                Scan::Error(limit.1)
            } else {
                Scan::Incomplete
            };
        };
        let nl = start + p;
        if lines.is_empty() && nl > limits.request_line {
            return Scan::Error(414);
        }
        // A blank line ("\n" or "\r\n") after the request line ends the head.
        if !lines.is_empty() && (nl == start || (nl == start + 1 && buf[start] == b'\r')) {
            let end = nl + 1;
            return if end > limits.head {
                Scan::Error(431)
            } else {
                Scan::Head { end, lines }
            };
        }
        if nl > limits.head {
            return Scan::Error(431);
        }
        lines.push(nl);
        start = nl + 1;
    }
}

/// The line of `head` ending at the `\n` at `nl`, starting at `from`,
/// without its line end (a CR before the LF is dropped).
fn line_at(head: &str, from: usize, nl: usize) -> &str {
    let l = &head[from..nl];
    l.strip_suffix('\r').unwrap_or(l)
}

/// Splits a request line into exactly three parts at single spaces.
fn three_parts(line: &str) -> Option<(&str, &str, &str)> {
    let (method, rest) = line.split_once(' ')?;
    let (target, version) = rest.split_once(' ')?;
    if version.contains(' ') {
        return None;
    }
    Some((method, target, version))
}

/// Parses the request at the start of `buf`.
pub fn parse<'a>(buf: &'a [u8], limits: &Limits) -> Parse<'a> {
    // Tolerate empty lines before a request (RFC 9112 §2.2).
    let skip = buf
        .iter()
        .take_while(|&&b| b == b'\r' || b == b'\n')
        .count();
    let buf_all = buf;
    let buf = &buf[skip..];
    let (end, ends) = match scan(buf, limits) {
        Scan::Incomplete => return Parse::Incomplete,
        Scan::Error(status) => return Parse::Error(status),
        Scan::Head { end, lines } => (end, lines),
    };
    let raw = &buf[..end];
    // Plain ASCII without NUL (the usual head) is valid UTF-8 as it is.
    if !raw.iter().all(|&b| b != 0 && b < 0x80) && raw.contains(&0) {
        return Parse::Error(400);
    }
    let Ok(head) = std::str::from_utf8(raw) else {
        return Parse::Error(400);
    };
    let Some((method, target, version)) = three_parts(line_at(head, 0, ends[0])) else {
        return Parse::Error(400);
    };
    if !is_token(method) || target.is_empty() || target.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Parse::Error(400);
    }
    let version = match version {
        "HTTP/1.1" => Version::Http11,
        "HTTP/1.0" => Version::Http10,
        v if v.starts_with("HTTP/") => return Parse::Error(505),
        _ => return Parse::Error(400),
    };
    let mut keep_alive = version == Version::Http11;
    let mut if_modified_since = None;
    let mut content_length: Option<usize> = None;
    for w in ends.windows(2) {
        let l = line_at(head, w[0] + 1, w[1]);
        if l.starts_with(' ') || l.starts_with('\t') {
            return Parse::Error(400); // obsolete line folding
        }
        let Some((name, value)) = l.split_once(':') else {
            return Parse::Error(400);
        };
        if !is_token(name) {
            return Parse::Error(400);
        }
        // Only a few names matter; their lengths tell the others apart
        // without comparing.
        if !matches!(name.len(), 10 | 14 | 17) {
            continue;
        }
        let value = value.trim_matches(|c| c == ' ' || c == '\t');
        if name.eq_ignore_ascii_case("connection") {
            for t in value.split(',').map(str::trim) {
                if t.eq_ignore_ascii_case("close") {
                    keep_alive = false;
                } else if t.eq_ignore_ascii_case("keep-alive") && version == Version::Http10 {
                    keep_alive = true;
                }
            }
        } else if name.eq_ignore_ascii_case("content-length") {
            let Ok(v) = value.parse::<usize>() else {
                return Parse::Error(400);
            };
            if content_length.is_some_and(|c| c != v) {
                return Parse::Error(400);
            }
            content_length = Some(v);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            return Parse::Error(501);
        } else if name.eq_ignore_ascii_case("if-modified-since") {
            if_modified_since = Some(value);
        }
    }
    let body = content_length.unwrap_or(0);
    if body > limits.body {
        return Parse::Error(413);
    }
    let total = skip + end + body;
    if buf_all.len() < total {
        return Parse::Incomplete;
    }
    Parse::Complete(
        Request {
            method,
            target,
            version,
            keep_alive,
            if_modified_since,
        },
        total,
    )
}

/// The reason phrase of a status code.
pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        304 => "Not Modified",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        413 => "Content Too Large",
        414 => "URI Too Long",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Unknown",
    }
}

/// Appends a complete error response (small text body, connection
/// closed) to `out`.
pub fn error_response(status: u16, out: &mut Vec<u8>) {
    let body = format!("{status} {}\n", reason(status));
    let allow = if status == 405 {
        "Allow: GET, HEAD\r\n"
    } else {
        ""
    };
    out.extend_from_slice(
        format!(
            "HTTP/1.1 {status} {}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n{allow}Connection: close\r\n\r\n{body}",
            reason(status),
            body.len()
        )
        .as_bytes(),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Parse<'_> {
        parse(s.as_bytes(), &Limits::default())
    }

    #[test]
    fn a_simple_get() {
        let s = "GET /x HTTP/1.1\r\nHost: a\r\n\r\n";
        match p(s) {
            Parse::Complete(r, len) => {
                assert_eq!(
                    (r.method, r.target, r.version, r.keep_alive),
                    ("GET", "/x", Version::Http11, true)
                );
                assert_eq!(len, s.len());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn pipelined_requests_parse_one_at_a_time() {
        let s = "GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n";
        let Parse::Complete(r, len) = p(s) else {
            panic!()
        };
        assert_eq!(r.target, "/a");
        let Parse::Complete(r, _) = p(&s[len..]) else {
            panic!()
        };
        assert_eq!(r.target, "/b");
    }

    #[test]
    fn partial_input_is_incomplete_at_every_byte() {
        let s = "GET /abc HTTP/1.1\r\nHost: x\r\n\r\n";
        for k in 0..s.len() {
            assert_eq!(p(&s[..k]), Parse::Incomplete, "after {k} bytes");
        }
        assert!(matches!(p(s), Parse::Complete(..)));
    }

    #[test]
    fn keep_alive_rules() {
        let ka = |s: &str| match p(s) {
            Parse::Complete(r, _) => r.keep_alive,
            o => panic!("{o:?}"),
        };
        assert!(!ka("GET / HTTP/1.0\r\n\r\n"));
        assert!(ka("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"));
        assert!(!ka("GET / HTTP/1.1\r\nConnection: close\r\n\r\n"));
        assert!(!ka("GET / HTTP/1.1\r\nConnection: foo, Close\r\n\r\n"));
        assert!(ka("GET / HTTP/1.1\n\n"));
    }

    #[test]
    fn errors_get_their_status() {
        assert_eq!(p("garbage\r\n\r\n"), Parse::Error(400));
        assert_eq!(p("GET / HTTP/2.0\r\n\r\n"), Parse::Error(505));
        assert_eq!(p("GET / FTP/1.0\r\n\r\n"), Parse::Error(400));
        assert_eq!(p("GET  / HTTP/1.1\r\n\r\n"), Parse::Error(400));
        assert_eq!(p("G(T / HTTP/1.1\r\n\r\n"), Parse::Error(400));
        assert_eq!(p("GET / HTTP/1.1\r\nNoColon\r\n\r\n"), Parse::Error(400));
        assert_eq!(
            p("GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n"),
            Parse::Error(400)
        );
        assert_eq!(p("GET /\0 HTTP/1.1\r\n\r\n"), Parse::Error(400));
        assert_eq!(
            p("GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n"),
            Parse::Error(400)
        );
        assert_eq!(
            p("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"),
            Parse::Error(501)
        );
        let long = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(9000));
        assert_eq!(p(&long), Parse::Error(414));
        assert_eq!(p(&"a".repeat(9000)), Parse::Error(414));
        let big = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "b".repeat(17000));
        assert_eq!(p(&big), Parse::Error(431));
        let unfinished = format!("GET / HTTP/1.1\r\nX: {}", "b".repeat(17000));
        assert_eq!(p(&unfinished), Parse::Error(431));
    }

    #[test]
    fn a_body_is_waited_for_and_skipped() {
        let s = "POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhel";
        assert_eq!(p(s), Parse::Incomplete);
        let s = "POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloGET";
        let Parse::Complete(r, len) = p(s) else {
            panic!()
        };
        assert_eq!((r.method, &s[len..]), ("POST", "GET"));
    }

    #[test]
    fn error_responses_close() {
        let mut out = Vec::new();
        error_response(405, &mut out);
        let s = String::from_utf8(out).unwrap();
        assert!(s.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"));
        assert!(s.contains("Allow: GET, HEAD\r\n") && s.contains("Connection: close\r\n"));
    }
}
