//! A whole `scalebench run` as a plan the harness executes: benchmark
//! series and workloads, each under every tuning profile asked for, every
//! result written to its file as soon as it is measured.
//!
//! With profiles (`run --profile default,throughput`) each profile has its
//! own result file. They alternate: for each series or workload, each
//! profile in turn is applied, measured under and put back, so that drift
//! of the machine over the run falls on every profile alike (only figures
//! measured side by side, alternating, compare).

use super::series::{Plan, run_benchmark};
use super::why::{self, WhyOptions};
use crate::ctx::Ctx;
use crate::harness::progress::Progress;
use crate::harness::reaper;
use crate::bench::Benchmark;
use crate::hosts::Hosts;
use crate::profile::Profile;
use crate::profile::apply::{self, Applied, Mounts};
use crate::results::{self, BenchResult, ResultFile, Status};
use crate::workloads::{self, Size, Workload};
use anyhow::Context;
use std::path::PathBuf;

/// A benchmark to run and its n.
pub struct Target {
    /// The benchmark.
    pub bench: &'static dyn Benchmark,
    /// Items per run.
    pub n: u64,
}

/// A workload to run and its size.
pub struct WorkTarget {
    /// The workload.
    pub workload: &'static dyn Workload,
    /// How big.
    pub size: Size,
}

/// What a run does.
pub struct RunPlan {
    /// Benchmarks, in order.
    pub targets: Vec<Target>,
    /// Workloads, in order, after the benchmarks.
    pub work: Vec<WorkTarget>,
    /// The workloads' options (their size is each target's).
    pub work_opts: workloads::Options,
    /// Runs per benchmark.
    pub runs: u32,
    /// `--runs auto`: add runs until the ends of n are known, up to `runs`.
    pub auto: Option<super::series::AutoRuns>,
    /// Warm-up operations (`None`: the benchmark's default).
    pub warmup: Option<u64>,
    /// Profile each benchmark at low and high n afterwards (`--why`).
    pub why: Option<WhyOptions>,
    /// The tuning profiles to measure under, each with its own result
    /// file; empty: the system as it is, one result file.
    pub profiles: Vec<Profile>,
    /// Where the client and the server run (`--host`); empty: both here.
    pub hosts: Vec<crate::hosts::HostSpec>,
    /// ssh's configuration file for ssh hosts.
    pub ssh_config: Option<PathBuf>,
}

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

/// A result file being recorded and where it goes.
pub struct Recording {
    /// Its path.
    pub path: PathBuf,
    /// What it holds so far.
    pub file: ResultFile,
}

impl Recording {
    /// Writes the file (atomically). A write cut short by a signal
    /// (`EINTR`, which std retries for most calls but not every one) is
    /// tried again, up to three times: a stop signal must not cost the
    /// results.
    fn save(&self) -> anyhow::Result<()> {
        let mut tries = 0;
        loop {
            tries += 1;
            match results::write_atomic(&self.path, &self.file) {
                Err(e) if tries < 3 && cut_short(&e) => continue,
                r => {
                    return r.with_context(|| {
                        format!("cannot write the result file {}", self.path.display())
                    });
                }
            }
        }
    }
}

/// Whether `e` is a system call cut short by a signal.
fn cut_short(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::Interrupted)
    })
}

/// What an interrupted run says at the end, on standard error: the
/// signal, what each result file kept (the finished series and workloads,
/// and the complete runs of the one interrupted), and what the cleanup did
/// ([`crate::stop::record`]: processes stopped, settings restored, the
/// work directory removed …).
pub fn interrupted_summary(files: &[(&std::path::Path, &ResultFile)]) -> String {
    let (sig, n) = crate::stop::signals();
    let mut parts: Vec<String> = files
        .iter()
        .map(|(path, f)| format!("kept {} in {}", kept(f), path.display()))
        .collect();
    parts.extend(crate::stop::record());
    format!(
        "interrupted by {}{}: {}",
        crate::stop::signal_name(sig),
        if n > 1 {
            format!(" ({n} signals)")
        } else {
            String::new()
        },
        parts.join("; ")
    )
}

/// What a result file holds, in words, for [`interrupted_summary`].
fn kept(f: &ResultFile) -> String {
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut v = Vec::new();
    let done = f
        .benchmarks
        .iter()
        .filter(|b| b.status != Status::Interrupted)
        .count()
        + f.workloads
            .iter()
            .filter(|w| w.status != Status::Interrupted)
            .count();
    if done > 0 {
        v.push(format!(
            "{} that finished",
            plural(done, "series or workload", "series and workloads")
        ));
    }
    for b in f
        .benchmarks
        .iter()
        .filter(|b| b.status == Status::Interrupted)
    {
        v.push(format!(
            "{} of {} (interrupted)",
            plural(b.runs.len(), "complete run", "complete runs"),
            b.series
        ));
    }
    for w in f
        .workloads
        .iter()
        .filter(|w| w.status == Status::Interrupted)
    {
        // A sweep's levels, or the other rows (phases, loads) measured.
        let sweeps = w.rows.iter().any(|r| r.sweep.is_some());
        let measured: usize = w
            .rows
            .iter()
            .map(|r| match &r.sweep {
                Some(s) => s.levels.iter().filter(|l| l.value.is_some()).count(),
                None => usize::from(r.phase.is_some() || r.load.is_some()),
            })
            .sum();
        let (one, many) = if sweeps {
            ("measured level", "measured levels")
        } else {
            ("measured row", "measured rows")
        };
        v.push(format!(
            "{} of {} (interrupted)",
            plural(measured, one, many),
            w.name
        ));
    }
    if v.is_empty() {
        "nothing measured yet".into()
    } else {
        v.join(", ")
    }
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
    let fs = &plan.work_opts.fs;
    let mounts = if !fs
        .places
        .iter()
        .any(|pl| matches!(pl, crate::workloads::fs::Place::Mkfs(_)))
    {
        Mounts::None
    } else if fs.mount_opts.is_some() {
        Mounts::UserOptions
    } else {
        Mounts::Made
    };
    let a = Applied::apply(p, ctx.workdir(), mounts);
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
fn overlay(sys: &mut crate::results::SystemInfo, r: &crate::results::ProfileRecord) {
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
    let os = crate::profile::Os::this();
    for p in &plan.profiles {
        for i in p.for_os(os) {
            if let crate::profile::What::Sysctl { name, .. } = &i.what
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

/// The workload options under profile `i`: its mount options go to the
/// filesystems the run makes unless `--mount-opts` named others.
fn work_options(plan: &RunPlan, i: usize, size: Size) -> workloads::Options {
    let mut o = workloads::Options {
        size,
        ..plan.work_opts.clone()
    };
    if o.fs.mount_opts.is_none()
        && let Some(p) = plan.profiles.get(i)
    {
        o.fs.mount_opts = p.mount_options(crate::profile::Os::this());
    }
    o
}

/// Runs one benchmark series and checks that it left nothing behind.
fn run_series(
    plan: &RunPlan,
    t: &Target,
    variant: Option<&str>,
    ctx: &Ctx,
    progress: &mut Progress,
) -> BenchResult {
    let fds_before = crate::sys::count_open_fds();
    let maps_before = crate::sys::count_mappings();
    let p = Plan {
        n: t.n,
        runs: plan.runs,
        warmup: plan.warmup,
        auto: plan.auto,
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
    let maps_after = if t.bench.library_keeps_mappings() {
        maps_before
    } else {
        crate::sys::count_mappings()
    };
    if fds_after > fds_before || maps_after > maps_before {
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
        && !reaper::interrupted()
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
    let series: Vec<(&Target, Option<String>)> = plan
        .targets
        .iter()
        .flat_map(|t| {
            let v = t.bench.variants(ctx);
            if v.is_empty() {
                vec![(t, None)]
            } else {
                v.into_iter().map(|v| (t, Some(v))).collect()
            }
        })
        .collect();
    for (t, variant) in &series {
        for (i, rec) in recs.iter_mut().enumerate() {
            if reaper::interrupted() {
                return Ok(());
            }
            let applied = under_profile(plan, i, ctx, rec, progress);
            let measuring = crate::stop::pending(crate::stop::Task::Measuring);
            let mut r = run_series(plan, t, variant.as_deref(), ctx, progress);
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
                anyhow::bail!(
                    "{why}: the run stops here (what was measured is in the result file)"
                );
            }
        }
    }
    for w in &plan.work {
        for (i, rec) in recs.iter_mut().enumerate() {
            if reaper::interrupted() {
                return Ok(());
            }
            let opts = work_options(plan, i, w.size);
            let applied = under_profile(plan, i, ctx, rec, progress);
            let measuring = crate::stop::pending(crate::stop::Task::Measuring);
            let mut r = w.workload.run(ctx, &opts, progress);
            drop(measuring);
            drop(applied);
            if ctx.hosts().apart() {
                let h = ctx.hosts();
                r.params.insert(
                    "hosts".into(),
                    serde_json::Value::from(if w.workload.info().between_hosts {
                        format!("client {}, server {}", h.client.reach(), h.server.reach())
                    } else {
                        format!(
                            "{} only: this workload does not run between hosts",
                            h.client.reach()
                        )
                    }),
                );
            }
            let lost = (w.workload.info().between_hosts && !reaper::interrupted())
                .then(|| ctx.hosts().server.lost())
                .flatten();
            if let Some(why) = &lost {
                r.status = Status::Failed;
                r.message = Some(format!("{why} during this workload"));
            }
            rec.file.workloads.push(r);
            rec.save()?;
            if let Some(why) = lost {
                anyhow::bail!(
                    "{why}: the run stops here (what was measured is in the result file)"
                );
            }
        }
    }
    Ok(())
}

/// Marks every file complete (unless interrupted) and writes it.
pub fn finish(recs: &mut [Recording]) -> anyhow::Result<()> {
    if reaper::interrupted() {
        return Ok(());
    }
    for rec in recs.iter_mut() {
        rec.file.finished = Some(results::now_rfc3339());
        rec.file.complete = true;
        rec.save()?;
    }
    Ok(())
}

/// Frees what a dead run left outside its work directory, before the
/// directory is removed: settings its profile changed (the journal), a
/// database's shared memory, a memory cgroup.
pub fn release_stale(dir: &std::path::Path) -> Vec<String> {
    let mut v = apply::recover(dir);
    v.extend(workloads::release_stale(dir));
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    fn fixture() -> ResultFile {
        serde_json::from_str(include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/default.json"
        )))
        .unwrap()
    }

    #[test]
    fn what_an_interrupted_file_kept_is_said_in_words() {
        let mut f = fixture();
        assert!(f.benchmarks.len() >= 2, "the fixture has benchmarks");
        let done = f.benchmarks.len() - 1 + f.workloads.len();
        let last = f.benchmarks.last_mut().unwrap();
        last.status = Status::Interrupted;
        last.runs.truncate(2);
        let series = last.series.clone();
        let words = kept(&f);
        assert!(
            words.starts_with(&format!("{done} series and workloads that finished")),
            "{words}"
        );
        assert!(
            words.ends_with(&format!("2 complete runs of {series} (interrupted)")),
            "{words}"
        );
        f.benchmarks.clear();
        f.workloads.clear();
        assert_eq!(kept(&f), "nothing measured yet");
    }

    static DELIVERED: AtomicU64 = AtomicU64::new(0);

    extern "C" fn count(_sig: libc::c_int) {
        DELIVERED.fetch_add(1, Ordering::Relaxed);
    }

    /// Signals arriving while a result file is written (a handler without
    /// `SA_RESTART`, as scalebench's, so that calls may fail with EINTR)
    /// cost nothing: every save writes the whole file.
    #[test]
    fn a_result_file_is_written_whole_under_a_storm_of_signals() {
        let file = fixture();
        let dir = tempfile::tempdir().unwrap();
        let rec = Recording {
            path: dir.path().join("r.json"),
            file,
        };
        // SAFETY: a handler that only counts, for a signal nothing else in
        // this process uses, sent to this thread alone.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = count as *const () as libc::sighandler_t;
            libc::sigemptyset(&mut sa.sa_mask);
            sa.sa_flags = 0;
            libc::sigaction(libc::SIGUSR2, &sa, std::ptr::null_mut());
        }
        // SAFETY: pthread_self cannot fail.
        let me = unsafe { libc::pthread_self() } as usize;
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let storm = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    // SAFETY: the writing thread lives until this one is
                    // joined.
                    unsafe { libc::pthread_kill(me as libc::pthread_t, libc::SIGUSR2) };
                    std::thread::sleep(std::time::Duration::from_micros(20));
                }
            })
        };
        let before = DELIVERED.load(Ordering::Relaxed);
        let mut saved = Vec::new();
        for _ in 0..40 {
            saved.push(rec.save().map_err(|e| format!("{e:#}")));
            let back: ResultFile =
                serde_json::from_str(&std::fs::read_to_string(&rec.path).unwrap()).unwrap();
            assert_eq!(back.benchmarks.len(), rec.file.benchmarks.len());
        }
        stop.store(true, Ordering::SeqCst);
        storm.join().unwrap();
        let during = DELIVERED.load(Ordering::Relaxed) - before;
        assert!(saved.iter().all(Result::is_ok), "{saved:?}");
        assert!(during > 0, "no signal arrived during the saves");
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .filter(|n| n != "r.json")
            .collect();
        assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    }
}
