//! The SMTP sender's reply parser (`net::smtp::parse_reply`, what
//! `smtp-send` calls on the bytes received so far after every read) and
//! `has_keyword` (how it reads EHLO's extensions), on any bytes.
//!
//! Besides not panicking: a reply's length lies within the input and ends
//! with a line end, its code is 200..=599; it parses the same from its own
//! bytes and from longer input; a prefix of the input (what an earlier
//! read had brought) is incomplete or has the same verdict — a reply found
//! in a prefix is the whole input's reply, a prefix refused is refused in
//! the whole input too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scalebench::net::smtp::{has_keyword, parse_reply};

fuzz_target!(|data: &[u8]| {
    let k = data
        .first()
        .map_or(0, |&b| usize::from(b) * 17 % (data.len() + 1));
    let whole = parse_reply(data);
    let before = parse_reply(&data[..k]);
    if let Ok(Some(r)) = whole {
        assert!(r.len >= 4 && r.len <= data.len(), "length {}", r.len);
        assert_eq!(data[r.len - 1], b'\n');
        assert!((200..=599).contains(&r.code), "code {}", r.code);
        assert_eq!(parse_reply(&data[..r.len]), whole, "from its own bytes");
        let _ = has_keyword(&data[..r.len], "PIPELINING");
        match before {
            Ok(None) => assert!(r.len > k, "reply of {} found only after {k}", r.len),
            earlier => assert_eq!(earlier, whole, "after {k} bytes"),
        }
    }
    match before {
        Ok(Some(_)) => assert_eq!(before, whole, "after {k} bytes"),
        Err(e) => assert!(whole.is_err(), "{e} after {k} bytes, then {whole:?}"),
        Ok(None) => {}
    }
});
