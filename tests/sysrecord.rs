//! The whole system on record (issue 17, point 5), through the binary:
//! `run --record-sysctl` records the sysctls asked for and names the
//! unknown ones; the result file carries the steal time over the run, the
//! network interfaces, the filesystems of the work directory and `--dir`,
//! and still matches docs/results-schema.json; `sysinfo` prints the
//! cgroup and network interface lines.

#![cfg(target_os = "linux")]

use crate::common;

use common::{assert_valid, bin, load};

/// The interfaces that are up and not loopback, with their drivers, read
/// here from sysfs without scalebench.
fn interfaces_up() -> Vec<(String, Option<String>)> {
    let mut v: Vec<(String, Option<String>)> = std::fs::read_dir("/sys/class/net")
        .unwrap()
        .flatten()
        .filter(|e| {
            let r = |f: &str| std::fs::read_to_string(e.path().join(f)).unwrap_or_default();
            let flags =
                u32::from_str_radix(r("flags").trim().trim_start_matches("0x"), 16).unwrap_or(0);
            flags & 1 != 0 && flags & 8 == 0 && matches!(r("operstate").trim(), "up" | "unknown")
        })
        .map(|e| {
            let driver = std::fs::read_link(e.path().join("device/driver"))
                .ok()
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned());
            (e.file_name().to_string_lossy().into_owned(), driver)
        })
        .collect();
    v.sort();
    v
}

#[test]
fn a_run_records_the_sysctls_asked_for_and_the_whole_system() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("r.json");
    let swappiness = std::fs::read_to_string("/proc/sys/vm/swappiness").unwrap();
    // A filesystem workload's directory on tmpfs: its filesystem is recorded.
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let o = bin()
        .args([
            "run",
            "socket",
            "fs-sizes",
            "--sizes",
            "4K",
            "--size-files",
            "10",
            "--max",
            "200",
            "--runs",
            "1",
            "--quiet",
            "--no-report",
        ])
        .args(["--record-sysctl", "vm.swappiness,kernel.nosuch"])
        .arg("--dir")
        .arg(shm.path())
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("--record-sysctl kernel.nosuch: no such sysctl here"),
        "{stderr}"
    );
    let doc = load(&out);
    assert_valid(&doc);
    let sys = &doc["system"];
    assert_eq!(sys["sysctls"]["vm.swappiness"], swappiness.trim());
    assert!(sys["sysctls"].get("kernel.nosuch").is_none());
    assert!(sys["tuning"]["sysctls"].get("vm.swappiness").is_none());
    // Over the run, a share.
    let steal = sys["tuning"]["steal_percent"]
        .as_f64()
        .expect("steal_percent");
    assert!((0.0..=100.0).contains(&steal), "{steal}");
    // The work directory's filesystem, then the workload directory's.
    let fs = sys["filesystems"].as_array().expect("filesystems");
    assert_eq!(fs[0]["mount_point"], sys["workdir"]["mount_point"]);
    let dir = shm.path().to_str().unwrap();
    let shm_fs = fs.iter().find(|f| f["path"] == dir).expect("--dir");
    assert_eq!(shm_fs["fs_type"], "tmpfs");
    assert_eq!(shm_fs["mount_point"], "/dev/shm");
    // Every interface that is up, with its driver.
    let nics: Vec<(String, Option<String>)> = sys["tuning"]["nics"]
        .as_array()
        .expect("nics")
        .iter()
        .map(|n| {
            (
                n["name"].as_str().unwrap().to_string(),
                n["driver"].as_str().map(str::to_string),
            )
        })
        .collect();
    assert_eq!(nics, interfaces_up());
    // Only what caps the run is written.
    if let Some(c) = sys["tuning"].get("cgroup_limits") {
        assert!(c.as_object().is_some_and(|o| !o.is_empty()), "{c}");
    }
}

#[test]
fn sysinfo_prints_the_cgroup_and_nic_lines() {
    let o = bin()
        .args(["sysinfo", "--record-sysctl", "vm.swappiness"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    let cgroup: Vec<&str> = text.lines().filter(|l| l.starts_with("cgroup ")).collect();
    assert_eq!(cgroup.len(), 1, "{text}");
    assert!(
        cgroup[0].contains("capped at ") || cgroup[0].contains("no cgroup limit caps"),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("sysctl      vm.swappiness = ")),
        "{text}"
    );
    assert!(text.lines().any(|l| l.starts_with("steal ")), "{text}");
    let nic_lines: Vec<&str> = text.lines().filter(|l| l.starts_with("nic ")).collect();
    let up = interfaces_up();
    if up.is_empty() {
        assert_eq!(nic_lines, ["nic         none up but loopback"], "{text}");
    } else {
        assert_eq!(nic_lines.len(), up.len(), "{text}");
        for ((name, driver), line) in up.iter().zip(&nic_lines) {
            let head = match driver {
                Some(d) => format!("nic         {name} {d},"),
                None => format!("nic         {name},"),
            };
            assert!(line.starts_with(&head), "{line} against {head}");
            assert!(line.contains(", mtu "), "{line}");
        }
    }
}
