//! The rules every file scalebench writes for the user follows, so that no
//! output destroys anything:
//!
//! - the directory an output goes into must exist (scalebench creates no
//!   directory the user names; only `results/` for `run`'s default names);
//! - nothing that is not a regular file is ever replaced: not a directory,
//!   device, FIFO or socket, and not a symbolic link (a link is neither
//!   written through nor replaced);
//! - a directory outputs go into (`dashboard -o`, `report --svg-dir`) is a
//!   directory itself, not a link to one nor a file ([`check_dir`]);
//! - no output may be an input of the same command, nor another output of
//!   it;
//! - an existing regular file is replaced only with `--force` ([`Existing`];
//!   atomically: a failed write leaves it as it was), by every command;
//! - a file a command makes inside a directory it was given (`report
//!   --svg-dir`, `serve --object`) is named by one plain path component, so
//!   it lands in that directory and nowhere else ([`in_dir`]).

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// What an output may do with a regular file already at its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Refuse: the path must be new (`run` without `--force`).
    Refuse,
    /// Replace it (atomically).
    Replace,
}

impl Existing {
    /// What `--force` (given or not) allows.
    pub fn forced(force: bool) -> Existing {
        if force {
            Existing::Replace
        } else {
            Existing::Refuse
        }
    }
}

/// Why an output path was refused.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The directory the output would go into does not exist.
    #[error("{what} {path}: the directory {dir} does not exist (scalebench does not create it)")]
    NoDirectory {
        /// The option or role (`--out`, `the HTML report`).
        what: String,
        /// The output path.
        path: PathBuf,
        /// Its directory.
        dir: PathBuf,
    },
    /// Something other than a directory is where a directory belongs.
    #[error(
        "{what} {path}: {kind}, not a directory; scalebench neither writes through a link nor replaces a file with a directory"
    )]
    NotDirectory {
        /// The option or role.
        what: String,
        /// The path.
        path: PathBuf,
        /// What is there, in words.
        kind: &'static str,
    },
    /// Something other than a regular file is at the path.
    #[error("{what} {path}: {kind}; scalebench only ever replaces regular files")]
    NotRegular {
        /// The option or role.
        what: String,
        /// The output path.
        path: PathBuf,
        /// What is there, in words.
        kind: &'static str,
    },
    /// The output is an input of the same command.
    #[error("{what} {path} is also {other}: it would be overwritten; choose another name")]
    Collides {
        /// The option or role.
        what: String,
        /// The output path.
        path: PathBuf,
        /// What else it is (`the input file`, `the result file`).
        other: String,
    },
    /// A regular file exists and the command does not replace files.
    #[error("{what} {path} exists; use --force to replace it, or choose another name")]
    Exists {
        /// The option or role.
        what: String,
        /// The output path.
        path: PathBuf,
    },
    /// A file name that would not stay in the directory it was given.
    #[error(
        "{what} `{name}`: not a plain file name (one name, no `/`, not `.` or `..`): it must stay in {dir}"
    )]
    BadName {
        /// The option or role.
        what: String,
        /// The name given.
        name: String,
        /// The directory the file must stay in.
        dir: PathBuf,
    },
    /// The path could not be examined.
    #[error("{what} {path}: {source}")]
    Io {
        /// The option or role.
        what: String,
        /// The output path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// What sits at a path, in words, when it is not a regular file
/// (`is a FIFO`); `None` for a regular file.
pub fn not_regular(m: &std::fs::Metadata) -> Option<&'static str> {
    let t = m.file_type();
    if t.is_file() {
        None
    } else if t.is_symlink() {
        Some("is a symbolic link")
    } else if t.is_dir() {
        Some("is a directory")
    } else if t.is_block_device() || t.is_char_device() {
        Some("is a device")
    } else if t.is_fifo() {
        Some("is a FIFO")
    } else if t.is_socket() {
        Some("is a socket")
    } else {
        Some("is not a regular file")
    }
}

/// The directory a path's file lives in (`.` for a bare name).
pub fn dir_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Whether two paths name the same file: the same inode when both exist,
/// else the same absolute path once `.` and `..` are resolved lexically
/// in the part that exists.
pub fn same_file(a: &Path, b: &Path) -> bool {
    if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
        return x.dev() == y.dev() && x.ino() == y.ino();
    }
    let norm = |p: &Path| -> Option<PathBuf> {
        let dir = std::fs::canonicalize(dir_of(p)).ok()?;
        Some(dir.join(p.file_name()?))
    };
    match (norm(a), norm(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// Checks that `path` may be written as the output `what` of a command
/// whose inputs (and other outputs) are `others` (each with what it is),
/// before anything is measured or written.
pub fn check(
    what: &str,
    path: &Path,
    existing: Existing,
    others: &[(&Path, &str)],
) -> Result<(), OutputError> {
    let dir = dir_of(path);
    if !dir.is_dir() {
        return Err(OutputError::NoDirectory {
            what: what.into(),
            path: path.into(),
            dir,
        });
    }
    for (other, is) in others {
        if same_file(path, other) {
            return Err(OutputError::Collides {
                what: what.into(),
                path: path.into(),
                other: (*is).into(),
            });
        }
    }
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(OutputError::Io {
            what: what.into(),
            path: path.into(),
            source,
        }),
        Ok(m) => {
            if let Some(kind) = not_regular(&m) {
                Err(OutputError::NotRegular {
                    what: what.into(),
                    path: path.into(),
                    kind,
                })
            } else if existing == Existing::Refuse {
                Err(OutputError::Exists {
                    what: what.into(),
                    path: path.into(),
                })
            } else {
                Ok(())
            }
        }
    }
}

/// The path of the file `name` inside the directory `dir` (the output
/// `what`): `name` must be one plain path component — not empty, no `/`,
/// not `.` or `..` — so that the file is in `dir` itself, never outside it.
/// The file's own checks are [`check`]'s.
pub fn in_dir(what: &str, dir: &Path, name: &str) -> Result<PathBuf, OutputError> {
    let plain = !name.is_empty() && !name.contains('/') && name != "." && name != "..";
    if !plain {
        return Err(OutputError::BadName {
            what: what.into(),
            name: name.into(),
            dir: dir.into(),
        });
    }
    Ok(dir.join(name))
}

/// Checks that `dir` may hold outputs (the output `what`): an existing
/// directory — not a link to one — or a new name whose parent is a
/// directory. Returns whether it exists; makes nothing ([`ensure_dir`]
/// makes it).
pub fn check_dir(what: &str, dir: &Path) -> Result<bool, OutputError> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => Ok(true),
        Ok(m) => Err(OutputError::NotDirectory {
            what: what.into(),
            path: dir.into(),
            kind: not_regular(&m).unwrap_or("is a regular file"),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let parent = dir_of(dir);
            if parent.is_dir() {
                Ok(false)
            } else {
                Err(OutputError::NoDirectory {
                    what: what.into(),
                    path: dir.into(),
                    dir: parent,
                })
            }
        }
        Err(source) => Err(OutputError::Io {
            what: what.into(),
            path: dir.into(),
            source,
        }),
    }
}

/// Makes sure `dir` is a directory outputs may go into (the output
/// `what`, [`check_dir`]): an existing directory, or one made now when its
/// parent exists (one level, as `mkdir` without `-p`). Anything else there
/// — a link, a file — is refused.
pub fn ensure_dir(what: &str, dir: &Path) -> Result<(), OutputError> {
    if check_dir(what, dir)? {
        return Ok(());
    }
    std::fs::create_dir(dir).map_err(|source| OutputError::Io {
        what: what.into(),
        path: dir.into(),
        source,
    })
}

/// Just before a rename over `path`: refuses when something other than a
/// regular file has appeared there since the checks.
pub fn still_replaceable(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) => match not_regular(&m) {
            Some(kind) => Err(std::io::Error::other(format!(
                "{} {kind}; scalebench only ever replaces regular files",
                path.display()
            ))),
            None => Ok(()),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Claims a new file name: `base` + `.json`, or `base-2.json`,
/// `base-3.json`, … when taken, by creating it exclusively (so two runs
/// started in the same instant never share a name). The file is left
/// empty, to be replaced by the first write.
pub fn claim_new(base: &Path, ext: &str) -> std::io::Result<PathBuf> {
    let (_, mut v) = claim_group(base, &[String::new()], ext)?;
    Ok(v.remove(0))
}

/// Claims several names at once, as [`claim_new`] one: `base` + each
/// suffix + `.ext`, all free under one base (`base`, `base-2`, …);
/// returns that base and the files, created empty.
pub fn claim_group(
    base: &Path,
    suffixes: &[String],
    ext: &str,
) -> std::io::Result<(PathBuf, Vec<PathBuf>)> {
    'next: for k in 1..10_000u32 {
        let mut b = base.as_os_str().to_os_string();
        if k > 1 {
            b.push(format!("-{k}"));
        }
        let mut made: Vec<PathBuf> = Vec::new();
        for s in suffixes {
            let mut name = b.clone();
            name.push(format!("{s}.{ext}"));
            let p = PathBuf::from(name);
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&p)
            {
                Ok(_) => made.push(p),
                Err(e) => {
                    for m in &made {
                        let _ = std::fs::remove_file(m);
                    }
                    if e.kind() == std::io::ErrorKind::AlreadyExists {
                        continue 'next;
                    }
                    return Err(e);
                }
            }
        }
        return Ok((PathBuf::from(b), made));
    }
    Err(std::io::Error::other(format!(
        "no free name for {}",
        base.display()
    )))
}

/// Why an output file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The temporary file beside it could not be made.
    #[error("cannot create {}", path.display())]
    Create {
        /// The output.
        path: PathBuf,
        /// The file system's error.
        #[source]
        source: std::io::Error,
    },
    /// Writing its content failed (the writer's own error, or the disk's).
    #[error("writing {}", path.display())]
    Write {
        /// The output.
        path: PathBuf,
        /// What failed.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The finished file could not be put in its place.
    #[error("cannot write {}", path.display())]
    Replace {
        /// The output.
        path: PathBuf,
        /// The file system's error.
        #[source]
        source: std::io::Error,
    },
}

/// Writes a file through `f` atomically: into a temporary file in the same
/// directory, flushed to disk and renamed over `path` only when everything
/// was written (a failed write, or a crash, leaves an existing file as it
/// was). Every file scalebench writes for the user goes through here; `f`'s
/// error is kept whole as the cause.
pub fn write_file_atomic<E>(
    path: &Path,
    f: impl FnOnce(&mut dyn std::io::Write) -> Result<(), E>,
) -> Result<(), WriteError>
where
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    use std::io::Write;
    let writing = |e: Box<dyn std::error::Error + Send + Sync>| WriteError::Write {
        path: path.to_path_buf(),
        source: e,
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".scalebench-")
        .suffix(".tmp")
        .tempfile_in(dir_of(path))
        .map_err(|source| WriteError::Create {
            path: path.to_path_buf(),
            source,
        })?;
    {
        let mut w = std::io::BufWriter::new(tmp.as_file_mut());
        f(&mut w).map_err(|e| writing(e.into()))?;
        w.flush().map_err(|e| writing(e.into()))?;
    }
    tmp.as_file().sync_all().map_err(|e| writing(e.into()))?;
    // tempfile creates 0600; an output is as readable as any other file.
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))
            .map_err(|e| writing(e.into()))?;
    }
    let replace = |source| WriteError::Replace {
        path: path.to_path_buf(),
        source,
    };
    still_replaceable(path).map_err(replace)?;
    tmp.persist(path).map_err(|e| replace(e.error))?;
    if let Ok(d) = std::fs::File::open(dir_of(path)) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Runs `f` on standard output. A closed pipe (`| head`) counts as
/// success: what is written after the reader went is dropped, so `f`
/// never sees that error and its own errors come back as they are.
pub fn to_stdout<E: From<std::io::Error>>(
    f: impl FnOnce(&mut dyn std::io::Write) -> Result<(), E>,
) -> Result<(), E> {
    use std::io::Write;
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(UntilPipeCloses {
        inner: stdout.lock(),
        closed: false,
    });
    f(&mut w)?;
    w.flush()?;
    Ok(())
}

/// A writer that drops everything once its reader has gone (EPIPE).
struct UntilPipeCloses<W> {
    inner: W,
    closed: bool,
}

impl<W: std::io::Write> UntilPipeCloses<W> {
    /// `r`, a closed pipe taken as everything written from now on.
    fn unless_closed<T>(&mut self, r: std::io::Result<T>, all: T) -> std::io::Result<T> {
        match r {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(all)
            }
            other => other,
        }
    }
}

impl<W: std::io::Write> std::io::Write for UntilPipeCloses<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        let r = self.inner.write(buf);
        self.unless_closed(r, buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let r = self.inner.flush();
        self.unless_closed(r, ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_paths_pass_and_missing_directories_do_not() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.json");
        check("--out", &p, Existing::Refuse, &[]).unwrap();
        let e = check("--out", &d.path().join("no/r.json"), Existing::Refuse, &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not exist") && e.contains("no"), "{e}");
    }

    #[test]
    fn existing_files_are_refused_or_replaced_as_asked() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.json");
        std::fs::write(&p, "x").unwrap();
        let e = check("--out", &p, Existing::Refuse, &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("--force"), "{e}");
        check("--out", &p, Existing::Replace, &[]).unwrap();
    }

    #[test]
    fn links_directories_and_devices_are_never_replaced() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("t");
        std::fs::write(&target, "keep").unwrap();
        let link = d.path().join("l.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        for (p, word) in [
            (link.as_path(), "symbolic link"),
            (d.path(), "directory"),
            (Path::new("/dev/null"), "device"),
        ] {
            let e = check("-o", p, Existing::Replace, &[])
                .unwrap_err()
                .to_string();
            assert!(e.contains(word), "{e}");
        }
        assert!(still_replaceable(&link).is_err());
        let e = write_file_atomic(&link, |w| w.write_all(b"new")).unwrap_err();
        let cause = std::error::Error::source(&e).map(ToString::to_string);
        assert!(
            cause
                .as_deref()
                .is_some_and(|c| c.contains("symbolic link")),
            "{e}: {cause:?}"
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }

    #[test]
    fn an_output_may_not_be_an_input() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.json");
        std::fs::write(&p, "{}").unwrap();
        let other = d.path().join(".").join("a.json");
        let e = check("--html", &other, Existing::Replace, &[(&p, "an input")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("is also an input"), "{e}");
        // Not yet existing: the same name twice.
        let q = d.path().join("b.html");
        assert!(same_file(&q, &d.path().join("./b.html")));
        assert!(!same_file(&q, &d.path().join("c.html")));
    }

    #[test]
    fn names_stay_in_their_directory_and_directories_are_made_one_level() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(
            in_dir("--object", d.path(), "a.bin").unwrap(),
            d.path().join("a.bin")
        );
        for bad in ["", ".", "..", "../x", "a/b", "/etc/passwd"] {
            let e = in_dir("--object", d.path(), bad).unwrap_err().to_string();
            assert!(e.contains("not a plain file name"), "{bad}: {e}");
        }
        let svg = d.path().join("svg");
        ensure_dir("--svg-dir", &svg).unwrap();
        assert!(svg.is_dir());
        ensure_dir("--svg-dir", &svg).unwrap();
        let e = ensure_dir("--svg-dir", &d.path().join("no/svg"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not exist"), "{e}");
        let f = d.path().join("f");
        std::fs::write(&f, "x").unwrap();
        let e = ensure_dir("--svg-dir", &f).unwrap_err().to_string();
        assert!(e.contains("is a regular file, not a directory"), "{e}");
        // A link to a directory is not written through.
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&svg, &link).unwrap();
        let e = check_dir("--out", &link).unwrap_err().to_string();
        assert!(
            e.contains("link") && e.contains("is a symbolic link"),
            "{e}"
        );
        assert!(!check_dir("--out", &d.path().join("new")).unwrap());
        assert!(check_dir("--out", &svg).unwrap());
    }

    #[test]
    fn claimed_names_never_collide() {
        let d = tempfile::tempdir().unwrap();
        let base = d.path().join("host-20261124T000000");
        let a = claim_new(&base, "json").unwrap();
        let b = claim_new(&base, "json").unwrap();
        assert_ne!(a, b);
        assert!(b.to_string_lossy().ends_with("-2.json"), "{}", b.display());
    }

    /// A reader that goes after `left` bytes.
    struct Pipe {
        left: usize,
        got: Vec<u8>,
    }

    impl std::io::Write for Pipe {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.left == 0 {
                return Err(std::io::ErrorKind::BrokenPipe.into());
            }
            let n = buf.len().min(self.left);
            self.left -= n;
            self.got.extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_pipe_drops_the_rest_and_other_errors_pass() {
        use std::io::Write;
        let mut w = UntilPipeCloses {
            inner: Pipe {
                left: 3,
                got: Vec::new(),
            },
            closed: false,
        };
        w.write_all(b"abcdef").unwrap();
        w.write_all(b"more").unwrap();
        w.flush().unwrap();
        assert!(w.closed);
        assert_eq!(w.inner.got, b"abc");
        let mut small = [0u8; 2];
        let mut w = UntilPipeCloses {
            inner: std::io::Cursor::new(&mut small[..]),
            closed: false,
        };
        let e = w
            .write_all(b"abc")
            .expect_err("a full buffer is no closed pipe");
        assert_eq!(e.kind(), std::io::ErrorKind::WriteZero);
    }

    #[test]
    fn a_failed_write_leaves_the_old_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.csv");
        std::fs::write(&p, "old").unwrap();
        let r = write_file_atomic(&p, |w| {
            w.write_all(b"half")?;
            Err(std::io::Error::other("disk full"))
        });
        let e = r.expect_err("the writer failed");
        assert_eq!(e.to_string(), format!("writing {}", p.display()));
        let cause = std::error::Error::source(&e).expect("the writer's error as cause");
        assert_eq!(cause.to_string(), "disk full");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
        write_file_atomic(&p, |w| w.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
    }
}
