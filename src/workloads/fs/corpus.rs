//! The image site: a deterministic corpus shaped like the one the seeds
//! captured (3 million images, half of them thumbnails, some directories
//! with very many files), its request log, and the two archives the
//! workload unpacks — generated as a tar.gz stream, never stored whole.
//!
//! Everything follows from `(seed, files, bytes, requests)` through a
//! hand-written SplitMix64 generator, so that the same arguments give the
//! same tree, log and archive bytes on every system and every version of
//! scalebench (a library generator may change its output between versions).
//!
//! Shape:
//! - `files / 2` images, each a full image `img/DIR/ID.jpg` and a thumbnail
//!   `thumb/DIR/ID.jpg`;
//! - half of the images in two very large directories (`big0`, `big1`),
//!   the rest in many small ones (`00/1f`, about 40 images each);
//! - thumbnails 2–6 KB; full images log-normal (σ = 1, long-tailed),
//!   scaled so that the corpus totals about `bytes`;
//! - the request log: `requests` requests, images drawn by Zipf popularity
//!   (exponent 0.9) over a random order of the images, 70 % thumbnails;
//! - archive 1 (`site`): every file except the "late" ones, directory by
//!   directory, as a site would be archived;
//! - archive 2 (`requests`): every file the log asks for, in the order first
//!   asked: a third are late (new files), the rest overwrite earlier files
//!   with new content.

use std::io::{self, Read, Write};

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    /// Generator seed.
    pub seed: u64,
    /// Files in the whole site (both archives together), at least 2.
    pub files: u64,
    /// Approximate bytes of the whole site.
    pub bytes: u64,
    /// Requests in the log.
    pub requests: u64,
}

/// One of the two archives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Archive {
    /// Archive 1: the site without the late files, directory by directory.
    Site,
    /// Archive 2: the files of the request log in the order first asked.
    Requests,
}

/// The generator of the corpus (the harness's SplitMix64, fixed forever).
pub use crate::harness::splitmix::Rng;

/// Streams of the generator, one per purpose.
const S_LAYOUT: u64 = 1;
const S_SIZES: u64 = 2;
const S_ORDER: u64 = 3;
const S_LOG: u64 = 4;
const S_CONTENT: u64 = 5;

/// Share of images in the two big directories.
const BIG_SHARE: f64 = 0.5;
/// Images per small directory, on average.
const PER_SMALL_DIR: u64 = 40;
/// Zipf exponent of image popularity.
const ZIPF_S: f64 = 0.9;
/// Share of requests for thumbnails.
const THUMB_SHARE: f64 = 0.7;
/// A fixed modification time for every entry (2006-09-01, the seeds' year),
/// so that archives are byte-for-byte reproducible.
const MTIME: u64 = 1_157_068_800;

/// Per image of `images`: its directory (0 and 1 the big ones, then the
/// `small_dirs` small ones), drawn from the layout stream of `seed`.
fn place_images(seed: u64, images: u64, small_dirs: u64) -> Vec<u32> {
    let mut layout = Rng::new(seed, S_LAYOUT);
    (0..images)
        .map(|_| {
            if layout.unit() < BIG_SHARE {
                layout.below(2) as u32
            } else {
                2 + layout.below(small_dirs) as u32
            }
        })
        .collect()
}

/// The site's directories, parents before children, under `img` and
/// `thumb`: those of `image_dirs` that hold an image (by `image_dir`),
/// with their parents.
fn directories(image_dirs: &[String], image_dir: &[u32]) -> Vec<String> {
    // Only directories that hold an image exist.
    let mut used = vec![false; image_dirs.len()];
    for &d in image_dir {
        used[d as usize] = true;
    }
    let mut dirs = Vec::new();
    for top in ["img", "thumb"] {
        dirs.push(top.to_string());
        let mut last_parent = String::new();
        for (i, d) in image_dirs.iter().enumerate() {
            if !used[i] {
                continue;
            }
            if let Some((parent, _)) = d.split_once('/')
                && parent != last_parent
            {
                dirs.push(format!("{top}/{parent}"));
                last_parent = parent.to_string();
            }
            dirs.push(format!("{top}/{d}"));
        }
    }
    dirs
}

/// Per file of `images` images (full, then thumbnail): its size.
/// Thumbnails 2–6 KB; full images log-normal around the mean that makes
/// the total come out at about `spec.bytes`.
fn file_sizes(spec: Spec, images: u64) -> Vec<u32> {
    let thumb_mean = 4096.0;
    let full_mean = ((spec.bytes as f64 - images as f64 * thumb_mean) / images as f64).max(8192.0);
    let sigma = 1.0f64;
    let mu = full_mean.ln() - sigma * sigma / 2.0;
    let mut sz = Rng::new(spec.seed, S_SIZES);
    let mut sizes = Vec::with_capacity(2 * images as usize);
    for _ in 0..images {
        let full = (mu + sigma * sz.normal())
            .exp()
            .clamp(1024.0, 50.0 * full_mean);
        sizes.push(full as u32);
        sizes.push(2048 + sz.below(4097) as u32);
    }
    sizes
}

/// The request log of `spec.requests` file indices: Zipf popularity over
/// a random order of the `images` images, thumbnails asked for more.
fn request_log(spec: Spec, images: u64) -> Vec<u32> {
    let mut order: Vec<u32> = (0..images as u32).collect();
    let mut o = Rng::new(spec.seed, S_ORDER);
    for i in (1..order.len()).rev() {
        order.swap(i, o.below(i as u64 + 1) as usize);
    }
    let mut cdf = Vec::with_capacity(images as usize);
    let mut sum = 0.0;
    for r in 0..images {
        sum += 1.0 / ((r + 1) as f64).powf(ZIPF_S);
        cdf.push(sum);
    }
    let mut lg = Rng::new(spec.seed, S_LOG);
    (0..spec.requests)
        .map(|_| {
            let x = lg.unit() * sum;
            let rank = cdf.partition_point(|&c| c <= x).min(images as usize - 1);
            let image = order[rank];
            let thumb = lg.unit() < THUMB_SHARE;
            2 * image + u32::from(thumb)
        })
        .collect()
}

/// Archive 2's files (the distinct files of `log`, in first-asked order)
/// and, per file of `files`, whether it is only in archive 2 (every third
/// of them).
fn second_archive(log: &[u32], files: usize) -> (Vec<u32>, Vec<bool>) {
    let mut seen = vec![false; files];
    let mut second = Vec::new();
    for &f in log {
        if !seen[f as usize] {
            seen[f as usize] = true;
            second.push(f);
        }
    }
    let mut late = vec![false; files];
    for (i, &f) in second.iter().enumerate() {
        if i % 3 == 2 {
            late[f as usize] = true;
        }
    }
    (second, late)
}

/// The generated site.
#[derive(Debug, Clone)]
pub struct Corpus {
    spec: Spec,
    /// Directories, parents before children (`img`, `img/big0`, …).
    dirs: Vec<String>,
    /// Per image: its directory (index into the image directories).
    image_dir: Vec<u32>,
    /// Per file (`2 * image` full, `2 * image + 1` thumbnail): its size.
    sizes: Vec<u32>,
    /// Per file: whether it is only in archive 2.
    late: Vec<bool>,
    /// The request log: file indices.
    log: Vec<u32>,
    /// Archive 2's files: the log's distinct files in first-asked order.
    second: Vec<u32>,
    /// Names of the image directories below `img/` and `thumb/`.
    image_dirs: Vec<String>,
    /// Random bytes contents are cut from.
    pool: Vec<u8>,
}

impl Corpus {
    /// Generates the site for `spec`.
    pub fn new(spec: Spec) -> Corpus {
        let images = spec.files.max(2).div_ceil(2);
        let small_images = ((images as f64) * (1.0 - BIG_SHARE)).ceil() as u64;
        let small_dirs = small_images.div_ceil(PER_SMALL_DIR).max(1);
        let mut image_dirs: Vec<String> = vec!["big0".into(), "big1".into()];
        for s in 0..small_dirs {
            image_dirs.push(format!("{:02x}/{:02x}", s / 256, s % 256));
        }
        let image_dir = place_images(spec.seed, images, small_dirs);
        let dirs = directories(&image_dirs, &image_dir);
        let sizes = file_sizes(spec, images);
        let log = request_log(spec, images);
        let (second, late) = second_archive(&log, sizes.len());
        Corpus {
            spec,
            dirs,
            image_dir,
            sizes,
            late,
            log,
            second,
            image_dirs,
            pool: pool(spec.seed),
        }
    }

    /// What it was generated from.
    pub fn spec(&self) -> Spec {
        self.spec
    }

    /// Number of files in the site.
    pub fn files(&self) -> usize {
        self.sizes.len()
    }

    /// Directories, parents first.
    pub fn dirs(&self) -> &[String] {
        &self.dirs
    }

    /// The path of file `f`, relative to the site root.
    pub fn path(&self, f: u32) -> String {
        let image = f / 2;
        let top = if f % 2 == 1 { "thumb" } else { "img" };
        let dir = &self.image_dirs[self.image_dir[image as usize] as usize];
        format!("{top}/{dir}/{image:07x}.jpg")
    }

    /// The size of file `f` in archive 1 (`version` 0) or as archive 2
    /// overwrites it (`version` 1: a new image of similar size).
    pub fn size(&self, f: u32, version: u32) -> u64 {
        let s = u64::from(self.sizes[f as usize]);
        if version == 0 || self.late[f as usize] {
            s
        } else {
            // Deterministic ±20 %.
            let mut r = Rng::new(self.spec.seed ^ u64::from(f), S_SIZES + 100);
            (s as f64 * (0.8 + 0.4 * r.unit())).max(1.0) as u64
        }
    }

    /// Whether file `f` is only in archive 2.
    pub fn is_late(&self, f: u32) -> bool {
        self.late[f as usize]
    }

    /// The request log as file indices.
    pub fn log(&self) -> &[u32] {
        &self.log
    }

    /// The files of an archive, in archive order.
    pub fn archive_files(&self, which: Archive) -> Vec<u32> {
        match which {
            Archive::Site => {
                let mut v: Vec<u32> = (0..self.sizes.len() as u32)
                    .filter(|&f| !self.late[f as usize])
                    .collect();
                // Directory by directory: thumbnails after images, each
                // directory's files in name order.
                v.sort_by_key(|&f| (f % 2, self.image_dir[(f / 2) as usize], f / 2));
                v
            }
            Archive::Requests => self.second.clone(),
        }
    }

    /// The size of the version an archive carries of file `f`.
    pub fn archive_size(&self, which: Archive, f: u32) -> u64 {
        match which {
            Archive::Site => self.size(f, 0),
            Archive::Requests => self.size(f, 1),
        }
    }

    /// The bytes the site holds after both archives: (files, bytes).
    pub fn final_totals(&self) -> (u64, u64) {
        let mut files = 0;
        let mut bytes = 0;
        let mut in_second = vec![false; self.sizes.len()];
        for &f in &self.second {
            in_second[f as usize] = true;
        }
        for f in 0..self.sizes.len() as u32 {
            files += 1;
            bytes += if in_second[f as usize] {
                self.size(f, 1)
            } else {
                self.size(f, 0)
            };
        }
        (files, bytes)
    }

    /// Files and bytes of file data an archive carries.
    pub fn archive_totals(&self, which: Archive) -> (usize, u64) {
        let files = self.archive_files(which);
        let bytes = files.iter().map(|&f| self.archive_size(which, f)).sum();
        (files.len(), bytes)
    }

    /// Bytes of file data an archive carries.
    pub fn archive_bytes(&self, which: Archive) -> u64 {
        self.archive_totals(which).1
    }

    /// Writes an archive as tar.gz to `w`. The gzip layer uses stored
    /// blocks: images do not compress, so deflating would only spend CPU
    /// in scalebench that the extraction phase would then count.
    pub fn write_archive(&self, which: Archive, w: impl Write) -> io::Result<()> {
        let gz = flate2::GzBuilder::new()
            .mtime(MTIME as u32)
            .write(w, flate2::Compression::none());
        let mut tar = tar::Builder::new(gz);
        tar.mode(tar::HeaderMode::Deterministic);
        let files = self.archive_files(which);
        let version = match which {
            Archive::Site => 0,
            Archive::Requests => 1,
        };
        // Each directory entry just before its first file.
        let mut made = std::collections::HashSet::new();
        for f in files {
            let path = self.path(f);
            let mut prefix = String::new();
            let parts: Vec<&str> = path.split('/').collect();
            for p in &parts[..parts.len() - 1] {
                if !prefix.is_empty() {
                    prefix.push('/');
                }
                prefix.push_str(p);
                if made.insert(prefix.clone()) {
                    let mut h = tar::Header::new_ustar();
                    h.set_entry_type(tar::EntryType::Directory);
                    h.set_mode(0o755);
                    h.set_size(0);
                    h.set_mtime(MTIME);
                    tar.append_data(&mut h, format!("{prefix}/"), io::empty())?;
                }
            }
            let size = self.archive_size(which, f);
            let mut h = tar::Header::new_ustar();
            h.set_entry_type(tar::EntryType::Regular);
            h.set_mode(0o644);
            h.set_size(size);
            h.set_mtime(MTIME);
            tar.append_data(
                &mut h,
                &path,
                Content::new(&self.pool, self.spec.seed, f, version, size),
            )?;
        }
        tar.into_inner()?.finish()?.flush()
    }

    /// The content of file `f` (`version` as in [`Corpus::size`]).
    pub fn content(&self, f: u32, version: u32) -> Vec<u8> {
        let size = if version == 0 || self.late[f as usize] {
            self.size(f, 0)
        } else {
            self.size(f, 1)
        };
        let mut v = Vec::with_capacity(size as usize);
        Content::new(&self.pool, self.spec.seed, f, version, size)
            .read_to_end(&mut v)
            .expect("generated content");
        v
    }
}

/// Bytes of the pool file contents are cut from (1 MiB).
const POOL: usize = 1 << 20;

/// The pool: random bytes from the seed, so that contents cost a copy to
/// generate (the unpack phase must measure the kernel, not the generator).
fn pool(seed: u64) -> Vec<u8> {
    let mut r = Rng::new(seed, S_CONTENT);
    let mut v = Vec::with_capacity(POOL);
    while v.len() < POOL {
        v.extend_from_slice(&r.next_u64().to_le_bytes());
    }
    v
}

/// A file's bytes, generated as they are read: a JPEG start-of-image
/// marker, then random bytes (images do not compress) cut from the pool at
/// an offset of the file's own, wrapping around. Byte `i` depends only on
/// the file, its version and `i`, never on how the reader splits its reads.
struct Content<'a> {
    pool: &'a [u8],
    start: usize,
    pos: u64,
    size: u64,
}

impl<'a> Content<'a> {
    fn new(pool: &'a [u8], seed: u64, f: u32, version: u32, size: u64) -> Content<'a> {
        let mut r = Rng::new(seed ^ (u64::from(f) << 8) ^ u64::from(version), S_CONTENT);
        Content {
            pool,
            start: r.below(pool.len() as u64) as usize,
            pos: 0,
            size,
        }
    }
}

impl Read for Content<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = (buf.len() as u64).min(self.size - self.pos) as usize;
        let mut i = 0;
        while i < n {
            let at = (self.start + (self.pos as usize + i)) % self.pool.len();
            let take = (self.pool.len() - at).min(n - i);
            buf[i..i + take].copy_from_slice(&self.pool[at..at + take]);
            i += take;
        }
        // The JPEG marker over the first bytes.
        const SOI: [u8; 4] = [0xFF, 0xD8, 0xFF, 0xE0];
        for (j, b) in buf[..n].iter_mut().enumerate() {
            let p = self.pos + j as u64;
            if p >= 4 {
                break;
            }
            *b = SOI[p as usize];
        }
        self.pos += n as u64;
        Ok(n)
    }
}

/// The writing half of an in-process stream: chunks handed to a reader in
/// another thread through a bounded channel (no pipe, no system calls).
pub struct ChunkWriter {
    tx: std::sync::mpsc::SyncSender<Vec<u8>>,
    buf: Vec<u8>,
}

/// The reading half of [`ChunkWriter`].
pub struct ChunkReader {
    rx: std::sync::mpsc::Receiver<Vec<u8>>,
    cur: Vec<u8>,
    pos: usize,
}

const CHUNK: usize = 256 * 1024;

/// A bounded in-process stream (8 chunks of 256 KiB in flight).
pub fn chunk_stream() -> (ChunkWriter, ChunkReader) {
    let (tx, rx) = std::sync::mpsc::sync_channel(8);
    (
        ChunkWriter {
            tx,
            buf: Vec::with_capacity(CHUNK),
        },
        ChunkReader {
            rx,
            cur: Vec::new(),
            pos: 0,
        },
    )
}

impl Write for ChunkWriter {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        let n = b.len().min(CHUNK - self.buf.len());
        self.buf.extend_from_slice(&b[..n]);
        if self.buf.len() == CHUNK {
            self.flush()?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let full = std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK));
        self.tx
            .send(full)
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the reader has gone"))
    }
}

impl Read for ChunkReader {
    fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.cur.len() {
            match self.rx.recv() {
                Ok(c) => {
                    self.cur = c;
                    self.pos = 0;
                }
                Err(_) => return Ok(0),
            }
        }
        let n = b.len().min(self.cur.len() - self.pos);
        b[..n].copy_from_slice(&self.cur[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// Starts a thread writing `which` of `corpus` into an in-process stream;
/// returns the reading end and the thread (its error, if any, on join).
pub fn spawn_archive(
    corpus: std::sync::Arc<Corpus>,
    which: Archive,
) -> (ChunkReader, std::thread::JoinHandle<io::Result<()>>) {
    let (mut w, r) = chunk_stream();
    let h = std::thread::spawn(move || {
        corpus.write_archive(which, &mut w)?;
        w.flush()
    });
    (r, h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    fn spec() -> Spec {
        Spec {
            seed: 7,
            files: 4_000,
            bytes: 40_000_000,
            requests: 3_000,
        }
    }

    fn archive(c: &Corpus, which: Archive) -> Vec<u8> {
        let mut v = Vec::new();
        c.write_archive(which, &mut v).unwrap();
        v
    }

    #[test]
    fn same_seed_same_bytes_other_seed_other_bytes() {
        let a = Corpus::new(spec());
        let b = Corpus::new(spec());
        assert_eq!(a.log(), b.log());
        assert_eq!(archive(&a, Archive::Site), archive(&b, Archive::Site));
        assert_eq!(
            archive(&a, Archive::Requests),
            archive(&b, Archive::Requests)
        );
        let c = Corpus::new(Spec { seed: 8, ..spec() });
        assert_ne!(a.log(), c.log());
        assert_ne!(archive(&a, Archive::Site), archive(&c, Archive::Site));
    }

    #[test]
    fn the_site_has_the_requested_shape() {
        let c = Corpus::new(spec());
        assert_eq!(c.files(), 4_000);
        let (files, bytes) = c.final_totals();
        assert_eq!(files, 4_000);
        assert!(
            (bytes as f64 - 40e6).abs() < 0.15 * 40e6,
            "{bytes} bytes, asked 40 MB"
        );
        // Half thumbnails (2–6 KB), half full images (larger, long-tailed).
        let thumbs: Vec<u64> = (0..4000)
            .filter(|f| f % 2 == 1)
            .map(|f| c.size(f, 0))
            .collect();
        let fulls: Vec<u64> = (0..4000)
            .filter(|f| f % 2 == 0)
            .map(|f| c.size(f, 0))
            .collect();
        assert_eq!(thumbs.len(), 2000);
        assert!(thumbs.iter().all(|&s| (2048..=6144).contains(&s)));
        let mean = fulls.iter().sum::<u64>() as f64 / fulls.len() as f64;
        let max = *fulls.iter().max().unwrap() as f64;
        assert!(mean > 10_000.0 && max > 4.0 * mean, "mean {mean} max {max}");
        // A few very large directories and many small ones.
        let mut per_dir: HashMap<String, usize> = HashMap::new();
        for f in 0..4000u32 {
            let p = c.path(f);
            *per_dir
                .entry(p[..p.rfind('/').unwrap()].to_string())
                .or_default() += 1;
        }
        let big = per_dir.values().filter(|&&n| n >= 400).count();
        let small = per_dir.values().filter(|&&n| n <= 80).count();
        assert_eq!(big, 4, "{per_dir:?}"); // big0 and big1, images and thumbnails
        assert!(small >= 40, "{small} small directories");
        // Every directory a file is in is listed, parents first.
        let dirs: HashSet<&str> = c.dirs().iter().map(String::as_str).collect();
        for d in per_dir.keys() {
            assert!(dirs.contains(d.as_str()), "{d}");
        }
        for (i, d) in c.dirs().iter().enumerate() {
            if let Some((parent, _)) = d.rsplit_once('/') {
                assert!(c.dirs()[..i].iter().any(|x| x == parent), "{d}");
            }
        }
    }

    #[test]
    fn the_log_repeats_popular_files_and_the_second_archive_follows_it() {
        let c = Corpus::new(spec());
        assert_eq!(c.log().len(), 3_000);
        let mut counts: HashMap<u32, usize> = HashMap::new();
        for &f in c.log() {
            *counts.entry(f).or_default() += 1;
        }
        let top = *counts.values().max().unwrap();
        assert!(top >= 30, "the most popular file is asked {top} times");
        let thumbs = c.log().iter().filter(|&&f| f % 2 == 1).count() as f64 / 3000.0;
        assert!((thumbs - THUMB_SHARE).abs() < 0.05, "{thumbs}");
        // Archive 2 is the log's distinct files in first-asked order; a third
        // are new, and archive 1 has every other file.
        let second = c.archive_files(Archive::Requests);
        assert_eq!(second.len(), counts.len());
        assert_eq!(second[0], c.log()[0]);
        let late = second.iter().filter(|&&f| c.is_late(f)).count();
        assert_eq!(late, second.len() / 3);
        let first = c.archive_files(Archive::Site);
        assert_eq!(first.len() + late, c.files());
        assert!(first.iter().all(|&f| !c.is_late(f)));
    }

    #[test]
    fn content_has_the_declared_size_and_differs_by_version() {
        let c = Corpus::new(spec());
        let f = c.archive_files(Archive::Requests)[0];
        let v0 = c.content(f, 0);
        assert_eq!(v0.len() as u64, c.size(f, 0));
        assert_eq!(&v0[..4], &[0xFF, 0xD8, 0xFF, 0xE0]);
        if !c.is_late(f) {
            let v1 = c.content(f, 1);
            assert_eq!(v1.len() as u64, c.size(f, 1));
            assert_ne!(v0, v1);
        }
    }

    #[test]
    fn the_stream_carries_the_archive() {
        let c = std::sync::Arc::new(Corpus::new(Spec {
            files: 200,
            bytes: 2_000_000,
            ..spec()
        }));
        let want = archive(&c, Archive::Site);
        let (mut r, h) = spawn_archive(c, Archive::Site);
        let mut got = Vec::new();
        r.read_to_end(&mut got).unwrap();
        h.join().unwrap().unwrap();
        assert_eq!(got, want);
    }
}
