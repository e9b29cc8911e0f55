//! How the systems were set up, side by side: the tuning profile each ran
//! under, what it changed, and every recorded setting (OS, CPU, sysctls,
//! limits, governor, huge pages, mitigations, …) whose value differs
//! between them.

use super::System;
use crate::results::{ChangeStatus, Nic, SystemInfo, TuningRecord};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// A setting and its value on each system (`None`: not recorded there).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SettingRow {
    /// What (`sysctl net.core.somaxconn`, `CPU governor`).
    pub name: String,
    /// Its value per system, in the order given.
    pub values: Vec<Option<String>>,
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
    put(
        "memory",
        sys.memory_bytes
            .map(|b| format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)),
    );
    put("C library", Some(sys.libc.clone()));
    put("CPU governor", t.governor.clone());
    put(
        "boost",
        t.boost.map(|b| if b { "on" } else { "off" }.into()),
    );
    put("SMT", t.smt.clone());
    put("microcode", t.microcode.clone());
    put("kernel command line", t.kernel_cmdline.clone());
    put("transparent huge pages", t.thp_enabled.clone());
    put("THP defrag", t.thp_defrag.clone());
    put("clocksource", t.clocksource.clone());
    put("hypervisor", t.hypervisor.clone());
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
        put(
            "cgroup memory limit",
            c.memory_bytes
                .map(|b| format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)),
        );
    }
    for n in t.nics.iter().flatten() {
        put(&format!("NIC {}", n.name), Some(nic_summary(n)));
    }
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
    m
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
    use crate::results::ProfileChange;

    fn system(label: &str, profile: Option<&str>, somaxconn: &str) -> System {
        let mut file: crate::results::ResultFile =
            serde_json::from_str(include_str!("../../tests/fixtures/empty.json")).unwrap();
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

    #[test]
    fn a_summary_counts_what_became_of_each_setting() {
        let b = system("b", Some("throughput"), "4096");
        let s = summary(b.file.profile.as_ref().unwrap());
        assert!(s.starts_with("throughput (built-in): 1 applied"), "{s}");
        assert!(s.contains("partial"), "{s}");
    }
}
