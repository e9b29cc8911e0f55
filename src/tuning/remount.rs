//! A profile's mount options on a filesystem that already exists (the
//! work directory's, or one given with `--dir`): applied by remounting it
//! and restored the same way. Only the options a remount can change and
//! put back exactly are taken — the access-time family, `sync`/`async` and
//! `lazytime`; any other is refused by name. A mount's state is written
//! in one canonical form (`relatime,diratime,async,nolazytime`), which the
//! journal keeps as its old and new values.

use std::path::Path;

/// The options a remount may change here, each with what it sets.
const REMOUNTABLE: [(&str, Part, &str); 9] = [
    ("noatime", Part::Atime, "noatime"),
    ("relatime", Part::Atime, "relatime"),
    ("strictatime", Part::Atime, "strictatime"),
    ("nodiratime", Part::Diratime, "nodiratime"),
    ("diratime", Part::Diratime, "diratime"),
    ("sync", Part::Sync, "sync"),
    ("async", Part::Sync, "async"),
    ("lazytime", Part::Lazytime, "lazytime"),
    ("nolazytime", Part::Lazytime, "nolazytime"),
];

/// The four parts of a mount's canonical state, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Atime,
    Diratime,
    Sync,
    Lazytime,
}

/// What remounting one filesystem for a profile would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Planned {
    /// Where the filesystem is mounted (the directory itself when its
    /// mount cannot be found).
    pub(crate) mount_point: String,
    /// Its state now, canonical; `None` when it cannot be read.
    pub(crate) old: Option<String>,
    /// What to do.
    pub(crate) outcome: Outcome,
}

/// The plan for one filesystem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Remount it to this canonical state.
    Change(String),
    /// Already so.
    Unchanged,
    /// Cannot be done, in words.
    Refused(String),
}

/// The canonical state of a mount whose options (per-mount and
/// superblock, comma separated, as [`crate::sys::Mount::options`]) are
/// `options`: `noatime`, `relatime` or `strictatime`; `nodiratime` or
/// `diratime`; `sync` or `async`; `lazytime` or `nolazytime`.
pub(crate) fn state(options: &str) -> String {
    let has = |o: &str| options.split(',').any(|x| x == o);
    let atime = if has("noatime") {
        "noatime"
    } else if has("relatime") {
        "relatime"
    } else {
        "strictatime"
    };
    [
        atime,
        if has("nodiratime") {
            "nodiratime"
        } else {
            "diratime"
        },
        if has("sync") { "sync" } else { "async" },
        if has("lazytime") {
            "lazytime"
        } else {
            "nolazytime"
        },
    ]
    .join(",")
}

/// `state` with `options` applied, or the first option a remount cannot
/// change, in words.
fn target(state: &str, options: &[String]) -> Result<String, String> {
    let mut parts: Vec<String> = state.split(',').map(String::from).collect();
    for o in options {
        let Some((_, part, word)) = REMOUNTABLE.iter().find(|(name, _, _)| name == o) else {
            return Err(format!(
                "mount option `{o}` cannot be applied by remounting the filesystem (these can: {})",
                REMOUNTABLE.map(|(n, _, _)| n).join(", ")
            ));
        };
        parts[*part as usize] = word.to_string();
    }
    Ok(parts.join(","))
}

/// mount(8)'s options that remount a filesystem to canonical `state`
/// (`atime` first where access times are wanted: without it a `noatime`
/// set before stays).
fn remount_options(state: &str) -> String {
    state
        .split(',')
        .map(|w| match w {
            "relatime" | "strictatime" => format!("atime,{w}"),
            w => w.to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The canonical state of the filesystem mounted at `mount_point`, if it
/// is still mounted there.
pub(crate) fn read(mount_point: &str) -> Option<String> {
    mounted_at(mount_point).map(|m| state(&m.options))
}

/// The filesystem mounted at `mount_point`, if one still is.
fn mounted_at(mount_point: &str) -> Option<crate::sys::Mount> {
    crate::sys::mount_of(Path::new(mount_point)).filter(|m| m.mount_point == mount_point)
}

/// The flags of a mount (`options` as [`crate::sys::Mount::options`])
/// that a remount must repeat to keep them: read-only or not, and the
/// `nosuid`, `nodev`, `noexec` and `nosymfollow` it has (mount(8) is told
/// to take nothing from fstab or the mount table, so what is not given is
/// cleared).
fn kept(options: &str) -> Vec<&str> {
    const FLAGS: [&str; 6] = ["ro", "rw", "nosuid", "nodev", "noexec", "nosymfollow"];
    let mut v: Vec<&str> = Vec::new();
    for o in options.split(',').filter(|o| FLAGS.contains(o)) {
        if !v.contains(&o) {
            v.push(o);
        }
    }
    v
}

/// Remounts the filesystem at `mount_point` to canonical `state`, its
/// other flags as they are.
pub(crate) fn write(mount_point: &str, state: &str) -> std::io::Result<()> {
    let m = mounted_at(mount_point)
        .ok_or_else(|| std::io::Error::other(format!("{mount_point} is not mounted")))?;
    let mut options = kept(&m.options).join(",");
    if !options.is_empty() {
        options.push(',');
    }
    options.push_str(&remount_options(state));
    crate::sys::remount(Path::new(mount_point), &options)
}

/// The command that puts `state` back by hand.
pub(crate) fn by_hand(mount_point: &str, state: &str) -> String {
    format!("mount -o remount,{} {mount_point}", remount_options(state))
}

/// `options` parted into those a remount can change and those it cannot,
/// each in the order given: the first are applied, the others refused by
/// name, neither holding the other back.
pub(crate) fn parted(options: &[String]) -> (Vec<String>, Vec<String>) {
    options
        .iter()
        .cloned()
        .partition(|o| REMOUNTABLE.iter().any(|(name, _, _)| name == o))
}

/// The refusal of `options`, none of which a remount can change, on the
/// filesystem holding `dir`.
pub(crate) fn refused(dir: &Path, options: &[String]) -> Planned {
    let m = crate::sys::mount_of(dir);
    let quoted: Vec<String> = options.iter().map(|o| format!("`{o}`")).collect();
    Planned {
        mount_point: m
            .as_ref()
            .map_or_else(|| dir.display().to_string(), |m| m.mount_point.clone()),
        old: m.as_ref().map(|m| state(&m.options)),
        outcome: Outcome::Refused(format!(
            "mount option{} {} cannot be applied by remounting the filesystem (these can: {})",
            if options.len() == 1 { "" } else { "s" },
            quoted.join(", "),
            REMOUNTABLE.map(|(n, _, _)| n).join(", ")
        )),
    }
}

/// Plans remounting the filesystem that holds `dir` with `options`.
pub(crate) fn plan(dir: &Path, options: &[String]) -> Planned {
    let refused = |mount_point: String, old, why: String| Planned {
        mount_point,
        old,
        outcome: Outcome::Refused(why),
    };
    let Some(m) = crate::sys::mount_of(dir) else {
        return refused(
            dir.display().to_string(),
            None,
            format!("the filesystem holding {} cannot be found", dir.display()),
        );
    };
    let old = state(&m.options);
    let outcome = match target(&old, options) {
        // The state is read in Linux's words: elsewhere it is not known.
        _ if !cfg!(target_os = "linux") => Outcome::Refused(
            "remounting for a profile is done on Linux only (mount -u is not used yet)".into(),
        ),
        Err(why) => Outcome::Refused(why),
        Ok(new) if new == old => Outcome::Unchanged,
        // SAFETY: geteuid has no preconditions.
        Ok(_) if unsafe { libc::geteuid() } != 0 => {
            Outcome::Refused("remounting needs root".into())
        }
        Ok(new) => Outcome::Change(new),
    };
    Planned {
        mount_point: m.mount_point,
        old: Some(old),
        outcome,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mount_s_state_is_read_changed_and_written_back_canonically() {
        let s = state("rw,nosuid,nodev,relatime,rw,size=10240k");
        assert_eq!(s, "relatime,diratime,async,nolazytime");
        assert_eq!(
            state("rw,noatime,nodiratime,rw,sync,lazytime"),
            "noatime,nodiratime,sync,lazytime"
        );
        assert_eq!(state("rw"), "strictatime,diratime,async,nolazytime");
        let opts = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            target(&s, &opts(&["noatime", "sync"])).unwrap(),
            "noatime,diratime,sync,nolazytime"
        );
        assert_eq!(target(&s, &opts(&["relatime"])).unwrap(), s);
        let e = target(&s, &opts(&["noatime", "data=writeback"])).unwrap_err();
        assert!(
            e.starts_with("mount option `data=writeback` cannot be applied by remounting"),
            "{e}"
        );
        // Access times come back only with `atime` first.
        assert_eq!(
            remount_options("relatime,diratime,async,nolazytime"),
            "atime,relatime,diratime,async,nolazytime"
        );
        assert_eq!(
            kept("rw,nosuid,nodev,relatime,rw,size=10240k"),
            ["rw", "nosuid", "nodev"]
        );
        assert_eq!(
            by_hand("/srv", "noatime,nodiratime,sync,lazytime"),
            "mount -o remount,noatime,nodiratime,sync,lazytime /srv"
        );
    }
}
