//! `scalebench why RESULT.json`: the benchmarks of a result file profiled
//! at low and high n (the n each reached), each profile stored in the file
//! as soon as it is taken.

use super::why::{WhyOptions, profile};
use crate::bench;
use crate::ctx::Ctx;
use crate::harness::clock::Clock;
use crate::harness::workdir::WorkDir;
use crate::harness::{limits, reaper};
use crate::results::{self, ResultFile, Status, TimerKind, output};
use anyhow::{Context, bail};
use std::path::PathBuf;
use std::process::ExitCode;

/// What `why` is asked.
#[derive(Debug, Clone, Default)]
pub struct WhyFile {
    /// The result file.
    pub file: PathBuf,
    /// Only these benchmarks (names or series).
    pub only: Vec<String>,
    /// Write here instead of over the input.
    pub out: Option<PathBuf>,
    /// Replace an existing `out`.
    pub force: bool,
    /// Profile a file measured on another host.
    pub any_host: bool,
    /// The profile windows.
    pub windows: WhyOptions,
    /// Where to make the work directory.
    pub workdir: Option<PathBuf>,
    /// No progress on standard error.
    pub quiet: bool,
}

/// The variant in a series name: `httpreq[poll]` → `poll`.
fn variant_of(series: &str) -> Option<&str> {
    let (_, rest) = series.split_once('[')?;
    rest.strip_suffix(']')
}

/// The file, checked: every `--only` names a benchmark of it, it was
/// measured here (unless any host will do), and the output may be
/// written; with where the profiles go.
fn open(w: &WhyFile) -> anyhow::Result<(ResultFile, PathBuf)> {
    let mut file = results::load(&w.file)?;
    for o in &w.only {
        if !file
            .benchmarks
            .iter()
            .any(|b| &b.name == o || &b.series == o)
        {
            bail!("--only {o}: {} has no such benchmark", w.file.display());
        }
    }
    let host = crate::sys::uname().nodename;
    if file.system.hostname != host && !w.any_host {
        bail!(
            "{} was measured on {}, this is {host}: a profile here would not explain those numbers (--any-host to profile anyway)",
            w.file.display(),
            file.system.hostname
        );
    }
    // Written by this version from now on.
    file.schema_version = results::SCHEMA_VERSION;
    let out = w.out.clone().unwrap_or_else(|| w.file.clone());
    if !output::same_file(&out, &w.file) {
        output::check(
            "--output",
            &out,
            output::Existing::forced(w.force),
            &[(&w.file, "the input file")],
        )?;
    }
    Ok((file, out))
}

/// What the profiles came to.
#[derive(Default)]
struct Tally {
    done: usize,
    errors: usize,
    kept: usize,
}

/// Profiles benchmark `i` of `file` when asked and possible; the new
/// profile replaces the stored one unless it failed where the stored one
/// had not. Whether `file` changed.
fn profile_one(w: &WhyFile, file: &mut ResultFile, i: usize, ctx: &Ctx, t: &mut Tally) -> bool {
    let say = |m: &str| {
        if !w.quiet {
            sys::say!("{m}");
        }
    };
    let b = &file.benchmarks[i];
    if !w.only.is_empty() && !w.only.iter().any(|o| *o == b.name || *o == b.series) {
        return false;
    }
    if !matches!(b.status, Status::Ok | Status::Capped) {
        return false;
    }
    let Some(bench) = bench::find(&b.name) else {
        say(&format!(
            "{}: this scalebench has no such benchmark",
            b.series
        ));
        return false;
    };
    say(&format!(
        "{}: profiling at n = {} and n = {}",
        b.series,
        (b.params.n / 10).max(1),
        b.params.n
    ));
    let capped = b.status == Status::Capped;
    let p = profile(
        bench,
        variant_of(&b.series),
        ctx,
        b.params.n,
        capped,
        &w.windows,
    );
    let stored_good = b.profile.as_ref().is_some_and(|q| q.error.is_none());
    match (&p.error, &p.explanation) {
        (Some(e), _) if stored_good => {
            t.errors += 1;
            t.kept += 1;
            say(&format!(
                "{}: no profile: {e}; the profile stored before is kept",
                b.series
            ));
            return false;
        }
        (Some(e), _) => {
            t.errors += 1;
            say(&format!("{}: no profile: {e}", b.series));
        }
        (None, Some(x)) => say(&format!("{}: {x}", b.series)),
        (None, None) => {}
    }
    if p.error.is_none() {
        t.done += 1;
    }
    file.benchmarks[i].profile = Some(p);
    true
}

/// Profiles the benchmarks of the file `w` names and stores each profile
/// in it (or in `--out`) as soon as it is taken; says what was done. Exit
/// status 1 when a profile failed or ^C stopped it.
pub fn why(w: &WhyFile) -> anyhow::Result<ExitCode> {
    let (mut file, out) = open(w)?;
    let clock = Clock::new(TimerKind::Monotonic)?;
    reaper::install();
    let workdir = WorkDir::create_with(w.workdir.as_deref(), crate::workloads::release_stale)?;
    for n in workdir.swept() {
        sys::say!("work dir: {n}");
    }
    let guard = limits::raise();
    // The network benchmarks as they were run: the same address family.
    let ipv6 = file.benchmarks.iter().any(|b| {
        b.params
            .extra
            .get("address_family")
            .and_then(|v| v.as_str())
            == Some("ipv6")
    });
    let ctx = Ctx::new(workdir.path(), &clock).with_net(crate::harness::NetOptions {
        ipv6,
        ..crate::harness::NetOptions::default()
    });
    let mut t = Tally::default();
    for i in 0..file.benchmarks.len() {
        if crate::stop::interrupted() {
            break;
        }
        if profile_one(w, &mut file, i, &ctx, &mut t) {
            results::write_atomic(&out, &file)
                .with_context(|| format!("cannot write the result file {}", out.display()))?;
        }
    }
    drop(guard);
    drop(workdir);
    let failed = match (t.errors, t.kept) {
        (0, _) => String::new(),
        (e, 0) => format!("; {e} failed"),
        (e, k) => format!("; {e} failed ({k} kept the profile stored before)"),
    };
    sys::say!(
        "{} benchmark{} profiled into {}{failed}",
        t.done,
        if t.done == 1 { "" } else { "s" },
        out.display()
    );
    Ok(if t.errors > 0 || crate::stop::interrupted() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_come_from_series_names() {
        assert_eq!(variant_of("httpreq[poll]"), Some("poll"));
        assert_eq!(variant_of("bind"), None);
    }
}
