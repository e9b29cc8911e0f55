//! `mmap`: mmap() of one page of a file with n single-page mappings already
//! held. The mappings are every other page of one file, so neighbours never
//! merge into one region; the file (2·n pages, 200 MB at the seeds' 25 600)
//! is read once first so the page cache holds it and no disk is measured.

use super::{Benchmark, Info, Run, StartError, StepError, step_error};
use crate::harness::clock::Stopwatch;
use crate::ctx::Ctx;
use crate::harness::Resource;
use crate::sys::Knob;
use anyhow::{Context, anyhow};
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

/// The `mmap` benchmark.
pub struct Mmap;

static INFO: Info = Info {
    name: "mmap",
    n_meaning: "mappings held (one page each)",
    timed: "mmap(NULL, 1 page, PROT_READ, MAP_SHARED) of every other page of a cached file",
    uses: &[Resource::Mappings],
    knobs: &[Knob::Mappings],
    quick_n: 10_000,
    full_n: 25_600,
};

/// The system page size.
pub(crate) fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) as usize }
}

/// Makes sure `workdir/mmap-<bytes>.dat` exists, reads it whole (so the
/// page cache holds it) and returns it open.
pub(crate) fn cached_file(dir: &Path, bytes: u64) -> Result<std::fs::File, StartError> {
    let path: PathBuf = dir.join(format!("mmap-{bytes}.dat"));
    if !path.exists() {
        if let Some(free) = crate::sys::free_bytes(dir)
            && free < bytes + (64 << 20)
        {
            use crate::units::fmt_bytes;
            return Err(anyhow!(
                "{} has {} free; the mmap benchmark needs a {} file and 64 MiB to spare",
                dir.display(),
                fmt_bytes(free),
                fmt_bytes(bytes)
            )
            .into());
        }
        let tmp = dir.join(format!(".mmap-{bytes}.tmp"));
        let mut f =
            std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        let block: Vec<u8> = (0..1 << 20).map(|i| (i % 251) as u8 + 1).collect();
        let mut left = bytes;
        while left > 0 {
            let k = left.min(block.len() as u64) as usize;
            f.write_all(&block[..k])
                .with_context(|| format!("writing {}", tmp.display()))?;
            left -= k as u64;
        }
        drop(f);
        std::fs::rename(&tmp, &path).with_context(|| format!("renaming {}", tmp.display()))?;
    }
    let mut f =
        std::fs::File::open(&path).with_context(|| format!("opening {}", path.display()))?;
    let mut buf = vec![0u8; 1 << 20];
    while f
        .read(&mut buf)
        .with_context(|| format!("reading {}", path.display()))?
        > 0
    {}
    Ok(f)
}

/// Single-page mappings of every other page of a cached file.
pub(crate) struct PageMaps {
    fd: OwnedFd,
    page: usize,
    pub(crate) maps: Vec<usize>,
}

impl PageMaps {
    /// Opens (creating if needed) the file for `n` mappings.
    pub(crate) fn open(ctx: &Ctx, n: u64) -> Result<PageMaps, StartError> {
        let page = page_size();
        let f = cached_file(ctx.workdir(), 2 * n.max(1) * page as u64)?;
        Ok(PageMaps {
            fd: f.into(),
            page,
            maps: Vec::with_capacity(n as usize),
        })
    }

    /// Maps page `i` again over itself, untouched ([`remap_untouched`]).
    pub(crate) fn remap(&self, i: usize) -> Result<(), StepError> {
        remap_untouched(
            self.maps[i],
            self.page,
            self.fd.as_raw_fd(),
            self.offset(i),
            i as u64,
        )
    }

    /// The file offset of mapping `i`: every other page, so that no two
    /// mappings could be merged.
    fn offset(&self, i: usize) -> libc::off_t {
        (2 * i * self.page) as libc::off_t
    }

    /// Maps the next page; `sw` brackets the mmap() call when given.
    #[inline(always)]
    pub(crate) fn map_next(&mut self, sw: Option<&mut Stopwatch>) -> Result<(), StepError> {
        let offset = self.offset(self.maps.len());
        let call = || {
            // SAFETY: a fresh read-only shared mapping of our own file.
            unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    self.page,
                    libc::PROT_READ,
                    libc::MAP_SHARED,
                    self.fd.as_raw_fd(),
                    offset,
                )
            }
        };
        let addr = Stopwatch::maybe(sw, call);
        if addr == libc::MAP_FAILED {
            return Err(step_error(
                "mmap()",
                self.maps.len() as u64,
                Resource::Mappings,
                &[libc::ENOMEM],
            ));
        }
        self.maps.push(addr as usize);
        Ok(())
    }

    /// Unmaps the page mapped last.
    pub(crate) fn unmap_last(&mut self) {
        if let Some(a) = self.maps.pop() {
            // SAFETY: unmapping a page this struct mapped.
            unsafe { libc::munmap(a as *mut libc::c_void, self.page) };
        }
    }
}

/// Maps `len` bytes of `fd` from `offset`, read-only and shared, over the
/// mapping at `addr`, replacing it: the touch benchmarks' undo, which
/// leaves the page mapped again and untouched, so that the next read
/// faults as the first one did. `MAP_FIXED` replaces what was mapped
/// there in the one call (POSIX), so no other thread's mmap can take the
/// range in between; `madvise(MADV_DONTNEED)` would not do, as the BSDs
/// and macOS may keep the page mapped.
pub(crate) fn remap_untouched(
    addr: usize,
    len: usize,
    fd: i32,
    offset: libc::off_t,
    held: u64,
) -> Result<(), StepError> {
    // SAFETY: `addr` is the start of a live mapping of `len` bytes this
    // benchmark made; it is replaced by a mapping of its own file.
    let r = unsafe {
        libc::mmap(
            addr as *mut libc::c_void,
            len,
            libc::PROT_READ,
            libc::MAP_SHARED | libc::MAP_FIXED,
            fd,
            offset,
        )
    };
    if r == libc::MAP_FAILED || r as usize != addr {
        return Err(step_error("mmap(MAP_FIXED)", held, Resource::Mappings, &[]));
    }
    Ok(())
}

impl Drop for PageMaps {
    fn drop(&mut self) {
        for &a in &self.maps {
            // SAFETY: unmapping pages this struct mapped.
            unsafe { libc::munmap(a as *mut libc::c_void, self.page) };
        }
    }
}

/// Reads the first byte of a mapped page (`sw` brackets only the read).
#[inline(always)]
pub(crate) fn touch(page: usize, sw: &mut Stopwatch) {
    let p = page as *const u8;
    sw.start();
    // SAFETY: `page` is the start of a live read-only mapping.
    let v = unsafe { std::ptr::read_volatile(p) };
    sw.stop();
    std::hint::black_box(v);
}

struct MmapRun(PageMaps);

impl Benchmark for Mmap {
    fn info(&self) -> &'static Info {
        &INFO
    }

    /// Unmapping the page mapped last frees its place, which the next mmap()
    /// of the same page takes again.
    fn downwards(&self) -> bool {
        true
    }

    fn start(&self, ctx: &Ctx, _variant: Option<&str>, n: u64) -> Result<Box<dyn Run>, StartError> {
        Ok(Box::new(MmapRun(PageMaps::open(ctx, n)?)))
    }
}

impl Run for MmapRun {
    fn held(&self) -> u64 {
        self.0.maps.len() as u64
    }

    fn op(&mut self, sw: &mut Stopwatch) -> Result<(), StepError> {
        self.0.map_next(Some(sw))
    }

    fn undo(&mut self, _sw: &mut Stopwatch) -> Result<(), StepError> {
        self.0.unmap_last();
        Ok(())
    }
}
