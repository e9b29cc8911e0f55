//! The file tree shared by the `manymap-*` benchmarks: `count` files of
//! about 150 bytes, 100 per subdirectory (as squid or qmail lay them out),
//! created once per `scalebench run` and read once per run so that only
//! cached files and directories are measured.

use super::{StartError, StepError, step_error};
use crate::ctx::Ctx;
use crate::harness::Resource;
use crate::harness::clock::Stopwatch;
use anyhow::Context;
use std::ffi::CString;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;

/// Files per subdirectory.
pub const PER_DIR: u64 = 100;
/// Size of each file.
pub const FILE_BYTES: usize = 150;

/// The paths of a created tree.
pub struct Tree {
    /// Every file, in creation order.
    pub paths: Vec<CString>,
}

impl Tree {
    /// Creates `workdir/manymap-<count>/` unless it is complete already,
    /// then reads every file once.
    pub fn ensure(ctx: &Ctx, count: u64) -> Result<Tree, StartError> {
        let root = ctx.workdir().join(format!("manymap-{count}"));
        let done = root.join(".complete");
        let path_of = |i: u64| {
            root.join(format!("d{:04}", i / PER_DIR))
                .join(format!("f{i:06}"))
        };
        if !done.exists() {
            for i in 0..count {
                let p = path_of(i);
                if i % PER_DIR == 0 {
                    std::fs::create_dir_all(p.parent().expect("has parent")).with_context(
                        || format!("creating the directories of {}", root.display()),
                    )?;
                }
                let mut f = std::fs::File::create(&p)
                    .with_context(|| format!("creating {}", p.display()))?;
                let mut line = format!("scalebench manymap file {i:06} ");
                while line.len() < FILE_BYTES - 1 {
                    line.push(char::from(b'a' + (line.len() % 26) as u8));
                }
                line.push('\n');
                f.write_all(line.as_bytes())
                    .with_context(|| format!("writing {}", p.display()))?;
            }
            std::fs::write(&done, b"").with_context(|| format!("writing {}", done.display()))?;
        }
        let mut paths = Vec::with_capacity(count as usize);
        for i in 0..count {
            let p = path_of(i);
            std::fs::read(&p).with_context(|| format!("reading {}", p.display()))?;
            paths.push(CString::new(p.as_os_str().as_bytes()).expect("no NUL in our paths"));
        }
        Ok(Tree { paths })
    }
}

/// Files of a tree opened read-only, and (optionally) mapped.
pub struct Opened {
    /// The tree.
    pub tree: Tree,
    /// Open descriptors, in path order.
    pub fds: Vec<i32>,
    /// Mapped addresses, in path order.
    pub maps: Vec<usize>,
}

impl Opened {
    /// Nothing open yet.
    pub fn new(tree: Tree) -> Opened {
        let n = tree.paths.len();
        Opened {
            tree,
            fds: Vec::with_capacity(n),
            maps: Vec::with_capacity(n),
        }
    }

    /// Opens the next file; `sw` brackets open() when given.
    pub fn open_next(&mut self, sw: Option<&mut Stopwatch>) -> Result<(), StepError> {
        let path = self.tree.paths[self.fds.len()].as_ptr();
        // SAFETY: a NUL-terminated path we own.
        let call = || unsafe { libc::open(path, libc::O_RDONLY) };
        let fd = Stopwatch::maybe(sw, call);
        if fd < 0 {
            return Err(step_error(
                "open()",
                self.fds.len() as u64,
                Resource::Descriptors,
                &[libc::EMFILE, libc::ENFILE],
            ));
        }
        self.fds.push(fd);
        Ok(())
    }

    /// Maps the next opened file whole; `sw` brackets mmap() when given.
    pub fn map_next(&mut self, sw: Option<&mut Stopwatch>) -> Result<(), StepError> {
        let fd = self.fds[self.maps.len()];
        // SAFETY: a read-only shared mapping of a file we opened.
        let call = || unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                FILE_BYTES,
                libc::PROT_READ,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        let addr = Stopwatch::maybe(sw, call);
        if addr == libc::MAP_FAILED {
            return Err(step_error(
                "mmap()",
                self.maps.len() as u64,
                Resource::Mappings,
                &[libc::ENOMEM, libc::EMFILE],
            ));
        }
        self.maps.push(addr as usize);
        Ok(())
    }

    /// Closes the file opened last.
    pub fn close_last(&mut self) {
        if self.fds.len() > self.maps.len()
            && let Some(fd) = self.fds.pop()
        {
            // SAFETY: closing a descriptor this struct opened.
            unsafe { libc::close(fd) };
        }
    }

    /// Unmaps the file mapped last.
    pub fn unmap_last(&mut self) {
        if let Some(a) = self.maps.pop() {
            // SAFETY: unmapping what this struct mapped.
            unsafe { libc::munmap(a as *mut libc::c_void, FILE_BYTES) };
        }
    }

    /// Opens every file (untimed).
    pub fn open_all(&mut self) -> Result<(), StartError> {
        while self.fds.len() < self.tree.paths.len() {
            self.open_next(None)
                .map_err(|e| anyhow::anyhow!("opening the files: {e}"))?;
        }
        Ok(())
    }

    /// Maps every opened file (untimed).
    pub fn map_all(&mut self) -> Result<(), StartError> {
        while self.maps.len() < self.fds.len() {
            self.map_next(None)
                .map_err(|e| anyhow::anyhow!("mapping the files: {e}"))?;
        }
        Ok(())
    }
}

impl Drop for Opened {
    fn drop(&mut self) {
        for &a in &self.maps {
            // SAFETY: unmapping what this struct mapped.
            unsafe { libc::munmap(a as *mut libc::c_void, FILE_BYTES) };
        }
        for &fd in &self.fds {
            // SAFETY: closing what this struct opened.
            unsafe { libc::close(fd) };
        }
    }
}
