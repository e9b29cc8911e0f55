//! Resolving `kernel:debian:VERSION` to one kernel of the cache: the
//! archive's indices brought up to date, the newest package of the line
//! chosen, downloaded and unpacked unless the cache has it already.

use super::apt::{self, Apt, Archive, Stanza, Tools, UpdateFailed};
use super::cache::{Cache, Entry, Held, Lock};
use super::{Asked, Want, unpack};
use crate::results::{ConfigFile, DebFile};
use anyhow::{Context, bail};
use std::path::{Path, PathBuf};

/// How a kernel came to be in the cache for this resolution.
#[derive(Debug, Clone, PartialEq)]
pub enum How {
    /// It was there: nothing downloaded.
    Cached,
    /// Downloaded now: bytes and seconds.
    Downloaded(u64, f64),
    /// The archive could not be reached, so the newest cached kernel of
    /// what was asked is used; why.
    Offline(String),
}

/// What a resolution read: the archive's words about an index past its
/// Valid-Until date, when it was read all the same.
const STALE: &str = "an index past its Valid-Until date (a mirror or snapshot serving an old copy, or this machine's clock), read all the same: its signature checked, its freshness not";

/// A kernel resolved: held in the cache, and how it got there.
#[derive(Debug)]
pub struct Resolved {
    /// The kernel, held.
    pub held: Held,
    /// How it got there.
    pub how: How,
    /// The archive's words when its index was past its Valid-Until date
    /// and was read all the same.
    pub stale: Option<String>,
}

impl Resolved {
    /// The resolution in a line: `linux-image-… 6.1.192-3
    /// (bookworm-security), release 6.1.0-57-cloud-amd64: cached`.
    pub fn summary(&self) -> String {
        let e = &self.held.entry;
        let how = match &self.how {
            How::Cached => "cached".to_string(),
            How::Downloaded(b, s) => format!(
                "downloaded {} in {}",
                crate::units::fmt_bytes(*b),
                crate::units::fmt_secs(*s)
            ),
            How::Offline(why) => format!("cached (the archive could not be reached: {why})"),
        };
        format!(
            "{} {} ({}), release {}: {how}",
            e.package, e.version, e.suite, e.release
        )
    }
}

/// What the archive's indices say a resolution is.
#[derive(Debug, Clone, PartialEq)]
struct Chosen {
    package: String,
    version: String,
    suite: String,
    debs: Vec<DebFile>,
}

/// Resolves `asked` into `cache` (made if missing): the indices updated,
/// the newest kernel chosen and fetched unless cached. `say` is told
/// what is going on (waiting for the lock, downloading).
pub fn resolve(
    asked: &Asked,
    cache: &Cache,
    say: &mut dyn FnMut(&str),
) -> anyhow::Result<Resolved> {
    let archive = Archive::from_env().map_err(anyhow::Error::msg)?;
    let tools = apt::tools(&archive.keyring).map_err(anyhow::Error::msg)?;
    cache.make()?;
    let lock = cache.lock(say)?;
    cache.sweep(&lock);
    let apt = Apt::prepare(
        &tools,
        &cache.apt_dir(asked.dist.name),
        asked.dist,
        &archive,
    )?;
    say(&format!(
        "kernel:debian:{asked}: reading the {} indices of {}",
        asked.dist.name,
        archive.name()
    ));
    let mut updated = apt.update(false);
    let mut stale = None;
    if let Err(UpdateFailed::Refused(why)) = &updated
        && apt::only_expired(why)
    {
        say(&format!("kernel:debian:{asked}: {STALE}: {why}"));
        stale = Some(why.clone());
        updated = apt.update(true);
    }
    match updated {
        Ok(()) => {}
        Err(UpdateFailed::Refused(why)) => bail!(
            "kernel:debian:{asked}: Debian's archive ({}) failed apt's checks, so nothing of it is used: {why}{}",
            archive.name(),
            if why.contains("is expired") {
                " (an index past its Valid-Until date: a mirror or proxy serving an old copy, or this machine's clock)"
            } else {
                ""
            }
        ),
        Err(UpdateFailed::Unreachable(why)) => {
            return match cache.newest(asked)? {
                Some(dir) => Ok(Resolved {
                    held: cache.hold(&dir)?,
                    how: How::Offline(why),
                    stale,
                }),
                None => bail!(
                    "kernel:debian:{asked}: Debian's archive ({}) could not be read and no kernel of {asked} is cached: {why}",
                    archive.name()
                ),
            };
        }
    }
    let chosen = choose(&apt, asked).with_context(|| format!("kernel:debian:{asked}"))?;
    let dir = cache.entry_dir(&chosen.package, &chosen.version);
    if dir.join("entry.json").is_file() {
        return Ok(Resolved {
            held: cache.hold(&dir)?,
            how: How::Cached,
            stale,
        });
    }
    let size: u64 = chosen.debs.iter().map(|d| d.size).sum();
    say(&format!(
        "kernel:debian:{asked}: downloading {} {} ({}, {} in {} package{})",
        chosen.package,
        chosen.version,
        chosen.suite,
        crate::units::fmt_bytes(size),
        chosen.debs.len(),
        if chosen.debs.len() == 1 { "" } else { "s" }
    ));
    let entry = fetch(&tools, &apt, cache, &chosen, asked, &lock)
        .with_context(|| format!("kernel:debian:{asked}: {}", chosen.package))?;
    Ok(Resolved {
        held: cache.hold(&dir)?,
        how: How::Downloaded(entry.download_bytes, entry.download_seconds),
        stale,
    })
}

/// The kernel the indices name for `asked`: the image package (for a
/// line, what `linux-image-cloud-amd64`, or its flavour's meta package,
/// depends on), the packages it is split into (sid's `linux-binary-…`,
/// `linux-modules-…`, `linux-base-…`), its version and suite.
fn choose(apt: &Apt, asked: &Asked) -> anyhow::Result<Chosen> {
    let image = match &asked.want {
        Want::Package(p) => p.clone(),
        Want::Line(_) | Want::Newest => {
            let meta = apt.show(&[&asked.flavour.meta()])?.remove(0);
            image_of(&meta)?
        }
    };
    let record = apt.show(&[&image])?.remove(0);
    let version = field(&record, "Version")?.to_string();
    if let Want::Line(l) = asked.want
        && super::line_of(&version).as_deref() != Some(l)
    {
        bail!(
            "{} has {image} {version} now, not a {l} kernel (kernel:debian:{} takes whatever it has)",
            asked.dist.name,
            if asked.dist.name == "sid" {
                "sid"
            } else {
                asked.dist.line
            }
        );
    }
    let abi = image.trim_start_matches("linux-image-");
    let parts: Vec<String> = record
        .get("Depends")
        .map(apt::depends)
        .unwrap_or_default()
        .into_iter()
        .filter(|d| {
            ["linux-binary-", "linux-modules-", "linux-base-"]
                .iter()
                .any(|p| d.strip_prefix(p) == Some(abi))
        })
        .collect();
    let mut debs = vec![deb(&record)?];
    if !parts.is_empty() {
        let names: Vec<&str> = parts.iter().map(String::as_str).collect();
        for r in apt.show(&names)? {
            debs.push(deb(&r)?);
        }
    }
    let suite = apt.suite_of(&image, &version)?;
    Ok(Chosen {
        package: image,
        version,
        suite,
        debs,
    })
}

/// The image package a meta package depends on.
fn image_of(meta: &Stanza) -> anyhow::Result<String> {
    let deps = apt::depends(field(meta, "Depends")?);
    deps.into_iter()
        .find(|d| d.starts_with("linux-image-") && !d.ends_with("-dbg"))
        .with_context(|| {
            format!(
                "{} depends on no linux-image-… package",
                meta.get("Package").unwrap_or("the meta package")
            )
        })
}

/// Field `name` of record `r`, or an error naming both.
fn field<'a>(r: &'a Stanza, name: &str) -> anyhow::Result<&'a str> {
    r.get(name).with_context(|| {
        format!(
            "the archive's record of {} has no {name}",
            r.get("Package").unwrap_or("a package")
        )
    })
}

/// A package's `.deb` as its record lists it.
fn deb(r: &Stanza) -> anyhow::Result<DebFile> {
    let sha256 = field(r, "SHA256")?.to_ascii_lowercase();
    if sha256.len() != 64 || !sha256.chars().all(|c| c.is_ascii_hexdigit()) {
        bail!(
            "{}: SHA256 `{sha256}` is not a SHA-256",
            field(r, "Package")?
        );
    }
    Ok(DebFile {
        package: field(r, "Package")?.to_string(),
        version: field(r, "Version")?.to_string(),
        size: field(r, "Size")?
            .parse()
            .with_context(|| format!("{}: Size", field(r, "Package").unwrap_or("?")))?,
        sha256,
    })
}

/// Downloads, checks, unpacks and indexes `chosen` in a `.partial-…`
/// directory and renames it into place (under `_lock`); a failure
/// leaves nothing.
fn fetch(
    tools: &Tools,
    apt: &Apt,
    cache: &Cache,
    chosen: &Chosen,
    asked: &Asked,
    _lock: &Lock,
) -> anyhow::Result<Entry> {
    let partial = cache.partial_dir(&chosen.package, &chosen.version);
    let made = (|| {
        let entry = build(tools, apt, &partial, chosen, asked)?;
        let text = serde_json::to_string_pretty(&entry)?;
        std::fs::write(partial.join("entry.json"), text + "\n")?;
        let dir = cache.entry_dir(&chosen.package, &chosen.version);
        std::fs::rename(&partial, &dir).with_context(|| dir.display().to_string())?;
        Ok(entry)
    })();
    if made.is_err() {
        let _ = std::fs::remove_dir_all(&partial);
    }
    made
}

/// The `.deb` of `d` in `dir`, checked against the index's SHA-256 and
/// size.
fn checked_deb(dir: &Path, d: &DebFile) -> anyhow::Result<PathBuf> {
    use sha2::Digest;
    let prefix = format!("{}_", d.package);
    let path = std::fs::read_dir(dir)?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".deb"))
        })
        .with_context(|| format!("apt-get download left no {prefix}….deb"))?;
    let bytes = std::fs::read(&path).with_context(|| path.display().to_string())?;
    let sum = hex(&sha2::Sha256::digest(&bytes));
    if sum != d.sha256 || bytes.len() as u64 != d.size {
        bail!(
            "{}: SHA-256 {sum} and {} bytes, where the signed index says {} and {}",
            path.display(),
            bytes.len(),
            d.sha256,
            d.size
        );
    }
    Ok(path)
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Fetches `chosen` into `partial` (made afresh): downloaded, checked,
/// unpacked into `root/`, `.deb`s removed, `depmod` run. Its entry.
fn build(
    tools: &Tools,
    apt: &Apt,
    partial: &Path,
    chosen: &Chosen,
    asked: &Asked,
) -> anyhow::Result<Entry> {
    use sha2::Digest;
    let _ = std::fs::remove_dir_all(partial);
    let debs_dir = partial.join("debs");
    std::fs::create_dir_all(&debs_dir).with_context(|| debs_dir.display().to_string())?;
    let wanted: Vec<(String, String)> = chosen
        .debs
        .iter()
        .map(|d| (d.package.clone(), d.version.clone()))
        .collect();
    let started = std::time::Instant::now();
    apt.download(&debs_dir, &wanted)?;
    let seconds = started.elapsed().as_secs_f64();
    let mut files = Vec::new();
    for d in &chosen.debs {
        files.push((d.package.clone(), checked_deb(&debs_dir, d)?));
    }
    let root = partial.join("root");
    let layout = unpack::unpack(tools, &files, &root)?;
    std::fs::remove_dir_all(&debs_dir).with_context(|| debs_dir.display().to_string())?;
    unpack::depmod(tools, &root, &layout)?;
    let config = match &layout.config {
        Some((p, package)) => {
            let bytes = std::fs::read(root.join(p)).with_context(|| p.display().to_string())?;
            Some(ConfigFile {
                path: format!("/{}", p.display()),
                package: package.clone(),
                sha256: hex(&sha2::Sha256::digest(&bytes)),
            })
        }
        None => None,
    };
    Ok(Entry {
        archive: "debian".into(),
        dist: asked.dist.name.into(),
        line: super::line_of(&chosen.version).unwrap_or_else(|| chosen.version.clone()),
        package: chosen.package.clone(),
        version: chosen.version.clone(),
        suite: chosen.suite.clone(),
        release: layout.release.clone(),
        debs: chosen.debs.clone(),
        kernel: layout.kernel.display().to_string(),
        modules: layout.modules.display().to_string(),
        config,
        fetched: crate::results::now_rfc3339(),
        download_bytes: chosen.debs.iter().map(|d| d.size).sum(),
        download_seconds: (seconds * 10.0).round() / 10.0,
        bytes: super::cache::size_of(&root),
    })
}
