//! Collects the [`SystemInfo`] a result file carries.

use super::{Cpu, FilesystemInfo, Limit, SystemInfo, WorkdirInfo};
use crate::sys::{self, CpuTicks, Knob, Rlimit};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every knob recorded in a result file's `system.sysctls`.
pub const RECORDED_KNOBS: [Knob; 10] = [
    Knob::FilesSystem,
    Knob::FilesPerProcess,
    Knob::PortRange,
    Knob::Processes,
    Knob::ProcessesPerUser,
    Knob::Mappings,
    Knob::ListenBacklog,
    Knob::TimeWaitReuse,
    Knob::TimeWaitBuckets,
    Knob::SegmentLifetime,
];

/// Current resource limits, by C name.
pub fn limits() -> BTreeMap<String, Limit> {
    Rlimit::ALL
        .iter()
        .filter_map(|&r| {
            let (soft, hard) = sys::get_rlimit(r)?;
            Some((r.name().to_string(), Limit { soft, hard }))
        })
        .collect()
}

/// Values of the given knobs, by OS-specific sysctl name.
pub fn sysctls(knobs: &[Knob]) -> BTreeMap<String, String> {
    knobs.iter().flat_map(|k| sys::knob_values(*k)).collect()
}

/// Describes the filesystem holding `dir`.
pub fn workdir(dir: &Path) -> WorkdirInfo {
    let m = sys::mount_of(dir).unwrap_or_default();
    WorkdirInfo {
        path: dir.display().to_string(),
        fs_type: m.fs_type,
        mount_point: m.mount_point,
        device: m.device,
        mount_options: m.options,
        free_bytes: sys::free_bytes(dir),
    }
}

/// What a run asks to have recorded beyond the usual.
#[derive(Debug, Clone, Copy, Default)]
pub struct Extra<'a> {
    /// Further directories the run uses (`run --dir`): their filesystems
    /// go into `system.filesystems`.
    pub dirs: &'a [PathBuf],
    /// Further sysctls to record in `system.sysctls` (`--record-sysctl`).
    pub sysctls: &'a [String],
}

/// The filesystems that hold `dirs`, each once (by mount point, the first
/// directory on it named); directories whose filesystem cannot be found
/// are left out.
pub fn filesystems<'a>(dirs: impl IntoIterator<Item = &'a Path>) -> Vec<FilesystemInfo> {
    let mut v: Vec<FilesystemInfo> = Vec::new();
    for d in dirs {
        let Some(m) = sys::mount_of(d) else { continue };
        if v.iter().any(|f| f.mount_point == m.mount_point) {
            continue;
        }
        v.push(FilesystemInfo {
            path: d.display().to_string(),
            fs_type: m.fs_type,
            mount_point: m.mount_point,
            device: m.device,
            mount_options: m.options,
        });
    }
    v
}

/// The sysctls `names` (each split at commas) by name, and the names this
/// system does not have.
pub fn named_sysctls(names: &[String]) -> (BTreeMap<String, String>, Vec<String>) {
    let mut found = BTreeMap::new();
    let mut absent: Vec<String> = Vec::new();
    for n in names.iter().flat_map(|n| n.split(',')).map(str::trim) {
        if n.is_empty() || found.contains_key(n) || absent.iter().any(|a| a == n) {
            continue;
        }
        match sys::sysctl(n) {
            Some(v) => {
                found.insert(n.to_string(), v);
            }
            None => absent.push(n.to_string()),
        }
    }
    (found, absent)
}

/// Collects everything about this machine; `dir` is the work directory.
/// A sysctl of `extra` that this system does not have is named on
/// standard error and left out of the record.
pub fn collect(dir: Option<&Path>, extra: &Extra) -> SystemInfo {
    let u = sys::uname();
    let mut sysctls = sysctls(&RECORDED_KNOBS);
    let (named, absent) = named_sysctls(extra.sysctls);
    for n in absent {
        eprintln!("note: --record-sysctl {n}: no such sysctl here (recorded as absent)");
    }
    sysctls.extend(named);
    let mut tuning = sys::tuning();
    tuning.sysctls.retain(|k, _| !sysctls.contains_key(k));
    SystemInfo {
        os: u.sysname,
        os_release: u.release,
        os_version: u.version,
        arch: std::env::consts::ARCH.to_string(),
        hostname: u.nodename,
        cpu: Cpu {
            model: sys::cpu_model(),
            count: sys::cpu_count(),
            mhz: sys::cpu_mhz(),
        },
        memory_bytes: sys::memory_bytes(),
        libc: sys::libc_version(),
        limits: limits(),
        sysctls,
        workdir: dir.map(workdir),
        filesystems: filesystems(
            dir.into_iter()
                .chain(extra.dirs.iter().map(PathBuf::as_path)),
        ),
        tuning,
        virtualization: None,
        kernel_config: None,
    }
}

/// The CPU counters at the start of a stretch of time, to say how much of
/// it the hypervisor stole ([`sys::steal_percent`]).
#[derive(Debug, Clone)]
pub struct StealMeter(Option<Vec<CpuTicks>>);

impl StealMeter {
    /// Reads the counters now.
    pub fn start() -> StealMeter {
        StealMeter(sys::cpu_ticks())
    }

    /// The share stolen since [`StealMeter::start`], in percent; `None`
    /// where the OS has no steal counter.
    pub fn percent(&self) -> Option<f64> {
        sys::steal_percent(self.0.as_deref()?, &sys::cpu_ticks()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collects_the_essentials() {
        let dir = tempfile::tempdir().unwrap();
        let s = collect(Some(dir.path()), &Extra::default());
        assert!(!s.os.is_empty() && !s.os_release.is_empty());
        assert!(s.cpu.count >= 1);
        assert!(s.limits.contains_key("RLIMIT_NOFILE"));
        let w = s.workdir.unwrap();
        assert!(!w.fs_type.is_empty(), "{w:?}");
        assert!(w.free_bytes.is_some());
        assert_eq!(s.filesystems.len(), 1, "{:?}", s.filesystems);
        assert_eq!(s.filesystems[0].mount_point, w.mount_point);
    }

    #[test]
    fn extra_dirs_add_their_filesystems_once_each() {
        let dir = tempfile::tempdir().unwrap();
        let dirs = [
            PathBuf::from("/proc"),
            PathBuf::from("/"),
            dir.path().into(),
        ];
        let extra = Extra {
            dirs: &dirs,
            ..Default::default()
        };
        let s = collect(Some(dir.path()), &extra);
        let points: Vec<&str> = s
            .filesystems
            .iter()
            .map(|f| f.mount_point.as_str())
            .collect();
        let mut unique = points.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(points.len(), unique.len(), "{points:?}");
        // The work directory first, named by its own path.
        assert_eq!(s.filesystems[0].path, dir.path().display().to_string());
        assert!(points.contains(&"/"), "{points:?}");
        if cfg!(target_os = "linux") {
            let proc_fs = s.filesystems.iter().find(|f| f.mount_point == "/proc");
            assert_eq!(
                proc_fs.map(|f| f.fs_type.as_str()),
                Some("proc"),
                "{points:?}"
            );
        }
        assert_eq!(filesystems([Path::new("/nonexistent/dir")]), vec![]);
    }

    #[test]
    fn named_sysctls_are_recorded_and_unknown_ones_left_out() {
        let name = if cfg!(target_os = "linux") {
            "kernel.ostype"
        } else {
            "kern.ostype"
        };
        let (found, absent) = named_sysctls(&[format!("{name}, kernel.nosuch"), name.into()]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(!found[name].is_empty(), "{found:?}");
        assert_eq!(absent, ["kernel.nosuch"]);
        let extra = Extra {
            sysctls: &[name.to_string()],
            ..Default::default()
        };
        let s = collect(None, &extra);
        assert!(s.sysctls.contains_key(name));
        assert!(!s.tuning.sysctls.contains_key(name));
    }

    #[test]
    fn a_steal_meter_reads_a_share_or_nothing() {
        let m = StealMeter::start();
        std::thread::sleep(std::time::Duration::from_millis(100));
        let p = m.percent();
        assert!(p.is_none_or(|p| (0.0..=100.0).contains(&p)), "{p:?}");
        assert_eq!(p.is_some(), cfg!(target_os = "linux"));
    }

    #[test]
    fn a_system_record_without_tuning_still_loads_and_round_trips() {
        let mut v = serde_json::to_value(collect(None, &Extra::default())).unwrap();
        v.as_object_mut().unwrap().remove("tuning");
        let s: SystemInfo = serde_json::from_value(v).unwrap();
        assert_eq!(s.tuning, Default::default());
        // An empty record is written as an empty object.
        assert_eq!(
            serde_json::to_value(&s).unwrap()["tuning"],
            serde_json::json!({})
        );
    }
}
