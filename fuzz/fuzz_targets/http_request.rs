//! The server's request parser, `net::http::parse`, on any bytes, under the
//! default limits and under small ones (so that the 413, 414 and 431
//! limits are reached by short inputs too).
//!
//! Besides not panicking, a verdict must not depend on how the bytes
//! arrived, since the server parses what it has received so far after
//! every read: a complete request parses the same from exactly its own
//! bytes, and a prefix of the input is either still incomplete or already
//! has the whole input's verdict.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scalebench::net::http::{Limits, Parse, parse};

/// Limits a few dozen bytes long.
const SMALL: Limits = Limits {
    request_line: 40,
    head: 100,
    body: 20,
};

fn check(buf: &[u8], limits: &Limits) {
    let whole = parse(buf, limits);
    match &whole {
        Parse::Complete(_, len) => {
            assert!(
                *len > 0 && *len <= buf.len(),
                "length {len} of {}",
                buf.len()
            );
            assert_eq!(parse(&buf[..*len], limits), whole, "from its own bytes");
        }
        Parse::Error(status) => assert!(
            matches!(status, 400 | 413 | 414 | 431 | 501 | 505),
            "status {status}"
        ),
        Parse::Incomplete => {}
    }
    // Prefixes: half, all but the last byte, and one the input picks.
    let picked = buf
        .first()
        .map_or(0, |&b| usize::from(b) * 17 % (buf.len() + 1));
    for k in [buf.len() / 2, buf.len().saturating_sub(1), picked] {
        let part = parse(&buf[..k], limits);
        assert!(
            part == Parse::Incomplete || part == whole,
            "after {k} bytes {part:?}, after all {whole:?}"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    check(data, &Limits::default());
    check(data, &SMALL);
});
