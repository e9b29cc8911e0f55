//! `scalebench kernels list|fetch|prune`: the cache of Linux kernels
//! fetched from Debian's archive (`run --system NAME=kernel:debian:6.1`;
//! the cache and the fetching are `systems::debian`). This file parses
//! and prints.

use super::output::to_stdout;
use crate::systems::debian::Asked;
use crate::systems::debian::cache::{Cache, Listed, Pruned};
use crate::systems::debian::fetch;
use crate::units::fmt_bytes;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// `--cache`, shared by the `kernels` commands.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct CacheArg {
    /// The kernel cache [default: $SCALEBENCH_KERNEL_CACHE, else
    /// $XDG_CACHE_HOME/scalebench/kernels, else
    /// ~/.cache/scalebench/kernels].
    #[arg(long = "cache", value_name = "DIR")]
    pub cache: Option<PathBuf>,
}

/// The `kernels` commands.
#[derive(Debug, clap::Subcommand)]
pub enum KernelsCommand {
    /// The kernels in the cache: line, package, version, release
    /// (`uname -r`), size, when fetched.
    #[command(after_help = super::help::KERNELS_LIST)]
    List(ListArgs),
    /// Fetch the newest kernel of each VERSION into the cache now
    /// (nothing is downloaded when it is there already).
    #[command(after_help = super::help::KERNELS_FETCH)]
    Fetch(FetchArgs),
    /// Remove kernels from the cache (only what the cache holds; a
    /// kernel a running scalebench boots is kept).
    #[command(after_help = super::help::KERNELS_PRUNE)]
    Prune(PruneArgs),
}

/// Options of `kernels list`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Print JSON: the cache and every field of each kernel.
    #[arg(long)]
    pub json: bool,
    /// The cache.
    #[command(flatten)]
    pub cache: CacheArg,
}

/// Options of `kernels fetch`.
#[derive(Debug, clap::Args)]
pub struct FetchArgs {
    /// Which kernels: a line (5.10, 6.1, 6.12, 7.2), `sid`, or a
    /// package's name (`linux-image-6.1.0-57-cloud-amd64`); a line or sid
    /// of another flavour than cloud as `6.1,flavour=generic` (or `rt`).
    #[arg(value_name = "VERSION", required = true, num_args = 1.., value_parser = parse_version)]
    pub versions: Vec<Asked>,
    /// The cache.
    #[command(flatten)]
    pub cache: CacheArg,
}

/// Options of `kernels prune`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("which").required(true).args(["versions", "all"])))]
pub struct PruneArgs {
    /// The kernels to remove: of a line (`6.1`, `6.1,flavour=generic`),
    /// sid's (`sid`), or a package's (`linux-image-…`).
    #[arg(value_name = "VERSION", value_parser = parse_version)]
    pub versions: Vec<Asked>,
    /// Every kernel, every damaged entry and apt's indices.
    #[arg(long, conflicts_with = "versions")]
    pub all: bool,
    /// Print what would be removed, remove nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The cache.
    #[command(flatten)]
    pub cache: CacheArg,
}

/// A VERSION of `kernel:debian:VERSION`.
fn parse_version(s: &str) -> Result<Asked, String> {
    s.parse()
}

/// Runs a `kernels` command.
pub fn run(c: KernelsCommand) -> anyhow::Result<ExitCode> {
    match c {
        KernelsCommand::List(a) => list(&a),
        KernelsCommand::Fetch(a) => fetch_all(&a),
        KernelsCommand::Prune(a) => prune(&a),
    }
}

/// `kernels list`.
fn list(a: &ListArgs) -> anyhow::Result<ExitCode> {
    let cache = Cache::locate(a.cache.cache.as_deref())?;
    let listed = cache.list()?;
    if a.json {
        let doc = serde_json::json!({
            "cache": cache.dir(),
            "kernels": listed.iter().filter_map(|l| {
                let mut v = serde_json::to_value(l.entry.as_ref().ok()?).ok()?;
                v["path"] = serde_json::json!(l.dir);
                Some(v)
            }).collect::<Vec<_>>(),
            "damaged": listed.iter().filter_map(|l| {
                let why = l.entry.as_ref().err()?;
                Some(serde_json::json!({"path": l.dir, "why": why}))
            }).collect::<Vec<_>>(),
        });
        to_stdout(|w| -> anyhow::Result<()> {
            serde_json::to_writer_pretty(&mut *w, &doc)?;
            writeln!(w)?;
            Ok(())
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    to_stdout(|w| -> anyhow::Result<()> {
        write_list(w, &cache, &listed)?;
        Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The cache's kernels, two lines each (a table of seven columns would
/// not fit the terminal's 100), then the total.
fn write_list(w: &mut dyn Write, cache: &Cache, listed: &[Listed]) -> std::io::Result<()> {
    if listed.is_empty() {
        return writeln!(w, "no kernel cached in {}", cache.dir().display());
    }
    for l in listed {
        match &l.entry {
            Ok(e) => {
                writeln!(w, "{:<5} {} {} ({})", e.line, e.package, e.version, e.suite)?;
                writeln!(
                    w,
                    "      release {}, {}, fetched {}",
                    e.release,
                    fmt_bytes(e.bytes),
                    e.fetched
                )?;
            }
            Err(why) => writeln!(w, "?     damaged: {why}")?,
        }
    }
    let total: u64 = listed
        .iter()
        .filter_map(|l| l.entry.as_ref().ok())
        .map(|e| e.bytes)
        .sum();
    writeln!(
        w,
        "{} kernel{}, {} in {}",
        listed.len(),
        if listed.len() == 1 { "" } else { "s" },
        fmt_bytes(total),
        cache.dir().display()
    )
}

/// `kernels fetch`: each VERSION resolved in turn; a failure is named
/// and the others still fetched (status 1).
fn fetch_all(a: &FetchArgs) -> anyhow::Result<ExitCode> {
    crate::harness::reaper::install();
    let cache = Cache::locate(a.cache.cache.as_deref())?;
    let mut failed = 0;
    for v in &a.versions {
        if crate::stop::interrupted() {
            return Ok(ExitCode::from(130));
        }
        match fetch::resolve(v, &cache, &mut |m| sys::say!("{m}")) {
            Ok(r) => to_stdout(|w| -> anyhow::Result<()> {
                writeln!(w, "{v}: {}", r.summary())?;
                Ok(())
            })?,
            Err(e) => {
                failed += 1;
                sys::say!("error: {}", super::error_words(&e));
            }
        }
    }
    Ok(if crate::stop::interrupted() {
        ExitCode::from(130)
    } else if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// `kernels prune`: a line for each kernel removed (or kept, and why),
/// then the total.
fn prune(a: &PruneArgs) -> anyhow::Result<ExitCode> {
    let cache = Cache::locate(a.cache.cache.as_deref())?;
    let pruned = cache.prune(&a.versions, a.all, a.dry_run)?;
    to_stdout(|w| -> anyhow::Result<()> {
        write_pruned(w, &cache, &pruned, a)?;
        Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// What `prune` did, a line each, then the total.
fn write_pruned(
    w: &mut dyn Write,
    cache: &Cache,
    pruned: &[Pruned],
    a: &PruneArgs,
) -> std::io::Result<()> {
    let verb = if a.dry_run { "would remove" } else { "removed" };
    if pruned.is_empty() {
        let what: Vec<String> = a.versions.iter().map(|v| v.to_string()).collect();
        return writeln!(
            w,
            "nothing in {} {}",
            cache.dir().display(),
            if a.all {
                "to remove".to_string()
            } else {
                format!("matches {}", what.join(", "))
            }
        );
    }
    let mut freed = 0;
    for p in pruned {
        match &p.kept {
            Some(why) => writeln!(w, "kept {}: {why}", p.what)?,
            None => {
                freed += p.bytes;
                writeln!(w, "{verb} {}, {}", p.what, fmt_bytes(p.bytes))?;
            }
        }
    }
    writeln!(
        w,
        "{} {} from {}",
        if a.dry_run { "would free" } else { "freed" },
        fmt_bytes(freed),
        cache.dir().display()
    )
}
