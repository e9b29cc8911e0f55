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

/// The first index of `b` in `s` (a plain loop: the strings searched
/// here are a few dozen bytes, too short for a vectorised search to pay).
fn find(s: &[u8], b: u8) -> Option<usize> {
    s.iter().position(|&c| c == b)
}

/// Where the head at the start of `buf` (which starts with neither CR nor
/// LF) ends, in one pass: the index just past its blank line, and the index
/// of the `\n` ending the request line.
fn scan(buf: &[u8], limits: &Limits) -> Result<Option<(usize, usize)>, u16> {
    let Some(first) = find(buf, b'\n') else {
        return if buf.len() > limits.request_line {
            Err(414)
        } else {
            Ok(None)
        };
    };
    if first > limits.request_line {
        return Err(414);
    }
    let mut start = first + 1;
    loop {
        let Some(p) = find(&buf[start.min(buf.len())..], b'\n') else {
            return if buf.len() > limits.head {
                Err(431)
            } else {
                Ok(None)
            };
        };
        let nl = start + p;
        if nl >= limits.head {
            return Err(431);
        }
        // A blank line ("\n" or "\r\n") ends the head.
        if nl == start || (nl == start + 1 && buf[start] == b'\r') {
            return Ok(Some((nl + 1, first)));
        }
        start = nl + 1;
    }
}

/// `l` without a CR at its end.
fn strip_cr(l: &str) -> &str {
    l.strip_suffix('\r').unwrap_or(l)
}

/// Splits `s` at the first `b` (an ASCII byte, so both halves are str).
fn split_at_byte(s: &str, b: u8) -> Option<(&str, &str)> {
    let i = find(s.as_bytes(), b)?;
    Some((&s[..i], &s[i + 1..]))
}

/// The method, target and version of request line `l` (without its
/// CR LF): exactly three parts, one space apart; else the error status.
#[inline]
fn request_line(l: &str) -> Result<(&str, &str, Version), u16> {
    let Some((method, rest)) = split_at_byte(l, b' ') else {
        return Err(400);
    };
    let Some((target, version)) = split_at_byte(rest, b' ') else {
        return Err(400);
    };
    if find(version.as_bytes(), b' ').is_some()
        || !is_token(method)
        || target.is_empty()
        || target.bytes().any(|b| b <= b' ' || b == 0x7f)
    {
        return Err(400);
    }
    let version = match version {
        "HTTP/1.1" => Version::Http11,
        "HTTP/1.0" => Version::Http10,
        v if v.starts_with("HTTP/") => return Err(505),
        _ => return Err(400),
    };
    Ok((method, target, version))
}

/// What the few headers that matter say.
struct Headers<'a> {
    /// Whether the connection may stay open (by the version and
    /// `Connection`).
    keep_alive: bool,
    /// The If-Modified-Since header, if any.
    if_modified_since: Option<&'a str>,
    /// The Content-Length, if given.
    content_length: Option<usize>,
}

impl<'a> Headers<'a> {
    /// The header lines `rest` (after the request line, up to the blank
    /// line) of a request of `version`; the error status of a malformed
    /// or unsupported one.
    #[inline]
    fn parse(mut rest: &'a str, version: Version) -> Result<Headers<'a>, u16> {
        let mut h = Headers {
            keep_alive: version == Version::Http11,
            if_modified_since: None,
            content_length: None,
        };
        while let Some((line, next)) = split_at_byte(rest, b'\n') {
            rest = next;
            let l = strip_cr(line);
            if l.is_empty() {
                break;
            }
            if l.starts_with(' ') || l.starts_with('\t') {
                return Err(400); // obsolete line folding
            }
            let Some((name, value)) = split_at_byte(l, b':') else {
                return Err(400);
            };
            if !is_token(name) {
                return Err(400);
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
                        h.keep_alive = false;
                    } else if t.eq_ignore_ascii_case("keep-alive") && version == Version::Http10 {
                        h.keep_alive = true;
                    }
                }
            } else if name.eq_ignore_ascii_case("content-length") {
                let Ok(v) = value.parse::<usize>() else {
                    return Err(400);
                };
                if h.content_length.is_some_and(|c| c != v) {
                    return Err(400);
                }
                h.content_length = Some(v);
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                return Err(501);
            } else if name.eq_ignore_ascii_case("if-modified-since") {
                h.if_modified_since = Some(value);
            }
        }
        Ok(h)
    }
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
    let (end, first) = match scan(buf, limits) {
        Ok(None) => return Parse::Incomplete,
        Ok(Some(found)) => found,
        Err(status) => return Parse::Error(status),
    };
    let raw = &buf[..end];
    if raw.contains(&0) {
        return Parse::Error(400);
    }
    let Ok(head) = std::str::from_utf8(raw) else {
        return Parse::Error(400);
    };
    let (method, target, version) = match request_line(strip_cr(&head[..first])) {
        Ok(l) => l,
        Err(status) => return Parse::Error(status),
    };
    let Headers {
        keep_alive,
        if_modified_since,
        content_length,
    } = match Headers::parse(&head[first + 1..], version) {
        Ok(h) => h,
        Err(status) => return Parse::Error(status),
    };
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

    proptest::proptest! {
        #[test]
        fn any_bytes_parse_without_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300)) {
            let _ = parse(&bytes, &Limits::default());
        }

        #[test]
        fn well_formed_requests_parse_whole_and_not_before(
            method in "[A-Z]{1,8}",
            target in "/[a-z0-9./%?=-]{0,40}",
            headers in proptest::collection::vec(("[A-Za-z][A-Za-z0-9-]{0,15}", "[ -~]{0,30}"), 0..6),
            close in proptest::bool::ANY,
            crlf in proptest::bool::ANY,
        ) {
            let nl = if crlf { "\r\n" } else { "\n" };
            let mut s = format!("{method} {target} HTTP/1.1{nl}");
            for (n, v) in &headers {
                let n = if n.len() == 10 || n.len() == 14 || n.len() == 17 { format!("X{n}") } else { n.clone() };
                s += &format!("{n}: {}{nl}", v.trim());
            }
            if close {
                s += &format!("Connection: close{nl}");
            }
            s += nl;
            let Parse::Complete(r, len) = p(&s) else {
                panic!("not complete: {s:?}");
            };
            proptest::prop_assert_eq!(len, s.len());
            proptest::prop_assert_eq!((r.method, r.target, r.keep_alive), (method.as_str(), target.as_str(), !close));
            for k in 0..s.len() {
                proptest::prop_assert_eq!(p(&s[..k]), Parse::Incomplete, "after {} bytes", k);
            }
        }
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
