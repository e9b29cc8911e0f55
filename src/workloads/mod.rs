//! Real-world workloads: whole scenarios (static web serving, …) run the
//! same way on every system. Each measures rows of throughput and latency,
//! one per configuration, into the result file's `workloads`.
//!
//! Adding a workload: a file here with a unit struct implementing
//! [`Workload`], one line in the `registry!` list below, and its
//! `[workload.<name>]` table in suites/full.toml (and suites/quick.toml
//! when [`Info::quick`]; a test holds them so).

pub mod bigfile;
pub mod clients;
pub mod forward;
pub mod fs;
pub mod http;
pub mod mail;
pub mod pg;
pub(crate) mod server_path;

use crate::ctx::Ctx;
use crate::harness::progress::Progress;
use crate::harness::sweep;
use crate::results::{Status, WorkloadResult, WorkloadRow};
use std::collections::BTreeMap;
use std::time::Duration;

/// Static description of a workload.
#[derive(Debug)]
pub struct Info {
    /// Name used on the command line and in results.
    pub name: &'static str,
    /// What it does, in words.
    pub what: &'static str,
    /// Part of the quick suite (every workload is part of `full`;
    /// suites/quick.toml and suites/full.toml say the same, and a test
    /// holds them equal).
    pub quick: bool,
    /// Runs between the run's client and server hosts (`run --host`);
    /// otherwise it measures the machine scalebench runs on, whatever
    /// the hosts.
    pub between_hosts: bool,
    /// Spreads its load over every client of the run (`run --host
    /// client=… --host client=…`); otherwise only the first client runs
    /// it.
    pub several_clients: bool,
}

/// How big a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    /// Small: part of the quick suite.
    Quick,
    /// The full suite's: the seeds' sizes for most; pgbench (scale 100
    /// against the seeds' 800), mail (timed levels against a fixed
    /// 200 000 messages) and fs (1 million files against 3 million) are
    /// smaller, and the `seeds` suite sets theirs.
    Full,
}

/// A workload's own options, made by its [`Workload::options`] from the
/// flags given and read back by its [`Workload::run`] ([`WorkloadOptions::own`]).
pub type Own = std::sync::Arc<dyn std::any::Any + Send + Sync>;

/// What a workload is asked to do: what every workload is asked (size,
/// sweep, a tuning profile's mount options) and its own options.
#[derive(Clone)]
pub struct WorkloadOptions {
    /// How big.
    pub size: Size,
    /// Sweep over levels of one variable instead of measuring once.
    pub sweep: Option<SweepOptions>,
    /// Shrink what this machine cannot hold to what it can, saying so
    /// (`run --fit`), instead of refusing it.
    pub fit: bool,
    /// The mount options a tuning profile asks for the filesystems a
    /// workload makes (a workload's own mount options win).
    pub profile_mounts: Option<String>,
    /// The workload's own options ([`Workload::options`]); `None`: its
    /// defaults.
    pub own: Option<Own>,
}

impl std::fmt::Debug for WorkloadOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkloadOptions")
            .field("size", &self.size)
            .field("sweep", &self.sweep)
            .field("fit", &self.fit)
            .field("profile_mounts", &self.profile_mounts)
            .field("own", &self.own.is_some())
            .finish()
    }
}

impl WorkloadOptions {
    /// Defaults for `size`.
    pub fn new(size: Size) -> WorkloadOptions {
        WorkloadOptions {
            size,
            sweep: None,
            fit: false,
            profile_mounts: None,
            own: None,
        }
    }

    /// The same with `own` as the workload's own options.
    pub fn with_own<T: std::any::Any + Send + Sync>(mut self, own: T) -> WorkloadOptions {
        self.own = Some(std::sync::Arc::new(own));
        self
    }

    /// The workload's own options of type `T`, or `T`'s defaults when none
    /// were made. Options of another type are a workload reading what it
    /// did not make (a bug, never the user's input): that stops with the
    /// type named ([`WorkloadOptions::try_own`]) rather than running on
    /// defaults.
    pub fn own<T: std::any::Any + Clone + Default>(&self) -> T {
        self.try_own().unwrap_or_else(|e| panic!("{e}"))
    }

    /// As [`WorkloadOptions::own`], with options of another type an error.
    pub fn try_own<T: std::any::Any + Clone + Default>(&self) -> Result<T, String> {
        match &self.own {
            None => Ok(T::default()),
            Some(o) => o.downcast_ref::<T>().cloned().ok_or_else(|| {
                format!(
                    "a workload read its own options as {}, but they were made as another type \
                     (see its `options`)",
                    std::any::type_name::<T>()
                )
            }),
        }
    }
}

/// A check of one value of a flag: `Err` says what is wrong with it.
pub type Check = fn(&str) -> Result<(), String>;

/// One command-line option a workload owns, as data: the command line
/// makes the flag (`--NAME`), shows it under its heading, and hands what
/// was given to the workload ([`Given`]).
#[derive(Debug)]
pub struct WorkloadFlag {
    /// The long name, without `--` (`db-size`).
    pub name: &'static str,
    /// The value's name in the help (`SIZE`); `None`: a switch.
    pub value: Option<&'static str>,
    /// What it does.
    pub help: &'static str,
    /// The help's heading (`PostgreSQL`).
    pub heading: &'static str,
    /// Several values: repeated, or comma separated when `split`.
    pub many: bool,
    /// Several values may be given comma separated.
    pub split: bool,
    /// The values it takes, each with its meaning; empty: any (checked by
    /// `check`).
    pub choices: &'static [(&'static str, &'static str)],
    /// Checks one value as it is given (a usage error names the flag).
    pub check: Option<Check>,
    /// Flags it cannot be given with (long names; also the run's own, such
    /// as `sweep`).
    pub conflicts: &'static [&'static str],
    /// Flags it needs.
    pub requires: &'static [&'static str],
    /// Its value is a secret (a password in a connection string): the
    /// recorded command line shows `(redacted)`.
    pub secret: bool,
    /// It makes its workload sweep something of its own (pgbench's
    /// `--memory-sweep`): the sweep's timings apply without `--sweep`, and
    /// every workload of the run must take it.
    pub sweeps: bool,
}

impl WorkloadFlag {
    /// A flag taking one value named `value`.
    pub const fn value(
        name: &'static str,
        value: &'static str,
        heading: &'static str,
        help: &'static str,
    ) -> WorkloadFlag {
        WorkloadFlag {
            name,
            value: Some(value),
            help,
            heading,
            many: false,
            split: false,
            choices: &[],
            check: None,
            conflicts: &[],
            requires: &[],
            secret: false,
            sweeps: false,
        }
    }

    /// A switch.
    pub const fn switch(
        name: &'static str,
        heading: &'static str,
        help: &'static str,
    ) -> WorkloadFlag {
        WorkloadFlag {
            value: None,
            ..WorkloadFlag::value(name, "", heading, help)
        }
    }
}

/// A workload option that cannot be used: its words (naming the flag and
/// value, `--mail-size 0: …`) and the flag at fault, when one is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{words}")]
pub struct FlagError {
    /// The flag at fault, by long name without `--`; `None` when the
    /// error is the workload's as a whole.
    pub flag: Option<String>,
    /// What is wrong.
    pub words: String,
    /// Whether the option is wrong in itself (a usage error, exit status
    /// 2: a value out of range, options that do not go together), rather
    /// than naming what this machine lacks or a path it cannot use (1).
    pub usage: bool,
}

impl FlagError {
    /// An error of flag `flag` (long name without `--`), wrong in itself.
    pub fn of(flag: &str, words: impl Into<String>) -> FlagError {
        FlagError {
            flag: Some(flag.to_string()),
            words: words.into(),
            usage: true,
        }
    }

    /// The same error as one of what this machine lacks (a program, a
    /// kernel's filesystem, a CPU) or a path it cannot use: exit status 1.
    pub fn failed(self) -> FlagError {
        FlagError {
            usage: false,
            ..self
        }
    }

    /// As the binary's error: a usage error ([`crate::sys::values::Usage`])
    /// when it is one, else a failure, in the same words (`prefix` first,
    /// a suite file's place).
    pub fn into_error(self, prefix: &str) -> anyhow::Error {
        let words = format!("{prefix}{}", self.words);
        if self.usage {
            crate::sys::values::Usage(words).into()
        } else {
            anyhow::Error::msg(words)
        }
    }
}

impl From<String> for FlagError {
    fn from(words: String) -> FlagError {
        FlagError {
            flag: None,
            words,
            usage: true,
        }
    }
}

impl From<&str> for FlagError {
    fn from(words: &str) -> FlagError {
        FlagError::from(words.to_string())
    }
}

/// The workload flags given on the command line: each flag's values (a
/// switch given has one, empty), by long name.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Given {
    values: BTreeMap<String, Vec<String>>,
}

impl Given {
    /// Whether no flag was given.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Records the values given for `flag`.
    pub fn set(&mut self, flag: &str, values: Vec<String>) {
        self.values.insert(flag.to_string(), values);
    }

    /// Whether `flag` was given.
    pub fn has(&self, flag: &str) -> bool {
        self.values.contains_key(flag)
    }

    /// The value of a one-value flag.
    pub fn value(&self, flag: &str) -> Option<&str> {
        self.values.get(flag)?.last().map(String::as_str)
    }

    /// The values of a flag (none when not given).
    pub fn values(&self, flag: &str) -> &[String] {
        self.values.get(flag).map_or(&[], Vec::as_slice)
    }

    /// Every flag given, by name.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.values.keys().map(String::as_str)
    }

    /// A one-value flag read with `parse`; its error names the flag.
    pub fn parsed<T>(
        &self,
        flag: &str,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<Option<T>, FlagError> {
        self.value(flag)
            .map(|v| parse(v).map_err(|e| FlagError::of(flag, format!("--{flag} {v}: {e}"))))
            .transpose()
    }
}

/// What a workload's options are made from: the flags given and what the
/// run asks of every workload.
pub struct Asked<'a> {
    /// The workload flags given.
    pub given: &'a Given,
    /// Where the client and the server run (`run --host`).
    pub hosts: &'a [crate::hosts::HostSpec],
    /// The sweep every workload of the run is asked for.
    pub sweep: Option<&'a SweepOptions>,
    /// Whether the workloads run on this machine (else on systems of
    /// `run --system`, whose own scalebench checks what is theirs to
    /// check: their kernel's filesystems).
    pub here: bool,
}

/// Whether a workload makes filesystems, and whose mount options they get:
/// a tuning profile's mount options go only where the workload names none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mounting {
    /// It makes none.
    None,
    /// It makes some, with mount options of its own.
    OwnOptions,
    /// It makes some and takes a profile's mount options.
    ProfileOptions,
}

/// A sweep as asked for (`run --sweep connections=1,10,100`); what is not
/// given follows the size.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepOptions {
    /// The variable (`connections`, `clients`, `sessions`).
    pub variable: String,
    /// Its levels, in the order to run them.
    pub levels: Vec<f64>,
    /// Heat-up per level (default: quick 1 s, full 10 s).
    pub heat_up: Option<Duration>,
    /// Sample length (default: quick 2 s, full 10 s).
    pub sample: Option<Duration>,
    /// Samples per level (default: quick 3, full 5).
    pub samples: Option<u32>,
    /// Baseline level (default: the lowest).
    pub baseline: Option<f64>,
}

impl SweepOptions {
    /// Whether it gives timings only, no levels: `--warm-up`,
    /// `--sample-time` or `--samples` without `--sweep`, for workloads
    /// that sweep levels of their own ([`Workload::sweeps_by_default`]),
    /// which then time their own levels so.
    pub fn timings_only(&self) -> bool {
        self.levels.is_empty()
    }

    /// How a workload of `size` sweeps, in words for the dry run: `at 3
    /// levels of connections (1, 10, 100): 10s heat-up, 5 samples of 10s
    /// a level`.
    pub fn words(&self, size: Size) -> String {
        let plan = self.plan(size, "");
        let levels: Vec<String> = plan.levels.iter().map(|&l| units::fmt_n(l)).collect();
        format!(
            "at {} of {} ({}): {} heat-up, {} of {} a level",
            units::fmt_count(levels.len() as u64, "level", "levels"),
            plan.variable,
            levels.join(", "),
            humantime::format_duration(plan.heat_up),
            units::fmt_count(u64::from(plan.samples), "sample", "samples"),
            humantime::format_duration(plan.sample)
        )
    }

    /// The harness's plan for a workload of `size` whose figure is in `unit`.
    pub fn plan(&self, size: Size, unit: &str) -> sweep::SweepPlan {
        let (heat, sample, samples) = match size {
            Size::Quick => (1, 2, 3),
            Size::Full => (10, 10, 5),
        };
        sweep::SweepPlan {
            variable: self.variable.clone(),
            unit: unit.to_string(),
            levels: self.levels.clone(),
            baseline: self
                .baseline
                .unwrap_or_else(|| self.levels.iter().copied().fold(f64::INFINITY, f64::min)),
            knee_on: "per-unit",
            heat_up: self.heat_up.unwrap_or(Duration::from_secs(heat)),
            samples: self.samples.unwrap_or(samples),
            sample: self.sample.unwrap_or(Duration::from_secs(sample)),
            figure_of_last: 3,
            counts_failures: false,
        }
    }
}

/// A real-world workload.
pub trait Workload: Sync {
    /// Its description.
    fn info(&self) -> &'static Info;

    /// The variables it can be swept over (`run --sweep VAR=…`); none by
    /// default.
    fn sweeps(&self) -> &'static [&'static str] {
        &[]
    }

    /// Whether it sweeps its variable without `--sweep`, over levels of
    /// its own at each size (pgbench's clients, mail's sessions,
    /// forward's rates): the sweep's timings (`--warm-up`,
    /// `--sample-time`, `--samples`) then apply to those levels, given as
    /// a sweep without levels. None by default.
    fn sweeps_by_default(&self) -> bool {
        false
    }

    /// The command-line options it owns; none by default. Workloads of one
    /// module may share flags (the same [`WorkloadFlag`]s).
    fn flags(&self) -> &'static [WorkloadFlag] {
        &[]
    }

    /// Its own options from the flags given, with their defaults, checked
    /// before anything is measured; an error says what is wrong, naming
    /// the flag. None by default.
    fn options(&self, _asked: &Asked) -> Result<Option<Own>, FlagError> {
        Ok(None)
    }

    /// The directories it measures in (beyond the work directory), whose
    /// filesystems the system record holds.
    fn dirs(&self, _opts: &WorkloadOptions) -> Vec<std::path::PathBuf> {
        Vec::new()
    }

    /// Whether it makes filesystems that a tuning profile's mount options
    /// go to.
    fn mounting(&self, _opts: &WorkloadOptions) -> Mounting {
        Mounting::None
    }

    /// The existing directories whose filesystems it measures (not the
    /// ones it makes), `workdir` being the run's work directory: a tuning
    /// profile's mount options are applied to them by remounting. None by
    /// default.
    fn measured_dirs(
        &self,
        _opts: &WorkloadOptions,
        _workdir: &std::path::Path,
    ) -> Vec<std::path::PathBuf> {
        Vec::new()
    }

    /// Frees what a run of it killed on the way (kill -9) left beyond the
    /// files of its work directory `dir`; says what it did. Nothing by
    /// default.
    fn release_stale(&self, _dir: &std::path::Path) -> Vec<String> {
        Vec::new()
    }

    /// A helper it runs as a process of its own (on a server host too):
    /// `scalebench __agent NAME ARGS…` calls this with `ARGS`. None by
    /// default.
    fn agent(&self, _args: &[String]) -> Option<anyhow::Result<std::process::ExitCode>> {
        None
    }

    /// What it will do at the size `opts` asks for, in words (`20 000
    /// files, 191 MiB, 10 000 requests`), for `run --dry-run`; `None`
    /// (the default) where its size says it all. `here`, when it runs on
    /// this machine: a context whose work directory is where the run's
    /// will be made (it may not exist yet), so that what `--fit` would
    /// shrink is said from the free space there, read and nothing more.
    fn size_words(&self, _opts: &WorkloadOptions, _here: Option<&Ctx>) -> Option<String> {
        None
    }

    /// Runs it; never panics on failures (they go in the result).
    fn run(&self, ctx: &Ctx, opts: &WorkloadOptions, progress: &mut Progress) -> WorkloadResult;
}

macro_rules! registry {
    ($($path:path),* $(,)?) => {
        /// Every workload, in the order a suite runs them.
        pub static WORKLOADS: &[&dyn Workload] = &[$(&$path),*];
    };
}

registry! {
    http::IpStack,
    http::ShortConn,
    fs::Fs,
    fs::FsSizes,
    pg::PgBench,
    mail::Mail,
    bigfile::BigFile,
    forward::Forward,
}

/// Frees what a killed run's workloads left beyond the files in its work
/// directory `dir` ([`Workload::release_stale`]); returns what it did.
pub fn release_stale(dir: &std::path::Path) -> Vec<String> {
    WORKLOADS
        .iter()
        .flat_map(|w| w.release_stale(dir))
        .collect()
}

/// Every workload flag once (workloads of one module share theirs), with
/// the workloads that take it.
pub fn flags() -> Vec<(&'static WorkloadFlag, Vec<&'static str>)> {
    let mut v: Vec<(&'static WorkloadFlag, Vec<&'static str>)> = Vec::new();
    for w in WORKLOADS {
        for f in w.flags() {
            match v.iter_mut().find(|(g, _)| g.name == f.name) {
                Some((_, owners)) => owners.push(w.info().name),
                None => v.push((f, vec![w.info().name])),
            }
        }
    }
    v
}

/// The first flags given that do not go together: a flag with one of its
/// `conflicts` (the run's `--sweep` when `sweep`), or without one of its
/// `requires`. The command line refuses them as it parses; a suite file's
/// are refused by this, by the same rule (a usage error naming the flag).
pub fn check_pairs(given: &Given, sweep: bool) -> Result<(), FlagError> {
    let has = |name: &str| given.has(name) || (name == "sweep" && sweep);
    for (f, _) in flags() {
        if !given.has(f.name) {
            continue;
        }
        if let Some(c) = f.conflicts.iter().find(|c| has(c)) {
            return Err(FlagError::of(
                f.name,
                format!("--{} cannot be used with --{c}", f.name),
            ));
        }
        if let Some(r) = f.requires.iter().find(|r| !has(r)) {
            return Err(FlagError::of(f.name, format!("--{} needs --{r}", f.name)));
        }
    }
    Ok(())
}

/// Looks a workload up by name.
pub fn find(name: &str) -> Option<&'static dyn Workload> {
    WORKLOADS.iter().copied().find(|w| w.info().name == name)
}

/// Whether a row measured anything: a phase, a load, or a sweep with at
/// least one level that did not fail ([`crate::results::SweepLevel::failed`]).
/// A sweep whose every level failed measured nothing.
fn measured(r: &WorkloadRow) -> bool {
    r.phase.is_some()
        || r.load.is_some()
        || r.sweep
            .as_ref()
            .is_some_and(|s| s.levels.iter().any(|l| !l.failed()))
}

/// Why every level of a sweep failed, in words: the first level's error,
/// or what failed most in it.
fn no_level_finished(sw: &crate::results::SweepStats) -> String {
    let Some(l) = sw.levels.first() else {
        return "no level was run".to_string();
    };
    let at = format!("{} {}", sw.variable, crate::units::fmt_n(l.level));
    let why = match (&l.error, l.failures.iter().max_by_key(|(_, n)| **n)) {
        (Some(e), _) => e.clone(),
        (None, Some((what, n))) => format!("nothing succeeded; {n} × {what}"),
        (None, None) => {
            let errors: u64 = l.samples.iter().map(|s| s.errors).sum();
            format!("nothing succeeded; {errors} failed")
        }
    };
    format!("every level failed ({at}: {why})")
}

/// Ends a workload: ok if any row measured, failed if none did (or
/// interrupted); the message holds `notes` and every row's error, prefixed
/// by its target where it has one.
pub(crate) fn finish(
    info: &Info,
    params: BTreeMap<String, serde_json::Value>,
    rows: Vec<WorkloadRow>,
    mut notes: Vec<String>,
) -> WorkloadResult {
    let mut rows = rows;
    for r in &mut rows {
        if let Some(e) = &mut r.error {
            *e = crate::sys::errno_words(e);
        }
    }
    let failed = !rows.iter().any(measured);
    notes.extend(rows.iter().filter_map(|r| {
        let why = match (&r.error, &r.sweep) {
            (Some(e), _) => e.clone(),
            (None, Some(sw)) if !measured(r) => no_level_finished(sw),
            _ => return None,
        };
        Some(format!(
            "{}{}: {why}",
            r.target
                .as_deref()
                .map_or(String::new(), |t| format!("{t}, ")),
            r.label
        ))
    }));
    WorkloadResult {
        name: info.name.into(),
        what: info.what.into(),
        status: if crate::stop::interrupted() {
            Status::Interrupted
        } else if failed {
            Status::Failed
        } else {
            Status::Ok
        },
        message: notes
            .into_iter()
            .reduce(|a, b| format!("{a}; {b}"))
            .map(|m| crate::sys::errno_words(&m)),
        params,
        rows,
        monitor: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Default, PartialEq)]
    struct Mine(u32);

    #[test]
    fn own_options_are_read_back_as_made_and_defaults_only_when_none() {
        let o = WorkloadOptions::new(Size::Quick);
        assert_eq!(o.own::<Mine>(), Mine(0), "none made: the defaults");
        let o = o.with_own(Mine(7));
        assert_eq!(o.own::<Mine>(), Mine(7));
        // Read as another type: an error naming the type, not defaults.
        // (Not through `own`'s panic: the reaper's panic hook would end
        // the other tests' children.)
        let e = o.try_own::<String>().unwrap_err();
        assert!(e.contains("String"), "{e}");
    }
}
