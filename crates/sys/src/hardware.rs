//! The machine under the figures: how its CPUs are arranged (packages,
//! cores, threads, NUMA nodes), how idle CPUs sleep (the cpuidle driver,
//! its governor, its states and their limits: waking a sleeping CPU is
//! part of a request's cost), and the block device under a filesystem
//! (model, driver, rotational, I/O scheduler, read-ahead, queue depth:
//! the seeds explained their disk figures by the elevator). Linux reads
//! `/sys`; elsewhere each reading is `None`, which the reports call "not
//! exposed".

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// How the online CPUs are arranged.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CpuTopology {
    /// Physical packages (sockets).
    pub packages: u32,
    /// Cores, over all packages.
    pub cores: u32,
    /// Hardware threads (logical CPUs) over all cores.
    pub threads: u32,
    /// NUMA nodes; absent when the OS does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa_nodes: Option<u32>,
}

impl CpuTopology {
    /// In words: `1 package, 2 cores, 2 threads, 1 NUMA node`.
    pub fn words(&self) -> String {
        let n = |k: u32, one: &str| format!("{k} {one}{}", if k == 1 { "" } else { "s" });
        let mut w = format!(
            "{}, {}, {}",
            n(self.packages, "package"),
            n(self.cores, "core"),
            n(self.threads, "thread")
        );
        if let Some(k) = self.numa_nodes {
            w.push_str(&format!(", {}", n(k, "NUMA node")));
        }
        w
    }
}

/// One idle state a CPU may sleep in.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct IdleState {
    /// Its name (`POLL`, `C1`, `C1E`, `C6`).
    pub name: String,
    /// The time to wake from it, µs, as the driver says.
    pub latency_us: u64,
    /// Whether it is turned off (on the first CPU).
    pub disabled: bool,
}

/// How idle CPUs sleep.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CpuIdle {
    /// The cpuidle driver (`intel_idle`, `acpi_idle`, `haltpoll`);
    /// `none` when the kernel has none (a virtual machine's CPUs halt).
    pub driver: String,
    /// The governor choosing a state (`menu`, `teo`, `ladder`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub governor: Option<String>,
    /// The first CPU's states, shallowest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub states: Vec<IdleState>,
    /// The limits of the driver in use, by parameter: the deepest state
    /// (`intel_idle.max_cstate` → `9`, `processor.max_cstate` for
    /// `acpi_idle`) or haltpoll's poll time (`haltpoll.guest_halt_poll_ns`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub limits: BTreeMap<String, String>,
}

impl CpuIdle {
    /// In words: `intel_idle (menu): POLL, C1 1 µs, C6 off`.
    pub fn words(&self) -> String {
        let mut w = self.driver.clone();
        if let Some(g) = &self.governor {
            w.push_str(&format!(" ({g})"));
        }
        let states: Vec<String> = self
            .states
            .iter()
            .map(|s| {
                let mut x = s.name.clone();
                if s.latency_us > 0 {
                    x.push_str(&format!(" {} µs", s.latency_us));
                }
                if s.disabled {
                    x.push_str(" off");
                }
                x
            })
            .collect();
        if !states.is_empty() {
            w.push_str(&format!(": {}", states.join(", ")));
        }
        for (k, v) in &self.limits {
            w.push_str(&format!("; {k}={v}"));
        }
        w
    }
}

/// The block device a filesystem is on.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct BlockDevice {
    /// The device the filesystem names (`vda1`, `dm-0`, `loop3`).
    pub name: String,
    /// The whole device whose queue serves it (`vda` for `vda1`).
    pub disk: String,
    /// Its model, as the device says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The driver behind it (`virtio_blk`, `nvme`, `sd`); absent for
    /// devices the kernel makes (loop, device mapper).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// Whether it spins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotational: Option<bool>,
    /// The I/O scheduler in use (`mq-deadline`, `none`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
    /// Read-ahead, KiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_ahead_kb: Option<u64>,
    /// Requests the queue holds (`nr_requests`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<u64>,
    /// For a loop device: the file behind it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backing_file: Option<String>,
    /// For a stacked device (device mapper, RAID): the devices under it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub under: Vec<String>,
}

impl BlockDevice {
    /// In words: `vda1 on vda (virtio_blk, not rotational, mq-deadline,
    /// read-ahead 128 KiB, queue 256)`.
    pub fn words(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        // A disk has a model; a virtio disk does not say it (a loop or
        // device-mapper device has none to say).
        let virtual_device = self.backing_file.is_some()
            || !self.under.is_empty()
            || ["loop", "dm-", "md", "zram"]
                .iter()
                .any(|p| self.name.starts_with(p));
        match &self.model {
            Some(m) => parts.push(m.clone()),
            None if !virtual_device => parts.push("model not exposed".into()),
            None => {}
        }
        parts.extend(self.driver.clone());
        if let Some(r) = self.rotational {
            parts.push(if r { "rotational" } else { "not rotational" }.into());
        }
        parts.extend(self.scheduler.clone());
        parts.extend(self.read_ahead_kb.map(|k| format!("read-ahead {k} KiB")));
        parts.extend(self.queue_depth.map(|q| format!("queue {q}")));
        parts.extend(self.backing_file.as_ref().map(|f| format!("backed by {f}")));
        if !self.under.is_empty() {
            parts.push(format!("over {}", self.under.join(", ")));
        }
        let on = if self.disk == self.name {
            self.name.clone()
        } else {
            format!("{} on {}", self.name, self.disk)
        };
        format!("{on} ({})", parts.join(", "))
    }
}

/// The first line of `path`, trimmed; `None` when unreadable or empty.
fn line(path: &Path) -> Option<String> {
    let s = std::fs::read_to_string(path).ok()?;
    let l = s.lines().next()?.trim();
    (!l.is_empty()).then(|| l.to_string())
}

/// The names in `dir` that are `prefix` and a number.
fn numbered(dir: &Path, prefix: &str) -> Vec<String> {
    let mut v: Vec<(u64, String)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let k = name.strip_prefix(prefix)?.parse().ok()?;
            Some((k, name))
        })
        .collect();
    v.sort();
    v.into_iter().map(|x| x.1).collect()
}

/// The topology under `sys` (`/sys`): the CPUs that have a topology
/// directory (the online ones), their packages and cores; NUMA nodes from
/// `devices/system/node`.
pub fn topology_in(sys: &Path) -> Option<CpuTopology> {
    let cpus = sys.join("devices/system/cpu");
    let (mut packages, mut cores, mut threads) = (BTreeSet::new(), BTreeSet::new(), 0u32);
    for c in numbered(&cpus, "cpu") {
        let t = cpus.join(&c).join("topology");
        let (Some(p), Some(core)) = (
            line(&t.join("physical_package_id")),
            line(&t.join("core_id")),
        ) else {
            continue;
        };
        threads += 1;
        cores.insert((p.clone(), core));
        packages.insert(p);
    }
    if threads == 0 {
        return None;
    }
    let nodes = numbered(&sys.join("devices/system/node"), "node").len() as u32;
    Some(CpuTopology {
        packages: packages.len() as u32,
        cores: cores.len() as u32,
        threads,
        numa_nodes: (nodes > 0).then_some(nodes),
    })
}

/// How idle CPUs sleep, under `sys` (`/sys`); `None` without cpuidle.
pub fn idle_in(sys: &Path) -> Option<CpuIdle> {
    let dir = sys.join("devices/system/cpu/cpuidle");
    let driver = line(&dir.join("current_driver"))?;
    let governor =
        line(&dir.join("current_governor")).or_else(|| line(&dir.join("current_governor_ro")));
    let first = sys.join("devices/system/cpu/cpu0/cpuidle");
    let states = numbered(&first, "state")
        .into_iter()
        .filter_map(|s| {
            let d = first.join(s);
            Some(IdleState {
                name: line(&d.join("name"))?,
                latency_us: line(&d.join("latency"))
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0),
                disabled: line(&d.join("disable")).is_some_and(|v| v != "0"),
            })
        })
        .collect();
    // The limits of the driver in use only: intel_idle's parameters are
    // there wherever it is built in, also on an AMD machine it never ran on.
    let params: &[(&str, &str)] = match driver.as_str() {
        "intel_idle" => &[("intel_idle", "max_cstate")],
        "acpi_idle" => &[("processor", "max_cstate")],
        "haltpoll" => &[("haltpoll", "guest_halt_poll_ns")],
        _ => &[],
    };
    let mut limits = BTreeMap::new();
    for (module, param) in params {
        if let Some(v) = line(&sys.join(format!("module/{module}/parameters/{param}"))) {
            limits.insert(format!("{module}.{param}"), v);
        }
    }
    Some(CpuIdle {
        driver,
        governor,
        states,
        limits,
    })
}

/// The block device `device` (a mount's source: `/dev/vda1`,
/// `/dev/mapper/vg-root`) under `sys` (`/sys`), its symbolic links
/// followed under `dev_root` (`/`); `Err` says why there is none (`tmpfs`
/// is no device).
pub fn block_in(sys: &Path, dev_root: &Path, device: &str) -> Result<BlockDevice, String> {
    let Some(rel) = device.strip_prefix("/dev/") else {
        return Err(format!("{device} is not a block device"));
    };
    let path = dev_root.join("dev").join(rel);
    let real = std::fs::canonicalize(&path).unwrap_or(path);
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| format!("{device}: no device name"))?;
    let class = sys.join("class/block").join(&name);
    let node = std::fs::canonicalize(&class)
        .map_err(|e| format!("{device}: {} ({e})", class.display()))?;
    // A partition's directory sits inside its disk's.
    let disk_dir = if node.join("partition").exists() {
        node.parent().map(Path::to_path_buf).unwrap_or(node.clone())
    } else {
        node.clone()
    };
    let disk = disk_dir
        .file_name()
        .map_or(name.clone(), |n| n.to_string_lossy().into_owned());
    let q = disk_dir.join("queue");
    let num = |f: &str| line(&q.join(f)).and_then(|v| v.parse::<u64>().ok());
    let driver = std::fs::read_link(disk_dir.join("device/driver"))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
    let mut under = numbered_any(&disk_dir.join("slaves"));
    under.sort();
    Ok(BlockDevice {
        name,
        disk,
        model: line(&disk_dir.join("device/model")),
        driver,
        rotational: num("rotational").map(|r| r == 1),
        scheduler: line(&q.join("scheduler")).and_then(|s| selected(&s)),
        read_ahead_kb: num("read_ahead_kb"),
        queue_depth: num("nr_requests"),
        backing_file: line(&disk_dir.join("loop/backing_file")),
        under,
    })
}

/// Every name in `dir`.
fn numbered_any(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// The choice in brackets of a sysfs list (`none [mq-deadline] kyber`),
/// or the only word of one without brackets.
fn selected(s: &str) -> Option<String> {
    if let Some(a) = s.find('[') {
        let b = s[a..].find(']')?;
        return Some(s[a + 1..a + b].to_string());
    }
    let mut w = s.split_whitespace();
    let first = w.next()?;
    w.next().is_none().then(|| first.to_string())
}

/// This machine's CPU topology; `None` where the OS does not say.
pub fn cpu_topology() -> Option<CpuTopology> {
    if cfg!(target_os = "linux") {
        topology_in(Path::new("/sys"))
    } else {
        None
    }
}

/// How this machine's idle CPUs sleep; `None` where the OS does not say.
pub fn cpu_idle() -> Option<CpuIdle> {
    if cfg!(target_os = "linux") {
        idle_in(Path::new("/sys"))
    } else {
        None
    }
}

/// The block device a mount's source `device` names; `Err` says why
/// there is none (not a device, or not exposed on this OS).
pub fn block_device(device: &str) -> Result<BlockDevice, String> {
    if cfg!(target_os = "linux") {
        block_in(Path::new("/sys"), Path::new("/"), device)
    } else {
        Err("not exposed on this OS".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, format!("{text}\n")).unwrap();
    }

    #[test]
    fn topology_counts_packages_cores_threads_and_nodes() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        // Two packages of two cores of two threads; cpu8 offline (no
        // topology), node0 and node1.
        for cpu in 0..8 {
            put(
                r,
                &format!("devices/system/cpu/cpu{cpu}/topology/physical_package_id"),
                &(cpu / 4).to_string(),
            );
            put(
                r,
                &format!("devices/system/cpu/cpu{cpu}/topology/core_id"),
                &((cpu / 2) % 2).to_string(),
            );
        }
        std::fs::create_dir_all(r.join("devices/system/cpu/cpu8")).unwrap();
        std::fs::create_dir_all(r.join("devices/system/cpu/cpufreq")).unwrap();
        for n in ["node0", "node1", "possible"] {
            std::fs::create_dir_all(r.join("devices/system/node").join(n)).unwrap();
        }
        let topo = topology_in(r).unwrap();
        assert_eq!(
            topo,
            CpuTopology {
                packages: 2,
                cores: 4,
                threads: 8,
                numa_nodes: Some(2)
            }
        );
        assert_eq!(topo.words(), "2 packages, 4 cores, 8 threads, 2 NUMA nodes");
        assert_eq!(topology_in(&r.join("nothing")), None);
    }

    #[test]
    fn idle_names_driver_governor_states_and_limits() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        assert_eq!(idle_in(r), None);
        put(r, "devices/system/cpu/cpuidle/current_driver", "intel_idle");
        put(r, "devices/system/cpu/cpuidle/current_governor_ro", "menu");
        for (i, (name, lat, off)) in [("POLL", 0, 0), ("C1", 2, 0), ("C6", 170, 1)]
            .iter()
            .enumerate()
        {
            let d = format!("devices/system/cpu/cpu0/cpuidle/state{i}");
            put(r, &format!("{d}/name"), name);
            put(r, &format!("{d}/latency"), &lat.to_string());
            put(r, &format!("{d}/disable"), &off.to_string());
        }
        put(r, "module/intel_idle/parameters/max_cstate", "9");
        put(r, "module/processor/parameters/max_cstate", "8");
        let idle = idle_in(r).unwrap();
        assert_eq!(idle.states.len(), 3);
        assert_eq!(
            idle.words(),
            "intel_idle (menu): POLL, C1 2 µs, C6 170 µs off; intel_idle.max_cstate=9"
        );
        // Another driver's limits are not its: haltpoll's is its poll time.
        put(r, "devices/system/cpu/cpuidle/current_driver", "haltpoll");
        put(r, "module/haltpoll/parameters/guest_halt_poll_ns", "0");
        let idle = idle_in(r).unwrap();
        assert_eq!(
            idle.limits.keys().collect::<Vec<_>>(),
            ["haltpoll.guest_halt_poll_ns"]
        );
    }

    #[test]
    fn a_partition_is_served_by_its_disks_queue_and_tmpfs_is_no_device() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        let disk = r.join("devices/pci0/virtio2/block/vda");
        put(r, "devices/pci0/virtio2/block/vda/vda1/partition", "1");
        put(
            r,
            "devices/pci0/virtio2/block/vda/queue/scheduler",
            "none [mq-deadline] kyber",
        );
        put(r, "devices/pci0/virtio2/block/vda/queue/rotational", "0");
        put(
            r,
            "devices/pci0/virtio2/block/vda/queue/read_ahead_kb",
            "128",
        );
        put(r, "devices/pci0/virtio2/block/vda/queue/nr_requests", "256");
        std::fs::create_dir_all(r.join("drivers/virtio_blk")).unwrap();
        std::fs::create_dir_all(r.join("devices/pci0/virtio2/block/vda/device")).unwrap();
        std::os::unix::fs::symlink(r.join("drivers/virtio_blk"), disk.join("device/driver"))
            .unwrap();
        std::fs::create_dir_all(r.join("class/block")).unwrap();
        std::os::unix::fs::symlink(disk.join("vda1"), r.join("class/block/vda1")).unwrap();
        std::os::unix::fs::symlink(&disk, r.join("class/block/vda")).unwrap();
        let b = block_in(r, r, "/dev/vda1").unwrap();
        assert_eq!(
            b.words(),
            "vda1 on vda (model not exposed, virtio_blk, not rotational, mq-deadline, read-ahead 128 KiB, queue 256)"
        );
        assert_eq!(block_in(r, r, "/dev/vda").unwrap().disk, "vda");
        assert_eq!(
            block_in(r, r, "tmpfs").unwrap_err(),
            "tmpfs is not a block device"
        );
        assert!(block_in(r, r, "/dev/sdz").is_err());
        assert_eq!(selected("none"), Some("none".into()));
    }
}
