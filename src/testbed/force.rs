//! `testbed down --force`: removing a test bed whose state file is missing
//! or cannot be read, by what its name makes it: its namespaces are
//! `sb-NAME-HOST`, its directory `sb-testbed-NAME` in the temp dir, the
//! sshd it started in a namespace names a configuration file in that
//! directory. Nothing else is touched: a namespace that another test bed's
//! name or readable state claims (`sb-tb-2-h1` is test bed `tb-2`'s, not
//! `tb`'s host `2-h1`, when `tb-2` has a directory) is left, so is any
//! process but that sshd, and at most [`MAX_HOSTS`] namespaces are
//! removed, each step bounded in time as [`super::teardown`]'s.

use super::{MAX_HOSTS, PREFIX, STATE_FILE, default_dir, load, processes_in, run, sshd};
use std::path::Path;
use std::process::Command;

/// Names of the network namespaces that exist (`/run/netns`).
fn namespaces() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir("/run/netns")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Whether namespace `ns` may be test bed `name`'s: it has the name's
/// prefix, and no other test bed whose name extends this one (`tb-2` for
/// `tb`) has a directory or records it.
fn ours(ns: &str, name: &str, others: &[String]) -> bool {
    let Some(host) = ns.strip_prefix(&format!("{PREFIX}{name}-")) else {
        return false;
    };
    !host.is_empty()
        && !others.iter().any(|o| {
            o.strip_prefix(&format!("{name}-"))
                .is_some_and(|rest| host.starts_with(&format!("{rest}-")))
        })
}

/// Test beds other than `name` that have a directory in the temp dir.
fn other_beds(name: &str) -> Vec<String> {
    let dir = default_dir(name);
    let Some(tmp) = dir.parent() else {
        return Vec::new();
    };
    std::fs::read_dir(tmp)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.strip_prefix("sb-testbed-").map(String::from)
        })
        .filter(|n| n != name)
        .collect()
}

/// Removes test bed `name` by its names, its state not read: the sshd it
/// started in each of its namespaces, the namespaces (their links go with
/// them), its directory. What it did, in words (empty: nothing found).
pub fn force_down(name: &str) -> Vec<String> {
    let mut notes = Vec::new();
    let dir = default_dir(name);
    let others = other_beds(name);
    // Namespaces a readable state of another test bed records.
    let claimed: Vec<String> = others
        .iter()
        .filter_map(|o| load(&default_dir(o)).ok())
        .flat_map(|s| s.hosts.into_iter().map(|h| h.netns))
        .collect();
    let mut found: Vec<String> = namespaces()
        .into_iter()
        .filter(|ns| ours(ns, name, &others) && !claimed.contains(ns))
        .collect();
    if found.len() > MAX_HOSTS {
        notes.push(format!(
            "{} namespaces named {PREFIX}{name}-…: more than a test bed has; the first {MAX_HOSTS} removed",
            found.len()
        ));
        found.truncate(MAX_HOSTS);
    }
    let mut gone = Vec::new();
    for ns in &found {
        let host = &ns[PREFIX.len() + name.len() + 1..];
        let inode = crate::sys::netns::inode(&super::netns_path(ns));
        notes.extend(stop_sshd(&dir, host, inode));
        let left = inode.map(processes_in).unwrap_or_default();
        match run(
            Command::new("ip").args(["netns", "del", ns]),
            &format!("ip netns del {ns}"),
        ) {
            Ok(_) => {
                gone.push(ns.clone());
                if !left.is_empty() {
                    notes.push(format!(
                        "{ns} still holds processes this test bed did not start ({}): it lives on, without its name, until they end",
                        left.iter()
                            .map(|(p, c)| format!("{p} {c}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
            }
            Err(e) => notes.push(format!("{e:#}")),
        }
    }
    if !gone.is_empty() {
        notes.push(format!(
            "namespaces {} removed with their links",
            gone.join(", ")
        ));
    }
    notes.extend(remove_dir(&dir));
    notes
}

/// Stops the sshd test bed directory `dir` started on `host`, if one
/// runs in namespace `inode`: the process named sshd there whose command
/// line names its configuration file.
fn stop_sshd(dir: &Path, host: &str, inode: Option<u64>) -> Vec<String> {
    let Some(inode) = inode else {
        return Vec::new();
    };
    let d = dir.join("ssh").join(host);
    let mut s = sshd::Sshd {
        config: d.join("sshd_config"),
        pid_file: d.join("sshd.pid"),
        log: d.join("sshd.log"),
        port: 22,
        pid: None,
    };
    let config = s.config.to_string_lossy().into_owned();
    s.pid = processes_in(inode)
        .into_iter()
        .find(|(pid, comm)| {
            comm == "sshd" && crate::sys::procs::cmdline(*pid).is_some_and(|c| c.contains(&config))
        })
        .map(|(pid, _)| pid);
    if s.pid.is_none() {
        return Vec::new();
    }
    sshd::stop(&s, Some(inode))
}

/// Removes the test bed's directory: a directory (not a link) holding
/// nothing but what `up` makes in it (the state file, its `.batch` files
/// for `ip` and `tc`, `ssh/`).
fn remove_dir(dir: &Path) -> Vec<String> {
    let is_dir = std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir());
    if !is_dir {
        return Vec::new();
    }
    let known =
        |n: &str| [STATE_FILE, "state.json.new", "ssh"].contains(&n) || n.ends_with(".batch");
    let strangers: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !known(n))
        .collect();
    if !strangers.is_empty() {
        return vec![format!(
            "{} holds what a test bed does not make ({}): not removed",
            dir.display(),
            strangers.join(", ")
        )];
    }
    match std::fs::remove_dir_all(dir) {
        Ok(()) => vec![format!("{} removed", dir.display())],
        Err(e) => vec![format!("removing {}: {e}", dir.display())],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_namespaces_of_the_name_and_no_longer_name_are_ours() {
        let none: Vec<String> = Vec::new();
        assert!(ours("sb-tb-h1", "tb", &none));
        assert!(ours("sb-tb-2-h1", "tb", &none), "host 2-h1 of tb");
        assert!(!ours("sb-tb-2-h1", "tb", &["tb-2".into()]), "tb-2's h1");
        assert!(ours("sb-tb-h1", "tb", &["tb-2".into()]));
        assert!(!ours("sb-tbx-h1", "tb", &none));
        assert!(!ours("sb-tb-", "tb", &none));
        assert!(!ours("other", "tb", &none));
    }

    #[test]
    fn a_directory_holding_what_up_does_not_make_is_kept() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("sb-testbed-x");
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join(STATE_FILE), "{garbage").unwrap();
        std::fs::create_dir(d.join("ssh")).unwrap();
        let notes = remove_dir(&d);
        assert!(!d.exists() && notes[0].ends_with("removed"), "{notes:?}");
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("mine.txt"), "x").unwrap();
        let notes = remove_dir(&d);
        assert!(d.exists() && notes[0].contains("mine.txt"), "{notes:?}");
    }
}
