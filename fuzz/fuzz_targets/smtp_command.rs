//! The SMTP sink's command parser (`net::smtp::sink::converse`: the sink's
//! handler fed one read at a time, as the server feeds it), on any bytes.
//!
//! Besides not panicking: every byte the sink sends is a sequence of
//! complete replies the sender's parser (`net::smtp::parse_reply`) reads,
//! each code one the sink gives; what it counted is consistent (no more
//! messages than DATA commands could start, no more error replies than
//! commands); it never takes more than it was given; and the session does
//! not depend on how the bytes arrived: the whole input in one read and
//! split in two reads where the input says give the same replies, counts
//! and ending.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scalebench::net::smtp::{parse_reply, sink};

fuzz_target!(|data: &[u8]| {
    let k = data
        .first()
        .map_or(0, |&b| usize::from(b) * 17 % (data.len() + 1));
    let one = sink::converse(&[data]);
    let two = sink::converse(&[&data[..k], &data[k..]]);
    assert_eq!(one, two, "split after {k} bytes");
    assert!(one.taken <= data.len());

    let mut rest = &one.replies[..];
    let mut replies = 0u64;
    while !rest.is_empty() {
        let r = parse_reply(rest)
            .unwrap_or_else(|e| panic!("{e}: {:?}", String::from_utf8_lossy(rest)))
            .unwrap_or_else(|| panic!("cut reply {:?}", String::from_utf8_lossy(rest)));
        assert!(
            [214, 220, 221, 250, 252, 354, 421, 500, 501, 502, 503].contains(&r.code),
            "code {}",
            r.code
        );
        rest = &rest[r.len..];
        replies += 1;
    }
    let c = &one.counts;
    assert!(c.error_replies <= c.commands + 1, "{c:?}");
    assert!(c.messages <= c.commands, "{c:?}");
    assert!(c.quits <= 1 && c.recipients <= c.commands, "{c:?}");
    // The greeting, then at most one reply per command and message, and a
    // last 500 (a line too long) and 421.
    assert!(replies <= 3 + c.commands + c.messages, "{replies} replies, {c:?}");
    if c.quits == 1 {
        assert!(one.closed);
    }
});
