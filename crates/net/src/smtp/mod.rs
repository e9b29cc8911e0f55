//! SMTP, as much as a mail benchmark needs: a sink that accepts and
//! discards mail in the server's event loop ([`sink`]), a sender holding
//! many simultaneous sessions ([`send`]), and what both share — reading
//! replies and building a message of a given size.

pub mod send;
pub mod sink;

/// Longest reply line or command line accepted (RFC 5321 allows 512 for
/// commands and replies; real servers send longer EHLO lines).
pub const MAX_LINE: usize = 4096;

/// Longest whole (multi-line) reply accepted.
pub const MAX_REPLY: usize = 64 * 1024;

/// One complete reply at the front of a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reply {
    /// Its three-digit code.
    pub code: u16,
    /// The bytes it took, line ends included.
    pub len: usize,
}

/// Why bytes are not an SMTP reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    /// A line does not start with three digits and a separator.
    #[error("not an SMTP reply")]
    Garbage,
    /// The lines of one reply carry different codes.
    #[error("a multi-line reply changes its code")]
    Mixed,
    /// Longer than [`MAX_REPLY`], or a line longer than [`MAX_LINE`].
    #[error("reply too long")]
    TooLong,
}

/// The three-digit code at the front of `line`, with whether the reply
/// goes on (`-`).
fn line_code(line: &[u8]) -> Result<(u16, bool), ReplyError> {
    if line.len() < 3
        || !line[..3].iter().all(u8::is_ascii_digit)
        || line[0] < b'2'
        || line[0] > b'5'
    {
        return Err(ReplyError::Garbage);
    }
    let code = line[..3]
        .iter()
        .fold(0u16, |a, &d| a * 10 + u16::from(d - b'0'));
    match line.get(3) {
        Some(b'-') => Ok((code, true)),
        Some(b' ') | Some(b'\r') | Some(b'\n') => Ok((code, false)),
        _ => Err(ReplyError::Garbage),
    }
}

/// The first complete reply in `b` (`Ok(None)`: not all of it is there
/// yet): one line `250 Ok`, or several `250-…` lines ending with `250 …`.
pub fn parse_reply(b: &[u8]) -> Result<Option<Reply>, ReplyError> {
    let mut pos = 0;
    let mut first = None;
    loop {
        let rest = &b[pos..];
        let Some(nl) = rest.iter().position(|&c| c == b'\n') else {
            // Judge what is there so far: garbage is known at once.
            let code_ok = rest.iter().take(4).enumerate().all(|(k, &c)| match k {
                0 => (b'2'..=b'5').contains(&c),
                1 | 2 => c.is_ascii_digit(),
                _ => matches!(c, b'-' | b' ' | b'\r'),
            });
            if !code_ok {
                return Err(ReplyError::Garbage);
            }
            if rest.len() > MAX_LINE || pos + rest.len() > MAX_REPLY {
                return Err(ReplyError::TooLong);
            }
            return Ok(None);
        };
        if nl > MAX_LINE {
            return Err(ReplyError::TooLong);
        }
        let (code, more) = line_code(&rest[..=nl])?;
        if first.is_some_and(|c| c != code) {
            return Err(ReplyError::Mixed);
        }
        first = Some(code);
        pos += nl + 1;
        if !more {
            return Ok(Some(Reply { code, len: pos }));
        }
        if pos > MAX_REPLY {
            return Err(ReplyError::TooLong);
        }
    }
}

/// Whether the reply `r` (one whole reply, as [`parse_reply`] found it)
/// names the extension `word` on one of its lines (EHLO's keywords, case
/// ignored).
pub fn has_keyword(r: &[u8], word: &str) -> bool {
    r.split(|&c| c == b'\n').any(|line| {
        let text = line.get(4..).unwrap_or(&[]);
        let kw = text
            .split(|c| c.is_ascii_whitespace())
            .next()
            .unwrap_or(&[]);
        kw.eq_ignore_ascii_case(word.as_bytes())
    })
}

/// The header every message starts with.
const HEAD: &[u8] =
    b"From: <sender@scalebench.invalid>\r\nTo: <rcpt@scalebench.invalid>\r\nSubject: scalebench\r\n\r\n";

/// The smallest message [`message`] makes: its header alone.
pub const MIN_MESSAGE: usize = HEAD.len();

/// A message of exactly `bytes` bytes (at least [`MIN_MESSAGE`]): a
/// header, then lines of at most 78 characters with CRLF, none starting
/// with a dot, followed by the end-of-data line `.` — what is sent after
/// DATA's 354.
pub fn message(bytes: usize) -> Vec<u8> {
    let mut m = Vec::with_capacity(bytes.max(HEAD.len()) + 3);
    m.extend_from_slice(HEAD);
    let line = |m: &mut Vec<u8>, len: usize| {
        m.extend((0..len - 2).map(|i| b'a' + (i % 26) as u8));
        m.extend_from_slice(b"\r\n");
    };
    let mut left = bytes.saturating_sub(HEAD.len());
    while left > 80 {
        line(&mut m, 78);
        left -= 78;
    }
    match left {
        0 => {}
        // One byte cannot be a line of its own: the subject gets it.
        1 => m.insert(HEAD.len() - 4, b'x'),
        2..=78 => line(&mut m, left),
        _ => {
            line(&mut m, left - 40);
            line(&mut m, 40);
        }
    }
    m.extend_from_slice(b".\r\n");
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_parse_whole_or_not_yet() {
        assert_eq!(
            parse_reply(b"220 ready\r\nrest"),
            Ok(Some(Reply { code: 220, len: 11 }))
        );
        let ehlo = b"250-host\r\n250-PIPELINING\r\n250 SIZE\r\n";
        let r = parse_reply(ehlo).unwrap().unwrap();
        assert_eq!((r.code, r.len), (250, ehlo.len()));
        assert!(has_keyword(ehlo, "pipelining"));
        assert!(!has_keyword(ehlo, "CHUNKING"));
        assert_eq!(parse_reply(b"250-host\r\n250-PIPE"), Ok(None));
        assert_eq!(parse_reply(b"25"), Ok(None));
        assert_eq!(
            parse_reply(b"354\r\n"),
            Ok(Some(Reply { code: 354, len: 5 }))
        );
        assert_eq!(
            parse_reply(b"HTTP/1.1 200 OK\r\n"),
            Err(ReplyError::Garbage)
        );
        assert_eq!(parse_reply(b"HTTP"), Err(ReplyError::Garbage));
        assert_eq!(parse_reply(b"!"), Err(ReplyError::Garbage));
        assert_eq!(parse_reply(b"2"), Ok(None));
        assert_eq!(parse_reply(b"25x"), Err(ReplyError::Garbage));
        assert_eq!(parse_reply(b"999 no\r\n"), Err(ReplyError::Garbage));
        assert_eq!(parse_reply(b"250-a\r\n550 b\r\n"), Err(ReplyError::Mixed));
        let long = vec![b'2'; MAX_LINE + 10];
        assert_eq!(parse_reply(&long), Err(ReplyError::Garbage));
        let mut long = b"250 ".to_vec();
        long.resize(MAX_LINE + 10, b'x');
        assert_eq!(parse_reply(&long), Err(ReplyError::TooLong));
    }

    #[test]
    fn messages_have_the_asked_size_and_end_with_a_dot() {
        let sizes = (0..400).chain([1000, 4096, 100_000]);
        for bytes in sizes {
            let m = message(bytes);
            assert!(m.ends_with(b"\r\n.\r\n"), "{bytes}");
            let content = m.len() - 3;
            assert_eq!(content, bytes.max(MIN_MESSAGE), "{bytes}");
            for line in m[..content].split_inclusive(|&c| c == b'\n') {
                assert!(line.len() <= 78 && line.ends_with(b"\r\n"), "{bytes}");
                assert!(!line.starts_with(b"."), "{bytes}");
            }
        }
    }
}
