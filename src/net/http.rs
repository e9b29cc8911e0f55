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

fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Finds the end of the head: the index just past the blank line.
fn head_end(buf: &[u8]) -> Option<usize> {
    let mut i = 0;
    while let Some(p) = buf[i..].iter().position(|&b| b == b'\n') {
        let nl = i + p;
        // A blank line: "\n\n" or "\n\r\n".
        if buf.get(nl + 1) == Some(&b'\n') {
            return Some(nl + 2);
        }
        if buf.get(nl + 1) == Some(&b'\r') && buf.get(nl + 2) == Some(&b'\n') {
            return Some(nl + 3);
        }
        i = nl + 1;
    }
    None
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
    let Some(line_end) = buf.iter().position(|&b| b == b'\n') else {
        return if buf.len() > limits.request_line {
            Parse::Error(414)
        } else {
            Parse::Incomplete
        };
    };
    if line_end > limits.request_line {
        return Parse::Error(414);
    }
    let Some(end) = head_end(buf) else {
        return if buf.len() > limits.head {
            Parse::Error(431)
        } else {
            Parse::Incomplete
        };
    };
    if end > limits.head {
        return Parse::Error(431);
    }
    let Ok(head) = std::str::from_utf8(&buf[..end]) else {
        return Parse::Error(400);
    };
    if head.contains('\0') {
        return Parse::Error(400);
    }
    let mut lines = head.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let line = lines.next().unwrap_or("");
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
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
    for l in lines {
        if l.is_empty() {
            break;
        }
        if l.starts_with(' ') || l.starts_with('\t') {
            return Parse::Error(400); // obsolete line folding
        }
        let Some((name, value)) = l.split_once(':') else {
            return Parse::Error(400);
        };
        if !is_token(name) {
            return Parse::Error(400);
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
