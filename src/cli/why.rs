//! `scalebench why RESULT.json`: profile the benchmarks of a result file at
//! low and high n (the n each reached), and store the profiles in it.

use super::WhyArgs;
use crate::bench;
use crate::ctx::Ctx;
use crate::harness::clock::Clock;
use crate::harness::workdir::WorkDir;
use crate::harness::{limits, reaper};
use crate::results::TimerKind;
use crate::results::{self, Status, output};
use crate::run::why::{WhyOptions, profile};
use anyhow::{Context, bail};
use std::process::ExitCode;

/// The variant in a series name: `httpreq[poll]` → `poll`.
fn variant_of(series: &str) -> Option<&str> {
    let (_, rest) = series.split_once('[')?;
    rest.strip_suffix(']')
}

/// `scalebench why`.
pub fn run(a: WhyArgs) -> anyhow::Result<ExitCode> {
    let mut file = results::load(&a.file)?;
    for o in &a.only {
        if !file
            .benchmarks
            .iter()
            .any(|b| &b.name == o || &b.series == o)
        {
            bail!("--only {o}: {} has no such benchmark", a.file.display());
        }
    }
    let host = crate::sys::uname().nodename;
    if file.system.hostname != host && !a.any_host {
        bail!(
            "{} was measured on {}, this is {host}: a profile here would not explain those numbers (--any-host to profile anyway)",
            a.file.display(),
            file.system.hostname
        );
    }
    // Written by this version from now on.
    file.schema_version = results::SCHEMA_VERSION;
    let out = a.out.clone().unwrap_or_else(|| a.file.clone());
    if !output::same_file(&out, &a.file) {
        output::check(
            "--out",
            &out,
            output::Existing::forced(a.force),
            &[(&a.file, "the input file")],
        )?;
    }
    let clock = Clock::new(TimerKind::Monotonic)?;
    reaper::install();
    let workdir = WorkDir::create_with(a.workdir.as_deref(), crate::workloads::release_stale)?;
    for n in workdir.swept() {
        eprintln!("work dir: {n}");
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
    let opts = WhyOptions {
        seconds: a.seconds,
        profiler_cmd: a.profiler.clone(),
    };
    let say = |m: &str| {
        if !a.quiet {
            eprintln!("{m}");
        }
    };
    let mut done = 0;
    let mut errors = 0;
    let mut kept = 0;
    for i in 0..file.benchmarks.len() {
        if crate::stop::interrupted() {
            break;
        }
        let b = &file.benchmarks[i];
        if !a.only.is_empty() && !a.only.iter().any(|o| *o == b.name || *o == b.series) {
            continue;
        }
        if !matches!(b.status, Status::Ok | Status::Capped) {
            continue;
        }
        let Some(bench) = bench::find(&b.name) else {
            say(&format!(
                "{}: this scalebench has no such benchmark",
                b.series
            ));
            continue;
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
            &ctx,
            b.params.n,
            capped,
            &opts,
        );
        let stored_good = b.profile.as_ref().is_some_and(|q| q.error.is_none());
        match (&p.error, &p.explanation) {
            (Some(e), _) => {
                errors += 1;
                if stored_good {
                    kept += 1;
                    say(&format!(
                        "{}: no profile: {e}; the profile stored before is kept",
                        b.series
                    ));
                    continue;
                }
                say(&format!("{}: no profile: {e}", b.series));
            }
            (None, Some(x)) => say(&format!("{}: {x}", b.series)),
            (None, None) => {}
        }
        if p.error.is_none() {
            done += 1;
        }
        file.benchmarks[i].profile = Some(p);
        results::write_atomic(&out, &file)
            .with_context(|| format!("cannot write the result file {}", out.display()))?;
    }
    drop(guard);
    drop(workdir);
    let failed = if errors > 0 {
        format!(
            "; {errors} failed{}",
            if kept > 0 {
                format!(" ({kept} kept the profile stored before)")
            } else {
                String::new()
            }
        )
    } else {
        String::new()
    };
    eprintln!(
        "{done} benchmark{} profiled into {}{failed}",
        if done == 1 { "" } else { "s" },
        out.display()
    );
    Ok(if errors > 0 || crate::stop::interrupted() {
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
