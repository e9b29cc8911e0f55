//! A whole `scalebench run`: typed options ([`RunOptions`]), the plan made
//! of them ([`plan`]: benchmark series, workloads, tuning profiles,
//! hosts; suites read by [`suite`]), its execution with the harness's
//! tools ([`session`], each benchmark series by [`series`], its call
//! stacks by [`why`]), the result files' whole life ([`files`]) and the
//! report at the end ([`end`]).

pub mod end;
pub mod estimate;
pub mod files;
pub mod plan;
pub mod remote;
pub mod series;
pub mod session;
pub mod spec;
pub mod suite;
pub mod systems;
pub mod why;
pub mod whyfile;

use crate::ctx::Ctx;
use crate::harness::clock::Clock;
use crate::harness::progress::{Mode, Progress};
use crate::harness::workdir::WorkDir;
use crate::harness::{NetOptions, limits, reaper};
use crate::net::Backend;
use crate::results::{self, ResultFile, TimerInfo, Tool, sysinfo};
use anyhow::bail;
use std::path::PathBuf;
use std::process::ExitCode;

/// Everything `scalebench run` is asked: the run request and what
/// belongs to the machine that runs it.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// What to measure and how.
    pub spec: spec::RunSpec,
    /// The suite files among the targets, read (by their paths as given).
    pub suites: Vec<suite::Suite>,
    /// Where the result files and the report go.
    pub outputs: files::Outputs,
    /// Where to make the work directory (none: the system temp dir).
    pub workdir: Option<PathBuf>,
    /// The system's name in reports (none: the host name).
    pub label: Option<String>,
    /// No progress on standard error.
    pub quiet: bool,
    /// Print the plan and its estimate; measure nothing.
    pub dry_run: bool,
    /// With `dry_run`: as JSON.
    pub json: bool,
    /// The command line as the result file records it (secrets redacted).
    pub command_line: Vec<String>,
    /// Leave each series' verdict to the system that asked for this run
    /// (`__run`), which judges what it is sent as it joins its file: a
    /// guest under emulation took about 5 s to judge a series of 40
    /// samples (450 million instructions, nine tenths of them fitting),
    /// more than measuring it. A verdict made on the way is kept still.
    pub judged_by_asker: bool,
}

/// The network options from the backends picked (none: all) and the
/// address family.
fn net_options(picked: &[spec::BackendPick], ipv6: bool) -> anyhow::Result<NetOptions> {
    let mut chosen: Vec<Backend> = Vec::new();
    let all = [spec::BackendPick::All];
    let picked = if picked.is_empty() { &all[..] } else { picked };
    for p in picked {
        let add: Vec<Backend> = match *p {
            spec::BackendPick::All => Backend::available_all(),
            spec::BackendPick::One(b) if !b.available() => {
                let w = b.name();
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
            spec::BackendPick::One(b) => vec![b],
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

/// The network options with the run's pinning, and the process pinned
/// where asked.
fn pinned_net(s: &spec::RunSpec) -> anyhow::Result<NetOptions> {
    let mut net = net_options(&s.backends, s.ipv6)?;
    match (s.pin, net.cpus) {
        (spec::Pinning::Cpu(c), Some((_, server))) => net.cpus = Some((c, server)),
        (spec::Pinning::Off, _) => net.cpus = None,
        _ => {}
    }
    if let spec::Pinning::Cpu(cpu) = s.pin {
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
    Ok(net)
}

/// The empty result file every result file of the run starts from.
fn template(
    o: &RunOptions,
    system: results::SystemInfo,
    clock: &Clock,
    hosts: &crate::hosts::Hosts,
) -> ResultFile {
    ResultFile {
        schema: results::SCHEMA_NAME.into(),
        schema_version: results::SCHEMA_VERSION,
        tool: Tool::this(),
        command_line: o.command_line.clone(),
        label: o.label.clone().unwrap_or_else(|| system.hostname.clone()),
        started: results::now_rfc3339(),
        finished: None,
        complete: false,
        system,
        timer: TimerInfo {
            kind: clock.kind(),
            tsc_hz: clock.tsc_hz(),
            invariant_tsc: crate::sys::invariant_tsc(),
            pinned_cpu: match o.spec.pin {
                spec::Pinning::Cpu(c) => Some(c),
                _ => None,
            },
        },
        benchmarks: Vec::new(),
        workloads: Vec::new(),
        profile: None,
        hosts: hosts.records(),
        suites: suites_named(o),
    }
}

/// The suites `o` names, in order, with their texts: the files read, the
/// built-in ones by name, and `quick` when nothing is named.
fn suites_named(o: &RunOptions) -> Vec<results::SuiteRecord> {
    let m = &o.spec;
    let quick = ["quick".to_string()];
    let targets: &[String] = if m.targets.is_empty() {
        &quick
    } else {
        &m.targets
    };
    targets
        .iter()
        .filter_map(|t| {
            let (s, origin) = if suite::is_path(t) {
                let s = o.suites.iter().find(|s| s.origin == *t)?.clone();
                let origin = s.origin.clone();
                (s, origin)
            } else {
                (suite::Suite::built_in(t)?, "built-in".to_string())
            };
            Some(results::SuiteRecord {
                name: s.name,
                origin,
                text: s.text,
            })
        })
        .collect()
}

/// The label of each result file: `LABEL/PROFILE` with several profiles,
/// the system's name with `--system`, else the run's label (`labels` says
/// nothing).
fn labels(plan: &plan::RunPlan, template: &ResultFile) -> Vec<String> {
    if plan.profiles.len() > 1 {
        plan.profiles
            .iter()
            .map(|p| format!("{}/{}", template.label, p.name))
            .collect()
    } else {
        plan.systems.iter().map(|s| s.name.clone()).collect()
    }
}

/// `run --dry-run`: every item the run would measure, in order, with its
/// estimate and the total (as JSON with `json`); nothing is measured, made
/// or changed.
fn dry_run(
    plan: &plan::RunPlan,
    net: NetOptions,
    clock: &Clock,
    o: &RunOptions,
) -> anyhow::Result<ExitCode> {
    let json = o.json;
    // The directory the run's work directory would be made in: what the
    // workloads' sizes read the free space of (and nothing more).
    let base = o.workdir.clone().unwrap_or_else(std::env::temp_dir);
    if !base.is_dir() {
        anyhow::bail!(
            "{}: not a directory to make the work directory in: the run would stop here",
            base.display()
        );
    }
    let ctx = Ctx::new(&base, clock).with_net(net);
    let items = estimate::with_sizes(estimate::items(plan, &ctx), plan, &ctx);
    if json {
        let doc = dry_json(plan, &items);
        crate::results::output::to_stdout(|w| -> anyhow::Result<()> {
            writeln!(w, "{}", serde_json::to_string_pretty(&doc)?)?;
            Ok(())
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<Vec<String>> = items
        .iter()
        .enumerate()
        .map(|(i, it)| {
            vec![
                (i + 1).to_string(),
                format!("{} {}", it.kind, it.name),
                it.n.map_or(String::new(), |n| n.to_string()),
                it.on.clone().unwrap_or_default(),
                it.seconds.map_or("unknown".into(), estimate::words),
            ]
        })
        .collect();
    crate::results::output::to_stdout(|w| -> anyhow::Result<()> {
        let table = crate::report::table::render(
            &["#", "item", "n", "on", "estimate"],
            &rows,
            &[0, 2, 4],
            &[0, 2, 4],
        );
        writeln!(w, "{table}")?;
        write_sizes(w, &items)?;
        writeln!(w)?;
        crate::report::wrap::wrapped(w, "", &dry_summary(plan, &items))?;
        write_how(w, plan, &items)?;
        if let Some((goal, _)) = plan.within {
            writeln!(
                w,
                "kept within {} (--within): a series whose share is too short for its runs runs at a lower n, said so",
                estimate::words(goal.as_secs_f64())
            )?;
        }
        Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The dry run's plan as JSON: its items (estimates to a tenth of a
/// second: no figure finer than they are), the runs and how they go, the
/// systems and profiles, the total.
fn dry_json(plan: &plan::RunPlan, items: &[estimate::PlannedItem]) -> serde_json::Value {
    let min = fewest_runs(plan);
    // (+ 0.0: never `-0.0`.)
    let tenth = |x: f64| (x * 10.0).round() / 10.0 + 0.0;
    let shown: Vec<estimate::PlannedItem> = items
        .iter()
        .map(|i| estimate::PlannedItem {
            seconds: i.seconds.map(tenth),
            ..i.clone()
        })
        .collect();
    serde_json::json!({
        "items": shown,
        "runs": {
            "min": min,
            "max": plan.runs,
            "stop": if plan.decide { "decided" } else if plan.auto.is_some() { "auto" } else { "fixed" },
            "order": plan.order.name(),
        },
        "systems": plan.systems.iter().map(|s| serde_json::json!({
            "name": s.name,
            "spec": s.to_string(),
            "profile": s.profile,
        })).collect::<Vec<_>>(),
        "profiles": plan.profiles.iter().map(|p| p.name.clone()).collect::<Vec<_>>(),
        "seconds": tenth(items.iter().filter_map(|i| i.seconds).sum::<f64>()),
        "unknown": items.iter().filter(|i| i.seconds.is_none()).count(),
        "within": plan.within.map(|(goal, _)| goal.as_secs_f64()),
    })
}

/// The fewest runs a series of `plan` makes: those before its verdict may
/// stop it, or all of them.
fn fewest_runs(plan: &plan::RunPlan) -> u32 {
    if plan.decide {
        series::DECIDE_MIN.min(plan.runs)
    } else {
        plan.runs
    }
}

/// The dry run's summary line: the items, the runs each series makes (a
/// plan of workloads alone has none), and the time it would take.
fn dry_summary(plan: &plan::RunPlan, items: &[estimate::PlannedItem]) -> String {
    let unknown = items.iter().filter(|i| i.seconds.is_none()).count();
    let total: f64 = items.iter().filter_map(|i| i.seconds).sum();
    // Runs are a benchmark series' repeats: a plan of workloads alone
    // has none to state.
    let runs = if !items.iter().any(|i| i.kind == "benchmark") {
        String::new()
    } else if plan.decide {
        format!(
            ", {} to {} runs (stopping once decided) each series",
            fewest_runs(plan),
            plan.runs
        )
    } else {
        format!(", {} runs each series", plan.runs)
    };
    let time = match unknown {
        0 => format!(
            "about {} (estimated from the quick suite on this project's machine; nothing was measured)",
            estimate::words(total)
        ),
        k if k == items.len() => format!(
            "time unknown: the quick suite on this project's machine measured nothing like {} to estimate from",
            if k == 1 { "it" } else { "them" }
        ),
        k => format!(
            "about {} and {k} item{} whose time is unknown (estimated from the quick suite on this project's machine; nothing was measured)",
            estimate::words(total),
            if k == 1 { "" } else { "s" }
        ),
    };
    format!(
        "{} item{}{runs}; {time}",
        items.len(),
        if items.len() == 1 { "" } else { "s" },
    )
}

/// How the plan runs, below the dry run's summary: the benchmarks' run
/// order, the profiles measured under, and each system as given (with the
/// profile it applies inside itself).
fn write_how(
    w: &mut dyn std::io::Write,
    plan: &plan::RunPlan,
    items: &[estimate::PlannedItem],
) -> std::io::Result<()> {
    if items.iter().any(|i| i.kind == "benchmark") {
        let order = match plan.order {
            crate::harness::series::RunOrder::Up => {
                "one ascending pass per run, as the seeds (--order up)"
            }
            crate::harness::series::RunOrder::Passes => {
                "passes up and down within each run, directions alternating between runs (--order passes)"
            }
        };
        crate::report::wrap::wrapped(w, "", &format!("benchmark runs: {order}"))?;
    }
    if !plan.profiles.is_empty() {
        let names: Vec<&str> = plan.profiles.iter().map(|p| p.name.as_str()).collect();
        crate::report::wrap::wrapped(
            w,
            "",
            &format!(
                "tuning profiles, one result file each: {}",
                names.join(", ")
            ),
        )?;
    }
    for s in &plan.systems {
        let inside = s.profile.as_ref().map_or(String::new(), |_| {
            " (the profile applied on that system, not on this machine)".to_string()
        });
        crate::report::wrap::wrapped(w, "  ", &format!("system {s}{inside}"))?;
    }
    Ok(())
}

/// Each workload's size in words below the dry run's table (a column would
/// squeeze the names), once where every system's words are the same, else
/// once per system (`fs on b:`); within 100 columns.
fn write_sizes(w: &mut dyn std::io::Write, items: &[estimate::PlannedItem]) -> std::io::Result<()> {
    let mut sized: Vec<(&str, Option<&str>, &str)> = Vec::new();
    for it in items {
        let Some(size) = &it.size else { continue };
        if !sized
            .iter()
            .any(|(n, on, s)| *n == it.name && (*s == size || *on == it.on.as_deref()))
        {
            sized.push((&it.name, it.on.as_deref(), size));
        }
    }
    if sized.is_empty() {
        return Ok(());
    }
    writeln!(w, "\nworkload sizes:")?;
    for &(name, on, size) in &sized {
        let apart = sized.iter().filter(|(n, ..)| *n == name).count() > 1;
        let label = match on.filter(|_| apart) {
            Some(on) => format!("{name} on {on}:"),
            None => format!("{name}:"),
        };
        crate::report::wrap::wrapped(w, "  ", &format!("{label} {size}"))?;
    }
    Ok(())
}

/// How long a run waits for the kernel's random generator to be seeded.
const RANDOM_PATIENCE: std::time::Duration = std::time::Duration::from_secs(60);

/// Runs `o` from start to end: the plan, the measurements, the result
/// files, the report; the exit code says how it went (0, 1: something
/// failed, 130: interrupted).
pub fn run(o: RunOptions) -> anyhow::Result<ExitCode> {
    // First: a signal from here on stops the run the same way (`timeout`
    // may fire while the plan is being made).
    reaper::install();
    let mut plan = plan::plan(&o.spec, &o.suites)?;
    plan.keep_verdicts = !o.judged_by_asker;
    crate::hosts::enter_client(&plan.hosts)?;
    let net = pinned_net(&o.spec)?;
    let clock = Clock::new(o.spec.timer.unwrap_or_default())?;
    if o.dry_run {
        return dry_run(&plan, net, &clock, &o);
    }
    let workdir = WorkDir::create_with(o.workdir.as_deref(), session::release_stale)?;
    let mut progress = Progress::new(Mode::detect(o.quiet));
    let guard = limits::raise();
    if progress.mode() != Mode::Quiet {
        for n in workdir.swept() {
            sys::say!("work dir: {n}");
        }
        for n in &guard.notes {
            sys::say!("limits: {n}");
        }
    }
    // Measured as a running machine is: a system just booted (an `image:`
    // guest, a machine of a lab) waits for its random generator
    // (docs/kernels.md, "A seeded generator").
    if crate::sys::random_seeded(RANDOM_PATIENCE) == Some(false) {
        sys::say!(
            "warning: the kernel's random generator is not seeded after {} s: whatever draws random numbers in the kernel (bind's port 0) costs more than on a running machine",
            RANDOM_PATIENCE.as_secs()
        );
    }
    let dirs = plan.dirs();
    let extra = sysinfo::Extra {
        dirs: &dirs,
        sysctls: &o.spec.record_sysctl,
    };
    let system = sysinfo::collect(Some(workdir.path()), &extra);
    let claimed = files::claim(&o.outputs, &system.hostname, &plan.parts())?;
    let mut hosts = session::open_hosts(&plan, workdir.path(), &mut progress)
        .inspect_err(|_| claimed.give_back())?;
    let mut opened = systems::open(&plan.systems, &plan, &o, workdir.path(), &mut progress)
        .inspect_err(|_| claimed.give_back())?;
    let template = template(&o, system, &clock, &hosts);
    let mut recs = files::create(&claimed, &template, &labels(&plan, &template))?;
    for (s, rec) in opened.iter().zip(recs.iter_mut()) {
        if let systems::Opened::Remote(g) = s {
            rec.file.system = g.system.clone();
            rec.save()?;
        }
    }
    let ctx = Ctx::new(workdir.path(), &clock)
        .with_net(net)
        .with_hosts(&hosts);
    // This machine alone (`--system NAME=local` names it): as always,
    // tuning profiles and all.
    let here_only = opened.iter().all(|s| matches!(s, systems::Opened::Here));
    let measured = if here_only {
        session::execute(&plan, &ctx, &mut recs, &mut progress)
    } else {
        session::execute_on_systems(&plan, &o, &ctx, &mut opened, &mut recs, &mut progress)
    };
    drop(ctx);
    systems::close(opened, &mut progress);
    session::close_hosts(&mut hosts, &mut recs, &mut progress)?;
    measured?;
    files::finish(&mut recs)?;
    drop(guard);
    drop(workdir);
    if o.judged_by_asker {
        return Ok(end::exit_unreported(&recs));
    }
    end::report_and_exit(recs, claimed.html.as_deref())
}
