//! Applying a profile and putting everything back.
//!
//! Every setting is first *planned* against the running system (its value
//! now, whether it already is as asked, whether this process may change
//! it): [`check`] stops there. [`Applied::apply`] then changes what needs
//! changing, reads each value back, and restores it all when dropped —
//! after success, an error, a panic, ^C or SIGTERM (the run loop stops and
//! unwinds). Before each sysctl or setting is changed, its old value goes
//! into a journal in the run's work directory; a run killed with SIGKILL
//! leaves the journal behind, and the next run (or `scalebench restore`)
//! finds it with the dead run's work directory and [`recover`]s.

use super::{Os, ProfileItem, TuningProfile, Wanted, What, remount};
use crate::results::{ChangeStatus, ProfileChange, TuningRecord};
use crate::sys::{self, Rlimit, Setting};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where a profile's mount options go in a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mounts {
    /// To the filesystems the run makes, if any.
    pub made: Made,
    /// The existing directories whose filesystems the run measures (the
    /// work directory's, `--dir`): each filesystem is remounted with the
    /// options for the run and restored after it.
    pub existing: Vec<PathBuf>,
}

/// Whether the run makes filesystems that take a profile's mount options.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Made {
    /// The run makes no filesystem (no fs workload with `--mkfs`).
    #[default]
    None,
    /// To the filesystems the run makes.
    Made,
    /// Nowhere: `--mount-opts` named the options of the filesystems made.
    UserOptions,
}

/// The journal's file name inside a work directory.
pub const JOURNAL: &str = "profile-journal.json";

/// What applying one setting would do.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    /// Change it from `old` to `new`.
    Change { old: Option<String>, new: String },
    /// Already as asked.
    Unchanged { old: String },
    /// Cannot be done here.
    Refused { old: Option<String>, reason: String },
    /// Recorded only.
    Recorded { old: Option<String>, reason: String },
}

/// A limit as text (`1024/20000`, `unlimited`).
fn show_limit(l: sys::LimitPair) -> String {
    let one = |v: Option<u64>| v.map_or("unlimited".to_string(), |x| x.to_string());
    format!("{}/{}", one(l.0), one(l.1))
}

/// A limit value of a profile as an rlimit value (`None`: unlimited).
fn limit_value(s: &str) -> Option<u64> {
    s.parse().ok()
}

/// The new (soft, hard) pair for a wanted limit, or `None` when `now`
/// already is as asked.
fn limit_target(now: sys::LimitPair, wanted: &Wanted) -> Option<sys::LimitPair> {
    let (soft, hard) = now;
    let as_num = |v: Option<u64>| v.unwrap_or(u64::MAX);
    let new_soft = match wanted {
        Wanted::Exact(v) => limit_value(v),
        Wanted::AtLeast(b) if as_num(soft) >= *b => return None,
        Wanted::AtLeast(b) => Some(*b),
        Wanted::AtMost(b) if as_num(soft) <= *b => return None,
        Wanted::AtMost(b) => Some(*b),
    };
    if new_soft == soft {
        return None;
    }
    let new_hard = if as_num(new_soft) > as_num(hard) {
        new_soft
    } else {
        hard
    };
    Some((new_soft, new_hard))
}

/// Why the running kernel cannot take the value a setting asks for, if it
/// cannot: a setting's value outside the choices the kernel lists
/// (transparent_hugepages `sometimes`), or a word for a sysctl whose value
/// is numbers (`kernel.msgmax = "lots"`). Such a profile is wrong here,
/// not merely refused for want of a right: `profile check` and `run`
/// refuse it before anything is measured ([`unacceptable`]).
fn cannot_take(what: &What) -> Option<String> {
    match what {
        What::Setting { setting, wanted } => {
            let choices = sys::setting_choices(*setting)?;
            (!choices.iter().any(|c| c == wanted)).then(|| {
                format!(
                    "this kernel takes {} for {}, not `{wanted}`",
                    choices.join(", "),
                    setting.name()
                )
            })
        }
        What::Sysctl {
            name,
            wanted: Wanted::Exact(v),
        } => {
            let old = sys::sysctl(name)?;
            let numbers = |s: &str| {
                let w: Vec<&str> = s.split_whitespace().collect();
                (!w.is_empty() && w.iter().all(|x| x.parse::<i64>().is_ok())).then_some(w.len())
            };
            let old_n = numbers(&old)?;
            match numbers(v) {
                Some(n) if n == old_n => None,
                _ => Some(format!(
                    "{name} takes {}, not `{v}`",
                    if old_n == 1 {
                        "a whole number".to_string()
                    } else {
                        format!("{old_n} whole numbers")
                    }
                )),
            }
        }
        _ => None,
    }
}

/// The settings of `p` for this OS whose values the running kernel cannot
/// take, each in words (`settings.transparent_hugepages: this kernel takes
/// always, madvise, never for transparent_hugepages, not `sometimes``):
/// a profile with any is refused before anything is measured.
pub fn unacceptable(p: &TuningProfile) -> Vec<String> {
    p.for_os(Os::this())
        .filter_map(|item| cannot_take(&item.what))
        .collect()
}

/// Plans one setting against the running system.
fn plan(what: &What, mounts: &Mounts) -> Step {
    match what {
        What::Sysctl { name, wanted } => plan_sysctl(what, name, wanted),
        What::Limit { limit, wanted } => plan_limit(*limit, wanted),
        What::Setting { setting, wanted } => plan_setting(what, *setting, wanted),
        What::Mount { options } => plan_mount(options, mounts),
        What::Tunefs { .. } => Step::Recorded {
            old: None,
            reason: "tunefs works on an unmounted filesystem: by hand, in single-user mode".into(),
        },
        What::Boot {
            how, sysctl, value, ..
        } => plan_boot(how, sysctl.as_deref(), value.as_ref()),
        What::Note(_) => Step::Recorded {
            old: None,
            reason: "a note: scalebench does not do this".into(),
        },
    }
}

/// Plans sysctl `name` (the setting `what`) to be as `wanted`: refused
/// when it is missing, cannot take the value, is not a number to compare
/// or is not writable here.
fn plan_sysctl(what: &What, name: &str, wanted: &Wanted) -> Step {
    let Some(old) = sys::sysctl(name) else {
        return Step::Refused {
            old: None,
            reason: "no such sysctl on this system".into(),
        };
    };
    if let Some(reason) = cannot_take(what) {
        return Step::Refused {
            old: Some(old),
            reason,
        };
    }
    match wanted.met_by(&old) {
        Some(true) => return Step::Unchanged { old },
        None => {
            return Step::Refused {
                reason: format!("its value `{old}` is not a number to compare with {wanted}"),
                old: Some(old),
            };
        }
        Some(false) => {}
    }
    match sys::sysctl_writable(name) {
        Ok(()) => Step::Change {
            old: Some(old),
            new: wanted.target(),
        },
        Err(reason) => Step::Refused {
            old: Some(old),
            reason,
        },
    }
}

/// Plans resource limit `limit` to be as `wanted`: refused when the
/// system has no such limit, or when the hard limit would have to rise
/// and this process may not raise it.
fn plan_limit(limit: Rlimit, wanted: &Wanted) -> Step {
    let Some(now) = sys::get_rlimit(limit) else {
        return Step::Refused {
            old: None,
            reason: "this system has no such limit".into(),
        };
    };
    let Some(target) = limit_target(now, wanted) else {
        return Step::Unchanged {
            old: show_limit(now),
        };
    };
    let raises_hard = target.1.unwrap_or(u64::MAX) > now.1.unwrap_or(u64::MAX);
    if raises_hard && sys::may_raise_hard_limits() == Some(false) {
        return Step::Refused {
            old: Some(show_limit(now)),
            reason: format!(
                "the hard limit is {} and this process may not raise it (it needs root or CAP_SYS_RESOURCE)",
                now.1.map_or("unlimited".into(), |h| h.to_string())
            ),
        };
    }
    Step::Change {
        old: Some(show_limit(now)),
        new: show_limit(target),
    }
}

/// Plans `setting` (the setting `what`) to be `wanted`: refused when the
/// kernel cannot take the value or the setting is not writable here.
fn plan_setting(what: &What, setting: Setting, wanted: &str) -> Step {
    let old = sys::read_setting(setting);
    if old.as_deref() == Some(wanted) {
        return Step::Unchanged {
            old: old.unwrap_or_default(),
        };
    }
    if let Some(reason) = cannot_take(what) {
        return Step::Refused { old, reason };
    }
    match sys::setting_writable(setting) {
        Ok(()) => Step::Change {
            old,
            new: wanted.to_string(),
        },
        Err(reason) => Step::Refused { old, reason },
    }
}

/// Plans mount `options`: applied to the filesystems the run makes, if
/// it makes any and `--mount-opts` did not name theirs; else recorded.
fn plan_mount(options: &[String], mounts: &Mounts) -> Step {
    match mounts.made {
        Made::Made => Step::Change {
            old: None,
            new: options.join(","),
        },
        // The filesystems measured are remounted: their own records follow.
        Made::None if !mounts.existing.is_empty() => Step::Recorded {
            old: None,
            reason: "no filesystem is made (--mkfs): applied by remounting the filesystems measured, below".into(),
        },
        Made::None => Step::Recorded {
            old: None,
            reason: "applied to the filesystems a run's fs workloads make (--mkfs), or by remounting those they measure (the work directory's, --dir); none here".into(),
        },
        Made::UserOptions => Step::Recorded {
            old: None,
            reason: "--mount-opts named the options of the filesystems this run makes".into(),
        },
    }
}

/// Records a change that needs a reboot or a kernel build (`how`), with
/// the running value of its `sysctl`, if any, compared with `value`.
fn plan_boot(how: &str, sysctl: Option<&str>, value: Option<&Wanted>) -> Step {
    let now = sysctl.and_then(sys::sysctl);
    let state = match (&now, value) {
        (Some(n), Some(v)) => match v.met_by(n) {
            Some(true) => format!("; running with {n}, as asked"),
            _ => format!("; running with {n}, not {v}"),
        },
        (Some(n), None) => format!("; running with {n}"),
        _ => String::new(),
    };
    Step::Recorded {
        old: now,
        reason: format!("needs a reboot or a kernel build: {how}{state}"),
    }
}

/// The name a setting is recorded under.
fn name_of(what: &What) -> String {
    match what {
        What::Sysctl { name, .. } => name.clone(),
        What::Limit { limit, .. } => limit.name().to_string(),
        What::Setting { setting, .. } => setting.name().to_string(),
        What::Mount { .. } => "mount options".into(),
        What::Tunefs { args } => args.clone(),
        What::Boot { what, .. } => what.clone(),
        What::Note(n) => n.clone(),
    }
}

/// What a setting asks for, as recorded.
fn wanted_of(what: &What) -> String {
    match what {
        What::Sysctl { wanted, .. } | What::Limit { wanted, .. } => wanted.to_string(),
        What::Setting { wanted, .. } => wanted.clone(),
        What::Mount { options } => options.join(","),
        What::Boot { value, .. } => value.as_ref().map_or(String::new(), |v| v.to_string()),
        What::Tunefs { .. } | What::Note(_) => String::new(),
    }
}

fn record(item: &ProfileItem, step: &Step, status_if_change: ChangeStatus) -> ProfileChange {
    let (old, new, status, reason) = match step {
        Step::Change { old, new } => (old.clone(), Some(new.clone()), status_if_change, None),
        Step::Unchanged { old } => (
            Some(old.clone()),
            Some(old.clone()),
            ChangeStatus::Unchanged,
            None,
        ),
        Step::Refused { old, reason } => (
            old.clone(),
            old.clone(),
            ChangeStatus::Refused,
            Some(reason.clone()),
        ),
        Step::Recorded { old, reason } => (
            old.clone(),
            None,
            ChangeStatus::Recorded,
            Some(reason.clone()),
        ),
    };
    ProfileChange {
        kind: item.what.kind().to_string(),
        name: name_of(&item.what),
        wanted: wanted_of(&item.what),
        old,
        new,
        status,
        reason,
    }
}

fn empty_record(p: &TuningProfile, os: Option<Os>) -> TuningRecord {
    TuningRecord {
        name: p.name.clone(),
        description: p.description.clone(),
        origin: p.origin.clone(),
        partial: false,
        changes: Vec::new(),
        elsewhere: p
            .elsewhere(os)
            .iter()
            .map(|o| o.key().to_string())
            .collect(),
    }
}

/// What applying `p` here would do, without changing anything: each
/// setting for this OS with its value now and what would become of it
/// (`applied` means "would be changed"); `mounts` says where its mount
/// options would go.
pub fn check(p: &TuningProfile, mounts: &Mounts) -> TuningRecord {
    let os = Os::this();
    let mut r = empty_record(p, os);
    for item in p.for_os(os) {
        let step = plan(&item.what, mounts);
        r.partial |= matches!(step, Step::Refused { .. });
        r.changes.push(record(item, &step, ChangeStatus::Applied));
        if let What::Mount { options } = &item.what {
            for (options, planned) in remounts(options, &mounts.existing) {
                let step = remount_step(&planned);
                r.partial |= matches!(step, Step::Refused { .. });
                r.changes
                    .push(remount_record(&options, &planned.mount_point, &step));
            }
        }
    }
    r
}

/// The remounts of the filesystems holding `dirs` with `options`, one per
/// filesystem, each with the options it is for: those a remount can
/// change, planned; those it cannot, refused by name in a record of their
/// own, so that one such option does not hold the others back.
fn remounts(options: &[String], dirs: &[PathBuf]) -> Vec<(Vec<String>, remount::Planned)> {
    let (can, cannot) = remount::parted(options);
    let mut v: Vec<(Vec<String>, remount::Planned)> = Vec::new();
    for d in dirs {
        let mut here = Vec::new();
        if !can.is_empty() {
            here.push((can.clone(), remount::plan(d, &can)));
        }
        if !cannot.is_empty() {
            here.push((cannot.clone(), remount::refused(d, &cannot)));
        }
        for (o, p) in here {
            if !v
                .iter()
                .any(|(o2, q)| q.mount_point == p.mount_point && *o2 == o)
            {
                v.push((o, p));
            }
        }
    }
    v
}

/// A planned remount as a step.
fn remount_step(p: &remount::Planned) -> Step {
    match &p.outcome {
        remount::Outcome::Change(new) => Step::Change {
            old: p.old.clone(),
            new: new.clone(),
        },
        remount::Outcome::Unchanged => Step::Unchanged {
            old: p.old.clone().unwrap_or_default(),
        },
        remount::Outcome::Refused(reason) => Step::Refused {
            old: p.old.clone(),
            reason: reason.clone(),
        },
    }
}

/// The record of remounting the filesystem at `mount_point` with
/// `options`: kind `mount`, named by its mount point, its states before
/// and during the run in canonical form.
fn remount_record(options: &[String], mount_point: &str, step: &Step) -> ProfileChange {
    let item = ProfileItem {
        os: None,
        what: What::Mount {
            options: options.to_vec(),
        },
    };
    ProfileChange {
        name: mount_point.to_string(),
        ..record(&item, step, ChangeStatus::Applied)
    }
}

/// One change the journal can undo.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct Entry {
    /// `sysctl`, `setting` or `mount` (named by its mount point, its
    /// values canonical states: [`remount::state`]).
    kind: String,
    name: String,
    old: String,
    new: String,
}

/// The journal: what a live run changed and has not put back yet.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Journal {
    pid: u32,
    profile: String,
    entries: Vec<Entry>,
}

impl Journal {
    fn write(&self, path: &Path) -> std::io::Result<()> {
        let tmp = path.with_extension("json.new");
        std::fs::write(&tmp, serde_json::to_vec_pretty(self)?)?;
        std::fs::rename(&tmp, path)
    }
}

/// Something to put back.
enum Undo {
    Entry(Entry),
    Limit(Rlimit, sys::LimitPair),
}

fn read_entry(kind: &str, name: &str) -> Option<String> {
    match kind {
        "sysctl" => sys::sysctl(name),
        "mount" => remount::read(name),
        _ => Setting::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .and_then(sys::read_setting),
    }
}

fn write_entry(kind: &str, name: &str, value: &str) -> std::io::Result<()> {
    match kind {
        "sysctl" => sys::set_sysctl(name, value),
        "mount" => remount::write(name, value),
        _ => match Setting::ALL.into_iter().find(|s| s.name() == name) {
            Some(s) => sys::write_setting(s, value),
            None => Err(std::io::Error::other("unknown setting")),
        },
    }
}

/// The command that sets a value back by hand.
fn by_hand(e: &Entry) -> String {
    match e.kind.as_str() {
        "mount" => remount::by_hand(&e.name, &e.old),
        "sysctl" if cfg!(target_os = "linux") => format!("sysctl -w {}='{}'", e.name, e.old),
        "sysctl" => format!("sysctl {}='{}'", e.name, e.old),
        _ => format!("set {} back to {}", e.name, e.old),
    }
}

/// Puts one journal entry back, in words; `Err` when it could not.
fn undo_entry(e: &Entry) -> Result<String, String> {
    let now = read_entry(&e.kind, &e.name);
    let same = |a: &str, b: &str| {
        Wanted::Exact(b.split_whitespace().collect::<Vec<_>>().join(" ")).met_by(a) == Some(true)
    };
    match now.as_deref() {
        Some(n) if same(n, &e.old) => Ok(format!("{} already {}", e.name, e.old)),
        Some(n) if !same(n, &e.new) => Ok(format!(
            "{} left at {n}: it was set to {} and has changed since (it was {} before)",
            e.name, e.new, e.old
        )),
        None => Err(format!(
            "{}: cannot read it any more ({})",
            e.name,
            by_hand(e)
        )),
        Some(_) => match write_entry(&e.kind, &e.name, &e.old) {
            Ok(()) => Ok(format!("{} restored {} → {}", e.name, e.new, e.old)),
            Err(err) => Err(format!(
                "{}: could not restore {}: {err} ({})",
                e.name,
                e.old,
                by_hand(e)
            )),
        },
    }
}

/// A profile applied to this system; everything it changed is put back
/// when it is dropped (or by [`Applied::restore`]).
pub struct Applied {
    journal: PathBuf,
    state: Journal,
    undo: Vec<Undo>,
    /// Counted as cleanup still to do while something is to put back.
    pending: Option<crate::stop::Pending>,
    /// What was done, for the result file.
    pub record: TuningRecord,
}

impl Applied {
    /// Applies `p`'s settings for this OS; `dir` (the run's work directory)
    /// holds the journal; `mounts` says where its mount options go (the
    /// fs workloads mount with them; here they are only recorded). A setting that cannot be applied
    /// is refused in the record, which is then partial; the others are
    /// applied all the same.
    pub fn apply(p: &TuningProfile, dir: &Path, mounts: &Mounts) -> Applied {
        let os = Os::this();
        let mut a = Applied {
            journal: dir.join(JOURNAL),
            state: Journal {
                pid: std::process::id(),
                profile: p.name.clone(),
                entries: Vec::new(),
            },
            undo: Vec::new(),
            pending: None,
            record: empty_record(p, os),
        };
        for item in p.for_os(os) {
            let mut step = plan(&item.what, mounts);
            if let Step::Change { old, new } = &step {
                let done = a.change(&item.what, old.clone(), new);
                step = match done {
                    Ok(read_back) => Step::Change {
                        old: old.clone(),
                        new: read_back,
                    },
                    Err(reason) => Step::Refused {
                        old: old.clone(),
                        reason,
                    },
                };
            }
            a.record.partial |= matches!(step, Step::Refused { .. });
            a.record
                .changes
                .push(record(item, &step, ChangeStatus::Applied));
            if let What::Mount { options } = &item.what {
                a.remount_all(options, &mounts.existing);
            }
        }
        if !a.undo.is_empty() {
            a.pending = Some(crate::stop::pending(crate::stop::Task::Settings));
        }
        a
    }

    /// Makes one change, journalled first; returns the value read back.
    fn change(&mut self, what: &What, old: Option<String>, new: &str) -> Result<String, String> {
        match what {
            What::Limit { limit, .. } => {
                let now = sys::get_rlimit(*limit).ok_or("cannot read the limit")?;
                let target = match new.split_once('/') {
                    Some((s, h)) => (limit_value(s), limit_value(h)),
                    None => return Err("bad limit".into()),
                };
                sys::set_rlimit(*limit, target).map_err(|e| e.to_string())?;
                self.undo.push(Undo::Limit(*limit, now));
                Ok(sys::get_rlimit(*limit).map_or_else(|| new.to_string(), show_limit))
            }
            What::Sysctl { .. } | What::Setting { .. } => {
                self.change_entry(what.kind(), name_of(what), old, new)
            }
            // The workloads that make filesystems mount with them (run::session).
            What::Mount { options } => Ok(options.join(",")),
            _ => Err("not a change".into()),
        }
    }

    /// Changes the sysctl, setting or mount (`kind`) `name` from `old` to
    /// `new`, journalled first; returns the value read back.
    fn change_entry(
        &mut self,
        kind: &str,
        name: String,
        old: Option<String>,
        new: &str,
    ) -> Result<String, String> {
        let entry = Entry {
            kind: kind.into(),
            name,
            old: old.unwrap_or_default(),
            new: new.to_string(),
        };
        self.state.entries.push(entry.clone());
        if let Err(e) = self.state.write(&self.journal) {
            self.state.entries.pop();
            return Err(format!(
                "not changed: the journal {} cannot be written ({e})",
                self.journal.display()
            ));
        }
        if let Err(e) = write_entry(kind, &entry.name, new) {
            // Partly done (a remount sets a mount's and its
            // filesystem's flags apart): kept to be put back.
            let now = read_entry(kind, &entry.name);
            if now.is_some() && now.as_deref() != Some(entry.old.as_str()) {
                self.undo.push(Undo::Entry(Entry {
                    new: now.unwrap_or_default(),
                    ..entry
                }));
            } else {
                self.state.entries.pop();
                let _ = self.state.write(&self.journal);
            }
            return Err(format!("the system refused it: {e}"));
        }
        let back = read_entry(kind, &entry.name).unwrap_or_else(|| new.to_string());
        // The journal holds what is there now, for recovery.
        if let Some(last) = self.state.entries.last_mut() {
            last.new = back.clone();
        }
        let _ = self.state.write(&self.journal);
        self.undo.push(Undo::Entry(Entry {
            new: back.clone(),
            ..entry
        }));
        Ok(back)
    }

    /// Remounts the filesystems holding `existing` with `options` (each
    /// journalled first, as a sysctl is), recording each.
    fn remount_all(&mut self, options: &[String], existing: &[PathBuf]) {
        for (options, planned) in remounts(options, existing) {
            let mut step = remount_step(&planned);
            if let Step::Change { old, new } = &step {
                step =
                    match self.change_entry("mount", planned.mount_point.clone(), old.clone(), new)
                    {
                        Ok(back) if back == *new => Step::Change {
                            old: old.clone(),
                            new: back,
                        },
                        Ok(back) => Step::Refused {
                            old: old.clone(),
                            reason: format!("remounted, but the filesystem kept {back}"),
                        },
                        Err(reason) => Step::Refused {
                            old: old.clone(),
                            reason,
                        },
                    };
            }
            self.record.partial |= matches!(step, Step::Refused { .. });
            self.record
                .changes
                .push(remount_record(&options, &planned.mount_point, &step));
        }
    }

    /// Puts everything back, last change first; returns what could not be
    /// put back, in words. The journal is removed once nothing is left to
    /// undo. After a stop signal, what was put back is recorded for the
    /// message saying what the cleanup did ([`crate::stop::did`]).
    pub fn restore(&mut self) -> Vec<String> {
        let mut failed = Vec::new();
        while let Some(u) = self.undo.pop() {
            match u {
                Undo::Limit(l, old) => {
                    if let Err(e) = sys::set_rlimit(l, old) {
                        failed.push(format!(
                            "{}: could not restore {}: {e}",
                            l.name(),
                            show_limit(old)
                        ));
                    }
                }
                Undo::Entry(e) => {
                    match undo_entry(&e) {
                        Ok(m) => crate::stop::did(m),
                        Err(m) => failed.push(m),
                    }
                    self.state
                        .entries
                        .retain(|x| x.name != e.name || x.kind != e.kind);
                    let _ = self.state.write(&self.journal);
                }
            }
        }
        if self.state.entries.is_empty() {
            let _ = std::fs::remove_file(&self.journal);
        }
        for m in &failed {
            crate::stop::did(format!("profile {}: {m}", self.record.name));
        }
        self.pending = None;
        failed
    }
}

impl Drop for Applied {
    fn drop(&mut self) {
        let stopping = crate::stop::interrupted();
        let failed = self.restore();
        // After a stop signal the message on what the cleanup did says it.
        if !stopping {
            for m in failed {
                crate::stop::say(&format!("profile {}: {m}", self.record.name));
            }
        }
    }
}

/// Puts back what a dead run's journal in `dir` says it changed, in
/// words (nothing when there is no journal); called on a dead run's work
/// directory before it is removed.
pub fn recover(dir: &Path) -> Vec<String> {
    let path = dir.join(JOURNAL);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Vec::new();
    };
    let journal: Journal = match serde_json::from_str(&text) {
        Ok(j) => j,
        Err(e) => {
            return vec![format!(
                "profile journal {} unreadable: {e}",
                path.display()
            )];
        }
    };
    let mut out: Vec<String> = journal
        .entries
        .iter()
        .rev()
        .map(|e| {
            let m = undo_entry(e).unwrap_or_else(|m| m);
            format!("profile {} of run {}: {m}", journal.profile, journal.pid)
        })
        .collect();
    if out.is_empty() {
        out.push(format!(
            "profile {} of run {}: nothing was left to restore",
            journal.profile, journal.pid
        ));
    }
    let _ = std::fs::remove_file(&path);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_raised_only_when_asked_and_the_hard_one_with_them() {
        let now = (Some(1024), Some(20000));
        assert_eq!(limit_target(now, &Wanted::AtLeast(1000)), None);
        assert_eq!(
            limit_target(now, &Wanted::AtLeast(4096)),
            Some((Some(4096), Some(20000)))
        );
        assert_eq!(
            limit_target(now, &Wanted::AtLeast(40960)),
            Some((Some(40960), Some(40960)))
        );
        assert_eq!(
            limit_target(now, &Wanted::Exact("512".into())),
            Some((Some(512), Some(20000)))
        );
        assert_eq!(limit_target(now, &Wanted::Exact("1024".into())), None);
        assert_eq!(
            limit_target(now, &Wanted::AtMost(100)),
            Some((Some(100), Some(20000)))
        );
        assert_eq!(limit_target((None, None), &Wanted::AtLeast(5)), None);
        assert_eq!(
            limit_target(now, &Wanted::Exact("unlimited".into())),
            Some((None, None))
        );
    }

    #[test]
    fn a_limit_profile_is_applied_and_put_back() {
        // Limits are the process's own: safe to change in a test.
        let (soft, hard) = sys::get_rlimit(Rlimit::Files).unwrap();
        let lower = soft.unwrap_or(4096).min(hard.unwrap_or(4096)) - 1;
        let text = format!(
            "format = \"scalebench-profile/1\"\nname = \"t\"\ndescription = \"d\"\n[limits]\nnofile = {lower}\n\
             [linux]\nnotes = [\"n\"]\nmount_options = [\"noatime\"]\n[freebsd.sysctl]\n\"kern.maxfiles\" = 1\n"
        );
        let p = TuningProfile::parse(&text, "t").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let checked = check(&p, &Mounts::default());
        assert_eq!(
            checked.changes[0].status,
            ChangeStatus::Applied,
            "{checked:?}"
        );
        assert_eq!(
            sys::get_rlimit(Rlimit::Files).unwrap(),
            (soft, hard),
            "check changes nothing"
        );
        let mut a = Applied::apply(&p, dir.path(), &Mounts::default());
        assert_eq!(sys::get_rlimit(Rlimit::Files).unwrap().0, Some(lower));
        assert_eq!(
            a.record.changes[0].new.as_deref(),
            Some(
                format!(
                    "{lower}/{}",
                    hard.map_or("unlimited".into(), |h| h.to_string())
                )
                .as_str()
            )
        );
        assert!(!a.record.partial);
        assert_eq!(
            a.record.elsewhere,
            if cfg!(target_os = "freebsd") {
                vec![] as Vec<String>
            } else {
                vec!["freebsd".to_string()]
            }
        );
        if cfg!(target_os = "linux") {
            let kinds: Vec<(&str, ChangeStatus)> = a
                .record
                .changes
                .iter()
                .map(|c| (c.kind.as_str(), c.status))
                .collect();
            assert_eq!(
                kinds,
                [
                    ("limit", ChangeStatus::Applied),
                    ("mount", ChangeStatus::Recorded),
                    ("note", ChangeStatus::Recorded)
                ]
            );
        }
        assert!(a.restore().is_empty());
        assert_eq!(sys::get_rlimit(Rlimit::Files).unwrap(), (soft, hard));
        assert!(!dir.path().join(JOURNAL).exists());
    }

    /// A tmpfs of its own mounted on `dir/mnt` (Linux, root), unmounted
    /// when dropped.
    #[cfg(target_os = "linux")]
    struct Tmpfs(PathBuf);

    #[cfg(target_os = "linux")]
    impl Tmpfs {
        fn new(dir: &Path) -> Tmpfs {
            let mnt = dir.join("mnt");
            std::fs::create_dir(&mnt).unwrap();
            sys::mount_fs("none", &mnt, "tmpfs", "size=1m,nosuid").expect("root mounts a tmpfs");
            Tmpfs(mnt)
        }

        fn state(&self) -> String {
            remount::read(self.0.to_str().unwrap()).unwrap()
        }
    }

    #[cfg(target_os = "linux")]
    impl Drop for Tmpfs {
        fn drop(&mut self) {
            let _ = sys::unmount_fs(&self.0);
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn mount_options_remount_an_existing_filesystem_and_come_back_also_after_a_kill() {
        let dir = tempfile::tempdir().unwrap();
        let fs = Tmpfs::new(dir.path());
        let before = fs.state();
        assert_eq!(before, "relatime,diratime,async,nolazytime");
        let text = "format = \"scalebench-profile/1\"\nname = \"t\"\ndescription = \"d\"\n\
                    [linux]\nmount_options = [\"noatime\", \"sync\"]\n";
        let p = TuningProfile::parse(text, "t").unwrap();
        let mounts = Mounts {
            made: Made::None,
            existing: vec![fs.0.join("."), fs.0.clone()],
        };
        let checked = check(&p, &mounts);
        assert_eq!(fs.state(), before, "check changes nothing");
        let mount_point = fs.0.to_str().unwrap();
        let mut a = Applied::apply(&p, dir.path(), &mounts);
        // One remount per filesystem, however many directories it holds.
        let remounts: Vec<&ProfileChange> = a
            .record
            .changes
            .iter()
            .filter(|c| c.name == mount_point)
            .collect();
        assert_eq!(remounts.len(), 1, "{:?}", a.record.changes);
        let during = "noatime,diratime,sync,nolazytime";
        assert_eq!(
            (
                remounts[0].old.as_deref(),
                remounts[0].new.as_deref(),
                remounts[0].status
            ),
            (Some(before.as_str()), Some(during), ChangeStatus::Applied)
        );
        assert_eq!(
            checked.changes, a.record.changes,
            "check plans what apply does"
        );
        assert_eq!(fs.state(), during);
        assert!(
            sys::mount_of(&fs.0).unwrap().options.contains("nosuid"),
            "other options stay"
        );
        // Killed: the journal puts it back.
        assert!(dir.path().join(JOURNAL).exists());
        let said = recover(dir.path());
        assert_eq!(fs.state(), before, "{said:?}");
        assert!(
            said.iter()
                .any(|s| s.contains(&format!("{mount_point} restored"))),
            "{said:?}"
        );
        // Restored already: the live run finds it so and says nothing failed.
        assert!(a.restore().is_empty());
        // Applied again and put back by the run itself.
        let mut a = Applied::apply(&p, dir.path(), &mounts);
        assert_eq!(fs.state(), during);
        assert!(a.restore().is_empty());
        assert_eq!(fs.state(), before);
        assert!(!dir.path().join(JOURNAL).exists());
        // An option a remount cannot change is refused by name, the run
        // partial; the one it can is applied all the same.
        let text = text.replace("\"sync\"", "\"data=writeback\"");
        let p = TuningProfile::parse(&text, "t").unwrap();
        let mut a = Applied::apply(&p, dir.path(), &mounts);
        let of = |status| {
            a.record
                .changes
                .iter()
                .filter(|c| c.name == mount_point && c.status == status)
                .map(|c| (c.wanted.clone(), c.reason.clone().unwrap_or_default()))
                .collect::<Vec<_>>()
        };
        let (applied, refused) = (of(ChangeStatus::Applied), of(ChangeStatus::Refused));
        assert_eq!(applied.len(), 1, "{:?}", a.record.changes);
        assert!(applied[0].0.contains("noatime"), "{applied:?}");
        assert_eq!(refused.len(), 1, "{:?}", a.record.changes);
        assert!(
            refused[0]
                .1
                .contains("`data=writeback` cannot be applied by remounting"),
            "{refused:?}"
        );
        assert!(a.record.partial);
        assert_eq!(fs.state(), "noatime,diratime,async,nolazytime");
        assert!(a.restore().is_empty());
        assert_eq!(fs.state(), before);
    }

    #[test]
    fn an_unknown_sysctl_is_refused_and_the_run_partial() {
        let text = "format = \"scalebench-profile/1\"\nname = \"t\"\ndescription = \"d\"\n\
                    [linux.sysctl]\n\"net.nosuch.knob\" = 1\n[freebsd.sysctl]\n\"net.nosuch.knob\" = 1\n\
                    [macos.sysctl]\n\"net.nosuch.knob\" = 1\n[netbsd.sysctl]\n\"net.nosuch.knob\" = 1\n\
                    [openbsd.sysctl]\n\"net.nosuch.knob\" = 1\n[dragonfly.sysctl]\n\"net.nosuch.knob\" = 1\n";
        let p = TuningProfile::parse(text, "t").unwrap();
        let r = check(&p, &Mounts::default());
        assert!(r.partial);
        assert_eq!(r.changes[0].status, ChangeStatus::Refused);
        assert!(
            r.changes[0]
                .reason
                .as_deref()
                .unwrap()
                .contains("no such sysctl")
        );
        let line = &r.lines(true)[0];
        assert!(
            line.contains("net.nosuch.knob") && line.contains("would be refused"),
            "{line}"
        );
    }

    #[test]
    fn a_journal_left_by_a_dead_run_is_read_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        // A value already back where it was: nothing to write.
        let pid_max = sys::sysctl("kernel.pid_max")
            .or_else(|| sys::sysctl("kern.maxproc"))
            .unwrap();
        let name = if cfg!(target_os = "linux") {
            "kernel.pid_max"
        } else {
            "kern.maxproc"
        };
        let j = Journal {
            pid: 4242,
            profile: "p".into(),
            entries: vec![
                Entry {
                    kind: "sysctl".into(),
                    name: name.into(),
                    old: pid_max.clone(),
                    new: "1".into(),
                },
                Entry {
                    kind: "sysctl".into(),
                    name: name.into(),
                    old: "7".into(),
                    new: "8".into(),
                },
            ],
        };
        j.write(&dir.path().join(JOURNAL)).unwrap();
        let out = recover(dir.path());
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(
            out[0].contains("run 4242") && out[0].contains("has changed since"),
            "{out:?}"
        );
        assert!(out[1].contains("already"), "{out:?}");
        assert!(!dir.path().join(JOURNAL).exists());
        assert!(recover(dir.path()).is_empty());
    }
}
