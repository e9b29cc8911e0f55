//! What a run does, from its options: the benchmark series and workloads
//! in order (names and suites resolved), the sweep, each workload's own
//! options, the tuning profiles and the hosts, all checked before
//! anything is measured.

use super::series::AutoRuns;
use super::spec::{OptionError, RunSpec};
use super::suite::{self, Suite, SuiteItem};
use super::why::WhyOptions;
use crate::bench::{self, Benchmark};
use crate::hosts::HostSpec;
use crate::systems::spec::{Kind, SystemSpec};
use crate::tuning::TuningProfile;
use crate::values::Runs;
use crate::workloads::{self, Asked, Given, Own, Size, SweepOptions, WORKLOADS, Workload};
use anyhow::bail;
use std::path::Path;
use std::path::PathBuf;

/// An error about the option `key` of the run request, which a suite
/// file may have set ([`OptionError`]).
fn opt(key: &'static str, words: impl Into<String>) -> anyhow::Error {
    OptionError::new(key, words).into()
}

/// An error about option `key` naming what cannot be used here (a file,
/// what this machine lacks): exit status 1.
fn failed(key: &'static str, words: impl Into<String>) -> anyhow::Error {
    OptionError::failed(key, words).into()
}

/// A profile that cannot be had, as an error of option `key`: a usage
/// error for a name that is no profile, a failure for a file that cannot
/// be read or used.
fn profile_error(
    key: &'static str,
    e: &crate::tuning::ProfileError,
    words: String,
) -> anyhow::Error {
    if e.is_usage() {
        opt(key, words)
    } else {
        failed(key, words)
    }
}

/// A benchmark to run and its n.
pub struct Target {
    /// The benchmark.
    pub bench: &'static dyn Benchmark,
    /// Items per run.
    pub n: u64,
}

/// A workload to run, its size and its own options.
pub struct WorkTarget {
    /// The workload.
    pub workload: &'static dyn Workload,
    /// How big.
    pub size: Size,
    /// Its own options ([`Workload::options`]).
    pub own: Option<Own>,
}

/// What a run does.
pub struct RunPlan {
    /// Benchmarks, in order.
    pub targets: Vec<Target>,
    /// Workloads, in order, after the benchmarks.
    pub work: Vec<WorkTarget>,
    /// The sweep every workload is asked for.
    pub sweep: Option<SweepOptions>,
    /// Workloads shrunk to what this machine holds (`--fit`).
    pub fit: bool,
    /// Runs per benchmark.
    pub runs: u32,
    /// `--runs auto`: add runs until the ends of n are known, up to `runs`.
    pub auto: Option<AutoRuns>,
    /// Without `--runs`: stop each series once its verdict is decided,
    /// up to `runs`.
    pub decide: bool,
    /// Judge each series here once its runs are done and keep the verdict
    /// with it; `false` for `__run`, whose asker judges what it is sent
    /// (`RunOptions::judged_by_asker`).
    pub keep_verdicts: bool,
    /// Warm-up operations (`None`: the benchmark's default).
    pub warmup: Option<u64>,
    /// How each run visits n (`--order`).
    pub order: crate::harness::series::RunOrder,
    /// The run's time goal (`--within`) and when the run began.
    pub within: Option<(std::time::Duration, std::time::Instant)>,
    /// Profile each benchmark at low and high n afterwards (`--why`).
    pub why: Option<WhyOptions>,
    /// The tuning profiles to measure under, each with its own result
    /// file; empty: the system as it is, one result file.
    pub profiles: Vec<TuningProfile>,
    /// Where the client and the server run (`--host`); empty: both here.
    pub hosts: Vec<HostSpec>,
    /// ssh's configuration file for ssh hosts.
    pub ssh_config: Option<PathBuf>,
    /// The systems the plan runs on side by side, each with its own
    /// result file; empty: this machine alone, as it always did.
    pub systems: Vec<SystemSpec>,
    /// The static scalebench a `kernel:` system runs (none: found).
    pub guest_bin: Option<PathBuf>,
    /// What an emulated guest's clock counts.
    pub guest_clock: crate::systems::qemu::GuestClock,
    /// What the monitor samples during every series and workload (none:
    /// `--monitor off`).
    pub monitor: Option<crate::harness::monitor::Settings>,
}

impl RunPlan {
    /// The options workload `w` runs with: the run's sweep, its own
    /// options, and `mounts`, a tuning profile's mount options.
    pub fn work_options(
        &self,
        w: &WorkTarget,
        mounts: Option<String>,
    ) -> workloads::WorkloadOptions {
        workloads::WorkloadOptions {
            size: w.size,
            sweep: self.sweep.clone(),
            fit: self.fit,
            profile_mounts: mounts,
            own: w.own.clone(),
        }
    }

    /// The names that split the run into result files: its tuning
    /// profiles or its systems when there are several (none: one file).
    pub fn parts(&self) -> Vec<String> {
        if self.profiles.len() > 1 {
            self.profiles.iter().map(|p| p.name.clone()).collect()
        } else if self.systems.len() > 1 {
            self.systems.iter().map(|s| s.name.clone()).collect()
        } else {
            Vec::new()
        }
    }

    /// The directories the workloads measure in, beyond the work
    /// directory (their filesystems go in the system record).
    pub fn dirs(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = Vec::new();
        for w in &self.work {
            for d in w.workload.dirs(&self.work_options(w, None)) {
                if !v.contains(&d) {
                    v.push(d);
                }
            }
        }
        v
    }
}

/// Every series of `plan`: each benchmark with each of its variants.
pub(super) fn all_series<'a>(
    plan: &'a RunPlan,
    ctx: &crate::ctx::Ctx,
) -> Vec<(&'a Target, Option<String>)> {
    plan.targets
        .iter()
        .flat_map(|t| {
            let v = t.bench.variants(ctx);
            if v.is_empty() {
                vec![(t, None)]
            } else {
                v.into_iter().map(|v| (t, Some(v))).collect()
            }
        })
        .collect()
}

/// The workloads a run names, each with its size.
pub type Chosen = Vec<(&'static dyn Workload, Size)>;

/// The run's time goal, from now: one system's run only (several, or
/// several profiles, alternate each series at the same n).
fn within(m: &RunSpec) -> anyhow::Result<Option<(std::time::Duration, std::time::Instant)>> {
    let Some(crate::values::TimeGoal::Within(goal)) = m.within else {
        return Ok(None);
    };
    let side_by_side = m.systems.len() > 1
        || m.systems.iter().any(|s| s.kind != Kind::Local)
        || m.profiles.len() > 1;
    if side_by_side {
        return Err(opt(
            "within",
            "--within keeps one system's run to a time: systems or profiles side by side measure every series at the same n (give --within off)",
        ));
    }
    Ok(Some((goal, std::time::Instant::now())))
}

/// Turns names and suites into benchmarks with sizes and workloads, in
/// order, without repeats: a suite (built-in, or a file read into
/// `suites`) brings its items at its sizes, a name on its own gets the
/// quick size, or the full one with `full`; `max` is every benchmark's n.
/// Unknown names are an error that suggests the nearest.
pub fn resolve(
    targets: &[String],
    max: Option<u64>,
    full: bool,
    suites: &[Suite],
) -> anyhow::Result<(Vec<Target>, Chosen)> {
    let names: Vec<String> = if targets.is_empty() {
        vec!["quick".into()]
    } else {
        targets.to_vec()
    };
    let mut out: Vec<Target> = Vec::new();
    let mut work: Chosen = Vec::new();
    let mut push = |item: SuiteItem| match item {
        SuiteItem::Bench { bench, n } => {
            if !out.iter().any(|t| t.bench.info().name == bench.info().name) {
                out.push(Target {
                    bench,
                    n: max.unwrap_or(n),
                });
            }
        }
        SuiteItem::Work { workload, size } => {
            if !work.iter().any(|t| t.0.info().name == workload.info().name) {
                work.push((workload, size));
            }
        }
    };
    for name in &names {
        let file = suites.iter().find(|s| &s.origin == name);
        if let Some(s) = file.cloned().or_else(|| Suite::built_in(name)) {
            s.items.into_iter().for_each(&mut push);
        } else if suite::is_path(name) {
            bail!("{name}: a suite file not read before the plan was made");
        } else if let Some(bench) = bench::find(name) {
            let i = bench.info();
            let n = if full { i.full_n } else { i.quick_n };
            push(SuiteItem::Bench { bench, n });
        } else if let Some(workload) = workloads::find(name) {
            let size = if full { Size::Full } else { Size::Quick };
            push(SuiteItem::Work { workload, size });
        } else if std::path::Path::new(name).is_file() {
            refuse!(
                "`{name}` is a file, not a benchmark, workload or suite: a suite file's path holds a `/` or ends in .toml (./{name})"
            );
        } else {
            let hint =
                suite::nearest(name).map_or(String::new(), |k| format!("; did you mean `{k}`?"));
            refuse!(
                "unknown benchmark, workload or suite `{name}`{hint} (`scalebench list` shows them all)"
            );
        }
    }
    Ok((out, work))
}

/// Every workload flag given belongs to a workload of the run; a flag that
/// makes its workload sweep (`--memory-sweep`) to every workload of it.
fn check_flags(given: &Given, work: &[(&'static dyn Workload, Size)]) -> anyhow::Result<()> {
    let names: Vec<&str> = work.iter().map(|w| w.0.info().name).collect();
    for (flag, owners) in workloads::flags() {
        if !given.has(flag.name) {
            continue;
        }
        let whose = owners.join(" or ");
        if !owners.iter().any(|o| names.contains(o)) {
            let has = if names.is_empty() {
                "it runs no workload".to_string()
            } else {
                format!("its workloads: {}", names.join(", "))
            };
            return Err(opt(
                flag.name,
                format!(
                    "--{} is an option of {whose}, which this run does not have ({has})",
                    flag.name
                ),
            ));
        }
        if flag.sweeps
            && let Some(other) = names.iter().find(|n| !owners.contains(n))
        {
            return Err(opt(
                flag.name,
                format!(
                    "--{} is an option of {whose}; {other} does not take it",
                    flag.name
                ),
            ));
        }
    }
    Ok(())
}

/// The sweep asked for, checked before anything is measured: every
/// selected workload must sweep its variable, the baseline must be one of
/// its levels, and the sweep's timings need a sweep (`--sweep`, or a flag
/// that makes a workload sweep something of its own).
fn sweep_options(
    ask: &RunSpec,
    work: &[(&'static dyn Workload, Size)],
) -> anyhow::Result<Option<SweepOptions>> {
    let own_sweep = workloads::flags()
        .iter()
        .any(|(f, _)| f.sweeps && ask.given.has(f.name));
    let Some((variable, levels)) = &ask.sweep else {
        let timings = ask.warm_up.is_some() || ask.sample_time.is_some() || ask.samples.is_some();
        let by_default = !work.is_empty() && work.iter().all(|(w, _)| w.sweeps_by_default());
        if own_sweep || (timings && by_default && ask.baseline.is_none()) {
            return Ok(Some(SweepOptions {
                variable: String::new(),
                levels: Vec::new(),
                heat_up: ask.warm_up,
                sample: ask.sample_time,
                samples: ask.samples,
                baseline: ask.baseline.map(|b| b as f64),
            }));
        }
        // A baseline first: the workloads that sweep on their own take
        // the timings, not a baseline.
        for (given, name) in [
            (ask.baseline.is_some(), "baseline"),
            (ask.warm_up.is_some(), "warm-up"),
            (ask.sample_time.is_some(), "sample-time"),
            (ask.samples.is_some(), "samples"),
        ] {
            if given {
                // Which workloads would not take it: those measured once.
                let once: Vec<&str> = work
                    .iter()
                    .filter(|(w, _)| !w.sweeps_by_default())
                    .map(|(w, _)| w.info().name)
                    .collect();
                let hint = match once.as_slice() {
                    [one] if name != "baseline" => {
                        format!("{one} is measured once unless --sweep VAR=LEVEL,… is given")
                    }
                    many @ [_, _, ..] if name != "baseline" => format!(
                        "{} are measured once unless --sweep VAR=LEVEL,… is given",
                        many.join(", ")
                    ),
                    _ => "give --sweep VAR=LEVEL,… too".to_string(),
                };
                return Err(opt(name, format!("--{name} sets how a sweep runs: {hint}")));
            }
        }
        return Ok(None);
    };
    let able = |w: &dyn Workload| w.sweeps().contains(&variable.as_str());
    let who: Vec<&str> = WORKLOADS
        .iter()
        .filter(|w| able(**w))
        .map(|w| w.info().name)
        .collect();
    let hint = if who.is_empty() {
        format!("no workload sweeps {variable}")
    } else {
        format!("{variable} is swept by {}", who.join(", "))
    };
    if work.is_empty() {
        return Err(opt(
            "sweep",
            format!("--sweep {variable}=…: no workload selected ({hint})"),
        ));
    }
    if let Some(w) = work.iter().find(|w| !able(w.0)) {
        return Err(opt(
            "sweep",
            format!(
                "--sweep {variable}=…: {} cannot be swept over {variable} ({hint})",
                w.0.info().name
            ),
        ));
    }
    if let Some(b) = ask.baseline
        && !levels.contains(&(b as f64))
    {
        return Err(opt(
            "baseline",
            format!("--baseline {b}: not one of the --sweep levels"),
        ));
    }
    Ok(Some(SweepOptions {
        variable: variable.clone(),
        levels: levels.clone(),
        heat_up: ask.warm_up,
        sample: ask.sample_time,
        samples: ask.samples,
        baseline: ask.baseline.map(|b| b as f64),
    }))
}

/// The profiles of `--profile`, each once, checked before anything is
/// measured.
fn profiles(names: &[String]) -> anyhow::Result<Vec<TuningProfile>> {
    let mut out: Vec<TuningProfile> = Vec::new();
    for n in names.iter().map(|n| n.trim()) {
        if n.is_empty() {
            return Err(opt(
                "profile",
                "--profile: an empty name (give names or files, comma separated)",
            ));
        }
        let p = TuningProfile::find(n)
            .map_err(|e| profile_error("profile", &e, format!("--profile {n}: {}", e.why())))?;
        if out.iter().any(|q| q.name == p.name) {
            return Err(opt(
                "profile",
                format!("--profile: `{}` is given twice", p.name),
            ));
        }
        if let Some(e) = crate::tuning::apply::unacceptable(&p).first() {
            return Err(failed("profile", format!("--profile {n}: {e}")));
        }
        out.push(p);
    }
    Ok(out)
}

/// Why `p` is not a file to read, if it is not: missing, or a directory.
fn not_a_file(p: &Path) -> Option<&'static str> {
    if p.is_file() {
        None
    } else if p.is_dir() {
        Some("a directory, not a file")
    } else {
        Some("no such file")
    }
}

/// The systems of `--system`, checked before anything is measured: names
/// once each, this machine once, and what a system other than this
/// machine cannot do yet refused by name.
fn systems(m: &RunSpec) -> anyhow::Result<Vec<SystemSpec>> {
    crate::systems::spec::check(&m.systems).map_err(|e| opt("system", e))?;
    let elsewhere: Vec<&SystemSpec> = m.systems.iter().filter(|s| s.kind != Kind::Local).collect();
    if let Some(s) = elsewhere.first() {
        if !m.profiles.is_empty() {
            return Err(opt(
                "profile",
                format!(
                    "--profile with --system {}: --profile tunes this machine only; give another system its own with profile= (--system {0}=…,profile=NAME|FILE)",
                    s.name
                ),
            ));
        }
        if let Some(h) = m
            .hosts
            .iter()
            .find(|h| h.role != crate::hosts::Role::Client)
        {
            return Err(opt(
                "host",
                format!(
                    "--host {}=… with --system {}: each system runs client and server itself (`--host client=netns:…` only says where this scalebench runs)",
                    h.role.name(),
                    s.name
                ),
            ));
        }
    }
    for s in &elsewhere {
        let at = |what: String| failed("system", format!("--system {}: {what}", s.name));
        if let Some(p) = &s.profile {
            TuningProfile::find(p).map_err(|e| {
                let words = format!("--system {}: profile={p}: {}", s.name, e.why());
                profile_error("system", &e, words)
            })?;
        }
        match &s.kind {
            Kind::Kernel(k) => {
                if let Some(why) = not_a_file(&k.kernel) {
                    return Err(at(format!("kernel {}: {why}", k.kernel.display())));
                }
                // What the boot reads first: an image of an x86 kernel
                // that says its release.
                crate::systems::kernel::release(&k.kernel).map_err(|e| at(format!("{e:#}")))?;
                // A file that is no RAM disk would boot into a panic.
                if let Some(i) = &k.initrd {
                    crate::systems::cpio::check_ram_disk(i).map_err(at)?;
                }
                if let Some(d) = k.modules.as_ref().filter(|d| !d.is_dir()) {
                    let why = if d.exists() {
                        "not a directory"
                    } else {
                        "no such directory"
                    };
                    return Err(at(format!("modules={}: {why}", d.display())));
                }
            }
            Kind::Debian(_) => {
                // Fetching waits for the boot; what it needs is checked
                // now: the archive asked for, Debian's tools, the cache.
                let archive = crate::systems::debian::apt::Archive::from_env().map_err(at)?;
                crate::systems::debian::apt::tools(&archive.keyring).map_err(at)?;
                crate::systems::debian::cache::Cache::locate(None)
                    .and_then(|c| c.exists())
                    .map_err(|e| at(format!("{e:#}")))?;
            }
            Kind::Image(i) => {
                if let Some(why) = not_a_file(&i.image) {
                    return Err(at(format!("image {}: {why}", i.image.display())));
                }
                if let Some(why) = i.key.as_deref().and_then(not_a_file) {
                    let k = i.key.as_deref().unwrap_or(Path::new(""));
                    return Err(at(format!("key={}: {why}", k.display())));
                }
            }
            Kind::Ssh { .. } => {}
            Kind::Local => {}
        }
    }
    if m.own_clock.is_some() && !m.systems.is_empty() {
        return Err(opt(
            "own-clock",
            "own-clock is what a system running this one as a guest says; a run with systems of its own has none",
        ));
    }
    if m.guest_clock.is_some() && !m.systems.iter().any(SystemSpec::is_guest) {
        return Err(opt(
            "guest-clock",
            "--guest-clock goes with a --system kernel:… or image:… (a guest)",
        ));
    }
    if let Some(b) = &m.guest_bin {
        if !m
            .systems
            .iter()
            .any(|s| matches!(s.kind, Kind::Kernel(_) | Kind::Debian(_)))
        {
            return Err(opt(
                "guest-bin",
                "--guest-bin goes with a --system kernel:…",
            ));
        }
        if let Some(why) = not_a_file(b) {
            bail!("--guest-bin {}: {why}", b.display());
        }
    }
    Ok(m.systems.clone())
}

/// What the run does, from its options, checked before anything is
/// measured.
pub fn plan(m: &RunSpec, suites: &[Suite]) -> anyhow::Result<RunPlan> {
    if m.runs != Some(Runs::Auto) && (m.runs_max.is_some() || m.runs_target.is_some()) {
        let key = if m.runs_max.is_some() {
            "runs-max"
        } else {
            "runs-target"
        };
        return Err(opt(key, "--runs-max and --runs-target go with --runs auto"));
    }
    if m.runs_target.is_some_and(|t| t <= 0.0) {
        return Err(opt("runs-target", "--runs-target: above 0 %"));
    }
    crate::hosts::check(&m.hosts).map_err(|e| opt("host", e))?;
    crate::hosts::supported(&m.hosts).map_err(|e| failed("host", e))?;
    let (targets, chosen) = resolve(&m.targets, m.max, m.full, suites)?;
    if let Some(order) = m.order
        && targets.is_empty()
    {
        let names: Vec<&str> = chosen.iter().map(|(w, _)| w.info().name).collect();
        return Err(opt(
            "order",
            format!(
                "--order {} is how a benchmark's runs visit n, and this run has no benchmark (its workloads: {})",
                order.name(),
                names.join(", ")
            ),
        ));
    }
    check_flags(&m.given, &chosen)?;
    workloads::check_pairs(&m.given, m.sweep.is_some()).map_err(|e| e.into_error(""))?;
    let sweep = sweep_options(m, &chosen)?;
    let asked = Asked {
        given: &m.given,
        hosts: &m.hosts,
        sweep: sweep.as_ref(),
        here: m.systems.iter().all(|s| s.kind == Kind::Local),
    };
    let mut work = Vec::new();
    for (workload, size) in chosen {
        let own = workload.options(&asked).map_err(|e| e.into_error(""))?;
        work.push(WorkTarget {
            workload,
            size,
            own,
        });
    }
    let monitor = m.monitor_settings()?;
    Ok(RunPlan {
        targets,
        work,
        sweep,
        fit: m.fit,
        runs: match m.runs {
            Some(Runs::Fixed(r)) => r,
            Some(Runs::Auto) => m.runs_max.unwrap_or(20),
            None => super::series::DECIDE_MAX,
        },
        auto: (m.runs == Some(Runs::Auto)).then(|| AutoRuns {
            target: m.runs_target.unwrap_or(AutoRuns::default().target),
            ..AutoRuns::default()
        }),
        decide: m.runs.is_none(),
        keep_verdicts: true,
        warmup: m.warm_up_ops,
        order: m.order.unwrap_or_default(),
        within: within(m)?,
        why: m.why.then(|| WhyOptions {
            seconds: m.why_seconds.unwrap_or(WhyOptions::default().seconds),
            profiler_cmd: m.profiler.clone(),
            instructions: m.own_clock == Some(crate::systems::qemu::GuestClock::Instructions)
                || crate::sys::clock_counts_instructions(),
        }),
        monitor: match monitor {
            // perf counts where the series run: here unless every system
            // is another machine or a guest, whose scalebench asks itself.
            Some(s) if m.systems.iter().all(|x| x.kind == Kind::Local) => {
                s.check_perf().map_err(|e| failed("monitor", e))?;
                Some(s)
            }
            other => other,
        },
        profiles: profiles(&m.profiles)?,
        hosts: m.hosts.clone(),
        ssh_config: match &m.ssh_config {
            Some(f) if !f.is_file() => bail!("--ssh-config {}: no such file", f.display()),
            f => f.clone(),
        },
        systems: systems(m)?,
        guest_bin: m.guest_bin.clone(),
        guest_clock: m.guest_clock.unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::REGISTRY;

    #[test]
    fn suites_and_names_resolve_in_order_without_repeats() {
        let (t, w) = resolve(&["bind".into(), "quick".into()], None, false, &[]).unwrap();
        assert_eq!(t[0].bench.info().name, "bind");
        assert_eq!(t.len(), REGISTRY.len());
        // The quick suite has the quick workloads; full has them all.
        let quick: Vec<&str> = WORKLOADS
            .iter()
            .filter(|w| w.info().quick)
            .map(|w| w.info().name)
            .collect();
        assert!(!quick.is_empty() && quick.len() < WORKLOADS.len());
        assert_eq!(w.iter().map(|x| x.0.info().name).collect::<Vec<_>>(), quick);
        assert!(w.iter().all(|x| x.1 == Size::Quick));
        let (t, w) = resolve(&["full".into()], Some(7), false, &[]).unwrap();
        assert!(t.iter().all(|x| x.n == 7));
        assert_eq!(w.len(), WORKLOADS.len());
        assert!(w.iter().all(|x| x.1 == Size::Full));
        // Workloads by name: in the order given, each once, quick unless
        // --full.
        let names: Vec<String> = WORKLOADS.iter().map(|w| w.info().name.into()).collect();
        let twice: Vec<String> = names.iter().chain(&names).cloned().collect();
        let (t, w) = resolve(&twice, None, false, &[]).unwrap();
        assert!(t.is_empty());
        assert_eq!(w.len(), WORKLOADS.len());
        assert!(w.iter().all(|x| x.1 == Size::Quick));
        let (_, w) = resolve(&names[..1], None, true, &[]).unwrap();
        assert_eq!(w[0].1, Size::Full, "--full");
        assert_eq!(w[0].0.info().name, names[0]);
    }

    #[test]
    fn unknown_names_suggest_the_nearest() {
        let e = resolve(&["sockt".into()], None, false, &[])
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("`sockt`") && e.contains("did you mean `socket`"),
            "{e}"
        );
        let e = resolve(&["zzzzzz".into()], None, false, &[])
            .err()
            .unwrap()
            .to_string();
        assert!(!e.contains("did you mean"), "{e}");
    }

    #[test]
    fn an_order_needs_a_benchmark() {
        let mut m = RunSpec {
            targets: vec!["http-ipstack".into()],
            order: Some(crate::harness::series::RunOrder::Up),
            ..RunSpec::default()
        };
        let e = plan(&m, &[]).err().unwrap().to_string();
        assert!(
            e.contains("--order up is how a benchmark's runs visit n, and this run has no benchmark (its workloads: http-ipstack)"),
            "{e}"
        );
        m.targets.push("socket".into());
        assert_eq!(plan(&m, &[]).unwrap().targets.len(), 1);
    }

    #[test]
    fn a_workload_flag_needs_its_workload() {
        // A switch of some workload, needing nothing else.
        let (flag, owners) = workloads::flags()
            .into_iter()
            .find(|(f, _)| f.value.is_none() && f.requires.is_empty() && !f.sweeps)
            .expect("a workload has a plain switch");
        let mut m = RunSpec {
            targets: vec!["socket".into()],
            ..RunSpec::default()
        };
        m.given.set(flag.name, Vec::new());
        let e = plan(&m, &[]).err().unwrap().to_string();
        assert!(
            e.contains(&format!(
                "--{} is an option of {}, which this run does not have",
                flag.name,
                owners.join(" or ")
            )),
            "{e}"
        );
        m.targets.push(owners[0].into());
        let p = plan(&m, &[]).unwrap();
        assert_eq!(p.work.len(), 1);
    }
}
