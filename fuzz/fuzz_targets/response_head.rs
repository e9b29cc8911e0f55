//! The response head parsers of the load generator (`net::load::parse_head`,
//! what `load` calls on the bytes received so far after every read) and of
//! the blocking benchmark client (`net::client::parse_head`), on any bytes.
//!
//! Besides not panicking: a head's length lies within the input and ends
//! with its blank line; a head parses the same from its own bytes and from
//! any longer input; and a head found after a read ends in the bytes that
//! read added (load's receive loop computes the body bytes that came with
//! the head from that). When both parsers accept a head they read the same
//! status.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scalebench::net::{client, load};

fuzz_target!(|data: &[u8]| {
    // The split: the bytes of an earlier read and of the last one.
    let k = data
        .first()
        .map_or(0, |&b| usize::from(b) * 17 % (data.len() + 1));
    let (before, whole) = (&data[..k], data);

    let l = load::parse_head(whole);
    if l == Ok(None) {
        assert_eq!(load::parse_head(before), Ok(None), "after {k} bytes");
    }
    if let Ok(Some(h)) = l {
        assert!(h.len >= 16 && h.len <= whole.len(), "length {}", h.len);
        assert_eq!(&whole[h.len - 4..h.len], b"\r\n\r\n");
        assert_eq!(load::parse_head(&whole[..h.len]), l, "from its own bytes");
        match load::parse_head(before) {
            Ok(None) => assert!(h.len > k, "head of {} found only after {k}", h.len),
            // Too long without a blank line yet (load's 64 KiB bound).
            Err(()) if k > 64 * 1024 => {}
            earlier => assert_eq!(earlier, l, "after {k} bytes"),
        }
    }

    let c = client::parse_head(whole);
    if let Ok(Some(h)) = &c {
        assert!(h.head_len >= 4 && h.head_len <= whole.len());
        assert_eq!(&whole[h.head_len - 4..h.head_len], b"\r\n\r\n");
        let own = client::parse_head(&whole[..h.head_len]);
        assert_eq!(own.ok(), Some(Some(*h)), "from its own bytes");
        match client::parse_head(before) {
            Ok(None) => assert!(h.head_len > k),
            earlier => assert_eq!(earlier.ok(), Some(Some(*h)), "after {k} bytes"),
        }
        if let Ok(Some(lh)) = l {
            assert_eq!(lh.status, h.status, "the two parsers' status");
        }
    }
});
