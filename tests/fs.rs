//! The filesystem workloads through the binary: on tmpfs (/dev/shm) and on
//! ext4 and xfs loop devices (root: CI runs as root; mkfs options, the `find`
//! before the cold replays, the caches evicted in a small memory cgroup),
//! every phase present, request counts exact, the disk test's total run
//! time, nothing left behind; ^C in the middle cleans up too.

use crate::common;

use assert_cmd::prelude::*;
use common::{assert_valid, bin, load, workload};
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

const PHASES: [&str; 7] = [
    "unpack",
    "unpack 2 (request order)",
    "replay cold, 1 process",
    "replay cold, 32 processes",
    "replay warm, 1 process",
    "replay warm, 32 processes",
    "delete",
];

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn require_root() {
    assert!(
        is_root(),
        "this test makes loop devices and drops caches: run it as root (scripts/test in CI is)"
    );
}

/// The loop devices and mounts that mention `dir` once they are gone,
/// waited for up to 30 s: the kernel may finish detaching a loop device
/// a moment after `losetup -d` returned (a detach asked while the device
/// is still held by an unmount under way is done on its last close), so
/// a run that ended just now can still be listed. Only what stays is
/// left behind.
fn leftovers_after_a_while(dir: &Path) -> Vec<String> {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let left = leftovers(dir);
        if left.is_empty() || Instant::now() > until {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Loop devices and mounts that mention `dir`.
fn leftovers(dir: &Path) -> Vec<String> {
    let d = dir.display().to_string();
    let mut out: Vec<String> = std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter(|l| l.contains(&d))
        .map(String::from)
        .collect();
    if let Ok(o) = std::process::Command::new("losetup").arg("-a").output() {
        out.extend(
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter(|l| l.contains(&d))
                .map(String::from),
        );
    }
    out
}

fn rows<'a>(w: &'a Value, target: &str) -> Vec<&'a Value> {
    w["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["target"] == target)
        .collect()
}

/// The phases of `fs` with `--fs-preload`: a `find` before each cold
/// replay, and the replay named after it.
fn preloaded_phases() -> Vec<String> {
    let mut out = Vec::new();
    for p in PHASES {
        if p.starts_with("replay cold") {
            out.push(format!("find, before {p}"));
            out.push(p.replace("replay cold", "replay cold after find"));
        } else {
            out.push(p.to_string());
        }
    }
    out
}

/// Checks every phase of `fs` on `target`.
fn check_fs_phases(w: &Value, target: &str) {
    check_fs_phases_as(w, target, &PHASES.map(String::from))
}

/// Checks every phase of `fs` on `target`, labelled `phases`.
fn check_fs_phases_as(w: &Value, target: &str, phases: &[String]) {
    assert_eq!(w["status"], "ok", "{}", w["message"]);
    let p = &w["params"];
    let rs = rows(w, target);
    let labels: Vec<&str> = rs.iter().map(|r| r["label"].as_str().unwrap()).collect();
    assert_eq!(labels, phases, "{target}");
    for r in &rs {
        let ph = &r["phase"];
        let label = r["label"].as_str().unwrap();
        assert!(r["error"].is_null(), "{label}: {}", r["error"]);
        assert!(ph["seconds"].as_f64().unwrap() > 0.0, "{label}");
        assert!(!ph["throughput"].as_array().unwrap().is_empty(), "{label}");
        if label.starts_with("find, before") {
            // Every directory read: each file (and directory) an entry.
            assert_eq!(ph["unit"], "directories");
            assert!(ph["items"].as_u64().unwrap() > 1, "{label}");
            let entries = r["params"]["entries"].as_u64().unwrap();
            assert!(entries > p["files"].as_u64().unwrap(), "{label}: {entries}");
            continue;
        }
        match label {
            "unpack" => {
                assert_eq!(ph["items"], p["archive1_files"]);
                assert_eq!(ph["bytes"], p["archive1_bytes"]);
                assert!(ph["sync_seconds"].as_f64().is_some());
            }
            "unpack 2 (request order)" => {
                assert_eq!(ph["items"], p["archive2_files"]);
                assert_eq!(ph["bytes"], p["archive2_bytes"]);
            }
            "delete" => {
                assert_eq!(ph["items"], p["files"]);
                assert_eq!(ph["bytes"], p["bytes"]);
            }
            _ => {
                // Every request of the log answered once, all 200.
                let l = &r["load"];
                assert_eq!(l["requests"], p["requests"], "{label}");
                assert_eq!(ph["items"], p["requests"], "{label}");
                assert_eq!(l["statuses"]["200"], p["requests"], "{label}");
                assert_eq!(l["failed"], 0, "{label}");
                assert_eq!(ph["bytes"], l["body_bytes"], "{label}");
                let procs = if label.ends_with("1 process") { 1 } else { 32 };
                assert_eq!(r["params"]["processes"], procs);
                if r["params"]["cache"] == "cold" {
                    // How the caches were made cold, and how cold they were.
                    let how = &r["params"]["cold_by"];
                    assert!(how == "drop_caches" || how == "eviction", "{label}: {how}");
                    let share = r["params"]["resident_after"].as_f64().unwrap();
                    assert!((0.0..=1.0).contains(&share), "{label}: {share}");
                }
            }
        }
    }
}

#[test]
fn fs_and_fs_sizes_on_tmpfs() {
    require_root();
    let t = tempfile::tempdir().unwrap();
    let shm = Path::new("/dev/shm");
    let before: Vec<_> = std::fs::read_dir(shm)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let out = t.path().join("r.json");
    let o = bin()
        .args(["run", "fs", "fs-sizes", "--dir", "/dev/shm"])
        .args(["--files", "600", "--bytes", "6M", "--requests", "800"])
        .args([
            "--size-files",
            "40",
            "--sizes",
            "8K,128K",
            "--quiet",
            "--no-report",
        ])
        .arg("--workdir")
        .arg(t.path())
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc = load(&out);
    assert_valid(&doc);
    let fs = workload(&doc, "fs");
    let target = "tmpfs /dev/shm";
    assert_eq!(fs["params"]["targets"][0]["label"], target);
    assert_eq!(fs["params"]["targets"][0]["fs_type"], "tmpfs");
    assert_eq!(fs["params"]["files"], 600);
    check_fs_phases(fs, target);
    // fs-sizes: write, read, write + fsync and a total per size.
    let sizes = workload(&doc, "fs-sizes");
    assert_eq!(sizes["status"], "ok", "{}", sizes["message"]);
    let labels: Vec<&str> = rows(sizes, target)
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            "8 KB write",
            "8 KB read (cold)",
            "8 KB write + fsync",
            "8 KB total",
            "128 KB write",
            "128 KB read (cold)",
            "128 KB write + fsync",
            "128 KB total",
            "total run time"
        ]
    );
    // The disk test's total run time: both sizes' three steps.
    let all = rows(sizes, target);
    let run = &all.last().unwrap()["phase"];
    assert_eq!(run["items"], 40 * 3 * 2);
    assert_eq!(run["bytes"], 40 * 3 * (8192 + 131072));
    let sum: f64 = all
        .iter()
        .filter(|r| r["label"].as_str().unwrap().ends_with("KB total"))
        .map(|r| r["phase"]["seconds"].as_f64().unwrap())
        .sum();
    assert!((run["seconds"].as_f64().unwrap() - sum).abs() < 1e-9);
    // tmpfs keeps its files in memory whatever is dropped: the cold rows
    // say they were not cold.
    for r in all
        .iter()
        .filter(|r| r["label"].as_str().unwrap().contains("read (cold)"))
    {
        assert!(
            r["params"]["resident_after"].as_f64().unwrap() > 0.9,
            "{}",
            r["label"]
        );
    }
    let m = fs["message"].as_str().unwrap_or_default();
    assert!(
        m.contains("tmpfs /dev/shm: 100 % of a sample") && m.contains("that row is not cold"),
        "{m}"
    );
    for r in all.iter().filter(|r| r["label"] != "total run time") {
        let size = r["params"]["file_bytes"].as_u64().unwrap();
        let ph = &r["phase"];
        let k = if r["label"].as_str().unwrap().ends_with("total") {
            3
        } else {
            1
        };
        assert_eq!(ph["items"], 40 * k, "{}", r["label"]);
        assert_eq!(ph["bytes"], 40 * k * size, "{}", r["label"]);
    }
    // The terminal shows the phases per target.
    for want in [
        "unpack 2 (request order)",
        "replay warm, 32 processes",
        target,
        "128 KB write + fsync",
    ] {
        assert!(stdout.contains(want), "{want} missing:\n{stdout}");
    }
    // Nothing left behind.
    let after: Vec<_> = std::fs::read_dir(shm)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    // PostgreSQL's segments (PostgreSQL.N), made meanwhile by a server
    // that other work on this machine runs, are not this run's.
    let new: Vec<_> = after
        .iter()
        .filter(|p| !before.contains(p))
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("PostgreSQL."))
        })
        .collect();
    assert!(new.is_empty(), "left in /dev/shm: {new:?}");
    assert_eq!(
        std::fs::read_dir(t.path()).unwrap().count(),
        1,
        "only the result file"
    );
    // The HTML report has a throughput chart per phase.
    let html = t.path().join("r.html");
    bin()
        .arg("report")
        .arg(&out)
        .arg("--html")
        .arg(&html)
        .assert()
        .success();
    let h = std::fs::read_to_string(&html).unwrap();
    for p in PHASES {
        assert!(
            h.contains(&format!("<figure class=\"phase\" data-phase=\"{p}\">")),
            "{p}"
        );
    }
    assert!(h.contains("data-target=\"tmpfs /dev/shm\""));
    // Laid over a copy whose phases took twice as long, the report names
    // every phase as slower.
    let mut slow = doc.clone();
    slow["label"] = "slow".into();
    for w in slow["workloads"].as_array_mut().unwrap() {
        for r in w["rows"].as_array_mut().unwrap() {
            let s = r["phase"]["seconds"].as_f64().unwrap();
            r["phase"]["seconds"] = (2.0 * s).into();
        }
    }
    let slow_file = t.path().join("slow.json");
    std::fs::write(&slow_file, slow.to_string()).unwrap();
    let o = bin()
        .arg("report")
        .arg(&out)
        .arg(&slow_file)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    for p in PHASES {
        assert!(
            text.contains(&format!("fs ({p}, {target}): slow is 2.0× slower")),
            "{p}:\n{text}"
        );
    }
}

/// A memory cgroup (v1 or v2) below the test's own, with a limit; removed
/// when dropped (its processes have ended by then).
struct MemoryCgroup(std::path::PathBuf);

impl MemoryCgroup {
    fn new(limit: u64) -> MemoryCgroup {
        let own = std::fs::read_to_string("/proc/self/cgroup").unwrap();
        let (dir, file) =
            if let Some(l) = own.lines().find(|l| l.split(':').nth(1) == Some("memory")) {
                let path = l.splitn(3, ':').nth(2).unwrap().trim_start_matches('/');
                (
                    Path::new("/sys/fs/cgroup/memory").join(path),
                    "memory.limit_in_bytes",
                )
            } else {
                let path = own
                    .lines()
                    .find_map(|l| l.strip_prefix("0::"))
                    .expect("a cgroup");
                (
                    Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/')),
                    "memory.max",
                )
            };
        let dir = dir.join(format!("scalebench-test-{}", std::process::id()));
        std::fs::create_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let g = MemoryCgroup(dir);
        std::fs::write(g.0.join(file), limit.to_string()).unwrap();
        g
    }

    /// `scalebench ARGS`, started inside the cgroup.
    fn command(&self) -> std::process::Command {
        let mut c = std::process::Command::new("sh");
        c.arg("-c")
            .arg("echo $$ > \"$1\"/cgroup.procs && shift && exec \"$@\"")
            .arg("sh")
            .arg(&self.0)
            .arg(env!("CARGO_BIN_EXE_scalebench"));
        c
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        for _ in 0..100 {
            if std::fs::remove_dir(&self.0).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn fs_on_ext4_and_xfs_loop_devices_leaves_nothing_mounted() {
    require_root();
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("r.json");
    let work = t.path().join("work");
    std::fs::create_dir(&work).unwrap();
    // Options mkfs refuses are named, with mkfs's words, before anything
    // is measured.
    let o = bin()
        .args(["run", "fs", "--mkfs", "ext4:-O ^bogus_feature", "-o"])
        .arg(t.path().join("bad.json"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--mkfs ext4 -O ^bogus_feature: mkfs.ext4 -O ^bogus_feature refused them")
            && err.contains("bogus_feature"),
        "{err}"
    );
    // In a memory cgroup of 192 MiB the caches are evicted by writing and
    // reading 192 MiB, not dropped: the seed's way, bounded by the cgroup.
    let limit: u64 = 192 << 20;
    let cg = MemoryCgroup::new(limit);
    let o = cg
        .command()
        .args([
            "run",
            "fs",
            "--mkfs",
            "ext4:-O ^has_journal:noatime,ext4,xfs:-i size=512",
        ])
        // xfs needs 300 MB at least.
        .args(["--fs-size", "320M", "--fs-preload", "--fs-cold", "evict"])
        .args([
            "--files",
            "400",
            "--bytes",
            "4M",
            "--requests",
            "500",
            "--quiet",
            "--no-report",
        ])
        .arg("--workdir")
        .arg(&work)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = load(&out);
    assert_valid(&doc);
    let fs = workload(&doc, "fs");
    assert_eq!(fs["params"]["preload"], true);
    let targets = fs["params"]["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 3);
    let label = "ext4 -O ^has_journal noatime";
    assert_eq!(targets[0]["label"], label);
    assert_eq!(targets[0]["fs_type"], "ext4");
    assert_eq!(targets[0]["made"], true);
    assert_eq!(
        targets[0]["mkfs_options"],
        serde_json::json!(["-O", "^has_journal"])
    );
    assert!(
        targets[0]["device"]
            .as_str()
            .unwrap()
            .starts_with("/dev/loop")
    );
    assert!(
        targets[0]["mount_options"]
            .as_str()
            .unwrap()
            .contains("noatime"),
        "{}",
        targets[0]["mount_options"]
    );
    // Each made filesystem's block device: its loop device, the image
    // in the work directory behind it.
    for t in targets {
        let b = &t["block"];
        let dev = t["device"].as_str().unwrap();
        assert_eq!(
            Some(format!("/dev/{}", b["name"].as_str().unwrap()).as_str()),
            Some(dev),
            "{t}"
        );
        assert!(
            b["scheduler"].is_string() && b["read_ahead_kb"].is_u64(),
            "{b}"
        );
        let image = b["backing_file"].as_str().unwrap();
        assert!(image.starts_with(work.to_str().unwrap()), "{b}");
    }
    assert_eq!(targets[1]["label"], "ext4");
    let xfs = "xfs -i size=512";
    assert_eq!(targets[2]["label"], xfs);
    assert_eq!(targets[2]["fs_type"], "xfs");
    assert_eq!(
        targets[2]["mkfs_options"],
        serde_json::json!(["-i", "size=512"])
    );
    assert!(
        targets[0]["cache"]
            .as_str()
            .unwrap()
            .starts_with("evicted (--fs-cold evict): a file of 192 MiB"),
        "{}",
        targets[0]["cache"]
    );
    for target in [label, "ext4", xfs] {
        check_fs_phases_as(fs, target, &preloaded_phases());
        for r in rows(fs, target)
            .iter()
            .filter(|r| r["params"]["cache"] == "cold")
        {
            let p = &r["params"];
            assert_eq!(p["cold_by"], "eviction", "{}", r["label"]);
            assert_eq!(p["evict_bytes"], limit);
            assert_eq!(p["evict_basis"], "memory cgroup limit");
            assert!(p["evict_seconds"].as_f64().unwrap() > 0.0);
            let passes = p["evict_passes"].as_u64().unwrap();
            assert!((1..=2).contains(&passes), "{passes}");
            // Before the first cold replay the site was only written: the
            // eviction pushes it out. Before the second, the first had read
            // it back (popular files many times), and Linux protects pages
            // read more than once from a stream of new ones: cold, or said
            // not to be.
            let share = p["resident_after"].as_f64().unwrap();
            let name = r["label"].as_str().unwrap();
            if name.ends_with("1 process") {
                assert!(share <= 0.1, "{name}: {share}");
            } else if share > 0.1 {
                let m = fs["message"].as_str().unwrap_or_default();
                let said = format!("cold for {name}: that row is not cold");
                assert!(m.contains(&said), "{name}: {share}: {m}");
            }
            // Below the filesystem, the loop device's image may still hold
            // the data (the cgroup's eviction does not reach it): measured.
            let below = p["image_resident_after"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&below), "{}: {below}", r["label"]);
        }
    }
    drop(cg);
    let left = leftovers_after_a_while(t.path());
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(
        std::fs::read_dir(&work).unwrap().count(),
        0,
        "the work directory is empty"
    );
}

#[test]
fn interrupting_an_unpack_on_a_loop_device_unmounts_and_detaches() {
    require_root();
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("r.json");
    let work = t.path().join("work");
    std::fs::create_dir(&work).unwrap();
    // Its messages go to a file beside the tempdir checked for leftovers.
    let log = tempfile::NamedTempFile::new().unwrap();
    // 64 000 files and their directories need more inodes than mkfs.ext4
    // makes on 1 GiB by default (65 536): the run must ask for them, or the
    // unpack fails with ENOSPC before it ends.
    let child = bin()
        .args(["run", "socket", "fs", "--max", "200"])
        .args(["--mkfs", "ext4", "--fs-size", "1G"])
        .args(["--files", "64000", "--bytes", "300M", "--no-report"])
        .arg("--workdir")
        .arg(&work)
        .arg("-o")
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(log.reopen().unwrap())
        .spawn()
        .unwrap();
    let mut child = common::Child(child);
    let messages = || std::fs::read_to_string(log.path()).unwrap_or_default();
    // Wait for the filesystem to be mounted and files to appear in it.
    let deadline = Instant::now() + Duration::from_secs(120);
    let unpacking = || walk_count(&work) > 100;
    while !unpacking() && Instant::now() < deadline {
        if let Ok(Some(status)) = child.0.try_wait() {
            panic!(
                "the run ended ({status}) before the unpack began:\n{}",
                messages()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(unpacking(), "the unpack never started:\n{}", messages());
    // The filesystem was made with room for every file.
    let mnt = std::fs::read_dir(&work)
        .unwrap()
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("mnt-"))
        })
        .expect("a mount point in the work directory");
    let df = common::cmd("df", &["--output=itotal", &mnt.display().to_string()]);
    let inodes: u64 = df.lines().nth(1).unwrap().trim().parse().unwrap();
    assert!(inodes > 65_536, "{df}");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.0.id() as i32, libc::SIGINT) };
    let status = child.0.wait().unwrap();
    assert!(!status.success());
    let left = leftovers_after_a_while(t.path());
    assert!(left.is_empty(), "{left:?}:\n{}", messages());
    assert_eq!(
        std::fs::read_dir(&work).unwrap().count(),
        0,
        "the work directory is empty"
    );
    // What finished before ^C is kept.
    let doc = load(&out);
    assert_valid(&doc);
    assert_eq!(doc["complete"], false);
    assert_eq!(doc["benchmarks"][0]["name"], "socket");
    assert_eq!(doc["benchmarks"][0]["status"], "ok");
}

/// Files below `dir`, counted without following links, up to 1 000.
fn walk_count(dir: &Path) -> usize {
    let mut n = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            n += 1;
            if n > 1000 {
                return n;
            }
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(e.path());
            }
        }
    }
    n
}

/// JFS, one of the seeds' Linux filesystems: made and measured where the
/// kernel can mount it, else refused naming the kernel before anything
/// runs (this machine's kernel has no JFS; Debian's cloud kernels neither).
#[test]
fn jfs_is_made_where_the_kernel_has_it_and_refused_by_name_where_not() {
    let listed = std::fs::read_to_string("/proc/filesystems")
        .unwrap()
        .lines()
        .any(|l| l.split_whitespace().last() == Some("jfs"));
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    let release = release.trim();
    let module = std::fs::read_to_string(format!("/lib/modules/{release}/modules.dep"))
        .is_ok_and(|d| d.lines().any(|l| l.contains("/jfs/jfs.ko")));
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("r.json");
    let o = bin()
        .args([
            "run",
            "fs",
            "--mkfs",
            "jfs",
            "--fs-size",
            "256M",
            "--files",
            "200",
        ])
        .args(["--bytes", "2M", "--requests", "100", "-q", "--no-report"])
        .arg("--workdir")
        .arg(t.path())
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    if listed || module {
        assert!(o.status.success(), "{err}");
        let doc = load(&out);
        assert_eq!(
            workload(&doc, "fs")["params"]["targets"][0]["fs_type"],
            "jfs"
        );
    } else {
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(
            err.contains(&format!(
                "--mkfs jfs: this kernel ({release}) cannot mount jfs: not in /proc/filesystems, and no jfs module under /lib/modules/{release}"
            )),
            "{err}"
        );
        assert!(!out.exists(), "nothing measured, nothing written");
    }
}

/// `--fit`: a site larger than its directory's filesystem is shrunk to
/// what fits and the result says from what and why; without it, refused.
#[test]
fn a_site_too_large_is_fitted_to_the_disk_only_when_asked() {
    let t = tempfile::tempdir().unwrap();
    let fs = common::Tmpfs::mount(t.path().join("small"), "size=128m");
    let mnt = fs.0.clone();
    let run = |fit: bool| {
        let out = t.path().join(format!("r-{fit}.json"));
        let o = bin()
            .args([
                "run",
                "fs",
                "--files",
                "100000",
                "--bytes",
                "1G",
                "--requests",
                "200",
            ])
            .args(["-q", "--no-report", "--dir"])
            .arg(&mnt)
            .args(fit.then_some("--fit"))
            .arg("--workdir")
            .arg(t.path())
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        (o, out)
    };
    let (o, out) = run(false);
    assert!(!o.status.success());
    let w = workload(&load(&out), "fs").clone();
    assert_eq!(w["status"], "failed", "{w}");
    assert!(
        w["message"].as_str().unwrap().contains("128 MiB free"),
        "{w}"
    );
    let (o, out) = run(true);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = load(&out);
    assert_valid(&doc);
    let w = workload(&doc, "fs");
    assert_eq!(w["status"], "ok", "{w}");
    let fitted = w["params"]["fitted"].as_str().unwrap();
    assert!(
        fitted.starts_with("fitted to this machine (--fit): 100 000 files and 1.00 GiB asked, "),
        "{fitted}"
    );
    assert!(
        fitted.contains(&format!("{} has 128 MiB free", mnt.display())),
        "{fitted}"
    );
    assert!(w["message"].as_str().unwrap().contains(fitted), "{w}");
    let files = w["params"]["files"].as_u64().unwrap();
    assert!((2..100_000).contains(&files), "{files}");
    assert!(
        w["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["error"].is_null()),
        "{w}"
    );
}

#[test]
fn bad_filesystem_options_are_named() {
    let cases: [(&[&str], &str); 9] = [
        (&["--mkfs", "zfs"], "`zfs`"),
        (
            &["--serve-loop", "kqueue"],
            "--serve-loop kqueue: not available on this system (available here: epoll, poll, select",
        ),
        (&["--serve-files", "mmap"], "'--serve-files <PATH>'"),
        (&["--dir", "/nonexistent/place"], "--dir /nonexistent/place"),
        (
            &["--bytes", "lots"],
            "'--bytes <SIZE>': `lots` is not a size",
        ),
        (&["--sizes", "8K,huge"], "'--sizes <SIZE,…>': `huge` is not"),
        (&["--sizes", "2T"], "'--sizes <SIZE,…>': `2T` is over"),
        (&["--files", "1000000000000"], "--files"),
        (&["--fs-cold", "cool"], "'--fs-cold <HOW>'"),
    ];
    for (args, want) in cases {
        bin()
            .args(["run", "fs"])
            .args(args)
            .assert()
            .failure()
            .stderr(predicates::str::contains(want));
    }
}

#[test]
fn a_corpus_that_does_not_fit_is_refused_and_the_rest_kept() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("r.json");
    let o = bin()
        .args(["run", "socket", "fs", "--max", "100", "--dir"])
        .arg(t.path())
        .args([
            "--files",
            "1000",
            "--bytes",
            "1000G",
            "--quiet",
            "--no-report",
        ])
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(!o.status.success());
    let doc = load(&out);
    assert_valid(&doc);
    assert_eq!(doc["benchmarks"][0]["status"], "ok");
    let fs = workload(&doc, "fs");
    assert_eq!(fs["status"], "failed");
    let m = fs["message"].as_str().unwrap();
    assert!(
        m.contains(&t.path().display().to_string()) && m.contains("free"),
        "{m}"
    );
    // The reason reaches standard error too: the report went to stdout.
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("error: failed: fs") && err.contains(&t.path().display().to_string()),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(t.path()).unwrap().count(),
        1,
        "only the result file"
    );
}
