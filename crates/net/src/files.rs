//! The static file handler: GET and HEAD of regular files below a root,
//! with Content-Type, Last-Modified and 304 on If-Modified-Since. It never
//! serves anything outside the root: the target is percent-decoded and
//! must be valid UTF-8 without NUL; `..` segments are refused; the file
//! found is resolved to its real path (symbolic links followed), which must
//! lie below the real root; and it is opened without following a final
//! symbolic link.
//!
//! Two paths, [`Opens`]: per request (the seeds' servers, gatling and
//! fnord: the path looked up and opened, the file's status read, the body
//! sent from the file with sendfile or read/write, the file closed), or
//! cached (open files kept and re-checked with stat(2) at most once a
//! second; small files kept in memory, each response to a GET as one
//! buffer of head and body, built when first needed per Connection
//! header; larger ones sent from the file).

use super::http::{self, Request, Version};
use super::output::Output;
use super::server::Handler;
use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, SystemTime};

/// How bodies are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bodies {
    /// Small files (up to [`SMALL`]) from memory, larger ones as files.
    Auto,
    /// Every body as a file range (sendfile, or read/write as the server
    /// is configured).
    Files,
}

/// How a file is found and held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opens {
    /// Looked up and opened for each request, closed once sent: the
    /// seeds' path, which a filesystem comparison exists to see.
    PerRequest,
    /// Kept open between requests (up to 4 096 per worker), re-checked
    /// with stat(2) at most once a second; small bodies kept in memory
    /// with [`Bodies::Auto`].
    Cached,
}

impl Opens {
    /// Its name on the command line and in a result.
    pub fn name(self) -> &'static str {
        match self {
            Opens::PerRequest => "per-request",
            Opens::Cached => "cached",
        }
    }
}

/// Files up to this size are served from memory in `Auto` mode.
pub const SMALL: u64 = 64 * 1024;

/// Open files kept at most.
const CACHE_MAX: usize = 4096;

/// How long a cached file is trusted before stat(2) checks it again.
const RECHECK: Duration = Duration::from_secs(1);

struct Entry {
    path: PathBuf,
    file: Rc<File>,
    len: u64,
    mtime: SystemTime,
    ino: u64,
    /// The whole response head for each [`Connection`] case.
    heads: [Rc<[u8]>; 3],
    last_modified: String,
    body: Option<Rc<[u8]>>,
    /// Head and body in one buffer for each [`Connection`] case, built
    /// when first asked for (small files only): a response that goes out
    /// as one buffer needs the kernel's plainest send.
    wholes: [OnceCell<Rc<[u8]>>; 3],
    /// When it was last found unchanged (on [`sys::coarse_now`]'s clock).
    checked: Duration,
}

/// The handler.
pub struct StaticFiles {
    root: PathBuf,
    /// The root, open: per-request lookups start from it.
    root_dir: File,
    /// Whether one confined lookup works here ([`sys::open_beneath`]:
    /// not on an OS or kernel without it, nor where a sandbox refuses
    /// openat2); else the real path is checked first.
    beneath: bool,
    bodies: Bodies,
    opens: Opens,
    /// Looked up once per request: a fast hash, not a DoS-resistant one
    /// (the keys are paths that exist below the root).
    cache: HashMap<String, Entry, foldhash::fast::RandomState>,
}

/// Why a target cannot be served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused(pub u16);

/// Percent-decodes `s`; `None` for a malformed escape.
fn percent_decode(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let h = |c: u8| (c as char).to_digit(16);
            let (hi, lo) = (h(*b.get(i + 1)?)?, h(*b.get(i + 2)?)?);
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Some(out)
}

/// Whether `p` is a relative path that needs no decoding or normalising:
/// not empty, no `%` or NUL, no empty, `.` or `..` segment.
fn is_normal(p: &[u8]) -> bool {
    let mut seg = 0; // the current segment's start
    for (i, &b) in p.iter().enumerate() {
        match b {
            b'%' | 0 => return false,
            b'/' => {
                if matches!(&p[seg..i], b"" | b"." | b"..") {
                    return false;
                }
                seg = i + 1;
            }
            _ => {}
        }
    }
    !matches!(&p[seg..], b"" | b"." | b"..")
}

/// The path below the root that a request target names, normalised to
/// `a/b/c` (empty: the root itself), or the status to refuse it with. A
/// target that is already normal (no escapes, no empty, `.` or `..`
/// segments) is returned as a slice of itself.
pub fn relative_path(target: &str) -> Result<Cow<'_, str>, Refused> {
    let path = target.split(['?', '#']).next().unwrap_or("");
    if !path.starts_with('/') {
        return Err(Refused(400));
    }
    let rest = &path[1..];
    if is_normal(rest.as_bytes()) {
        return Ok(Cow::Borrowed(rest));
    }
    let bytes = percent_decode(path).ok_or(Refused(400))?;
    if bytes.contains(&0) {
        return Err(Refused(400));
    }
    let decoded = String::from_utf8(bytes).map_err(|_| Refused(400))?;
    let mut parts: Vec<&str> = Vec::new();
    for seg in decoded.split('/') {
        match seg {
            "" | "." => {}
            ".." => return Err(Refused(400)),
            s => parts.push(s),
        }
    }
    Ok(Cow::Owned(parts.join("/")))
}

/// A Content-Type by file name extension.
pub fn content_type(path: &Path) -> &'static str {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    match ext.as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "txt" => "text/plain; charset=utf-8",
        "css" => "text/css",
        "js" => "text/javascript",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "ico" => "image/x-icon",
        "pdf" => "application/pdf",
        _ => "application/octet-stream",
    }
}

fn io_status(e: &io::Error) -> u16 {
    match e.raw_os_error() {
        // Out of descriptors: the file exists, the server cannot open it now.
        Some(libc::EMFILE) | Some(libc::ENFILE) => 503,
        _ => match e.kind() {
            io::ErrorKind::PermissionDenied => 403,
            _ => 404,
        },
    }
}

impl StaticFiles {
    /// Serves the files below `root`, sending bodies as `bodies` says
    /// (per request: always from the file) and opening files as `opens`
    /// says.
    pub fn new(root: &Path, bodies: Bodies, opens: Opens) -> io::Result<StaticFiles> {
        let root = std::fs::canonicalize(root)?;
        if !root.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a directory", root.display()),
            ));
        }
        let root_dir = File::open(&root)?;
        let beneath = {
            use std::os::fd::AsRawFd;
            sys::open_beneath(root_dir.as_raw_fd(), c".").is_ok()
        };
        Ok(StaticFiles {
            root,
            root_dir,
            beneath,
            bodies,
            opens,
            cache: HashMap::default(),
        })
    }

    /// The real path of `rel` if it is a regular file below the root (a
    /// directory gives its index.html).
    fn locate(&self, rel: &str) -> Result<PathBuf, Refused> {
        let mut real = self.real_below(rel)?;
        if real.is_dir() {
            real = std::fs::canonicalize(real.join("index.html"))
                .map_err(|e| Refused(io_status(&e)))?;
            if !real.starts_with(&self.root) {
                return Err(Refused(404));
            }
        }
        Ok(real)
    }

    /// The real path of `rel` (links followed), if it lies below the root.
    fn real_below(&self, rel: &str) -> Result<PathBuf, Refused> {
        let real =
            std::fs::canonicalize(self.root.join(rel)).map_err(|e| Refused(io_status(&e)))?;
        if !real.starts_with(&self.root) {
            return Err(Refused(404));
        }
        Ok(real)
    }

    fn open(&self, rel: &str) -> Result<Entry, Refused> {
        let path = self.locate(rel)?;
        let file = open_nofollow(&path)?;
        let meta = file.metadata().map_err(|e| Refused(io_status(&e)))?;
        if !meta.is_file() {
            return Err(Refused(404));
        }
        let mtime = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        let last_modified = httpdate::fmt_http_date(mtime);
        let len = meta.len();
        let body = if self.bodies == Bodies::Auto && len <= SMALL {
            let mut v = vec![0u8; len as usize];
            use std::os::unix::fs::FileExt;
            file.read_exact_at(&mut v, 0)
                .map_err(|e| Refused(io_status(&e)))?;
            Some(Rc::from(v))
        } else {
            None
        };
        let head = format!(
            "HTTP/1.1 200 OK\r\nServer: scalebench\r\nContent-Type: {}\r\nContent-Length: {len}\r\nLast-Modified: {last_modified}\r\n",
            content_type(&path)
        );
        let heads =
            Connection::ALL.map(|c| Rc::from(format!("{head}{}\r\n", c.header()).as_bytes()));
        Ok(Entry {
            path,
            file: Rc::new(file),
            len,
            mtime,
            ino: meta.ino(),
            heads,
            last_modified,
            body,
            wholes: Default::default(),
            checked: sys::coarse_now(),
        })
    }

    /// `rel` opened for this request alone, with its status and type (a
    /// directory gives its index.html): one lookup below the root where
    /// the OS can confine it ([`sys::open_beneath`]), else the real path
    /// checked first, as the cached path does.
    fn open_now(&self, rel: &str) -> Result<(File, std::fs::Metadata, &'static str), Refused> {
        let file = self.open_below(if rel.is_empty() { "." } else { rel })?;
        let meta = file.metadata().map_err(|e| Refused(io_status(&e)))?;
        if meta.is_dir() {
            drop(file);
            let index = if rel.is_empty() {
                "index.html".to_string()
            } else {
                format!("{rel}/index.html")
            };
            let file = self.open_below(&index)?;
            let meta = file.metadata().map_err(|e| Refused(io_status(&e)))?;
            return match meta.is_file() {
                true => Ok((file, meta, content_type(Path::new("index.html")))),
                false => Err(Refused(404)),
            };
        }
        if !meta.is_file() {
            return Err(Refused(404));
        }
        Ok((file, meta, content_type(Path::new(rel))))
    }

    /// `rel` (normal, relative) opened for reading without leaving the
    /// root; a directory opens too.
    fn open_below(&self, rel: &str) -> Result<File, Refused> {
        use std::os::fd::AsRawFd;
        if !self.beneath {
            // The real path below the root, as it is (a directory stays
            // one: the caller finds its index).
            return open_nofollow(&self.real_below(rel)?);
        }
        let c = std::ffi::CString::new(rel).map_err(|_| Refused(400))?;
        match sys::open_beneath(self.root_dir.as_raw_fd(), &c) {
            Ok(f) => Ok(f),
            // Out of the root, or a loop of links: nothing to serve.
            Err(e) if matches!(e.raw_os_error(), Some(libc::EXDEV) | Some(libc::ELOOP)) => {
                Err(Refused(404))
            }
            Err(e) => Err(Refused(io_status(&e))),
        }
    }

    /// Answers a GET or HEAD of `rel` on the per-request path.
    fn respond_opened(&self, rel: &str, req: &Request, head_only: bool, out: &mut Output) {
        let keep = req.keep_alive;
        let (file, meta, ctype) = match self.open_now(rel) {
            Ok(o) => o,
            Err(Refused(s)) => return status_response(s, keep, req.version, out),
        };
        let mtime = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        let last_modified = httpdate::fmt_http_date(mtime);
        if not_modified(req, mtime) {
            return not_modified_response(&last_modified, keep, req.version, out);
        }
        let len = meta.len();
        out.bytes(
            format!(
                "HTTP/1.1 200 OK\r\nServer: scalebench\r\nContent-Type: {ctype}\r\nContent-Length: {len}\r\nLast-Modified: {last_modified}\r\n{}\r\n",
                connection_header(keep, req.version)
            )
            .as_bytes(),
        );
        if !head_only && len > 0 {
            // Closed once the body is sent (or the connection ends).
            out.file(Rc::new(file), 0, len);
        }
    }

    /// The cached entry for `rel`, opened or re-checked as needed.
    fn entry(&mut self, rel: &str) -> Result<&Entry, Refused> {
        let now = sys::coarse_now();
        let fresh = match self.cache.get(rel) {
            Some(e) if now.saturating_sub(e.checked) < RECHECK => true,
            Some(e) => std::fs::symlink_metadata(&e.path).is_ok_and(|m| {
                m.is_file()
                    && m.len() == e.len
                    && m.ino() == e.ino
                    && m.modified().ok() == Some(e.mtime)
            }),
            None => false,
        };
        if fresh {
            let e = self.cache.get_mut(rel).expect("present");
            e.checked = now;
            return Ok(e);
        }
        let entry = self.open(rel)?;
        if self.cache.len() >= CACHE_MAX {
            self.cache.clear();
        }
        self.cache.insert(rel.to_string(), entry);
        Ok(&self.cache[rel])
    }
}

/// `path` opened for reading, not through a final symbolic link, and
/// without waiting (a FIFO must not hold the server; only regular files
/// are served, read unaffected).
fn open_nofollow(path: &Path) -> Result<File, Refused> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| Refused(io_status(&e)))
}

/// Appends a small response with `status` that keeps the connection open
/// when `keep`.
fn status_response(status: u16, keep: bool, version: Version, out: &mut Output) {
    let body = format!("{status} {}\n", http::reason(status));
    let conn = connection_header(keep, version);
    let allow = if status == 405 {
        "Allow: GET, HEAD\r\n"
    } else {
        ""
    };
    out.bytes(
        format!(
            "HTTP/1.1 {status} {}\r\nServer: scalebench\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n{allow}{conn}\r\n{body}",
            http::reason(status),
            body.len()
        )
        .as_bytes(),
    );
}

/// Whether `req` asks only for a file changed after `mtime` (to the
/// second) and this one was not.
fn not_modified(req: &Request, mtime: SystemTime) -> bool {
    let secs = |t: SystemTime| {
        t.duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)
    };
    req.if_modified_since
        .and_then(|d| httpdate::parse_http_date(d).ok())
        .is_some_and(|since| secs(mtime) <= secs(since))
}

/// Appends a 304 for a file last modified at `last_modified` (HTTP date).
fn not_modified_response(last_modified: &str, keep: bool, version: Version, out: &mut Output) {
    out.bytes(
        format!(
            "HTTP/1.1 304 Not Modified\r\nServer: scalebench\r\nLast-Modified: {last_modified}\r\n{}\r\n",
            connection_header(keep, version)
        )
        .as_bytes(),
    );
}

fn connection_header(keep: bool, version: Version) -> &'static str {
    Connection::of(keep, version).header()
}

/// What a response says about the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Connection {
    /// HTTP/1.1 kept alive: nothing to say.
    Keep11,
    /// HTTP/1.0 kept alive: `Connection: keep-alive`.
    Keep10,
    /// Closing: `Connection: close`.
    Close,
}

impl Connection {
    const ALL: [Connection; 3] = [Connection::Keep11, Connection::Keep10, Connection::Close];

    fn of(keep: bool, version: Version) -> Connection {
        match (keep, version) {
            (false, _) => Connection::Close,
            (true, Version::Http10) => Connection::Keep10,
            (true, Version::Http11) => Connection::Keep11,
        }
    }

    fn header(self) -> &'static str {
        match self {
            Connection::Keep11 => "",
            Connection::Keep10 => "Connection: keep-alive\r\n",
            Connection::Close => "Connection: close\r\n",
        }
    }
}

impl Handler for StaticFiles {
    fn respond(&mut self, req: &Request, out: &mut Output) -> bool {
        let keep = req.keep_alive;
        let head_only = match req.method {
            "GET" => false,
            "HEAD" => true,
            _ => {
                status_response(405, keep, req.version, out);
                return keep;
            }
        };
        let rel = match relative_path(req.target) {
            Ok(r) => r,
            Err(Refused(s)) => {
                // A malformed target closes; a missing file does not.
                status_response(s, keep && s != 400, req.version, out);
                return keep && s != 400;
            }
        };
        if self.opens == Opens::PerRequest {
            self.respond_opened(&rel, req, head_only, out);
            return keep;
        }
        let e = match self.entry(&rel) {
            Ok(e) => e,
            Err(Refused(s)) => {
                status_response(s, keep, req.version, out);
                return keep;
            }
        };
        if not_modified(req, e.mtime) {
            not_modified_response(&e.last_modified, keep, req.version, out);
            return keep;
        }
        let conn = Connection::of(keep, req.version) as usize;
        let head = &e.heads[conn];
        match (&e.body, head_only) {
            (_, true) => out.shared(head.clone()),
            (Some(body), false) => out.shared(
                e.wholes[conn]
                    .get_or_init(|| Rc::from([&head[..], &body[..]].concat()))
                    .clone(),
            ),
            (None, false) => {
                out.shared(head.clone());
                out.file(e.file.clone(), 0, e.len);
            }
        }
        keep
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_normalised_or_refused() {
        let ok = |t: &str| relative_path(t).unwrap().into_owned();
        let bad = |t: &str| relative_path(t).unwrap_err().0;
        assert_eq!(ok("/"), "");
        assert_eq!(ok("/a/b.txt"), "a/b.txt");
        assert_eq!(ok("//a/./b/"), "a/b");
        assert_eq!(ok("/a%20b?x=1#f"), "a b");
        assert_eq!(bad("/../etc/passwd"), 400);
        assert_eq!(bad("/a/%2e%2e/%2e%2e/etc"), 400);
        assert_eq!(bad("/a%00b"), 400);
        assert_eq!(bad("/%c0%ae%c0%ae/x"), 400, "overlong UTF-8 is not UTF-8");
        assert_eq!(bad("/a%zz"), 400);
        assert_eq!(bad("a/b"), 400);
        assert_eq!(bad("http://x/y"), 400);
        // Normal targets come back as slices of themselves.
        assert!(matches!(
            relative_path("/a/b.txt?q"),
            Ok(Cow::Borrowed("a/b.txt"))
        ));
        assert!(matches!(relative_path("/a/./b"), Ok(Cow::Owned(_))));
        assert_eq!(bad("/a/.."), 400);
        for normal in ["a", "a/b", "a.b/.c/..d", "..a/b..", "a/b.txt"] {
            assert!(is_normal(normal.as_bytes()), "{normal}");
        }
        for other in [
            "", ".", "..", "a/", "a//b", "a/./b", "a/../b", "./a", "a/.", "a%41", "a\0",
        ] {
            assert!(!is_normal(other.as_bytes()), "{other}");
        }
        assert_eq!(bad("/a\0b"), 400);
    }

    #[test]
    fn content_types_by_extension() {
        assert_eq!(
            content_type(Path::new("a/b.HTML")),
            "text/html; charset=utf-8"
        );
        assert_eq!(content_type(Path::new("x.jpg")), "image/jpeg");
        assert_eq!(content_type(Path::new("noext")), "application/octet-stream");
    }

    /// The response `h` queues for `request`, as the buffers a send
    /// would point at.
    fn answer(h: &mut StaticFiles, request: &[u8]) -> Vec<Vec<u8>> {
        let http::Parse::Complete(req, _) = http::parse(request, &http::Limits::default()) else {
            panic!("not a whole request: {request:?}");
        };
        let mut out = Output::default();
        h.respond(&req, &mut out);
        let mut iov = [libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        }; crate::output::IOV_MAX];
        let n = out.gather(&mut iov);
        iov[..n]
            .iter()
            // SAFETY: gather points at chunks `out` holds until here.
            .map(|v| {
                unsafe { std::slice::from_raw_parts(v.iov_base as *const u8, v.iov_len) }.to_vec()
            })
            .collect()
    }

    #[test]
    fn a_small_file_goes_out_as_one_buffer_of_head_and_body() {
        let dir = tempfile::tempdir().unwrap();
        let body: Vec<u8> = (0..3000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(dir.path().join("f.bin"), &body).unwrap();
        let mut h = StaticFiles::new(dir.path(), Bodies::Auto, Opens::Cached).unwrap();
        for (request, connection) in [
            (&b"GET /f.bin HTTP/1.1\r\n\r\n"[..], None),
            (
                b"GET /f.bin HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
                Some("keep-alive"),
            ),
            (
                b"GET /f.bin HTTP/1.1\r\nConnection: close\r\n\r\n",
                Some("close"),
            ),
        ] {
            let bufs = answer(&mut h, request);
            assert_eq!(bufs.len(), 1, "one buffer");
            let r = &bufs[0];
            let split = r.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
            let head = String::from_utf8_lossy(&r[..split]);
            assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
            assert!(head.contains("Content-Length: 3000\r\n"), "{head}");
            assert_eq!(
                head.contains("Connection: "),
                connection.is_some(),
                "{head}"
            );
            if let Some(c) = connection {
                assert!(head.contains(&format!("Connection: {c}\r\n")), "{head}");
            }
            assert_eq!(&r[split..], &body[..]);
        }
        // HEAD: the same head, no body.
        let get = answer(&mut h, b"GET /f.bin HTTP/1.1\r\n\r\n").concat();
        let head = answer(&mut h, b"HEAD /f.bin HTTP/1.1\r\n\r\n").concat();
        assert_eq!(head, get[..get.len() - body.len()]);
    }

    /// What `h` sends for `request`, through a real loopback connection
    /// (the file part with read/write).
    fn sent(h: &mut StaticFiles, request: &[u8]) -> Vec<u8> {
        use std::io::Read;
        use std::os::fd::AsRawFd;
        let http::Parse::Complete(req, _) = http::parse(request, &http::Limits::default()) else {
            panic!("not a whole request: {request:?}");
        };
        let mut out = Output::default();
        h.respond(&req, &mut out);
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (server, _) = l.accept().unwrap();
        let mut buf = Vec::new();
        let done = out
            .flush(
                server.as_raw_fd(),
                crate::output::FileMode::Readwrite,
                &mut buf,
                true,
            )
            .unwrap();
        assert_eq!(
            done,
            crate::output::Flushed::Done,
            "a small answer goes at once"
        );
        drop(out);
        drop(server);
        let mut got = Vec::new();
        client.read_to_end(&mut got).unwrap();
        got
    }

    fn split(r: &[u8]) -> (String, &[u8]) {
        let at = r.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        (String::from_utf8_lossy(&r[..at]).into_owned(), &r[at..])
    }

    #[test]
    fn per_request_opens_every_time_and_stays_below_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("www");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        let body: Vec<u8> = (0..100_000u32).map(|i| (i % 249) as u8).collect();
        std::fs::write(root.join("a.txt"), &body).unwrap();
        std::fs::write(root.join("small.txt"), b"first").unwrap();
        std::fs::write(root.join("sub/index.html"), b"<p>index</p>").unwrap();
        std::fs::write(dir.path().join("secret"), b"outside").unwrap();
        std::os::unix::fs::symlink("../secret", root.join("out")).unwrap();
        std::os::unix::fs::symlink("a.txt", root.join("in")).unwrap();
        let fifo = std::ffi::CString::new(root.join("fifo").to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let mut h = StaticFiles::new(&root, Bodies::Auto, Opens::PerRequest).unwrap();
        assert_eq!(h.beneath, cfg!(target_os = "linux"), "openat2 here");
        // The confined lookup, and the real path checked first (elsewhere).
        for beneath in [h.beneath, false] {
            h.beneath = beneath;
            per_request_answers(&mut h, &root, &body);
        }
    }

    fn per_request_answers(h: &mut StaticFiles, root: &Path, body: &[u8]) {
        std::fs::write(root.join("small.txt"), b"first").unwrap();
        // A FIFO is not waited on: not a file to serve.
        let (head, _) = split(&sent(h, b"GET /fifo HTTP/1.1\r\n\r\n"));
        assert!(head.starts_with("HTTP/1.1 404 "), "{head}");

        let r = sent(h, b"GET /a.txt HTTP/1.1\r\n\r\n");
        let (head, got) = split(&r);
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
        assert!(head.contains("Content-Length: 100000\r\n"), "{head}");
        assert!(head.contains("Content-Type: text/plain"), "{head}");
        assert_eq!(got, body);
        // A link that stays below the root is followed; one out is not.
        assert_eq!(split(&sent(h, b"GET /in HTTP/1.1\r\n\r\n")).1, body);
        let r = sent(h, b"GET /out HTTP/1.1\r\n\r\n");
        let (head, got) = split(&r);
        assert!(head.starts_with("HTTP/1.1 404 "), "{head}");
        assert!(!String::from_utf8_lossy(got).contains("outside"));
        let (head, _) = split(&sent(h, b"GET /missing HTTP/1.1\r\n\r\n"));
        assert!(head.starts_with("HTTP/1.1 404 "), "{head}");
        // A directory gives its index.
        let r = sent(h, b"GET /sub/ HTTP/1.1\r\n\r\n");
        let (head, got) = split(&r);
        assert!(head.contains("Content-Type: text/html"), "{head}");
        assert_eq!(got, b"<p>index</p>");
        // HEAD: the head alone, no file queued.
        let http::Parse::Complete(req, _) =
            http::parse(b"HEAD /a.txt HTTP/1.1\r\n\r\n", &http::Limits::default())
        else {
            panic!("HEAD not parsed");
        };
        let mut out = Output::default();
        h.respond(&req, &mut out);
        assert!(!out.has_file());
        assert!(out.text_for_tests().contains("Content-Length: 100000\r\n"));
        // Changed between two requests within a second: the next one sees
        // it (the cached path would still answer from memory).
        assert_eq!(
            split(&sent(h, b"GET /small.txt HTTP/1.1\r\n\r\n")).1,
            b"first"
        );
        std::fs::write(root.join("small.txt"), b"again").unwrap();
        assert_eq!(
            split(&sent(h, b"GET /small.txt HTTP/1.1\r\n\r\n")).1,
            b"again"
        );
    }
}
