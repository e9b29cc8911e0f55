//! How the systems were set up, side by side: the tuning profile each ran
//! under, what it changed, and every recorded setting (OS, CPU, sysctls,
//! limits, governor, huge pages, mitigations, virtualization, …) whose
//! value differs between them; and the kernel build options that differ.

use super::System;
use results::{ChangeStatus, Nic, SystemInfo, TuningRecord};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// What a reading the OS does not offer is called (a governor without
/// cpufreq), so that "absent" differs from "not recorded".
pub const NOT_EXPOSED: &str = "not exposed";

/// A setting and its value on each system (`None`: not recorded there).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SettingRow {
    /// What (`sysctl net.core.somaxconn`, `CPU governor`).
    pub name: String,
    /// Its value per system, in the order given.
    pub values: Vec<Option<String>>,
}

/// A kernel command line without the words by which scalebench drives
/// its own guests (`sb.share=…`, `sb.modtree=PATH`, and `sb.host=NAME`
/// in files written before 2026-12-06): they name the system and where
/// its files are, never a setting, and would make guests differ. The
/// result file keeps them.
fn without_plumbing(cmdline: &str) -> String {
    cmdline
        .split_whitespace()
        .filter(|w| !w.starts_with("sb."))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every setting recorded of one system, by name.
fn settings(s: &System) -> BTreeMap<String, String> {
    let f = &s.file;
    let sys: &SystemInfo = &f.system;
    let t = &sys.tuning;
    let mut m = BTreeMap::new();
    let mut put = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            m.insert(k.to_string(), v);
        }
    };
    put(
        "profile",
        Some(f.profile.as_ref().map_or("none".into(), |p| {
            format!("{}{}", p.name, if p.partial { " (partial)" } else { "" })
        })),
    );
    put("OS", Some(format!("{} {}", sys.os, sys.os_release)));
    put("kernel build", Some(sys.os_version.clone()));
    put(
        "CPU",
        Some(format!(
            "{} × {}",
            sys.cpu.count,
            sys.cpu.model.as_deref().unwrap_or("unknown")
        )),
    );
    put("memory", sys.memory_bytes.map(units::fmt_gib));
    put("C library", Some(sys.libc.clone()));
    // A record that has the tuning readings (its kernel command line or
    // load average) and no governor or boost had no cpufreq to read: "not
    // exposed", which differs from a governor; an older record without
    // the readings says nothing.
    let recorded = t.readings_recorded();
    let exposed = |v: Option<String>| v.or_else(|| recorded.then(|| NOT_EXPOSED.to_string()));
    put(
        "CPU topology",
        exposed(sys.cpu.topology.as_ref().map(|x| x.words())),
    );
    put("cpuidle", exposed(t.cpuidle.as_ref().map(|x| x.words())));
    for f in &sys.filesystems {
        put(
            &format!("block device of {}", f.mount_point),
            match &f.block {
                Some(b) => Some(b.words()),
                None if !f.device.starts_with("/dev/") => Some(format!("none ({})", f.device)),
                None => exposed(None),
            },
        );
    }
    put("CPU governor", exposed(t.governor.clone()));
    put(
        "boost",
        exposed(t.boost.map(|b| if b { "on" } else { "off" }.into())),
    );
    put("SMT", t.smt.clone());
    put("microcode", t.microcode.clone());
    put(
        "kernel command line",
        t.kernel_cmdline.as_deref().map(without_plumbing),
    );
    put("transparent huge pages", t.thp_enabled.clone());
    put("THP defrag", t.thp_defrag.clone());
    put("clocksource", t.clocksource.clone());
    put("hypervisor", t.hypervisor.clone());
    if let Some(v) = &sys.virtualization {
        put(
            "virtualization",
            Some(format!(
                "{}{}{}",
                v.kind,
                if v.emulated && v.kind != "tcg" {
                    " (emulated)"
                } else {
                    ""
                },
                v.reason
                    .as_deref()
                    .map_or(String::new(), |r| format!(": {r}"))
            )),
        );
        put("hypervisor (CPUID)", v.hypervisor.clone());
        put(
            "vCPUs pinned to host CPUs",
            (!v.vcpu_pins.is_empty()).then(|| {
                let pins: Vec<String> = v.vcpu_pins.iter().map(|p| p.to_string()).collect();
                pins.join(", ")
            }),
        );
    }
    put(
        "work directory filesystem",
        sys.workdir
            .as_ref()
            .map(|w| format!("{} ({})", w.fs_type, w.mount_options)),
    );
    put(
        "CPU time stolen during the run",
        t.steal_percent.map(|p| format!("{p:.1} %")),
    );
    if let Some(c) = &t.cgroup_limits {
        put("cgroup pids limit", c.pids.map(|p| p.to_string()));
        put("cgroup CPU limit", c.cpus.map(|x| format!("{x:.2} CPUs")));
        put("cgroup memory limit", c.memory_bytes.map(units::fmt_gib));
    }
    for n in t.nics.iter().flatten() {
        put(&format!("NIC {}", n.name), Some(nic_summary(n)));
        put(&format!("NIC {} queues", n.name), n.queue_words());
    }
    put("firewall", t.firewall.as_ref().map(|f| f.words()));
    put("security modules", t.security.as_ref().map(|s| s.words()));
    for (k, v) in &t.mitigations {
        put(&format!("mitigation {k}"), Some(v.clone()));
    }
    for (k, v) in sys.sysctls.iter().chain(&t.sysctls) {
        put(&format!("sysctl {k}"), Some(v.clone()));
    }
    for (k, l) in &sys.limits {
        let one = |v: Option<u64>| v.map_or("unlimited".to_string(), |x| x.to_string());
        put(k, Some(format!("{} / {}", one(l.soft), one(l.hard))));
    }
    put("benchmark run order", run_order(f));
    for w in &f.workloads {
        put(&format!("{} server", w.name), server_path(&w.params));
        put(&format!("{} sizes", w.name), w.sizes_words());
        for (label, block) in made_blocks(w) {
            put(
                &format!("block device of {} {label} (made)", w.name),
                Some(block.unwrap_or_else(|| NOT_EXPOSED.to_string())),
            );
        }
    }
    m
}

/// The block devices under the filesystems a workload made (`--mkfs`),
/// by target label, in words: a loop device and the file behind it are
/// named alike in every run (their names are the run's own), so that
/// only what they are set to differs. `None` where the OS did not say.
fn made_blocks(w: &results::WorkloadResult) -> Vec<(String, Option<String>)> {
    let targets = w.params.get("targets").and_then(|t| t.as_array());
    targets
        .into_iter()
        .flatten()
        .filter(|t| t["made"] == true)
        .filter_map(|t| {
            let label = t["label"].as_str()?.to_string();
            let block = t
                .get("block")
                .and_then(|b| {
                    <sys::hardware::BlockDevice as serde::Deserialize>::deserialize(b).ok()
                })
                .map(|mut b| {
                    if b.name.starts_with("loop") {
                        b.name = "a loop device".into();
                        b.disk = b.name.clone();
                    }
                    if b.backing_file.is_some() {
                        b.backing_file = Some("a file in the work directory".into());
                    }
                    b.words()
                });
            Some((label, block))
        })
        .collect()
}

/// The orders the file's series were run in (`--order`: `passes`, `up`),
/// as recorded; `None` where none says.
fn run_order(f: &results::ResultFile) -> Option<String> {
    let orders: BTreeSet<&str> = f
        .benchmarks
        .iter()
        .filter_map(|b| b.params.extra.get("order").and_then(|o| o.as_str()))
        .collect();
    (!orders.is_empty()).then(|| orders.into_iter().collect::<Vec<_>>().join(", "))
}

/// How a workload's server served its files (`per-request files, epoll`,
/// `cached files, io_uring`), from its params; `None` for a workload that
/// serves none, or a server scalebench did not run.
fn server_path(params: &BTreeMap<String, serde_json::Value>) -> Option<String> {
    let text = |k: &str| params.get(k).and_then(|v| v.as_str());
    match (text("server_files"), text("server_loop")) {
        (None, None) => None,
        (files, lp) => Some(format!(
            "{} files, {}",
            files.unwrap_or("?"),
            lp.unwrap_or("?")
        )),
    }
}

/// A network interface's settings: driver, MTU, ring sizes and the
/// offloads recorded (`e1000e, MTU 1500, rings 256/256, tso on gro off`).
fn nic_summary(n: &Nic) -> String {
    let o = &n.offloads;
    let on =
        |name: &str, v: Option<bool>| v.map(|b| format!("{name} {}", if b { "on" } else { "off" }));
    let offloads: Vec<String> = [
        on("tso", o.tso),
        on("gso", o.gso),
        on("gro", o.gro),
        on("lro", o.lro),
    ]
    .into_iter()
    .flatten()
    .collect();
    format!(
        "{}{}{}{}",
        n.driver.as_deref().unwrap_or("?"),
        n.mtu.map_or(String::new(), |m| format!(", MTU {m}")),
        match (n.rx_ring, n.tx_ring) {
            (Some(r), Some(t)) => format!(", rings {r}/{t}"),
            _ => String::new(),
        },
        if offloads.is_empty() {
            String::new()
        } else {
            format!(", {}", offloads.join(" "))
        }
    )
}

/// The settings whose values differ between the systems (nothing with one
/// system), `profile` first.
pub fn differing(systems: &[System]) -> Vec<SettingRow> {
    if systems.len() < 2 {
        return Vec::new();
    }
    let all: Vec<BTreeMap<String, String>> = systems.iter().map(settings).collect();
    let names: BTreeSet<&String> = all.iter().flat_map(|m| m.keys()).collect();
    let mut rows: Vec<SettingRow> = names
        .into_iter()
        .map(|n| SettingRow {
            name: n.clone(),
            values: all.iter().map(|m| m.get(n).cloned()).collect(),
        })
        .filter(|r| r.values.iter().any(|v| *v != r.values[0]))
        .collect();
    rows.sort_by_key(|r| r.name != "profile");
    rows
}

/// The kernel build options that differ between the systems that recorded
/// their configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfigDiff {
    /// Where each system's configuration was read, in the order given
    /// (`None`: not recorded).
    pub sources: Vec<Option<String>>,
    /// The system the others are counted against: the first with a
    /// configuration (its place among the systems).
    pub baseline: usize,
    /// For each system, against the baseline: options it sets that the
    /// baseline does not (added), that the baseline sets and it does not
    /// (removed), and that both set to different values (changed); `None`
    /// for the baseline and the systems without a configuration.
    pub counts: Vec<Option<ConfigCounts>>,
    /// Every option whose value differs between the systems with a
    /// configuration, by name; a value `None` is "not set" (or "not
    /// recorded", where `sources` has none).
    pub options: Vec<SettingRow>,
}

/// How one kernel configuration differs from another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ConfigCounts {
    /// Options set here only.
    pub added: usize,
    /// Options set in the baseline only.
    pub removed: usize,
    /// Options set in both, to different values.
    pub changed: usize,
}

/// How many differing options the terminal and Markdown reports name
/// (the HTML report names them all).
pub const CONFIG_SHOWN: usize = 12;

impl ConfigDiff {
    /// An option's value on system `i` in words: the value, `not set`, or
    /// `not recorded`.
    pub fn value<'d>(&'d self, row: &'d SettingRow, i: usize) -> &'d str {
        match (&row.values[i], &self.sources[i]) {
            (Some(v), _) => v,
            (None, Some(_)) => "not set",
            (None, None) => "not recorded",
        }
    }

    /// One line per system against the baseline: `rt against cloud
    /// (/boot/config-…): 1 234 options differ — 300 added, 200 removed, 734
    /// changed`; a system without a configuration says so.
    pub fn summaries(&self, labels: &[&str]) -> Vec<String> {
        let base = labels[self.baseline];
        self.counts
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != self.baseline)
            .map(|(i, c)| match (c, &self.sources[i]) {
                (Some(c), Some(src)) => format!(
                    "{} ({src}) against {base} ({}): {} options differ — {} added, {} removed, {} changed",
                    labels[i],
                    self.sources[self.baseline].as_deref().unwrap_or(""),
                    units::fmt_n((c.added + c.removed + c.changed) as f64),
                    c.added,
                    c.removed,
                    c.changed
                ),
                _ => format!("{}: no kernel configuration recorded", labels[i]),
            })
            .collect()
    }
}

/// The kernel build options that differ between the systems, when at least
/// two recorded their configuration and some option differs.
pub fn config_differences(systems: &[System]) -> Option<ConfigDiff> {
    let configs: Vec<Option<&results::KernelConfig>> = systems
        .iter()
        .map(|s| s.file.system.kernel_config.as_ref())
        .collect();
    if configs.iter().flatten().count() < 2 {
        return None;
    }
    let baseline = configs.iter().position(Option::is_some)?;
    let base = &configs[baseline]?.options;
    let names: BTreeSet<&String> = configs
        .iter()
        .flatten()
        .flat_map(|c| c.options.keys())
        .collect();
    let options: Vec<SettingRow> = names
        .into_iter()
        .filter_map(|n| {
            let mut present = configs.iter().flatten().map(|c| c.options.get(n));
            let first = present.next()?;
            present.any(|v| v != first).then(|| SettingRow {
                name: n.clone(),
                values: configs
                    .iter()
                    .map(|c| c.and_then(|c| c.options.get(n)).cloned())
                    .collect(),
            })
        })
        .collect();
    if options.is_empty() {
        return None;
    }
    let counts = configs
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let c = &c.filter(|_| i != baseline)?.options;
            Some(ConfigCounts {
                added: c.keys().filter(|k| !base.contains_key(*k)).count(),
                removed: base.keys().filter(|k| !c.contains_key(*k)).count(),
                changed: c
                    .iter()
                    .filter(|(k, v)| base.get(*k).is_some_and(|b| b != *v))
                    .count(),
            })
        })
        .collect();
    Some(ConfigDiff {
        sources: configs
            .iter()
            .map(|c| c.map(|c| c.source.clone()))
            .collect(),
        baseline,
        counts,
        options,
    })
}

/// A profile's record in one line: `throughput (built-in): 7 applied, 3
/// already so, 1 refused — partial`.
pub fn summary(p: &TuningRecord) -> String {
    let count = |s: ChangeStatus| p.changes.iter().filter(|c| c.status == s).count();
    let mut parts = Vec::new();
    for (s, word) in [
        (ChangeStatus::Applied, "applied"),
        (ChangeStatus::Unchanged, "already so"),
        (ChangeStatus::Refused, "refused"),
        (ChangeStatus::Recorded, "recorded only"),
    ] {
        let n = count(s);
        if n > 0 {
            parts.push(format!("{n} {word}"));
        }
    }
    if parts.is_empty() {
        parts.push("no settings for this system".into());
    }
    let mut out = format!("{} ({}): {}", p.name, p.origin, parts.join(", "));
    if !p.elsewhere.is_empty() {
        out.push_str(&format!("; has settings for {}", p.elsewhere.join(", ")));
    }
    if p.partial {
        out.push_str(" — partial: the run measured the system without what was refused");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::ProfileChange;

    fn system(label: &str, profile: Option<&str>, somaxconn: &str) -> System {
        let mut file: results::ResultFile =
            serde_json::from_str(include_str!("../../../tests/fixtures/empty.json")).unwrap();
        file.system
            .sysctls
            .insert("net.core.somaxconn".into(), somaxconn.into());
        file.profile = profile.map(|n| TuningRecord {
            name: n.into(),
            origin: "built-in".into(),
            partial: n == "throughput",
            changes: vec![ProfileChange {
                kind: "sysctl".into(),
                name: "net.core.somaxconn".into(),
                wanted: ">=4096".into(),
                old: Some("128".into()),
                new: Some(somaxconn.into()),
                status: ChangeStatus::Applied,
                reason: None,
            }],
            ..Default::default()
        });
        System {
            label: label.into(),
            file,
        }
    }

    #[test]
    fn the_run_order_and_a_workloads_server_path_are_settings() {
        let with = |label: &str, order: Option<&str>, files: &str, lp: &str| {
            let mut s = system(label, None, "1");
            let mut one: results::ResultFile =
                serde_json::from_str(include_str!("../../../tests/fixtures/default.json")).unwrap();
            for b in &mut one.benchmarks {
                if let Some(o) = order {
                    b.params.extra.insert("order".into(), o.into());
                }
            }
            s.file.benchmarks = one.benchmarks;
            let mut w: results::WorkloadResult = serde_json::from_value(serde_json::json!({
                "name": "http-ipstack", "what": "w", "status": "ok", "rows": [],
                "params": {"server_files": files, "server_loop": lp}
            }))
            .unwrap();
            w.params.insert("connections".into(), 100.into());
            s.file.workloads = vec![w];
            s
        };
        let rows = differing(&[
            with("a", Some("passes"), "per-request", "epoll"),
            with("b", Some("up"), "cached", "io_uring"),
        ]);
        let row = |name: &str| {
            rows.iter()
                .find(|r| r.name == name)
                .map(|r| r.values.clone())
        };
        assert_eq!(
            row("benchmark run order"),
            Some(vec![Some("passes".into()), Some("up".into())]),
            "{rows:?}"
        );
        assert_eq!(
            row("http-ipstack server"),
            Some(vec![
                Some("per-request files, epoll".into()),
                Some("cached files, io_uring".into())
            ])
        );
        // Alike: not a difference; files before the order was recorded
        // say nothing of it.
        let rows = differing(&[
            with("a", Some("up"), "cached", "epoll"),
            with("b", Some("up"), "cached", "epoll"),
        ]);
        assert!(
            rows.iter()
                .all(|r| r.name != "benchmark run order" && !r.name.ends_with("server"))
        );
        let old = with("a", None, "cached", "epoll");
        assert_eq!(run_order(&old.file), None);
        assert_eq!(server_path(&BTreeMap::new()), None);
    }

    /// A workload of `name` with these params.
    fn workload(name: &str, params: serde_json::Value) -> results::WorkloadResult {
        serde_json::from_value(serde_json::json!({
            "name": name, "what": "w", "status": "ok", "rows": [], "params": params
        }))
        .unwrap()
    }

    #[test]
    fn the_block_device_of_a_made_filesystem_is_a_setting_its_names_not() {
        let made = |scheduler: &str, dev: &str, file: &str| {
            let mut s = system("a", None, "1");
            s.file.workloads = vec![workload(
                "fs-sizes",
                serde_json::json!({"targets": [
                    {"label": "ext4", "made": true, "block": {"name": dev, "disk": dev,
                        "scheduler": scheduler, "rotational": false, "backing_file": file}},
                    {"label": "ext4 /", "made": false, "block": {"name": "vda", "disk": "vda"}}
                ]}),
            )];
            s
        };
        let name = "block device of fs-sizes ext4 (made)";
        let rows = differing(&[
            made("none", "loop0", "/tmp/a/fs-0.img"),
            made("mq-deadline", "loop3", "/tmp/b/fs-0.img"),
        ]);
        let row = rows.iter().find(|r| r.name == name).expect("listed");
        assert_eq!(
            row.values,
            [
                Some("a loop device (not rotational, none, backed by a file in the work directory)".into()),
                Some("a loop device (not rotational, mq-deadline, backed by a file in the work directory)".into())
            ]
        );
        // Other loop devices and image files are no difference; a place
        // not made is the system record's (block device of /).
        let rows = differing(&[
            made("none", "loop0", "/tmp/a/fs-0.img"),
            made("none", "loop3", "/tmp/b/fs-0.img"),
        ]);
        assert!(
            rows.iter()
                .all(|r| !r.name.starts_with("block device of fs-sizes")),
            "{rows:?}"
        );
    }

    #[test]
    fn guests_differ_in_their_command_lines_only_by_settings() {
        let mut a = system("a", None, "1");
        let mut b = system("b", None, "1");
        let line = |host: &str, extra: &str| {
            Some(format!(
                "console=ttyS0 sb.share=virtiofs sb.host={host} sb.modtree=/c/{host}/lib/modules/r norandmaps{extra}"
            ))
        };
        a.file.system.tuning.kernel_cmdline = line("a", "");
        b.file.system.tuning.kernel_cmdline = line("b", "");
        let rows = differing(&[a.clone(), b.clone()]);
        assert!(
            rows.iter().all(|r| r.name != "kernel command line"),
            "{rows:?}"
        );
        b.file.system.tuning.kernel_cmdline = line("b", " mitigations=off");
        let rows = differing(&[a, b]);
        let r = rows
            .iter()
            .find(|r| r.name == "kernel command line")
            .unwrap();
        assert_eq!(
            r.values,
            [
                Some("console=ttyS0 norandmaps".into()),
                Some("console=ttyS0 norandmaps mitigations=off".into())
            ]
        );
    }

    #[test]
    fn a_governor_not_exposed_differs_from_one_and_from_none_recorded() {
        let mut a = system("a", None, "4096");
        let mut b = system("b", None, "4096");
        let c = system("c", None, "4096");
        a.file.system.tuning.governor = Some("performance".into());
        a.file.system.tuning.load_average = Some([0.1; 3]);
        // b recorded its readings and had no governor to read.
        b.file.system.tuning.load_average = Some([0.1; 3]);
        b.file.system.tuning.governor = None;
        let rows = differing(&[a.clone(), b]);
        let g = rows.iter().find(|r| r.name == "CPU governor").unwrap();
        assert_eq!(g.values[1].as_deref(), Some(NOT_EXPOSED), "{g:?}");
        // c is a record without the readings: not recorded, not "not exposed".
        let rows = differing(&[a, c]);
        let g = rows.iter().find(|r| r.name == "CPU governor");
        assert!(g.is_none_or(|g| g.values[1].is_none()), "{g:?}");
    }

    #[test]
    fn topology_cpuidle_and_block_devices_that_differ_are_named() {
        use sys::hardware::{BlockDevice, CpuIdle, CpuTopology};
        let mut a = system("a", None, "1");
        let mut b = system("b", None, "1");
        for s in [&mut a, &mut b] {
            s.file.system.tuning.load_average = Some([0.1; 3]);
            s.file.system.filesystems = vec![results::FilesystemInfo {
                path: "/w".into(),
                fs_type: "ext4".into(),
                mount_point: "/".into(),
                device: "/dev/vda1".into(),
                mount_options: "rw".into(),
                block: None,
            }];
        }
        a.file.system.cpu.topology = Some(CpuTopology {
            packages: 1,
            cores: 2,
            threads: 4,
            numa_nodes: Some(1),
        });
        a.file.system.tuning.cpuidle = Some(CpuIdle {
            driver: "intel_idle".into(),
            governor: Some("menu".into()),
            ..Default::default()
        });
        a.file.system.filesystems[0].block = Some(BlockDevice {
            name: "vda1".into(),
            disk: "vda".into(),
            scheduler: Some("none".into()),
            ..Default::default()
        });
        let rows = differing(&[a, b]);
        let row = |n: &str| rows.iter().find(|r| r.name == n).unwrap().values.clone();
        assert_eq!(
            row("CPU topology"),
            [
                Some("1 package, 2 cores, 4 threads, 1 NUMA node".into()),
                Some(NOT_EXPOSED.into())
            ]
        );
        assert_eq!(row("cpuidle")[0].as_deref(), Some("intel_idle (menu)"));
        assert_eq!(
            row("block device of /"),
            [
                Some("vda1 on vda (model not exposed, none)".into()),
                Some(NOT_EXPOSED.into())
            ]
        );
    }

    #[test]
    fn a_firewall_a_security_mode_and_nic_queues_that_differ_are_named() {
        use results::{Channels, Firewall, Security};
        let mut a = system("a", None, "1");
        let mut b = system("b", None, "1");
        a.file.system.tuning.firewall = Some(Firewall {
            nftables: Some([("inet filter".to_string(), 12)].into()),
            ..Default::default()
        });
        b.file.system.tuning.firewall = Some(Firewall {
            nftables: Some(Default::default()),
            ..Default::default()
        });
        a.file.system.tuning.security = Some(Security {
            selinux: Some("enforcing".into()),
            ..Default::default()
        });
        b.file.system.tuning.security = Some(Security {
            selinux: Some("off".into()),
            ..Default::default()
        });
        let nic = |q: u32| Nic {
            name: "eth0".into(),
            rx_queues: Some(q),
            tx_queues: Some(q),
            channels: Some(Channels {
                combined: q,
                max_combined: 8,
                ..Default::default()
            }),
            ..Default::default()
        };
        a.file.system.tuning.nics = Some(vec![nic(4)]);
        b.file.system.tuning.nics = Some(vec![nic(1)]);
        let rows = differing(&[a, b]);
        let row = |n: &str| {
            rows.iter()
                .find(|r| r.name == n)
                .unwrap_or_else(|| panic!("{n}: {rows:?}"))
        };
        assert_eq!(
            row("firewall").values,
            [
                Some("nftables 12 rules (inet filter 12)".into()),
                Some("no rules".into())
            ]
        );
        assert_eq!(
            row("security modules").values,
            [Some("SELinux enforcing".into()), Some("SELinux off".into())]
        );
        assert_eq!(
            row("NIC eth0 queues").values,
            [
                Some("queues rx 4 tx 4, channels combined 4 of 8".into()),
                Some("queues rx 1 tx 1, channels combined 1 of 8".into())
            ]
        );
        assert!(rows.iter().all(|r| r.name != "NIC eth0"), "{rows:?}");
    }

    #[test]
    fn only_what_differs_is_named_with_the_profile_first() {
        let a = system("a", Some("default"), "128");
        let b = system("b", Some("throughput"), "4096");
        let rows = differing(&[a, b]);
        assert_eq!(rows[0].name, "profile");
        assert_eq!(
            rows[0].values,
            [Some("default".into()), Some("throughput (partial)".into())]
        );
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert_eq!(rows[1].name, "sysctl net.core.somaxconn");
        let same = differing(&[system("a", None, "1"), system("b", None, "1")]);
        assert!(same.is_empty(), "{same:?}");
        assert!(differing(&[system("a", None, "1")]).is_empty());
    }

    fn with_config(label: &str, options: &[(&str, &str)]) -> System {
        let mut s = system(label, None, "128");
        s.file.system.kernel_config = Some(results::KernelConfig {
            source: format!("/boot/config-{label}"),
            options: options
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        });
        s
    }

    #[test]
    fn kernel_options_that_differ_are_counted_and_listed_by_name() {
        let cloud = with_config(
            "cloud",
            &[
                ("CONFIG_SMP", "y"),
                ("CONFIG_HZ", "250"),
                ("CONFIG_KVM", "m"),
            ],
        );
        let rt = with_config(
            "rt",
            &[
                ("CONFIG_SMP", "y"),
                ("CONFIG_HZ", "1000"),
                ("CONFIG_PREEMPT_RT", "y"),
                ("CONFIG_A", "y"),
            ],
        );
        let old = system("old", None, "128");
        let d = config_differences(&[cloud.clone(), rt.clone(), old]).unwrap();
        let names: Vec<&str> = d.options.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            ["CONFIG_A", "CONFIG_HZ", "CONFIG_KVM", "CONFIG_PREEMPT_RT"]
        );
        assert_eq!(d.baseline, 0);
        assert_eq!(
            d.counts[1],
            Some(ConfigCounts {
                added: 2,
                removed: 1,
                changed: 1
            })
        );
        assert_eq!(d.counts[0], None);
        assert_eq!(d.counts[2], None);
        let kvm = &d.options[2];
        assert_eq!(
            [d.value(kvm, 0), d.value(kvm, 1), d.value(kvm, 2)],
            ["m", "not set", "not recorded"]
        );
        let s = d.summaries(&["cloud", "rt", "old"]);
        assert_eq!(
            s[0],
            "rt (/boot/config-rt) against cloud (/boot/config-cloud): 4 options differ — 2 added, 1 removed, 1 changed"
        );
        assert_eq!(s[1], "old: no kernel configuration recorded");
        // Nothing to say with one configuration, or two the same.
        assert_eq!(
            config_differences(&[cloud.clone(), system("x", None, "1")]),
            None
        );
        let twin = with_config(
            "twin",
            &[
                ("CONFIG_SMP", "y"),
                ("CONFIG_HZ", "250"),
                ("CONFIG_KVM", "m"),
            ],
        );
        assert_eq!(config_differences(&[cloud, twin]), None);
    }

    #[test]
    fn virtualization_rows_differ_only_where_recorded_and_different() {
        let native = |label: &str| {
            let mut s = system(label, None, "128");
            s.file.system.virtualization =
                Some(results::sysinfo::virtualization(Some("KVMKVMKVM".into())));
            s
        };
        let mut guest = native("guest");
        guest.file.system.virtualization = Some(results::Virtualization {
            kind: "tcg".into(),
            emulated: true,
            hypervisor: Some("TCGTCGTCGTCG".into()),
            reason: Some("no KVM".into()),
            vcpu_pins: vec![0, 1],
            ..results::Virtualization::default()
        });
        let rows = differing(&[native("host"), guest]);
        let get = |n: &str| rows.iter().find(|r| r.name == n).map(|r| r.values.clone());
        assert_eq!(
            get("virtualization"),
            Some(vec![Some("native".into()), Some("tcg: no KVM".into())])
        );
        assert_eq!(
            get("hypervisor (CPUID)"),
            Some(vec![Some("KVMKVMKVM".into()), Some("TCGTCGTCGTCG".into())])
        );
        assert_eq!(
            get("vCPUs pinned to host CPUs"),
            Some(vec![None, Some("0, 1".into())])
        );
        assert!(differing(&[native("a"), native("b")]).is_empty());
        // Old files (nothing recorded) show no such row.
        let old = differing(&[system("a", None, "1"), system("b", None, "1")]);
        assert!(old.is_empty(), "{old:?}");
    }

    #[test]
    fn a_summary_counts_what_became_of_each_setting() {
        let b = system("b", Some("throughput"), "4096");
        let s = summary(b.file.profile.as_ref().unwrap());
        assert!(s.starts_with("throughput (built-in): 1 applied"), "{s}");
        assert!(s.contains("partial"), "{s}");
    }
}
