//! Writes a cpio archive in the "new ASCII" (`newc`) format, the one the
//! Linux kernel unpacks as its initial RAM disk: a 110-byte header of hex
//! fields, the NUL-terminated name, padding to four bytes, the data,
//! padding to four bytes again; a `TRAILER!!!` entry ends it.

use std::io::{self, Read, Write};
use std::path::Path;

/// What a RAM disk begins with: a cpio archive (`newc` or `crc`, as the
/// kernel unpacks; an early one, such as CPU microcode, may come before
/// the main one), or one compressed by a method the kernel can build in.
const RAM_DISKS: [(&[u8], &str); 9] = [
    (b"070701", "a cpio archive"),
    (b"070702", "a cpio archive (with checksums)"),
    (b"\x1f\x8b", "gzip"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"\x02\x21\x4c\x18", "lz4"),
    (b"BZh", "bzip2"),
    (b"\x5d\x00\x00", "lzma"),
    (b"\x89LZO\x00", "lzo"),
];

/// What kind of RAM disk `head` (a file's first bytes) begins, or why it
/// is none: empty, an old-format (`odc`) cpio archive the kernel does not
/// unpack, or anything else (its first bytes shown).
pub fn ram_disk_kind(head: &[u8]) -> Result<&'static str, String> {
    if let Some((_, what)) = RAM_DISKS.iter().find(|(m, _)| head.starts_with(m)) {
        return Ok(what);
    }
    if head.is_empty() {
        return Err("empty: not a RAM disk".into());
    }
    if head.starts_with(b"070707") {
        return Err(
            "an old-format (odc) cpio archive: the kernel unpacks newc only (cpio -H newc)".into(),
        );
    }
    let shown: Vec<String> = head.iter().take(8).map(|b| format!("{b:02x}")).collect();
    Err(format!(
        "not a RAM disk: it begins with {} (a RAM disk is a newc cpio archive, 070701, maybe compressed: gzip, xz, zstd, lz4, bzip2, lzma, lzo)",
        shown.join(" ")
    ))
}

/// Checks that `path` is a RAM disk the kernel can unpack (by its first
/// bytes, [`ram_disk_kind`]): its kind, or why not (naming `initrd=` and
/// the file).
pub fn check_ram_disk(path: &Path) -> Result<&'static str, String> {
    let at = |e: String| format!("initrd={}: {e}", path.display());
    if path.is_dir() {
        return Err(at("a directory, not a RAM disk".into()));
    }
    let mut head = Vec::with_capacity(8);
    std::fs::File::open(path)
        .and_then(|f| f.take(8).read_to_end(&mut head))
        .map_err(|e| at(e.to_string()))?;
    ram_disk_kind(&head).map_err(at)
}

/// File type bits of a mode.
const DIR: u32 = 0o040000;
const FILE: u32 = 0o100000;
const SYMLINK: u32 = 0o120000;
const CHAR: u32 = 0o020000;

/// A newc archive being written to `W`.
pub struct Archive<W: Write> {
    out: W,
    written: u64,
    next_ino: u32,
}

impl<W: Write> Archive<W> {
    /// Starts an archive.
    pub fn new(out: W) -> Archive<W> {
        Archive {
            out,
            written: 0,
            next_ino: 1,
        }
    }

    /// A directory (`name` without a leading `/`, like every name here).
    pub fn dir(&mut self, name: &str, perm: u32) -> io::Result<()> {
        self.entry(name, DIR | (perm & 0o7777), 2, (0, 0), &[])
    }

    /// A regular file holding `data`.
    pub fn file(&mut self, name: &str, perm: u32, data: &[u8]) -> io::Result<()> {
        self.entry(name, FILE | (perm & 0o7777), 1, (0, 0), data)
    }

    /// A symbolic link to `target`.
    pub fn symlink(&mut self, name: &str, target: &str) -> io::Result<()> {
        self.entry(name, SYMLINK | 0o777, 1, (0, 0), target.as_bytes())
    }

    /// A character device (`dev/console` is 5:1).
    pub fn char_dev(&mut self, name: &str, perm: u32, major: u32, minor: u32) -> io::Result<()> {
        self.entry(name, CHAR | (perm & 0o7777), 1, (major, minor), &[])
    }

    /// Ends the archive; returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.header("TRAILER!!!", 0, 0, 1, (0, 0), 0)?;
        self.out.flush()?;
        Ok(self.out)
    }

    fn entry(
        &mut self,
        name: &str,
        mode: u32,
        nlink: u32,
        rdev: (u32, u32),
        data: &[u8],
    ) -> io::Result<()> {
        if name.is_empty() || name.starts_with('/') || name.contains('\0') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("cpio: `{name}` is not a relative name"),
            ));
        }
        let size = u32::try_from(data.len()).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("cpio: {name} is over 4 GiB"),
            )
        })?;
        let ino = self.next_ino;
        self.next_ino += 1;
        self.header(name, ino, mode, nlink, rdev, size)?;
        self.put(data)?;
        self.pad()
    }

    fn header(
        &mut self,
        name: &str,
        ino: u32,
        mode: u32,
        nlink: u32,
        rdev: (u32, u32),
        size: u32,
    ) -> io::Result<()> {
        let fields = [
            ino,
            mode,
            0, // uid
            0, // gid
            nlink,
            0, // mtime: the same archive for the same files
            size,
            0, // devmajor
            0, // devminor
            rdev.0,
            rdev.1,
            name.len() as u32 + 1,
            0, // check
        ];
        let mut h = String::with_capacity(110);
        h.push_str("070701");
        for f in fields {
            h.push_str(&format!("{f:08x}"));
        }
        self.put(h.as_bytes())?;
        self.put(name.as_bytes())?;
        self.put(&[0])?;
        self.pad()
    }

    fn put(&mut self, b: &[u8]) -> io::Result<()> {
        self.out.write_all(b)?;
        self.written += b.len() as u64;
        Ok(())
    }

    /// Zeros up to the next multiple of four bytes.
    fn pad(&mut self) -> io::Result<()> {
        let n = (4 - (self.written % 4) as usize) % 4;
        self.put(&[0u8; 3][..n])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One entry read back: name, mode, rdev, data.
    type Entry = (String, u32, (u32, u32), Vec<u8>);

    /// Reads a newc archive the way the kernel does.
    fn read(mut b: &[u8]) -> Vec<Entry> {
        let mut out = Vec::new();
        let total = b.len();
        loop {
            assert_eq!((total - b.len()) % 4, 0, "a header starts aligned");
            assert_eq!(&b[..6], b"070701");
            let field = |i: usize| {
                u32::from_str_radix(std::str::from_utf8(&b[6 + i * 8..14 + i * 8]).unwrap(), 16)
                    .unwrap()
            };
            let (mode, size, namesize) = (field(1), field(6) as usize, field(11) as usize);
            let rdev = (field(9), field(10));
            let name = std::str::from_utf8(&b[110..110 + namesize - 1])
                .unwrap()
                .to_string();
            assert_eq!(b[110 + namesize - 1], 0);
            let data_at = (110 + namesize).div_ceil(4) * 4;
            let data = b[data_at..data_at + size].to_vec();
            let next = (data_at + size).div_ceil(4) * 4;
            assert!(b[110 + namesize..data_at].iter().all(|&z| z == 0));
            b = &b[next.min(b.len())..];
            if name == "TRAILER!!!" {
                assert!(b.is_empty());
                return out;
            }
            out.push((name, mode, rdev, data));
        }
    }

    #[test]
    fn entries_read_back_as_written_with_every_field_aligned() {
        let mut a = Archive::new(Vec::new());
        a.dir("dev", 0o755).unwrap();
        a.char_dev("dev/console", 0o600, 5, 1).unwrap();
        a.file("init", 0o755, b"\x7fELF and more").unwrap();
        a.symlink("bin", "usr/bin").unwrap();
        a.file("a/b/odd-sized name", 0o644, &[7u8; 5]).unwrap();
        a.file("empty", 0o644, &[]).unwrap();
        let bytes = a.finish().unwrap();
        assert_eq!(bytes.len() % 4, 0);
        let e = read(&bytes);
        let names: Vec<&str> = e.iter().map(|x| x.0.as_str()).collect();
        assert_eq!(
            names,
            [
                "dev",
                "dev/console",
                "init",
                "bin",
                "a/b/odd-sized name",
                "empty"
            ]
        );
        assert_eq!(e[0].1, 0o040755);
        assert_eq!((e[1].1, e[1].2), (0o020600, (5, 1)));
        assert_eq!(
            (e[2].1, e[2].3.as_slice()),
            (0o100755, &b"\x7fELF and more"[..])
        );
        assert_eq!((e[3].1, e[3].3.as_slice()), (0o120777, &b"usr/bin"[..]));
        assert_eq!(e[4].3, [7u8; 5]);
        assert!(e[5].3.is_empty());
    }

    #[test]
    fn absolute_or_empty_names_are_refused() {
        let mut a = Archive::new(Vec::new());
        assert!(a.file("/init", 0o755, b"x").is_err());
        assert!(a.dir("", 0o755).is_err());
    }

    #[test]
    fn ram_disks_are_known_by_their_first_bytes() {
        let mut newc = Vec::new();
        let mut a = Archive::new(&mut newc);
        a.dir("x", 0o755).unwrap();
        a.finish().unwrap();
        assert_eq!(ram_disk_kind(&newc), Ok("a cpio archive"));
        for (head, what) in [
            (&b"\x1f\x8b\x08\x00"[..], "gzip"),
            (b"\x28\xb5\x2f\xfd\x04", "zstd"),
            (b"\xfd7zXZ\x00\x00", "xz"),
            (b"\x02\x21\x4c\x18", "lz4"),
            (b"BZh91AY", "bzip2"),
            (b"\x5d\x00\x00\x80", "lzma"),
        ] {
            assert_eq!(ram_disk_kind(head), Ok(what));
        }
        assert!(ram_disk_kind(b"").unwrap_err().contains("empty"));
        assert!(
            ram_disk_kind(b"070707abc")
                .unwrap_err()
                .contains("newc only")
        );
        let e = ram_disk_kind(b"\xff\xd8\xff\xe0\x00\x10JFIF").unwrap_err();
        assert!(e.contains("begins with ff d8 ff e0 00 10 4a 46"), "{e}");
        let e = ram_disk_kind(b"hello, world\n").unwrap_err();
        assert!(e.contains("not a RAM disk"), "{e}");
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("notes.txt");
        std::fs::write(&p, "notes").unwrap();
        let e = check_ram_disk(&p).unwrap_err();
        assert!(
            e.starts_with(&format!("initrd={}: not a RAM disk", p.display())),
            "{e}"
        );
        assert!(
            check_ram_disk(&t.path().join("none"))
                .unwrap_err()
                .contains("No such file")
        );
        assert!(
            check_ram_disk(t.path())
                .unwrap_err()
                .contains("a directory")
        );
    }
}
