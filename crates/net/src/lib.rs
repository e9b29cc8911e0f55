//! Networking: event backends ([`backend`]), HTTP parsing ([`http`]), the
//! event-driven server ([`server`]), a blocking benchmark client
//! ([`client`]), the load generator ([`load`]; spread over several
//! processes by `harness::spread`), the SMTP sink and sender ([`smtp`]),
//! latency histograms ([`hist`]), failed calls counted across a server's
//! processes ([`errcount`]) and raw socket helpers ([`sock`]).

#![deny(missing_docs)]

pub mod backend;
pub mod client;
pub mod engine;
pub mod errcount;
pub mod files;
pub mod forking;
pub mod hist;
pub mod http;
pub mod load;
pub mod nginx;
pub mod output;
pub mod server;
pub mod smtp;
pub mod sock;
#[cfg(target_os = "linux")]
pub mod uring;
pub mod workers;

pub use backend::Backend;

/// What a peer answered, for a message: its first line (at most 60
/// bytes, `…` when cut), bytes that are not printable ASCII escaped
/// (`\x00`), in backquotes — `` `220 mail.example ESMTP` ``.
pub fn said(answer: &[u8]) -> String {
    const MAX: usize = 60;
    let first = answer.split(|&c| c == b'\n').next().unwrap_or_default();
    let line = first.strip_suffix(b"\r").unwrap_or(first);
    let cut = line.len() > MAX;
    let shown: String = line[..line.len().min(MAX)]
        .iter()
        .map(|&c| match c {
            b' '..=b'~' if c != b'`' && c != b'\\' => (c as char).to_string(),
            _ => format!("\\x{c:02x}"),
        })
        .collect();
    format!("`{shown}{}`", if cut { "…" } else { "" })
}

/// Unit tests that hold hundreds of descriptors take turns: side by side
/// they push each other's numbers past select()'s `FD_SETSIZE` (1 024),
/// which the select backend then rightly refuses.
#[cfg(test)]
pub(crate) fn many_descriptors() -> std::sync::MutexGuard<'static, ()> {
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ONE.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    #[test]
    fn answers_are_shown_shortened_and_escaped() {
        assert_eq!(super::said(b"220 mail ESMTP\r\n250 x"), "`220 mail ESMTP`");
        assert_eq!(super::said(b"HTTP/1.1 400 Bad\r\n"), "`HTTP/1.1 400 Bad`");
        assert_eq!(super::said(b"\x00\xffab`"), "`\\x00\\xffab\\x60`");
        let long = [b'a'; 100];
        assert_eq!(super::said(&long), format!("`{}…`", "a".repeat(60)));
        assert_eq!(super::said(b""), "``");
    }
}
