//! The whole system on record, through the binary:
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
    // The machine whole: tmpfs is on no block device; a filesystem on a
    // device names it as /sys does, with its queue's settings.
    assert!(shm_fs.get("block").is_none(), "{shm_fs}");
    for f in fs
        .iter()
        .filter(|f| f["device"].as_str().unwrap().starts_with("/dev/"))
    {
        let b = &f["block"];
        let name = b["name"].as_str().expect("a block device named");
        let real = std::fs::canonicalize(f["device"].as_str().unwrap()).unwrap();
        assert_eq!(real.file_name().unwrap().to_str(), Some(name), "{f}");
        let disk = b["disk"].as_str().unwrap();
        let sched = std::fs::read_to_string(format!("/sys/block/{disk}/queue/scheduler")).unwrap();
        assert!(
            sched.contains(&format!("[{}]", b["scheduler"].as_str().unwrap()))
                || sched.trim() == b["scheduler"],
            "{sched} {b}"
        );
        let ra = std::fs::read_to_string(format!("/sys/block/{disk}/queue/read_ahead_kb")).unwrap();
        assert_eq!(b["read_ahead_kb"].as_u64(), ra.trim().parse().ok(), "{b}");
    }
    // How the CPUs are arranged, and how they sleep, as /sys says.
    let topo = &sys["cpu"]["topology"];
    assert_eq!(topo["threads"], sys["cpu"]["count"], "{topo}");
    assert!(
        topo["packages"].as_u64().unwrap() >= 1
            && topo["cores"].as_u64().unwrap() >= topo["packages"].as_u64().unwrap(),
        "{topo}"
    );
    // A kernel without cpuidle has no such file, and the record no cpuidle.
    let driver = std::fs::read_to_string("/sys/devices/system/cpu/cpuidle/current_driver").ok();
    assert_eq!(
        sys["tuning"]["cpuidle"]["driver"].as_str(),
        driver.as_deref().map(str::trim),
        "{}",
        sys["tuning"]
    );
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
    for head in ["topology    ", "cpuidle     ", "block dev   "] {
        assert!(text.lines().any(|l| l.starts_with(head)), "{head}: {text}");
    }
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

/// A network namespace made for one test, deleted when dropped.
struct Netns(String);

impl Netns {
    fn new(name: &str) -> Netns {
        let name = format!("{name}-{}", std::process::id());
        let ok = std::process::Command::new("ip")
            .args(["netns", "add", &name])
            .status()
            .expect("ip (iproute2) runs");
        assert!(ok.success(), "ip netns add {name}");
        Netns(name)
    }

    /// Runs `args` inside, asserting that it succeeds; its output.
    fn run(&self, args: &[&str]) -> String {
        let o = std::process::Command::new("ip")
            .args(["netns", "exec", &self.0])
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("{args:?}: {e}"));
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = std::process::Command::new("ip")
            .args(["netns", "del", &self.0])
            .status();
    }
}

#[test]
fn the_firewall_rules_and_security_modules_are_on_record() {
    // Rules made by the real nft, iptables (nf_tables) and iptables-legacy
    // in a namespace of this test's own; scalebench reads them from the
    // kernel there.
    let ns = Netns::new("sb-fw");
    ns.run(&["nft", "add", "table", "inet", "t"]);
    ns.run(&[
        "nft",
        "add",
        "chain",
        "inet",
        "t",
        "c",
        "{ type filter hook input priority 0; }",
    ]);
    ns.run(&[
        "nft", "add", "rule", "inet", "t", "c", "tcp", "dport", "22", "accept",
    ]);
    ns.run(&[
        "nft", "add", "rule", "inet", "t", "c", "tcp", "dport", "23", "drop",
    ]);
    ns.run(&[
        "iptables", "-A", "INPUT", "-p", "tcp", "--dport", "80", "-j", "ACCEPT",
    ]);
    ns.run(&[
        "iptables-legacy",
        "-A",
        "INPUT",
        "-p",
        "tcp",
        "--dport",
        "81",
        "-j",
        "ACCEPT",
    ]);
    let exe = env!("CARGO_BIN_EXE_scalebench");
    let json: serde_json::Value =
        serde_json::from_str(&ns.run(&[exe, "sysinfo", "--json"])).unwrap();
    let f = &json["tuning"]["firewall"];
    assert_eq!(f["nftables"]["inet t"], 2, "{f}");
    assert_eq!(f["nftables"]["ip filter"], 1, "iptables-nft's rule: {f}");
    // One rule, three built-in chains' policies, one end marker.
    assert_eq!(f["iptables_legacy"]["ipv4 filter"], 5, "{f}");
    let s = &json["tuning"]["security"];
    assert!(s["selinux"].is_string() && s["apparmor"].is_string(), "{s}");
    // Here, outside the namespace, none of those rules is seen.
    let here = bin().args(["sysinfo", "--json"]).output().unwrap();
    let here: serde_json::Value = serde_json::from_slice(&here.stdout).unwrap();
    assert!(
        here["tuning"]["firewall"]["nftables"]
            .get("inet t")
            .is_none()
    );
    let text = ns.run(&[exe, "sysinfo"]);
    assert!(
        text.lines()
            .any(|l| l.starts_with("firewall    nftables 3 rules (inet t 2, ip filter 1)")),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l.starts_with("security    SELinux ")),
        "{text}"
    );
}
