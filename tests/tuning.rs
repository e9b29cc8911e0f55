//! Tuning profiles through the binary: `profile list|show|check`
//! change nothing; `run --profile default,FILE` applies a profile's sysctl
//! and limit for its runs only, records old and new values, writes one
//! result file per profile and one report naming what differs; the values
//! are back after success, SIGTERM, and kill -9 (then through the journal,
//! by `scalebench restore` or the next run). Bad profiles are refused
//! before anything is measured.
//!
//! Each test changes a sysctl no other test touches (`vm.swappiness`,
//! `vm.dirty_background_ratio`, `vm.dirty_expire_centisecs`), to a value
//! beside the current one; applying needs root (as CI runs), and without
//! it the change must be refused with that reason.

#![cfg(target_os = "linux")]

use crate::common;

use common::{assert_valid, bin, load};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn sysctl(name: &str) -> String {
    std::fs::read_to_string(format!("/proc/sys/{}", name.replace('.', "/")))
        .unwrap()
        .trim()
        .to_string()
}

fn root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A value for `name` other than its current one.
fn other_value(name: &str) -> String {
    let now: u64 = sysctl(name).parse().unwrap();
    (if now > 5 { now - 1 } else { now + 1 }).to_string()
}

/// Writes a profile file named `name` setting `sysctl` to `value` and the
/// open-files limit to at most 4000 (a limit is the process's own).
fn profile_file(dir: &Path, name: &str, sysctl: &str, value: &str) -> std::path::PathBuf {
    let p = dir.join(format!("{name}.toml"));
    std::fs::write(
        &p,
        format!(
            "format = \"scalebench-profile/1\"\nname = \"{name}\"\ndescription = \"test\"\n\
             [limits]\nnofile = \"<=4000\"\n[linux.sysctl]\n\"{sysctl}\" = {value}\n\
             [linux]\nnotes = [\"a note\"]\n[freebsd.sysctl]\n\"kern.maxfiles\" = 1\n"
        ),
    )
    .unwrap();
    p
}

#[test]
fn list_show_and_check_change_nothing_and_name_what_would_be_refused() {
    let before = sysctl("net.core.netdev_max_backlog");
    let out = bin().args(["profile", "list"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for name in [
        "default",
        "rothman-freebsd",
        "dragonfly-linux",
        "dragonfly-bsd",
        "throughput",
        "latency",
    ] {
        assert!(text.contains(name), "{name} missing from:\n{text}");
    }
    let out = bin()
        .args(["profile", "show", "rothman-freebsd"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    for what in [
        "net.inet.tcp.delayed_ack = 0",
        "MAXUSERS 512",
        "mount options async",
        "tunefs -n enable /usr",
    ] {
        assert!(text.contains(what), "{what} missing from:\n{text}");
    }
    let out = bin()
        .args(["profile", "check", "dragonfly-linux", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let change = |name: &str| {
        r["changes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("{name} not in {r}"))
            .clone()
    };
    let backlog = change("net.core.netdev_max_backlog");
    assert_eq!(backlog["old"], before.as_str());
    let want = if before.parse::<u64>().unwrap() >= 65535 {
        "unchanged"
    } else if root() {
        "applied"
    } else {
        "refused"
    };
    assert_eq!(backlog["status"], want, "{backlog}");
    // The open-files hard limit here is 20 000 without CAP_SYS_RESOURCE.
    let nofile = change("RLIMIT_NOFILE");
    let hard: u64 = nofile["old"]
        .as_str()
        .unwrap()
        .split('/')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap_or(u64::MAX);
    if hard < 40960 && scalebench::sys::may_raise_hard_limits() == Some(false) {
        assert_eq!(nofile["status"], "refused");
        assert!(
            nofile["reason"]
                .as_str()
                .unwrap()
                .contains("may not raise it")
        );
        assert_eq!(r["partial"], true);
    }
    assert_eq!(
        sysctl("net.core.netdev_max_backlog"),
        before,
        "check changed nothing"
    );
}

#[test]
fn a_run_under_two_profiles_applies_records_and_restores() {
    let dir = tempfile::tempdir().unwrap();
    let name = "vm.swappiness";
    let before = sysctl(name);
    let value = other_value(name);
    let file = profile_file(dir.path(), "mine", name, &value);
    let out_path = dir.path().join("r.json");
    let out = bin()
        .args(["run", "socket", "--max", "300", "--runs", "1", "--profile"])
        .arg(format!("default,{}", file.display()))
        .arg("-o")
        .arg(&out_path)
        .arg("--workdir")
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert_eq!(sysctl(name), before, "restored after the run");
    let default = load(&dir.path().join("r-default.json"));
    let mine = load(&dir.path().join("r-mine.json"));
    assert_valid(&default);
    assert_valid(&mine);
    assert_eq!(default["profile"]["name"], "default");
    assert_eq!(default["profile"]["changes"], serde_json::json!([]));
    assert!(default["label"].as_str().unwrap().ends_with("/default"));
    assert!(mine["label"].as_str().unwrap().ends_with("/mine"));
    assert_eq!(mine["benchmarks"][0]["status"], "ok");
    let changes = mine["profile"]["changes"].as_array().unwrap();
    let kinds: Vec<&str> = changes
        .iter()
        .map(|c| c["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["limit", "sysctl", "note"]);
    assert_eq!(mine["profile"]["elsewhere"], serde_json::json!(["freebsd"]));
    let s = &changes[1];
    assert_eq!(s["old"], before.as_str());
    // Both files record the sysctl: the value each ran with.
    assert_eq!(default["system"]["sysctls"][name], before.as_str());
    if root() {
        assert_eq!(s["status"], "applied", "{s}");
        assert_eq!(s["new"], value.as_str());
        assert_eq!(mine["system"]["sysctls"][name], value.as_str());
        assert_eq!(mine["profile"]["partial"], false);
        assert!(
            stdout.contains("Settings that differ") && stdout.contains(&format!("sysctl {name}")),
            "{stdout}"
        );
    } else {
        assert_eq!(s["status"], "refused");
        assert!(s["reason"].as_str().unwrap().contains("needs root"));
        assert_eq!(mine["profile"]["partial"], true);
    }
    // The limit is the run's own: lowered to 4000 during it.
    assert_eq!(changes[0]["status"], "applied", "{}", changes[0]);
    assert!(
        changes[0]["new"].as_str().unwrap().starts_with("4000/"),
        "{}",
        changes[0]
    );
    assert_eq!(
        mine["system"]["limits"]["RLIMIT_NOFILE"]["soft"], 4000,
        "the record shows the limit the run had"
    );
    let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    assert!(
        html.contains("Settings that differ") && html.contains("Profile of"),
        "the report lays the profiles side by side"
    );
    assert!(
        common::scalebench_entries(dir.path()).is_empty(),
        "work directory removed"
    );
}

/// Starts a run under a profile changing `name` with its work directory
/// in `dir`, waits until the journal exists, then sends `signal`; returns
/// how it ended and what it said.
fn interrupt_mid_run(dir: &Path, name: &str, signal: i32) -> (std::process::ExitStatus, String) {
    let value = other_value(name);
    let file = profile_file(dir, "k", name, &value);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .args([
            "run",
            "socket",
            "bind",
            "--max",
            "15000",
            "--runs",
            "20",
            "-q",
            "--no-report",
            "--force",
        ])
        .arg("--profile")
        .arg(&file)
        .arg("-o")
        .arg(dir.join("k.json"))
        .arg("--workdir")
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The journal is written before the profile is applied: wait for
    // both.
    let start = Instant::now();
    loop {
        let found = common::scalebench_entries(dir)
            .into_iter()
            .any(|d| dir.join(d).join("profile-journal.json").exists());
        if found && sysctl(name) == value {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before its profile was applied"
        );
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no journal appeared, or {name} was not applied ({} now)",
            sysctl(name)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(sysctl(name), value, "applied during the run");
    // SAFETY: signalling the child we started.
    unsafe { libc::kill(child.id() as i32, signal) };
    let status = child.wait().unwrap();
    (status, common::read_all(child.stderr.take()))
}

#[test]
fn ctrl_c_and_sigterm_mid_run_restore_before_exit() {
    if !root() {
        panic!("this test applies a sysctl: run it as root (scripts/test)");
    }
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let dir = tempfile::tempdir().unwrap();
        let name = "vm.dirty_background_ratio";
        let before = sysctl(name);
        let (status, err) = interrupt_mid_run(dir.path(), name, signal);
        assert_eq!(status.code(), Some(130), "signal {signal}: {err}");
        assert_eq!(sysctl(name), before, "restored on signal {signal}: {err}");
        let k = load(&dir.path().join("k.json"));
        assert_valid(&k);
        assert_eq!(k["profile"]["name"], "k");
        assert!(common::scalebench_entries(dir.path()).is_empty());
    }
}

#[test]
fn kill_9_mid_run_is_restored_by_restore_and_by_the_next_run() {
    if !root() {
        panic!("this test applies a sysctl: run it as root (scripts/test)");
    }
    let dir = tempfile::tempdir().unwrap();
    let name = "vm.dirty_expire_centisecs";
    let before = sysctl(name);
    let (status, _) = interrupt_mid_run(dir.path(), name, libc::SIGKILL);
    assert_eq!(status.code(), None);
    assert_ne!(sysctl(name), before, "a killed run cannot restore");
    let out = bin()
        .args(["restore", "--workdir"])
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains(&format!("{name} restored")) && text.contains("profile k"),
        "{text}"
    );
    assert_eq!(sysctl(name), before);
    assert!(common::scalebench_entries(dir.path()).is_empty());

    // The next run finds a killed run's journal by itself.
    let (_, _) = interrupt_mid_run(dir.path(), name, libc::SIGKILL);
    assert_ne!(sysctl(name), before);
    let out = bin()
        .args([
            "run",
            "socket",
            "--max",
            "100",
            "--runs",
            "1",
            "--no-report",
            "-o",
        ])
        .arg(dir.path().join("next.json"))
        .arg("--workdir")
        .arg(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains(&format!("{name} restored")), "{err}");
    assert_eq!(sysctl(name), before);
}

#[test]
fn bad_profiles_are_refused_before_anything_is_measured() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("x.json");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["nosuch".into()], "unknown profile `nosuch`"),
        (vec!["default,default".into()], "given twice"),
        (vec!["default,".into()], "empty name"),
        (
            vec![{
                let p = dir.path().join("typo.toml");
                std::fs::write(
                    &p,
                    "format = \"scalebench-profile/1\"\nname = \"t\"\ndescription = \"d\"\n[linux.sysctls]\n",
                )
                .unwrap();
                p.display().to_string()
            }],
            "sysctls",
        ),
        (
            vec![dir.path().join("missing.toml").display().to_string()],
            "missing.toml",
        ),
        // Values the kernel cannot take: refused before measuring, not
        // found out during the run.
        (
            vec![bad_value(
                dir.path(),
                "settings",
                "transparent_hugepages",
                "sometimes",
            )],
            "this kernel takes always, madvise, never for transparent_hugepages, not `sometimes`",
        ),
        (
            vec![bad_value(dir.path(), "sysctl", "\"kernel.msgmax\"", "lots")],
            "kernel.msgmax takes a whole number, not `lots`",
        ),
    ];
    // The first three are wrong in themselves (a usage error, 2); the
    // others name a file that cannot be used (1).
    for (i, (args, wants)) in cases.into_iter().enumerate() {
        let code = if i < 3 { 2 } else { 1 };
        let out = bin()
            .args(["run", "socket", "--max", "100", "--profile"])
            .args(&args)
            .arg("-o")
            .arg(&out_path)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(wants), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(!out_path.exists(), "{args:?}: nothing measured");
    }
    // No profile by that name: a usage error, as with --profile.
    let out = bin().args(["profile", "check", "nosuch"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    // profile check refuses the same values, naming them.
    let p = bad_value(dir.path(), "settings", "transparent_hugepages", "sometimes");
    let out = bin().args(["profile", "check", &p]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("not `sometimes`") && err.contains("refused before anything is measured"),
        "{err}"
    );
}

/// A profile file setting `key = "value"` in its `[linux.SECTION]`; the
/// settings this test names exist on every Linux it runs on (THP is
/// checked, not assumed).
fn bad_value(dir: &Path, section: &str, key: &str, value: &str) -> String {
    assert!(
        Path::new("/sys/kernel/mm/transparent_hugepage/enabled").exists(),
        "this test needs a kernel with transparent huge pages"
    );
    let p = dir.join(format!("bad-{section}.toml"));
    std::fs::write(
        &p,
        format!("format = \"scalebench-profile/1\"\nname = \"bad\"\ndescription = \"d\"\n[linux.{section}]\n{key} = \"{value}\"\n"),
    )
    .unwrap();
    p.display().to_string()
}

/// `run fs` at a small size in `dir`, on the place `place` names, under a
/// profile whose Linux mount options are `options` (a TOML array): its
/// result file, checked valid; the run must succeed.
fn fs_under_profile(dir: &Path, options: &str, place: &[&std::ffi::OsStr]) -> serde_json::Value {
    let p = dir.join("na.toml");
    std::fs::write(
        &p,
        format!(
            "format = \"scalebench-profile/1\"\nname = \"na\"\ndescription = \"d\"\n\
             [linux]\nmount_options = {options}\n"
        ),
    )
    .unwrap();
    let out = bin()
        .args([
            "run",
            "fs",
            "--files",
            "100",
            "--bytes",
            "1M",
            "--requests",
            "100",
        ])
        .args(["--no-report", "-q"])
        .args(place)
        .arg("--profile")
        .arg(&p)
        .arg("-o")
        .arg(dir.join("f.json"))
        .arg("--workdir")
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let f = load(&dir.join("f.json"));
    assert_valid(&f);
    f
}

#[test]
fn a_profiles_mount_options_go_to_the_filesystems_the_run_makes() {
    if !root() {
        panic!("this test makes a filesystem on a loop device: run it as root (scripts/test)");
    }
    let dir = tempfile::tempdir().unwrap();
    let f = fs_under_profile(
        dir.path(),
        "[\"noatime\"]",
        &["--mkfs", "ext4", "--fs-size", "256M"].map(std::ffi::OsStr::new),
    );
    let c = &f["profile"]["changes"][0];
    assert_eq!(c["kind"], "mount");
    assert_eq!(c["status"], "applied", "{c}");
    let target = &f["workloads"][0]["params"]["targets"][0];
    assert!(
        target["mount_options"]
            .as_str()
            .unwrap()
            .split(',')
            .any(|o| o == "noatime"),
        "{target}"
    );
}

#[test]
fn a_profiles_mount_option_the_filesystem_refuses_is_named_and_left_out() {
    if !root() {
        panic!("this test makes a filesystem on a loop device: run it as root (scripts/test)");
    }
    let dir = tempfile::tempdir().unwrap();
    let f = fs_under_profile(
        dir.path(),
        "[\"noatime\", \"frobnicate=7\"]",
        &["--mkfs", "ext4", "--fs-size", "256M"].map(std::ffi::OsStr::new),
    );
    // Measured with what ext4 takes, the rest named as refused.
    let w = &f["workloads"][0];
    assert_eq!(w["status"], "ok", "{w}");
    let target = &w["params"]["targets"][0];
    let mounted = target["mount_options"].as_str().unwrap();
    assert!(mounted.split(',').any(|o| o == "noatime"), "{target}");
    assert!(!mounted.contains("frobnicate"), "{target}");
    assert_eq!(target["requested_mount_options"], "noatime,frobnicate=7");
    let refused = target["refused_mount_options"].as_array().unwrap();
    assert_eq!(refused.len(), 1, "{target}");
    assert_eq!(refused[0]["option"], "frobnicate=7");
    assert!(!refused[0]["reason"].as_str().unwrap().is_empty());
    // The profile's record says so, by name, and the run is partial.
    let p = &f["profile"];
    assert_eq!(p["partial"], true, "{p}");
    let c = &p["changes"][0];
    assert_eq!(
        (&c["kind"], &c["status"]),
        (&"mount".into(), &"refused".into()),
        "{c}"
    );
    let why = c["reason"].as_str().unwrap();
    assert!(
        why.starts_with("refused when mounted: `frobnicate=7` by ext4 (")
            && why.ends_with("measured without them"),
        "{why}"
    );
    // Nothing left mounted or attached.
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains(dir.path().to_str().unwrap()), "{mounts}");
}

/// The per-mount and superblock options of the filesystem mounted at
/// `dir`, from /proc/self/mountinfo.
fn mount_options_at(dir: &std::path::Path) -> String {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let line = info
        .lines()
        .find(|l| l.split(' ').nth(4) == dir.to_str())
        .unwrap_or_else(|| panic!("{} is not mounted", dir.display()));
    let (left, right) = line.split_once(" - ").unwrap();
    format!(
        "{},{}",
        left.split(' ').nth(5).unwrap(),
        right.split(' ').nth(2).unwrap()
    )
}

#[test]
fn a_profiles_mount_options_remount_the_filesystem_under_test_and_are_put_back() {
    if !root() {
        panic!("this test mounts a tmpfs: run it as root (scripts/test)");
    }
    let dir = tempfile::tempdir().unwrap();
    let fs = common::Tmpfs::mount(
        std::fs::canonicalize(dir.path()).unwrap().join("mnt"),
        "size=128m,nosuid",
    );
    let mnt = fs.0.clone();
    let before = mount_options_at(&mnt);
    assert!(before.split(',').any(|o| o == "relatime"), "{before}");
    let f = fs_under_profile(
        dir.path(),
        "[\"noatime\", \"sync\"]",
        &[std::ffi::OsStr::new("--dir"), mnt.as_os_str()],
    );
    let changes = f["profile"]["changes"].as_array().unwrap();
    let c = changes
        .iter()
        .find(|c| c["name"] == mnt.to_str().unwrap())
        .unwrap_or_else(|| panic!("no remount of {}: {changes:?}", mnt.display()));
    assert_eq!(c["kind"], "mount");
    assert_eq!(c["status"], "applied", "{c}");
    assert_eq!(c["old"], "relatime,diratime,async,nolazytime", "{c}");
    assert_eq!(c["new"], "noatime,diratime,sync,nolazytime", "{c}");
    // Measured so, and put back after.
    let target = &f["workloads"][0]["params"]["targets"][0];
    let during = target["mount_options"].as_str().unwrap();
    for o in ["noatime", "sync", "nosuid"] {
        assert!(during.split(',').any(|x| x == o), "{o}: {target}");
    }
    assert_eq!(mount_options_at(&mnt), before);
}

#[test]
fn profiles_are_overlaid_in_a_sweeps_charts() {
    let dir = tempfile::tempdir().unwrap();
    // A profile that only lowers the run's own open-files limit: no root needed.
    let p = dir.path().join("few.toml");
    std::fs::write(
        &p,
        "format = \"scalebench-profile/1\"\nname = \"few\"\ndescription = \"d\"\n\
         [limits]\nnofile = \"<=5000\"\n",
    )
    .unwrap();
    let out = bin()
        .args([
            "run",
            "http-ipstack",
            "--sweep",
            "connections=1,4",
            "--heat-up",
            "0.2s",
            "--sample-time",
            "0.3s",
            "--samples",
            "1",
            "-q",
            "--profile",
        ])
        .arg(format!("default,{}", p.display()))
        .arg("-o")
        .arg(dir.path().join("s.json"))
        .arg("--workdir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(dir.path().join("s.html")).unwrap();
    let figures: Vec<&str> = html
        .split("<figure class=\"sweep\"")
        .skip(1)
        .map(|f| f.split("</figure>").next().unwrap())
        .collect();
    assert!(!figures.is_empty(), "no sweep chart");
    assert!(
        figures
            .iter()
            .all(|f| f.contains("/default") && f.contains("/few")),
        "each sweep chart overlays both profiles"
    );
    for name in ["default", "few"] {
        let f = load(&dir.path().join(format!("s-{name}.json")));
        assert_valid(&f);
        assert_eq!(
            f["workloads"][0]["rows"][0]["sweep"]["levels"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
    }
}

#[test]
fn profiles_list_and_show_as_json_and_a_typo_gets_a_suggestion() {
    let json = |args: &[&str]| -> serde_json::Value {
        let o = bin().args(args).output().unwrap();
        assert!(o.status.success(), "{args:?}: {}", common::text(&o.stderr));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let l = json(&["profile", "list", "--json"]);
    let all = l["profiles"].as_array().unwrap();
    let names: Vec<&str> = all.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert!(
        names.contains(&"default") && names.contains(&"dragonfly-linux"),
        "{l}"
    );
    for p in all {
        let (here, total) = (
            p["settings_here"].as_u64().unwrap(),
            p["settings"].as_u64().unwrap(),
        );
        assert!(here <= total, "{p}");
    }
    let s = json(&["profile", "show", "dragonfly-linux", "--json"]);
    assert_eq!(s["name"], "dragonfly-linux");
    let settings = s["settings"].as_array().unwrap();
    assert!(!settings.is_empty(), "{s}");
    assert!(settings.iter().any(|x| x["os"] == "linux"), "{s}");
    // The same count as the list says.
    let listed = all.iter().find(|p| p["name"] == "dragonfly-linux").unwrap();
    assert_eq!(
        listed["settings"].as_u64().unwrap() as usize,
        settings.len()
    );
    let o = bin()
        .args(["profile", "show", "dragonfly-linu"])
        .output()
        .unwrap();
    // No profile by that name: a usage error.
    assert_eq!(o.status.code(), Some(2));
    let e = common::text(&o.stderr);
    assert!(
        e.contains("unknown profile `dragonfly-linu`: did you mean `dragonfly-linux`?"),
        "{e}"
    );
    let o = bin().args(["profile", "show", "zzzz"]).output().unwrap();
    assert!(!common::text(&o.stderr).contains("did you mean"));
}
