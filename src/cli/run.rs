//! `scalebench run`: resolve targets, prepare the harness, run each
//! benchmark, write the result file after each, print the verdicts.

use super::{RunArgs, values};
use crate::analysis::Options;
use crate::bench::{self, Benchmark, REGISTRY, Suite};
use crate::harness::clock::Clock;
use crate::harness::progress::{Mode, Progress};
use crate::run::series::AutoRuns;
use crate::run::session::{self, Recording, RunPlan, Target, WorkTarget};
use crate::run::why::WhyOptions;
use crate::harness::workdir::WorkDir;
use crate::ctx::Ctx;
use crate::harness::{NetOptions, limits, reaper};
use crate::net::Backend;
use crate::profile::Profile;
use crate::report::{self, Input, System};
use crate::results::{self, ResultFile, Status, TimerInfo, Tool, output, sysinfo};
use crate::workloads::fs::{FsOptions, Place, parse_bytes, parse_mkfs};
use crate::workloads::pg::PgOptions;
use crate::workloads::{self, Size, SweepOptions, WORKLOADS, Workload};
use anyhow::{Context, bail};
use std::path::PathBuf;
use std::process::ExitCode;

/// The closest known name to `name`, if any is close.
fn nearest(name: &str) -> Option<&'static str> {
    REGISTRY
        .iter()
        .map(|b| b.info().name)
        .chain(WORKLOADS.iter().map(|w| w.info().name))
        .chain(["quick", "full"])
        .map(|k| (strsim::jaro_winkler(name, k), k))
        .filter(|(s, _)| *s > 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
}

/// Turns names and suites into benchmarks with sizes and workloads, in
/// order, without repeats; a name on its own gets the quick size, or the
/// full one with `full`. Unknown names are an error that suggests the
/// nearest.
fn resolve(
    targets: &[String],
    max: Option<u64>,
    full: bool,
) -> anyhow::Result<(Vec<Target>, Vec<WorkTarget>)> {
    let names: Vec<String> = if targets.is_empty() {
        vec!["quick".into()]
    } else {
        targets.to_vec()
    };
    let mut out: Vec<Target> = Vec::new();
    let mut push = |bench: &'static dyn Benchmark, n: u64| {
        if !out.iter().any(|t| t.bench.info().name == bench.info().name) {
            out.push(Target {
                bench,
                n: max.unwrap_or(n),
            });
        }
    };
    let mut work: Vec<WorkTarget> = Vec::new();
    let mut push_work = |workload: &'static dyn Workload, size: Size| {
        if !work
            .iter()
            .any(|t| t.workload.info().name == workload.info().name)
        {
            work.push(WorkTarget { workload, size });
        }
    };
    for name in &names {
        if let Some(suite) = Suite::parse(name) {
            for b in REGISTRY {
                push(*b, suite.n_for(b.info()));
            }
            let size = match suite {
                Suite::Quick => Size::Quick,
                Suite::Full => Size::Full,
            };
            for w in WORKLOADS {
                if suite == Suite::Full || w.info().quick {
                    push_work(*w, size);
                }
            }
        } else if let Some(b) = bench::find(name) {
            push(
                b,
                if full {
                    b.info().full_n
                } else {
                    b.info().quick_n
                },
            );
        } else if let Some(w) = workloads::find(name) {
            push_work(w, if full { Size::Full } else { Size::Quick });
        } else {
            let hint = nearest(name).map_or(String::new(), |k| format!("; did you mean `{k}`?"));
            bail!(
                "unknown benchmark, workload or suite `{name}`{hint} (`scalebench list` shows them all)"
            );
        }
    }
    Ok((out, work))
}

/// `results/<host>-<UTC time>`, without the extension.
fn default_base(host: &str) -> PathBuf {
    let host: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let t: String = results::now_rfc3339()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    PathBuf::from("results").join(format!("{host}-{t}"))
}

/// `base` with `tail` added to its last component (no extension replaced).
fn appended(base: &std::path::Path, tail: &str) -> PathBuf {
    let mut n = base.as_os_str().to_os_string();
    n.push(tail);
    PathBuf::from(n)
}

/// The result files (one, or one per profile: `<base>-<profile>.json`)
/// and the HTML report (unless `--no-report`), checked against the output
/// rules before anything is measured. New result files are claimed at
/// once (created empty, exclusively), so that no other run can take their
/// names.
fn outputs(
    a: &RunArgs,
    host: &str,
    profiles: &[Profile],
) -> anyhow::Result<(Vec<PathBuf>, Option<PathBuf>)> {
    let existing = if a.force {
        output::Existing::Replace
    } else {
        output::Existing::Refuse
    };
    let several = profiles.len() > 1;
    let (outs, html) = match &a.out {
        Some(p) if !several => (vec![p.clone()], p.with_extension("html")),
        Some(p) => {
            let ext = p
                .extension()
                .map_or("json".to_string(), |e| e.to_string_lossy().into_owned());
            let base = p.with_extension("");
            let outs = profiles
                .iter()
                .map(|pr| appended(&base, &format!("-{}.{ext}", pr.name)))
                .collect();
            (outs, appended(&base, ".html"))
        }
        None => {
            std::fs::create_dir_all("results")
                .context("cannot create the directory results/ for the result file")?;
            let base = default_base(host);
            let names: Vec<String> = if several {
                profiles.iter().map(|p| format!("-{}", p.name)).collect()
            } else {
                vec![String::new()]
            };
            let (base, outs) = output::claim_group(&base, &names, "json")
                .context("cannot create a result file in results/")?;
            (outs, appended(&base, ".html"))
        }
    };
    for (i, out) in outs.iter().enumerate() {
        if a.out.is_some() {
            let others: Vec<(&std::path::Path, &str)> = outs[..i]
                .iter()
                .map(|p| (p.as_path(), "another result file"))
                .collect();
            output::check("--out", out, existing, &others)?;
        }
    }
    let html = (!a.no_report).then_some(html);
    if let Some(h) = &html {
        if let Some(out) = outs.iter().find(|o| output::same_file(h, o)) {
            bail!(
                "--out {}: the HTML report goes beside the result file as {}, which is the result file itself; name the result file .json, or add --no-report",
                out.display(),
                h.display()
            );
        }
        let others: Vec<(&std::path::Path, &str)> = outs
            .iter()
            .map(|p| (p.as_path(), "the result file"))
            .collect();
        if let Err(e) = output::check("the HTML report", h, existing, &others) {
            if a.out.is_none() {
                // Give back the names claimed above.
                for o in &outs {
                    let _ = std::fs::remove_file(o);
                }
            }
            return Err(e.into());
        }
    }
    if a.out.is_some() {
        for out in outs.iter().filter(|o| !o.exists()) {
            // Claim the name, as for default names.
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(out)
                .with_context(|| format!("cannot create the result file {}", out.display()))?;
        }
    }
    Ok((outs, html))
}

/// The network options from `--backend` and `-6`.
fn net_options(backends: &[String], ipv6: bool) -> anyhow::Result<NetOptions> {
    let mut chosen: Vec<Backend> = Vec::new();
    let wanted: Vec<&str> = if backends.is_empty() {
        vec!["all"]
    } else {
        backends.iter().map(|s| s.trim()).collect()
    };
    for w in wanted {
        let add: Vec<Backend> = if w == "all" {
            Backend::available_all()
        } else {
            let b = Backend::parse(w).ok_or_else(|| {
                anyhow::anyhow!(
                    "--backend {w}: unknown backend (choose from epoll, kqueue, poll, select, all)"
                )
            })?;
            if !b.available() {
                bail!(
                    "--backend {w}: {w} does not exist on {} (available: {})",
                    std::env::consts::OS,
                    Backend::available_all()
                        .iter()
                        .map(|b| b.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            vec![b]
        };
        for b in add {
            if !chosen.contains(&b) {
                chosen.push(b);
            }
        }
    }
    Ok(NetOptions {
        backends: chosen,
        ipv6,
        ..NetOptions::default()
    })
}

/// Whether a program is on the PATH (or in the sbin directories root has).
fn have_program(name: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/sbin", "/usr/sbin", "/usr/local/sbin"].map(PathBuf::from))
        .any(|d| d.join(name).is_file())
}

/// The command line as recorded: a connection string (`--pg-server`) may
/// hold a password, so its value is replaced by `(redacted)`.
fn redacted(args: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for a in args {
        if out.last().is_some_and(|p| p == "--pg-server") {
            out.push("(redacted)".into());
        } else if a.starts_with("--pg-server=") {
            out.push("--pg-server=(redacted)".into());
        } else {
            out.push(a);
        }
    }
    out
}

/// The sweep asked for, checked before anything is measured: every
/// selected workload must sweep its variable, the baseline must be one of
/// its levels, and the sweep's timings need a sweep.
fn sweep_options(a: &RunArgs, work: &[WorkTarget]) -> anyhow::Result<Option<SweepOptions>> {
    let Some((variable, levels)) = &a.sweep else {
        if a.memory_sweep {
            if let Some(w) = work.iter().find(|w| w.workload.info().name != "pgbench") {
                bail!(
                    "--memory-sweep is pgbench's; {} has no database",
                    w.workload.info().name
                );
            }
            if work.is_empty() {
                bail!("--memory-sweep: run pgbench (`scalebench run pgbench --memory-sweep`)");
            }
            if a.baseline.is_some() {
                bail!("--baseline: a memory sweep's baseline is its smallest size (0.5)");
            }
            return Ok(Some(SweepOptions {
                variable: "size/memory".into(),
                levels: Vec::new(),
                heat_up: a.heat_up,
                sample: a.sample_time,
                samples: a.samples,
                baseline: None,
            }));
        }
        for (given, name) in [
            (a.heat_up.is_some(), "--heat-up"),
            (a.sample_time.is_some(), "--sample-time"),
            (a.samples.is_some(), "--samples"),
            (a.baseline.is_some(), "--baseline"),
        ] {
            if given {
                bail!("{name} sets how a sweep runs: give --sweep VAR=LEVEL,… too");
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
        bail!("--sweep {variable}=…: no workload selected ({hint})");
    }
    if let Some(w) = work.iter().find(|w| !able(w.workload)) {
        bail!(
            "--sweep {variable}=…: {} cannot be swept over {variable} ({hint})",
            w.workload.info().name
        );
    }
    if let Some(b) = a.baseline
        && !levels.contains(&(b as f64))
    {
        bail!("--baseline {b}: not one of the --sweep levels");
    }
    Ok(Some(SweepOptions {
        variable: variable.clone(),
        levels: levels.clone(),
        heat_up: a.heat_up,
        sample: a.sample_time,
        samples: a.samples,
        baseline: a.baseline.map(|b| b as f64),
    }))
}

/// pgbench's options, checked before anything is measured.
fn pg_options(a: &RunArgs) -> anyhow::Result<PgOptions> {
    if a.pg_pin == crate::workloads::pg::Pin::Apart && crate::sys::cpu_count() < 2 {
        bail!("--pg-pin apart needs two CPUs; this machine has one");
    }
    if let Some(s) = &a.pg_server {
        crate::workloads::pg::conninfo::Conninfo::parse(s)
            .map_err(|e| anyhow::anyhow!("--pg-server: {e}"))?;
    }
    let size = |flag: &str, v: &Option<String>| {
        v.as_deref()
            .map(|s| crate::workloads::pg::size_option(flag, s).map_err(anyhow::Error::msg))
            .transpose()
    };
    Ok(PgOptions {
        db_bytes: size("--db-size", &a.db_size)?,
        modes: a.pg_mode.clone(),
        socket: a.pg_socket,
        memory_sweep: a.memory_sweep,
        server: a.pg_server.clone(),
        drop_tables: a.pg_drop_tables,
        pin: a.pg_pin,
        memory_bytes: size("--pg-memory", &a.pg_memory)?,
    })
}

/// The mail workload's options.
fn mail_options(a: &RunArgs) -> crate::workloads::mail::MailOptions {
    let d = crate::workloads::mail::MailOptions::default();
    crate::workloads::mail::MailOptions {
        message_bytes: a.mail_size.unwrap_or(d.message_bytes),
        recipients: a.mail_recipients.unwrap_or(d.recipients),
        per_session: a.mail_per_session.unwrap_or(d.per_session),
        reply_delay: a.mail_reply_delay.unwrap_or(d.reply_delay),
        server: a.mail_server,
    }
}

/// The filesystem workloads' options, checked before anything is measured.
fn fs_options(a: &RunArgs) -> anyhow::Result<FsOptions> {
    let mut places = Vec::new();
    for d in &a.dirs {
        if !d.is_dir() {
            bail!("--dir {}: not a directory", d.display());
        }
        places.push(Place::Dir(d.clone()));
    }
    let specs = parse_mkfs(&a.mkfs).map_err(anyhow::Error::msg)?;
    if !specs.is_empty() {
        if !cfg!(target_os = "linux") {
            bail!(
                "--mkfs: making filesystems on loop devices is implemented for Linux only; use --dir on a mounted filesystem"
            );
        }
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            bail!(
                "--mkfs needs root (it runs losetup, mkfs and mount); use --dir on a mounted filesystem instead"
            );
        }
        for s in &specs {
            let prog = format!("mkfs.{}", s.kind);
            if !have_program(&prog) {
                let pkg = match s.kind.as_str() {
                    "xfs" => "xfsprogs",
                    "btrfs" => "btrfs-progs",
                    _ => "e2fsprogs",
                };
                bail!(
                    "--mkfs {}: {prog} is not installed (Debian: apt-get install {pkg})",
                    s.kind
                );
            }
        }
        for prog in ["losetup", "mount", "umount"] {
            if !have_program(prog) {
                bail!("--mkfs: {prog} is not installed (Debian: apt-get install mount)");
            }
        }
    }
    places.extend(specs.into_iter().map(Place::Mkfs));
    let size = |flag: &str, v: &Option<String>| -> anyhow::Result<Option<u64>> {
        v.as_deref()
            .map(|s| parse_bytes(s).map_err(|e| anyhow::anyhow!("{flag}: {e}")))
            .transpose()
    };
    let bytes = size("--bytes", &a.bytes)?;
    if let (Some(b), Some(f)) = (bytes, a.files)
        && b / f > 1 << 30
    {
        bail!(
            "--bytes {} over --files {f}: the site's files would average over 1G each",
            b
        );
    }
    Ok(FsOptions {
        places,
        fs_size: size("--fs-size", &a.fs_size)?,
        mount_opts: a.mount_opts.clone().filter(|o| !o.is_empty()),
        files: a.files,
        bytes,
        requests: a.requests,
        seed: a.seed,
        sizes: a
            .sizes
            .iter()
            .map(|s| {
                let b = parse_bytes(s).map_err(|e| anyhow::anyhow!("--sizes: {e}"))?;
                if b > 1 << 30 {
                    bail!("--sizes: `{s}` is over the 1G a file of fs-sizes may have");
                }
                Ok(b)
            })
            .collect::<anyhow::Result<_>>()?,
        size_files: a.size_files,
    })
}

/// The profiles of `--profile`, each once, checked before anything is
/// measured.
fn profiles(names: &[String]) -> anyhow::Result<Vec<Profile>> {
    let mut out: Vec<Profile> = Vec::new();
    for n in names.iter().map(|n| n.trim()) {
        if n.is_empty() {
            bail!("--profile: an empty name (give names or files, comma separated)");
        }
        let p = Profile::find(n).map_err(|e| anyhow::anyhow!("--profile {n}: {e:#}"))?;
        if out.iter().any(|q| q.name == p.name) {
            bail!("--profile: `{}` is given twice", p.name);
        }
        if let Some(e) = crate::profile::apply::unacceptable(&p).first() {
            bail!("--profile {n}: {e}");
        }
        out.push(p);
    }
    Ok(out)
}

/// What the system record holds beyond the usual: the filesystems of
/// `--dir` and the sysctls of `--record-sysctl`.
fn recorded(a: &RunArgs) -> sysinfo::Extra<'_> {
    sysinfo::Extra {
        dirs: &a.dirs,
        sysctls: &a.record_sysctl,
    }
}

/// What the run does, from the arguments, checked before anything is
/// measured.
fn plan(a: &RunArgs) -> anyhow::Result<RunPlan> {
    if a.runs != Some(values::Runs::Auto) && (a.runs_max.is_some() || a.runs_target.is_some()) {
        bail!("--runs-max and --runs-target go with --runs auto");
    }
    if a.runs_target.is_some_and(|t| t <= 0.0) {
        bail!("--runs-target: above 0 %");
    }
    let (targets, work) = resolve(&a.targets, a.max, a.full)?;
    let work_opts = workloads::Options {
        fs: fs_options(a)?,
        sweep: sweep_options(a, &work)?,
        pg: pg_options(a)?,
        mail: mail_options(a),
        bigfile_bytes: a
            .bigfile_size
            .as_deref()
            .map(|s| match parse_bytes(s) {
                Ok(b) if b >= 1 << 20 => Ok(b),
                Ok(_) => Err(anyhow::anyhow!("--bigfile-size {s}: at least 1M")),
                Err(e) => Err(anyhow::anyhow!("--bigfile-size: {e}")),
            })
            .transpose()?,
        forward_loss_tolerance: match a.loss_tolerance {
            Some(t) if t > 1.0 => bail!("--loss-tolerance: at most 100 %"),
            Some(t) => t,
            None => crate::workloads::forward::LOSS_TOLERANCE,
        },
        forward_search_steps: a.search_steps,
        ..workloads::Options::new(Size::Quick)
    };
    Ok(RunPlan {
        targets,
        work,
        work_opts,
        runs: match a.runs {
            Some(values::Runs::Fixed(r)) => r,
            Some(values::Runs::Auto) => a.runs_max.unwrap_or(20),
            None => Suite::Quick.runs(),
        },
        auto: (a.runs == Some(values::Runs::Auto)).then(|| AutoRuns {
            target: a.runs_target.unwrap_or(AutoRuns::default().target),
            ..AutoRuns::default()
        }),
        warmup: a.warmup,
        why: a.why.then(|| WhyOptions {
            seconds: a.why_seconds,
            profiler_cmd: a.profiler.clone(),
        }),
        profiles: profiles(&a.profile)?,
        hosts: {
            crate::hosts::check(&a.hosts).map_err(|e| anyhow::anyhow!(e))?;
            if a.pg_socket
                && let Some(s) = a.hosts.iter().find(|h| {
                    h.role == crate::hosts::Role::Server && h.reach != crate::hosts::Reach::Local
                })
            {
                bail!(
                    "--pg-socket: the database is on the server host {}, reached over TCP",
                    s.reach
                );
            }
            a.hosts.clone()
        },
        ssh_config: match &a.ssh_config {
            Some(f) if !f.is_file() => bail!("--ssh-config {}: no such file", f.display()),
            f => f.clone(),
        },
    })
}

/// `scalebench run`.
pub fn run(a: RunArgs) -> anyhow::Result<ExitCode> {
    // First: a signal from here on stops the run the same way (`timeout`
    // may fire while the plan is being made).
    reaper::install();
    let plan = plan(&a)?;
    crate::hosts::enter_client(&plan.hosts)?;
    let mut net = net_options(&a.backend, a.ipv6)?;
    if let (Some(c), Some((_, server))) = (a.pin, net.cpus) {
        net.cpus = Some((c, server));
    }
    if a.no_pin {
        net.cpus = None;
    }
    let clock = Clock::new(a.timer)?;
    if let Some(cpu) = a.pin {
        let online = crate::sys::cpu_count();
        if cpu >= online {
            bail!(
                "--pin {cpu}: this machine has {online} CPU{} online (0 to {})",
                if online == 1 { "" } else { "s" },
                online.saturating_sub(1)
            );
        }
        crate::sys::pin_to_cpu(cpu).map_err(|e| anyhow::anyhow!("--pin {cpu}: {e}"))?;
    }
    let workdir = WorkDir::create_with(a.workdir.as_deref(), session::release_stale)?;
    let mut progress = Progress::new(Mode::detect(a.quiet));
    let guard = limits::raise();
    if progress.mode() != Mode::Quiet {
        for n in workdir.swept() {
            eprintln!("work dir: {n}");
        }
        for n in &guard.notes {
            eprintln!("limits: {n}");
        }
    }
    let system = sysinfo::collect(Some(workdir.path()), &recorded(&a));
    let label = a.label.clone().unwrap_or_else(|| system.hostname.clone());
    let (outs, html) = outputs(&a, &system.hostname, &plan.profiles)?;
    let mut hosts =
        session::open_hosts(&plan, workdir.path(), &mut progress).inspect_err(|_| {
            // Nothing was measured: the files claimed for the results go.
            for o in &outs {
                if std::fs::metadata(o).is_ok_and(|m| m.len() == 0) {
                    let _ = std::fs::remove_file(o);
                }
            }
        })?;
    let template = ResultFile {
        schema: results::SCHEMA_NAME.into(),
        schema_version: results::SCHEMA_VERSION,
        tool: Tool::this(),
        command_line: redacted(std::env::args()),
        label: label.clone(),
        started: results::now_rfc3339(),
        finished: None,
        complete: false,
        system,
        timer: TimerInfo {
            kind: clock.kind(),
            tsc_hz: clock.tsc_hz(),
            invariant_tsc: crate::sys::invariant_tsc(),
            pinned_cpu: a.pin,
        },
        benchmarks: Vec::new(),
        workloads: Vec::new(),
        profile: None,
        hosts: hosts.records(),
    };
    // Writing the empty files first proves the paths are writable before
    // anything is measured.
    let mut recs: Vec<Recording> = outs
        .into_iter()
        .enumerate()
        .map(|(i, path)| {
            let mut file = template.clone();
            if let Some(p) = plan.profiles.get(i)
                && plan.profiles.len() > 1
            {
                file.label = format!("{label}/{}", p.name);
            }
            Recording { path, file }
        })
        .collect();
    for r in &recs {
        results::write_atomic(&r.path, &r.file)
            .with_context(|| format!("cannot write the result file {}", r.path.display()))?;
    }

    let ctx = Ctx::new(workdir.path(), &clock)
        .with_net(net)
        .with_hosts(&hosts);
    let measured = session::execute(&plan, &ctx, &mut recs, &mut progress);
    drop(ctx);
    session::close_hosts(&mut hosts, &mut recs, &mut progress)?;
    measured?;
    session::finish(&mut recs)?;
    drop(guard);
    drop(workdir);
    report_and_exit(recs, html.as_deref())
}

/// Writes the HTML report and prints the terminal one; the exit code says
/// whether the run was interrupted or something failed.
fn report_and_exit(
    recs: Vec<Recording>,
    html: Option<&std::path::Path>,
) -> anyhow::Result<ExitCode> {
    let failed: Vec<(String, Vec<String>)> = recs
        .iter()
        .flat_map(|r| {
            let f = &r.file;
            f.benchmarks
                .iter()
                .filter(|b| b.status == Status::Failed)
                .map(|b| (b.series.clone(), b.message.iter().cloned().collect()))
                .chain(
                    f.workloads
                        .iter()
                        .filter(|w| w.status == Status::Failed)
                        .map(|w| (w.name.clone(), why_failed(w))),
                )
                .map(move |(s, why)| match &f.profile {
                    Some(p) => (format!("{s} ({})", p.name), why),
                    None => (s, why),
                })
        })
        .collect();
    let paths: Vec<PathBuf> = recs.iter().map(|r| r.path.clone()).collect();
    let systems: Vec<System> = recs
        .into_iter()
        .map(|r| System {
            label: r.file.label.clone(),
            file: r.file,
        })
        .collect();
    let input = Input::new(&systems, &Options::default());
    if let Some(h) = html {
        output::write_file_atomic(h, |w| {
            report::writer(report::Format::Html, None).write(&input, w)
        })?;
    }
    let shown = super::commands::to_stdout(|w| {
        report::writer(report::Format::Terminal, None).write(&input, w)?;
        writeln!(w)?;
        for p in &paths {
            writeln!(w, "result file: {}", p.display())?;
        }
        if let Some(h) = html {
            writeln!(w, "report:      {}", h.display())?;
        }
        Ok(())
    });
    if reaper::interrupted() {
        if let Err(e) = &shown {
            crate::stop::say(&format!("the terminal report could not be shown: {e:#}"));
        }
        let files: Vec<_> = paths
            .iter()
            .map(|p| p.as_path())
            .zip(systems.iter().map(|s| &s.file))
            .collect();
        crate::stop::say(&session::interrupted_summary(&files));
        return Ok(ExitCode::from(130));
    }
    shown?;
    if !failed.is_empty() {
        // The reasons again on standard error: the report may have gone to
        // a file or nowhere.
        let names: Vec<&str> = failed.iter().map(|(n, _)| n.as_str()).collect();
        eprintln!("error: failed: {}", names.join(", "));
        for (name, why) in &failed {
            for w in why {
                eprintln!("  {name}: {w}");
            }
        }
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// Why a failed workload failed: its message, then each failed row's
/// error under the row's target and label (at most 5).
fn why_failed(w: &crate::results::WorkloadResult) -> Vec<String> {
    let rows = w.rows.iter().filter_map(|r| {
        let e = r.error.as_deref()?;
        Some(match &r.target {
            Some(t) => format!("{t}, {}: {e}", r.label),
            None => format!("{}: {e}", r.label),
        })
    });
    w.message.iter().cloned().chain(rows).take(5).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_strings_are_not_recorded() {
        let argv = [
            "scalebench",
            "run",
            "pgbench",
            "--pg-server",
            "password=x",
            "--pg-server=y=z",
        ];
        assert_eq!(
            redacted(argv.iter().map(|s| s.to_string())),
            vec![
                "scalebench",
                "run",
                "pgbench",
                "--pg-server",
                "(redacted)",
                "--pg-server=(redacted)"
            ]
        );
    }

    #[test]
    fn suites_and_names_resolve_in_order_without_repeats() {
        let (t, w) = resolve(&["bind".into(), "quick".into()], None, false).unwrap();
        assert_eq!(t[0].bench.info().name, "bind");
        assert_eq!(t.len(), REGISTRY.len());
        // The quick suite has the quick workloads; full has them all.
        let quick: Vec<&str> = WORKLOADS
            .iter()
            .filter(|w| w.info().quick)
            .map(|w| w.info().name)
            .collect();
        assert!(quick.contains(&"http-ipstack") && !quick.contains(&"fs"));
        assert_eq!(
            w.iter().map(|x| x.workload.info().name).collect::<Vec<_>>(),
            quick
        );
        assert!(w.iter().all(|x| x.size == Size::Quick));
        let (t, w) = resolve(&["full".into()], Some(7), false).unwrap();
        assert!(t.iter().all(|x| x.n == 7));
        assert_eq!(w.len(), WORKLOADS.len());
        assert!(w.iter().all(|x| x.size == Size::Full));
        let (_, w) = resolve(&["fs".into(), "fs-sizes".into()], None, false).unwrap();
        assert_eq!(w.len(), 2);
        let (_, w) = resolve(&["http-shortconn".into()], None, true).unwrap();
        assert_eq!(w[0].size, Size::Full, "--full");
        let (t, w) = resolve(&["http-ipstack".into()], None, false).unwrap();
        assert!(t.is_empty());
        assert_eq!(w[0].workload.info().name, "http-ipstack");
    }

    #[test]
    fn unknown_names_suggest_the_nearest() {
        let e = resolve(&["sockt".into()], None, false)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("`sockt`") && e.contains("did you mean `socket`"),
            "{e}"
        );
        let e = resolve(&["zzzzzz".into()], None, false)
            .err()
            .unwrap()
            .to_string();
        assert!(!e.contains("did you mean"), "{e}");
    }
}
