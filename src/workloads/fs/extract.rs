//! The extractor: reads a tar stream and makes its directories and regular
//! files with plain `mkdir`, `open`, `write` and `close` calls, so that
//! unpacking measures the kernel and the filesystem, not a tar program.
//!
//! It reads ustar and GNU archives (GNU long names, pax `path` records) and
//! refuses, naming the entry, everything that could write outside the
//! target: absolute paths, `..` components, symbolic and hard links, device
//! and FIFO entries. Files are opened with `O_NOFOLLOW`, and a directory
//! that already exists is checked to be a real directory, so a symbolic
//! link planted in the target cannot redirect a write either.

use crate::net::load::ItemCounters;
use std::collections::HashSet;
use std::ffi::CString;
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

/// Why extraction stopped.
#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    /// An entry would reach outside the target, or is a link.
    #[error("refused archive entry `{entry}`: {why}")]
    Refused {
        /// The entry's path as the archive names it.
        entry: String,
        /// Why.
        why: &'static str,
    },
    /// The archive is not a tar archive, or is cut short.
    #[error("not a valid tar archive: {0}")]
    Corrupt(String),
    /// A system call failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: String,
        /// The error.
        source: io::Error,
    },
    /// Reading the archive failed.
    #[error("reading the archive: {0}")]
    Read(#[from] io::Error),
    /// ^C.
    #[error("interrupted")]
    Interrupted,
}

/// What was made.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Extracted {
    /// Regular files written.
    pub files: u64,
    /// Directories made (or found existing).
    pub dirs: u64,
    /// File bytes written.
    pub bytes: u64,
}

/// Checks an archive path and turns it into a relative path: no root, no
/// `..`, no NUL; `.` components dropped. `None` for an empty path.
pub fn safe_relative(name: &str) -> Result<Option<PathBuf>, &'static str> {
    if name.contains('\0') {
        return Err("the path contains a NUL byte");
    }
    if name.len() > 4096 || name.split('/').count() > 256 {
        return Err("the path is longer than 4 096 bytes or 256 components");
    }
    let mut out = PathBuf::new();
    for c in Path::new(name).components() {
        match c {
            Component::Normal(p) => out.push(p),
            Component::CurDir => {}
            Component::ParentDir => return Err("the path contains `..`"),
            Component::RootDir | Component::Prefix(_) => return Err("the path is absolute"),
        }
    }
    Ok((!out.as_os_str().is_empty()).then_some(out))
}

/// Parses an octal (or GNU base-256) number field.
fn number(field: &[u8]) -> Result<u64, ExtractError> {
    if field.first().is_some_and(|b| b & 0x80 != 0) {
        let mut v: u64 = u64::from(field[0] & 0x7f);
        for &b in &field[1..] {
            v = v
                .checked_mul(256)
                .and_then(|v| v.checked_add(u64::from(b)))
                .ok_or_else(|| ExtractError::Corrupt("a number field overflows".into()))?;
        }
        return Ok(v);
    }
    let s: Vec<u8> = field
        .iter()
        .copied()
        .take_while(|&b| b != 0)
        .filter(|&b| b != b' ')
        .collect();
    if s.is_empty() {
        return Ok(0);
    }
    let s = std::str::from_utf8(&s).map_err(|_| ExtractError::Corrupt("bad number".into()))?;
    u64::from_str_radix(s, 8).map_err(|_| ExtractError::Corrupt(format!("bad octal number `{s}`")))
}

fn cstr(field: &[u8]) -> String {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    String::from_utf8_lossy(&field[..end]).into_owned()
}

/// Reads exactly `buf.len()` bytes; `Ok(false)` at a clean end of stream
/// before the first byte.
fn read_block(r: &mut impl Read, buf: &mut [u8]) -> Result<bool, ExtractError> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => return Err(ExtractError::Corrupt("the archive is cut short".into())),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(true)
}

fn c_path(p: &Path) -> Result<CString, ExtractError> {
    super::ops::c_path(p).map_err(|source| ExtractError::Io {
        path: p.display().to_string(),
        source,
    })
}

fn io_err(p: &Path) -> ExtractError {
    ExtractError::Io {
        path: p.display().to_string(),
        source: io::Error::last_os_error(),
    }
}

/// The directory maker: remembers what it made or checked.
struct Dirs {
    known: HashSet<PathBuf>,
}

impl Dirs {
    /// Makes `rel` (and its parents) below `root`.
    fn make(&mut self, root: &Path, rel: &Path) -> Result<(), ExtractError> {
        if rel.as_os_str().is_empty() || self.known.contains(rel) {
            return Ok(());
        }
        if let Some(parent) = rel.parent() {
            self.make(root, parent)?;
        }
        let full = root.join(rel);
        let c = c_path(&full)?;
        // SAFETY: mkdir with a NUL-terminated path.
        if unsafe { libc::mkdir(c.as_ptr(), 0o755) } != 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EEXIST) {
                return Err(ExtractError::Io {
                    path: full.display().to_string(),
                    source: e,
                });
            }
            // It exists: it must be a directory, not a link to elsewhere.
            // SAFETY: lstat fills a plain struct.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            if unsafe { libc::lstat(c.as_ptr(), &mut st) } != 0 {
                return Err(io_err(&full));
            }
            if st.st_mode & libc::S_IFMT != libc::S_IFDIR {
                return Err(ExtractError::Refused {
                    entry: rel.display().to_string(),
                    why: "it exists in the target and is not a directory (a link?)",
                });
            }
        }
        self.known.insert(rel.to_path_buf());
        Ok(())
    }
}

/// Writes `size` bytes from `r` to a new file at `full`.
fn write_file(
    r: &mut impl Read,
    full: &Path,
    size: u64,
    buf: &mut [u8],
    counters: &ItemCounters,
) -> Result<(), ExtractError> {
    let c = c_path(full)?;
    // SAFETY: open with a NUL-terminated path; the descriptor is closed below.
    // Not truncated at open: what is there must first prove to be a plain
    // file of its own (not a FIFO, not a hard link to a file elsewhere).
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC,
            0o644 as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(io_err(full));
    }
    // SAFETY: fstat fills a plain struct for our descriptor.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let plain = unsafe { libc::fstat(fd, &mut st) } == 0
        && st.st_mode & libc::S_IFMT == libc::S_IFREG
        && st.st_nlink == 1;
    // SAFETY: truncating our own descriptor.
    if !plain || unsafe { libc::ftruncate(fd, 0) } != 0 {
        // SAFETY: closing the descriptor opened above.
        unsafe { libc::close(fd) };
        if !plain {
            return Err(ExtractError::Refused {
                entry: full.display().to_string(),
                why: "it exists in the target and is not a plain file of its own (a FIFO, a device, a hard link?)",
            });
        }
        return Err(io_err(full));
    }
    let mut left = size;
    let mut result = Ok(());
    while left > 0 {
        let n = (buf.len() as u64).min(left) as usize;
        if let Err(e) = read_exact(r, &mut buf[..n]) {
            result = Err(e);
            break;
        }
        let mut off = 0;
        while off < n {
            // SAFETY: writing from our buffer to our descriptor.
            let w = unsafe { libc::write(fd, buf[off..n].as_ptr().cast(), n - off) };
            if w < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                result = Err(ExtractError::Io {
                    path: full.display().to_string(),
                    source: e,
                });
                break;
            }
            off += w as usize;
        }
        if result.is_err() {
            break;
        }
        counters.add_bytes(n as u64);
        left -= n as u64;
    }
    // SAFETY: closing the descriptor opened above.
    if unsafe { libc::close(fd) } != 0 && result.is_ok() {
        result = Err(io_err(full));
    }
    result
}

fn read_exact(r: &mut impl Read, buf: &mut [u8]) -> Result<(), ExtractError> {
    if buf.is_empty() {
        return Ok(());
    }
    if read_block(r, buf)? {
        Ok(())
    } else {
        Err(ExtractError::Corrupt("the archive is cut short".into()))
    }
}

/// Skips `n` bytes of the stream.
fn skip(r: &mut impl Read, mut n: u64, buf: &mut [u8]) -> Result<(), ExtractError> {
    while n > 0 {
        let k = (buf.len() as u64).min(n) as usize;
        read_exact(r, &mut buf[..k])?;
        n -= k as u64;
    }
    Ok(())
}

/// Reads a small entry body (long name, pax record) whole.
/// `size` rounded up to whole 512-byte blocks.
fn padded(size: u64) -> Result<u64, ExtractError> {
    size.div_ceil(512)
        .checked_mul(512)
        .ok_or_else(|| ExtractError::Corrupt("an entry size overflows".into()))
}

fn read_body(r: &mut impl Read, size: u64) -> Result<Vec<u8>, ExtractError> {
    if size > 1 << 20 {
        return Err(ExtractError::Corrupt("a metadata entry over 1 MiB".into()));
    }
    let padded = size.div_ceil(512) * 512;
    let mut v = vec![0u8; padded as usize];
    read_exact(r, &mut v)?;
    v.truncate(size as usize);
    Ok(v)
}

/// The `path` of a pax extended header, if it has one.
fn pax_path(body: &[u8]) -> Option<String> {
    let mut rest = body;
    while !rest.is_empty() {
        let sp = rest.iter().position(|&b| b == b' ')?;
        let len: usize = std::str::from_utf8(&rest[..sp]).ok()?.parse().ok()?;
        if len <= sp || len > rest.len() {
            return None;
        }
        let rec = &rest[sp + 1..len];
        let rec = rec.strip_suffix(b"\n").unwrap_or(rec);
        if let Some(v) = rec.strip_prefix(b"path=") {
            return Some(String::from_utf8_lossy(v).into_owned());
        }
        rest = &rest[len..];
    }
    None
}

/// Unpacks the tar stream `r` below `root` (which must exist), advancing
/// `counters` by one item per regular file and by the bytes written.
/// Stops between files on ^C.
pub fn extract(
    mut r: impl Read,
    root: &Path,
    counters: &ItemCounters,
) -> Result<Extracted, ExtractError> {
    let mut x = Extractor {
        root,
        counters,
        out: Extracted::default(),
        dirs: Dirs {
            known: HashSet::new(),
        },
        buf: vec![0u8; 64 * 1024],
    };
    let mut header = [0u8; 512];
    let mut long_name: Option<String> = None;
    let mut zero_blocks = 0;
    loop {
        if !read_block(&mut r, &mut header)? {
            return x.ended(zero_blocks);
        }
        if header.iter().all(|&b| b == 0) {
            zero_blocks += 1;
            if zero_blocks == 2 {
                return Ok(x.out);
            }
            continue;
        }
        zero_blocks = 0;
        if crate::stop::interrupted() {
            return Err(ExtractError::Interrupted);
        }
        check_sum(&header)?;
        let size = number(&header[124..136])?;
        let kind = header[156];
        let mut name = header_name(&header);
        match kind {
            b'L' => {
                let body = read_body(&mut r, size)?;
                long_name = Some(cstr(&body));
                continue;
            }
            b'x' => {
                let body = read_body(&mut r, size)?;
                if let Some(p) = pax_path(&body) {
                    long_name = Some(p);
                }
                continue;
            }
            b'g' => {
                read_body(&mut r, size)?;
                continue;
            }
            _ => {}
        }
        if let Some(l) = long_name.take() {
            name = l;
        }
        x.entry(&mut r, kind, name, size)?;
    }
}

/// Whether the header's checksum matches: its bytes summed with the
/// checksum field as spaces.
fn check_sum(header: &[u8; 512]) -> Result<(), ExtractError> {
    let want = number(&header[148..156])?;
    let sum: u64 = header
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            if (148..156).contains(&i) {
                32
            } else {
                u64::from(b)
            }
        })
        .sum();
    if sum != want {
        return Err(ExtractError::Corrupt(
            "a header checksum does not match".into(),
        ));
    }
    Ok(())
}

/// The entry's name in the header: with the ustar prefix, if any.
fn header_name(header: &[u8; 512]) -> String {
    let mut name = cstr(&header[0..100]);
    if &header[257..263] == b"ustar\0" {
        let prefix = cstr(&header[345..500]);
        if !prefix.is_empty() {
            name = format!("{prefix}/{name}");
        }
    }
    name
}

/// An extraction under way: where it writes, what it counts, what it has
/// made, and its directories and write buffer.
struct Extractor<'a> {
    root: &'a Path,
    counters: &'a ItemCounters,
    out: Extracted,
    dirs: Dirs,
    buf: Vec<u8>,
}

impl Extractor<'_> {
    /// What was made, when the stream ends after `zero_blocks` end-of-archive
    /// blocks: accepted after at least one, as GNU tar does; without any,
    /// the archive was cut (or empty).
    fn ended(self, zero_blocks: u32) -> Result<Extracted, ExtractError> {
        if zero_blocks > 0 {
            return Ok(self.out);
        }
        if self.out.files + self.out.dirs > 0 {
            return Err(ExtractError::Corrupt(
                "the archive is cut short (no end-of-archive blocks)".into(),
            ));
        }
        Err(ExtractError::Corrupt("empty archive".into()))
    }

    /// The entry `name` of `kind` and `size` bytes, its body next in `r`:
    /// a regular file written, a directory made, anything else refused.
    fn entry(
        &mut self,
        r: &mut impl Read,
        kind: u8,
        name: String,
        size: u64,
    ) -> Result<(), ExtractError> {
        let rel = match safe_relative(&name) {
            Ok(p) => p,
            Err(why) => return Err(ExtractError::Refused { entry: name, why }),
        };
        match kind {
            b'0' | b'\0' | b'7' => {
                let Some(rel) = rel else {
                    return Err(ExtractError::Refused {
                        entry: name,
                        why: "a file without a name",
                    });
                };
                if let Some(parent) = rel.parent() {
                    self.dirs.make(self.root, parent)?;
                }
                write_file(r, &self.root.join(&rel), size, &mut self.buf, self.counters)?;
                skip(r, padded(size)? - size, &mut self.buf)?;
                self.counters.add(1, 0);
                self.out.files += 1;
                self.out.bytes += size;
            }
            b'5' => {
                if let Some(rel) = rel {
                    self.dirs.make(self.root, &rel)?;
                }
                self.out.dirs += 1;
                skip(r, padded(size)?, &mut self.buf)?;
            }
            b'1' | b'2' => {
                return Err(ExtractError::Refused {
                    entry: name,
                    why: "links are not extracted (a link could lead outside the target)",
                });
            }
            _ => {
                return Err(ExtractError::Refused {
                    entry: name,
                    why: "only regular files and directories are extracted",
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::fs::corpus::{Archive, Corpus, Spec};
    use std::io::Write;

    fn tar_of(entries: &[(&str, tar::EntryType, &[u8])]) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        for (path, kind, data) in entries {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(*kind);
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            // Bypass the builder's own path checks: write the name raw.
            let bytes = path.as_bytes();
            h.as_old_mut().name[..bytes.len()].copy_from_slice(bytes);
            if *kind == tar::EntryType::Symlink {
                h.set_link_name("/etc").unwrap();
            }
            h.set_cksum();
            b.append(&h, *data).unwrap();
        }
        b.into_inner().unwrap()
    }

    /// Every file below `dir`, with its bytes.
    fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    let rel = p.strip_prefix(dir).unwrap().to_path_buf();
                    out.push((rel, std::fs::read(&p).unwrap()));
                }
            }
        }
        out.sort();
        out
    }

    #[test]
    fn round_trips_against_the_tar_crate() {
        let c = Corpus::new(Spec {
            seed: 3,
            files: 300,
            bytes: 3_000_000,
            requests: 500,
        });
        for which in [Archive::Site, Archive::Requests] {
            let mut gz = Vec::new();
            c.write_archive(which, &mut gz).unwrap();
            let mine = tempfile::tempdir().unwrap();
            let counters = ItemCounters::default();
            let got = extract(
                flate2::read::GzDecoder::new(&gz[..]),
                mine.path(),
                &counters,
            )
            .unwrap();
            let theirs = tempfile::tempdir().unwrap();
            tar::Archive::new(flate2::read::GzDecoder::new(&gz[..]))
                .unpack(theirs.path())
                .unwrap();
            let a = tree(mine.path());
            assert_eq!(a, tree(theirs.path()));
            assert_eq!(got.files, a.len() as u64);
            assert_eq!(got.files, c.archive_files(which).len() as u64);
            assert_eq!(got.bytes, c.archive_bytes(which));
            assert_eq!(counters.get(), (got.files, got.bytes));
        }
    }

    #[test]
    fn long_names_and_pax_paths() {
        let long = format!("{}/f.txt", "d".repeat(150));
        let mut b = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_size(3);
        h.set_mode(0o644);
        b.append_data(&mut h, &long, &b"abc"[..]).unwrap();
        let data = b.into_inner().unwrap();
        let t = tempfile::tempdir().unwrap();
        let got = extract(&data[..], t.path(), &ItemCounters::default()).unwrap();
        assert_eq!(got.files, 1);
        assert_eq!(std::fs::read(t.path().join(&long)).unwrap(), b"abc");
        assert_eq!(pax_path(b"16 path=a/b/c.x\n"), Some("a/b/c.x".into()));
        assert_eq!(pax_path(b"12 uid=1000\n"), None);
    }

    #[test]
    fn nothing_is_written_outside_the_target() {
        let base = tempfile::tempdir().unwrap();
        let target = base.path().join("target");
        std::fs::create_dir(&target).unwrap();
        let outside = base.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        // A link planted in the target pointing outside.
        std::os::unix::fs::symlink(&outside, target.join("planted")).unwrap();
        let escape = format!("{}/x", outside.display());
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (
                tar_of(&[("../outside/x", tar::EntryType::Regular, b"bad")]),
                "..",
            ),
            (
                tar_of(&[("a/../../outside/x", tar::EntryType::Regular, b"bad")]),
                "..",
            ),
            (
                tar_of(&[(&escape, tar::EntryType::Regular, b"bad")]),
                "absolute",
            ),
            (tar_of(&[("link", tar::EntryType::Symlink, b"")]), "link"),
            (tar_of(&[("hard", tar::EntryType::Link, b"")]), "link"),
            (
                tar_of(&[("planted/x", tar::EntryType::Regular, b"bad")]),
                "not a directory",
            ),
            (
                tar_of(&[("planted", tar::EntryType::Regular, b"bad")]),
                "planted",
            ),
            (
                tar_of(&[("fifo", tar::EntryType::Fifo, b"")]),
                "only regular",
            ),
        ];
        for (data, why) in cases {
            let err = extract(&data[..], &target, &ItemCounters::default())
                .expect_err(why)
                .to_string();
            assert!(err.contains(why), "{err} (wanted {why})");
            assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0, "{err}");
        }
        // A hard link planted in the target to a file outside: refused
        // before anything is truncated.
        let victim = outside.join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        std::fs::hard_link(&victim, target.join("hl")).unwrap();
        let data = tar_of(&[("hl", tar::EntryType::Regular, b"bad")]);
        let err = extract(&data[..], &target, &ItemCounters::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("hard link"), "{err}");
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        // The planted link itself is untouched.
        assert!(
            std::fs::symlink_metadata(target.join("planted"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }

    #[test]
    fn corrupt_and_truncated_archives_are_named() {
        let good = tar_of(&[("a.txt", tar::EntryType::Regular, &[7u8; 2000])]);
        let t = tempfile::tempdir().unwrap();
        let err = extract(&good[..1000], t.path(), &ItemCounters::default()).unwrap_err();
        assert!(err.to_string().contains("cut short"), "{err}");
        let mut bad = good.clone();
        bad[10] ^= 1;
        let err = extract(&bad[..], t.path(), &ItemCounters::default()).unwrap_err();
        assert!(err.to_string().contains("checksum"), "{err}");
        let err = extract(&b""[..], t.path(), &ItemCounters::default()).unwrap_err();
        assert!(err.to_string().contains("empty"), "{err}");
        let mut w = Vec::new();
        w.write_all(&[1u8; 512]).unwrap();
        assert!(extract(&w[..], t.path(), &ItemCounters::default()).is_err());
    }

    #[test]
    fn safe_relative_paths() {
        assert_eq!(
            safe_relative("./a/./b").unwrap(),
            Some(PathBuf::from("a/b"))
        );
        assert_eq!(safe_relative("a/b/").unwrap(), Some(PathBuf::from("a/b")));
        assert_eq!(safe_relative("./").unwrap(), None);
        assert!(safe_relative("/etc/passwd").is_err());
        assert!(safe_relative("a/../b").is_err());
        assert!(safe_relative("a\0b").is_err());
    }
}
