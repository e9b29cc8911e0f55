//! A whole `scalebench run` as a plan the harness executes: benchmark
//! series and workloads, each under every tuning profile asked for, every
//! result written to its file as soon as it is measured.
//!
//! With profiles (`run --profile default,throughput`) each profile has its
//! own result file. They alternate: for each series or workload, each
//! profile in turn is applied, measured under and put back, so that drift
//! of the machine over the run falls on every profile alike (only figures
//! measured side by side, alternating, compare).

use super::RunOptions;
use super::estimate::Countdown;
use super::files::Recording;
use super::plan::{RunPlan, Target, WorkTarget};
use super::remote::RemoteItem;
use super::series::{SeriesPlan, TimeShare, run_benchmark};
use super::systems::Opened;
use super::why;
use crate::ctx::Ctx;
use crate::harness::monitor::Monitor;
use crate::harness::progress::Progress;
use crate::hosts::Hosts;
use crate::results::{self, BenchResult, Status};
use crate::tuning::apply::{self, Applied, Made, Mounts};
use crate::workloads::{self, Mounting};

/// Opens the plan's hosts (connects, makes sure scalebench runs there,
/// takes their system records), saying what happens on `progress`; the
/// client must already run where the plan puts it
/// ([`crate::hosts::enter_client`]).
pub fn open_hosts(
    plan: &RunPlan,
    workdir: &std::path::Path,
    progress: &mut Progress,
) -> anyhow::Result<Hosts> {
    let exe = std::env::current_exe().ok();
    Hosts::open(
        &plan.hosts,
        exe.as_deref(),
        workdir,
        plan.ssh_config.as_deref(),
        &mut |n| progress.note_run(n),
    )
}

/// Closes the hosts and writes their final records (what was removed
/// from them) into every result file.
pub fn close_hosts(
    hosts: &mut Hosts,
    recs: &mut [Recording],
    progress: &mut Progress,
) -> anyhow::Result<()> {
    hosts.close();
    let records = hosts.records();
    if records.is_empty() {
        return Ok(());
    }
    for r in &records {
        for c in &r.cleanup {
            progress.note_run(&format!("{} host: {c}", r.role));
        }
    }
    for rec in recs.iter_mut() {
        rec.file.hosts = records.clone();
        rec.save()?;
    }
    Ok(())
}

/// Applies profile `i` (none when the plan has none) for one target; the
/// first application's record goes into the result file, and a partial
/// one on any application marks it partial.
fn under_profile(
    plan: &RunPlan,
    i: usize,
    ctx: &Ctx,
    rec: &mut Recording,
    progress: &mut Progress,
) -> Option<Applied> {
    let p = plan.profiles.get(i)?;
    // Where the profile's mount options go: to the filesystems a workload
    // of the run makes, unless it names mount options of its own.
    let mountings: Vec<Mounting> = plan
        .work
        .iter()
        .map(|w| w.workload.mounting(&plan.work_options(w, None)))
        .collect();
    let made = if mountings.contains(&Mounting::ProfileOptions) {
        Made::Made
    } else if mountings.contains(&Mounting::OwnOptions) {
        Made::UserOptions
    } else {
        Made::None
    };
    // And to the existing filesystems the run measures, by remounting.
    let existing = plan
        .work
        .iter()
        .flat_map(|w| {
            w.workload
                .measured_dirs(&plan.work_options(w, None), ctx.workdir())
        })
        .collect();
    let a = Applied::apply(p, ctx.workdir(), &Mounts { made, existing });
    match &mut rec.file.profile {
        Some(r) => r.partial |= a.record.partial,
        None => {
            for line in a.record.lines(false) {
                progress.note(&format!("profile {}: {line}", p.name));
            }
            overlay(&mut rec.file.system, &a.record);
            rec.file.profile = Some(a.record.clone());
        }
    }
    Some(a)
}

/// The system record as it was during the run under a profile: the
/// sysctls, limits and settings it changed hold their new values.
pub(crate) fn overlay(sys: &mut crate::results::SystemInfo, r: &crate::results::TuningRecord) {
    use crate::results::{ChangeStatus, Limit};
    for c in &r.changes {
        let Some(new) = c.new.clone() else { continue };
        if !matches!(c.status, ChangeStatus::Applied | ChangeStatus::Unchanged) {
            continue;
        }
        match c.kind.as_str() {
            "sysctl" => {
                sys.sysctls.insert(c.name.clone(), new);
            }
            "limit" => {
                let one = |v: &str| v.parse::<u64>().ok();
                if let Some((soft, hard)) = new.split_once('/') {
                    sys.limits.insert(
                        c.name.clone(),
                        Limit {
                            soft: one(soft),
                            hard: one(hard),
                        },
                    );
                }
            }
            "setting" if c.name == crate::sys::Setting::Governor.name() => {
                sys.tuning.governor = Some(new)
            }
            "setting" if c.name == crate::sys::Setting::TransparentHugepages.name() => {
                sys.tuning.thp_enabled = Some(new)
            }
            _ => {}
        }
    }
}

/// Records in every file the sysctls any of the profiles names, as they
/// are before any is applied, so that files without that profile show
/// the value they ran with.
fn record_profile_sysctls(plan: &RunPlan, recs: &mut [Recording]) {
    let os = crate::tuning::Os::this();
    for p in &plan.profiles {
        for i in p.for_os(os) {
            if let crate::tuning::What::Sysctl { name, .. } = &i.what
                && let Some(v) = crate::sys::sysctl(name)
            {
                for r in recs.iter_mut() {
                    r.file
                        .system
                        .sysctls
                        .entry(name.clone())
                        .or_insert(v.clone());
                }
            }
        }
    }
}

/// Mappings a series may leave beside its own without being called a
/// leak: the allocator's (the judging threads' stacks and arenas are
/// counted apart, [`super::series::judging_mappings`]). glibc serves a
/// block of 128 KiB or more from a mapping of its own until its threshold
/// has grown: the quick suite's first series kept one of 480 KiB (its
/// samples) in two runs here, which this check called a scalebench bug;
/// musl keeps a few once it has grown (one after each of socket, bind,
/// mmap … in a guest). A benchmark's own leak is of its n mappings.
const ALLOCATOR_SLACK: usize = 4;

/// Runs one benchmark series and checks that it left nothing behind.
fn run_series(
    plan: &RunPlan,
    (t, variant): (&Target, Option<&str>),
    time: Option<TimeShare>,
    ctx: &Ctx,
    progress: &mut Progress,
) -> BenchResult {
    let judging_before = super::series::judging_mappings();
    let fds_before = crate::sys::count_open_fds();
    let maps_before = crate::sys::count_mappings();
    let p = SeriesPlan {
        n: t.n,
        runs: plan.runs,
        warmup: plan.warmup,
        auto: plan.auto,
        decide: plan.decide,
        keep_verdict: plan.keep_verdicts,
        order: plan.order,
        time,
    };
    let mut r = run_benchmark(t.bench, variant, p, ctx, progress);
    if variant.is_some() {
        if ctx.hosts().apart() {
            r.params.extra.insert(
                "server_host".into(),
                serde_json::Value::from(ctx.hosts().server.reach().to_string()),
            );
        }
        let family = if ctx.net().ipv6 { "ipv6" } else { "ipv4" };
        r.params
            .extra
            .insert("address_family".into(), serde_json::Value::from(family));
        if let Some((client, server)) = ctx.net().cpus {
            r.params
                .extra
                .insert("client_cpu".into(), serde_json::json!(client));
            r.params
                .extra
                .insert("server_cpu".into(), serde_json::json!(server));
        }
    }
    let fds_after = crate::sys::count_open_fds();
    let judging = super::series::judging_mappings() - judging_before;
    let maps_after = if t.bench.library_keeps_mappings() {
        maps_before
    } else {
        crate::sys::count_mappings().map(|m| m.saturating_sub(judging))
    };
    if fds_after > fds_before || maps_after > maps_before.map(|m| m + ALLOCATOR_SLACK) {
        let leak = format!(
            "scalebench bug: {} left {} descriptors and {} mappings behind",
            r.series,
            fds_after.saturating_sub(fds_before),
            maps_after
                .unwrap_or(0)
                .saturating_sub(maps_before.unwrap_or(0))
        );
        progress.note(&leak);
        r.message = Some(r.message.map_or(leak.clone(), |m| format!("{m}; {leak}")));
    }
    // After the leak check: the profile windows are not the runs.
    if let Some(opts) = &plan.why
        && matches!(r.status, Status::Ok | Status::Capped)
        && !crate::stop::interrupted()
    {
        progress.phase(&format!(
            "{}: profiling at low and high n (--why)",
            r.series
        ));
        let capped = r.status == Status::Capped;
        let prof = why::profile(t.bench, variant, ctx, r.params.n, capped, opts);
        if let Some(e) = &prof.error {
            progress.note(&format!("{}: no profile: {e}", r.series));
        }
        r.profile = Some(prof);
    }
    r
}

/// Executes `plan` (`execute_plan`) and records in every file the share
/// of CPU time the hypervisor stole meanwhile, also when stopped by ^C.
pub fn execute(
    plan: &RunPlan,
    ctx: &Ctx,
    recs: &mut [Recording],
    progress: &mut Progress,
) -> anyhow::Result<()> {
    let _pending = crate::stop::pending(crate::stop::Task::Results);
    let steal = results::sysinfo::StealMeter::start();
    let r = execute_plan(plan, ctx, recs, progress);
    let percent = steal.percent();
    for rec in recs.iter_mut() {
        rec.file.system.tuning.steal_percent = percent;
        if r.is_ok() {
            rec.save()?;
        }
    }
    r
}

/// The monitor of one series or workload, started now (none with
/// `--monitor off`).
fn start_monitor(plan: &RunPlan, ctx: &Ctx) -> Option<Monitor> {
    plan.monitor
        .as_ref()
        .map(|s| Monitor::start(s, ctx.workdir()))
}

/// Whether a run has said that perf stopped counting (said once a run;
/// every series' record keeps its own error).
static PERF_FAILURE_SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Stops `monitor` and tells the user, once a run, when its perf counted
/// nothing: the record keeps why, but a user reading the terminal should
/// not have to open the file to learn it.
fn finish_monitor(
    monitor: Option<Monitor>,
    progress: &Progress,
) -> Option<crate::results::Monitor> {
    let m = monitor.map(Monitor::finish)?;
    if let Some(why) = m.perf.as_ref().and_then(|p| p.error.as_deref())
        && !PERF_FAILURE_SAID.swap(true, std::sync::atomic::Ordering::Relaxed)
    {
        progress.note_run(&format!(
            "monitor: {why}; the series and workloads carry no perf counts (each one's monitor.perf.error in the result file says so)"
        ));
    }
    Some(m)
}

/// Measures one series under profile `i` (none when the plan has none)
/// into `rec` and saves it; an error when the server host is lost.
fn series_into(
    plan: &RunPlan,
    i: usize,
    (t, variant): (&Target, Option<&str>),
    time: Option<TimeShare>,
    ctx: &Ctx,
    rec: &mut Recording,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    let applied = under_profile(plan, i, ctx, rec, progress);
    let measuring = crate::stop::pending(crate::stop::Task::Measuring);
    let monitor = start_monitor(plan, ctx);
    let mut r = run_series(plan, (t, variant), time, ctx, progress);
    r.monitor = finish_monitor(monitor, progress);
    drop(measuring);
    drop(applied);
    let lost = variant
        .is_some()
        .then(|| ctx.hosts().server.lost())
        .flatten();
    if let Some(why) = &lost {
        r.status = Status::Failed;
        r.message = Some(format!("{why} during this series"));
    }
    rec.file.benchmarks.push(r);
    rec.save()?;
    if let Some(why) = lost {
        anyhow::bail!("{why}: the run stops here (what was measured is in the result file)");
    }
    Ok(())
}

/// Measures workload `w` under profile `i` (none when the plan has none)
/// into `rec` and saves it; an error when the server host is lost.
fn workload_into(
    plan: &RunPlan,
    i: usize,
    w: &WorkTarget,
    ctx: &Ctx,
    rec: &mut Recording,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    let mounts = plan
        .profiles
        .get(i)
        .and_then(|p| p.mount_options(crate::tuning::Os::this()));
    let opts = plan.work_options(w, mounts);
    let applied = under_profile(plan, i, ctx, rec, progress);
    let measuring = crate::stop::pending(crate::stop::Task::Measuring);
    let monitor = start_monitor(plan, ctx);
    let mut r = w.workload.run(ctx, &opts, progress);
    r.monitor = finish_monitor(monitor, progress);
    drop(measuring);
    if applied.is_some() {
        refused_mounts(&r, rec, progress);
    }
    drop(applied);
    let info = w.workload.info();
    if ctx.hosts().apart() {
        let said = ctx.hosts().said(info.between_hosts, info.several_clients);
        r.params.insert("hosts".into(), said.into());
    }
    let lost = (info.between_hosts && !crate::stop::interrupted())
        .then(|| ctx.hosts().lost(info.several_clients))
        .flatten();
    if let Some(why) = &lost {
        r.status = Status::Failed;
        r.message = Some(format!("{why} during this workload"));
    }
    rec.file.workloads.push(r);
    rec.save()?;
    if let Some(why) = lost {
        anyhow::bail!("{why}: the run stops here (what was measured is in the result file)");
    }
    Ok(())
}

/// The profile's mount options a filesystem the workload made would not
/// mount with (its targets' `refused_mount_options`, left out when it was
/// mounted): the profile's record names them as refused, and the run is
/// partial.
fn refused_mounts(
    r: &crate::results::WorkloadResult,
    rec: &mut Recording,
    progress: &mut Progress,
) {
    let targets = r.params.get("targets").and_then(|t| t.as_array());
    let mut words: Vec<String> = Vec::new();
    for t in targets.into_iter().flatten() {
        let refused = t.get("refused_mount_options").and_then(|v| v.as_array());
        for x in refused.into_iter().flatten() {
            let why = x["reason"]
                .as_str()
                .unwrap_or("")
                .lines()
                .next()
                .unwrap_or("");
            words.push(format!(
                "`{}` by {} ({why})",
                x["option"].as_str().unwrap_or("?"),
                t["fs_type"].as_str().unwrap_or("?")
            ));
        }
    }
    let Some(p) = rec.file.profile.as_mut().filter(|_| !words.is_empty()) else {
        return;
    };
    let reason = format!(
        "refused when mounted: {}; measured without them",
        words.join("; ")
    );
    for c in p.changes.iter_mut() {
        if c.kind == "mount" && c.name == "mount options" {
            c.status = crate::results::ChangeStatus::Refused;
            c.reason = Some(reason.clone());
        }
    }
    p.partial = true;
    progress.note(&format!("profile {}: mount options {reason}", p.name));
}

/// Executes `plan`, recording into `recs` (one per profile, or one), each
/// written after every series and workload; stops early on ^C. The files
/// are not marked complete here.
fn execute_plan(
    plan: &RunPlan,
    ctx: &Ctx,
    recs: &mut [Recording],
    progress: &mut Progress,
) -> anyhow::Result<()> {
    record_profile_sysctls(plan, recs);
    let mut count = Countdown::new(super::estimate::items(plan, ctx)).within(plan.within);
    for (t, variant) in &super::plan::all_series(plan, ctx) {
        for (i, rec) in recs.iter_mut().enumerate() {
            if crate::stop::interrupted() {
                return Ok(());
            }
            progress.note_run(&count.begin());
            let time = plan.within.and_then(|(goal, from)| {
                let allowance = count.share(goal, from.elapsed())?;
                Some(TimeShare { allowance, goal })
            });
            let what = (*t, variant.as_deref());
            series_into(plan, i, what, time, ctx, rec, progress)?;
            count.done();
        }
    }
    for w in &plan.work {
        for (i, rec) in recs.iter_mut().enumerate() {
            if crate::stop::interrupted() {
                return Ok(());
            }
            progress.note_run(&count.begin());
            workload_into(plan, i, w, ctx, rec, progress)?;
            count.done();
        }
    }
    Ok(())
}

/// Executes `plan` on every system of `systems`, recording into `recs`
/// (one per system, in the same order): each benchmark (with all its
/// series) and each workload runs on every system in turn, so that drift
/// falls on all alike; stops early on ^C.
pub fn execute_on_systems(
    plan: &RunPlan,
    o: &RunOptions,
    ctx: &Ctx,
    systems: &mut [Opened],
    recs: &mut [Recording],
    progress: &mut Progress,
) -> anyhow::Result<()> {
    let _pending = crate::stop::pending(crate::stop::Task::Results);
    let steal = results::sysinfo::StealMeter::start();
    let items = plan
        .targets
        .iter()
        .map(RemoteItem::Bench)
        .chain(plan.work.iter().map(RemoteItem::Work));
    let mut r = Ok(());
    let mut count = Countdown::new(super::estimate::items(plan, ctx));
    'items: for item in items {
        for (s, rec) in systems.iter_mut().zip(recs.iter_mut()) {
            if crate::stop::interrupted() {
                break 'items;
            }
            progress.note_run(&count.begin());
            r = match (s, item) {
                (Opened::Remote(g), _) => g.run_item(o, item, rec, progress),
                (Opened::Here, RemoteItem::Bench(t)) => {
                    let mut r = Ok(());
                    for (t, v) in super::plan::all_series(plan, ctx)
                        .into_iter()
                        .filter(|(x, _)| std::ptr::eq(*x, t))
                    {
                        if crate::stop::interrupted() || r.is_err() {
                            break;
                        }
                        r = series_into(plan, 0, (t, v.as_deref()), None, ctx, rec, progress);
                    }
                    r
                }
                (Opened::Here, RemoteItem::Work(w)) => {
                    workload_into(plan, 0, w, ctx, rec, progress)
                }
            };
            count.done();
            if r.is_err() {
                break 'items;
            }
        }
    }
    let percent = steal.percent();
    for (s, rec) in systems.iter().zip(recs.iter_mut()) {
        if let Opened::Here = s {
            rec.file.system.tuning.steal_percent = percent;
            if r.is_ok() {
                rec.save()?;
            }
        }
    }
    r
}

/// Frees what a dead run left outside its work directory, before the
/// directory is removed: settings its profile changed (the journal), a
/// database's shared memory, a memory cgroup, its guests' virtiofsd pid
/// files.
pub fn release_stale(dir: &std::path::Path) -> Vec<String> {
    let mut v = apply::recover(dir);
    v.extend(workloads::release_stale(dir));
    v.extend(crate::systems::qemu::release_stale(dir));
    v
}
